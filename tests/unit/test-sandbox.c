/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-sandbox.c: what a sandboxed child (sb/sandbox.h, through sb_cmd) can and cannot do.
 * Each case runs a small bash script as nobody in a sandbox whose writable place, private
 * temporary directory and hidden directory are scratch directories of this test, next to
 * "outside" places the child must not reach: a file in the real temporary directory, a
 * FIFO and a Unix socket planted in the hidden directory, a listener on the host's
 * loopback, a world-writable directory elsewhere. Positive controls first (the child runs,
 * can write its own place, has a working loopback), so a "blocked" means blocked.
 *
 * Needs root (automake SKIP, exit 77, otherwise) and bash.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <mqueue.h>
#include <sched.h>
#include <pthread.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <stdlib.h>
#include <unistd.h>

#include "sb/argv.h"
#include "sb/error.h"
#include "sb/mem.h"
#include "sb/priv.h"
#include "sb/sandbox.h"
#include "sb/spawn.h"

#include "unit.h"

#define NOBODY 65534

static const struct sb_creds nobody = { .uid = NOBODY, .gid = NOBODY, .ngroups = 0 };

/* The scratch layout, made by main(). */
static char top[256], own[300], tmpdir[300], hidden[300], open_dir[300], outside[300];
/* A root of its own: /usr bound in, the scratch places' directories to mount on, a marker. */
static char newroot[300], bound[300];
static char pts[64]; /* a terminal opened out here, writable to all */
#define MQ_NAME "sb-sandbox-test"
#define MQUEUE_MAGIC 0x19800202 /* statfs(2) f_type of an mqueue file system */
static int host_port;

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* The sandbox the cases run in: `own` writable, `tmpdir` private, `hidden` hidden; with
 * own_root, in `newroot` with `bound` kept. */
static void
make_sandbox(struct sb_sandbox *sb, bool own_root)
{
	struct sb_error *err = NULL;

	memset(sb, 0, sizeof(*sb));
	if (own_root) {
		sb->root = newroot;
		ck_assert_int_eq(sb_sandbox_add(sb->bound, &sb->nbound, bound, &err), 0);
	}
	ck_assert_int_eq(sb_sandbox_add(sb->writable, &sb->nwritable, own, &err), 0);
	ck_assert_int_eq(sb_sandbox_add(sb->private_tmp, &sb->nprivate, tmpdir, &err), 0);
	ck_assert_int_eq(sb_sandbox_add(sb->hidden, &sb->nhidden, hidden, &err), 0);
	sb->tmp_size = 16 << 20;
	ck_assert_msg(sb_sandbox_prepare(sb, NOBODY, NOBODY, &err) == 0, "%s",
	    sb_error_message(err));
}

/* Run script (bash -c) as nobody, sandboxed or not (with a root of its own or not), in
 * cwd (NULL: `own`); its stdout into *res. */
static void
run_script_in(const char *script, bool sandboxed, bool own_root, const char *cwd_path,
    struct sb_cmd_result *res)
{
	_cleanup_free_ char *port = sb_xasprintf("PORT=%d", host_port);
	_cleanup_free_ char *dirs = sb_xasprintf("OWN=%s", own);
	_cleanup_free_ char *t = sb_xasprintf("TMPD=%s", tmpdir);
	_cleanup_free_ char *h = sb_xasprintf("HID=%s", hidden);
	_cleanup_free_ char *o = sb_xasprintf("OPEN=%s", open_dir);
	_cleanup_free_ char *x = sb_xasprintf("OUT=%s", outside);
	_cleanup_free_ char *tty = sb_xasprintf("PTS=%s", pts);
	_cleanup_free_ char *kept = sb_xasprintf("BOUND=%s", bound);
	/* The script's last status is not the point (grep -c of nothing is 1): its output is. */
	_cleanup_free_ char *body = sb_xasprintf("%s\nexit 0", script);
	char *argv[] = { (char *)"bash", (char *)"-c", body, NULL };
	char *envp[] = { (char *)"PATH=/usr/bin:/bin", port, dirs, t, h, o, x, tty, kept, NULL };
	_cleanup_close_ int cwd = open(cwd_path != NULL ? cwd_path : own,
	    O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct sb_sandbox sb;
	struct sb_cmd c = SB_CMD_INIT;
	struct sb_error *err = NULL;

	make_sandbox(&sb, own_root);
	c.path = "/bin/bash";
	c.argv = argv;
	c.envp = envp;
	c.cwd_fd = cwd;
	c.stdout_fd = SB_CMD_CAPTURE;
	c.stderr_fd = SB_CMD_CAPTURE;
	c.creds = &nobody;
	c.sandbox = sandboxed ? &sb : NULL;
	c.timeout_ms = 20000;
	ck_assert_msg(sb_cmd_run(&c, res, &err) == 0, "sb_cmd_run: %s", sb_error_message(err));
}

static void
run_script(const char *script, bool sandboxed, struct sb_cmd_result *res)
{
	run_script_in(script, sandboxed, false, NULL, res);
}

static void
expect(const char *script, bool sandboxed, const char *want)
{
	struct sb_cmd_result r;

	run_script(script, sandboxed, &r);
	ck_assert_msg(r.exit_code == 0 && strcmp(r.out.s, want) == 0,
	    "%s sandbox: '%s'\nexit %d, got '%s' (stderr '%s'), want '%s'",
	    sandboxed ? "in the" : "without a", script, r.exit_code, r.out.s, r.err.s, want);
	sb_cmd_result_release(&r);
}

/* Each case: a script, what it prints without the sandbox (the control), and within it. */
static const struct {
	const char *what, *script, *outside, *inside;
} cases[] = {
	{ "its own place is writable", "echo x >\"$OWN/f\" && cat \"$OWN/f\"", "x\n", "x\n" },
	{ "the working directory is writable", "echo y >here && cat here", "y\n", "y\n" },
	{ "no network interface but loopback",
	    "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | grep -cv '^lo$'", NULL, "0\n" },
	{ "loopback is up and usable",
	    "(exec 3<>/dev/tcp/127.0.0.1/1) 2>&1 | grep -c 'connect: Connection refused'", "1\n", "1\n" },
	{ "the host's loopback listener is not reached",
	    "(exec 3<>/dev/tcp/127.0.0.1/$PORT) 2>/dev/null && echo reached || echo blocked",
	    "reached\n", "blocked\n" },
	{ "the private temporary directory is empty and its own",
	    "ls -A \"$TMPD\" | wc -l; echo z >\"$TMPD/t\" && cat \"$TMPD/t\"", "1\nz\n",
	    "0\nz\n" },
	{ "the hidden directory shows nothing",
	    "ls -A \"$HID\" | wc -l", "2\n", "0\n" },
	{ "a FIFO planted in the hidden directory is out of reach",
	    "[ -p \"$HID/fifo\" ] && echo there || echo gone", "there\n", "gone\n" },
	{ "a socket planted in the hidden directory is out of reach",
	    "[ -S \"$HID/sock\" ] && echo there || echo gone", "there\n", "gone\n" },
	{ "a world-writable directory elsewhere is read-only",
	    "echo leak >\"$OPEN/leak\" 2>/dev/null && echo wrote || echo blocked", "wrote\n",
	    "blocked\n" },
	{ "the file system's root is read-only",
	    "touch /sandbox-test-$$ 2>&1 | grep -c 'Read-only'", "0\n", "1\n" },
	{ "no capability is left",
	    "grep -E '^Cap(Prm|Eff|Amb|Bnd):' /proc/self/status | grep -vc '0000000000000000$'",
	    "0\n", "0\n" },
	{ "its ids are still nobody's", "id -u; id -g", "65534\n65534\n", "65534\n65534\n" },
	{ "no_new_privs", "grep -c '^NoNewPrivs:.1' /proc/self/status", "1\n", "1\n" },
	{ "a terminal opened outside, writable to all, is not there",
	    "(echo hi >\"$PTS\") 2>/dev/null && echo wrote || echo blocked", "wrote\n", "blocked\n" },
	{ "a message queue made outside is not there",
	    "[ -e /dev/mqueue/" MQ_NAME " ] && echo there || echo gone", "there\n", "gone\n" },
};

START_TEST(test_cases)
{
	if (cases[_i].outside != NULL)
		expect(cases[_i].script, false, cases[_i].outside);
	expect(cases[_i].script, true, cases[_i].inside);
}
END_TEST

/*
 * With a root of its own (the task scripts' copy of the image): the child sees that root,
 * with its writable place, the place it keeps, /proc and /dev mounted in, and nothing else
 * of the container's; the rules of the other cases still hold in it.
 */
static const struct {
	const char *script, *want;
} root_cases[] = {
	{ "cat /only-in-its-root", "its own root\n" },
	{ "[ -e \"$OUT\" ] && echo there || echo gone", "gone\n" },
	{ "[ -e /etc/hostname ] && echo there || echo gone", "gone\n" },
	{ "echo x >\"$OWN/f\" && cat \"$OWN/f\" && echo y >here && cat here", "x\ny\n" },
	{ "cat \"$BOUND/kept\"; (echo z >\"$BOUND/kept\") 2>/dev/null && echo wrote || echo read-only",
	    "kept\nread-only\n" },
	{ "grep -c '^Uid:' /proc/self/status; [ -c /dev/null ] && echo null", "1\nnull\n" },
	{ "ls -A \"$HID\" | wc -l; ls -A \"$TMPD\" | wc -l", "0\n0\n" },
	{ "touch /sandbox-test-$$ 2>&1 | grep -c 'Read-only'", "1\n" },
	{ "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | grep -cv '^lo$'", "0\n" },
	/* No /sys: a name looked up there would stay cached for the agent to time. */
	{ "ls -A /sys | wc -l", "0\n" },
	/* /proc's own directories covered; /proc and /dev read-only (a device still writes). */
	{ "[ -e /proc/sys/kernel ] && echo seen || echo covered; "
	  "touch /dev/null 2>/dev/null && echo touched || echo read-only; echo x >/dev/null && echo wrote",
	    "covered\nread-only\nwrote\n" },
	/* Other processes covered in /proc (pid 1 is never ours), its own and its children not. */
	{ "[ -e /proc/1/status ] && echo seen || echo covered; sleep 1 & "
	  "[ -r /proc/$!/status ] && [ -r /proc/$$/status ] && echo own", "covered\nown\n" },
	/* The container's root is detached, not hidden under the new one. */
	{ "while read -r _ _ _ r m _; do [ \"$m\" = / ] && { [ \"$r\" = / ] && echo theirs || echo own; }; "
	  "done </proc/self/mountinfo", "own\n" },
};

START_TEST(test_own_root)
{
	struct sb_cmd_result r;

	run_script_in(root_cases[_i].script, true, true, NULL, &r);
	ck_assert_msg(r.exit_code == 0 && strcmp(r.out.s, root_cases[_i].want) == 0,
	    "own root: '%s'\nexit %d, got '%s' (stderr '%s'), want '%s'", root_cases[_i].script,
	    r.exit_code, r.out.s, r.err.s, root_cases[_i].want);
	if (_i == 3) { /* what it wrote is in the real place */
		_cleanup_free_ char *f = sb_xasprintf("%s/f", own);

		ck_assert_int_eq(access(f, F_OK), 0);
	}
	sb_cmd_result_release(&r);
}
END_TEST

/* Run argv (bash) as nobody in sb, in cwd, with envp; its output into *r. */
static void
run_with(const struct sb_sandbox *sb, char **argv, char **envp, int cwd, struct sb_cmd_result *r)
{
	struct sb_cmd c = SB_CMD_INIT;
	struct sb_error *err = NULL;

	c.path = "/bin/bash";
	c.argv = argv;
	c.envp = envp;
	c.cwd_fd = cwd;
	c.creds = &nobody;
	c.sandbox = sb;
	c.stdout_fd = SB_CMD_CAPTURE;
	c.stderr_fd = SB_CMD_CAPTURE;
	ck_assert_msg(sb_cmd_run(&c, r, &err) == 0, "sb_cmd_run: %s", sb_error_message(err));
}

/*
 * A writable place inside a place it keeps (a check's workspace inside the runner's area):
 * mounted after the outer one, whatever the order given, so it is the real directory and
 * writable, not the copy's empty one covered by the outer mount.
 */
START_TEST(test_own_root_nested_places)
{
	_cleanup_free_ char *ws = sb_xasprintf("%s/ws", bound);
	_cleanup_free_ char *f = sb_xasprintf("%s/written", ws);
	_cleanup_free_ char *env_ws = sb_xasprintf("WS=%s", ws);
	char *argv[] = { (char *)"bash", (char *)"-c",
		(char *)"echo w >\"$WS/written\" && cat \"$WS/written\"; "
			"(echo z >\"$BOUND/kept\") 2>/dev/null && echo wrote || echo read-only",
		NULL };
	_cleanup_free_ char *kept = sb_xasprintf("BOUND=%s", bound);
	char *envp[] = { (char *)"PATH=/usr/bin:/bin", env_ws, kept, NULL };
	_cleanup_close_ int cwd = open(ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct sb_sandbox sb;
	struct sb_cmd_result r;
	struct sb_error *err = NULL;

	memset(&sb, 0, sizeof(sb));
	sb.root = newroot;
	/* The inner place first: the order given must not matter. */
	ck_assert_int_eq(sb_sandbox_add(sb.writable, &sb.nwritable, ws, &err), 0);
	ck_assert_int_eq(sb_sandbox_add(sb.bound, &sb.nbound, bound, &err), 0);
	ck_assert_msg(sb_sandbox_prepare(&sb, NOBODY, NOBODY, &err) == 0, "%s",
	    sb_error_message(err));
	run_with(&sb, argv, envp, cwd, &r);
	ck_assert_msg(r.exit_code == 0 && strcmp(r.out.s, "w\nread-only\n") == 0,
	    "nested: exit %d, got '%s' (stderr '%s')", r.exit_code, r.out.s, r.err.s);
	ck_assert_int_eq(access(f, F_OK), 0);
	sb_cmd_result_release(&r);
}
END_TEST

static void *
sleeper(void *arg)
{
	pid_t *tid = arg;

	*tid = (pid_t)syscall(SYS_gettid);
	for (;;)
		pause();
	return NULL;
}

/*
 * A scaffold: of a directory, only the places mounted below it are there (on an empty
 * tmpfs); what else it holds is not, and nothing looked up there reaches it.
 */
START_TEST(test_own_root_scaffold)
{
	_cleanup_free_ char *area = sb_xasprintf("%s/area", top);
	_cleanup_free_ char *keep = sb_xasprintf("%s/area/keep", top);
	_cleanup_free_ char *env_area = sb_xasprintf("AREA=%s", area);
	char *argv[] = { (char *)"bash", (char *)"-c",
		(char *)"ls -A \"$AREA\" >/dev/null 2>&1 || echo unlistable; cat \"$AREA/keep/f\"; "
			"[ -e \"$AREA/other\" ] && echo other || echo no-other", NULL };
	char *envp[] = { (char *)"PATH=/usr/bin:/bin", env_area, NULL };
	_cleanup_close_ int cwd = -1;
	struct sb_sandbox sb;
	struct sb_cmd_result r;
	struct sb_error *err = NULL;

	cwd = open(keep, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(cwd, 0);
	memset(&sb, 0, sizeof(sb));
	sb.root = newroot;
	sb.scaffold = area;
	ck_assert_int_eq(sb_sandbox_add(sb.bound, &sb.nbound, keep, &err), 0);
	ck_assert_msg(sb_sandbox_prepare(&sb, NOBODY, NOBODY, &err) == 0, "%s",
	    sb_error_message(err));
	run_with(&sb, argv, envp, cwd, &r);
	ck_assert_msg(strcmp(r.out.s, "unlistable\nkept\nno-other\n") == 0, "got '%s' (stderr '%s')",
	    r.out.s, r.err.s);
	sb_cmd_result_release(&r);
	/* Without a root of its own there is no scaffold. */
	memset(&sb, 0, sizeof(sb));
	sb.scaffold = area;
	ck_assert_int_lt(sb_sandbox_prepare(&sb, NOBODY, NOBODY, &err), 0);
	sb_error_release(&err);
}
END_TEST

/* A thread of another process, reached as /proc/<tid> (not listed), is covered too. */
START_TEST(test_own_root_covers_threads)
{
	volatile pid_t tid = 0;
	pthread_t th;
	struct sb_cmd_result r;
	_cleanup_free_ char *script = NULL;

	ck_assert_int_eq(pthread_create(&th, NULL, sleeper, (void *)&tid), 0);
	while (tid == 0)
		usleep(1000);
	script = sb_xasprintf("[ -e /proc/%d/status ] && echo seen || echo covered; "
			      "[ -e /proc/%d/status ] && echo seen || echo covered",
	    (int)tid, (int)getpid());
	run_script_in(script, true, true, NULL, &r);
	ck_assert_msg(strcmp(r.out.s, "covered\ncovered\n") == 0, "got '%s' (stderr '%s')",
	    r.out.s, r.err.s);
	sb_cmd_result_release(&r);
}
END_TEST

/* A working directory the new root does not mount in is refused, not replaced by the copy's. */
START_TEST(test_own_root_refuses_a_cwd_left_out)
{
	struct sb_sandbox sb;
	struct sb_cmd c = SB_CMD_INIT;
	struct sb_cmd_result r;
	struct sb_error *err = NULL;
	char *argv[] = { (char *)"true", NULL };
	_cleanup_close_ int cwd = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	make_sandbox(&sb, true);
	c.path = "/bin/true";
	c.argv = argv;
	c.cwd_fd = cwd;
	c.creds = &nobody;
	c.sandbox = &sb;
	ck_assert_int_lt(sb_cmd_run(&c, &r, &err), 0);
	ck_assert_msg(strstr(sb_error_message(err), "working directory") != NULL, "%s",
	    sb_error_message(err));
	sb_error_release(&err);
}
END_TEST

/* A hidden or private directory that would hide the writable place is refused. */
START_TEST(test_prepare_refuses_hiding_the_writable)
{
	struct sb_sandbox sb;
	struct sb_error *err = NULL;
	_cleanup_free_ char *parent = sb_xstrdup(own);

	*strrchr(parent, '/') = '\0';
	memset(&sb, 0, sizeof(sb));
	ck_assert_int_eq(sb_sandbox_add(sb.writable, &sb.nwritable, own, &err), 0);
	ck_assert_int_eq(sb_sandbox_add(sb.hidden, &sb.nhidden, parent, &err), 0);
	ck_assert_int_lt(sb_sandbox_prepare(&sb, NOBODY, NOBODY, &err), 0);
	ck_assert_int_eq(sb_error_code(err), EINVAL);
	sb_error_release(&err);
	memset(&sb, 0, sizeof(sb));
	ck_assert_int_eq(sb_sandbox_add(sb.writable, &sb.nwritable, own, &err), 0);
	ck_assert_int_eq(sb_sandbox_add(sb.private_tmp, &sb.nprivate, "/", &err), 0);
	ck_assert_int_lt(sb_sandbox_prepare(&sb, NOBODY, NOBODY, &err), 0);
	sb_error_release(&err);
	/* Root is never sandboxed: its map would need privilege, and it would not be a drop. */
	memset(&sb, 0, sizeof(sb));
	ck_assert_int_lt(sb_sandbox_prepare(&sb, 0, 0, &err), 0);
	sb_error_release(&err);
	ck_assert_int_lt(sb_sandbox_add(sb.hidden, &sb.nhidden, "relative", &err), 0);
	sb_error_release(&err);
	/* A root of its own: absolute, not "/", not overlapping what is mounted into it; a
	 * place to keep needs one. */
	{
		static const char *const roots[] = { "relative", "/", NULL };
		_cleanup_free_ char *inside = sb_xasprintf("%s/x", own);

		for (size_t i = 0; i < SB_ARRAY_SIZE(roots); i++) {
			memset(&sb, 0, sizeof(sb));
			sb.root = roots[i] != NULL ? roots[i] : inside;
			ck_assert_int_eq(sb_sandbox_add(sb.writable, &sb.nwritable, own, &err), 0);
			ck_assert_int_lt(sb_sandbox_prepare(&sb, NOBODY, NOBODY, &err), 0);
			ck_assert_int_eq(sb_error_code(err), EINVAL);
			sb_error_release(&err);
		}
		memset(&sb, 0, sizeof(sb));
		ck_assert_int_eq(sb_sandbox_add(sb.bound, &sb.nbound, bound, &err), 0);
		ck_assert_int_lt(sb_sandbox_prepare(&sb, NOBODY, NOBODY, &err), 0);
		sb_error_release(&err);
	}
	/* The runner's two sandboxes: without a root of its own both are the container's; with
	 * one, the withheld one enters it and the open one hides the directory it is in. */
	{
		struct sb_runner_places pl;
		struct sb_sandbox open_sb, withheld_sb;
		_cleanup_free_ char *root = sb_xasprintf("%s/image", newroot);
		bool hides_parent = false;

		memset(&pl, 0, sizeof(pl));
		pl.runner_dir = own;
		pl.source = hidden;
		pl.agent_socket = "/run/sock-dir/sse.sock";
		pl.root = "/";
		ck_assert_int_eq(sb_sandbox_for_runner(&open_sb, &withheld_sb, &pl, NOBODY, NOBODY,
				     &err), 0);
		ck_assert_ptr_null(open_sb.root);
		ck_assert_ptr_null(withheld_sb.root);
		ck_assert_int_eq(open_sb.nhidden, withheld_sb.nhidden);
		pl.root = root;
		ck_assert_int_eq(sb_sandbox_for_runner(&open_sb, &withheld_sb, &pl, NOBODY, NOBODY,
				     &err), 0);
		ck_assert_str_eq(withheld_sb.root, root);
		ck_assert_ptr_null(open_sb.root);
		for (size_t i = 0; i < open_sb.nhidden; i++)
			hides_parent |= strcmp(open_sb.hidden[i], newroot) == 0;
		ck_assert_msg(hides_parent, "the open sandbox does not hide %s", newroot);
		ck_assert_int_eq(open_sb.nhidden, withheld_sb.nhidden + 1);
		/* The socket's directory, not the socket. */
		hides_parent = false;
		for (size_t i = 0; i < withheld_sb.nhidden; i++)
			hides_parent |= strcmp(withheld_sb.hidden[i], "/run/sock-dir") == 0;
		ck_assert(hides_parent);
		/* A root right below / has no directory of its own to hide. */
		pl.root = "/image";
		ck_assert_int_lt(sb_sandbox_for_runner(&open_sb, &withheld_sb, &pl, NOBODY, NOBODY,
				     &err), 0);
		sb_error_release(&err);
	}
	/* A sandbox without credentials to drop to is refused when the child starts. */
	{
		char *argv[] = { (char *)"true", NULL };
		struct sb_cmd c = SB_CMD_INIT;
		struct sb_cmd_result r;

		make_sandbox(&sb, false);
		c.path = "/bin/true";
		c.argv = argv;
		c.sandbox = &sb;
		ck_assert_int_lt(sb_cmd_run(&c, &r, &err), 0);
		sb_error_release(&err);
	}
}
END_TEST

static Suite *
sandbox_suite(void)
{
	Suite *s = suite_create("sandbox");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_cases, 0, (int)SB_ARRAY_SIZE(cases));
	tcase_add_test(tc, test_prepare_refuses_hiding_the_writable);
	tcase_add_loop_test(tc, test_own_root, 0, (int)SB_ARRAY_SIZE(root_cases));
	tcase_add_test(tc, test_own_root_refuses_a_cwd_left_out);
	tcase_add_test(tc, test_own_root_nested_places);
	tcase_add_test(tc, test_own_root_covers_threads);
	tcase_add_test(tc, test_own_root_scaffold);
	suite_add_tcase(s, tc);
	return s;
}

/* A listener on the host's loopback, in a child that accepts until killed. */
static pid_t
start_listener(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	pid_t pid;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(s, 16) < 0 ||
	    getsockname(s, (struct sockaddr *)&a, &len) < 0)
		return -1;
	host_port = ntohs(a.sin_port);
	pid = fork();
	if (pid == 0) {
		for (;;) {
			int c = accept(s, NULL, NULL);

			if (c >= 0)
				close(c);
		}
	}
	close(s);
	return pid;
}

/* mkdir -p for a path below newroot (what it mounts on). */
static int
mkdirs_in_root(const char *path)
{
	_cleanup_free_ char *p = sb_xasprintf("%s%s", newroot, path);

	for (char *s = p + strlen(newroot) + 1; *s != '\0'; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) < 0 && errno != EEXIST)
			return -1;
		*s = '/';
	}
	return mkdir(p, 0755) < 0 && errno != EEXIST ? -1 : 0;
}

/* newroot: the host's /usr bound in (the programs), the merged-/usr links, a marker, and the
 * directories the sandbox mounts on; `bound`, a place it keeps, with a file. */
static int
setup_root(void)
{
	static const char *const links[][2] = { { "bin", "usr/bin" }, { "lib", "usr/lib" },
		{ "lib64", "usr/lib64" }, { "sbin", "usr/sbin" } };
	_cleanup_free_ char *usr = NULL, *marker = NULL, *kept = NULL;
	FILE *f;

	snprintf(newroot, sizeof(newroot), "%s/root", top);
	snprintf(bound, sizeof(bound), "%s/bound", top);
	usr = sb_xasprintf("%s/usr", newroot);
	if (mkdir(newroot, 0755) < 0 || mkdir(usr, 0755) < 0 ||
	    mount("/usr", usr, NULL, MS_BIND | MS_REC, NULL) < 0 || mkdir(bound, 0755) < 0)
		return -1;
	{
		_cleanup_free_ char *ws = sb_xasprintf("%s/ws", bound);

		if (mkdir(ws, 0777) < 0 || chmod(ws, 0777) < 0)
			return -1;
	}
	for (size_t i = 0; i < SB_ARRAY_SIZE(links); i++) {
		_cleanup_free_ char *l = sb_xasprintf("%s/%s", newroot, links[i][0]);

		if (symlink(links[i][1], l) < 0)
			return -1;
	}
	if (mkdirs_in_root("/proc") < 0 || mkdirs_in_root("/dev") < 0 ||
	    mkdirs_in_root("/sys") < 0 || mkdirs_in_root(own) < 0 || mkdirs_in_root(tmpdir) < 0 ||
	    mkdirs_in_root(hidden) < 0 || mkdirs_in_root(bound) < 0 || mkdirs_in_root("/etc") < 0)
		return -1;
	{
		_cleanup_free_ char *a = sb_xasprintf("%s/area", top);
		_cleanup_free_ char *k = sb_xasprintf("%s/area/keep", top);
		_cleanup_free_ char *o = sb_xasprintf("%s/area/other", top);
		_cleanup_free_ char *kf = sb_xasprintf("%s/area/keep/f", top);

		if (mkdir(a, 0755) < 0 || mkdir(k, 0755) < 0 || mkdir(o, 0755) < 0 ||
		    mkdirs_in_root(a) < 0 || (f = fopen(kf, "we")) == NULL ||
		    fputs("kept\n", f) < 0 || fclose(f) != 0)
			return -1;
	}
	marker = sb_xasprintf("%s/only-in-its-root", newroot);
	kept = sb_xasprintf("%s/kept", bound);
	if ((f = fopen(marker, "we")) == NULL || fputs("its own root\n", f) < 0 || fclose(f) != 0 ||
	    (f = fopen(kept, "we")) == NULL || fputs("kept\n", f) < 0 || fclose(f) != 0)
		return -1;
	return 0;
}

/* The scratch directories and the things planted in them. */
static int
setup(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_free_ char *fifo = NULL, *sock = NULL, *real_tmp_file = NULL;
	int s;

	snprintf(top, sizeof(top), "/tmp/sb-sandbox-test.XXXXXX");
	if (mkdtemp(top) == NULL || chmod(top, 0755) < 0)
		return -1;
	snprintf(own, sizeof(own), "%s/own", top);
	snprintf(tmpdir, sizeof(tmpdir), "%s/tmp", top);
	snprintf(hidden, sizeof(hidden), "%s/hidden", top);
	snprintf(open_dir, sizeof(open_dir), "%s/open", top);
	snprintf(outside, sizeof(outside), "%s/outside", top);
	if (mkdir(own, 0755) < 0 || chown(own, NOBODY, NOBODY) < 0 || mkdir(tmpdir, 01777) < 0 ||
	    chmod(tmpdir, 01777) < 0 || mkdir(hidden, 0777) < 0 || chmod(hidden, 0777) < 0 ||
	    mkdir(open_dir, 0777) < 0 || chmod(open_dir, 0777) < 0)
		return -1;
	/* Something of someone else's in the real temporary directory. */
	real_tmp_file = sb_xasprintf("%s/someone-elses", tmpdir);
	if (close(open(real_tmp_file, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) < 0)
		return -1;
	/* What the agent would plant where the runner should not reach. */
	fifo = sb_xasprintf("%s/fifo", hidden);
	sock = sb_xasprintf("%s/sock", hidden);
	if (mkfifo(fifo, 0666) < 0 || chmod(fifo, 0666) < 0)
		return -1;
	memcpy(sa.sun_path, sock, strlen(sock) + 1);
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0 || bind(s, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(s, 4) < 0 ||
	    chmod(sock, 0777) < 0)
		return -1;
	/* s stays open (and listening) for the whole test. */
	if (setup_root() < 0)
		return -1;
	/* A terminal and a message queue the agent could open for everyone. */
	{
		int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
		const char *name;
		mqd_t q;

		if (m < 0 || grantpt(m) < 0 || unlockpt(m) < 0 || (name = ptsname(m)) == NULL ||
		    chmod(name, 0666) < 0)
			return -1;
		snprintf(pts, sizeof(pts), "%s", name);
		/* m stays open: the terminal lives as long as the test. */
		(void)mq_unlink("/" MQ_NAME);
		q = mq_open("/" MQ_NAME, O_CREAT | O_RDWR, 0666, NULL);
		if (q == (mqd_t)-1)
			return -1;
		(void)fchmod((int)q, 0666);
	}
	return 0;
}

int
main(void)
{
	SRunner *sr;
	pid_t listener;
	int failed;

	if (geteuid() != 0 || access("/bin/bash", X_OK) < 0)
		return 77; /* automake: SKIP */
	/*
	 * A mount namespace of the test's own, with the POSIX message queues mounted where a
	 * container has them (a host may not), so the control "the queue is there outside"
	 * holds; nothing of it is seen outside this test.
	 */
	{
		struct statfs fs;

		if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
		    (mkdir("/dev/mqueue", 01777) < 0 && errno != EEXIST) ||
		    statfs("/dev/mqueue", &fs) < 0 ||
		    (fs.f_type != MQUEUE_MAGIC &&
			mount("mqueue", "/dev/mqueue", "mqueue", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)) {
			fprintf(stderr, "test-sandbox: a mount namespace of its own: %s\n", strerror(errno));
			return 99;
		}
	}
	if (setup() < 0 || (listener = start_listener()) < 0) {
		fprintf(stderr, "test-sandbox: cannot set up: %s\n", strerror(errno));
		return 99;
	}
	sr = srunner_create(sandbox_suite());
	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	(void)mq_unlink("/" MQ_NAME);
	srunner_free(sr);
	kill(listener, SIGKILL);
	/*
	 * The host's /usr is bound into newroot: the removal below would go through it. Only
	 * once it is unmounted (the mount dies with this namespace anyway, so what is left is
	 * only the scratch directory).
	 */
	{
		_cleanup_free_ char *usr = sb_xasprintf("%s/usr", newroot);
		struct stat a, b;

		if (newroot[0] == '\0' || umount2(usr, MNT_DETACH) == 0 ||
		    (stat(usr, &a) == 0 && stat("/usr", &b) == 0 && a.st_ino != b.st_ino))
			(void)nftw(top, rm_one, 16, FTW_DEPTH | FTW_PHYS);
		else
			fprintf(stderr, "test-sandbox: %s left in place (cannot unmount %s)\n", top, usr);
	}
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
