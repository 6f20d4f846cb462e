/* The instrumentation of cachescope's Valgrind tool: which references a superblock makes,
 * and the inline IR that appends their records to the output buffer (cs_main.c).
 *
 * Copyright (C) 2026 the cachescope authors. SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Events are found as lackey finds them (the same pending list of N_EVENTS, flushed at the
 * same points, hence the same load+store -> modify merges and the same records). Flushed
 * events are not stored at once but gathered into a segment, stored by one run of inline
 * stores before each exit of the superblock and at its end: a superblock leaves only
 * through its exits, and nothing else writes the buffer while it runs (client requests,
 * syscalls and thread switches all happen between superblocks). In a segment, two or more
 * consecutive instructions become one CS_TAG_RUN word naming a run defined once, when the
 * block is translated (CS_TAG_RUNDEF): most instructions then cost the program no store of
 * their own, and cachescope copies a run's records from its definition.
 */

#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_machine.h"
#include "pub_tool_options.h"
#include "pub_tool_transtab.h"

#include "cs_calls.h"
#include "cs_events.h"
#include "cs_instrument.h"
#include "cs_protocol.h"
#include "cs_sample.h"
#include "cs_spatial.h"
#include "cs_toggle.h"

/* An atom: an IRExpr that is a temporary or a constant (flat IR). */
typedef IRExpr IRAtom;

/* Pending events, as lackey keeps them: the same buffer length and flush points give the
   same load+store -> modify merges, hence the same records. */
#define N_EVENTS 4
static Event events[N_EVENTS];
static Int events_used = 0;

/* The segment: flushed events not stored yet. At most CS_MAX_SEGMENT, so one segment's
   stores stay within the buffer's overflow room past its mark. */
static Event segment[CS_MAX_SEGMENT];
static Int segment_used = 0;

/* Ids of the runs defined so far in this program's stream. */
static ULong runs_defined = 0;

/* Spatial sampling: the address of the last instruction gathered in this superblock (the pc
   of the data references after it). */
static Addr last_pc = 0;

static IRAtom* assign(IRSB* sb, IRType ty, IRExpr* e)
{
   IRTemp t = newIRTemp(sb->tyenv, ty);
   addStmtToIRSB(sb, IRStmt_WrTmp(t, e));
   return IRExpr_RdTmp(t);
}

static ULong header_bits(Int kind, Int size)
{
   return ((ULong)(size & 0x3FF) << 48) | ((ULong)kind << 58);
}

/* The record of an event as an atom: a constant when the address is. */
static IRAtom* record_of(IRSB* sb, Event* ev)
{
   ULong bits = header_bits(ev->kind, ev->size);
   if (ev->addr->tag == Iex_Const)
      return IRExpr_Const(IRConst_U64((ev->addr->Iex.Const.con->Ico.U64 & CS_ARG_MASK) | bits));
   IRAtom* masked = assign(sb, Ity_I64,
      IRExpr_Binop(Iop_And64, ev->addr, IRExpr_Const(IRConst_U64(CS_ARG_MASK))));
   return assign(sb, Ity_I64, IRExpr_Binop(Iop_Or64, masked, IRExpr_Const(IRConst_U64(bits))));
}

/* Defines a run of the `n` instruction events at `ev` (now, in the stream, before any
   execution of the block) and returns the word that names it. */
static IRAtom* run_of(Event* ev, Int n)
{
   ULong id = runs_defined++;
   cs_append(CS_ESCAPE(CS_TAG_RUNDEF, 1 + n));
   cs_append(id);
   for (Int i = 0; i < n; i++) {
      tl_assert(ev[i].addr->tag == Iex_Const);
      cs_append((ev[i].addr->Iex.Const.con->Ico.U64 & CS_ARG_MASK)
                | header_bits(EV_INSTR, ev[i].size));
   }
   return IRExpr_Const(IRConst_U64(CS_ESCAPE(CS_TAG_RUN, id)));
}

/* Stores the segment's records at cs_ptr, advances it, and flushes the buffer if past its
   mark. */
static void emit_segment(IRSB* sb)
{
   if (segment_used == 0)
      return;
   if (cs_spatial()) {
      cs_spatial_segment(sb, segment, segment_used, &last_pc);
      cs_calls_note_pc(sb, last_pc);
      segment_used = 0;
      return;
   }
   IRAtom* words[CS_MAX_SEGMENT];
   Int n = 0;
   for (Int i = 0; i < segment_used;) {
      Int run = 0;
      while (i + run < segment_used && segment[i + run].kind == EV_INSTR)
         run++;
      if (run >= 2) {
         words[n++] = run_of(&segment[i], run);
         i += run;
      } else {
         words[n++] = record_of(sb, &segment[i]);
         i++;
      }
   }
   segment_used = 0;
   IRAtom* ptr_addr = mkIRExpr_HWord((HWord)&cs_ptr);
   IRAtom* ptr = assign(sb, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, ptr_addr));
   for (Int k = 0; k < n; k++) {
      IRAtom* at = ptr;
      if (k > 0)
         at = assign(sb, Ity_I64, IRExpr_Binop(Iop_Add64, ptr,
                                               IRExpr_Const(IRConst_U64(8 * k))));
      addStmtToIRSB(sb, IRStmt_Store(Iend_LE, at, words[k]));
   }
   IRAtom* advance = IRExpr_Const(IRConst_U64(8 * n));
   if (cs_toggle_enabled()) {
      /* Outside the toggled functions the pointer stays: the words are overwritten. */
      IRAtom* gate = assign(sb, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64,
                                                     mkIRExpr_HWord((HWord)&cs_gate)));
      advance = assign(sb, Ity_I64, IRExpr_Binop(Iop_And64, advance, gate));
   }
   IRAtom* next = assign(sb, Ity_I64, IRExpr_Binop(Iop_Add64, ptr, advance));
   addStmtToIRSB(sb, IRStmt_Store(Iend_LE, ptr_addr, next));
   IRAtom* limit = assign(sb, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64,
                                                   mkIRExpr_HWord((HWord)&cs_limit)));
   IRAtom* full = assign(sb, Ity_I1, IRExpr_Binop(Iop_CmpLT64U, limit, next));
   IRDirty* di = unsafeIRDirty_0_N(0, "cs_flush", VG_(fnptr_to_fnentry)(&cs_flush),
                                   mkIRExprVec_0());
   di->guard = full;
   addStmtToIRSB(sb, IRStmt_Dirty(di));
}

/* Moves pending events into the segment (sampling: emits their sampling checks now). */
static void gather(IRSB* sb, Int from, Int to)
{
   for (Int i = from; i < to; i++) {
      if (events[i].kind == EV_HIDDEN)
         continue;
      if (cs_sampling() && (events[i].kind != EV_INSTR || cs_sample_instr()))
         cs_sample_emit(sb, events[i].addr, events[i].kind != EV_INSTR);
      if (cs_sampling() && !cs_spatial())
         continue;
      if (segment_used == CS_MAX_SEGMENT)
         emit_segment(sb);
      segment[segment_used++] = events[i];
   }
}

static void flush_events(IRSB* sb)
{
   Int start = 0;
   for (Int i = 0; i < events_used; i++) {
      if (events[i].guard == NULL)
         continue;
      gather(sb, start, i);
      start = i + 1;
      if (cs_sampling())
         cs_sample_emit_guarded(sb, events[i].addr, events[i].guard);
      if (cs_spatial()) {
         /* Alone in its segment: its count depends on its guard. */
         emit_segment(sb);
         cs_spatial_segment(sb, &events[i], 1, &last_pc);
      }
      if (cs_sampling() || cs_spatial())
         continue;
      /* In order: what came before it is stored first. */
      emit_segment(sb);
      IRDirty* di = unsafeIRDirty_0_N(1, "cs_append_guarded",
                                      VG_(fnptr_to_fnentry)(&cs_append_guarded),
                                      mkIRExprVec_1(record_of(sb, &events[i])));
      di->guard = events[i].guard;
      if (cs_toggle_enabled()) {
         IRAtom* gate = assign(sb, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64,
                                                        mkIRExpr_HWord((HWord)&cs_gate)));
         IRAtom* open = assign(sb, Ity_I1, IRExpr_Binop(Iop_CmpNE64, gate,
                                                        IRExpr_Const(IRConst_U64(0))));
         di->guard = assign(sb, Ity_I1, IRExpr_Binop(Iop_And1, events[i].guard, open));
      }
      addStmtToIRSB(sb, IRStmt_Dirty(di));
   }
   gather(sb, start, events_used);
   events_used = 0;
}

/* Before an exit, and at the end: everything recorded so far is stored. */
static void end_segment(IRSB* sb)
{
   flush_events(sb);
   if (cs_sampling())
      cs_sample_settle(sb);
   emit_segment(sb);
}

static void add_event(IRSB* sb, Int kind, IRAtom* addr, Int size, IRAtom* guard)
{
   tl_assert(size >= 1 && size <= 1023);
   if (events_used == N_EVENTS)
      flush_events(sb);
   events[events_used] = (Event){ kind, addr, size, guard };
   events_used++;
}

static void add_store(IRSB* sb, IRAtom* addr, Int size)
{
   /* A store right after an unguarded load of the same size from the same address atom is
      one modify (lackey's rule). */
   if (events_used > 0) {
      Event* last = &events[events_used - 1];
      if (last->kind == EV_LOAD && last->size == size && last->guard == NULL
          && eqIRAtom(last->addr, addr)) {
         last->kind = EV_MODIFY;
         return;
      }
   }
   add_event(sb, EV_STORE, addr, size, NULL);
}

/* The events of one statement of the program's code. */
static void add_events_of(IRSB* sb, IRTypeEnv* tyenv, IRStmt* st)
{
   switch (st->tag) {
   case Ist_IMark:
      /* Kept in the pending list even without instruction records: they separate
         instructions, so a load and a store of two instructions never merge. The spatial
         sampler counts them always. */
      add_event(sb, cs_instr_records() || cs_spatial() ? EV_INSTR : EV_HIDDEN,
                mkIRExpr_HWord((HWord)st->Ist.IMark.addr), st->Ist.IMark.len, NULL);
      break;
   case Ist_WrTmp: {
      IRExpr* data = st->Ist.WrTmp.data;
      if (data->tag == Iex_Load)
         add_event(sb, EV_LOAD, data->Iex.Load.addr, sizeofIRType(data->Iex.Load.ty), NULL);
      break;
   }
   case Ist_Store:
      add_store(sb, st->Ist.Store.addr, sizeofIRType(typeOfIRExpr(tyenv, st->Ist.Store.data)));
      break;
   case Ist_StoreG: {
      IRStoreG* sg = st->Ist.StoreG.details;
      add_event(sb, EV_STORE, sg->addr, sizeofIRType(typeOfIRExpr(tyenv, sg->data)), sg->guard);
      break;
   }
   case Ist_LoadG: {
      IRLoadG* lg = st->Ist.LoadG.details;
      IRType ty = Ity_INVALID, wide = Ity_INVALID;
      typeOfIRLoadGOp(lg->cvt, &wide, &ty);
      add_event(sb, EV_LOAD, lg->addr, sizeofIRType(ty), lg->guard);
      break;
   }
   case Ist_Dirty: {
      IRDirty* d = st->Ist.Dirty.details;
      if (d->mFx != Ifx_None) {
         if (d->mFx == Ifx_Read || d->mFx == Ifx_Modify)
            add_event(sb, EV_LOAD, d->mAddr, d->mSize, NULL);
         if (d->mFx == Ifx_Write || d->mFx == Ifx_Modify)
            add_store(sb, d->mAddr, d->mSize);
      }
      break;
   }
   case Ist_CAS: {
      IRCAS* cas = st->Ist.CAS.details;
      Int size = sizeofIRType(typeOfIRExpr(tyenv, cas->dataLo));
      if (cas->dataHi != NULL)
         size *= 2;
      add_event(sb, EV_LOAD, cas->addr, size, NULL);
      add_store(sb, cas->addr, size);
      break;
   }
   case Ist_LLSC:
      if (st->Ist.LLSC.storedata == NULL) {
         add_event(sb, EV_LOAD, st->Ist.LLSC.addr,
                   sizeofIRType(typeOfIRTemp(tyenv, st->Ist.LLSC.result)), NULL);
         flush_events(sb);
      } else {
         add_store(sb, st->Ist.LLSC.addr,
                   sizeofIRType(typeOfIRExpr(tyenv, st->Ist.LLSC.storedata)));
      }
      break;
   case Ist_Exit:
      end_segment(sb);
      break;
   default:
      break;
   }
}

/* Whether references are recorded now. Outside a region the code is translated without
   instrumentation, so it runs at Valgrind's bare speed; switching discards every translation
   (as Callgrind's CALLGRIND_START_INSTRUMENTATION does), so blocks are translated again the
   other way. Thread switches, allocations and execs are still recorded outside. With
   --cs-toggle-collect every block is instrumented instead, and the region is part of the
   gate (cs_toggle.c). */
static Bool collecting = True;

Bool cs_roi_option(const HChar* arg)
{
   if VG_BOOL_CLO(arg, "--cs-collect-atstart", collecting) {}
   else
      return False;
   return True;
}

void cs_roi_post_clo_init(void)
{
   cs_toggle_post_clo_init();
   if (cs_toggle_enabled())
      cs_toggle_set_roi(collecting);
}

void cs_set_collecting(Bool on)
{
   if (cs_toggle_enabled()) {
      cs_toggle_set_roi(on);
      return;
   }
   if (on == collecting)
      return;
   collecting = on;
   VG_(discard_translations_safely)((Addr)0x1000, ~(SizeT)0xfff, "cachescope");
   if (on)
      cs_calls_reset(); /* the stacks were not followed while off */
}

IRSB* cs_instrument(VgCallbackClosure* closure, IRSB* sbIn, const VexGuestLayout* layout,
                    const VexGuestExtents* vge, const VexArchInfo* archinfo_host,
                    IRType gWordTy, IRType hWordTy)
{
   if (gWordTy != Ity_I64 || hWordTy != Ity_I64)
      VG_(tool_panic)("cachescope: only 64-bit guests are supported");
   if (!collecting && !cs_toggle_enabled())
      return sbIn;

   IRSB* sbOut = deepCopyIRSBExceptStmts(sbIn);
   Int i = 0;
   while (i < sbIn->stmts_used && sbIn->stmts[i]->tag != Ist_IMark) {
      addStmtToIRSB(sbOut, sbIn->stmts[i]);
      i++;
   }
   events_used = 0;
   segment_used = 0;
   cs_toggle_instrument(sbOut, layout, (Addr)vge->base[0]);
   cs_calls_instrument_start(sbOut, layout, (Addr)vge->base[0]);
   Bool own = False; /* the current instruction is the preload library's: not recorded */

   for (; i < sbIn->stmts_used; i++) {
      IRStmt* st = sbIn->stmts[i];
      if (!st || st->tag == Ist_NoOp)
         continue;
      if (st->tag == Ist_IMark)
         own = cs_events_is_own_code(st->Ist.IMark.addr);
      if (!own)
         add_events_of(sbOut, sbIn->tyenv, st);
      else if (st->tag == Ist_IMark)
         add_event(sbOut, EV_HIDDEN, mkIRExpr_HWord(0), 1, NULL);
      else if (st->tag == Ist_Exit)
         end_segment(sbOut);
      addStmtToIRSB(sbOut, st);
   }
   end_segment(sbOut);
   cs_calls_instrument_end(sbOut, layout, (Addr)vge->base[0], sbOut->next, sbOut->jumpkind);
   return sbOut;
}
