/* The fixed twin of hot_cold.c: the hot field `x` in an array of its own, the cold fields in
 * another (what `split:parts=x` predicts). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 32768
#define SWEEPS 8

struct cold {
    double vx;
    double mass;
    double charge;
    char name[32];
};

int main(void) {
    double *x = malloc(N * sizeof *x);
    struct cold *rest = malloc(N * sizeof *rest);
    if (!x || !rest)
        return 1;
    for (int i = 0; i < N; i++) {
        x[i] = i;
        rest[i].vx = 1.0;
        rest[i].mass = 2.0;
        rest[i].charge = -1.0;
        memset(rest[i].name, 'a' + i % 26, sizeof rest[i].name);
    }
    double sum = 0;
    for (int s = 0; s < SWEEPS; s++)
        for (int i = 0; i < N; i++)
            sum += x[i];
    printf("%.0f\n", sum);
    free(rest);
    free(x);
    return 0;
}
