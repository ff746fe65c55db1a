def f():
    """Doc."""
