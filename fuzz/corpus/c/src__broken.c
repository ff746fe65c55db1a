#include "util.h"

int before(void)
{
    return 1;
}

int broken(void)
{
    return (1 + ;
}

int after(void)
{
    return before() + util_add(1, 2);
}
