/* Spatial sampling of cachescope's Valgrind tool (cs_spatial.c).
 * Copyright (C) 2026 the cachescope authors. SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef CS_SPATIAL_H
#define CS_SPATIAL_H

#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"

#include "cs_instrument.h"

/* True with --cs-spatial=yes: only the data references to sampled lines are written. */
Bool cs_spatial(void);
Bool cs_spatial_option(const HChar* arg);
/* Checks the options once they are all read; False (with a message) if they conflict. */
Bool cs_spatial_post_clo_init(void);
/* Writes the counts so far (a position record), if they changed since the last one: before
   an event, a thread switch, an exec and the end. */
void cs_spatial_position(void);
/* The limit cachescope published in the ring (cs_ring.c) when a buffer is handed over: the
   tool's own is lowered to it (never raised). */
void cs_spatial_lower(ULong published);
/* The inline IR of a segment's `n` events (in order, as cs_instrument.c gathers them): each
   data reference's line hash compared with the limit, a call writing the references that
   pass, and the counts of loads, stores, modifies and instructions advanced past the segment.
   `pc` is the last instruction's address, carried from one segment to the next. An event
   with a guard must be alone in its segment. */
void cs_spatial_segment(IRSB* sb, const Event* ev, Int n, Addr* pc);

#endif
