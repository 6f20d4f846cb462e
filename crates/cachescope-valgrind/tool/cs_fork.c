/* Following a forked child the recorded program waits for (--cs-follow-forks=yes, which
 * cachescope gives with --trace-children).
 *
 * Copyright (C) 2026 the cachescope authors. SPDX-License-Identifier: GPL-2.0-or-later
 * (see ../LICENSE; it links Valgrind's core).
 *
 * Why: a shell runs a command by forking a child that execs it, then waits:
 * `record --trace-children -- sh -c 'sqlite3 :memory: < s.sql'` recorded the shell's few
 * hundred thousand references and none of sqlite3's. Valgrind follows the child (its tool
 * starts again in the exec'd program), but one stream cannot hold two processes running at
 * once, and a forked child never wrote into it.
 *
 * How: the stream has one writer at a time. The process that holds it hands it to the first
 * child it forks: it writes a FORK mark (CS_TAG_FORK, argument 0) and flushes, then pauses
 * (cs_fork_parent) while the child, which inherited the pipe and the ring mapping, writes a
 * stream of its own into it: a header, its references, an exec mark and its program's stream
 * if it execs (its pid is left in the recording's directory as `heir-PID`, so that the tool
 * started in the exec'd program knows it writes), and an end record when it exits. When the
 * parent's wait for that child returns (wait4 or waitid: the child is gone, every word of it
 * written), the parent writes the RESUME mark (argument 2, with the references it made while
 * paused, which are dropped, in bits 2-47) and the run definitions and events it made while
 * paused (kept: later references name those runs and need those blocks), and goes on. A child
 * may hand the stream on to its own child the same way. A fork while the stream is away, or
 * by a process that does not hold it, is not followed: such a child that execs appends the
 * program's path to the directory's `children` file, which cachescope reads at the end to
 * name what was not recorded (without --trace-children too). A failed fork writes argument 1
 * (no child follows). docs/recording.md describes the marks; the reader is
 * crates/cachescope/src/record/tool/escape.rs.
 */

#include "pub_tool_basics.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_vki.h"
#include "pub_tool_vkiscnums.h"

#include "cs_events.h"
#include "cs_fork.h"
#include "cs_protocol.h"

/* In Valgrind's core (pub_core_libcsignal.h) but not in the tool headers; linked statically
   from the same Valgrind. */
extern Int VG_(kill)(Int pid, Int signo);

static Bool clo_follow = False;
/* The recording's directory, with a trailing slash ("" when --cs-out names no directory). */
static HChar dir[4096] = "";

/* A fork that hands the stream over is under way (set before it, in both processes). */
static Bool handing = False;
/* This process waits for `heir` (0 until the fork returns its pid) to give the stream back. */
static Bool paused = False;
static Int heir = 0;
/* References made while paused (dropped), and the run definitions and events kept. */
static ULong dropped = 0;
static ULong* held = NULL;
static SizeT held_len = 0, held_cap = 0;

Bool cs_fork_option(const HChar* arg)
{
   if VG_BOOL_CLO(arg, "--cs-follow-forks", clo_follow) {}
   else
      return False;
   return True;
}

void cs_fork_set_dir(const HChar* out_path)
{
   const HChar* slash = VG_(strrchr)(out_path, '/');
   SizeT n = slash == NULL ? 0 : (SizeT)(slash - out_path) + 1;
   if (n >= sizeof dir - 32)
      n = 0;
   VG_(memcpy)(dir, out_path, n);
   dir[n] = '\0';
}

/* `dir` + name into `path`. */
static void in_dir(HChar* path, SizeT size, const HChar* name)
{
   VG_(snprintf)(path, (Int)size, "%s%s", dir, name);
}

Bool cs_fork_pre(Bool holding)
{
   if (!clo_follow || !holding || paused)
      return False;
   handing = True;
   cs_append(CS_ESCAPE(CS_TAG_FORK, CS_FORK_HANDED));
   return True;
}

Bool cs_fork_child_takes_over(void)
{
   if (!handing)
      return False;
   handing = False;
   /* A mark for the tool started by an exec of this process: it goes on writing. */
   HChar path[4200];
   HChar name[64];
   VG_(sprintf)(name, "heir-%d", VG_(getpid)());
   in_dir(path, sizeof path, name);
   Int fd = VG_(fd_open)(path, VKI_O_WRONLY | VKI_O_CREAT | VKI_O_TRUNC, 0600);
   if (fd >= 0)
      VG_(close)(fd);
   return True;
}

void cs_fork_parent(void)
{
   if (!handing)
      return;
   handing = False;
   paused = True;
   heir = 0;
}

Bool cs_fork_paused(void)
{
   return paused;
}

static void keep(const ULong* words, SizeT n)
{
   if (held_len + n > held_cap) {
      held_cap = 2 * (held_len + n) + 1024;
      held = VG_(realloc)("cs.fork.held", held, held_cap * sizeof(ULong));
   }
   VG_(memcpy)(held + held_len, words, n * sizeof(ULong));
   held_len += n;
}

void cs_fork_hold(const ULong* words, SizeT n)
{
   for (SizeT i = 0; i < n;) {
      ULong w = words[i];
      UInt tag = (UInt)(w >> 60);
      SizeT len = 1;
      if (tag == CS_TAG_RUNDEF || tag == CS_TAG_EVENT)
         len = 1 + (SizeT)(w & 0xFFFF);
      if (i + len > n)
         len = n - i; /* cannot happen: escapes are appended whole */
      if (tag == CS_TAG_RUNDEF || tag == CS_TAG_EVENT)
         keep(words + i, len);
      else if (tag == 0 || tag == CS_TAG_RUN)
         dropped++;
      i += len;
   }
}

/* Whether a wait's outcome says `heir` is gone (exited or killed, not stopped). */
static Bool heir_ended(UInt sysno, UWord* args, SysRes res)
{
   if (sysno == __NR_wait4) {
      if ((Int)sr_Res(res) != heir)
         return False;
      const Int* status = (const Int*)args[1];
      if (status == NULL)
         return True;
      Int s = *status;
      return (s & 0x7f) != 0x7f && s != 0xffff; /* not stopped, not continued */
   }
   if (sysno == __NR_waitid && args[2] != 0) {
      const Int* info = (const Int*)args[2]; /* siginfo: signo, errno, code, pad, pid */
      Int code = info[2];
      return info[4] == heir && (code == 1 || code == 2 || code == 3); /* CLD_EXITED..DUMPED */
   }
   return False;
}

Bool cs_fork_post_syscall(UInt sysno, UWord* args, SysRes res)
{
   Bool forked = sysno == __NR_clone || sysno == __NR_fork || sysno == __NR_vfork;
   if (forked && handing && sr_isError(res)) {
      /* The fork failed: no child takes the stream. */
      handing = False;
      cs_append(CS_ESCAPE(CS_TAG_FORK, CS_FORK_FAILED));
      return False;
   }
   if (forked && paused && heir == 0 && !sr_isError(res) && sr_Res(res) > 0) {
      heir = (Int)sr_Res(res);
      return False;
   }
   if (paused && heir > 0 && !sr_isError(res)
       && (sysno == __NR_wait4 || sysno == __NR_waitid))
      return heir_ended(sysno, args, res);
   return False;
}

void cs_fork_resume(void)
{
   paused = False;
   heir = 0;
   ULong n = dropped & (CS_ARG_MASK >> 2);
   dropped = 0;
   cs_append(CS_ESCAPE(CS_TAG_FORK, CS_FORK_RESUMED | (n << 2)));
   for (SizeT i = 0; i < held_len; i++)
      cs_append(held[i]);
   held_len = 0;
}

Bool cs_fork_child_gone(void)
{
   return heir == 0 || VG_(kill)(heir, 0) != 0;
}

Bool cs_fork_heir(void)
{
   HChar path[4200];
   HChar name[64];
   VG_(sprintf)(name, "heir-%d", VG_(getpid)());
   in_dir(path, sizeof path, name);
   Int fd = VG_(fd_open)(path, VKI_O_RDONLY, 0);
   if (fd < 0)
      return False;
   VG_(close)(fd);
   return True;
}

void cs_fork_note_unrecorded(const HChar* path)
{
   if (dir[0] == '\0' || path == NULL)
      return;
   HChar file[4200];
   in_dir(file, sizeof file, "children");
   Int fd = VG_(fd_open)(file, VKI_O_WRONLY | VKI_O_CREAT | VKI_O_APPEND, 0600);
   if (fd < 0)
      return;
   /* One short write: appended whole, whichever children write at once. */
   HChar line[1024];
   Int n = VG_(snprintf)(line, sizeof line, "%s\n", path);
   if (n > (Int)sizeof line - 1)
      n = (Int)sizeof line - 1;
   VG_(write)(fd, line, n);
   VG_(close)(fd);
}
