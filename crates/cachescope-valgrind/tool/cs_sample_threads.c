/* A reuse sampler per thread (StatCache's, as cs_sample.c's): each thread's positions are its
 * own data references, so each thread's reuse distances count its own references, as the
 * in-process sampler of each thread of a trace counts them (crates/cachescope/src/report/
 * sampled/thread_reuse.rs).
 *
 * Copyright (C) 2026 the cachescope authors. SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Every thread samples the same positions (the seed's draws; cachescope's Sampler::decaying:
 * every reference up to a cap, then fewer), which cachescope writes in order into the pipe
 * --cs-sample-threads-from names. The tool keeps the positions read so far in one array and
 * each thread its index in it, so a thread that starts late starts at the first position.
 * Only data references are counted (the tool refuses this sampler with instructions counted),
 * so the running thread's count is the whole count less a base (the references the other
 * threads made before it ran), and its next position is one of the whole count's,
 * cs_thread_at: the generated code compares the count with the nearer of it and the whole
 * stream's next position, and counts nothing more. A thread switch saves the thread's count
 * and sets the next thread's base. A thread's
 * watchpoint fires at its own next reference to the line: a CS_TAG_REUSE record whose
 * argument is the thread's serial, with the two positions; at an exec and at the end, a
 * CS_TAG_COUNT record per thread (argument the serial) gives its count.
 */

#include "pub_tool_basics.h"
#include "pub_tool_hashtable.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_vki.h"

#include "cs_events.h"
#include "cs_protocol.h"
#include "cs_sample_threads.h"

static const HChar* clo_threads_from = NULL; /* --cs-sample-threads-from=PATH */

ULong cs_thread_at = NEVER;
/* The whole count less the running thread's. */
static ULong base = 0;

typedef struct _TWatch {
   struct _TWatch* next;
   UWord line; /* the hash table's key */
   ULong at;   /* the sampled position, in the thread's references */
} TWatch;

typedef struct {
   ULong pos;   /* data references counted (while it runs: the count less `base`) */
   ULong next;  /* the next sampled position */
   ULong index; /* of `next` in `drawn` */
   VgHashTable* watches; /* NULL: the thread has not run yet */
} Thread;

/* By serial (0 unused); `running` is the serial that runs. */
static Thread* threads = NULL;
static UInt threads_size = 0;
static UInt running = 0;

/* The positions read so far, shared by all threads. */
static Int from_fd = -1;
static ULong* drawn = NULL;
static ULong drawn_have = 0, drawn_size = 0;

Bool cs_sample_threads_option(const HChar* arg)
{
   if VG_STR_CLO(arg, "--cs-sample-threads-from", clo_threads_from) {}
   else
      return False;
   return True;
}

Bool cs_sample_threads(void)
{
   return clo_threads_from != NULL;
}

void cs_sample_threads_start(void)
{
   if (clo_threads_from == NULL)
      return;
   from_fd = VG_(fd_open)(clo_threads_from, VKI_O_RDONLY, 0);
   if (from_fd < 0) {
      VG_(umsg)("cachescope: cannot open --cs-sample-threads-from=%s\n", clo_threads_from);
      VG_(exit)(1);
   }
}

/* The position at `index` of the draws; NEVER past the end of a closed pipe. */
static ULong drawn_at(ULong index)
{
   while (index >= drawn_have) {
      if (from_fd < 0)
         return NEVER;
      if (drawn_have + 512 > drawn_size) {
         drawn_size = drawn_size == 0 ? 4096 : 2 * drawn_size;
         drawn = VG_(realloc)("cachescope.thread_positions", drawn, drawn_size * sizeof(ULong));
      }
      /* Whole words only: a pipe may return part of one. */
      SizeT got = 0;
      HChar* to = (HChar*)(drawn + drawn_have);
      while (got == 0 || got % sizeof(ULong) != 0) {
         Int n = VG_(read)(from_fd, to + got, 512 * sizeof(ULong) - got);
         if (n <= 0)
            break;
         got += n;
      }
      if (got < sizeof(ULong)) {
         VG_(close)(from_fd);
         from_fd = -1;
      }
      drawn_have += got / sizeof(ULong);
   }
   return drawn[index];
}

/* The thread's next position in the whole count. */
static void set_at(const Thread* t)
{
   cs_thread_at = t->next == NEVER ? NEVER : t->next + base;
   cs_sample_next_changed();
}

void cs_sample_thread(UInt serial)
{
   if (clo_threads_from == NULL || serial == running)
      return;
   ULong pos = cs_sample_position();
   if (running != 0)
      threads[running].pos = pos - base;
   if (serial >= threads_size) {
      UInt size = threads_size == 0 ? 64 : threads_size;
      while (size <= serial)
         size *= 2;
      threads = VG_(realloc)("cachescope.threads", threads, size * sizeof(Thread));
      VG_(memset)(threads + threads_size, 0, (size - threads_size) * sizeof(Thread));
      threads_size = size;
   }
   Thread* t = &threads[serial];
   if (t->watches == NULL) {
      t->watches = VG_(HT_construct)("cachescope.thread_watches");
      t->next = drawn_at(0);
   }
   running = serial;
   base = pos - t->pos;
   set_at(t);
}

void cs_sample_thread_hit(UWord line, ULong pos)
{
   if (running == 0)
      return;
   Thread* t = &threads[running];
   ULong own = pos - base;
   UInt slot = slot_of(line);
   if (cs_filter[slot] != 0) {
      TWatch* w = VG_(HT_remove)(t->watches, line);
      if (w != NULL) {
         cs_append(CS_ESCAPE(CS_TAG_REUSE, running));
         cs_append(w->at);
         cs_append(own);
         VG_(free)(w);
         cs_filter_remove(slot);
      }
   }
   if (own == t->next) {
      TWatch* w = VG_(malloc)("cachescope.thread_watch", sizeof *w);
      w->line = line;
      w->at = own;
      VG_(HT_add_node)(t->watches, w);
      cs_filter_add(slot);
      ULong p = drawn_at(++t->index);
      /* Positions increase; anything else means the pipe is not cachescope's. */
      tl_assert(p > own);
      t->next = p;
      set_at(t);
   }
}

void cs_sample_threads_count(void)
{
   if (clo_threads_from == NULL)
      return;
   if (running != 0)
      threads[running].pos = cs_sample_position() - base;
   for (UInt s = 1; s < threads_size; s++) {
      if (threads[s].pos > 0) {
         cs_append(CS_ESCAPE(CS_TAG_COUNT, s));
         cs_append(threads[s].pos);
      }
   }
}

void cs_sample_threads_forked_child(void)
{
   /* A forked child must not take positions meant for the parent. */
   if (from_fd >= 0)
      VG_(close)(from_fd);
   from_fd = -1;
   cs_thread_at = NEVER;
   for (UInt s = 1; s < threads_size; s++)
      threads[s].next = NEVER;
   /* Positions already read are the parent's too: none is sampled again. */
   drawn_have = 0;
}
