def (): pass
class :
    def m(self
def ok(): pass
async def
@
def deco(): pass
lambda: (yield)
