/* The fixed twin of false_sharing.c: each counter on a 64-byte line of its own (what
 * `own-line:counters` predicts). */
#include <pthread.h>
#include <stdio.h>

#define THREADS 4
#define ITERS 100000

struct padded {
    volatile long v;
    char pad[56];
};

struct padded counters[THREADS] __attribute__((aligned(64)));

static void *work(void *arg) {
    long t = (long)arg;
    for (long i = 0; i < ITERS; i++)
        counters[t].v += i & 3;
    return NULL;
}

int main(void) {
    pthread_t th[THREADS];
    for (long t = 0; t < THREADS; t++)
        pthread_create(&th[t], NULL, work, (void *)t);
    long sum = 0;
    for (int t = 0; t < THREADS; t++) {
        pthread_join(th[t], NULL);
        sum += counters[t].v;
    }
    printf("%ld\n", sum);
    return 0;
}
