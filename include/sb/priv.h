/* SPDX-License-Identifier: Apache-2.0 */
/*
 * priv.h: the one privilege-drop function, and seccomp filters (docs/design.md, "Dropping
 * privileges").
 *
 * sb_priv_drop() runs in a forked child between fork and exec, so it is async-signal-safe:
 * raw prctl/setgroups/setres[ug]id/capset system calls, no allocation. Everything it needs
 * (the credentials, the compiled seccomp program) is prepared by the parent before fork.
 */
#ifndef SB_PRIV_H
#define SB_PRIV_H

#include <linux/filter.h>
#include <sys/types.h>

#include "sb/common.h"
#include "sb/error.h"

struct sb_creds {
	uid_t uid;
	gid_t gid;
	size_t ngroups;	 /* supplementary groups, at most 8; 0 = none at all */
	gid_t groups[8]; /* fixed size: no allocation in the child */
};

/*
 * Drop to creds, in this order (each step needs the privilege the next one removes):
 *   1. empty the capability bounding set (so exec of a setuid/file-capability binary
 *      cannot gain anything back);
 *   2. setgroups: exactly creds->groups;
 *   3. setresgid, then setresuid (real, effective and saved);
 *   4. verify with getresuid/getresgid, and check that setuid(0) now fails;
 *   5. clear the ambient capability set and, to be sure, every capability set;
 *   6. PR_SET_NO_NEW_PRIVS.
 * PR_SET_PDEATHSIG and seccomp come after this, in the caller: the kernel clears the death
 * signal when credentials change, and the filter must be last so it cannot block the steps.
 * Returns 0, or -1 with errno set (and *ret_step naming the step that failed); more groups
 * than creds->groups holds is EINVAL.
 * Async-signal-safe.
 */
int sb_priv_drop(const struct sb_creds *creds, const char **ret_step);

/* Look a user up by name (its primary gid, no supplementary groups). Not for children. */
int sb_creds_lookup(const char *user, struct sb_creds *ret, struct sb_error **err);

/*
 * The runner's uid for this run: SSE_RUNNER_UID when set (the CLI picks one per run, in
 * SB_RUNNER_UID_MIN..SB_RUNNER_UID_MAX), else what the passwd entry says. Runs on one host
 * share the kernel's per-uid counts (processes, inotify instances, queued signals, pipe
 * buffers, message queue bytes, ...): with a uid of its own, one run's task scripts can
 * neither slow another's down through them nor signal to them with them. A value that is
 * not a uid of that range is an error, never a quiet fallback.
 */
int sb_creds_runner_uid(struct sb_creds *c, struct sb_error **err);

/* A compiled seccomp filter, ready for sb_seccomp_install in a child. */
struct sb_seccomp {
	struct sock_fprog prog;
	void *code;
};

enum sb_seccomp_profile {
	/*
	 * For code we do not trust (agent, task scripts): kernel interfaces that a build or a
	 * test never needs and that widen the attack surface or let a process reach outside
	 * its uid's view (module loading, mounts, namespaces, keyrings, bpf, perf, kexec,
	 * userfaultfd, process_vm_*, open_by_handle_at, ...) fail with EPERM; so does clone(2)
	 * with a CLONE_NEW* flag, and clone3(2), whose flags a filter cannot see, fails with
	 * ENOSYS so that libc falls back to clone.
	 */
	SB_SECCOMP_UNTRUSTED,
};

/* Compile a profile to BPF (before fork). */
int sb_seccomp_compile(enum sb_seccomp_profile profile, struct sb_seccomp **ret,
    struct sb_error **err);

/*
 * Compile a filter that makes exactly the named system calls fail with EPERM (tests, and
 * callers with their own list). names ends with NULL.
 */
int sb_seccomp_compile_deny(const char *const *names, struct sb_seccomp **ret,
    struct sb_error **err);

void sb_seccomp_free(struct sb_seccomp *s);

/* Install in the current thread. Needs no_new_privs (or CAP_SYS_ADMIN). Async-signal-safe. */
int sb_seccomp_install(const struct sb_seccomp *s);

#endif
