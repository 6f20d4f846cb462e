/* Two threads falsely sharing a line of another thread's stack: run() keeps a local array of
 * counters in its frame and hands each worker one element; both elements lie on one line.
 * `sharing` names the line after the local, `run:counts` (a frame's local, function:local),
 * as `attribute` names it. crates/cachescope-cli/tests/sharing_locals.rs. */
#include <pthread.h>
#include <stdio.h>

#define ROUNDS 20000

static void *work(void *p) {
    volatile long *c = p;
    for (int i = 0; i < ROUNDS; i++)
        (*c)++;
    return NULL;
}

__attribute__((noinline)) long run(void) {
    long counts[4] = {0, 0, 0, 0};
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, work, &counts[i]);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    return counts[0] + counts[1];
}

int main(void) {
    printf("%ld\n", run());
    return 0;
}
