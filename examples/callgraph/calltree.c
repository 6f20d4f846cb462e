/* A program with a known call tree, for `cachescope attribute --callgraph` and its tests
 * (crates/cachescope-cli/tests/callgraph.rs, docs/callgraph.md):
 *
 *   main ─┬─ stream ─── sum            sum has two callers: stream calls it,
 *         ├─ strided ══ sum            strided jumps to it (a tail call at -O2)
 *         ├─ descend ─ descend ─ … ─ leaf     recursion, DEPTH levels deep
 *         └─ (*kernels[i]) → walk | chase      calls through a function pointer
 *
 * Each function touches arrays sized so that its misses are its own: sum reads `big` (2 MiB,
 * larger than any L1), leaf and the kernels read `mid` and `small`. Built with
 * `cc -O2 -g -fno-inline` so that every call is a call (the test checks the tail call in the
 * disassembly). */
#include <stdio.h>

#define NOINLINE __attribute__((noinline, noclone))
#define BIG (1 << 18)   /* longs: 2 MiB */
#define MID (1 << 13)   /* longs: 64 KiB */
#define SMALL 256       /* longs: 2 KiB */
#define DEPTH 12
#define ROUNDS 3
#define KERNEL_CALLS 40

static long big[BIG];
static long mid[MID];
static long small[SMALL];

/* Reads every `step`-th element of v[0..n). */
NOINLINE long sum(const long* v, long n, long step)
{
   long s = 0;
   for (long i = 0; i < n; i += step)
      s += v[i];
   return s;
}

/* Calls sum, then works on its result: not a tail call. */
NOINLINE long stream(void)
{
   return sum(big, BIG, 1) ^ 1;
}

/* Ends in a jump to sum: a tail call. */
NOINLINE long strided(long step)
{
   return sum(big, BIG, step);
}

NOINLINE long leaf(long at)
{
   long s = 0;
   for (long i = 0; i < MID; i += 8)
      s += mid[(i + at) % MID];
   return s;
}

/* Recursion: each level touches a line of `big`, the last calls leaf. The store after the
   call keeps it from being a tail call. */
NOINLINE long descend(long depth, long at)
{
   if (depth == 0)
      return leaf(at);
   long r = descend(depth - 1, at + 97);
   big[(at * 4099) % BIG] = r;
   return r + depth;
}

NOINLINE long walk(long k)
{
   long s = 0;
   for (long i = 0; i < SMALL; i++)
      s += small[i] * k;
   return s;
}

NOINLINE long chase(long k)
{
   long s = 0, at = k % MID;
   for (long i = 0; i < 512; i++) {
      s += mid[at];
      at = (at * 33 + 7) % MID;
   }
   return s;
}

typedef long (*kernel)(long);
/* volatile: the calls stay indirect. */
static kernel volatile kernels[2] = { walk, chase };

int main(void)
{
   for (long i = 0; i < BIG; i++)
      big[i] = i;
   for (long i = 0; i < MID; i++)
      mid[i] = i * 3;
   for (long i = 0; i < SMALL; i++)
      small[i] = i;
   long total = 0;
   for (int r = 0; r < ROUNDS; r++) {
      total += stream();
      total += strided(8 + r);
      total += descend(DEPTH, r);
   }
   for (long i = 0; i < KERNEL_CALLS; i++)
      total += kernels[i & 1](i);
   printf("%ld\n", total);
   return 0;
}
