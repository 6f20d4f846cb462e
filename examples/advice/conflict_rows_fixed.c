/* The fixed twin of conflict_rows.c: each row padded by 16 floats (one 64-byte line), so a
 * column's lines spread over the sets (what `pad-rows:grid=64` predicts). */
#include <stdio.h>

#define ROWS 64
#define COLS 1024
#define PAD 16
#define REPS 4

float grid[ROWS][COLS + PAD];

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
