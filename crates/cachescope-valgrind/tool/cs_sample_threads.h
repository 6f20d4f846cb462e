/* The per-thread reuse sampler of cachescope's Valgrind tool (cs_sample_threads.c).
 * Copyright (C) 2026 the cachescope authors. SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef CS_SAMPLE_THREADS_H
#define CS_SAMPLE_THREADS_H

#include "pub_tool_basics.h"

#define FILTER_BITS 20
#define NEVER (~0ULL)

/* The watch counters both samplers share (cs_sample.c), by slot_of(line), and a bit per slot
   that is set while its counter is not zero: the generated code reads the bit. */
extern UShort cs_filter[1 << FILTER_BITS];
extern UChar cs_filter_bits[1 << (FILTER_BITS - 3)];

/* The line's low bits, not a hash: the bits the program's references read then follow the
   program's own locality at 1/512 of its footprint, and lines alias only 2^FILTER_BITS lines
   apart. */
static inline UInt slot_of(ULong line)
{
   return (UInt)(line & ((1 << FILTER_BITS) - 1));
}

/* A watch on a line of `slot` set, and removed (a full counter stays full: only calls more). */
static inline void cs_filter_add(UInt slot)
{
   if (cs_filter[slot] != 0xFFFF && cs_filter[slot]++ == 0)
      cs_filter_bits[slot >> 3] |= (UChar)(1 << (slot & 7));
}

static inline void cs_filter_remove(UInt slot)
{
   if (cs_filter[slot] != 0xFFFF && --cs_filter[slot] == 0)
      cs_filter_bits[slot >> 3] &= (UChar)~(1 << (slot & 7));
}

/* The running thread's next sampled position as a position of the whole count (NEVER if
   none); cs_sample.c's cs_next_any is the nearer of it and the whole stream's. */
extern ULong cs_thread_at;
/* Call after changing either next position. */
void cs_sample_next_changed(void);
/* The references counted so far (cs_sample.c). */
ULong cs_sample_position(void);

Bool cs_sample_threads_option(const HChar* arg);
/* True with --cs-sample-threads-from=PATH. */
Bool cs_sample_threads(void);
/* Opens the pipe of the threads' positions. */
void cs_sample_threads_start(void);
/* The stream's thread `serial` (cs_main.c's numbering) runs from now on. */
void cs_sample_thread(UInt serial);
/* The running thread's data reference at the count `pos` touches `line`. */
void cs_sample_thread_hit(UWord line, ULong pos);
/* Appends each thread's count (before an exec record and the end record). */
void cs_sample_threads_count(void);
void cs_sample_threads_forked_child(void);

#endif
