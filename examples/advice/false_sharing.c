/* Planted problem: falsely shared counters (advice kind `false-sharing`).
 *
 * Four threads each increment their own counter, and the four counters share one line: every
 * increment takes the line away from the other cores. The fixed twin (false_sharing_fixed.c)
 * gives each counter a line of its own. docs/advice.md. */
#include <pthread.h>
#include <stdio.h>

#define THREADS 4
#define ITERS 100000

volatile long counters[THREADS];

static void *work(void *arg) {
    long t = (long)arg;
    for (long i = 0; i < ITERS; i++)
        counters[t] += i & 3;
    return NULL;
}

int main(void) {
    pthread_t th[THREADS];
    for (long t = 0; t < THREADS; t++)
        pthread_create(&th[t], NULL, work, (void *)t);
    long sum = 0;
    for (int t = 0; t < THREADS; t++) {
        pthread_join(th[t], NULL);
        sum += counters[t];
    }
    printf("%ld\n", sum);
    return 0;
}
