/* SPDX-License-Identifier: Apache-2.0 */
/* sig.c: signal names, child signal reset, and the CLI's interrupt handler. */
#include "config.h"

#include <string.h>

#include "sb/exit.h"
#include "sb/sig.h"

int
sb_sig_reset_all(void)
{
	struct sigaction sa;
	sigset_t all;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	for (int s = 1; s < NSIG; s++) {
		if (s == SIGKILL || s == SIGSTOP)
			continue;
		/* EINVAL for the numbers glibc reserves (32, 33): nothing to reset. */
		(void)sigaction(s, &sa, NULL);
	}
	sigemptyset(&all);
	return sigprocmask(SIG_SETMASK, &all, NULL);
}

const char *
sb_sig_name(int sig)
{
	static const struct {
		int sig;
		const char *name;
	} names[] = {
		{ SIGHUP, "SIGHUP" }, { SIGINT, "SIGINT" }, { SIGQUIT, "SIGQUIT" },
		{ SIGILL, "SIGILL" }, { SIGTRAP, "SIGTRAP" }, { SIGABRT, "SIGABRT" },
		{ SIGBUS, "SIGBUS" }, { SIGFPE, "SIGFPE" }, { SIGKILL, "SIGKILL" },
		{ SIGUSR1, "SIGUSR1" }, { SIGSEGV, "SIGSEGV" }, { SIGUSR2, "SIGUSR2" },
		{ SIGPIPE, "SIGPIPE" }, { SIGALRM, "SIGALRM" }, { SIGTERM, "SIGTERM" },
		{ SIGCHLD, "SIGCHLD" }, { SIGCONT, "SIGCONT" }, { SIGSTOP, "SIGSTOP" },
		{ SIGTSTP, "SIGTSTP" }, { SIGTTIN, "SIGTTIN" }, { SIGTTOU, "SIGTTOU" },
		{ SIGXCPU, "SIGXCPU" }, { SIGXFSZ, "SIGXFSZ" }, { SIGSYS, "SIGSYS" },
	};

	for (size_t i = 0; i < SB_ARRAY_SIZE(names); i++)
		if (names[i].sig == sig)
			return names[i].name;
	return "SIG?";
}

static volatile sig_atomic_t sig_received;
static volatile sig_atomic_t sig_count;
static volatile sig_atomic_t sig_deferred;

static void
on_interrupt(int sig)
{
	static const char msg[] = "\nInterrupted\n";

	sig_received = sig;
	sig_count++;
	if (sig_deferred == SB_SIG_DEFER_NONE ||
	    (sig_deferred == SB_SIG_DEFER_FIRST && sig_count >= 2)) {
		(void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
		_exit(sig == SIGINT ? SB_EXIT_INTERRUPTED : SB_EXIT_SIGNAL_BASE + sig);
	}
}

void
sb_sig_install_interrupt(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_interrupt;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: a blocked read/write/wait returns EINTR so the caller sees the flag. */
	sa.sa_flags = 0;
	(void)sigaction(SIGINT, &sa, NULL);
	(void)sigaction(SIGTERM, &sa, NULL);
}

void
sb_sig_set_deferred(enum sb_sig_defer defer)
{
	sig_deferred = (sig_atomic_t)defer;
}

int
sb_sig_interrupted(void)
{
	return sig_received;
}

int
sb_sig_interrupt_count(void)
{
	return sig_count;
}
