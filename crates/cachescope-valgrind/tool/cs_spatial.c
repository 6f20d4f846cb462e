/* Spatial sampling (SHARDS, Waldspurger et al., FAST'15) inside cachescope's Valgrind tool:
 * only the data references to sampled lines are written, with where each sits in the full
 * stream.
 *
 * Copyright (C) 2026 the cachescope authors. SPDX-License-Identifier: GPL-2.0-or-later
 *
 * A line (address >> --cs-line-shift) is sampled when its hash, SplitMix64's output function
 * of the line xor a key (docs/sampled.md; cs_line_hash below, and the same operations as
 * inline IR), is at most the limit: the same lines for every thread, so what happens on a
 * sampled line is complete. Per data reference the generated code computes the hash and
 * compares it with the limit, held in a global; up to GROUP references share one call,
 * taken only when one of them passes (a call per reference made every reference spill
 * registers around it). Per segment (cs_instrument.c: the references stored together before
 * an exit of a superblock) it adds the segment's loads, stores, modifies and instructions to
 * four counters: the counting costs a few instructions per segment, not per reference, and a
 * sample knows its position as the counters plus its index in the segment (a constant of the
 * translation).
 *
 * The fixed-size variant: cachescope lowers its limit as distinct sampled lines grow and
 * publishes it in the ring's header; cs_ring.c reads it at each buffer handed over and
 * cs_spatial_lower lowers the tool's (never raises it). The tool then writes a superset of
 * what cachescope keeps (at most a few buffers more), and cachescope filters exactly.
 *
 * Records (cs_protocol.h): CS_TAG_SAMPLE (the pc), the reference word and the loads, stores,
 * modifies and instructions since the previous record; CS_TAG_POSITION with the four counts
 * themselves: before each event, thread switch, exec and the end, and where a distance would
 * not fit. So the reader knows every count at every record.
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
#include "cs_share.h"
#include "cs_spatial.h"
#include "cs_toggle.h"

static Bool clo_spatial = False;       /* --cs-spatial=yes */
static const HChar* clo_key = "0";     /* --cs-spatial-key=K: the hash's key */
static const HChar* clo_limit = NULL;  /* --cs-spatial-limit=L: the starting limit */
static ULong key = 0;

/* Read by the generated code, so plain globals: the limit, and the loads, stores, modifies
   and instructions (indexed by EV_*) counted up to the start of the running segment. */
ULong cs_limit_hash = ~0ULL;
ULong cs_counts[4] = { 0, 0, 0, 0 };
/* The counts at the last record (samples carry their distance from them). */
static ULong last[4] = { 0, 0, 0, 0 };

Bool cs_spatial(void)
{
   return clo_spatial;
}

Bool cs_spatial_option(const HChar* arg)
{
   if VG_BOOL_CLO(arg, "--cs-spatial", clo_spatial) {}
   else if VG_STR_CLO(arg, "--cs-spatial-key", clo_key) {}
   else if VG_STR_CLO(arg, "--cs-spatial-limit", clo_limit) {}
   else
      return False;
   return True;
}

/* A u64 option in decimal or 0x hex, into *out; False if it does not parse. */
static Bool parse_u64(const HChar* s, ULong* out)
{
   HChar* end;
   Bool hex = VG_(strncmp)(s, "0x", 2) == 0;
   *out = hex ? VG_(strtoull16)(s + 2, &end) : VG_(strtoull10)(s, &end);
   return *end == '\0' && end != s + (hex ? 2 : 0);
}

Bool cs_spatial_post_clo_init(void)
{
   if (!clo_spatial)
      return True;
   if (cs_toggle_enabled()) {
      VG_(umsg)("cachescope: --cs-spatial=yes cannot be combined with --cs-toggle-collect\n");
      return False;
   }
   if (!parse_u64(clo_key, &key) || (clo_limit && !parse_u64(clo_limit, &cs_limit_hash))) {
      VG_(umsg)("cachescope: bad --cs-spatial-key or --cs-spatial-limit\n");
      return False;
   }
   return True;
}

/* The hash of a line number (docs/sampled.md): must equal the IR of hash_ir. */
static ULong cs_line_hash(ULong line)
{
   ULong z = (line ^ key) + 0x9E3779B97F4A7C15ULL;
   z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
   z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
   return z ^ (z >> 31);
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

static IRExpr* op(IRSB* sb, IROp o, IRExpr* a, IRExpr* b)
{
   return tmp(sb, Ity_I64, IRExpr_Binop(o, a, b));
}

static IRExpr* xor_shift(IRSB* sb, IRExpr* z, UChar k)
{
   return op(sb, Iop_Xor64, z, op(sb, Iop_Shr64, z, IRExpr_Const(IRConst_U8(k))));
}

/* The line of `addr`, as IR. */
static IRExpr* line_ir(IRSB* sb, IRExpr* addr)
{
   return op(sb, Iop_Shr64, addr, IRExpr_Const(IRConst_U8(cs_sample_line_shift())));
}

/* cs_line_hash of `line`, as IR. */
static IRExpr* hash_ir(IRSB* sb, IRExpr* line)
{
   IRExpr* z = op(sb, Iop_Add64, op(sb, Iop_Xor64, line, u64(key)), u64(0x9E3779B97F4A7C15ULL));
   z = op(sb, Iop_Mul64, xor_shift(sb, z, 30), u64(0xBF58476D1CE4E5B9ULL));
   z = op(sb, Iop_Mul64, xor_shift(sb, z, 27), u64(0x94D049BB133111EBULL));
   return xor_shift(sb, z, 31);
}

/* A position record of the counts `c`. */
static void position(const ULong* c)
{
   cs_append(CS_ESCAPE(CS_TAG_POSITION, 0));
   for (Int k = 0; k < 4; k++) {
      cs_append(c[k]);
      last[k] = c[k];
   }
}

void cs_spatial_position(void)
{
   /* The reader knows the counts at the last record: only a change needs one. */
   if (VG_(memcmp)(cs_counts, last, sizeof cs_counts) != 0)
      position(cs_counts);
}

void cs_spatial_lower(ULong published)
{
   if (published < cs_limit_hash)
      cs_limit_hash = published;
}

/* Up to GROUP references of a segment share one call. */
#define GROUP 5

/* What the translation knows of a group's references; the addresses come as arguments.
   Interned (a hash table node: next and key first), so that translating a block again (the
   code cache full, CACHESCOPE_START/STOP) finds the group made the first time. */
typedef struct _Group {
   struct _Group* next;
   UWord key; /* a hash of the rest */
   Int n;
   struct {
      ULong bits;   /* the record's size and kind */
      Addr pc;
      UShort at[4]; /* the segment's loads, stores, modifies and instructions before it */
   } ref[GROUP];
} Group;

static VgHashTable* groups = NULL;

#define GROUP_BODY(g) ((const UChar*)(g) + 2 * sizeof(UWord))
#define GROUP_BODY_SIZE (sizeof(Group) - 2 * sizeof(UWord))

static Word group_cmp(const void* a, const void* b)
{
   return VG_(memcmp)(GROUP_BODY(a), GROUP_BODY(b), GROUP_BODY_SIZE);
}

/* The group equal to `g` (zeroed, then filled), made once. */
static const Group* intern(Group* g)
{
   const ULong* w = (const ULong*)GROUP_BODY(g);
   ULong h = 0;
   for (SizeT k = 0; k < GROUP_BODY_SIZE / 8; k++)
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

/* Writes the reference `word` of the segment, `at` its index there by kind. */
static void sample(ULong word, Addr pc, const UShort* at)
{
   ULong c[4], far = 0, delta = 0;
   for (Int k = 0; k < 4; k++) {
      c[k] = cs_counts[k] + at[k];
      far |= (c[k] - last[k]) >> 16;
   }
   if (far)
      position(c);
   for (Int k = 0; k < 4; k++) {
      delta |= (c[k] - last[k]) << (16 * k);
      last[k] = c[k];
   }
   cs_append(CS_ESCAPE(CS_TAG_SAMPLE, pc));
   cs_append(word);
   cs_append(delta);
}

/* Called when some reference of the group is sampled, or wants the sharing detector
   (cs_share.c): finds which. A reference to a promoted line outside the sample is written
   with CS_SHARE_PROMOTED. */
static void cs_spatial_group(const Group* g, ULong a0, ULong a1, ULong a2, ULong a3, ULong a4)
{
   ULong a[GROUP] = { a0, a1, a2, a3, a4 };
   for (Int k = 0; k < g->n; k++) {
      ULong line = a[k] >> cs_sample_line_shift(), h = cs_line_hash(line);
      ULong bits = g->ref[k].bits;
      Bool promoted = cs_share_reference((Int)(bits >> 58) & 3, a[k],
                                         (UInt)(bits >> 48) & 0x3FF, g->ref[k].pc, line, h);
      if (h <= cs_limit_hash)
         sample((a[k] & CS_ARG_MASK) | bits, g->ref[k].pc, g->ref[k].at);
      else if (promoted)
         sample((a[k] & CS_ARG_MASK) | bits | CS_SHARE_PROMOTED, g->ref[k].pc, g->ref[k].at);
   }
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

/* Adds `n` (or the guard, widened) to the counter of kind `kind`. */
static void count(IRSB* sb, Int kind, ULong n, IRExpr* guard)
{
   IRExpr* at = mkIRExpr_HWord((HWord)&cs_counts[kind]);
   IRExpr* old = tmp(sb, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, at));
   IRExpr* add = guard ? tmp(sb, Ity_I64, IRExpr_Unop(Iop_1Uto64, guard)) : u64(n);
   addStmtToIRSB(sb, IRStmt_Store(Iend_LE, at, op(sb, Iop_Add64, old, add)));
}

void cs_spatial_segment(IRSB* sb, const Event* ev, Int n, Addr* pc)
{
   IRExpr* limit = NULL;
   UShort at[4] = { 0, 0, 0, 0 };
   IRExpr* guard = NULL;
   Group group;
   Group* g = NULL;
   IRExpr* addr[GROUP];
   IRExpr* any = NULL;
   tl_assert(n <= 0xFFFF);
   for (Int k = 0; k < n; k++) {
      Int kind = ev[k].kind;
      if (kind == EV_INSTR) {
         *pc = (Addr)ev[k].addr->Iex.Const.con->Ico.U64;
         at[kind]++;
         continue;
      }
      if (limit == NULL)
         limit = tmp(sb, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64,
                                              mkIRExpr_HWord((HWord)&cs_limit_hash)));
      IRExpr* line = line_ir(sb, ev[k].addr);
      IRExpr* hash = hash_ir(sb, line);
      IRExpr* hit = tmp(sb, Ity_I1, IRExpr_Binop(Iop_CmpLE64U, hash, limit));
      IRExpr* share = cs_share_ir(sb, kind, ev[k].size, ev[k].addr, line, hash);
      if (share != NULL)
         hit = tmp(sb, Ity_I1, IRExpr_Binop(Iop_Or1, hit, share));
      if (ev[k].guard != NULL) {
         tl_assert(n == 1);
         guard = ev[k].guard;
         hit = tmp(sb, Ity_I1, IRExpr_Binop(Iop_And1, hit, guard));
      }
      if (g == NULL) {
         g = &group;
         VG_(memset)(g, 0, sizeof *g);
         any = NULL;
      }
      g->ref[g->n].bits = ((ULong)(ev[k].size & 0x3FF) << 48) | ((ULong)kind << 58);
      g->ref[g->n].pc = *pc;
      VG_(memcpy)(g->ref[g->n].at, at, sizeof at);
      addr[g->n++] = ev[k].addr;
      any = any ? tmp(sb, Ity_I1, IRExpr_Binop(Iop_Or1, any, hit)) : hit;
      if (g->n == GROUP) {
         call_group(sb, g, addr, any);
         g = NULL;
      }
      at[kind]++;
   }
   if (g != NULL)
      call_group(sb, g, addr, any);
   for (Int kind = 0; kind < 4; kind++) {
      if (at[kind] > 0)
         count(sb, kind, at[kind], kind == EV_INSTR ? NULL : guard);
   }
}
