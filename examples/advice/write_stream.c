/* Planted problem: a write-only stream (advice kind `non-temporal`).
 *
 * Each pass reads a 24 KiB table and writes 24 KiB of output that is never read back: the
 * output's lines fill a 32 KiB cache and push the table out before the next pass reuses it.
 * The fixed twin (write_stream_fixed.c) writes the output with non-temporal stores, which do
 * not allocate lines. docs/advice.md. */
#include <stdio.h>
#include <stdlib.h>

#define TABLE 3072
#define PASSES 200

long long table[TABLE];

int main(void) {
    long long *out = malloc((size_t)PASSES * TABLE * sizeof *out);
    if (!out)
        return 1;
    for (int i = 0; i < TABLE; i++)
        table[i] = i;
    for (int p = 0; p < PASSES; p++)
        for (int i = 0; i < TABLE; i++)
            out[(size_t)p * TABLE + i] = table[i] * p;
    printf("%lld\n", out[(size_t)(PASSES - 1) * TABLE + 7]);
    free(out);
    return 0;
}
