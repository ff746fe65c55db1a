"""Routes registered by a decorator."""


class App:
    def route(self, path):
        def register(fn):
            return fn
        return register


app = App()


@app.route("/")
def index():
    return "home"


@app.route(
    "/info",
)
def about():
    return "information"
