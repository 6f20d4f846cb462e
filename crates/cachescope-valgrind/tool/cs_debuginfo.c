/* Keeps Valgrind from reading separate debug files (/usr/lib/debug/...) for the programs
 * cachescope's tool runs.
 *
 * Copyright (C) 2026 the cachescope authors. SPDX-License-Identifier: GPL-2.0-or-later
 * (see ../LICENSE; it links Valgrind's core).
 *
 * Why: Debian's valgrind depends on libc6-dbg, so Valgrind finds libc's and ld.so's debug files
 * by build id and parses their DWARF line tables on every run: about 0.25 s of CPU, more than
 * the whole tool takes on a small program (docs/recording.md, "Start-up"). This tool asks
 * Valgrind for no symbol, file or line (cachescope names sites with its own reader), and its
 * stack traces unwind with the call-frame information in each object's own .eh_frame, so the
 * debug files add nothing to the stream.
 *
 * How: build.rs links with -Wl,--wrap=vgModuleLocal_img_from_local_file, so the core's calls
 * to open an image (readelf.c, its only caller) come here first. Paths under the system debug
 * directory are refused as if absent, which Valgrind handles as "no debug file"; every other
 * image (the program, its libraries, a debug file beside a program) opens as before.
 */

#include "pub_tool_basics.h"
#include "pub_tool_libcbase.h"

struct _DiImage;

struct _DiImage* __real_vgModuleLocal_img_from_local_file(const HChar* fullpath);
struct _DiImage* __wrap_vgModuleLocal_img_from_local_file(const HChar* fullpath);

struct _DiImage* __wrap_vgModuleLocal_img_from_local_file(const HChar* fullpath)
{
   static const HChar system_debug[] = "/usr/lib/debug/";
   if (VG_(strncmp)(fullpath, system_debug, sizeof system_debug - 1) == 0)
      return NULL;
   return __real_vgModuleLocal_img_from_local_file(fullpath);
}
