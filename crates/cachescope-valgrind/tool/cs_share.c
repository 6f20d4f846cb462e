/* The lines two threads write, found in the spatial sampler's filter and promoted past it
 * (docs/sampled.md, "sharing"): from the write that finds it on, every reference to such a
 * line is written, marked CS_SHARE_PROMOTED, so that a live run's sharing table holds the
 * falsely shared lines the hash's sample misses; cachescope keeps them out of the sampled
 * curves.
 *
 * Copyright (C) 2026 the cachescope authors. SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The table: 2^SLOTS_LOG2 slots (direct-mapped by the low bits of the line's sampling hash),
 * each the line with its last writer (key: line << 16 | the writer's serial's low 16 bits)
 * the bytes that writer wrote (a bit per byte of a 64-byte line) and the instruction of its
 * first write there: 25 bytes a slot, 1.6 MiB with 2^16 slots, whatever the program's footprint. A line written where another line sits
 * takes the slot (the other's last writer is lost: counted as evicted). A write by another
 * thread than the slot's promotes the line, and a note record gives the writer before and its
 * bytes, so the line's kind (true or false sharing) is known even if that writer never
 * touches it again. At most MAX_PROMOTED lines are promoted (half of them at most for lines
 * whose two writers' bytes overlap, as sharing/detect.rs); past the cap second writers are
 * counted once per line while its slot holds it, and the line is not followed.
 *
 * Cost: nothing while one thread has run. When the second thread is created every translation
 * is discarded, and those made afterwards check inline, per write, that the slot holds the
 * line as the running thread's with the bytes written (else the group's call is taken), and
 * per data reference a byte of a bitmap of the promoted lines' hashes.
 */

#include "pub_tool_basics.h"
#include "pub_tool_hashtable.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_transtab.h"

#include "cs_events.h"
#include "cs_instrument.h"
#include "cs_protocol.h"
#include "cs_sample.h"
#include "cs_share.h"
#include "cs_spatial.h"

#define SLOTS_LOG2 16
#define SLOTS (1u << SLOTS_LOG2)
#define MARKS_LOG2 16
#define MAX_PROMOTED 4096

static Bool clo_promote = True; /* --cs-spatial-promote=no turns the detector off */

/* Read by the generated code. */
static ULong keys[SLOTS];
static ULong bytes[SLOTS];
static Addr pcs[SLOTS]; /* the instruction of the writer's first write there */
static UChar marks[1u << MARKS_LOG2];
static ULong me = 0; /* the running thread's serial, low 16 bits */

static UChar muted[SLOTS]; /* the slot's line was dropped at the cap: not counted again */
static Bool detecting = False;
static VgHashTable* promoted = NULL;
static ULong n_promoted = 0, n_overlapping = 0, evicted = 0, dropped = 0;

typedef struct _Line {
   struct _Line* next;
   UWord line;
} Line;

Bool cs_share_option(const HChar* arg)
{
   if VG_BOOL_CLO(arg, "--cs-spatial-promote", clo_promote) {}
   else
      return False;
   return True;
}

Bool cs_share_enabled(void)
{
   return cs_spatial() && clo_promote;
}

/* The core's: tools may discard translations only while it is set (in a client request).
   Set here around the one discard, made when the scheduler starts a thread's slice: no
   translation runs then (the core discards there itself, at an munmap). */
extern Bool VG_(ok_to_discard_translations);

static Bool start_pending = False;

void cs_share_thread_created(void)
{
   if (!detecting && cs_share_enabled())
      start_pending = True;
}

void cs_share_slice(void)
{
   if (!start_pending)
      return;
   start_pending = False;
   detecting = True;
   promoted = VG_(HT_construct)("cs.share.promoted");
   /* Translated again with the detector's checks (as CACHESCOPE_START does). */
   Bool was = VG_(ok_to_discard_translations);
   VG_(ok_to_discard_translations) = True;
   VG_(discard_translations_safely)((Addr)0x1000, ~(SizeT)0xfff, "cachescope");
   VG_(ok_to_discard_translations) = was;
}

void cs_share_running(UInt serial)
{
   me = serial & 0xFFFF;
}

static UInt slot_of_hash(ULong hash)
{
   return (UInt)(hash & (SLOTS - 1));
}

static UInt mark_of_hash(ULong hash)
{
   return (UInt)((hash >> 16) & ((1u << MARKS_LOG2) - 1));
}

/* The bytes of its line an access covers (crates/cachescope/src/sharing/line.rs's byte_mask). */
static ULong byte_mask(ULong addr, UInt size)
{
   ULong line_bytes = 1ULL << cs_sample_line_shift();
   ULong granule = line_bytes >= 64 ? line_bytes / 64 : 1;
   ULong offset = addr & (line_bytes - 1);
   ULong end = offset + (size > 0 ? size : 1);
   if (end > line_bytes)
      end = line_bytes;
   ULong lo = offset / granule, hi = (end - 1) / granule, width = hi - lo + 1;
   ULong ones = width >= 64 ? ~0ULL : (1ULL << width) - 1;
   return ones << lo;
}

static Bool is_promoted(ULong line, ULong hash)
{
   return marks[mark_of_hash(hash)] != 0 && VG_(HT_lookup)(promoted, line) != NULL;
}

/* A second writer of `line` (the slot `slot`): promotes it, room allowing. */
static void promote(ULong line, ULong hash, UInt slot, UInt before, ULong had, Addr pc,
                    ULong wrote)
{
   Bool overlap = (had & wrote) != 0;
   if (n_promoted >= MAX_PROMOTED || (overlap && n_overlapping >= MAX_PROMOTED / 2)) {
      if (!muted[slot])
         dropped++;
      muted[slot] = 1;
      return;
   }
   Line* l = VG_(malloc)("cs.share.line", sizeof *l);
   l->line = line;
   VG_(HT_add_node)(promoted, l);
   marks[mark_of_hash(hash)] = 1;
   n_promoted++;
   n_overlapping += overlap;
   cs_append(CS_ESCAPE(CS_TAG_SAMPLE, before));
   cs_append(CS_SHARE_NOTE | ((line << cs_sample_line_shift()) & CS_ARG_MASK));
   cs_append(had);
   cs_append(pc);
}

Bool cs_share_reference(Int kind, ULong addr, UInt size, Addr pc, ULong line, ULong hash)
{
   if (!detecting)
      return False;
   if (is_promoted(line, hash))
      return True;
   if (kind == EV_LOAD)
      return False;
   UInt slot = slot_of_hash(hash);
   ULong key = (line << 16) | me, wrote = byte_mask(addr, size);
   if (keys[slot] == key) {
      bytes[slot] |= wrote;
      return False;
   }
   if (keys[slot] != 0 && keys[slot] >> 16 == line) {
      UInt before = (UInt)(keys[slot] & 0xFFFF);
      ULong had = bytes[slot];
      Addr had_pc = pcs[slot];
      keys[slot] = key;
      bytes[slot] = wrote;
      pcs[slot] = pc;
      promote(line, hash, slot, before, had, had_pc, wrote);
      return is_promoted(line, hash);
   }
   if (keys[slot] != 0)
      evicted++;
   keys[slot] = key;
   bytes[slot] = wrote;
   pcs[slot] = pc;
   muted[slot] = 0;
   return False;
}

void cs_share_fini(void)
{
   if (!cs_share_enabled())
      return;
   cs_append(CS_ESCAPE(CS_TAG_SAMPLE, dropped));
   cs_append(CS_SHARE_SUMMARY | (evicted & CS_ARG_MASK));
   cs_append(((ULong)SLOTS << 32) | MAX_PROMOTED);
}

/* IR helpers (as cs_spatial.c's). */
static IRExpr* tmp(IRSB* sb, IRType ty, IRExpr* e)
{
   IRTemp t = newIRTemp(sb->tyenv, ty);
   addStmtToIRSB(sb, IRStmt_WrTmp(t, e));
   return IRExpr_RdTmp(t);
}

static IRExpr* op(IRSB* sb, IROp o, IRExpr* a, IRExpr* b)
{
   return tmp(sb, Ity_I64, IRExpr_Binop(o, a, b));
}

static IRExpr* u64(ULong v)
{
   return IRExpr_Const(IRConst_U64(v));
}

static IRExpr* u8(UChar v)
{
   return IRExpr_Const(IRConst_U8(v));
}

/* The 64-bit word at `base` + 8 × `index`. */
static IRExpr* load_at(IRSB* sb, const ULong* base, IRExpr* index)
{
   IRExpr* at = op(sb, Iop_Add64, u64((ULong)(HWord)base), op(sb, Iop_Shl64, index, u8(3)));
   return tmp(sb, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, at));
}

IRExpr* cs_share_ir(IRSB* sb, Int kind, Int size, IRExpr* addr, IRExpr* line, IRExpr* hash)
{
   if (!detecting)
      return NULL;
   /* A promoted line's hash marked? */
   IRExpr* m = op(sb, Iop_And64, op(sb, Iop_Shr64, hash, u8(16)),
                  u64((1u << MARKS_LOG2) - 1));
   IRExpr* mark = tmp(sb, Ity_I8, IRExpr_Load(Iend_LE, Ity_I8,
                                               op(sb, Iop_Add64, u64((ULong)(HWord)marks), m)));
   IRExpr* wide = tmp(sb, Ity_I64, IRExpr_Unop(Iop_8Uto64, mark));
   IRExpr* call = tmp(sb, Ity_I1, IRExpr_Binop(Iop_CmpNE64, wide, u64(0)));
   if (kind == EV_LOAD)
      return call;
   /* A write: the slot must hold the line as the running thread's. */
   IRExpr* slot = op(sb, Iop_And64, hash, u64(SLOTS - 1));
   IRExpr* key = load_at(sb, keys, slot);
   IRExpr* who = tmp(sb, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, u64((ULong)(HWord)&me)));
   IRExpr* mine = op(sb, Iop_Or64, op(sb, Iop_Shl64, line, u8(16)), who);
   IRExpr* miss = tmp(sb, Ity_I1, IRExpr_Binop(Iop_CmpNE64, key, mine));
   call = tmp(sb, Ity_I1, IRExpr_Binop(Iop_Or1, call, miss));
   if (cs_sample_line_shift() == 6) {
      /* …with the bytes written (byte_mask's, for a 64-byte line). */
      ULong ones = size >= 64 ? ~0ULL : (1ULL << size) - 1;
      IRExpr* off = tmp(sb, Ity_I8, IRExpr_Unop(Iop_64to8, op(sb, Iop_And64, addr, u64(63))));
      IRExpr* wrote = op(sb, Iop_Shl64, u64(ones), off);
      IRExpr* had = load_at(sb, bytes, slot);
      IRExpr* lacking = op(sb, Iop_And64, tmp(sb, Ity_I64, IRExpr_Unop(Iop_Not64, had)), wrote);
      IRExpr* more = tmp(sb, Ity_I1, IRExpr_Binop(Iop_CmpNE64, lacking, u64(0)));
      call = tmp(sb, Ity_I1, IRExpr_Binop(Iop_Or1, call, more));
   }
   return call;
}
