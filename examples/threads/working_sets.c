/* Two threads with different working sets: thread 2 (the first created) cycles over 16 KiB,
 * thread 3 over 1 MiB, while the main thread waits. Each thread's own miss-ratio curve has
 * its knee at its own working set (`cachescope mrc --per-thread`), which the merged curve of
 * all threads hides. The arrays are written before they are read, so no compiler folds the
 * loops away. Build: cc -O1 -g -pthread working_sets.c -o working_sets */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#define SMALL (16 * 1024 / sizeof(uint64_t))
#define LARGE (1024 * 1024 / sizeof(uint64_t))
#define PASSES 16

struct job {
    uint64_t *data;
    size_t n;
    uint64_t sum;
};

static void *scan(void *arg) {
    struct job *j = arg;
    for (size_t i = 0; i < j->n; i++)
        j->data[i] = i;
    uint64_t s = 0;
    for (int p = 0; p < PASSES; p++)
        for (size_t i = 0; i < j->n; i += 8) /* one reference per 64-byte line */
            s += j->data[i];
    j->sum = s;
    return NULL;
}

int main(void) {
    struct job small = {malloc(SMALL * sizeof(uint64_t)), SMALL, 0};
    struct job large = {malloc(LARGE * sizeof(uint64_t)), LARGE, 0};
    pthread_t a, b;
    pthread_create(&a, NULL, scan, &small);
    pthread_create(&b, NULL, scan, &large);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    return (int)((small.sum + large.sum) & 1);
}
