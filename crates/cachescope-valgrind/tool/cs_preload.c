/* vgpreload_cachescope: allocator wrappers Valgrind preloads into the program recorded by
 * cachescope's tool (with --cs-events=yes).
 *
 * Copyright (C) 2026 the cachescope authors. SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Each wrapper calls the C library's function it wraps (Valgrind's function wrapping:
 * the program keeps glibc's allocator and its references) and then tells the tool what
 * happened with a client request; the tool writes the event, with the call stack, into the
 * record stream at that point. The tool does not record these wrappers' own instructions.
 * No C library: this file uses valgrind.h's macros only.
 */

#include "valgrind.h"
#include "cs_protocol.h"

typedef unsigned long SizeT;
typedef long Word;

#define LIBC libcZdsoZa /* libc.so* */
#define WRAP(fn) I_WRAP_SONAME_FNNAME_ZU(libcZdsoZa, fn)

static void tell_alloc(void* p, SizeT size)
{
   if (p)
      VALGRIND_DO_CLIENT_REQUEST_STMT(CS_REQ_ALLOC, p, size, 0, 0, 0);
}

static void tell_free(void* p)
{
   if (p)
      VALGRIND_DO_CLIENT_REQUEST_STMT(CS_REQ_FREE, p, 0, 0, 0, 0);
}

void* WRAP(malloc)(SizeT n);
void* WRAP(malloc)(SizeT n)
{
   OrigFn fn;
   void* r;
   VALGRIND_GET_ORIG_FN(fn);
   CALL_FN_W_W(r, fn, n);
   tell_alloc(r, n);
   return r;
}

void* WRAP(calloc)(SizeT n, SizeT m);
void* WRAP(calloc)(SizeT n, SizeT m)
{
   OrigFn fn;
   void* r;
   VALGRIND_GET_ORIG_FN(fn);
   CALL_FN_W_WW(r, fn, n, m);
   tell_alloc(r, n * m);
   return r;
}

/* realloc and reallocarray: the old block is freed and a new one allocated when they
   succeed (as the interposer logs them); a size of 0 frees. */
static void tell_realloc(void* old, void* r, SizeT size)
{
   if (r) {
      tell_free(old);
      tell_alloc(r, size);
   } else if (size == 0) {
      tell_free(old);
   }
}

void* WRAP(realloc)(void* p, SizeT n);
void* WRAP(realloc)(void* p, SizeT n)
{
   OrigFn fn;
   void* r;
   VALGRIND_GET_ORIG_FN(fn);
   CALL_FN_W_WW(r, fn, p, n);
   tell_realloc(p, r, n);
   return r;
}

void* WRAP(reallocarray)(void* p, SizeT n, SizeT m);
void* WRAP(reallocarray)(void* p, SizeT n, SizeT m)
{
   OrigFn fn;
   void* r;
   VALGRIND_GET_ORIG_FN(fn);
   CALL_FN_W_WWW(r, fn, p, n, m);
   tell_realloc(p, r, n * m);
   return r;
}

void WRAP(free)(void* p);
void WRAP(free)(void* p)
{
   OrigFn fn;
   VALGRIND_GET_ORIG_FN(fn);
   CALL_FN_v_W(fn, p);
   tell_free(p);
}

#define ALIGNED(name)                                   \
   void* WRAP(name)(SizeT al, SizeT n);                 \
   void* WRAP(name)(SizeT al, SizeT n)                  \
   {                                                    \
      OrigFn fn;                                        \
      void* r;                                          \
      VALGRIND_GET_ORIG_FN(fn);                         \
      CALL_FN_W_WW(r, fn, al, n);                       \
      tell_alloc(r, n);                                 \
      return r;                                         \
   }
ALIGNED(memalign)
ALIGNED(aligned_alloc)

int WRAP(posix_memalign)(void** pp, SizeT al, SizeT n);
int WRAP(posix_memalign)(void** pp, SizeT al, SizeT n)
{
   OrigFn fn;
   Word r;
   VALGRIND_GET_ORIG_FN(fn);
   CALL_FN_W_WWW(r, fn, pp, al, n);
   if (r == 0)
      tell_alloc(*pp, n);
   return (int)r;
}

#define PAGED(name)                                     \
   void* WRAP(name)(SizeT n);                           \
   void* WRAP(name)(SizeT n)                            \
   {                                                    \
      OrigFn fn;                                        \
      void* r;                                          \
      VALGRIND_GET_ORIG_FN(fn);                         \
      CALL_FN_W_W(r, fn, n);                            \
      tell_alloc(r, n);                                 \
      return r;                                         \
   }
PAGED(valloc)
PAGED(pvalloc)
