/* Allocation and memory-map events, written into the record stream (see cs_protocol.h).
 *
 * Copyright (C) 2026 the cachescope authors. SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Heap events come from the preload library (cs_preload.c), whose wrappers call the C
 * library's own allocator and then tell the tool with a client request: the program keeps
 * its real allocator, addresses and references (Valgrind's replacement allocator would
 * change every heap address and remove the allocator's references from the trace). The
 * wrappers' own instructions are not recorded. The memory map is written when the program
 * first runs, on every mapping of a file, and at exit.
 */

#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_aspacemgr.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_machine.h"
#include "pub_tool_options.h"
#include "pub_tool_stacktrace.h"
#include "pub_tool_threadstate.h"
#include "pub_tool_vki.h"
#include "pub_tool_vkiscnums.h"

#include "cs_protocol.h"
#include "cs_events.h"
#include "cs_instrument.h"
#include "cs_spatial.h"

static Bool clo_events = False;
static Bool started = False;
static Bool first_run_done = False;
/* The executable range of the preload library, once it is mapped. */
static Addr own_lo = 0, own_hi = 0;
/* The main thread's stack, taken when the program first runs (at exit the thread is gone). */
static Addr stack_lo = 0, stack_hi = 0;

#define OWN_NAME "vgpreload_cachescope-"

Bool cs_events_option(const HChar* arg)
{
   if VG_BOOL_CLO(arg, "--cs-events", clo_events) {}
   else
      return False;
   return True;
}

static void write_event(UInt kind, const ULong* words, UInt n)
{
   if (cs_spatial())
      cs_spatial_position();
   cs_append(CS_ESCAPE(CS_TAG_EVENT, n | (kind << 16)));
   for (UInt i = 0; i < n; i++)
      cs_append(words[i]);
}

static void write_map(Addr start, Addr end, ULong offset, const HChar* perms, const HChar* name)
{
   SizeT len = name ? VG_(strlen)(name) : 0;
   if (len > 4096)
      len = 4096;
   ULong head[5] = { start, end, offset, 0, len };
   if (cs_spatial())
      cs_spatial_position();
   VG_(memcpy)(&head[3], perms, 4);
   cs_append(CS_ESCAPE(CS_TAG_EVENT, (5 + (len + 7) / 8) | (CS_EV_MAP << 16)));
   for (Int i = 0; i < 5; i++)
      cs_append(head[i]);
   cs_append_bytes(name, len);
}

static void write_segment(NSegment const* seg)
{
   HChar perms[4] = { seg->hasR ? 'r' : '-', seg->hasW ? 'w' : '-', seg->hasX ? 'x' : '-', 'p' };
   const HChar* name = seg->kind == SkFileC ? VG_(am_get_filename)(seg) : NULL;
   write_map(seg->start, seg->end + 1, seg->kind == SkFileC ? seg->offset : 0, perms, name);
   if (name && seg->hasX && VG_(strstr)(name, OWN_NAME)) {
      own_lo = seg->start;
      own_hi = seg->end + 1;
   }
}

/* The whole client map: its files and anonymous regions, and the main thread's stack
   (Valgrind allocates it, so it is anonymous to the kernel) as "[stack]". */
static void write_whole_map(void)
{
   Addr starts[4096];
   Int n = VG_(am_get_segment_starts)(SkFileC | SkAnonC | SkShmC, starts, 4096);
   if (n < 0)
      n = 0; /* more than 4096 segments: only the later mappings are logged */
   for (Int i = 0; i < n; i++) {
      NSegment const* seg = VG_(am_find_nsegment)(starts[i]);
      if (seg)
         write_segment(seg);
   }
   if (stack_hi > stack_lo)
      write_map(stack_lo, stack_hi, 0, "rw-p", "[stack]");
}

static void new_mem_mmap(Addr a, SizeT len, Bool rr, Bool ww, Bool xx, ULong di_handle)
{
   if (!clo_events || !started)
      return;
   NSegment const* seg = VG_(am_find_nsegment)(a);
   if (seg && seg->kind == SkFileC)
      write_segment(seg);
}

static Bool handle_client_request(ThreadId tid, UWord* arg, UWord* ret)
{
   if (arg[0] == CS_REQ_START || arg[0] == CS_REQ_STOP) {
      *ret = 0;
      cs_set_collecting(arg[0] == CS_REQ_START);
      return True;
   }
   if (arg[0] != CS_REQ_ALLOC && arg[0] != CS_REQ_FREE)
      return False;
   *ret = 0;
   if (!clo_events)
      return True;
   if (arg[0] == CS_REQ_FREE) {
      ULong w = arg[1];
      write_event(CS_EV_FREE, &w, 1);
      return True;
   }
   /* Frame 0 is the wrapper itself; frame 1 the return address into the allocator's
      caller, where the interposer's stacks start too. */
   Addr ips[CS_MAX_FRAMES + 1];
   UInt n = VG_(get_StackTrace)(tid, ips, CS_MAX_FRAMES + 1, NULL, NULL, 0);
   ULong words[2 + CS_MAX_FRAMES];
   words[0] = arg[1];
   words[1] = arg[2];
   UInt k = 2;
   /* Valgrind gives frames above the first as return address - 1 (inside the call); the
      event log holds return addresses, as the interposer writes them. */
   for (UInt i = 1; i < n; i++) {
      /* Past main, frame-pointer unwinding can step into data: stop at the first frame
         that is not in the program's code. */
      NSegment const* seg = VG_(am_find_nsegment)(ips[i]);
      if (!seg || !seg->hasX || (seg->kind != SkFileC && seg->kind != SkAnonC))
         break;
      words[k++] = ips[i] + 1;
   }
   write_event(CS_EV_ALLOC, words, k);
   return True;
}

void cs_events_pre_clo_init(void)
{
   VG_(needs_client_requests)(handle_client_request);
   VG_(track_new_mem_mmap)(new_mem_mmap);
}

void cs_events_start(void)
{
   started = True;
}

void cs_events_first_run(void)
{
   if (first_run_done)
      return;
   first_run_done = True;
   Addr max = VG_(thread_get_stack_max)(1);
   SizeT size = VG_(thread_get_stack_size)(1);
   if (max != 0 && size != 0 && size <= max) {
      stack_lo = max + 1 - size;
      stack_hi = max + 1;
   }
   if (clo_events)
      write_whole_map();
}

/* One line of /proc/self/smaps: a mapping's header sets the region (kept only when it is the
   client's), its AnonHugePages line reports the region's transparent huge pages. */
static void smaps_line(const HChar* line, Addr* start, Addr* end)
{
   HChar* rest;
   ULong lo = VG_(strtoull16)(line, &rest);
   if (rest != line && *rest == '-') {
      ULong hi = VG_(strtoull16)(rest + 1, NULL);
      NSegment const* seg = VG_(am_find_nsegment)(lo);
      Bool client = seg && (seg->kind == SkAnonC || seg->kind == SkFileC || seg->kind == SkShmC);
      *start = client ? lo : 0;
      *end = client ? hi : 0;
      return;
   }
   if (*end > *start && VG_(strncmp)(line, "AnonHugePages:", 14) == 0) {
      const HChar* n = line + 14;
      while (*n == ' ')
         n++;
      ULong kb = VG_(strtoll10)(n, NULL);
      ULong words[3] = { *start, *end, kb * 1024 };
      if (kb > 0)
         write_event(CS_EV_HUGE, words, 3);
   }
}

/* The client's regions backed by transparent huge pages at exit. Valgrind runs the client in
   its own process, at the client's addresses, so /proc/self/smaps's entries for the client's
   segments are the client's: what the kernel gave them (its THP setting, the client's
   madvise) is what a native run gets. Only a count per region: not which addresses. */
static void write_huge_pages(void)
{
   SysRes fd = VG_(open)("/proc/self/smaps", VKI_O_RDONLY, 0);
   if (sr_isError(fd))
      return;
   static HChar buf[16384];
   HChar line[256];
   Int len = 0, n;
   Addr start = 0, end = 0;
   while ((n = VG_(read)(sr_Res(fd), buf, sizeof buf)) > 0) {
      for (Int i = 0; i < n; i++) {
         if (buf[i] != '\n') {
            if (len < (Int)sizeof line - 1)
               line[len++] = buf[i];
            continue;
         }
         line[len] = 0;
         len = 0;
         smaps_line(line, &start, &end);
      }
   }
   VG_(close)(sr_Res(fd));
}

void cs_events_fini(void)
{
   if (clo_events) {
      write_whole_map();
      write_huge_pages();
   }
}

void cs_events_forked_child(void)
{
   clo_events = False;
}

void cs_events_post_syscall(ThreadId tid, UInt sysno, UWord* args, SysRes res)
{
   /* mprotect can make a mapping executable after it was mapped (the dynamic loader maps
      libraries read-only first): log the file mapping again with its new permissions. */
   if (!clo_events || !started || sysno != __NR_mprotect || sr_isError(res))
      return;
   NSegment const* seg = VG_(am_find_nsegment)(args[0]);
   if (seg && seg->kind == SkFileC)
      write_segment(seg);
}

Bool cs_events_is_own_code(Addr a)
{
   return a >= own_lo && a < own_hi;
}
