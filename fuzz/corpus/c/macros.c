#define M(x) ((x) + 1)
#define N(a, ...) f(a, __VA_ARGS__)
#define S \
  long \
  continued
#define EMPTY()
#undef M
#pragma once
#include "a.h"
#include <b.h>
#include "../../up.h"
#include MACRO_PATH
int f(void) { return M(1) + N(2, 3); }
