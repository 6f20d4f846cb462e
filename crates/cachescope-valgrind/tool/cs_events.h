/* Allocation and memory-map events of cachescope's Valgrind tool (cs_events.c).
 * Copyright (C) 2026 the cachescope authors. SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef CS_EVENTS_H
#define CS_EVENTS_H

#include "pub_tool_basics.h"

/* The output buffer (cs_main.c): events go into the same stream as the references, so each
   sits at its exact position. */
void cs_append(ULong word);
void cs_append_bytes(const void* data, SizeT len);

void cs_events_pre_clo_init(void);
Bool cs_events_option(const HChar* arg);
void cs_events_start(void);
void cs_events_first_run(void);
void cs_events_fini(void);
void cs_events_forked_child(void);
void cs_events_post_syscall(ThreadId tid, UInt sysno, UWord* args, SysRes res);
/* True for an instruction of the tool's own preload library (the allocator wrappers):
   not recorded, so the trace holds the program's references only. */
Bool cs_events_is_own_code(Addr a);

#endif
