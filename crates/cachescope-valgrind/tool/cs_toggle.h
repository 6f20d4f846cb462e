/* --cs-toggle-collect=FUNCTION (Callgrind's --toggle-collect): record only while a function
 * whose name matches is on the running thread's stack (cs_toggle.c).
 * Copyright (C) 2026 the cachescope authors. SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef CS_TOGGLE_H
#define CS_TOGGLE_H

#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"

/* All ones while the running thread records, 0 otherwise: the generated code ANDs it into
   each segment's advance of the buffer pointer, so records written outside are overwritten.
   Read by the generated code. */
extern ULong cs_gate;

Bool cs_toggle_option(const HChar* arg);
/* Whether --cs-toggle-collect was given (then every block is instrumented, gated). */
Bool cs_toggle_enabled(void);
/* After the options. Chasing is off (cs_main.c), so every function entry starts a block. */
void cs_toggle_post_clo_init(void);
/* The region of interest (CACHESCOPE_START/STOP) is on or off: part of the gate. */
void cs_toggle_set_roi(Bool on);
/* The scheduler runs thread tid: its own state becomes the current one. */
void cs_toggle_thread(ThreadId tid);
/* Adds, at the start of sbOut, the checks that leave and enter the functions. */
void cs_toggle_instrument(IRSB* sbOut, const VexGuestLayout* layout, Addr block);

#endif
