#if A
int f(int x)
#elif B
int f(long x)
#endif
{ return g(x); }
#if C
struct { int
#else
}
#endif
int h(void) { return 1; }
