/* Call and return events (--cs-calls=yes): a shadow stack per thread, keyed by the stack
 * pointer as Callgrind keys its own, written into the record stream as CS_TAG_ENTER and
 * CS_TAG_LEAVE escapes (cs_protocol.h). The instrumentation is in cs_calls.c.
 * Copyright (C) 2026 the cachescope authors. SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef CS_CALLS_H
#define CS_CALLS_H

#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"

Bool cs_calls_option(const HChar* arg);
/* Whether --cs-calls=yes was given (and not the reuse sampler alone: then nothing is
   written). */
Bool cs_calls_enabled(void);
/* After the options. Chasing is off (cs_main.c), so every call ends a block and every
   function entry starts one. */
void cs_calls_post_clo_init(void);
/* A new thread in slot `child` (perhaps an exited thread's): an empty stack. */
void cs_calls_thread_created(ThreadId child);
/* The running thread is `tid` (after its CS_TAG_THREAD escape): its stack becomes the
   current one; a thread that has none yet gets its root frame (its instruction pointer). */
void cs_calls_thread(ThreadId tid);
/* Recording restarts (CACHESCOPE_START after a stop): every stack is forgotten. */
void cs_calls_reset(void);
void cs_calls_pre_signal(ThreadId tid, Int sig);
void cs_calls_post_signal(ThreadId tid, Int sig);
/* Spatial sampling: at the end of a segment whose last instruction is at `pc`, stores it as
   the running thread's last fetch (the site written after each call event). */
void cs_calls_note_pc(IRSB* sbOut, Addr pc);
/* At the start of a superblock at guest address `block`. */
void cs_calls_instrument_start(IRSB* sbOut, const VexGuestLayout* layout, Addr block);
/* At the end of the superblock at `block`, after its last references are stored. */
void cs_calls_instrument_end(IRSB* sbOut, const VexGuestLayout* layout, Addr block,
                             IRExpr* next, IRJumpKind jk);

#endif
