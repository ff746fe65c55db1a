#ifndef UTIL_H
#define UTIL_H

/* Largest of two values. */
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define VERSION 3

struct point {
    int x;
    int y;
};

typedef struct point point_t;

typedef union value {
    int i;
    double d;
} value_t;

enum color { RED, GREEN, BLUE };

typedef int (*callback_t)(int);

int util_add(int a, int b);
int util_add_(int a, int b);

#endif
