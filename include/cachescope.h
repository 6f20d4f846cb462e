/* cachescope.h: regions of interest for cachescope's recorder.
 *
 * Copyright (C) 2026 the cachescope authors. SPDX-License-Identifier: MIT OR Apache-2.0
 * (this header only, so that any program may include it).
 *
 *   #include "cachescope.h"
 *   ...set-up not worth recording...
 *   CACHESCOPE_START();
 *   ...the loop that matters...
 *   CACHESCOPE_STOP();
 *
 * then `cachescope record --collect-atstart=no -o t.cst -- ./program` (or any analysing
 * command with `--collect-atstart=no -- ./program`) records only the references made between
 * them; without that flag the whole run is recorded and the macros do nothing. They are
 * Valgrind client requests, the instruction sequence Valgrind's own valgrind.h emits: a no-op
 * when the program runs without Valgrind, and nothing else to install or link. On a platform
 * other than x86-64 and AArch64 with GCC or Clang they expand to nothing.
 */
#ifndef CACHESCOPE_H
#define CACHESCOPE_H

/* The tool's request codes: ('C' << 24 | 'S' << 16) + 3 and + 4. */
#define CACHESCOPE_REQ_START_ 0x43530003UL
#define CACHESCOPE_REQ_STOP_ 0x43530004UL

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/* Valgrind recognises the rotations of %rdi (by 128 bits in all: a no-op) followed by
   xchg %rbx,%rbx; %rax points at the request, %rdx carries the result. */
static inline unsigned long cachescope_request_(unsigned long code)
{
    volatile unsigned long req[6] = {code, 0, 0, 0, 0, 0};
    unsigned long result = 0;
    __asm__ volatile("rolq $3, %%rdi ; rolq $13, %%rdi\n\t"
                     "rolq $61, %%rdi ; rolq $51, %%rdi\n\t"
                     "xchgq %%rbx, %%rbx"
                     : "=d"(result)
                     : "a"(&req[0]), "0"(result)
                     : "cc", "memory");
    return result;
}
#elif defined(__aarch64__) && (defined(__GNUC__) || defined(__clang__))
/* The AArch64 form: rotations of x12 (by 128 bits in all), then orr x10, x10, x10; x4 points
   at the request, x3 carries the result. */
static inline unsigned long cachescope_request_(unsigned long code)
{
    volatile unsigned long req[6] = {code, 0, 0, 0, 0, 0};
    register unsigned long result __asm__("x3") = 0;
    register volatile unsigned long* args __asm__("x4") = &req[0];
    __asm__ volatile("ror x12, x12, #3 ; ror x12, x12, #13\n\t"
                     "ror x12, x12, #51 ; ror x12, x12, #61\n\t"
                     "orr x10, x10, x10"
                     : "+r"(result)
                     : "r"(args)
                     : "cc", "memory");
    return result;
}
#else
static inline unsigned long cachescope_request_(unsigned long code)
{
    (void)code;
    return 0;
}
#endif

/* Start recording references (with --collect-atstart=no). */
#define CACHESCOPE_START() ((void)cachescope_request_(CACHESCOPE_REQ_START_))
/* Stop recording references until the next CACHESCOPE_START(). */
#define CACHESCOPE_STOP() ((void)cachescope_request_(CACHESCOPE_REQ_STOP_))

#endif
