/* Sampled capture: StatCache's sampler (crates/cachescope/src/sampling/) inside the tool, so
 * that only the reuses of sampled references cross the pipe instead of every reference.
 *
 * Copyright (C) 2026 the cachescope authors. SPDX-License-Identifier: GPL-2.0-or-later
 *
 * cachescope draws the sampled positions (1-based counts of the references it counts) from
 * its seeded generator and writes them, in order, into the pipe --cs-sample-from names, each
 * with the first reuse position at which the sample is no longer kept (its thinning, which
 * cachescope knows: crates/cachescope/src/sampling/thinning.rs's `Drops`; NEVER: kept to the
 * end); the tool counts references as the trace would list them and, at each sampled
 * position, sets a watchpoint on the reference's line. The line's next reference fires it:
 * the tool writes a CS_TAG_REUSE record (the sample's position and the reuse's) if the sample
 * is still kept then, and nothing otherwise (cachescope would discard it). Once the count
 * passes the first such position of any watch, the watches no longer kept are dropped, so
 * they cost no calls. At an exec and at the end a
 * CS_TAG_COUNT record gives the references counted. cachescope knows the positions it drew,
 * so it rebuilds the same profile as sampling the full trace of the run with the same seed:
 * reuses from the records, the other samples dangling.
 *
 * Per reference the generated code tests its position against the next sampled one and a map
 * of 2^20 bits indexed by the line's low bits (a bit is set while a watch is on a line of its
 * slot: cs_sample_threads.h); only when either says so does it call cs_sample_hit, which looks
 * the line up exactly. The position is the count at the start of the reference's segment
 * (the references before an exit of the superblock), loaded once, plus its index there, a
 * constant; the count is stored once per segment (cs_sample_settle) and by the call, which
 * takes the position as an argument.
 *
 * With --cs-sample-windows=yes the generated code also stores each counted reference's line
 * into cs_windows.c's ring, and a watch that fires within it carries its window's distinct
 * lines (the sampled report's whole-stream sampler: as its stage measures them on a trace),
 * for the samples still kept only, in the order of their reuses (cs_windows.c's budget).
 *
 * With --cs-sample-threads-from=PATH a second sampler runs per thread (cs_sample_threads.c):
 * each thread's positions are its own data references, the same draws for every thread read
 * from that pipe. Its watches share the table of counters, and the generated code compares the
 * count with the nearer of the two samplers' next positions (cs_next_any; a thread's count is
 * the count less what the other threads made, so its next position is one of the count's), so
 * a reference costs nothing more; only the calls are more.
 */

#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_hashtable.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_vki.h"

#include "cs_protocol.h"
#include "cs_events.h"
#include "cs_instrument.h"
#include "cs_sample.h"
#include "cs_sample_threads.h"
#include "cs_windows.h"

static const HChar* clo_from = NULL; /* --cs-sample-from=PATH: the positions pipe */
static Long clo_line_shift = 6;      /* --cs-line-shift=N: log2 of the line size */
static Int clo_sample_instr = -1;    /* --cs-sample-instr: count instructions [as --cs-instr] */
static Bool clo_windows = False;     /* --cs-sample-windows: measure the reuse windows */

/* Counted references so far, and the position of the next one to sample: read and written
   by the generated code, so plain globals. */
static ULong pos = 0;
static ULong next = NEVER;
/* The nearer of `next` and the running thread's next sampled position: what the generated code
   compares the count with. */
static ULong cs_next_any = NEVER;
/* Watchpoints per slot (saturating: a full slot stays set, which only costs calls), both
   samplers' (cs_sample_threads.c's too), and the bits the generated code reads. */
UShort cs_filter[1 << FILTER_BITS];
UChar cs_filter_bits[1 << (FILTER_BITS - 3)];
#define filter cs_filter

typedef struct _Watch {
   struct _Watch* next;
   UWord line; /* the hash table's key */
   ULong at;   /* the sampled position */
   ULong until; /* the first position at which the sample is no longer kept */
} Watch;
static VgHashTable* watches = NULL;

static Int from_fd = -1;
/* Words read from the pipe: pairs of a position and its sample's `until`. */
static ULong positions[512];
static Int have = 0, used = 0;
/* `until` of the position `next`, and the least `until` of the watches (drop_thinned). */
static ULong next_until = NEVER;
static ULong sweep_at = NEVER;

Bool cs_sampling(void)
{
   return clo_from != NULL;
}

Bool cs_sample_option(const HChar* arg)
{
   if VG_STR_CLO(arg, "--cs-sample-from", clo_from) {}
   else if (cs_sample_threads_option(arg)) {}
   else if VG_BINT_CLO(arg, "--cs-line-shift", clo_line_shift, 0, 20) {}
   else if VG_XACT_CLO(arg, "--cs-sample-instr=yes", clo_sample_instr, 1) {}
   else if VG_XACT_CLO(arg, "--cs-sample-instr=no", clo_sample_instr, 0) {}
   else if VG_BOOL_CLO(arg, "--cs-sample-windows", clo_windows) {}
   else
      return False;
   return True;
}

/* The next sampled position from the pipe, and into `until` the first position at which its
   sample is no longer kept; NEVER (both) once the pipe is closed. */
static ULong read_position(ULong* until)
{
   if (used == have) {
      SizeT got = 0;
      /* Whole pairs only: a pipe may return part of one. */
      while (from_fd >= 0 && (got == 0 || got % (2 * sizeof(ULong)) != 0)) {
         Int n = VG_(read)(from_fd, (HChar*)positions + got, sizeof positions - got);
         if (n <= 0)
            break;
         got += n;
      }
      have = got / (2 * sizeof(ULong)) * 2;
      used = 0;
      if (have == 0) {
         *until = NEVER;
         return NEVER;
      }
   }
   *until = positions[used + 1];
   used += 2;
   return positions[used - 2];
}

Int cs_sample_line_shift(void)
{
   return (Int)clo_line_shift;
}

Bool cs_sample_instr(void)
{
   return clo_sample_instr < 0 ? cs_instr_records() : clo_sample_instr == 1;
}

void cs_sample_start(void)
{
   from_fd = VG_(fd_open)(clo_from, VKI_O_RDONLY, 0);
   if (from_fd < 0) {
      VG_(umsg)("cachescope: cannot open --cs-sample-from=%s\n", clo_from);
      VG_(exit)(1);
   }
   if (cs_sample_threads() && cs_sample_instr()) {
      /* A thread's count is the whole count less the others': data references only. */
      VG_(umsg)("cachescope: --cs-sample-threads-from needs --cs-sample-instr=no\n");
      VG_(exit)(1);
   }
   watches = VG_(HT_construct)("cachescope.watches");
   if (clo_windows)
      cs_windows_start();
   next = read_position(&next_until);
   cs_sample_threads_start();
   cs_sample_next_changed();
}

void cs_sample_next_changed(void)
{
   cs_next_any = next < cs_thread_at ? next : cs_thread_at;
}

ULong cs_sample_position(void)
{
   return pos;
}

void cs_sample_count(void)
{
   cs_append(CS_ESCAPE(CS_TAG_COUNT, 0));
   cs_append(pos);
   cs_sample_threads_count();
}

void cs_sample_forked_child(void)
{
   /* A forked child must not take positions meant for the parent. */
   if (from_fd >= 0)
      VG_(close)(from_fd);
   from_fd = -1;
   next = NEVER;
   next_until = NEVER;
   cs_sample_threads_forked_child();
   cs_sample_next_changed();
}

/* Drops the watches whose samples are no longer kept at `pos` (their records would be
   discarded), so that their lines cost no more calls: at most once per rise of the thinning's
   level (tens in a run), each a pass over the watches. */
static __attribute__((noinline)) void drop_thinned(void)
{
   UInt n;
   sweep_at = NEVER;
   if (VG_(HT_count_nodes)(watches) == 0)
      return;
   VgHashNode** all = VG_(HT_to_array)(watches, &n);
   for (UInt k = 0; k < n; k++) {
      Watch* w = (Watch*)all[k];
      if (w->until > pos) {
         sweep_at = w->until < sweep_at ? w->until : sweep_at;
         continue;
      }
      UInt slot = slot_of(w->line);
      VG_(HT_remove)(watches, w->line);
      VG_(free)(w);
      cs_filter_remove(slot);
   }
   VG_(free)(all);
}

/* The reference at `pos` touches `addr`: fire the watchpoint on its line, if any, then
   sample it if its position was drawn (the order of cachescope's Sampler). */
static VG_REGPARM(1) void cs_sample_hit(Addr addr)
{
   UWord line = addr >> clo_line_shift;
   UInt slot = slot_of(line);
   if (pos >= sweep_at)
      drop_thinned();
   if (filter[slot] != 0) {
      Watch* w = VG_(HT_remove)(watches, line);
      if (w != NULL) {
         /* Only a sample still kept: its record, and its window (windows.rs's budget
            spent in the order cachescope spends it). */
         if (pos < w->until) {
            Long d = cs_windows_between(w->at, pos);
            cs_append(CS_ESCAPE(CS_TAG_REUSE, d < 0 ? 0 : CS_REUSE_MEASURED | (ULong)d));
            cs_append(w->at);
            cs_append(pos);
         }
         VG_(free)(w);
         cs_filter_remove(slot);
      }
   }
   if (pos == next) {
      Watch* w = VG_(malloc)("cachescope.watch", sizeof *w);
      w->line = line;
      w->at = pos;
      w->until = next_until;
      sweep_at = next_until < sweep_at ? next_until : sweep_at;
      VG_(HT_add_node)(watches, w);
      cs_filter_add(slot);
      ULong p = read_position(&next_until);
      /* Positions increase; anything else means the pipe is not cachescope's. */
      tl_assert(p > pos);
      next = p;
      cs_sample_next_changed();
   }
}

/* A data reference: the reuse sampler's, then the running thread's. */
static VG_REGPARM(1) void cs_sample_hit_data(Addr addr)
{
   cs_sample_hit(addr);
   cs_sample_thread_hit(addr >> clo_line_shift, pos);
}

/* A guarded reference: counted, and tested, only when its guard holds. */
static VG_REGPARM(1) void cs_sample_guarded(Addr addr)
{
   pos++;
   if (cs_windows_ring != NULL)
      cs_windows_ring[pos & ((1 << CS_WINDOWS_BITS) - 1)] = addr >> clo_line_shift;
   if (pos == cs_next_any || filter[slot_of(addr >> clo_line_shift)] != 0) {
      if (cs_sample_threads())
         cs_sample_hit_data(addr);
      else
         cs_sample_hit(addr);
   }
}

static IRExpr* tmp(IRSB* sb, IRType ty, IRExpr* e)
{
   IRTemp t = newIRTemp(sb->tyenv, ty);
   addStmtToIRSB(sb, IRStmt_WrTmp(t, e));
   return IRExpr_RdTmp(t);
}

static IRExpr* u64(ULong v)
{
   return IRExpr_Const(IRConst_U64(v));
}

static IRExpr* u32(UInt v)
{
   return IRExpr_Const(IRConst_U32(v));
}

static IRExpr* u8(UChar v)
{
   return IRExpr_Const(IRConst_U8(v));
}

/* The references of the running segment (cs_sample_emit to cs_sample_settle): the count at its
   start, loaded once (NULL: none yet), and how many it has counted. */
static IRExpr* seg_pos = NULL;
static Int seg_n = 0;

/* The reference at position `p` (not yet stored in `pos`, which the calls read). */
static VG_REGPARM(2) void cs_sample_at(Addr addr, ULong p)
{
   pos = p;
   cs_sample_hit(addr);
}

static VG_REGPARM(2) void cs_sample_at_data(Addr addr, ULong p)
{
   pos = p;
   cs_sample_hit_data(addr);
}

void cs_sample_emit(IRSB* sb, IRExpr* addr, Bool data)
{
   Bool threads = data && cs_sample_threads();
   if (seg_pos == NULL) {
      seg_pos = tmp(sb, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, mkIRExpr_HWord((HWord)&pos)));
      seg_n = 0;
   }
   /* Its position: the segment's start plus a constant, no load or store of `pos`. */
   IRExpr* p1 = tmp(sb, Ity_I64, IRExpr_Binop(Iop_Add64, seg_pos, u64(++seg_n)));
   /* Loaded each time: a call before may have moved it. */
   IRExpr* n = tmp(sb, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, mkIRExpr_HWord((HWord)&cs_next_any)));
   IRExpr* sampled = tmp(sb, Ity_I1, IRExpr_Binop(Iop_CmpEQ64, p1, n));
   IRExpr* line = tmp(sb, Ity_I64, IRExpr_Binop(Iop_Shr64, addr, u8(clo_line_shift)));
   if (cs_windows_ring != NULL) {
      /* The windows' ring: the line at slot p1 mod 2^16 (cs_windows.c). */
      IRExpr* r = tmp(sb, Ity_I64, IRExpr_Binop(Iop_And64, p1, u64((1 << CS_WINDOWS_BITS) - 1)));
      IRExpr* ro = tmp(sb, Ity_I64, IRExpr_Binop(Iop_Shl64, r, u8(3)));
      IRExpr* ra = tmp(sb, Ity_I64, IRExpr_Binop(Iop_Add64, ro, u64((HWord)cs_windows_ring)));
      addStmtToIRSB(sb, IRStmt_Store(Iend_LE, ra, line));
   }
   /* The bit of slot_of(line) (cs_sample_threads.h): byte line/8 mod 2^(FILTER_BITS-3), bit
      line mod 8. */
   IRExpr* l8 = tmp(sb, Ity_I64, IRExpr_Binop(Iop_Shr64, line, u8(3)));
   IRExpr* byte = tmp(sb, Ity_I64, IRExpr_Binop(Iop_And64, l8, u64((1 << (FILTER_BITS - 3)) - 1)));
   IRExpr* at = tmp(sb, Ity_I64, IRExpr_Binop(Iop_Add64, byte, u64((HWord)cs_filter_bits)));
   IRExpr* bits = tmp(sb, Ity_I8, IRExpr_Load(Iend_LE, Ity_I8, at));
   IRExpr* wide = tmp(sb, Ity_I32, IRExpr_Unop(Iop_8Uto32, bits));
   IRExpr* low = tmp(sb, Ity_I64, IRExpr_Binop(Iop_And64, line, u64(7)));
   IRExpr* shift = tmp(sb, Ity_I8, IRExpr_Unop(Iop_64to8, low));
   IRExpr* moved = tmp(sb, Ity_I32, IRExpr_Binop(Iop_Shr32, wide, shift));
   IRExpr* bit = tmp(sb, Ity_I32, IRExpr_Binop(Iop_And32, moved, u32(1)));
   IRExpr* watched = tmp(sb, Ity_I1, IRExpr_Binop(Iop_CmpNE32, bit, u32(0)));
   IRExpr* call = tmp(sb, Ity_I1, IRExpr_Binop(Iop_Or1, sampled, watched));
   IRDirty* di = threads
      ? unsafeIRDirty_0_N(2, "cs_sample_at_data", VG_(fnptr_to_fnentry)(&cs_sample_at_data),
                          mkIRExprVec_2(addr, p1))
      : unsafeIRDirty_0_N(2, "cs_sample_at", VG_(fnptr_to_fnentry)(&cs_sample_at),
                          mkIRExprVec_2(addr, p1));
   di->guard = call;
   addStmtToIRSB(sb, IRStmt_Dirty(di));
}

void cs_sample_settle(IRSB* sb)
{
   if (seg_pos == NULL)
      return;
   addStmtToIRSB(sb, IRStmt_Store(Iend_LE, mkIRExpr_HWord((HWord)&pos),
                                  tmp(sb, Ity_I64, IRExpr_Binop(Iop_Add64, seg_pos, u64(seg_n)))));
   seg_pos = NULL;
}

void cs_sample_emit_guarded(IRSB* sb, IRExpr* addr, IRExpr* guard)
{
   cs_sample_settle(sb); /* it counts from `pos` */
   IRDirty* di = unsafeIRDirty_0_N(1, "cs_sample_guarded",
                                   VG_(fnptr_to_fnentry)(&cs_sample_guarded),
                                   mkIRExprVec_1(addr));
   di->guard = guard;
   addStmtToIRSB(sb, IRStmt_Dirty(di));
}
