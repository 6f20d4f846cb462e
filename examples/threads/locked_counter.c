/* True sharing under a lock: two threads add to one counter, each addition inside a mutex.
 * Both threads write the same bytes of the same line (the counter, and the mutex beside it),
 * so `cachescope sharing` classifies the line as true sharing: no layout change removes it,
 * only less communication (per-thread sums added once at the end) does.
 * Build: cc -O1 -g -pthread locked_counter.c -o locked_counter */
#include <pthread.h>
#include <stdint.h>

#define ADDS 20000

static struct {
    pthread_mutex_t lock;
    uint64_t total;
} shared = {PTHREAD_MUTEX_INITIALIZER, 0};

static void *add(void *arg) {
    (void)arg;
    for (int i = 0; i < ADDS; i++) {
        pthread_mutex_lock(&shared.lock);
        shared.total += 1;
        pthread_mutex_unlock(&shared.lock);
    }
    return NULL;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, NULL, add, NULL);
    pthread_create(&b, NULL, add, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    return shared.total == 2 * ADDS ? 0 : 1;
}
