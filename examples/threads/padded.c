/* false_sharing.c with each counter on a cache line of its own (64-byte lines): the two
 * threads no longer write one line, and the coherence misses go away. */
#include <pthread.h>
#include <stdio.h>

#define ITERATIONS 100000

static struct {
    _Alignas(64) volatile long a; /* thread 2's counter */
    _Alignas(64) volatile long b; /* thread 3's counter, a line further on */
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
