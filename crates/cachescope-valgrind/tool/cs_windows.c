/* Reuse windows measured in the tool (--cs-sample-windows=yes): the exact stack distance of a
 * short sampled reuse, as crates/cachescope/src/sampling/windows.rs measures it on a trace,
 * so that a live sampled report's profile carries the same measured distances as its trace's.
 *
 * Copyright (C) 2026 the cachescope authors. SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The generated code stores the line of every counted reference into a ring of the last 2^16
 * (cs_sample.c). When a watchpoint fires within the ring, the distinct lines of the ring's
 * stretch between the sample and its reuse are counted into an open-addressed table whose
 * slots are stamped with the count's number, so no count clears it: 4 Ki slots first (64 KiB,
 * the nearest caches), doubled and the window counted again while more than half full.
 *
 * windows.rs's budget (16 references read a reference plus 2^26) is applied by cachescope as
 * it reads the records (crates/cachescope/src/record/tool_sampled.rs), where the thinning of
 * the samples is known: the tool also measures samples the thinning drops, and those past
 * that budget, which the trace's sampler does not count. The tool's own budget (256 a
 * reference plus 2^32: seconds of counting) only bounds its cost on a pathological program;
 * past it, a live profile could miss windows its trace's would hold.
 */

#include "pub_tool_basics.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_mallocfree.h"

#include "cs_windows.h"

#define RING (1ULL << CS_WINDOWS_BITS)
#define SLOTS (2 * RING) /* at most half full without growing */
#define BUDGET_PER_REF 256ULL
#define BUDGET_BASE (1ULL << 32)

typedef struct {
   ULong line;
   UInt count; /* the count that holds the slot; another count sees it empty */
} Slot;

ULong* cs_windows_ring = NULL;
static Slot* slots = NULL;
static UInt count = 0;
static ULong spent = 0; /* references the counts have read */

void cs_windows_start(void)
{
   cs_windows_ring = VG_(calloc)("cachescope.windows.ring", RING, sizeof(ULong));
   slots = VG_(calloc)("cachescope.windows.slots", SLOTS, sizeof(Slot));
}

/* The distinct lines of the `len` ring entries from position `from` on, counted into the
   first `size` slots (a power of two); -1 with `grow` once more than half of them fill. */
static Long count_into(ULong size, Bool grow, ULong from, ULong len)
{
   ULong mask = size - 1, distinct = 0, last = 0;
   for (ULong k = 0; k < len; k++) {
      ULong line = cs_windows_ring[(from + k) & (RING - 1)];
      /* A run of references to one line (a loop over its bytes) probes once. */
      if (k > 0 && line == last)
         continue;
      last = line;
      ULong s = ((line * 0x9E3779B97F4A7C15ULL) >> 32) & mask;
      for (;;) {
         if (slots[s].count != count) {
            slots[s].line = line;
            slots[s].count = count;
            distinct++;
            break;
         }
         if (slots[s].line == line)
            break;
         s = (s + 1) & mask;
      }
      if (grow && distinct > size / 2)
         return -1;
   }
   return (Long)distinct;
}

Long cs_windows_between(ULong j, ULong i)
{
   if (cs_windows_ring == NULL || i <= j || i - j > RING
       || spent > BUDGET_PER_REF * i + BUDGET_BASE)
      return -1;
   spent += i - j - 1;
   for (ULong size = 4096;; size *= 2) {
      if (count == 0xFFFFFFFFU) {
         VG_(memset)(slots, 0, SLOTS * sizeof(Slot));
         count = 0;
      }
      count++;
      Long distinct = count_into(size, size < SLOTS, j + 1, i - j - 1);
      if (distinct >= 0)
         return distinct;
   }
}
