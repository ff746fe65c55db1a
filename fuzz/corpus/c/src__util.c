#include "../include/util.h"

// Adds two numbers.
// Second line of the comment.
int util_add(int a, int b)
{
    return a + b;
}

/* The variant with a trailing underscore is a different function. */
int util_add_(int a, int b)
{
    return util_add(a, b) * 2;
}

static int twice(int v)
{
    return MAX(v, v) * 2;
}

int *make_buffer(int n)
{
    return (int *)0 + twice(n);
}
