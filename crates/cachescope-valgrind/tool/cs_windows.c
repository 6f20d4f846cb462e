/* Reuse windows measured in the tool (--cs-sample-windows=yes): the exact stack distance of a
 * short sampled reuse, as crates/cachescope/src/sampling/windows.rs measures it on a trace,
 * so that a live sampled report's profile carries the same measured distances as its trace's.
 *
 * Copyright (C) 2026 the cachescope authors. SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The generated code stores the line of every counted reference into a ring of the last 2^16
 * (cs_sample.c). When a watchpoint fires within the ring, the distinct lines of the ring's
 * stretch between the sample and its reuse are counted into an open-addressed set, as
 * crates/cachescope/src/sampling/line_set.rs counts them: slots of 8 bytes (a line, or EMPTY),
 * the first table sized by the window up to 4 Ki slots (32 KiB, the nearest cache), grown in
 * place while more than half full (its lines moved, the count going on), and emptied after
 * each count by the slots it filled. Until this the slots were 16 bytes stamped per count and
 * the window was counted again at each doubling.
 *
 * cs_sample.c asks only for the windows of the samples cachescope keeps (the positions pipe
 * says where each sample stops being kept), in the order of their reuses, so the budget here
 * is windows.rs's own (16 references read a reference plus 2^26, `windows::within`): the
 * windows measured are exactly those the trace's sampler measures, and those cachescope keeps
 * (crates/cachescope/src/record/tool_sampled.rs applies the same rule again).
 */

#include "pub_tool_basics.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_mallocfree.h"

#include "cs_windows.h"

#define RING (1ULL << CS_WINDOWS_BITS)
#define SLOTS (2 * RING) /* a window's at most RING − 1 lines fill at most half */
#define FIRST 4096ULL    /* slots of a count's first table, at most */
#define EMPTY (~0ULL)    /* a free slot; a window's line of this value is noted apart */
#define BUDGET_PER_REF 16ULL
#define BUDGET_BASE (1ULL << 26)

ULong* cs_windows_ring = NULL;
static ULong* slots = NULL;  /* EMPTY or a line; the first `size` in use during a count */
static UInt* filled = NULL;  /* the slots a count filled, in order, and one place more */
static ULong* moved = NULL;  /* the lines moved when the table grows */
static ULong spent = 0;      /* references the counts have read */

void cs_windows_start(void)
{
   cs_windows_ring = VG_(calloc)("cachescope.windows.ring", RING, sizeof(ULong));
   slots = VG_(malloc)("cachescope.windows.slots", SLOTS * sizeof(ULong));
   VG_(memset)(slots, 0xFF, SLOTS * sizeof(ULong));
   filled = VG_(malloc)("cachescope.windows.filled", (RING + 1) * sizeof(UInt));
   moved = VG_(malloc)("cachescope.windows.moved", RING * sizeof(ULong));
}

/* Inserts `line` into the first `mask + 1` slots (not full), whose slots filled[0..n) are
   filled: the filled count after. Found or free, the slot is written and the count grows by
   whether it was free (line_set.rs's `insert`). */
static inline ULong insert(ULong mask, ULong n, ULong line)
{
   ULong s = ((line * 0x9E3779B97F4A7C15ULL) >> 32) & mask;
   for (;;) {
      ULong held = slots[s];
      if (held == line || held == EMPTY) {
         slots[s] = line;
         filled[n] = (UInt)s;
         return n + (held == EMPTY);
      }
      s = (s + 1) & mask;
   }
}

/* Moves the n lines of the slots filled[0..n) into the first `size` slots. */
static __attribute__((noinline)) void grow(ULong size, ULong n)
{
   for (ULong k = 0; k < n; k++) {
      moved[k] = slots[filled[k]];
      slots[filled[k]] = EMPTY;
   }
   for (ULong k = 0; k < n; k++)
      insert(size - 1, k, moved[k]);
}

/* The distinct lines of the `len` ring entries from position `from` on (len < RING). */
static ULong count(ULong from, ULong len)
{
   if (len == 0)
      return 0;
   ULong size = FIRST;
   while (size / 2 >= 2 * len && size > 2)
      size /= 2; /* the least power of two at least 2 · len, at most FIRST */
   ULong start = from & (RING - 1);
   ULong first = len < RING - start ? len : RING - start;
   const ULong* part[2] = {cs_windows_ring + start, cs_windows_ring};
   ULong part_len[2] = {first, len - first};
   /* `last` starts unlike the first line, so that one is never taken for a run. */
   ULong n = 0, last = ~cs_windows_ring[start], saw_empty = 0;
   for (Int p = 0; p < 2; p++) {
      for (ULong k = 0; k < part_len[p]; k++) {
         ULong line = part[p][k];
         /* A run of references to one line (a loop over its bytes) probes once. */
         if (line == last)
            continue;
         last = line;
         if (line == EMPTY) {
            saw_empty = 1;
            continue;
         }
         n = insert(size - 1, n, line);
         if (n > size / 2) {
            size *= 2;
            grow(size, n);
         }
      }
   }
   for (ULong k = 0; k < n; k++)
      slots[filled[k]] = EMPTY;
   return n + saw_empty;
}

Long cs_windows_between(ULong j, ULong i)
{
   /* windows.rs's `distinct_between`: the ring first, then the budget (`within`). */
   if (cs_windows_ring == NULL || i <= j || i - j > RING
       || spent > BUDGET_PER_REF * i + BUDGET_BASE)
      return -1;
   spent += i - j - 1;
   return (Long)count(j + 1, i - j - 1);
}
