/* Producer/consumer: thread 2 fills slots of a ring buffer, thread 3 reads them and clears
 * them. Every slot line is written by one thread and read (and written) by the other: true
 * sharing that carries data from one core to the other, the communication a multi-core
 * simulation counts as coherence misses on the buffer's lines.
 * Build: cc -O1 -g -pthread producer_consumer.c -o producer_consumer */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>

#define SLOTS 64
#define ITEMS 20000

static uint64_t ring[SLOTS];
static atomic_uint_fast64_t produced, consumed;
static uint64_t checksum;

static void *producer(void *arg) {
    (void)arg;
    for (uint64_t i = 1; i <= ITEMS; i++) {
        while (i - atomic_load(&consumed) > SLOTS)
            sched_yield(); /* under Valgrind, one thread runs at a time: let the other run */
        ring[i % SLOTS] = i;
        atomic_store(&produced, i);
    }
    return NULL;
}

static void *consumer(void *arg) {
    (void)arg;
    for (uint64_t i = 1; i <= ITEMS; i++) {
        while (atomic_load(&produced) < i)
            sched_yield();
        checksum += ring[i % SLOTS];
        ring[i % SLOTS] = 0;
        atomic_store(&consumed, i);
    }
    return NULL;
}

int main(void) {
    pthread_t p, c;
    pthread_create(&p, NULL, producer, NULL);
    pthread_create(&c, NULL, consumer, NULL);
    pthread_join(p, NULL);
    pthread_join(c, NULL);
    return checksum == (uint64_t)ITEMS * (ITEMS + 1) / 2 ? 0 : 1;
}
