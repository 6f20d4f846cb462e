/* Copyright (C) 2026 the cachescope authors. SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef CS_ENV_H
#define CS_ENV_H

/* Removes VALGRIND_LIB and CACHESCOPE_* from the client's environment on its initial stack;
 * call before the client runs, e.g. from post_clo_init (see cs_env.c). */
void cs_strip_client_env(void);

#endif
