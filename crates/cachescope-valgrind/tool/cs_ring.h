/* The shared-memory ring of cachescope's Valgrind tool (cs_ring.c).
 * Copyright (C) 2026 the cachescope authors. SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef CS_RING_H
#define CS_RING_H

#include "pub_tool_basics.h"

Bool cs_ring_option(const HChar* arg);
/* True with --cs-ring=PATH: buffers go through the ring, only their tokens through the pipe. */
Bool cs_ring_requested(void);
/* Maps the ring, whose slots must hold `words`, and returns the first slot to fill once it
   is free; NULL (with a message) if it cannot. */
ULong* cs_ring_open(Long parent, SizeT words);
/* Hands the slot being filled, holding `n` words, to the reader by writing its token into
   `out_fd`; with `more`, returns the next slot once it is free. NULL when the reader has gone
   (or without `more`). */
ULong* cs_ring_put(Int out_fd, SizeT n, Bool more);

/* After a pause (cs_fork.c): the next slot to fill once it is free, the ring having moved on
   meanwhile; NULL when the reader has gone. */
ULong* cs_ring_resume(void);
/* The process whose change of parent means the reader has gone (a forked child that took the
   stream watches its own parent). */
void cs_ring_watch_parent(Long parent);
/* The hash limit cachescope last published for the spatial sampler (cs_spatial.c): all ones
   until it publishes one. */
ULong cs_ring_limit(void);

#endif
