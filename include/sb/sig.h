/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sig.h: signal helpers (STYLE.md rule 19).
 */
#ifndef SB_SIG_H
#define SB_SIG_H

#include <signal.h>

#include "sb/common.h"

/*
 * Restore every signal to its default disposition and unblock all of them. For a child
 * between fork and exec. Async-signal-safe.
 */
int sb_sig_reset_all(void);

/* "SIGTERM" for SIGTERM; "SIG?" for an unknown number. Async-signal-safe. */
const char *sb_sig_name(int sig);

/*
 * Interrupt handling for command-line programs: SIGINT and SIGTERM set a flag that
 * sb_sig_interrupted() reports, and, while no cleanup is pending (sb_sig_set_deferred
 * false), print "Interrupted" and exit 130 (SIGTERM: 143) at once.
 */
void sb_sig_install_interrupt(void);
void sb_sig_set_deferred(bool deferred);
int sb_sig_interrupted(void); /* the signal received, or 0 */
int sb_sig_interrupt_count(void); /* how many were received (a second Ctrl-C escalates) */

#endif
