/* False sharing: two threads each increment their own counter, but the two counters sit
 * side by side in one cache line, so every write by one thread invalidates the other's copy.
 * `cachescope simulate --cores 2 --L1 32K,8,64 --LL 8M,16,64 --shared LL` on its trace
 * shows the coherence misses; padded.c is the same program with the counters a line apart. */
#include <pthread.h>
#include <stdio.h>

#define ITERATIONS 100000

static struct {
    volatile long a; /* thread 2's counter */
    volatile long b; /* thread 3's counter, in the same 64-byte line */
} counters;

static void *bump(void *counter) {
    volatile long *c = counter;
    for (long i = 0; i < ITERATIONS; i++)
        (*c)++;
    return NULL;
}

int main(void) {
    pthread_t t1, t2;
    pthread_create(&t1, NULL, bump, (void *)&counters.a);
    pthread_create(&t2, NULL, bump, (void *)&counters.b);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    printf("%ld %ld\n", counters.a, counters.b);
    return 0;
}
