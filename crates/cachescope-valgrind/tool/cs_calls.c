/* Call and return events: a shadow stack per thread, kept as Callgrind keeps its own (read
 * callgrind/callstack.c and bbcc.c for the model), written into the record stream so that
 * cachescope replays the same stack beside every reference.
 *
 * Copyright (C) 2026 the cachescope authors. SPDX-License-Identifier: GPL-2.0-or-later
 *
 * A frame is a function entered (its key: the address control arrived at) and the stack
 * pointer there, which on amd64 points at the return address. Chasing is off (cs_main.c), so
 * a call ends its superblock and a function's first instruction starts one. What changes a
 * stack:
 *  - a call (VEX's Ijk_Call exit): a helper pushes the target, after popping the frames
 *    the stack pointer has already left (a longjmp that no call or return noticed);
 *  - a return (Ijk_Ret): a helper pops every frame below the new stack pointer, so a return
 *    that skips frames (longjmp, exceptions) pops them all;
 *  - a jump into a function's first instruction (a tail call, a PLT stub's jump into the
 *    library): the entry block checks inline that its function is the top frame at this
 *    stack pointer, and if not a helper pushes it as a jump, with the caller's stack
 *    pointer (Callgrind's call emulation), so a return from it pops both;
 *  - an indirect jump out of the mapping its block is in (a PLT stub's jump into a library,
 *    the dynamic loader's jump to the program's entry, whose functions may have no symbols):
 *    checked inline against the mapping's bounds, a helper pushes its target as a jump
 *    (Callgrind's rule for a jump into another object);
 *  - an indirect jump that raises the stack pointer above the top frame (longjmp's last
 *    instruction): checked inline, a helper pops;
 *  - a signal: a boundary frame (the handler's costs are not its interrupted callers'),
 *    popped with the handler's first frame, or when the handler returns;
 *  - a thread's first run, or a return past its bottom frame: a root frame, the code it
 *    runs (Callgrind's handling of an empty stack).
 * A jump to the first instruction of the function already on top (a loop whose head is the
 * entry, a tail call to itself) is not a call; Callgrind counts it as a recursive one. Calls
 * from the tool's preload library are the wrapped allocator's, so its blocks are not
 * checked: a wrapped malloc is one frame, as if unwrapped.
 *
 * A call into a PLT stub (found when the calling block is translated: its target is a
 * constant in a PLT section) is pushed as such: cachescope charges the stub to its caller and
 * the stub's jump into the library as the caller's call, as Callgrind's --skip-plt=yes does.
 *
 * Records: CS_TAG_ENTER (the key; bits 48-50 the kind) and CS_TAG_LEAVE (frames popped), in
 * the running thread's stream at the exact point, before the references that follow.
 */

#include "pub_tool_basics.h"
#include "pub_tool_aspacemgr.h"
#include "pub_tool_debuginfo.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_threadstate.h"
#include "pub_tool_tooliface.h"

#include "cs_calls.h"
#include "cs_events.h"
#include "cs_instrument.h"
#include "cs_protocol.h"
#include "cs_sample.h"
#include "cs_spatial.h"

/* A root or signal frame is never left by the stack pointer. */
#define NEVER (~0ULL)

typedef struct {
   ULong key;
   ULong sp;
   UInt kind; /* CS_ENTER_* */
} Frame;

typedef struct {
   Frame* frames;
   Int depth;
   Int size;
   Bool needs_root;
   ULong pc; /* spatial sampling: the thread's last fetch, while another thread runs */
} Stack;

static Bool clo_calls = False;
/* cs_spatial(), fixed after the options: read on every call event. */
static Bool spatial = False;
static Stack* stacks = NULL; /* by ThreadId */
static Stack* cur = NULL;
static ThreadId cur_tid = VG_INVALID_THREADID;

/* The running thread's top frame, read by the generated code. */
static ULong cs_calls_top_key = 0;
static ULong cs_calls_top_sp = NEVER;
/* Spatial sampling: the running thread's last instruction fetch, stored by the generated code
   at the end of each segment (cs_calls_note_pc): the site of the call events that follow. */
static ULong cs_calls_pc = 0;

Bool cs_calls_option(const HChar* arg)
{
   if VG_BOOL_CLO(arg, "--cs-calls", clo_calls) {}
   else
      return False;
   return True;
}

Bool cs_calls_enabled(void)
{
   /* The reuse sampler's stream alone (cs_sample.c) has no call events: its reader would not
      know the tags. The spatially sampled one has them (with the reuse sampler's too). */
   return clo_calls && (cs_spatial() || !cs_sampling());
}

void cs_calls_post_clo_init(void)
{
   if (!cs_calls_enabled())
      return;
   spatial = cs_spatial();
   stacks = VG_(calloc)("cs.calls", VG_N_THREADS, sizeof(Stack));
   for (Int t = 0; t < VG_N_THREADS; t++)
      stacks[t].needs_root = True;
}

static void sync_top(void)
{
   if (cur == NULL || cur->depth == 0) {
      cs_calls_top_key = 0;
      cs_calls_top_sp = NEVER;
      return;
   }
   Frame* top = &cur->frames[cur->depth - 1];
   cs_calls_top_key = top->key;
   cs_calls_top_sp = top->sp;
}

/* A call event's word. In a spatially sampled stream a position record comes first (so the
   reader knows the counts before it) and the site, the thread's last fetch, after it. */
static void emit(ULong word)
{
   if (LIKELY(!spatial)) {
      /* cs_append, without its call: a call or a return makes one word, a few million a
         second on a program such as awk. */
      if (LIKELY(cs_ptr < cs_limit))
         *cs_ptr++ = word;
      else
         cs_append(word);
      return;
   }
   cs_spatial_position();
   cs_append(word);
   cs_append(cs_calls_pc);
}

static void push(ULong key, ULong sp, UInt kind)
{
   if (cur->depth == cur->size) {
      cur->size = cur->size ? 2 * cur->size : 64;
      cur->frames = VG_(realloc)("cs.calls.frames", cur->frames, cur->size * sizeof(Frame));
   }
   cur->frames[cur->depth++] = (Frame){ key, sp, kind };
   emit(CS_ESCAPE(CS_TAG_ENTER, key) | ((ULong)kind << 48));
   sync_top();
}

static void leave(Int n)
{
   cur->depth -= n;
   emit(CS_ESCAPE(CS_TAG_LEAVE, n));
   sync_top();
}

/* Pops the frames whose stack pointer is below `sp` (the code has left them). A signal
   boundary goes with its handler's first frame; a root stays. Returns the frames popped. */
static Int unwind(ULong sp)
{
   /* Most calls and returns leave no frame behind, or just one: the top frame is checked
      before the loop (a root or signal frame's stack pointer is NEVER). */
   if (cur->depth == 0 || cur->frames[cur->depth - 1].sp >= sp)
      return 0;
   Int n = 0;
   while (n < cur->depth) {
      Frame* f = &cur->frames[cur->depth - 1 - n];
      if (f->kind == CS_ENTER_SIGNAL) {
         if (n > 0)
            n++;
         break;
      }
      if (f->kind == CS_ENTER_ROOT || f->sp >= sp)
         break;
      n++;
   }
   if (n > 0)
      leave(n);
   return n;
}

static VG_REGPARM(2) void on_call(ULong target, ULong sp)
{
   unwind(sp);
   push(target, sp, CS_ENTER_CALL);
}

static VG_REGPARM(2) void on_call_plt(ULong target, ULong sp)
{
   unwind(sp);
   push(target, sp, CS_ENTER_PLT);
}

static VG_REGPARM(2) void on_return(ULong sp, ULong target)
{
   if (unwind(sp) > 0 || cur->depth == 0)
      return;
   Frame* top = &cur->frames[cur->depth - 1];
   if (top->kind == CS_ENTER_ROOT) {
      /* Past the bottom frame: the code returned to becomes the root. */
      leave(1);
      push(target, NEVER, CS_ENTER_ROOT);
   }
}

/* A function's first instruction, reached with another frame on top. A jump that left frames
   is a return (a longjmp), not a call: Callgrind's rule too. */
static VG_REGPARM(2) void on_entry(ULong block, ULong sp)
{
   if (unwind(sp) > 0)
      return;
   if (cur->depth == 0) {
      push(block, NEVER, CS_ENTER_ROOT);
      return;
   }
   Frame* top = &cur->frames[cur->depth - 1];
   if (top->key == block)
      return;
   ULong frame_sp = top->kind == CS_ENTER_CALL || top->kind == CS_ENTER_JUMP
                    || top->kind == CS_ENTER_PLT ? top->sp : sp;
   push(block, frame_sp, CS_ENTER_JUMP);
}

static VG_REGPARM(1) void on_unwind(ULong sp)
{
   unwind(sp);
}

/* An indirect jump out of its block's mapping: into another object. */
static VG_REGPARM(2) void on_jump_out(ULong target, ULong sp)
{
   on_entry(target, sp);
}

void cs_calls_thread_created(ThreadId child)
{
   if (stacks == NULL)
      return;
   stacks[child].depth = 0;
   stacks[child].needs_root = True;
   stacks[child].pc = 0;
}

void cs_calls_thread(ThreadId tid)
{
   if (stacks == NULL)
      return;
   if (tid != cur_tid) {
      if (cur != NULL)
         cur->pc = cs_calls_pc;
      cur_tid = tid;
      cur = &stacks[tid];
      cs_calls_pc = cur->pc;
      sync_top();
   }
   if (cur->needs_root) {
      cur->needs_root = False;
      cur->depth = 0;
      push(VG_(get_IP)(tid), NEVER, CS_ENTER_ROOT);
   }
}

void cs_calls_reset(void)
{
   if (stacks == NULL)
      return;
   for (Int t = 0; t < VG_N_THREADS; t++) {
      stacks[t].depth = 0;
      stacks[t].needs_root = True;
   }
   emit(CS_ESCAPE(CS_TAG_LEAVE, 0));
   sync_top();
   ThreadId tid = VG_(get_running_tid)();
   if (tid != VG_INVALID_THREADID && cur_tid == tid)
      cs_calls_thread(tid);
}

void cs_calls_pre_signal(ThreadId tid, Int sig)
{
   if (stacks == NULL || tid != cur_tid)
      return;
   push((ULong)sig, NEVER, CS_ENTER_SIGNAL);
}

void cs_calls_post_signal(ThreadId tid, Int sig)
{
   if (stacks == NULL || tid != cur_tid)
      return;
   for (Int n = 1; n <= cur->depth; n++) {
      if (cur->frames[cur->depth - n].kind == CS_ENTER_SIGNAL) {
         leave(n);
         return;
      }
   }
}

static IRExpr* load_global(IRSB* sb, ULong* where)
{
   IRTemp t = newIRTemp(sb->tyenv, Ity_I64);
   addStmtToIRSB(sb, IRStmt_WrTmp(t, IRExpr_Load(Iend_LE, Ity_I64, mkIRExpr_HWord((HWord)where))));
   return IRExpr_RdTmp(t);
}

static IRExpr* read_sp(IRSB* sb, const VexGuestLayout* layout)
{
   IRTemp t = newIRTemp(sb->tyenv, Ity_I64);
   addStmtToIRSB(sb, IRStmt_WrTmp(t, IRExpr_Get(layout->offset_SP, Ity_I64)));
   return IRExpr_RdTmp(t);
}

static IRExpr* flag(IRSB* sb, IRExpr* e)
{
   IRTemp t = newIRTemp(sb->tyenv, Ity_I1);
   addStmtToIRSB(sb, IRStmt_WrTmp(t, e));
   return IRExpr_RdTmp(t);
}

static void call_helper(IRSB* sb, const HChar* name, void* fn, IRExpr** args, Int regparms,
                        IRExpr* guard)
{
   IRDirty* di = unsafeIRDirty_0_N(regparms, name, VG_(fnptr_to_fnentry)(fn), args);
   if (guard != NULL)
      di->guard = guard;
   addStmtToIRSB(sb, IRStmt_Dirty(di));
}

void cs_calls_note_pc(IRSB* sbOut, Addr pc)
{
   if (!cs_calls_enabled() || !cs_spatial())
      return;
   addStmtToIRSB(sbOut, IRStmt_Store(Iend_LE, mkIRExpr_HWord((HWord)&cs_calls_pc),
                                     mkIRExpr_HWord((HWord)pc)));
}

void cs_calls_instrument_start(IRSB* sbOut, const VexGuestLayout* layout, Addr block)
{
   const HChar* name;
   if (!cs_calls_enabled() || cs_events_is_own_code(block)
       || !VG_(get_fnname_if_entry)(VG_(current_DiEpoch)(), block, &name))
      return;
   IRExpr* sp = read_sp(sbOut, layout);
   IRExpr* key = load_global(sbOut, &cs_calls_top_key);
   IRExpr* top_sp = load_global(sbOut, &cs_calls_top_sp);
   IRExpr* other = flag(sbOut, IRExpr_Binop(Iop_CmpNE64, key, mkIRExpr_HWord(block)));
   IRExpr* moved = flag(sbOut, IRExpr_Binop(Iop_CmpNE64, top_sp, sp));
   IRExpr* guard = flag(sbOut, IRExpr_Binop(Iop_Or1, other, moved));
   call_helper(sbOut, "cs_calls_entry", &on_entry, mkIRExprVec_2(mkIRExpr_HWord(block), sp), 2,
               guard);
}

void cs_calls_instrument_end(IRSB* sbOut, const VexGuestLayout* layout, Addr block,
                             IRExpr* next, IRJumpKind jk)
{
   if (!cs_calls_enabled())
      return;
   if (jk == Ijk_Call) {
      IRExpr* sp = read_sp(sbOut, layout);
      Bool plt = next->tag == Iex_Const
                 && VG_(DebugInfo_sect_kind)(NULL, (Addr)next->Iex.Const.con->Ico.U64)
                    == Vg_SectPLT;
      if (plt)
         call_helper(sbOut, "cs_calls_call_plt", &on_call_plt, mkIRExprVec_2(next, sp), 2, NULL);
      else
         call_helper(sbOut, "cs_calls_call", &on_call, mkIRExprVec_2(next, sp), 2, NULL);
   } else if (jk == Ijk_Ret) {
      IRExpr* sp = read_sp(sbOut, layout);
      call_helper(sbOut, "cs_calls_return", &on_return, mkIRExprVec_2(sp, next), 2, NULL);
   } else if (jk == Ijk_Boring && next->tag != Iex_Const) {
      /* An indirect jump: into another object (a call), or a longjmp leaving frames. */
      IRExpr* sp = read_sp(sbOut, layout);
      NSegment const* seg = VG_(am_find_nsegment)(block);
      IRExpr* out = NULL;
      if (seg != NULL && !cs_events_is_own_code(block)) {
         IRExpr* below = flag(sbOut, IRExpr_Binop(Iop_CmpLT64U, next,
                                                  mkIRExpr_HWord(seg->start)));
         IRExpr* beyond = flag(sbOut, IRExpr_Binop(Iop_CmpLT64U, mkIRExpr_HWord(seg->end),
                                                   next));
         out = flag(sbOut, IRExpr_Binop(Iop_Or1, below, beyond));
         call_helper(sbOut, "cs_calls_jump_out", &on_jump_out, mkIRExprVec_2(next, sp), 2,
                     out);
      }
      IRExpr* top_sp = load_global(sbOut, &cs_calls_top_sp);
      IRExpr* above = flag(sbOut, IRExpr_Binop(Iop_CmpLT64U, top_sp, sp));
      if (out != NULL)
         above = flag(sbOut, IRExpr_Binop(Iop_And1, above,
                                          flag(sbOut, IRExpr_Unop(Iop_Not1, out))));
      call_helper(sbOut, "cs_calls_unwind", &on_unwind, mkIRExprVec_1(sp), 1, above);
   }
}
