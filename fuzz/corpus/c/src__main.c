#include <stdio.h>
#include "util.h"

static int twice(int v)
{
    return v + v;
}

int main(void)
{
    struct point p = { 1, 2 };
    printf("%d\n", util_add(p.x, p.y));
    return twice(util_add_(1, 2));
}
