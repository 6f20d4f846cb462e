/* A region of interest: a set-up pass over 4 MiB that is not worth recording, then the loop
 * that matters, over 64 KiB, between CACHESCOPE_START() and CACHESCOPE_STOP().
 *
 *   cc -O1 -g -I include -o roi examples/roi/roi.c
 *   cachescope record --collect-atstart=no -o roi.cst -- ./roi
 *   cachescope stats roi.cst      # about 1,024 distinct lines: the loop's 64 KiB alone
 */
#include <stdio.h>
#include <stdlib.h>

#include "cachescope.h"

#define SETUP (4 << 20)
#define HOT (64 << 10)

int main(void)
{
    char* setup = malloc(SETUP);
    char* hot = malloc(HOT);
    if (!setup || !hot)
        return 1;
    for (long i = 0; i < SETUP; i += 64)
        setup[i] = (char)i;
    long sum = 0;
    CACHESCOPE_START();
    for (int round = 0; round < 8; round++)
        for (long i = 0; i < HOT; i += 64)
            sum += hot[i] += (char)round;
    CACHESCOPE_STOP();
    for (long i = 0; i < SETUP; i += 64)
        sum += setup[i];
    printf("%ld\n", sum);
    return 0;
}
