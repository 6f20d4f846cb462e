/* Spatial sampling (SHARDS, Waldspurger et al., FAST'15) inside cachescope's Valgrind tool:
 * only the references to sampled lines are written, with where each sits in the full stream.
 *
 * Copyright (C) 2026 the cachescope authors. SPDX-License-Identifier: GPL-2.0-or-later
 *
 * A line is sampled when the hash of its number (address >> --cs-line-shift) is below the
 * threshold: the same lines for every thread, so what happens on a sampled line is complete.
 * The hash is the one docs/sampled.md specifies (cs_line_hash below, and the same operations
 * as inline IR). Per data reference the generated code computes the hash and compares it with
 * the threshold, held in a global, and calls cs_spatial_hit only when it is below; per
 * segment (cs_instrument.c: the references stored together before an exit of a superblock)
 * it adds the segment's data references and instructions to two counters. So the count
 * costs a few instructions per segment, not per reference, and a hit knows its position as
 * the counters plus its index in the segment (a constant of the translation).
 *
 * The fixed-size variant: cachescope lowers its threshold as distinct sampled lines grow and
 * publishes it in the ring's header; cs_ring.c reads it at each buffer handed over and
 * cs_spatial_lower lowers the tool's (never raises it). The tool then writes a superset of
 * what cachescope keeps, at most a few buffers more, and cachescope filters exactly.
 *
 * Records (cs_protocol.h): CS_TAG_SAMPLE (the pc) then the reference word and its distance
 * from the previous sample in data references and instructions; CS_TAG_POSITION with the
 * counts themselves before each event, exec and the end, and where a distance would not fit.
 */

#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_hashtable.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"

#include "cs_events.h"
#include "cs_protocol.h"
#include "cs_sample.h"
#include "cs_spatial.h"
#include "cs_toggle.h"

static Bool clo_spatial = False;        /* --cs-spatial=yes */
static Bool clo_instr = False;          /* --cs-spatial-instr=yes: instruction fetches too */
static const HChar* clo_threshold = NULL; /* --cs-spatial-threshold=T (decimal or 0x hex) */

/* Read by the generated code, so plain globals: the threshold, and the data references and
   instructions counted up to the start of the running segment. */
ULong cs_threshold = ~0ULL;
ULong cs_drefs = 0;
ULong cs_instrs = 0;
/* The counts at the last record written: samples carry their distance from it. */
static ULong last_d = 0, last_i = 0;

Bool cs_spatial(void)
{
   return clo_spatial;
}

Bool cs_spatial_option(const HChar* arg)
{
   if VG_BOOL_CLO(arg, "--cs-spatial", clo_spatial) {}
   else if VG_BOOL_CLO(arg, "--cs-spatial-instr", clo_instr) {}
   else if VG_STR_CLO(arg, "--cs-spatial-threshold", clo_threshold) {}
   else
      return False;
   return True;
}

Bool cs_spatial_post_clo_init(void)
{
   if (!clo_spatial)
      return True;
   if (cs_toggle_enabled()) {
      VG_(umsg)("cachescope: --cs-spatial=yes cannot be combined with --cs-toggle-collect\n");
      return False;
   }
   if (clo_threshold != NULL) {
      HChar* end;
      cs_threshold = VG_(strncmp)(clo_threshold, "0x", 2) == 0
                        ? VG_(strtoull16)(clo_threshold + 2, &end)
                        : VG_(strtoull10)(clo_threshold, &end);
      if (*end != '\0' || end == clo_threshold) {
         VG_(umsg)("cachescope: bad --cs-spatial-threshold=%s\n", clo_threshold);
         return False;
      }
   }
   return True;
}

/* The hash of a line number (docs/sampled.md): must equal the IR of hash_ir. */
static ULong cs_line_hash(ULong line)
{
   ULong h = line;
   h ^= h >> 33;
   h *= 0xFF51AFD7ED558CCDULL;
   h ^= h >> 33;
   h *= 0xC4CEB9FE1A85EC53ULL;
   h ^= h >> 33;
   return h;
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

static IRExpr* xor_shift(IRSB* sb, IRExpr* h, UChar k)
{
   IRExpr* s = tmp(sb, Ity_I64, IRExpr_Binop(Iop_Shr64, h, IRExpr_Const(IRConst_U8(k))));
   return tmp(sb, Ity_I64, IRExpr_Binop(Iop_Xor64, h, s));
}

/* cs_line_hash of the line of `addr`, as IR. */
static IRExpr* hash_ir(IRSB* sb, IRExpr* addr)
{
   IRExpr* h = tmp(sb, Ity_I64, IRExpr_Binop(Iop_Shr64, addr,
                                             IRExpr_Const(IRConst_U8(cs_sample_line_shift()))));
   h = xor_shift(sb, h, 33);
   h = tmp(sb, Ity_I64, IRExpr_Binop(Iop_Mul64, h, u64(0xFF51AFD7ED558CCDULL)));
   h = xor_shift(sb, h, 33);
   h = tmp(sb, Ity_I64, IRExpr_Binop(Iop_Mul64, h, u64(0xC4CEB9FE1A85EC53ULL)));
   return xor_shift(sb, h, 33);
}

static void cs_spatial_position_at(ULong d, ULong i)
{
   cs_append(CS_ESCAPE(CS_TAG_POSITION, 0));
   cs_append(d);
   cs_append(i);
   last_d = d;
   last_i = i;
}

void cs_spatial_position(void)
{
   /* The reader knows the counts at the last record: only a change needs writing. */
   if (cs_drefs != last_d || cs_instrs != last_i)
      cs_spatial_position_at(cs_drefs, cs_instrs);
}

void cs_spatial_lower(ULong published)
{
   if (published < cs_threshold)
      cs_threshold = published;
}

/* Up to GROUP references of a segment share one call, taken when any of them is sampled:
   a call per reference made every reference spill registers around it. */
#define GROUP 5

/* What the translation knows of a group's references; the addresses come as arguments.
   Interned (a hash table node: next and key first), so that translating a block again (the
   code cache full, CACHESCOPE_START/STOP) finds the group made the first time. */
typedef struct _Group {
   struct _Group* next;
   UWord key; /* a hash of the rest */
   Int n;
   struct {
      ULong bits; /* the record's size and kind */
      Addr pc;
      UInt d, i;  /* index in the segment among its data references, instructions */
   } ref[GROUP];
} Group;

static VgHashTable* groups = NULL;

static Word group_cmp(const void* a, const void* b)
{
   return VG_(memcmp)((const UChar*)a + 2 * sizeof(UWord), (const UChar*)b + 2 * sizeof(UWord),
                      sizeof(Group) - 2 * sizeof(UWord));
}

/* The group equal to `g` (zeroed, then filled), made once. */
static const Group* intern(Group* g)
{
   const ULong* w = (const ULong*)((const UChar*)g + 2 * sizeof(UWord));
   ULong h = 0;
   for (SizeT k = 0; k < (sizeof(Group) - 2 * sizeof(UWord)) / 8; k++)
      h = cs_line_hash(h ^ w[k]);
   g->key = h;
   if (groups == NULL)
      groups = VG_(HT_construct)("cs.spatial.groups");
   Group* found = VG_(HT_gen_lookup)(groups, g, group_cmp);
   if (found != NULL)
      return found;
   Group* made = VG_(malloc)("cs.spatial.group", sizeof *made);
   VG_(memcpy)(made, g, sizeof *made);
   VG_(HT_add_node)(groups, made);
   return made;
}

/* Writes the reference `word` at segment index (d, i). */
static void sample(ULong word, Addr pc, UInt d_at, UInt i_at)
{
   ULong d = cs_drefs + d_at, i = cs_instrs + i_at;
   if (((d - last_d) | (i - last_i)) >> 32)
      cs_spatial_position_at(d, i);
   cs_append(CS_ESCAPE(CS_TAG_SAMPLE, pc));
   cs_append(word);
   cs_append(((d - last_d) << 32) | (i - last_i));
   last_d = d;
   last_i = i;
}

/* Called when some reference of the group is sampled: finds which. */
static void cs_spatial_group(const Group* g, ULong a0, ULong a1, ULong a2, ULong a3, ULong a4)
{
   ULong a[GROUP] = { a0, a1, a2, a3, a4 };
   for (Int k = 0; k < g->n; k++) {
      if (cs_line_hash(a[k] >> cs_sample_line_shift()) < cs_threshold)
         sample((a[k] & CS_ARG_MASK) | g->ref[k].bits, g->ref[k].pc, g->ref[k].d, g->ref[k].i);
   }
}

/* Adds `n` (or the guard, widened) to the counter at `counter`. */
static void count(IRSB* sb, ULong* counter, ULong n, IRExpr* guard)
{
   IRExpr* at = mkIRExpr_HWord((HWord)counter);
   IRExpr* old = tmp(sb, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, at));
   IRExpr* add = guard ? tmp(sb, Ity_I64, IRExpr_Unop(Iop_1Uto64, guard)) : u64(n);
   addStmtToIRSB(sb, IRStmt_Store(Iend_LE, at, tmp(sb, Ity_I64,
                                                   IRExpr_Binop(Iop_Add64, old, add))));
}

/* The call for the group `g` (its addresses `addr`), taken when `any` holds. */
static void call_group(IRSB* sb, Group* g, IRExpr** addr, IRExpr* any)
{
   for (Int k = g->n; k < GROUP; k++)
      addr[k] = u64(0);
   IRDirty* di = unsafeIRDirty_0_N(0, "cs_spatial_group", VG_(fnptr_to_fnentry)(&cs_spatial_group),
                                   mkIRExprVec_6(mkIRExpr_HWord((HWord)intern(g)), addr[0],
                                                 addr[1], addr[2], addr[3], addr[4]));
   di->guard = any;
   addStmtToIRSB(sb, IRStmt_Dirty(di));
}

void cs_spatial_segment(IRSB* sb, const Event* ev, Int n, Addr* pc)
{
   IRExpr* threshold = NULL;
   UInt d = 0, i = 0;
   IRExpr* guard = NULL;
   Group group;
   Group* g = NULL;
   IRExpr* addr[GROUP];
   IRExpr* any = NULL;
   for (Int k = 0; k < n; k++) {
      IRExpr* hit = NULL;
      if (threshold == NULL)
         threshold = tmp(sb, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64,
                                                  mkIRExpr_HWord((HWord)&cs_threshold)));
      if (ev[k].kind == EV_INSTR) {
         *pc = (Addr)ev[k].addr->Iex.Const.con->Ico.U64;
         /* The threshold only falls: a line above it now is never sampled. */
         ULong h = cs_line_hash(*pc >> cs_sample_line_shift());
         if (clo_instr && h < cs_threshold)
            hit = tmp(sb, Ity_I1, IRExpr_Binop(Iop_CmpLT64U, u64(h), threshold));
      } else {
         hit = tmp(sb, Ity_I1, IRExpr_Binop(Iop_CmpLT64U, hash_ir(sb, ev[k].addr), threshold));
         if (ev[k].guard != NULL) {
            tl_assert(n == 1);
            guard = ev[k].guard;
            hit = tmp(sb, Ity_I1, IRExpr_Binop(Iop_And1, hit, guard));
         }
      }
      if (hit != NULL) {
         if (g == NULL) {
            g = &group;
            VG_(memset)(g, 0, sizeof *g);
            any = NULL;
         }
         g->ref[g->n].bits = ((ULong)(ev[k].size & 0x3FF) << 48) | ((ULong)ev[k].kind << 58);
         g->ref[g->n].pc = *pc;
         g->ref[g->n].d = d;
         g->ref[g->n].i = i;
         addr[g->n++] = ev[k].addr;
         any = any ? tmp(sb, Ity_I1, IRExpr_Binop(Iop_Or1, any, hit)) : hit;
         if (g->n == GROUP) {
            call_group(sb, g, addr, any);
            g = NULL;
         }
      }
      if (ev[k].kind == EV_INSTR)
         i++;
      else
         d++;
   }
   if (g != NULL)
      call_group(sb, g, addr, any);
   if (d > 0)
      count(sb, &cs_drefs, d, guard);
   if (i > 0)
      count(sb, &cs_instrs, i, NULL);
}
