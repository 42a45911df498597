/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sig.h: signal helpers (docs/design.md, "Signals").
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
 * sb_sig_interrupted() reports. What else happens depends on the deferral in force:
 *   SB_SIG_DEFER_NONE   print "Interrupted" and exit 130 (SIGTERM: 143) at once;
 *   SB_SIG_DEFER_FIRST  the first signal only sets the flag (cleanup is pending and the
 *                       caller will see it); a second one exits at once (the user insists);
 *   SB_SIG_DEFER_ALL    every signal only counts (the caller escalates itself, e.g. a
 *                       second Ctrl-C kills a container rather than the CLI).
 */
enum sb_sig_defer { SB_SIG_DEFER_NONE, SB_SIG_DEFER_FIRST, SB_SIG_DEFER_ALL };
void sb_sig_install_interrupt(void);
void sb_sig_set_deferred(enum sb_sig_defer defer);
int sb_sig_interrupted(void); /* the signal received, or 0 */
int sb_sig_interrupt_count(void); /* how many were received (a second Ctrl-C escalates) */

#endif
