/* The fixed twin of stack_locals.c: the hot field in an array of its own, the cold fields in
 * another (what `whatif --change 'split:walk:cells=hot'` predicts). Built and recorded by
 * crates/cachescope-cli/tests/advice_locals.rs. */
#include <stdio.h>

#define N 2048
#define SWEEPS 8

__attribute__((noinline)) double walk(int depth, int salt) {
    double hot[N];
    double cold[N][3];
    for (int i = 0; i < N; i++) {
        hot[i] = i + salt;
        cold[i][0] = salt;
        cold[i][1] = depth;
        cold[i][2] = i;
    }
    printf("cells %p %zu\n", (void *)hot, sizeof hot + sizeof cold);
    double s = 0;
    for (int r = 0; r < SWEEPS; r++)
        for (int i = 0; i < N; i++)
            s += hot[i];
    if (depth > 0)
        s += walk(depth - 1, salt + 1);
    for (int i = 0; i < N; i++)
        s += hot[i];
    return s + cold[salt % N][1];
}

__attribute__((noinline)) double first(void) { return walk(2, 0); }
__attribute__((noinline)) double second(void) { return walk(1, 7); }

int main(void) {
    double s = first() + second();
    printf("%.0f\n", s);
    return 0;
}
