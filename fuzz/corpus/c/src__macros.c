/* Definitions that only parse once their macros are seen through. */
#include "util.h"

IMPLEMENT_THINGS(widget)
IMPLEMENT_MORE(widget)

static int after_macros(int v)
{
    return v + 1;
}

FORCE_INLINE int
decorated_name(int v)
{
    return after_macros(v);
}

PUBLIC_API long export_me(long v)
{
    return v;
}

#if defined WIDE
int config(int what)
#else
int config_wide(int what)
#endif
{
    return what;
}
