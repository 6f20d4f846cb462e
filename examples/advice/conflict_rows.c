/* Planted problem: conflicting rows (advice kind `pad`).
 *
 * A column walk over a float[64][1024] array: its rows are 4 KiB apart, so the 64 lines of a
 * column all fall in one set of a 32 KiB 8-way cache (64 sets of 64-byte lines repeat every
 * 4 KiB) and evict each other before the next column reuses them. The fixed twin
 * (conflict_rows_fixed.c) pads each row by one line. docs/advice.md. */
#include <stdio.h>

#define ROWS 64
#define COLS 1024
#define REPS 4

float grid[ROWS][COLS];

int main(void) {
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < COLS; j++)
            grid[i][j] = (float)(i + j);
    float sum = 0;
    for (int r = 0; r < REPS; r++)
        for (int j = 0; j < COLS; j++)
            for (int i = 0; i < ROWS; i++)
                sum += grid[i][j];
    printf("%.0f\n", sum);
    return 0;
}
