/* Sampled capture of cachescope's Valgrind tool (cs_sample.c).
 * Copyright (C) 2026 the cachescope authors. SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef CS_SAMPLE_H
#define CS_SAMPLE_H

#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"

/* True with --cs-sample-from=PATH: references are counted and sampled, not written. */
Bool cs_sampling(void);
Bool cs_sample_option(const HChar* arg);
/* log2 of the line size (--cs-line-shift), for the spatial sampler too. */
Int cs_sample_line_shift(void);
/* Whether instructions are counted and sampled (--cs-sample-instr, by default --cs-instr). */
Bool cs_sample_instr(void);
/* Opens the positions pipe and reads the first sampled position. */
void cs_sample_start(void);
/* Appends the count of references so far (before an exec record and the end record). */
void cs_sample_count(void);
void cs_sample_forked_child(void);
/* One counted reference at `addr` (a data reference if `data`: the per-thread sampler counts
   it too): inline IR, with a call only when it is sampled or may touch a watched line. Its
   position is the segment's first plus a constant: the count is stored by cs_sample_settle. */
void cs_sample_emit(IRSB* sb, IRExpr* addr, Bool data);
/* Ends the segment of references: stores the count. Before every exit of a superblock, at its
   end and before a guarded reference. */
void cs_sample_settle(IRSB* sb);
/* The same, for a data reference made only when `guard` holds. */
void cs_sample_emit_guarded(IRSB* sb, IRExpr* addr, IRExpr* guard);

#endif
