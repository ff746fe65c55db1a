class App:
    def route(self, path):
        def decorator(func):
            return func
        return decorator


app = App()
