/* One cache line, two structures: the workers' slots (each thread counts into its own slot:
 * false sharing) and, right after them, the mutex that guards the total (every thread takes
 * it: true sharing), two globals the compiler lays out side by side, so one 64-byte line
 * holds slots[0], slots[1] and the start of `lock`. `cachescope sharing` names each part of
 * the line with its own kind and threads; moving `slots` to a line of its own removes the
 * false sharing, and only the mutex's true sharing is left.
 * Build: cc -O1 -g -pthread mixed_line.c -o mixed_line */
#include <pthread.h>
#include <stdio.h>

#define ROUNDS 20000
#define BATCH 16

/* In one section, in this order (the layout `sharing` reports says where they landed). */
__attribute__((section(".data.shared"), aligned(64))) volatile long slots[2] = {0, 0};
__attribute__((section(".data.shared"))) pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long total;

static void *work(void *arg) {
    long k = (long)arg;
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < BATCH; i++)
            slots[k]++;
        pthread_mutex_lock(&lock);
        total += BATCH;
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, NULL, work, (void *)0);
    pthread_create(&b, NULL, work, (void *)1);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("%ld %ld %ld\n", slots[0], slots[1], total);
    return 0;
}
