int (*(*(*fp)(int))[4])(void);
int *(*g(int a))(char) { return 0; }
int (f)(void) { return 0; }
int k(a, b) int a; char *b; { return a; }
__attribute__((unused)) static inline int q(void) { return 0; }
typedef int (*cb_t)(void *), arr_t[4], *ptr_t;
typedef struct N { struct N *next; } N, *NP;
