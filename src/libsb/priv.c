/* SPDX-License-Identifier: Apache-2.0 */
/*
 * priv.c: dropping privileges and building seccomp filters.
 *
 * The drop uses system calls directly rather than libcap's cap_* objects, because libcap
 * allocates and the drop runs between fork and exec, where only async-signal-safe calls are
 * allowed. libseccomp is used only in the parent, to compile BPF before fork.
 */
#include "config.h"

#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <pwd.h>
#include <sched.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "sb/limits.h"
#include "sb/mem.h"
#include "sb/parse.h"
#include "sb/priv.h"

#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT		  47
#define PR_CAP_AMBIENT_CLEAR_ALL 4
#endif

/* The highest capability number the running kernel knows (CAP_LAST_CAP may lag behind). */
static int
cap_last(void)
{
	int c;

	/* PR_CAPBSET_READ fails with EINVAL past the last capability. */
	for (c = CAP_LAST_CAP; c < 64; c++)
		if (prctl(PR_CAPBSET_READ, (unsigned long)c + 1, 0, 0, 0) < 0)
			break;
	return c;
}

int
sb_priv_drop(const struct sb_creds *creds, const char **ret_step)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];
	uid_t ru, eu, su;
	gid_t rg, eg, sg;
	int last = cap_last();

	/* 1. Bounding set: a later exec of a setuid or file-capability binary gains nothing.
	 *    Needs CAP_SETPCAP; without it (already unprivileged) there is nothing to drop. */
	*ret_step = "drop bounding set";
	for (int c = 0; c <= last; c++)
		if (prctl(PR_CAPBSET_DROP, (unsigned long)c, 0, 0, 0) < 0 && errno != EINVAL &&
		    errno != EPERM)
			return -1;
	/* 2-3. Groups and gid need CAP_SETGID, which the uid change takes away: do them first. */
	*ret_step = "setgroups";
	/* The kernel would read past the fixed array: refuse rather than set stray groups. */
	if (creds->ngroups > SB_ARRAY_SIZE(creds->groups)) {
		errno = EINVAL;
		return -1;
	}
	if (syscall(SYS_setgroups, creds->ngroups, creds->ngroups ? creds->groups : NULL) < 0)
		return -1;
	*ret_step = "setresgid";
	if (syscall(SYS_setresgid, creds->gid, creds->gid, creds->gid) < 0)
		return -1;
	*ret_step = "setresuid";
	if (syscall(SYS_setresuid, creds->uid, creds->uid, creds->uid) < 0)
		return -1;
	/* 4. Trust nothing: read the ids back, and make sure root cannot be regained. */
	*ret_step = "verify ids";
	if (getresuid(&ru, &eu, &su) < 0 || getresgid(&rg, &eg, &sg) < 0)
		return -1;
	if (ru != creds->uid || eu != creds->uid || su != creds->uid || rg != creds->gid ||
	    eg != creds->gid || sg != creds->gid) {
		errno = EPERM;
		return -1;
	}
	if (creds->uid != 0 && syscall(SYS_setuid, 0) == 0) {
		errno = EPERM;
		return -1;
	}
	/* 5. A uid change from 0 clears permitted/effective, but not the ambient set on every
	 *    path, and not when the target uid is 0: clear everything explicitly. */
	*ret_step = "clear capabilities";
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return -1;
	memset(data, 0, sizeof(data));
	if (syscall(SYS_capset, &hdr, data) < 0)
		return -1;
	/* 6. From here on no exec can raise privileges (setuid bits, file capabilities). */
	*ret_step = "no_new_privs";
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	*ret_step = NULL;
	return 0;
}

int
sb_creds_lookup(const char *user, struct sb_creds *ret, struct sb_error **err)
{
	struct passwd pw, *res = NULL;
	char buf[4096];
	int r;

	r = getpwnam_r(user, &pw, buf, sizeof(buf), &res);
	if (r != 0)
		return sb_error_errno(err, r, "look up user '%s'", user);
	if (res == NULL)
		return sb_error_set(err, ENOENT, "no user '%s'", user);
	memset(ret, 0, sizeof(*ret));
	ret->uid = pw.pw_uid;
	ret->gid = pw.pw_gid;
	ret->ngroups = 0;
	return 0;
}

int
sb_creds_runner_uid(struct sb_creds *c, struct sb_error **err)
{
	const char *v = secure_getenv("SSE_RUNNER_UID");
	uint64_t uid;

	if (v == NULL || *v == '\0')
		return 0;
	if (sb_parse_u64(v, SB_RUNNER_UID_MIN, SB_RUNNER_UID_MAX, &uid, err) < 0)
		return sb_error_prefix(err, "SSE_RUNNER_UID='%s'", v);
	c->uid = (uid_t)uid;
	return 0;
}

static void
seccomp_ctx_freep(scmp_filter_ctx *ctx)
{
	if (*ctx != NULL)
		seccomp_release(*ctx);
}

/* Export a libseccomp context to a BPF program we own. */
static int
seccomp_export(scmp_filter_ctx ctx, struct sb_seccomp **ret, struct sb_error **err)
{
	_cleanup_close_ int fd = -1;
	struct sb_seccomp *s;
	struct stat st;
	ssize_t n;
	int r;

	fd = memfd_create("seccomp-bpf", MFD_CLOEXEC);
	if (fd < 0)
		return sb_error_errno(err, errno, "memfd_create");
	r = seccomp_export_bpf(ctx, fd);
	if (r < 0)
		return sb_error_errno(err, -r, "seccomp_export_bpf");
	if (fstat(fd, &st) < 0)
		return sb_error_errno(err, errno, "fstat");
	if (st.st_size <= 0 || st.st_size % (off_t)sizeof(struct sock_filter) != 0 ||
	    st.st_size / (off_t)sizeof(struct sock_filter) > 65535)
		return sb_error_set(err, EINVAL, "unexpected seccomp program size");
	s = sb_xcalloc(1, sizeof(*s));
	s->code = sb_xmalloc((size_t)st.st_size);
	n = pread(fd, s->code, (size_t)st.st_size, 0);
	if (n != st.st_size) {
		sb_seccomp_free(s);
		return sb_error_errno(err, n < 0 ? errno : EIO, "read seccomp program");
	}
	s->prog.len = (unsigned short)(st.st_size / (off_t)sizeof(struct sock_filter));
	s->prog.filter = s->code;
	*ret = s;
	return 0;
}

/* Add an unconditional EPERM rule for each named system call to ctx. */
static int
seccomp_add_deny(scmp_filter_ctx ctx, const char *const *names, struct sb_error **err)
{
	for (const char *const *p = names; *p != NULL; p++) {
		int nr = seccomp_syscall_resolve_name(*p);
		int r;

		/* A name this architecture does not have (e.g. an old alias) is nothing to deny. */
		if (nr == __NR_SCMP_ERROR)
			continue;
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
		if (r < 0)
			return sb_error_errno(err, -r, "seccomp rule for '%s'", *p);
	}
	return 0;
}

int
sb_seccomp_compile_deny(const char *const *names, struct sb_seccomp **ret,
    struct sb_error **err)
{
	_cleanup_(seccomp_ctx_freep) scmp_filter_ctx ctx = NULL;

	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (ctx == NULL)
		return sb_error_set(err, ENOMEM, "seccomp_init");
	if (seccomp_add_deny(ctx, names, err) < 0)
		return -1;
	return seccomp_export(ctx, ret, err);
}

/*
 * Denying unshare(2) and setns(2) is not enough to keep untrusted code out of new namespaces:
 * clone(2) takes the same CLONE_NEW* flags, and clone3(2) takes them inside a struct that a
 * filter cannot read. So clone fails with EPERM when any namespace flag is set (one rule per
 * flag; rules for one call are or-ed), and clone3 fails with ENOSYS, which makes glibc (and
 * other runtimes) fall back to clone for fork and threads. This is what Docker's and
 * systemd's profiles do. CLONE_NEWTIME is not listed: for clone its bit is part of the
 * exit-signal byte, and only unshare/clone3 accept it.
 * https://man7.org/linux/man-pages/man2/clone.2.html
 */
static int
seccomp_add_clone_rules(scmp_filter_ctx ctx, struct sb_error **err)
{
	static const unsigned long ns_flags[] = { CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS,
		CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET };
#if defined(__s390__) || defined(__s390x__) || defined(__CRIS__)
	const unsigned flags_arg = 1; /* clone(stack, flags, ...) on these */
#else
	const unsigned flags_arg = 0;
#endif
	int nr, r;

	for (size_t i = 0; i < SB_ARRAY_SIZE(ns_flags); i++) {
		struct scmp_arg_cmp cmp = SCMP_CMP(flags_arg, SCMP_CMP_MASKED_EQ, ns_flags[i],
		    ns_flags[i]);

		r = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1, &cmp);
		if (r < 0)
			return sb_error_errno(err, -r, "seccomp rule for 'clone'");
	}
	/*
	 * Not refused: a child that shares the file table without being a thread (CLONE_FILES
	 * without CLONE_THREAD), although it lets a POSIX lock outlive its taker's pid number
	 * and show up, range and all, in /proc/locks of the container that gets that number
	 * next (tests/integrity/README.md, open). LeakSanitizer stops the world at exit with
	 * exactly such a child (CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_UNTRACED), so a rule
	 * an attacker could not match would break every sanitizer build of a task's PoC.
	 */
	nr = seccomp_syscall_resolve_name("clone3");
	if (nr != __NR_SCMP_ERROR) {
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), nr, 0);
		if (r < 0)
			return sb_error_errno(err, -r, "seccomp rule for 'clone3'");
	}
	return 0;
}

/*
 * fcntl (and fcntl64, where it exists) fails with errnum for each of the n commands. The
 * command is compared on its low 32 bits: the kernel takes it as an unsigned int, so
 * F_NOTIFY | 1 << 32 is F_NOTIFY to it, and would slip past a comparison of the whole
 * register.
 */
static int
seccomp_refuse_fcntl(scmp_filter_ctx ctx, const int *cmds, size_t n, int errnum,
    struct sb_error **err)
{
	static const char *const fcntls[] = { "fcntl", "fcntl64", NULL };

	for (const char *const *p = fcntls; *p != NULL; p++) {
		int nr = seccomp_syscall_resolve_name(*p);

		if (nr == __NR_SCMP_ERROR)
			continue;
		for (size_t i = 0; i < n; i++) {
			struct scmp_arg_cmp cmp = SCMP_CMP(1, SCMP_CMP_MASKED_EQ, 0xffffffffULL,
			    (scmp_datum_t)cmds[i]);
			int r = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(errnum), nr, 1, &cmp);

			if (r < 0)
				return sb_error_errno(err, -r, "seccomp rule for '%s' %d", *p, cmds[i]);
		}
	}
	return 0;
}

/*
 * File event queues. The kernel goes on queueing events for a process that is frozen (or
 * stopped) and hands them over when it runs again: an agent that watched, say, IN_OPEN on
 * directories every user may read learns after a check on hidden material which of their
 * files the check opened, which its own code under test can choose to spell out the PoC or
 * the hidden tests with (third red-team round: 12 KiB a check, byte-exact). dnotify, an
 * fcntl command, fails with EPERM, and so does a lease (F_SETLEASE), whose break is the
 * same kind of news. inotify and fanotify stay: agent CLIs watch files with them (OpenCode
 * never exited without inotify); a check on hidden material is refused instead while a
 * process of the agent holds such a queue (src/libsb/freezer.c:holds_event_queue).
 */
static int
seccomp_add_notify_rules(scmp_filter_ctx ctx, struct sb_error **err)
{
	static const int cmds[] = { F_NOTIFY, F_SETLEASE };

	return seccomp_refuse_fcntl(ctx, cmds, SB_ARRAY_SIZE(cmds), EPERM, err);
}

/*
 * Open-file-description locks (F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW). /proc/locks, which
 * every container can read and runc will not let a run mask, lists them from every pid
 * namespace, with the byte range the locker chose: a check's code put 7 bytes in each lock
 * and an agent in another container read the hidden material back whole (fourth red-team
 * review of issue 13). POSIX locks are listed only while their taker's pid means something
 * in the reader's pid namespace (the clone rules above say how that is got round, and
 * why it stays open).
 * EINVAL is what a kernel without OFD locks answers, so a program that tries them falls
 * back to POSIX locks.
 */
static int
seccomp_add_ofd_lock_rules(scmp_filter_ctx ctx, struct sb_error **err)
{
	static const int cmds[] = { F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW };

	return seccomp_refuse_fcntl(ctx, cmds, SB_ARRAY_SIZE(cmds), EINVAL, err);
}

int
sb_seccomp_compile(enum sb_seccomp_profile profile, struct sb_seccomp **ret,
    struct sb_error **err)
{
	/*
	 * Why each is denied for untrusted code: none is needed to build or test a project, and
	 * each is a classic step in a local privilege escalation or a way to observe or reach
	 * outside the process's own uid. ptrace stays allowed on purpose: LeakSanitizer uses it
	 * to stop threads, and the kernel already refuses ptrace of another uid's processes.
	 */
	static const char *const untrusted[] = {
		"acct", "add_key", "bpf", "clock_adjtime", "clock_settime", "create_module",
		"delete_module", "finit_module", "fsconfig", "fsmount", "fsopen", "fspick",
		"get_kernel_syms", "init_module", "io_uring_enter", "io_uring_register",
		"io_uring_setup", "ioperm", "iopl", "kexec_file_load", "kexec_load", "keyctl",
		"lookup_dcookie", "mount", "mount_setattr", "move_mount", "name_to_handle_at",
		"nfsservctl", "open_by_handle_at", "open_tree", "perf_event_open", "pivot_root",
		"process_vm_readv", "process_vm_writev", "quotactl", "reboot", "request_key",
		"setns", "settimeofday", "swapoff", "swapon", "syslog", "umount2", "unshare",
		"uselib", "userfaultfd", "vhangup", NULL,
	};
	_cleanup_(seccomp_ctx_freep) scmp_filter_ctx ctx = NULL;

	switch (profile) {
	case SB_SECCOMP_UNTRUSTED:
		ctx = seccomp_init(SCMP_ACT_ALLOW);
		if (ctx == NULL)
			return sb_error_set(err, ENOMEM, "seccomp_init");
		if (seccomp_add_deny(ctx, untrusted, err) < 0 ||
		    seccomp_add_clone_rules(ctx, err) < 0 || seccomp_add_notify_rules(ctx, err) < 0 ||
		    seccomp_add_ofd_lock_rules(ctx, err) < 0)
			return -1;
		return seccomp_export(ctx, ret, err);
	}
	return sb_error_set(err, EINVAL, "unknown seccomp profile");
}

void
sb_seccomp_free(struct sb_seccomp *s)
{
	if (s == NULL)
		return;
	free(s->code);
	free(s);
}

int
sb_seccomp_install(const struct sb_seccomp *s)
{
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &s->prog, 0, 0);
}
