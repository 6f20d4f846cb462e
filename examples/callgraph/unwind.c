/* Calls that do not return the usual way, for the call graph's tests
 * (crates/cachescope-cli/tests/callgraph.rs): deep recursion left by longjmp, five times, then
 * work after it; a signal handler that reads an array, run inside raise(). The stack must be
 * main ─┬─ deep ─ deep ─ … (left by longjmp)
 *       ├─ after
 *       └─ interrupted ─ raise …   and the handler above a boundary: <signal 10> ─ on_signal
 * Built with `cc -O1 -g -fno-inline`. */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>

#define NOINLINE __attribute__((noinline, noclone))
#define N (1 << 16)

static jmp_buf env;
static long data[N];
static volatile long handled;

NOINLINE void deep(int n)
{
   data[(n * 4099) % N] += n;
   if (n == 0)
      longjmp(env, 1);
   deep(n - 1);
   data[n] += 1; /* never reached: keeps the call from being a tail call */
}

NOINLINE long after(void)
{
   long s = 0;
   for (long i = 0; i < N; i += 8)
      s += data[i];
   return s;
}

NOINLINE void on_signal(int sig)
{
   for (long i = 0; i < N; i += 8)
      handled += data[(i * 17) % N] + sig;
}

NOINLINE void interrupted(void)
{
   raise(SIGUSR1);
}

int main(void)
{
   signal(SIGUSR1, on_signal);
   for (int r = 0; r < 5; r++)
      if (!setjmp(env))
         deep(100);
   long total = after();
   interrupted();
   printf("%ld %ld\n", total, handled);
   return 0;
}
