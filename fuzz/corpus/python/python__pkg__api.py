"""The API module."""
import os
from datetime import date
from . import util
from .util import helper as h
from .models import Model
from .web import app


def get(url):
    """Fetch a URL."""
    return request("get", url)


def request(method, url):
    util.helper()
    h()
    date()
    return Session().send()


@app.route("/")
def index():
    return get("/")


class Session(Model):
    """A session."""

    @property
    def name(self):
        return "s"

    def send(self):
        super().save()
        return self.prepare()

    def prepare(self):
        return self.save()

    def load(self):
        load()

        def inner():
            return get("x")

        class Local:
            def run(self):
                return inner()

        return inner()

    async def fetch(self):
        return await self.send()


def load():
    return index()


if os.name == "nt":
    def platform():
        return "windows"
else:
    def platform():
        return "posix"

try:
    import json
except ImportError:
    def dumps(value):
        return str(value)
