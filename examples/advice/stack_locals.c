/* Planted problem on the stack: hot and cold fields of a local array (advice kind `split`,
 * structure `walk:cells`, a frame's local named function:local).
 *
 * walk() keeps 2048 cells of 32 bytes in its frame and sweeps their `hot` field: each fetched
 * line brings one used 8-byte field and 24 bytes the sweeps never touch. It is called from two
 * places (first, second) and recursively, so several frames of it are live at once, each at
 * its own address. Each frame prints where its array is, so a test can count the references
 * to it without cachescope's reading of frames. The fixed twin (stack_locals_fixed.c) keeps
 * the hot field in an array of its own. Built and recorded by
 * crates/cachescope-cli/tests/advice_locals.rs; docs/advice.md. */
#include <stdio.h>

#define N 2048
#define SWEEPS 8

struct cell {
    double hot;     /* read by every sweep */
    double cold[3]; /* written once, read once */
};

__attribute__((noinline)) double walk(int depth, int salt) {
    struct cell cells[N];
    for (int i = 0; i < N; i++) {
        cells[i].hot = i + salt;
        cells[i].cold[0] = salt;
        cells[i].cold[1] = depth;
        cells[i].cold[2] = i;
    }
    printf("cells %p %zu\n", (void *)cells, sizeof cells);
    double s = 0;
    for (int r = 0; r < SWEEPS; r++)
        for (int i = 0; i < N; i++)
            s += cells[i].hot;
    if (depth > 0)
        s += walk(depth - 1, salt + 1);
    /* The callee's frames are gone; this frame's cells are still live. */
    for (int i = 0; i < N; i++)
        s += cells[i].hot;
    return s + cells[salt % N].cold[1];
}

__attribute__((noinline)) double first(void) { return walk(2, 0); }
__attribute__((noinline)) double second(void) { return walk(1, 7); }

int main(void) {
    double s = first() + second();
    printf("%.0f\n", s);
    return 0;
}
