/* Planted problem: hot and cold fields (advice kind `split`).
 *
 * The sweeps read one 8-byte field of 64-byte particles: each fetched line brings one used
 * field and 56 bytes the loop never touches. The fixed twin (hot_cold_fixed.c) keeps the hot
 * field in an array of its own. Built and recorded by crates/cachescope-cli/tests/advice.rs;
 * docs/advice.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 32768
#define SWEEPS 8

struct particle {
    double x;       /* hot: read by every sweep */
    double vx;      /* cold from here on: written once */
    double mass;
    double charge;
    char name[32];
};

int main(void) {
    struct particle *parts = malloc(N * sizeof *parts);
    if (!parts)
        return 1;
    for (int i = 0; i < N; i++) {
        parts[i].x = i;
        parts[i].vx = 1.0;
        parts[i].mass = 2.0;
        parts[i].charge = -1.0;
        memset(parts[i].name, 'a' + i % 26, sizeof parts[i].name);
    }
    double sum = 0;
    for (int s = 0; s < SWEEPS; s++)
        for (int i = 0; i < N; i++)
            sum += parts[i].x;
    printf("%.0f\n", sum);
    free(parts);
    return 0;
}
