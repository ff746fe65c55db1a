if PY3:
    def f(): pass
else:
    def f(): pass
try:
    from x import f
except ImportError:
    def f(): pass
class C:
    def p(self): pass
    def p(self, v): pass
