/* The shared-memory ring through which cachescope's Valgrind tool hands its buffers to
 * cachescope (--cs-ring=PATH), instead of writing them into the pipe.
 *
 * Copyright (C) 2026 the cachescope authors. SPDX-License-Identifier: GPL-2.0-or-later
 * (see ../LICENSE; it links Valgrind's core).
 *
 * Why: a pipe copies every byte twice in the kernel and allocates a page per 4 KiB; on the
 * speed row of docs/recording.md that cost more CPU than Valgrind itself. Here the generated
 * code writes its records straight into a slot of memory both processes map, and only an
 * 8-byte token per full slot (about one per 128 Ki records) goes through the pipe, which
 * keeps the stream's order, its end (EOF when the tool exits or dies) and the reader's
 * blocking read.
 *
 * Layout (cachescope creates the file and fills the header; docs/recording.md):
 *   offset  0  u64 magic "CSRING2\0"
 *           8  u32 slots          12  u32 words per slot
 *          16  u32 produced: buffers the tool has put (it alone writes this)
 *          20  u32 consumed: buffers the reader has finished (it alone writes this; the
 *                  tool sleeps on it with FUTEX_WAIT when every slot is full)
 *          24  u32 closed: the reader stopped reading (the tool then writes nothing)
 *          28  u32 waiting: the tool is asleep on `consumed` (the reader then wakes it)
 *          32  u64 limit: the spatial sampler's hash limit, lowered by the reader as it
 *                  filters (the fixed-size variant); the tool reads it after each put
 *   4096 + i * words per slot * 8: slot i
 * Buffer k is filled in slot k % slots, so the program runs ahead of cachescope by at most
 * `slots` buffers. Its token is CS_ESCAPE(CS_TAG_SLOT, words | slot << 24).
 */

#include "pub_tool_basics.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_options.h"
#include "pub_tool_vki.h"
#include "pub_tool_vkiscnums.h"

#include "cs_protocol.h"
#include "cs_ring.h"

/* In Valgrind's core (pub_core_aspacemgr.h, pub_core_syscall.h) but not in the tool headers;
   linked statically from the same Valgrind. Other out-of-tree tools share memory with their
   readers the same way. On amd64 extra arguments of a shorter VG_(do_syscall) are ignored. */
extern SysRes VG_(am_shared_mmap_file_float_valgrind)(SizeT length, UInt prot, Int fd,
                                                      Off64T offset);
extern SysRes VG_(do_syscall)(UWord sysno, UWord a1, UWord a2, UWord a3, UWord a4, UWord a5,
                              UWord a6, UWord a7, UWord a8);

#define RING_MAGIC 0x0032474E49525343ULL /* "CSRING2\0" little-endian */
#define RING_DATA 4096

typedef struct {
   ULong magic;
   UInt slots;
   UInt slot_words;
   UInt produced;
   UInt consumed;
   UInt closed;
   UInt waiting;
   ULong limit;
} RingHeader;

static const HChar* clo_ring = NULL;
static RingHeader* ring = NULL;
static ULong* ring_data = NULL;
static Long ring_parent = 0;

Bool cs_ring_option(const HChar* arg)
{
   if VG_STR_CLO(arg, "--cs-ring", clo_ring) {}
   else
      return False;
   return True;
}

Bool cs_ring_requested(void)
{
   return clo_ring != NULL;
}

/* The slot of buffer `produced`, once the reader has finished with it; NULL if the reader has
   gone. */
static ULong* wait_for_slot(UInt produced)
{
   for (;;) {
      if (__atomic_load_n(&ring->closed, __ATOMIC_ACQUIRE))
         return NULL;
      UInt consumed = __atomic_load_n(&ring->consumed, __ATOMIC_ACQUIRE);
      if (produced - consumed < ring->slots)
         return ring_data + (SizeT)(produced % ring->slots) * ring->slot_words;
      /* Announce the sleep, then re-check, so a wakeup between the two is not lost. */
      __atomic_store_n(&ring->waiting, 1, __ATOMIC_SEQ_CST);
      if (__atomic_load_n(&ring->consumed, __ATOMIC_SEQ_CST) == consumed) {
         /* The timeout lets a reader that died without closing be noticed: cachescope is
            our parent, and a dead parent's children are re-parented. */
         struct vki_timespec t = { 0, 100 * 1000 * 1000 };
         VG_(do_syscall)(__NR_futex, (UWord)&ring->consumed, VKI_FUTEX_WAIT, consumed,
                         (UWord)&t, 0, 0, 0, 0);
      }
      __atomic_store_n(&ring->waiting, 0, __ATOMIC_SEQ_CST);
      if (ring_parent != 0 && VG_(getppid)() != ring_parent)
         return NULL;
   }
}

ULong* cs_ring_open(Long parent, SizeT words)
{
   RingHeader head;
   Int fd = VG_(fd_open)(clo_ring, VKI_O_RDWR, 0);
   if (fd < 0) {
      VG_(umsg)("cachescope: cannot open --cs-ring=%s\n", clo_ring);
      return NULL;
   }
   if (VG_(read)(fd, &head, sizeof head) != sizeof head || head.magic != RING_MAGIC
       || head.slots == 0 || head.slot_words < words) {
      VG_(umsg)("cachescope: --cs-ring=%s is not a cachescope ring\n", clo_ring);
      VG_(close)(fd);
      return NULL;
   }
   SizeT len = RING_DATA + (SizeT)head.slots * head.slot_words * sizeof(ULong);
   SysRes res = VG_(am_shared_mmap_file_float_valgrind)(len, VKI_PROT_READ | VKI_PROT_WRITE,
                                                        fd, 0);
   VG_(close)(fd);
   if (sr_isError(res)) {
      VG_(umsg)("cachescope: cannot map --cs-ring=%s (error %lu)\n", clo_ring, sr_Err(res));
      return NULL;
   }
   ring = (RingHeader*)sr_Res(res);
   ring_data = (ULong*)((Addr)ring + RING_DATA);
   ring_parent = parent;
   /* A program exec'd under --trace-children continues after the buffers put before it. */
   ULong* slot = wait_for_slot(ring->produced);
   if (slot == NULL)
      VG_(umsg)("cachescope: the reader of --cs-ring=%s has gone\n", clo_ring);
   return slot;
}

ULong* cs_ring_put(Int out_fd, SizeT n, Bool more)
{
   UInt produced = ring->produced;
   if (n > 0) {
      UInt slot = produced % ring->slots;
      __atomic_store_n(&ring->produced, ++produced, __ATOMIC_RELEASE);
      ULong token = CS_ESCAPE(CS_TAG_SLOT, (ULong)n | ((ULong)slot << 24));
      /* 8 bytes: a pipe writes them whole or not at all. */
      if (VG_(write)(out_fd, &token, sizeof token) != sizeof token)
         return NULL;
   }
   return more ? wait_for_slot(produced) : NULL;
}

ULong* cs_ring_resume(void)
{
   return wait_for_slot(__atomic_load_n(&ring->produced, __ATOMIC_ACQUIRE));
}

void cs_ring_watch_parent(Long parent)
{
   ring_parent = parent;
}

ULong cs_ring_limit(void)
{
   return ring ? __atomic_load_n(&ring->limit, __ATOMIC_ACQUIRE) : ~0ULL;
}
