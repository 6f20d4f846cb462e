/* Following a forked child that the recorded program waits for (cs_fork.c).
 * Copyright (C) 2026 the cachescope authors. SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef CS_FORK_H
#define CS_FORK_H

#include "pub_tool_basics.h"

Bool cs_fork_option(const HChar* arg);
/* The recording's directory (where --cs-out's pipe is): the files below go there. */
void cs_fork_set_dir(const HChar* out_path);

/* Before a fork by the process that holds the stream: True when the child is to take it
   (--cs-follow-forks=yes); the FORK mark is then in the buffer, to be flushed before the
   fork. */
Bool cs_fork_pre(Bool holding);
/* In the child, after the fork: True when it takes the stream. */
Bool cs_fork_child_takes_over(void);
/* In the parent, after the fork: it pauses if its child took the stream. */
void cs_fork_parent(void);
/* True while the parent waits for its child to give the stream back. */
Bool cs_fork_paused(void);
/* While paused: keeps the run definitions and events of `n` buffered words (dropping the
   references) for when the stream comes back. */
void cs_fork_hold(const ULong* words, SizeT n);
/* After a syscall: the child's pid, a failed fork, or the child's end (the stream comes back:
   returns True, and the caller calls cs_fork_resume). */
Bool cs_fork_post_syscall(UInt sysno, UWord* args, SysRes res);
/* Appends the mark that the parent goes on, then what it held while paused. */
void cs_fork_resume(void);
/* At the parent's exit while paused: True if the stream can be taken back (the child has
   gone), False if the child still writes it. */
Bool cs_fork_child_gone(void);

/* Started after an exec by a process that took the stream from its parent (its pid is noted
   in the recording's directory): it writes the stream. */
Bool cs_fork_heir(void);
/* A process that does not write the stream is about to exec `path`: its name goes into the
   recording's list of children not recorded. */
void cs_fork_note_unrecorded(const HChar* path);

#endif
