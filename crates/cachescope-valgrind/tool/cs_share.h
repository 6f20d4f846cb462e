/* The lines two threads write, promoted past the spatial sampler's filter (cs_share.c).
 * Copyright (C) 2026 the cachescope authors. SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef CS_SHARE_H
#define CS_SHARE_H

#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"

/* A sample record's reference word with this bit: a reference to a promoted line, not in
   the hash's sample (its counts advance the position as a sample's do). */
#define CS_SHARE_PROMOTED (1ULL << 60)
/* With this bit: a line promoted (the word's address is the line's first byte); the tag's
   argument is the thread that wrote it before; two words follow (not one): the bytes it wrote
   (a bit per byte of a 64-byte line, per line/64 bytes of a longer one) and the instruction
   of its first write there. No counts. */
#define CS_SHARE_NOTE (1ULL << 61)
/* With this bit: the detector's summary at the end; the word's argument bits are the lines
   its table lost, the tag's argument the second writers past the cap, the next word the
   table's lines << 32 | the cap. */
#define CS_SHARE_SUMMARY (1ULL << 62)

Bool cs_share_option(const HChar* arg);
/* True with --cs-spatial=yes unless --cs-spatial-promote=no: the header's bit 20. */
Bool cs_share_enabled(void);
/* A thread was created: from the second thread on, every translation detects (the ones
   made before are discarded once, at the next cs_share_slice). */
void cs_share_thread_created(void);
/* The scheduler starts a thread's slice. */
void cs_share_slice(void);
/* The stream's thread `serial` runs from now on. */
void cs_share_running(UInt serial);
/* The inline IR of one data reference of kind `kind` and `size` bytes at `addr`, its line
   `line` and hash `hash` (cs_spatial.c's): an Ity_I1 that holds when the group's call must
   be made for the detector (a promoted line, or a write the table does not hold as the
   running thread's), or NULL while no second thread has run. */
IRExpr* cs_share_ir(IRSB* sb, Int kind, Int size, IRExpr* addr, IRExpr* line, IRExpr* hash);
/* In the group's call, for each data reference once a second thread has run: a write is
   given to the table, which may promote its line (a note record); True if the line is
   promoted (a reference to a line outside the sample is then written with
   CS_SHARE_PROMOTED). */
Bool cs_share_reference(Int kind, ULong addr, UInt size, Addr pc, ULong line, ULong hash);
/* Appends the summary record (before the end record). */
void cs_share_fini(void);

#endif
