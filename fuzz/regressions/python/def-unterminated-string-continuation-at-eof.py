def f():
    """x
\
