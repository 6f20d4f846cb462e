/* cachescope's Valgrind tool: every memory reference as an 8-byte binary record.
 *
 * Copyright (C) 2026 the cachescope authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * This program is free software; you can redistribute it and/or modify it under the terms
 * of the GNU General Public License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version. It links Valgrind's core
 * (GPL-2.0-or-later), so it is under the same licence; see ../LICENSE. cachescope runs it
 * as a separate program (valgrind --tool=cachescope) and reads its output from a pipe.
 *
 * What is recorded is exactly what `valgrind --tool=lackey --trace-mem=yes` prints: one
 * record per instruction (its address and length) and per load, store and modify (a load
 * followed by a store of the same size to the same address in one instruction is one
 * modify), in the same order, found the same way (dirty helpers' memory effects, CAS as a
 * load and a store, LL/SC, guarded loads and stores). Unlike lackey, nothing is formatted:
 * the instrumentation appends records to a buffer with inline IR (no call per reference)
 * and a guarded call writes the buffer to the output pipe when it is full.
 *
 * Record layout (little-endian 64-bit words; docs/recording.md in the cachescope repository
 * is the reference, and crates/cachescope/src/record/tool.rs the decoder):
 *   bits  0-47  address (sign-extended from bit 47 when decoded: amd64 canonical addresses)
 *   bits 48-57  size in bytes (1..1023)
 *   bits 58-59  kind: 0 load, 1 store, 2 modify, 3 instruction
 *   bits 60-63  tag: 0 for a reference; otherwise an escape (see CS_TAG_*), whose low 48
 *               bits are its argument, possibly followed by more words. A run of
 *               consecutive instructions is one escape word (CS_TAG_RUN) naming a run
 *               defined when its block was translated (cs_instrument.c).
 */

#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_machine.h"
#include "pub_tool_options.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_threadstate.h"
#include "pub_tool_vki.h"
#include "pub_tool_vkiscnums.h"

#include "cs_protocol.h"

/* In Valgrind's core (pub_core_libcfile.h) but not in the tool headers; linked statically
   from the same Valgrind. */
extern Int VG_(fcntl)(Int fd, Int cmd, Addr arg);
#include "cs_calls.h"
#include "cs_env.h"
#include "cs_events.h"
#include "cs_fork.h"
#include "cs_instrument.h"
#include "cs_ring.h"
#include "cs_sample.h"
#include "cs_sample_threads.h"
#include "cs_share.h"
#include "cs_spatial.h"
#include "cs_toggle.h"

/*------------------------------------------------------------------*/
/*--- The output buffer                                          ---*/
/*------------------------------------------------------------------*/

/* Flushed when more than CS_BUF_WORDS are used; instrumentation appends at most
   CS_MAX_SEGMENT words between checks and escapes check before appending. */
#define CS_BUF_WORDS (128 * 1024) /* 1 MiB */

static ULong cs_buf[CS_BUF_WORDS + CS_MAX_SEGMENT];
/* The buffer being filled: cs_buf, or with --cs-ring the ring slot the tool holds (so the
   records are written once, straight into memory cachescope reads). cs_ptr is the next free
   word and cs_limit the mark past which the buffer is handed over; both are read by the
   generated code, so they are plain globals. */
static ULong* cs_base = cs_buf;
ULong* cs_ptr = cs_buf;
ULong* cs_limit = cs_buf + CS_BUF_WORDS;

static const HChar* clo_out = NULL;  /* --cs-out=PATH: the pipe (or file) to write into */
static Bool clo_instr = True;        /* --cs-instr=no: no instruction records */
static Bool clo_keep_env = False;    /* --cs-keep-env=yes: leave the recorder's variables */
static Long clo_parent = 0;          /* --cs-parent=PID: write only if our parent is PID */
static Int out_fd = -1;
static Bool out_broken = False;      /* a write failed: the reader has gone */
static Bool finishing = False;       /* the last buffer: no ring slot is needed after it */
static ULong words_written = 0;      /* words handed to the pipe, for the end record */
static ThreadId current_tid = VG_INVALID_THREADID;

/* Fills into `base` from now on. */
static void use_buffer(ULong* base)
{
   cs_base = cs_ptr = base;
   cs_limit = base + CS_BUF_WORDS;
}

static void cs_write_out(void)
{
   const HChar* p = (const HChar*)cs_base;
   Int left = (Int)((cs_ptr - cs_base) * sizeof(ULong));
   if (cs_fork_paused()) {
      /* A child holds the stream: keep what the parent's later words need, drop the rest. */
      cs_fork_hold(cs_base, cs_ptr - cs_base);
      cs_ptr = cs_base;
      return;
   }
   words_written += cs_ptr - cs_base;
   cs_ptr = cs_base;
   if (out_fd < 0 || out_broken)
      return;
   if (cs_ring_requested()) {
      ULong* next = cs_ring_put(out_fd, left / sizeof(ULong), !finishing);
      if (cs_spatial())
         cs_spatial_lower(cs_ring_limit());
      if (next == NULL) {
         /* The reader has gone, as with a closed pipe below. */
         out_broken = True;
         use_buffer(cs_buf);
      } else {
         use_buffer(next);
      }
      return;
   }
   while (left > 0) {
      Int n = VG_(write)(out_fd, p, left);
      if (n <= 0) {
         /* The reader closed the pipe (cachescope stopped early, or was killed): keep the
            program running to its end without writing, as when output goes nowhere. */
         out_broken = True;
         return;
      }
      p += n;
      left -= n;
   }
}

/* Called by the generated code when the buffer is over its mark. */
VG_REGPARM(0) void cs_flush(void)
{
   cs_write_out();
}

void cs_append(ULong word)
{
   if (cs_ptr >= cs_limit)
      cs_write_out();
   *cs_ptr++ = word;
}

void cs_append_bytes(const void* data, SizeT len)
{
   const UChar* p = data;
   while (len > 0) {
      ULong w = 0;
      SizeT n = len < 8 ? len : 8;
      VG_(memcpy)(&w, p, n);
      cs_append(w);
      p += n;
      len -= n;
   }
}

VG_REGPARM(1) void cs_append_guarded(ULong word)
{
   cs_append(word);
}

Bool cs_instr_records(void)
{
   return clo_instr;
}

/*------------------------------------------------------------------*/
/*--- Thread switches, fork and exec                             ---*/
/*------------------------------------------------------------------*/

/* Valgrind reuses the ThreadId of an exited thread for the next one created, so the stream
   numbers threads itself: each thread gets the next serial number when it is created (the
   main thread is 1), and a thread switch carries the serial, never the slot. */
static UInt* thread_serial = NULL; /* by ThreadId; 0 = not given yet */
static UInt next_serial = 1;

static void ensure_serials(void)
{
   if (thread_serial == NULL)
      thread_serial = VG_(calloc)("cs.thread_serial", VG_N_THREADS, sizeof(UInt));
}

static UInt serial_of(ThreadId tid)
{
   ensure_serials();
   if (thread_serial[tid] == 0)
      thread_serial[tid] = next_serial++;
   return thread_serial[tid];
}

static void cs_thread_created(ThreadId parent, ThreadId child)
{
   /* The main thread is created with no parent. */
   if (parent != VG_INVALID_THREADID)
      (void)serial_of(parent); /* numbered before its child */
   ensure_serials();
   /* A new thread, perhaps in the slot of an exited one: a new number. */
   thread_serial[child] = next_serial++;
   cs_calls_thread_created(child);
   /* A second thread: the sharing detector starts (cs_share.c). */
   if (parent != VG_INVALID_THREADID)
      cs_share_thread_created();
}

static UInt current_serial = 0;

/* What follows in the stream is thread tid's. */
static void cs_running(ThreadId tid)
{
   if (tid != current_tid || serial_of(tid) != current_serial) {
      current_tid = tid;
      current_serial = serial_of(tid);
      cs_share_running(current_serial);
      cs_toggle_thread(tid);
      if (cs_sampling())
         cs_sample_thread(current_serial);
      /* The references so far were the previous thread's. */
      if (cs_spatial())
         cs_spatial_position();
      cs_append(CS_ESCAPE(CS_TAG_THREAD, current_serial));
   }
   cs_calls_thread(tid);
}

static void cs_start_client_code(ThreadId tid, ULong blocks_dispatched)
{
   cs_events_first_run();
   cs_share_slice();
   cs_running(tid);
}

static void cs_pre_deliver_signal(ThreadId tid, Int sig, Bool alt_stack)
{
   if (!cs_calls_enabled())
      return;
   cs_running(tid);
   cs_calls_pre_signal(tid, sig);
}

static void cs_post_deliver_signal(ThreadId tid, Int sig)
{
   if (!cs_calls_enabled())
      return;
   cs_running(tid);
   cs_calls_post_signal(tid, sig);
}

/* The first word of a stream. */
static ULong header_word(void)
{
   return CS_ESCAPE(CS_TAG_HEADER, CS_VERSION | ((ULong)clo_instr << 16)
                                      | ((ULong)cs_sampling() << 17)
                                      | ((ULong)cs_spatial() << 18)
                                      | ((ULong)cs_calls_enabled() << 19)
                                      | ((ULong)cs_share_enabled() << 20));
}

/* A process that neither writes the stream nor took it over (its exec'd program is noted). */
static Bool unrecorded = False;

static void cs_pre_fork(ThreadId tid)
{
   /* With --cs-follow-forks the child may take the stream (cs_fork.c): the mark goes first.
      Whatever the parent recorded goes out now, so the child has nothing to write twice. */
   cs_fork_pre(out_fd >= 0 && !out_broken);
   cs_write_out();
}

static void cs_fork_parent_side(ThreadId tid)
{
   if (cs_fork_paused())
      return;
   cs_fork_parent();
   /* Paused: fill private memory while the child fills the ring. */
   if (cs_fork_paused())
      use_buffer(cs_buf);
}

static void cs_fork_child(ThreadId tid)
{
   if (out_fd >= 0 && !out_broken && cs_fork_child_takes_over()) {
      /* This child writes the stream now, as a stream of its own: a header, its threads
         numbered from 1, its own word count (the pipe and the ring mapping are inherited). */
      if (cs_ring_requested())
         cs_ring_watch_parent(VG_(getppid)());
      words_written = 0;
      cs_ptr = cs_base;
      if (thread_serial != NULL)
         VG_(memset)(thread_serial, 0, VG_N_THREADS * sizeof(UInt));
      next_serial = 1;
      current_tid = VG_INVALID_THREADID;
      current_serial = 0;
      cs_append(header_word());
      return;
   }
   /* Other children are not followed: the child runs on under Valgrind but never writes
      into the parent's stream. */
   out_fd = -1;
   unrecorded = True;
   use_buffer(cs_buf);
   cs_events_forked_child();
   cs_sample_forked_child();
}

/* The child that held the stream has gone: this process writes it again. */
static void resume_stream(ThreadId tid)
{
   /* What it made since its last flush is held or dropped like the rest of the pause. */
   cs_fork_hold(cs_base, cs_ptr - cs_base);
   cs_ptr = cs_base;
   if (cs_ring_requested() && !out_broken) {
      /* The child moved the ring on: continue after its last buffer. */
      ULong* slot = cs_ring_resume();
      if (slot == NULL)
         out_broken = True;
      else
         use_buffer(slot);
   }
   cs_fork_resume();
   current_tid = VG_INVALID_THREADID;
   if (tid != VG_INVALID_THREADID) {
      current_tid = tid;
      current_serial = serial_of(tid);
      cs_share_running(current_serial);
      if (cs_sampling())
         cs_sample_thread(current_serial);
      cs_append(CS_ESCAPE(CS_TAG_THREAD, current_serial));
   }
}

static void cs_pre_syscall(ThreadId tid, UInt sysno, UWord* args, UInt nArgs)
{
   if ((sysno == __NR_execve || sysno == __NR_execveat) && unrecorded) {
      /* A child that does not write the stream runs another program: name it for the
         note that says what was not recorded. */
      cs_fork_note_unrecorded((const HChar*)args[sysno == __NR_execve ? 0 : 1]);
      return;
   }
   if (sysno == __NR_execve || sysno == __NR_execveat) {
      /* If the exec succeeds, this process's stream stops here (with --trace-children the
         new program's follows): mark where, and send it. */
      if (cs_sampling())
         cs_sample_count();
      if (cs_spatial())
         cs_spatial_position();
      cs_append(CS_ESCAPE(CS_TAG_EXEC, 0));
      cs_write_out();
   }
}

static void cs_post_syscall(ThreadId tid, UInt sysno, UWord* args, UInt nArgs, SysRes res)
{
   if ((sysno == __NR_execve || sysno == __NR_execveat) && !unrecorded)
      /* Still here: the exec failed and this program goes on. */
      cs_append(CS_ESCAPE(CS_TAG_EXEC, 1));
   if (cs_fork_post_syscall(sysno, args, res))
      resume_stream(tid);
   cs_events_post_syscall(tid, sysno, args, res);
}

/*------------------------------------------------------------------*/
/*--- Options, start and end                                     ---*/
/*------------------------------------------------------------------*/

static Bool cs_process_cmd_line_option(const HChar* arg)
{
   if VG_STR_CLO(arg, "--cs-out", clo_out) {}
   else if VG_INT_CLO(arg, "--cs-parent", clo_parent) {}
   else if VG_BOOL_CLO(arg, "--cs-instr", clo_instr) {}
   else if VG_BOOL_CLO(arg, "--cs-keep-env", clo_keep_env) {}
   else if (cs_events_option(arg)) {}
   else if (cs_sample_option(arg)) {}
   else if (cs_spatial_option(arg)) {}
   else if (cs_share_option(arg)) {}
   else if (cs_ring_option(arg)) {}
   else if (cs_roi_option(arg)) {}
   else if (cs_toggle_option(arg)) {}
   else if (cs_calls_option(arg)) {}
   else if (cs_fork_option(arg)) {}
   else
      return False;
   return True;
}

static void cs_print_usage(void)
{
   VG_(printf)(
"    --cs-out=PATH       write the records into PATH (a pipe cachescope reads) [none]\n"
"    --cs-instr=no|yes   write instruction records [yes]\n"
"    --cs-parent=PID     write only when started by process PID [any]\n"
"    --cs-events=no|yes  record the memory map and heap allocations [no]\n"
"    --cs-sample-from=PATH  sample: read the positions to sample from PATH, write only\n"
"                        the reuses of their lines and the count [no sampling]\n"
"    --cs-line-shift=N   log2 of the line size, for sampling [6]\n"
"    --cs-sample-instr=no|yes  the reuse sampler counts instructions [as --cs-instr]\n"
"    --cs-sample-threads-from=PATH  with --cs-sample-from, a reuse sampler per thread too,\n"
"                        its positions (each thread's data references) from PATH [none]\n"
"    --cs-spatial=no|yes  write only the data references to sampled lines (a keyed\n"
"                        hash of the line at most the limit) and their positions [no]\n"
"    --cs-spatial-key=K  the hash's key, decimal or 0x hex [0]\n"
"    --cs-spatial-limit=L  the starting limit, decimal or 0x hex [all lines]\n"
"    --cs-ring=PATH      hand the records over in the shared ring PATH (made by\n"
"                        cachescope), with only tokens in --cs-out [no ring]\n"
"    --cs-keep-env=no|yes  leave VALGRIND_LIB and CACHESCOPE_* in the program's\n"
"                        environment (to compare with another tool run alike) [no]\n"
"    --cs-collect-atstart=no|yes  record from the start, or only between the program's\n"
"                        CACHESCOPE_START() and CACHESCOPE_STOP() (include/cachescope.h) [yes]\n"
"    --cs-toggle-collect=FUNCTION  record only while a function matching FUNCTION\n"
"                        (wildcards * and ?; may be repeated) is on the stack [none]\n"
"    --cs-calls=no|yes   record calls and returns (a shadow stack per thread) [no]\n"
"    --cs-follow-forks=no|yes  a forked child the program waits for writes the stream\n"
"                        until it ends (with --trace-children=yes) [no]\n");
}

static void cs_print_debug_usage(void)
{
   VG_(printf)("    (none)\n");
}

static void cs_post_clo_init(void)
{
   /* The client has not run yet: its initial stack can still be edited (cs_env.c). */
   if (!clo_keep_env)
      cs_strip_client_env();
   /* No chasing, in every mode: with it, VEX merges a small if-then-else arm into the
      straight-line code around it (its branch becomes a select), so the arm's instructions
      are in the block whether or not the program ran them, and a tool records their fetches
      anyway (Cachegrind and lackey count them: 0.15 % more fetches than ran in a static C
      program's start-up, docs/recording.md). Without it every recorded instruction ran, as
      in Callgrind, which turns chasing off too. */
   VG_(clo_vex_control).guest_chase = False;
   cs_roi_post_clo_init();
   if (!cs_spatial_post_clo_init())
      VG_(exit)(1);
   cs_calls_post_clo_init();
   if (clo_out == NULL) {
      VG_(umsg)("cachescope: no --cs-out=PATH given; records are counted, not written\n");
      return;
   }
   /* With --trace-children=yes, Valgrind starts the tool again in every program a traced
      process execs. The recorded process keeps its parent (cachescope) across an exec, and
      its new program continues the stream; a forked child that execs has another parent and
      writes nothing. */
   cs_fork_set_dir(clo_out);
   /* A process that took the stream over from its parent (cs_fork.c) keeps writing it across
      its execs, its parent being the recorded process, not cachescope. */
   Bool heir = clo_parent != 0 && VG_(getppid)() != clo_parent && cs_fork_heir();
   if (clo_parent != 0 && VG_(getppid)() != clo_parent && !heir) {
      cs_events_forked_child();
      unrecorded = True;
      return;
   }
   out_fd = VG_(fd_open)(clo_out, VKI_O_WRONLY | VKI_O_CREAT | VKI_O_TRUNC, 0600);
   if (out_fd < 0) {
      VG_(umsg)("cachescope: cannot open --cs-out=%s\n", clo_out);
      VG_(exit)(1);
   }
   if (cs_ring_requested()) {
      ULong* slot = cs_ring_open(heir ? VG_(getppid)() : clo_parent,
                                 CS_BUF_WORDS + CS_MAX_SEGMENT);
      if (slot == NULL)
         VG_(exit)(1);
      tl_assert(cs_ptr == cs_base);
      use_buffer(slot);
   } else {
      /* A pipe of 1 MiB lets the program run ahead of the reader by one buffer, no more.
         (F_SETPIPE_SZ; ignored where it fails, e.g. a plain file.) */
      VG_(fcntl)(out_fd, VKI_F_SETPIPE_SZ, sizeof cs_buf);
   }
   cs_append(header_word());
   cs_events_start();
   if (cs_sampling())
      cs_sample_start();
}

static void cs_fini(Int exitcode)
{
   if (cs_fork_paused()) {
      /* The program ends while a child it handed the stream to runs: take it back if that
         child has gone, else leave the rest of the stream to it. */
      if (!cs_fork_child_gone())
         return;
      resume_stream(current_tid);
   }
   /* The end record: how many words came before it, so that the reader can tell a
      complete stream from one cut short (a killed Valgrind never writes it). */
   cs_events_fini();
   if (cs_sampling() && out_fd >= 0)
      cs_sample_count();
   if (cs_spatial() && out_fd >= 0) {
      cs_share_fini();
      cs_spatial_position();
   }
   ULong before = words_written + (cs_ptr - cs_base);
   cs_append(CS_ESCAPE(CS_TAG_END, before & CS_ARG_MASK));
   finishing = True;
   cs_write_out();
   if (out_fd >= 0)
      VG_(close)(out_fd);
}

static void cs_pre_clo_init(void)
{
   VG_(details_name)            ("cachescope");
   VG_(details_version)         (NULL);
   VG_(details_description)     ("memory references as binary records for cachescope");
   VG_(details_copyright_author)("Copyright (C) 2026 the cachescope authors; GPL-2.0-or-later.");
   VG_(details_bug_reports_to)  ("the cachescope issue tracker");
   VG_(details_avg_translation_sizeB)(275);

   VG_(basic_tool_funcs)        (cs_post_clo_init, cs_instrument, cs_fini);
   VG_(needs_command_line_options)(cs_process_cmd_line_option, cs_print_usage,
                                   cs_print_debug_usage);
   VG_(needs_syscall_wrapper)   (cs_pre_syscall, cs_post_syscall);
   VG_(track_start_client_code) (cs_start_client_code);
   VG_(track_pre_thread_ll_create)(cs_thread_created);
   VG_(track_pre_deliver_signal)(cs_pre_deliver_signal);
   VG_(track_post_deliver_signal)(cs_post_deliver_signal);
   VG_(atfork)                  (cs_pre_fork, cs_fork_parent_side, cs_fork_child);
   cs_events_pre_clo_init();
}

VG_DETERMINE_INTERFACE_VERSION(cs_pre_clo_init)
