match x:
    case [a, *rest] if a:
        def inner(): pass
    case {"k": v}:
        pass
type Alias[T] = list[T]
def g[T](x: T) -> T:
    return (y := x)
print(f"{x!r:>{w}} {f'{y}'}")
async def h():
    async with a as b, c:
        await d()
    return [i async for i in e()]
