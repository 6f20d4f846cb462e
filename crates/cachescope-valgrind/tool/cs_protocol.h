/* The record stream and client requests shared by the tool (cs_main.c, cs_events.c) and
 * its preload library (cs_preload.c). The reader is crates/cachescope/src/record/tool.rs;
 * docs/recording.md describes the format.
 *
 * Copyright (C) 2026 the cachescope authors. SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef CS_PROTOCOL_H
#define CS_PROTOCOL_H

/* Version of the record stream, in the header escape. */
#define CS_VERSION 5

/* Escapes: a word whose bits 60-63 (the tag) are not 0. Bits 0-47 are its argument. */
#define CS_ARG_MASK 0x0000FFFFFFFFFFFFULL
#define CS_ESCAPE(tag, arg) (((ULong)(tag) << 60) | ((ULong)(arg) & CS_ARG_MASK))

/* First word of a stream: argument = CS_VERSION | instruction records on << 16 | sampled
   capture << 17 (then references are counted, not written: only the escapes below)
   | spatial sampling << 18 (only the references to sampled lines are written: CS_TAG_SAMPLE
   and CS_TAG_POSITION below, cs_spatial.c)
   | call events on << 19 (CS_TAG_ENTER and CS_TAG_LEAVE below, cs_calls.c; with spatial
   sampling each call word follows a position record, when the counts changed, and is
   followed by one word: the running thread's last instruction fetch, 0 if none yet)
   | promoted lines << 20 (with spatial sampling: CS_TAG_SAMPLE records whose reference word
   has bit 60, 61 or 62 set, cs_share.h). */
#define CS_TAG_HEADER 0xE
/* The running thread changed: argument = Valgrind's thread id (1 = the main thread). */
#define CS_TAG_THREAD 0x1
/* An event: argument bits 0-15 = number of payload words that follow, 16-23 = CS_EV_*. */
#define CS_TAG_EVENT  0x2
/* Argument 0: the program calls execve; if that succeeds, this program's stream ends here
   (the new program's stream follows, from a new header, with --trace-children=yes).
   Argument 1: the execve failed and this program goes on. */
#define CS_TAG_EXEC   0x3
/* Sampled capture: a watchpoint fired. Two words follow: the sampled reference's position
   and its line's next reference's (1-based counts of the counted references). Argument 0:
   the whole stream's sampler; a thread's number: that thread's sampler (--cs-sample-threads-
   from, cs_sample_threads.c), its positions counted in the thread's own data references.
   Argument CS_REUSE_MEASURED | d (--cs-sample-windows=yes, cs_windows.c): the whole stream's
   sampler, the reuse's window measured: d distinct lines between its two references. */
#define CS_TAG_REUSE  0x4
#define CS_REUSE_MEASURED (1ULL << 47)
/* The positions pipe of sampled capture (--cs-sample-from, cs_sample.c; not a record stream,
   written by crates/cachescope/src/record/tool_sampled.rs's Positions::whole): pairs of
   words, a sampled position (increasing) and the first reuse position at which its sample is
   no longer kept by cachescope's thinning (2^64 − 1: never); a watch firing at or past it
   writes no CS_TAG_REUSE record. (--cs-sample-threads-from's pipe: single positions.) */
/* Sampled capture: one word follows, the references counted so far (before an exec record
   and before the end record); argument as CS_TAG_REUSE's, a record per thread. */
#define CS_TAG_COUNT  0x5
/* Only in the pipe of a ring (--cs-ring, cs_ring.c): the next buffer of the stream is in the
   ring. Argument bits 0-23 = its words, 24-39 = its slot. The stream is the buffers' words in
   token order; tokens are not words of the stream. */
#define CS_TAG_SLOT   0x6
/* A run of instruction records, defined once (CS_TAG_RUNDEF) and named by its id here:
   argument = the run's id. Stands for the run's instruction records, in order. */
#define CS_TAG_RUN    0x7
/* The definition of the next run: argument = number of payload words (1 + instructions).
   Payload: the run's id (one more than the last definition's, from 0 in each program's
   stream), then one instruction record (kind 3: address and length) per instruction.
   Written when a block is translated, so before any CS_TAG_RUN that names it. */
#define CS_TAG_RUNDEF 0x8
/* Call events (--cs-calls=yes, cs_calls.c): the running thread entered a function.
   Argument = the key: the address control arrived at (a call's target, a function's first
   instruction); bits 48-50 of the word = CS_ENTER_*. For a signal, the key is its number. */
#define CS_TAG_ENTER  0x9
/* Call events: the running thread left its top `argument` frames (a return, or a longjmp
   past several). Argument 0: every thread's frames are gone (recording restarted). */
#define CS_TAG_LEAVE  0xA
/* Kinds of CS_TAG_ENTER. */
#define CS_ENTER_CALL   0 /* a call instruction */
#define CS_ENTER_JUMP   1 /* a jump into another function's first instruction (tail call) */
#define CS_ENTER_SIGNAL 2 /* a signal handler is about to run (a boundary, not a function) */
#define CS_ENTER_ROOT   3 /* a thread's bottom frame: the code it first ran, or returned to */
#define CS_ENTER_PLT    4 /* a call into a PLT stub: not a function (Callgrind's --skip-plt) */
/* Following a forked child (cs_fork.c, --cs-follow-forks=yes). Argument CS_FORK_HANDED: the
   process that writes the stream forks, and its child writes it from here on, as a stream of
   its own (a header first, its threads numbered from 1, an end record last); the parent
   pauses. CS_FORK_FAILED: the fork failed, no child follows. CS_FORK_RESUMED | n << 2: the
   child has gone and the parent goes on, having made n records while paused (not recorded);
   the run definitions and events it made meanwhile follow. */
#define CS_TAG_FORK   0xD
#define CS_FORK_HANDED  0
#define CS_FORK_FAILED  1
#define CS_FORK_RESUMED 2
/* Spatial sampling (--cs-spatial=yes, cs_spatial.c): a data reference to a sampled line.
   Argument = its pc (the instruction's address). Two words follow: the reference word (as
   in a full stream), then the loads (bits 0-15), stores (16-31), modifies (32-47) and
   instructions (48-63) of the full stream between the previous sample or position record and
   this reference. The counts before a reference are its position (a data reference's own
   instruction comes before it). */
#define CS_TAG_SAMPLE 0xB
/* Spatial sampling: four words follow, the loads, stores, modifies and instructions counted
   so far. Written before each event, thread switch, exec record and the end record (when the
   counts changed since the last record), and before a sample whose distances would not fit. */
#define CS_TAG_POSITION 0xC
/* Last word of a complete stream: argument = number of words before it. */
#define CS_TAG_END    0xF

/* Event payloads (words):
     CS_EV_ALLOC: address, size, then return addresses of the call path (innermost first)
     CS_EV_FREE:  address
     CS_EV_MAP:   start, end (one past), file offset, perms (4 bytes "rwxp"), name length
                  in bytes, then the name in 8-byte words, zero-padded
     CS_EV_HUGE:  start, end (one past), bytes of the region in transparent huge pages
                  (/proc/self/smaps's AnonHugePages, written at exit) */
#define CS_EV_ALLOC 1
#define CS_EV_FREE  2
#define CS_EV_MAP   3
#define CS_EV_HUGE  4

/* At most this many return addresses per allocation (as the LD_PRELOAD interposer). */
#define CS_MAX_FRAMES 12

/* Client requests from the preload library's allocator wrappers ('C','S'). */
#define CS_REQ_BASE   (((unsigned int)'C' << 24) | ((unsigned int)'S' << 16))
#define CS_REQ_ALLOC  (CS_REQ_BASE + 1) /* address, size */
#define CS_REQ_FREE   (CS_REQ_BASE + 2) /* address */
/* From include/cachescope.h's CACHESCOPE_START() and CACHESCOPE_STOP(): the region recorded. */
#define CS_REQ_START  (CS_REQ_BASE + 3)
#define CS_REQ_STOP   (CS_REQ_BASE + 4)

#endif
