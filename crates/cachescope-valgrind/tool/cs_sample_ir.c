/* The generated code of the reuse samplers (cs_sample.c, cs_sample_threads.c): per counted
 * reference its position, its line into the windows' ring and its tests, and one guarded
 * call per group of up to GROUP references of a segment.
 *
 * Copyright (C) 2026 the cachescope authors. SPDX-License-Identifier: GPL-2.0-or-later
 *
 * A reference's position is the count at the start of its segment (the references before an
 * exit of the superblock), loaded once, plus its index there, a constant; the count is stored
 * once per segment (cs_sample_settle). Its tests: the position against cs_next_any, and the
 * bit of its line in the watches' map (cs_sample_threads.h). The tests of up to GROUP
 * consecutive references of a segment are OR'd into the guard of one call, which walks the
 * group's references in order and tests each again with the state the calls before left
 * (cs_sample_hit_at): a call per reference made VEX spill and reload the caller-saved
 * registers around each, taken or not (45 % of a live bzip2 run's samples in the generated
 * code). A group ends with its segment, before a guarded reference and where the kind of
 * reference changes (a data reference of the threads' sampler or not). The ring stores of a
 * group's later references come before its call counts an earlier one's window: the ring
 * keeps a slack of CS_WINDOWS_SLACK slots (cs_windows.h).
 */

#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_machine.h"

#include "cs_sample.h"
#include "cs_sample_threads.h"
#include "cs_windows.h"

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

/* Up to GROUP references of a segment share one guarded call (cs_spatial.c's grouping): a
   call per reference made the generated code spill its registers around each, taken or not. */
#define GROUP 5

/* The group being gathered: its references' addresses, the position of its first, the
   cs_next_any its tests read (loaded once: no call of the group runs before them), whether
   its references are data references of the threads' sampler, and whether any test holds. */
static IRExpr* grp_addr[GROUP];
static Int grp_n = 0;
static IRExpr* grp_p = NULL;
static IRExpr* grp_next = NULL;
static Bool grp_data = False;
static IRExpr* grp_any = NULL;

/* The group's references at positions p, p + 1, ... in order, each tested again with the
   state the ones before left (its call may have watched a later one's line or moved `next`). */
static inline void group_hits(ULong p, const Addr* a, Int n, Bool data)
{
   for (Int k = 0; k < n; k++)
      cs_sample_hit_at(p + k, a[k], data);
}

/* One helper per group size and kind, so that neither is an argument (VEX passes six). */
#define HELPER(NAME, N, D)                                                                    \
   static void NAME(ULong p, Addr a0, Addr a1, Addr a2, Addr a3, Addr a4)                     \
   { group_hits(p, (Addr[GROUP]){ a0, a1, a2, a3, a4 }, N, D); }
HELPER(cs_sample_group1, 1, False) HELPER(cs_sample_group2, 2, False)
HELPER(cs_sample_group3, 3, False) HELPER(cs_sample_group4, 4, False)
HELPER(cs_sample_group5, 5, False) HELPER(cs_sample_group_data1, 1, True)
HELPER(cs_sample_group_data2, 2, True) HELPER(cs_sample_group_data3, 3, True)
HELPER(cs_sample_group_data4, 4, True) HELPER(cs_sample_group_data5, 5, True)
static void* const helpers[2][GROUP] = {
   { cs_sample_group1, cs_sample_group2, cs_sample_group3, cs_sample_group4, cs_sample_group5 },
   { cs_sample_group_data1, cs_sample_group_data2, cs_sample_group_data3,
     cs_sample_group_data4, cs_sample_group_data5 },
};

/* The call of the group gathered so far (if any), taken when any of its tests holds. */
static void call_group(IRSB* sb)
{
   if (grp_n == 0)
      return;
   for (Int k = grp_n; k < GROUP; k++)
      grp_addr[k] = u64(0);
   IRDirty* di = unsafeIRDirty_0_N(0, "cs_sample_group",
                                   VG_(fnptr_to_fnentry)(helpers[grp_data][grp_n - 1]),
                                   mkIRExprVec_6(grp_p, grp_addr[0], grp_addr[1], grp_addr[2],
                                                 grp_addr[3], grp_addr[4]));
   di->guard = grp_any;
   addStmtToIRSB(sb, IRStmt_Dirty(di));
   grp_n = 0;
}

void cs_sample_emit(IRSB* sb, IRExpr* addr, Bool data)
{
   Bool threads = data && cs_sample_threads();
   if (seg_pos == NULL) {
      seg_pos = tmp(sb, Ity_I64,
                    IRExpr_Load(Iend_LE, Ity_I64, mkIRExpr_HWord((HWord)&cs_sample_pos)));
      seg_n = 0;
   }
   if (grp_n > 0 && grp_data != threads)
      call_group(sb); /* a group's references are all of one kind */
   /* Its position: the segment's start plus a constant, no load or store of `pos`. */
   IRExpr* p1 = tmp(sb, Ity_I64, IRExpr_Binop(Iop_Add64, seg_pos, u64(++seg_n)));
   if (grp_n == 0) {
      /* Loaded per group: the call before may have moved it. */
      grp_next = tmp(sb, Ity_I64,
                     IRExpr_Load(Iend_LE, Ity_I64, mkIRExpr_HWord((HWord)&cs_next_any)));
      grp_p = p1;
      grp_data = threads;
   }
   IRExpr* sampled = tmp(sb, Ity_I1, IRExpr_Binop(Iop_CmpEQ64, p1, grp_next));
   IRExpr* line = tmp(sb, Ity_I64, IRExpr_Binop(Iop_Shr64, addr, u8(cs_sample_line_shift())));
   if (cs_windows_ring != NULL) {
      /* The windows' ring: the line at slot p1 mod 2^16 (cs_windows.c; stored before the
         group's call counts an earlier reference's window: the ring's slack). */
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
   grp_any = grp_n == 0 ? call : tmp(sb, Ity_I1, IRExpr_Binop(Iop_Or1, grp_any, call));
   grp_addr[grp_n++] = addr;
   if (grp_n == GROUP)
      call_group(sb);
}

void cs_sample_settle(IRSB* sb)
{
   if (seg_pos == NULL)
      return;
   call_group(sb);
   addStmtToIRSB(sb, IRStmt_Store(Iend_LE, mkIRExpr_HWord((HWord)&cs_sample_pos),
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
