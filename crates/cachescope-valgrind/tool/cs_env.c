/* Removes the recorder's own variables from the recorded program's environment.
 *
 * Copyright (C) 2026 the cachescope authors. SPDX-License-Identifier: GPL-2.0-or-later
 * (see ../LICENSE; it links Valgrind's core).
 *
 * Why: cachescope starts Valgrind with VALGRIND_LIB naming the directory its tool is in (the
 * launcher and the core find the tool and the preload libraries there), and a user may have
 * CACHESCOPE_* variables set for cachescope itself. Valgrind copies its whole environment to
 * the program's initial stack, so the program would see them: `record -- /usr/bin/env` printed
 * VALGRIND_LIB, and the loader's start-up, which walks every variable, ran more instructions
 * than under plain Cachegrind (docs/cachegrind.md, "Environment").
 *
 * How: when the tool is initialised (post_clo_init, before the client runs; --cs-keep-env=yes
 * skips this for runs compared with another tool under the same environment) the core has
 * built the client's stack: argc, argv, NULL, envp (VG_(client_envp) points at it), NULL, the auxiliary vector (VG_(client_auxv)),
 * then the strings. The loader finds the auxiliary vector as the word after envp's NULL, so a
 * removed entry cannot just leave a hole: the kept entries close up, and envp's NULL and the
 * whole auxiliary vector move down by the removed words (their contents, pointers into the
 * string area included, are unchanged). The stack pointer and the strings stay where they are.
 * Valgrind needs neither variable afterwards: it read VALGRIND_LIB into VG_(libdir) before, and
 * sets it again itself in the environment of a child it follows (--trace-children).
 */

#include "pub_tool_basics.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcproc.h"

#include "cs_env.h"

/* The core's pointer to the client's auxiliary vector (m_clientstate.c); the tool is linked
 * statically with the core, and the pointer must follow the vector when it moves. */
extern UWord* vgPlain_client_auxv;

/* The type that ends the auxiliary vector (ELF's AT_NULL). */
#define CS_AT_NULL 0

static Bool recorder_variable(const HChar* entry)
{
   return VG_(strncmp)(entry, "VALGRIND_LIB=", 13) == 0
          || VG_(strncmp)(entry, "CACHESCOPE_", 11) == 0;
}

void cs_strip_client_env(void)
{
   HChar** envp = VG_(client_envp);
   if (envp == NULL)
      return;
   Int n = 0;
   while (envp[n] != NULL)
      n++;
   UWord* auxv = (UWord*)&envp[n + 1];
   if (vgPlain_client_auxv != auxv)
      return; /* not the layout described above: leave it alone */
   Int words = 0; /* the auxiliary vector's words, its AT_NULL pair included */
   while (auxv[words] != CS_AT_NULL)
      words += 2;
   words += 2;
   Int kept = 0;
   for (Int i = 0; i < n; i++) {
      if (!recorder_variable(envp[i]))
         envp[kept++] = envp[i];
   }
   Int removed = n - kept;
   if (removed == 0)
      return;
   UWord* from = (UWord*)&envp[n];
   UWord* to = (UWord*)&envp[kept];
   VG_(memmove)(to, from, (1 + words) * sizeof(UWord));
   VG_(memset)(to + 1 + words, 0, removed * sizeof(UWord));
   vgPlain_client_auxv = to + 1;
}
