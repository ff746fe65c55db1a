def f():
    """never closed

def g():
    pass
