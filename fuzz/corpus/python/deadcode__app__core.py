"""Core helpers."""

__all__ = ["exported_api", "used"]


def used(x):
    """Called from main."""
    return _inner(x) + 1


def _inner(x):
    return x * 2


def _forgotten_helper(x):
    """Nothing calls this."""
    return x - 1


def unused_public(x):
    """Nothing in the repository calls this either."""
    return x + 3


def exported_api():
    """Listed in __all__: API for others."""
    return 42


class Store:
    """A store."""

    def __init__(self):
        self.items = []

    def __len__(self):
        return len(self.items)

    def add(self, item):
        self.items.append(item)

    def never_called(self):
        return None
