/* Three planted memory phases, recurring: three rounds of a stream, a sweep and random reads,
 * sized against an L2 of KIB KiB (argument; default 1024):
 *   stream  64 x the L2, four new lines per loop iteration (misses only; footprint per interval
 *           far above the others', the case that broke setvectors in issue 20);
 *   sweep   half the L2, word by word (hits once warm);
 *   random  words of twice the L2 (about half hits).
 * Each phase instance makes 1.5 M loads per MiB of L2 (3 to 12 M instructions at 1 MiB).
 * Record it and classify with 1 M-instruction intervals (scaled with KIB) and k = 3:
 *   cachescope record --no-events -o planted.cst -- ./planted
 *   cachescope phases planted.cst --k 3 */
#include <stdio.h>
#include <stdlib.h>

static unsigned long stream_pos;

static unsigned long stream_phase(const long *s, unsigned long n, unsigned long refs) {
    unsigned long sum = 0;
    for (unsigned long i = 0; i < refs; i += 4, stream_pos = (stream_pos + 32) % n)
        sum += s[stream_pos] + s[stream_pos + 8] + s[stream_pos + 16] + s[stream_pos + 24];
    return sum;
}

static unsigned long sweep_phase(const long *w, unsigned long n, unsigned long refs) {
    unsigned long sum = 0;
    for (unsigned long i = 0; i < refs; i++) sum += w[i % n];
    return sum;
}

static unsigned long random_phase(const long *r, unsigned long n, unsigned long refs,
                                  unsigned long *x) {
    unsigned long sum = 0;
    for (unsigned long i = 0; i < refs; i++) {
        *x = *x * 6364136223846793005UL + 1442695040888963407UL;
        sum += r[(*x >> 33) % n];
    }
    return sum;
}

int main(int argc, char **argv) {
    unsigned long kib = argc > 1 ? strtoul(argv[1], NULL, 10) : 1024;
    unsigned long l2 = kib << 10, words = l2 / sizeof(long);
    unsigned long refs = 1464 * kib; /* 1.5 M at 1 MiB */
    long *s = malloc(64 * l2), *w = malloc(l2 / 2), *r = malloc(2 * l2);
    if (kib < 4 || !s || !w || !r) return 1;
    /* The sweep's and random's arrays are written once; the stream is never written. */
    for (unsigned long i = 0; i < words / 2; i++) w[i] = (long)i;
    for (unsigned long i = 0; i < 2 * words; i++) r[i] = (long)i;
    unsigned long x = 12345, total = 0;
    for (int round = 0; round < 3; round++) {
        total += stream_phase(s, 64 * words, refs);
        total += sweep_phase(w, words / 2, refs);
        total += random_phase(r, 2 * words, refs, &x);
    }
    printf("%lu\n", total);
    return 0;
}
