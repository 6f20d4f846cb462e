/* The fixed twin of write_stream.c: the output written with non-temporal stores (movnti),
 * which bypass the caches (what `nontemporal:out` predicts). Valgrind records them as plain
 * stores; the test simulates this program with `nontemporal:@movnt`, which finds them in its
 * code. */
#include <emmintrin.h>
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
            _mm_stream_si64(&out[(size_t)p * TABLE + i], table[i] * p);
    _mm_sfence();
    printf("%lld\n", out[(size_t)(PASSES - 1) * TABLE + 7]);
    free(out);
    return 0;
}
