/* The instrumentation of cachescope's Valgrind tool (cs_instrument.c), and what it uses of
 * the output buffer (cs_main.c).
 * Copyright (C) 2026 the cachescope authors. SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef CS_INSTRUMENT_H
#define CS_INSTRUMENT_H

#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"

/* EV_HIDDEN: an instruction kept in the pending list without a record (--cs-instr=no, or
   the preload library's own code). */
enum { EV_LOAD = 0, EV_STORE = 1, EV_MODIFY = 2, EV_INSTR = 3, EV_HIDDEN = 4 };

/* One reference of a superblock, as the instrumentation finds it. */
typedef struct {
   Int kind;
   IRExpr* addr;   /* Ity_I64 atom (a constant for an instruction) */
   Int size;
   IRExpr* guard;  /* Ity_I1 atom, or NULL for always */
} Event;

/* Most words one segment of generated code stores between two checks of the buffer's mark:
   the buffer has this much room past its mark. */
#define CS_MAX_SEGMENT 64

/* The buffer being filled (cs_main.c): the generated code stores at cs_ptr and calls
   cs_flush when cs_ptr is past cs_limit. Plain globals, read by the generated code. */
extern ULong* cs_ptr;
extern ULong* cs_limit;
VG_REGPARM(0) void cs_flush(void);
/* A guarded load or store (rare on amd64): appended by a helper called under the guard. */
VG_REGPARM(1) void cs_append_guarded(ULong word);
/* Whether instruction records are written (--cs-instr). */
Bool cs_instr_records(void);

/* Regions of interest: --cs-collect-atstart=no starts with recording off; CACHESCOPE_START()
   and CACHESCOPE_STOP() (include/cachescope.h) switch it. */
Bool cs_roi_option(const HChar* arg);
/* After the options (--cs-toggle-collect included, cs_toggle.h). */
void cs_roi_post_clo_init(void);
void cs_set_collecting(Bool on);

IRSB* cs_instrument(VgCallbackClosure* closure, IRSB* sbIn, const VexGuestLayout* layout,
                    const VexGuestExtents* vge, const VexArchInfo* archinfo_host,
                    IRType gWordTy, IRType hWordTy);

#endif
