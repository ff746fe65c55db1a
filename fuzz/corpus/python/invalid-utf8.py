def f():
    return "ÿş"
Ãdef g(): pass
