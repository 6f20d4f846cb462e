/* Planted problem: a loop that wants blocking (advice kind `block`).
 *
 * Each row of the result adds three rows of `a`: a line of `a` is used again one and two rows
 * later, after three rows of 125 KiB have passed through the cache, which a 32 KiB cache
 * cannot hold but a 1 MiB one can. The fixed twin (stencil_fixed.c) walks the rows in strips
 * narrow enough for the three rows of a strip to stay in the small cache. docs/advice.md. */
#include <stdio.h>
#include <stdlib.h>

#define ROWS 48
#define COLS 16000

int main(void) {
    double (*a)[COLS] = malloc(sizeof(double[ROWS][COLS]));
    double (*b)[COLS] = malloc(sizeof(double[ROWS][COLS]));
    if (!a || !b)
        return 1;
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < COLS; j++) {
            a[i][j] = i + j;
            b[i][j] = 0;
        }
    for (int i = 1; i < ROWS - 1; i++)
        for (int j = 0; j < COLS; j++)
            b[i][j] += a[i - 1][j] + a[i][j] + a[i + 1][j];
    printf("%.0f\n", b[ROWS / 2][COLS / 2]);
    free(b);
    free(a);
    return 0;
}
