/* --cs-toggle-collect=FUNCTION: record only while a function whose name matches (Valgrind's
 * wildcards * and ?; the option may be given several times) is on the running thread's stack.
 *
 * Copyright (C) 2026 the cachescope authors. SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Why not discard translations on every toggle, as CACHESCOPE_START/STOP do: a function
 * called a million times would retranslate the program a million times. Instead every block
 * is instrumented and its records are gated (cs_gate, cs_instrument.c): outside, the buffer
 * pointer does not advance, so what a block stored is overwritten by the next.
 *
 * Entering: chasing across branches is off (cs_main.c, as Callgrind does), so a matching
 * function's entry starts a block, found at translation with VG_(get_fnname_if_entry); that
 * block first calls enter(), which notes the stack pointer when the thread is outside. At the
 * entry it points at the return address (amd64, the only guest the tool is built for),
 * which the return pops:
 * every block compares the stack pointer with the one noted, inline, and a helper leaves only
 * when it is above (the function returned, or a longjmp unwound past it). Recursion: only the outermost call counts. Each thread has its own state,
 * swapped in when the scheduler runs it.
 */

#include "pub_tool_basics.h"
#include "pub_tool_debuginfo.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_threadstate.h"
#include "pub_tool_tooliface.h"

#include "cs_toggle.h"

#define MAX_PATTERNS 16
static const HChar* patterns[MAX_PATTERNS];
static Int n_patterns = 0;

/* Outside: ~0, so no stack pointer is above it. */
#define OUTSIDE (~0ULL)

/* By ThreadId: the stack pointer at the outermost matching entry, or OUTSIDE. */
static ULong* frames = NULL;
static ThreadId running = VG_INVALID_THREADID;
static Bool roi = True;

ULong cs_gate = ~0ULL;
/* The running thread's frame's stack pointer, read by the generated code. */
static ULong cs_toggle_sp = OUTSIDE;

static void update_gate(void)
{
   cs_gate = (roi && cs_toggle_sp != OUTSIDE) ? ~0ULL : 0;
}

Bool cs_toggle_option(const HChar* arg)
{
   const HChar* value;
   if (VG_STR_CLO(arg, "--cs-toggle-collect", value)) {
      if (n_patterns == MAX_PATTERNS)
         VG_(fmsg_bad_option)(arg, "at most %d functions\n", MAX_PATTERNS);
      patterns[n_patterns++] = value;
      return True;
   }
   return False;
}

Bool cs_toggle_enabled(void)
{
   return n_patterns > 0;
}

void cs_toggle_post_clo_init(void)
{
   if (!cs_toggle_enabled())
      return;
   frames = VG_(malloc)("cs.toggle", VG_N_THREADS * sizeof(ULong));
   for (Int t = 0; t < VG_N_THREADS; t++)
      frames[t] = OUTSIDE;
   update_gate();
}

void cs_toggle_set_roi(Bool on)
{
   roi = on;
   update_gate();
}

void cs_toggle_thread(ThreadId tid)
{
   if (!cs_toggle_enabled() || tid == running)
      return;
   if (running != VG_INVALID_THREADID)
      frames[running] = cs_toggle_sp;
   running = tid;
   cs_toggle_sp = frames[tid];
   update_gate();
}

static VG_REGPARM(1) void enter(ULong sp)
{
   if (cs_toggle_sp != OUTSIDE)
      return; /* recursion, or another matching function inside: the outermost counts */
   cs_toggle_sp = sp;
   update_gate();
}

static VG_REGPARM(0) void leave(void)
{
   cs_toggle_sp = OUTSIDE;
   update_gate();
}

static Bool matches(Addr block)
{
   const HChar* name;
   if (!VG_(get_fnname_if_entry)(VG_(current_DiEpoch)(), block, &name))
      return False;
   for (Int i = 0; i < n_patterns; i++)
      if (VG_(string_match)(patterns[i], name))
         return True;
   return False;
}

void cs_toggle_instrument(IRSB* sbOut, const VexGuestLayout* layout, Addr block)
{
   if (!cs_toggle_enabled())
      return;
   IRTemp sp = newIRTemp(sbOut->tyenv, Ity_I64);
   addStmtToIRSB(sbOut, IRStmt_WrTmp(sp, IRExpr_Get(layout->offset_SP, Ity_I64)));
   IRTemp noted = newIRTemp(sbOut->tyenv, Ity_I64);
   addStmtToIRSB(sbOut, IRStmt_WrTmp(noted, IRExpr_Load(Iend_LE, Ity_I64,
                                                        mkIRExpr_HWord((HWord)&cs_toggle_sp))));
   IRTemp above = newIRTemp(sbOut->tyenv, Ity_I1);
   addStmtToIRSB(sbOut, IRStmt_WrTmp(above, IRExpr_Binop(Iop_CmpLT64U, IRExpr_RdTmp(noted),
                                                         IRExpr_RdTmp(sp))));
   IRDirty* out = unsafeIRDirty_0_N(0, "cs_toggle_leave", VG_(fnptr_to_fnentry)(&leave),
                                    mkIRExprVec_0());
   out->guard = IRExpr_RdTmp(above);
   addStmtToIRSB(sbOut, IRStmt_Dirty(out));
   if (matches(block)) {
      IRDirty* in = unsafeIRDirty_0_N(1, "cs_toggle_enter", VG_(fnptr_to_fnentry)(&enter),
                                      mkIRExprVec_1(IRExpr_RdTmp(sp)));
      addStmtToIRSB(sbOut, IRStmt_Dirty(in));
   }
}
