import pkg.api
import pkg.util as u
from pkg import models

pkg.api.get("u")
u.helper()
models.Model().validate()


def main():
    return pkg.api.load()
