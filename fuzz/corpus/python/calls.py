class A(B, metaclass=M):
    def m(self):
        self.n(); super().m(); cls.k(); a.b.c.d(); f()(); (lambda: 1)(); x[0](); A.m(self)
    @staticmethod
    @functools.wraps(f)
    def n(): pass
