/* Reuse windows measured in cachescope's Valgrind tool (cs_windows.c).
 * Copyright (C) 2026 the cachescope authors. SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef CS_WINDOWS_H
#define CS_WINDOWS_H

#include "pub_tool_basics.h"

/* log2 of the references the ring covers: crates/cachescope/src/sampling/windows.rs's RING. */
#define CS_WINDOWS_BITS 16

/* The ring: cs_windows_ring[p & (2^CS_WINDOWS_BITS - 1)] is the line of the reference at
   position p, stored by the generated code (cs_sample.c). NULL until cs_windows_start. */
extern ULong* cs_windows_ring;

/* Allocates the ring and the counting table (--cs-sample-windows=yes). */
void cs_windows_start(void);
/* The distinct lines of the references strictly between positions j and i (i's own line
   need not be in the ring yet); -1 if the window is longer than the ring, the counts have
   read their budget, or there is no ring. */
Long cs_windows_between(ULong j, ULong i);

#endif
