/* The per-thread reuse sampler of cachescope's Valgrind tool (cs_sample_threads.c).
 * Copyright (C) 2026 the cachescope authors. SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef CS_SAMPLE_THREADS_H
#define CS_SAMPLE_THREADS_H

#include "pub_tool_basics.h"

#define FILTER_BITS 20
#define NEVER (~0ULL)

/* The watch counters both samplers share (cs_sample.c), by slot_of(line). */
extern UShort cs_filter[1 << FILTER_BITS];

static inline UInt slot_of(ULong line)
{
   return (UInt)((line * 0x9E3779B97F4A7C15ULL) >> (64 - FILTER_BITS));
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
