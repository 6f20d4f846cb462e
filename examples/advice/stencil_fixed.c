/* The fixed twin of stencil.c: the same sums, in strips of 500 columns (4000 bytes of each
 * row), so the three rows of a strip stay in a 32 KiB cache between their uses. */
#include <stdio.h>
#include <stdlib.h>

#define ROWS 48
#define COLS 16000
#define STRIP 500

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
    for (int jj = 0; jj < COLS; jj += STRIP)
        for (int i = 1; i < ROWS - 1; i++)
            for (int j = jj; j < jj + STRIP; j++)
                b[i][j] += a[i - 1][j] + a[i][j] + a[i + 1][j];
    printf("%.0f\n", b[ROWS / 2][COLS / 2]);
    free(b);
    free(a);
    return 0;
}
