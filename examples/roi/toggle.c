/* Recording while a function runs: `hot` walks 64 KiB (through a helper it calls, and after
 * recursing a few levels) between two set-up passes over 4 MiB that call the same helper.
 * Callgrind's --toggle-collect=hot records only while `hot` is on the stack: the helper's
 * references count when `hot` calls it, not when `main` does.
 *
 *   cc -O1 -g -o toggle examples/roi/toggle.c
 *   cachescope record --toggle-collect=hot -o toggle.cst -- ./toggle
 *   cachescope stats toggle.cst      # about 1,024 distinct lines: the 64 KiB alone
 */
#include <stdio.h>

#define SETUP (4 << 20)
#define HOT (64 << 10)

static char setup_buf[SETUP];
static char hot_buf[HOT];

__attribute__((noinline)) static long touch(char* p, int round)
{
    return *p += (char)round;
}

__attribute__((noinline)) static long hot(int round, int depth)
{
    if (depth > 0)
        return hot(round, depth - 1) + 1;
    long sum = 0;
    for (long i = 0; i < HOT; i += 64)
        sum += touch(&hot_buf[i], round);
    return sum;
}

__attribute__((noinline)) static long setup(int round)
{
    long sum = 0;
    for (long i = 0; i < SETUP; i += 64)
        sum += touch(&setup_buf[i], round);
    return sum;
}

int main(void)
{
    long sum = setup(1);
    for (int round = 0; round < 8; round++)
        sum += hot(round, 3);
    sum += setup(2);
    printf("%ld\n", sum);
    return 0;
}
