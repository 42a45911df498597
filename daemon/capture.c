/* SPDX-License-Identifier: Apache-2.0 */
/*
 * capture.c: the workers that read the agent's files as the agent, and grading's
 * preparation.
 *
 *   - become_agent: a worker drops to the agent's uid before it reads anything of the
 *     agent's (the tree, the dialog), so a symlink the agent planted can only reach what
 *     the agent could read anyway (root reading through it would leak the reference patch);
 *   - /diff and /files: the agent's tree against the private baseline, through libgit2;
 *   - /agent/dialog: the agent's dialog.jsonl, links refused;
 *   - prepare_grading: the patch captured in a child that becomes the agent, checked as it
 *     comes back, split into what is graded, and applied by the runner to a fresh copy of
 *     the pristine source without its history (docs/grading.md, steps 1-5).
 */
#include "config.h"

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "sb/buf.h"
#include "sb/dialog.h"
#include "sb/fs.h"
#include "sb/git.h"
#include "sb/json.h"
#include "sb/limits.h"
#include "sb/log.h"
#include "sb/mem.h"
#include "sb/spawn.h"
#include "sb/tree.h"

#include "fsutil.h"
#include "grading.h"
#include "runner.h"
#include "work.h"

/* --- reading the agent's files, as the agent ------------------------------------------ */

/* Become the agent: from here on this worker can read only what the agent can. */
static int
become_agent(struct helper *h)
{
	const char *step;

	if (sb_priv_drop(&h->c->agent, &step) < 0) {
		sb_log_errno(SB_LOG_ERROR, errno, "worker: drop to the agent user (%s)", step);
		return -1;
	}
	/*
	 * This worker now has the agent's uid but still holds what root opened (the private
	 * git state, the results directory). The kernel makes it non-dumpable on the uid
	 * change only if fs.suid_dumpable is 0, a host setting; say so ourselves, so the agent
	 * can never ptrace it or open its /proc files (docs/design.md, "Processes and users in
	 * a run": the agent cannot read the run's results).
	 */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) {
		sb_log_errno(SB_LOG_ERROR, errno, "worker: PR_SET_DUMPABLE");
		return -1;
	}
	return 0;
}

static int
capture_as_agent(struct helper *h, struct sb_git_capture *cap, char **ret_commits,
    struct sb_error **err)
{
	struct sb_git_baseline *b = NULL;
	int r;

	if (sb_git_init(err) < 0 || sb_git_baseline_open(h->git_dir, h->c->source, &b, err) < 0)
		return -1;
	r = sb_git_capture(b, SB_GIT_DIFF_MAX, cap, err);
	if (r == 0 && ret_commits != NULL && sb_git_commits_log(b, SB_GIT_COMMITS_LOG_MAX,
						 ret_commits, err) < 0)
		r = -1;
	sb_git_baseline_free(b);
	return r;
}

int
work_capture(struct helper *h, struct job_spec *j)
{
	struct sb_git_capture cap;
	struct sb_error *err = NULL;
	json_auto_t *reply = NULL;

	if (become_agent(h) < 0)
		return work_failed(dproto_reply_error(j->reply_fd, 500, "git failed"));
	memset(&cap, 0, sizeof(cap));
	if (capture_as_agent(h, &cap, NULL, &err) < 0) {
		sb_log(SB_LOG_WARN, "%s: %s", dreq_name(j->type), sb_error_message(err));
		sb_error_release(&err);
		return work_failed(dproto_reply_error(j->reply_fd, 500, "git failed"));
	}
	if (j->type == DREQ_DIFF) {
		reply = json_pack("{s:o}", "diff", json_stringn_nocheck(cap.diff, cap.diff_len));
	} else {
		json_t *files = json_array();

		for (size_t i = 0; i < cap.nfiles; i++)
			json_array_append_new(files,
			    json_pack("{s:o, s:s, s:I, s:I}", "path",
				sb_json_string_or_null(cap.files[i].path), "status",
				cap.files[i].status == SB_GIT_ADDED	  ? "added"
				: cap.files[i].status == SB_GIT_DELETED ? "deleted"
									  : "modified",
				"additions", (json_int_t)cap.files[i].additions, "deletions",
				(json_int_t)cap.files[i].deletions));
		reply = json_pack("{s:o}", "files", files);
	}
	/* A diff that is not valid UTF-8 (a binary patch is ASCII; a text file may not be). */
	if (reply == NULL) {
		_cleanup_free_ char *d = sb_xmemdup(cap.diff, cap.diff_len);

		reply = json_pack("{s:o}", "diff", sb_json_string_or_null(d));
	}
	sb_git_capture_release(&cap);
	return work_done(dproto_reply(j->reply_fd, 200, reply));
}

int
work_dialog(struct helper *h, struct job_spec *j)
{
	json_int_t since = j->req.since;
	_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(SB_JSON_FILE_MAX * 4);
	_cleanup_close_ int dir = -1;
	json_auto_t *reply = NULL;
	json_t *entries;
	struct sb_error *err = NULL;

	/* The archive is the agent's: read it as the agent, links refused. */
	if (become_agent(h) < 0)
		return WORK_NOREPLY;
	dir = open(h->c->archive, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir >= 0 && sb_read_file_at(dir, "dialog.jsonl", SB_OPEN_NO_SYMLINKS, &b, &err) < 0 &&
	    sb_error_code(err) != ENOENT) {
		sb_error_release(&err);
		return work_failed(dproto_reply_error(j->reply_fd, 500, "cannot read dialog.jsonl"));
	}
	sb_error_release(&err);
	entries = sb_dialog_entries_since(b.s, b.len, since);
	reply = json_pack("{s:o}", "entries", entries);
	return work_done(dproto_reply(j->reply_fd, 200, reply));
}

/* --- grading's preparation ---------------------------------------------------------- */

/* The most of a capture's error message that comes back from its child. */
#define CAPTURE_ERROR_MAX 1024

/* What prepare_grading's capture brings back from the agent's side. */
struct grading_capture {
	char *diff;
	size_t len;
	char *commits;
	struct sb_git_file *files;
	size_t nfiles;
};

#define CAPTURE_RECORD (5 * 8 + 2) /* a file table entry, its path apart */

static void
grading_capture_release(struct grading_capture *c)
{
	for (size_t i = 0; i < c->nfiles; i++)
		free(c->files[i].path);
	free(c->files);
	free(c->diff);
	free(c->commits);
	memset(c, 0, sizeof(*c));
}


/*
 * The capture's child: become the agent, capture, and send what prepare_grading needs over
 * fd: a status byte, then either [u64 len][patch][u64 len][commits log][u64 nfiles] and the
 * file table (status 0), or the error's message (status 1). Never returns.
 */
static _noreturn_ void
capture_child(struct helper *h, int fd)
{
	struct sb_git_capture cap;
	struct sb_error *cerr = NULL;
	char *commits = NULL;
	char st = 0;
	uint64_t l1, l2, nf;

	memset(&cap, 0, sizeof(cap));
	if (become_agent(h) < 0)
		_exit(1);
	if (capture_as_agent(h, &cap, &commits, &cerr) < 0) {
		const char *m = sb_error_message(cerr);
		size_t n = strlen(m) > CAPTURE_ERROR_MAX ? CAPTURE_ERROR_MAX : strlen(m);

		sb_log(SB_LOG_WARN, "capture: %s", m);
		st = 1;
		if (write(fd, &st, 1) != 1 || write(fd, m, n) != (ssize_t)n)
			_exit(1);
		_exit(0);
	}
	l1 = cap.diff_len;
	l2 = strlen(commits);
	nf = cap.nfiles;
	if (!write_all(fd, &st, 1) || !write_all(fd, &l1, 8) || !write_all(fd, cap.diff, l1) ||
	    !write_all(fd, &l2, 8) || !write_all(fd, commits, l2) || !write_all(fd, &nf, 8))
		_exit(1);
	/* Each file: its section, lines, status, binary, then its path. */
	for (size_t i = 0; i < cap.nfiles; i++) {
		const struct sb_git_file *f = &cap.files[i];
		uint64_t rec[5] = { f->diff_off, f->diff_len, f->additions, f->deletions,
			strlen(f->path) };
		unsigned char flags[2] = { (unsigned char)f->status, f->binary };

		if (!write_all(fd, rec, sizeof(rec)) || !write_all(fd, flags, 2) ||
		    !write_all(fd, f->path, rec[4]))
			_exit(1);
	}
	_exit(0);
}

/*
 * What the capture's child sent with status 0, into *ret: every length is bounded by what
 * arrived, every file's section lies within the diff, and the table accounts for every byte.
 */
static int
capture_parse(const struct sb_buf *b, struct grading_capture *ret, struct sb_error **err)
{
	uint64_t l1, l2, nf;
	size_t at;

	/* What the child sent is checked, not trusted: it read the agent's tree. */
	if (b->s[0] != 0 || b->len < 25)
		return sb_error_set(err, EPROTO, "short capture");
	memcpy(&l1, b->s + 1, 8);
	if (l1 > b->len - 25)
		return sb_error_set(err, EPROTO, "bad capture");
	memcpy(&l2, b->s + 9 + l1, 8);
	if (l2 > b->len - 25 - l1)
		return sb_error_set(err, EPROTO, "bad capture");
	memcpy(&nf, b->s + 17 + l1 + l2, 8);
	at = 25 + l1 + l2;
	if (nf > SB_GIT_CHANGED_FILES_MAX)
		return sb_error_set(err, EPROTO, "bad capture");
	memset(ret, 0, sizeof(*ret));
	ret->files = sb_xcalloc(nf > 0 ? nf : 1, sizeof(*ret->files));
	for (uint64_t i = 0; i < nf; i++) {
		struct sb_git_file *f = &ret->files[i];
		uint64_t rec[5];

		if (b->len - at < sizeof(rec) + 2)
			break;
		memcpy(rec, b->s + at, sizeof(rec));
		at += sizeof(rec);
		f->status = (enum sb_git_status)(unsigned char)b->s[at];
		f->binary = b->s[at + 1] != 0;
		at += 2;
		if (rec[0] > l1 || rec[1] > l1 - rec[0] || rec[4] == 0 || rec[4] > 4096 ||
		    rec[4] > b->len - at || memchr(b->s + at, '\0', rec[4]) != NULL)
			break;
		f->diff_off = rec[0];
		f->diff_len = rec[1];
		f->additions = rec[2];
		f->deletions = rec[3];
		f->path = sb_xstrndup(b->s + at, rec[4]);
		at += rec[4];
		ret->nfiles++;
	}
	if (ret->nfiles != nf || at != b->len) {
		grading_capture_release(ret);
		return sb_error_set(err, EPROTO, "bad capture file table");
	}
	ret->diff = sb_xmemdup(b->s + 9, l1);
	ret->len = l1;
	ret->commits = sb_xmemdup(b->s + 17 + l1, l2);
	return 0;
}

/*
 * Capture in a child that becomes the agent (capture_child), so that a capture the agent's
 * tree makes fail can be told apart from a child that died, and said. Returns 0, or -1
 * with *ret_refused set when the tree was refused (the agent's doing) and unset for a
 * failure of our own.
 */
static int
capture_for_grading(struct helper *h, struct grading_capture *ret, bool *ret_refused,
    struct sb_error **err)
{
	/* The diff, the commits, and a file table whose paths are at most the diff again. */
	_cleanup_buf_ struct sb_buf b = SB_BUF_INIT((size_t)SB_GIT_DIFF_MAX * 2 +
	    SB_GIT_COMMITS_LOG_MAX + (size_t)SB_GIT_CHANGED_FILES_MAX * CAPTURE_RECORD + 64);
	int fds[2], status;
	pid_t pid;

	*ret_refused = false;
	if (pipe2(fds, O_CLOEXEC) < 0)
		return sb_error_errno(err, errno, "pipe2");
	pid = fork();
	if (pid < 0)
		return sb_error_errno(err, errno, "fork");
	if (pid == 0) {
		close(fds[0]);
		capture_child(h, fds[1]);
	}
	close(fds[1]);
	if (sb_buf_read_fd(&b, fds[0], err) < 0) {
		close(fds[0]);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -1;
	}
	close(fds[0]);
	if (SB_RETRY_EINTR(waitpid(pid, &status, 0)) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0 || b.len < 1)
		return sb_error_set(err, EIO, "git failed");
	if (b.s[0] == 1) {
		_cleanup_free_ char *msg = sb_xmemdup(b.s + 1, b.len - 1);

		*ret_refused = true;
		return sb_error_set(err, EINVAL, "%s", msg);
	}
	return capture_parse(&b, ret, err);
}

/* What a copy for grading leaves out: every git repository of the pristine tree. */
static const char *const no_history[] = { ".git", NULL };

/*
 * The steps of work_prepare_grading. Each returns 0 to go on, or the worker's exit status
 * once it has answered the failure.
 */

/*
 * 2-3. The agent's change, kept in the results directory. A tree that cannot be
 * captured (a file it made unreadable, a FIFO where git reads, a file or a diff past
 * the size limits, a path too deep) is the agent's to answer for: the grade is failed
 * with the reason, never an error a run could be made to end in (the evaluator tells
 * the two apart by the message).
 */
static int
prepare_capture(struct helper *h, struct job_spec *j, struct grading_capture *cap)
{
	struct sb_error *err = NULL;
	bool refused = false;

	if (capture_for_grading(h, cap, &refused, &err) < 0) {
		int rc;

		sb_log(SB_LOG_ERROR, "prepare_grading: %s", sb_error_message(err));
		rc = refused ? dproto_reply_error(j->reply_fd, 500, "patch capture failed: %s",
				   sb_error_message(err))
			     : dproto_reply_error(j->reply_fd, 500, "git failed");
		sb_error_release(&err);
		return work_failed(rc);
	}
	if (sb_write_file_atomic_at(h->results_fd, "final.patch", cap->diff, cap->len, 0644, &err) < 0 ||
	    sb_write_file_atomic_at(h->results_fd, "commits.log", cap->commits, strlen(cap->commits),
		0644, &err) < 0) {
		sb_log(SB_LOG_ERROR, "prepare_grading: %s", sb_error_message(err));
		sb_error_release(&err);
		return work_failed(dproto_reply_error(j->reply_fd, 500, "cannot write final.patch"));
	}
	return 0;
}

/*
 * 3b. What is graded: the patch without what it does to the paths the task protects
 * (its tests, their registration, its harness: grading.h), which grading keeps as the
 * pristine tree has them, so a patch cannot pass by changing the checks. final.patch
 * stays the patch as captured; what was left out is in the reply, for result.json.
 */
static int
prepare_split(struct helper *h, struct job_spec *j, const struct grading_capture *cap,
    struct sb_buf *graded, json_t **ret_reverted)
{
	struct sb_error *err = NULL;
	json_int_t count;

	if (grading_patch(h->c->task, cap->diff, cap->len, cap->files, cap->nfiles, graded,
		ret_reverted, &err) < 0) {
		sb_log(SB_LOG_ERROR, "prepare_grading: %s", sb_error_message(err));
		sb_error_release(&err);
		return work_failed(dproto_reply_error(j->reply_fd, 500, "cannot split the patch"));
	}
	count = json_integer_value(json_object_get(*ret_reverted, "count"));
	if (count > 0) {
		sb_log(SB_LOG_INFO, "prepare_grading: %lld protected path(s) graded as pristine",
		    (long long)count);
		if (sb_write_file_atomic_at(h->results_fd, "graded.patch", graded->s ? graded->s : "",
			graded->len, 0644, &err) < 0) {
			sb_log(SB_LOG_WARN, "prepare_grading: %s", sb_error_message(err));
			sb_error_release(&err);
		}
	}
	return 0;
}

/* The task's baseline (dataset verify --update-baseline), for the evaluator; or NULL. */
static json_t *
prepare_baseline(struct helper *h)
{
	struct sb_error *err = NULL;
	json_t *baseline = NULL;

	if (sb_json_load_file_at(h->bench_fd, "baseline.json", SB_JSON_FILE_MAX, &baseline, &err) < 0) {
		if (sb_error_code(err) != ENOENT)
			sb_log(SB_LOG_WARN, "prepare_grading: baseline.json: %s, ignoring",
			    sb_error_message(err));
		sb_error_release(&err);
		return NULL;
	}
	return baseline;
}

/*
 * 4. A fresh copy of the pristine source for the runner, without its history: the
 * pristine repository may hold the upstream history, and with it the fix, and the
 * grading build runs the patch's code. No .git at any level (submodules included).
 * *ret_src is the copy's fd.
 */
static int
prepare_pristine(struct helper *h, struct job_spec *j, int *ret_src)
{
	_cleanup_close_ int repo = -1, gfd = -1;
	struct sb_error *err = NULL;
	struct sb_copy_opts o;
	int src = -1;

	memset(&o, 0, sizeof(o));
	o.only_uid = (uid_t)-1;
	o.chown_uid = h->c->runner.uid;
	o.chown_gid = h->c->runner.gid;
	o.skip_names = no_history;
	(void)remove_mixed(h, h->runner_fd, "grading", NULL);
	repo = open(h->c->repo_path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	gfd = repo < 0 ? -1 : dir_owned_at(h->runner_fd, "grading", 0710, 0, h->c->runner.gid, &err);
	if (repo < 0 || gfd < 0 || sb_copy_tree_at(repo, gfd, "src", &o, NULL, &err) < 0 ||
	    (src = openat(gfd, "src", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		sb_log(SB_LOG_ERROR, "prepare_grading: pristine copy of '%s': %s", h->c->repo_path,
		    err ? sb_error_message(err) : strerror(errno));
		sb_error_release(&err);
		return work_failed(dproto_reply_error(j->reply_fd, 500, "cannot copy the pristine source"));
	}
	*ret_src = src;
	return 0;
}

/* 5. ...with the agent's patch (as graded) applied by the runner, never by root. */
static int
prepare_apply(struct helper *h, struct job_spec *j, int src, const struct sb_buf *graded)
{
	char *argv[] = { (char *)"git", (char *)"apply", (char *)"--binary", (char *)"-", NULL };
	_cleanup_free_ char *git = NULL;
	struct sb_error *err = NULL;
	struct sb_cmd_result r;

	if (graded->len == 0)
		return 0;
	if (sb_cmd_find_program("git", dconf_env_get(h->c, "PATH"), &git, &err) < 0) {
		sb_error_release(&err);
		return work_failed(dproto_reply_error(j->reply_fd, 500, "git apply failed: no git"));
	}
	run_as_runner(h, git, argv, src, j->home, h->c->test_timeout, graded->s, graded->len,
	    NULL, false, &r);
	write_log(h, "patch", "git apply --binary final.patch", &r);
	if (r.exit_code != 0) {
		int rc = dproto_reply_error(j->reply_fd, 500, "git apply failed: %s", r.err.s);

		sb_cmd_result_release(&r);
		return work_failed(rc);
	}
	sb_cmd_result_release(&r);
	return 0;
}

int
work_prepare_grading(struct helper *h, struct job_spec *j)
{
	_cleanup_close_ int src = -1;
	_cleanup_(grading_capture_release) struct grading_capture cap = { 0 };
	_cleanup_buf_ struct sb_buf graded = SB_BUF_INIT((size_t)SB_GIT_DIFF_MAX);
	json_auto_t *reverted = NULL, *scope = NULL, *baseline = NULL, *ok = NULL;
	struct sb_error *err = NULL;
	int rc;

	/* 1. A fresh runner session. */
	if (work_new_session(h, j->home, &err) < 0) {
		sb_log(SB_LOG_ERROR, "prepare_grading: %s", sb_error_message(err));
		sb_error_release(&err);
		return work_failed(dproto_reply_error(j->reply_fd, 500, "could not start a new runner session"));
	}
	rc = prepare_capture(h, j, &cap);
	if (rc == 0)
		rc = prepare_split(h, j, &cap, &graded, &reverted);
	if (rc != 0)
		return rc;
	scope = grading_scope(h->c->task, cap.diff, cap.files, cap.nfiles);
	baseline = prepare_baseline(h);
	rc = prepare_pristine(h, j, &src);
	if (rc == 0)
		rc = prepare_apply(h, j, src, &graded);
	if (rc != 0)
		return rc;
	ok = json_pack("{s:b, s:O, s:O, s:O, s:o}", "success", 1, "reverted", reverted, "scope",
	    scope, "baseline", baseline != NULL ? baseline : json_null(), "sanitizer",
	    sb_json_string_or_null(h->c->task->sanitizer.s));
	return work_done(dproto_reply(j->reply_fd, 200, ok));
}
