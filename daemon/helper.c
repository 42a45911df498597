/* SPDX-License-Identifier: Apache-2.0 */
/*
 * helper.c: the privileged half of the daemon.
 *
 * A single-threaded loop (no threads: it forks) that owns the run's state — the agent
 * phase, the queues, the workspaces — and answers requests from the two fronts. Which
 * front a request came from decides what it may do (the table in docs/daemon.md, "Endpoints"):
 * the agent channel never gets the reference patch, grading, the agent_exited switch, a
 * withheld check, or any tool after the agent phase. The fronts apply the same rules
 * first; the helper does not rely on them.
 *
 * Each request that does real work runs in a worker the helper forks, so a long build never
 * blocks a /diff, and a stuck script can be killed with its worker. Requests that must not
 * overlap wait in their queue (bencher, bash, capture).
 */
#include "config.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "sb/buf.h"
#include "sb/fs.h"
#include "sb/git.h"
#include "sb/json.h"
#include "sb/limits.h"
#include "sb/log.h"
#include "sb/mem.h"
#include "sb/proc.h"
#include "sb/spawn.h"

#include "work.h"

#define JOBS_MAX    128 /* running + queued requests */
#define PENDING_MAX 256

struct job {
	pid_t pid; /* 0 while queued */
	enum queue q;
	uint64_t deadline_ms; /* CLOCK_MONOTONIC; the worker is killed past it */
	struct job_spec spec;
};

static struct job jobs[JOBS_MAX];
static size_t njobs;

/* The runner session's home directory name: the workers get it in their job spec. */
static char *
home_name(const struct helper *h)
{
	return sb_xasprintf("home-%u", h->session);
}

/* run_poc with no build to run in: upstream's answer, and why the last one is gone. */
static void
not_built(int reply_fd, bool wiped)
{
	json_auto_t *r = json_pack("{s:i, s:s, s:s}", "code", -1, "stdout", "", "stderr",
	    wiped ? "the last build was discarded: a check on hidden material (run_poc or "
		    "intent_test) ran in it, and the runner's files are wiped before a check "
		    "whose output you see - call 'build' action first"
		  : "project hasn't been built yet - call 'build' action first");

	dproto_reply(reply_fd, 200, r);
}

static void
spec_release(struct job_spec *s)
{
	dreq_release(&s->req);
	free(s->workspace);
	free(s->home);
	free(s->previous_build);
	if (s->reply_fd >= 0)
		close(s->reply_fd);
	memset(s, 0, sizeof(*s));
	s->reply_fd = -1;
}

static enum queue
queue_of(enum dreq_type t)
{
	switch (t) {
	case DREQ_BENCHER:
	case DREQ_PREPARE_GRADING:
		return Q_BENCHER;
	case DREQ_BASH:
		return Q_BASH;
	case DREQ_DIFF:
	case DREQ_FILES:
		return Q_CAPTURE;
	case DREQ_DIALOG:
	case DREQ_RESULT:
	case DREQ_FINAL_DIFF:
	case DREQ_AGENT_EXITED:
	case DREQ_REFERENCE_PATCH:
	case DREQ_MAX_:
		break;
	}
	return Q_NONE;
}

/* Is a configured script missing for this action? (upstream: 500 "script not configured") */
static bool
script_missing(const struct dconf *c, enum sb_action action)
{
	switch (action) {
	case SB_ACTION_BUILD:
		return c->task->scripts.build.s == NULL;
	case SB_ACTION_RUN_POC:
		return c->task->scripts.run.s == NULL;
	case SB_ACTION_FUNCTION_TEST:
		return c->task->scripts.test.s == NULL;
	case SB_ACTION_INTENT_TEST:
		return c->task->scripts.test.s == NULL || c->task->files.future_test.s == NULL;
	case SB_ACTION_COUNT:
		break;
	}
	return true; /* not an action: nothing to run it with */
}

/* Small reads from root-only places, answered by the helper itself. */
static void
reply_file(struct helper *h, int fd, int dirfd, const char *rel, const char *key,
    bool result_shape)
{
	_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(SB_JSON_FILE_MAX);
	json_auto_t *j = NULL;

	if (rel == NULL || sb_read_file_at(dirfd, rel, SB_OPEN_NO_SYMLINKS, &b, NULL) < 0)
		sb_buf_reset(&b);
	if (!result_shape) {
		j = json_pack("{s:o}", key, sb_json_string_or_null(b.s));
	} else {
		json_auto_t *r = NULL;
		json_t *pr, *rr;

		/* GET /result: {available:false} until the evaluator wrote a parsable result. */
		if (b.len == 0 || sb_json_load(b.s, b.len, SB_JSON_FILE_MAX, &r, NULL) < 0 ||
		    !json_is_object(pr = json_object_get(r, "patch_result"))) {
			j = json_pack("{s:b}", "available", 0);
		} else {
			rr = json_object_get(r, "runtime_result");
			j = json_pack("{s:b, s:O, s:O}", "available", 1, "patch_result", pr,
			    "runtime_result", rr != NULL ? rr : json_null());
		}
	}
	(void)h;
	dproto_reply(fd, 200, j);
}


/*
 * How long a worker may run: its own limits plus room for copies and clean-up. A worker
 * past its deadline is killed and answered for, so a stuck capture (a FIFO planted while
 * the agent runs) cannot hold its queue, or grading, forever.
 */
static uint64_t
job_budget_s(const struct dconf *c, enum dreq_type t)
{
	unsigned longest = c->build_timeout > c->test_timeout ? c->build_timeout : c->test_timeout;

	switch (t) {
	case DREQ_BASH:
		return (uint64_t)c->bash_timeout_max + 60;
	case DREQ_BENCHER:
		return (uint64_t)longest + 900;
	case DREQ_PREPARE_GRADING:
		return (uint64_t)c->test_timeout + 1800;
	case DREQ_DIFF:
	case DREQ_FILES:
	case DREQ_DIALOG:
	case DREQ_AGENT_EXITED:
		return 300;
	case DREQ_RESULT:
	case DREQ_FINAL_DIFF:
	case DREQ_REFERENCE_PATCH:
	case DREQ_MAX_:
		break;
	}
	return 60;
}

static struct job *
job_add(enum queue q)
{
	struct job *j;

	if (njobs >= JOBS_MAX)
		return NULL;
	j = &jobs[njobs++];
	memset(j, 0, sizeof(*j));
	j->q = q;
	j->spec.reply_fd = -1;
	return j;
}

static void
job_remove(struct job *j)
{
	spec_release(&j->spec);
	*j = jobs[--njobs];
}

/* A check on hidden material (the PoC, the hidden tests), whose reply carries its outcome
 * only (runner.c:withheld_result). */
static bool
checks_hidden(enum sb_action a)
{
	switch (a) {
	case SB_ACTION_RUN_POC:
	case SB_ACTION_INTENT_TEST:
		return true;
	case SB_ACTION_BUILD:
	case SB_ACTION_FUNCTION_TEST:
	case SB_ACTION_COUNT:
		break;
	}
	return false;
}

/*
 * The runner session an agent's check runs in; false (and answered) for a run_poc with no
 * build to run in.
 *
 * A check on hidden material runs the agent's code next to it, and that code can write it
 * anywhere the runner may: its home, its workspaces, which live from one check to the next.
 * The reply to such a check carries its outcome only (withheld_result); the reply to a build
 * or a functional test carries their output, which the next check's code could fill with
 * what the last one left. So before a check whose output the agent sees, if a check on
 * hidden material ran since, the runner starts over: its processes killed, every file of it
 * removed, a new home (docs/integrity.md, "The agent cannot void, spoil or leak its own
 * grade"). The build run_poc would use goes too: run_poc after that needs a new build.
 */
static bool
agent_session(struct helper *h, struct job_spec *s)
{
	bool hidden = checks_hidden(s->req.action);

	if (!hidden && h->hidden_ran) {
		h->session++;
		h->hidden_ran = false;
		h->build_wiped = h->latest_build != NULL;
		free(h->latest_build);
		h->latest_build = NULL;
		s->new_session = true;
	}
	if (hidden)
		h->hidden_ran = true;
	if (s->req.action == SB_ACTION_RUN_POC && h->latest_build == NULL) {
		not_built(s->reply_fd, h->build_wiped);
		return false;
	}
	return true;
}

/* The workspace a bencher action uses: a build's becomes the latest build, run_poc runs in
 * it, the tests get their own. */
static void
assign_workspace(struct helper *h, struct job_spec *s)
{
	switch (s->req.action) {
	case SB_ACTION_BUILD:
		free(s->previous_build);
		s->previous_build = h->latest_build ? sb_xstrdup(h->latest_build) : NULL;
		s->workspace = sb_xasprintf("work-%u", ++h->next_ws);
		free(h->latest_build);
		h->latest_build = sb_xstrdup(s->workspace);
		h->build_wiped = false;
		break;
	case SB_ACTION_RUN_POC:
		s->workspace = h->latest_build ? sb_xstrdup(h->latest_build) : NULL;
		break;
	case SB_ACTION_FUNCTION_TEST:
	case SB_ACTION_INTENT_TEST:
	case SB_ACTION_COUNT:
		s->workspace = sb_xasprintf("work-%u", ++h->next_ws);
		break;
	}
	s->home = home_name(h);
}

/*
 * A bencher job's decisions; false (and answered) if it must not run. A grading action is
 * checked here, not when it arrives: queued behind a prepare_grading, it must see that
 * preparation's outcome (the worker answers the client before the helper has reaped it).
 */
static bool
bencher_decide(struct helper *h, struct job_spec *s)
{
	if (s->req.grading && s->req.action != SB_ACTION_RUN_POC && !h->grading_ready) {
		dproto_reply_error(s->reply_fd, 409, "call /prepare_grading before grading actions");
		return false;
	}
	if (s->ch == DCH_AGENT && !agent_session(h, s))
		return false;
	assign_workspace(h, s);
	return true;
}

/* Grading starts a fresh runner session: nothing test_patch left takes part. */
static void
grading_session(struct helper *h, struct job_spec *s)
{
	h->session++;
	free(h->latest_build);
	h->latest_build = NULL;
	h->hidden_ran = h->build_wiped = false;
	h->grading_ready = false;
	s->home = home_name(h);
}

/* The worker of each request type that has one (the others the helper answers itself). */
static int (*const workers[DREQ_MAX_])(struct helper *, struct job_spec *) = {
	[DREQ_BASH] = work_bash,
	[DREQ_BENCHER] = work_bencher,
	[DREQ_DIFF] = work_capture,
	[DREQ_FILES] = work_capture,
	[DREQ_DIALOG] = work_dialog,
	[DREQ_PREPARE_GRADING] = work_prepare_grading,
	[DREQ_AGENT_EXITED] = work_end_agent_phase,
};

/* The forked worker: one request, answered on its own reply fd; never returns. */
_noreturn_ static void
worker_main(struct helper *h, struct job_spec *s)
{
	sigset_t none;
	int rc = WORK_NOREPLY;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGCHLD, SIG_DFL);
	/* The worker talks only to its own requester. */
	close(h->channels[DCH_AGENT]);
	close(h->channels[DCH_ADMIN]);
	if (s->type > 0 && s->type < DREQ_MAX_ && workers[s->type] != NULL)
		rc = workers[s->type](h, s);
	_exit(rc);
}

/* Fork the worker for j. The helper keeps its copy of the reply fd to answer if the worker
 * dies without answering. Decisions that change shared state are taken here, in order,
 * before the fork. */
static void
job_start(struct helper *h, struct job *j)
{
	struct job_spec *s = &j->spec;
	pid_t pid;

	if (s->type == DREQ_BENCHER && !bencher_decide(h, s)) {
		job_remove(j);
		return;
	}
	if (s->type == DREQ_PREPARE_GRADING)
		grading_session(h, s);
	if (j->q != Q_NONE)
		h->busy[j->q] = true;
	pid = fork();
	if (pid < 0) {
		sb_log_errno(SB_LOG_ERROR, errno, "fork a worker for %s", dreq_name(s->type));
		dproto_reply_error(s->reply_fd, 500, "the daemon could not start the work");
		if (j->q != Q_NONE)
			h->busy[j->q] = false;
		job_remove(j);
		return;
	}
	if (pid == 0)
		worker_main(h, s);
	j->pid = pid;
	j->deadline_ms = sb_now_ms() + job_budget_s(h->c, s->type) * 1000;
}

/* Does this job run task scripts as the runner? */
static bool
runs_scripts(enum dreq_type t)
{
	return t == DREQ_BENCHER || t == DREQ_PREPARE_GRADING;
}

/*
 * Kill every process of the runner: a worker that ran task scripts was killed (a deadline,
 * the end of the agent phase), so its own sweep after the script will never happen, and
 * only the script's direct child had a parent-death signal. One such worker runs at a time
 * (the bencher queue), so nothing else of the runner's is running.
 */
static void
kill_runner(struct helper *h, const char *why)
{
	struct sb_error *err = NULL;

	if (sb_proc_kill_uid(h->c->runner.uid, h->c->runner.gid, KILL_ROUNDS, &err) < 0) {
		sb_log(SB_LOG_ERROR, "%s: %s", why, sb_error_message(err));
		sb_error_release(&err);
	}
}

/* Kill workers past their deadline (the reap answers for them); ms until the next one. */
static int
enforce_deadlines(struct helper *h)
{
	uint64_t now = sb_now_ms(), next = UINT64_MAX;

	for (size_t i = 0; i < njobs; i++) {
		if (jobs[i].pid == 0)
			continue;
		if (jobs[i].deadline_ms <= now) {
			sb_log(SB_LOG_WARN, "worker for %s ran past its time limit; killing it",
			    dreq_name(jobs[i].spec.type));
			kill(jobs[i].pid, SIGKILL);
			if (runs_scripts(jobs[i].spec.type))
				kill_runner(h, "past the time limit");
			jobs[i].deadline_ms = now + 60000; /* only once a minute */
		}
		if (jobs[i].deadline_ms < next)
			next = jobs[i].deadline_ms;
	}
	return next == UINT64_MAX ? -1 : (int)(next - now > 60000 ? 60000 : next - now);
}

/* A check on hidden material the agent asked for: the agent is held still while it runs
 * (runner.c:hidden_check_begin). */
static bool
holds_agent_still(const struct job_spec *s)
{
	return s->type == DREQ_BENCHER && s->ch == DCH_AGENT && checks_hidden(s->req.action);
}

/* Is a running worker's job one that pred says yes to? */
static bool
any_running(bool (*pred)(const struct job_spec *))
{
	for (size_t i = 0; i < njobs; i++)
		if (jobs[i].pid != 0 && pred(&jobs[i].spec))
			return true;
	return false;
}

/* A worker that itself becomes the agent's uid, outside the agent's cgroup: the captures
 * and dialog reads (capture.c:become_agent). (A bash call's worker stays root; the command
 * it runs joins the cgroup.) */
static bool
becomes_agent(const struct job_spec *s)
{
	return s->type == DREQ_DIFF || s->type == DREQ_FILES || s->type == DREQ_DIALOG;
}

/* Work that runs code as the agent's uid: the agent's bash calls, and those workers. */
static bool
runs_as_agent(const struct job_spec *s)
{
	return (s->type == DREQ_BASH && s->ch == DCH_AGENT) || becomes_agent(s);
}


/* Start whatever queued work can start now, oldest first within each queue. */
static void
schedule(struct helper *h)
{
	size_t i = 0;

	while (i < njobs) {
		struct job *j = &jobs[i];
		size_t before = njobs;

		/*
		 * prepare_grading must not overlap a capture (it uses the private index). Work
		 * that runs as the agent's uid waits while the agent is held still for a check on
		 * hidden material: started then, it would be a process of the agent that nobody
		 * stopped, free to watch the check (second red-team round, issue 13); and such a
		 * check waits for that work, which would make its freeze refused (third round).
		 */
		if (j->pid != 0 || (j->q != Q_NONE && h->busy[j->q]) ||
		    (j->spec.type == DREQ_PREPARE_GRADING && h->busy[Q_CAPTURE]) ||
		    (j->q == Q_CAPTURE && h->busy[Q_BENCHER] && !h->agent_phase) ||
		    (runs_as_agent(&j->spec) && any_running(holds_agent_still)) ||
		    (holds_agent_still(&j->spec) && any_running(becomes_agent))) {
			i++;
			continue;
		}
		job_start(h, j);
		/* A failed fork removed the job (the last one moved into its slot). */
		if (njobs == before)
			i++;
	}
}

/* A worker ended: answer for it if it could not, update state, let the queue move. */
static void
job_finished(struct helper *h, struct job *j, int status)
{
	bool ok = WIFEXITED(status) && WEXITSTATUS(status) == WORK_DONE;
	bool replied = WIFEXITED(status) &&
	    (WEXITSTATUS(status) == WORK_DONE || WEXITSTATUS(status) == WORK_FAILED);

	if (!replied) {
		sb_log(SB_LOG_WARN, "worker for %s ended without answering (status %d)",
		    dreq_name(j->spec.type), status);
		dproto_reply_error(j->spec.reply_fd, 500, "the daemon's worker failed");
	}
	/* A script worker that did not end by itself did not sweep the runner's processes. */
	if (!WIFEXITED(status) && runs_scripts(j->spec.type))
		kill_runner(h, "after a killed worker");
	/* Nor continue the agent it stopped for a check on hidden material (runner.c:
	 * hidden_check_begin): its runner processes are dead now, so the agent may go on. */
	if (!ok && holds_agent_still(&j->spec)) {
		struct sb_error *err = NULL;

		if (work_agent_continue(h, &err) < 0) {
			sb_log(SB_LOG_ERROR, "continue the agent's processes: %s", sb_error_message(err));
			sb_error_release(&err);
		}
	}
	if (j->spec.type == DREQ_PREPARE_GRADING)
		h->grading_ready = ok;
	if (j->q != Q_NONE)
		h->busy[j->q] = false;
	job_remove(j);
}

/* End of the agent phase: close the tools before anything else happens. */
static void
close_agent_tools(struct helper *h)
{
	h->agent_phase = false;
	/* Queued agent work is refused; running agent work is stopped with its worker. */
	for (size_t i = 0; i < njobs;) {
		struct job *j = &jobs[i];

		if (j->spec.ch == DCH_AGENT && (j->spec.type == DREQ_BASH || j->spec.type == DREQ_BENCHER)) {
			if (j->pid == 0) {
				dproto_reply_error(j->spec.reply_fd, 403,
				    "the agent phase has ended: tools are closed");
				job_remove(j);
				continue;
			}
			kill(j->pid, SIGKILL);
		}
		i++;
	}
}

/*
 * A refusal of the rules. daemon.log is on the host's disk and the agent can ask as fast as
 * it likes: the first refusals are logged, then one in a thousand, with the count.
 */
static void
refuse_request(enum dchannel ch, enum dreq_type t, unsigned status, const char *msg,
    int reply_fd)
{
	static uint64_t refused;

	refused++;
	if (refused <= 100 || refused % 1000 == 0)
		sb_log(SB_LOG_INFO, "%s %s: %u %s (refusal %llu)",
		    ch == DCH_AGENT ? "agent" : "admin", dreq_name(t), status, msg,
		    (unsigned long long)refused);
	dproto_reply_error(reply_fd, status, "%s", msg);
}

/* What the helper answers itself, without a worker: true if r is answered. */
static bool
answer_at_once(struct helper *h, const struct dreq *r, int reply_fd)
{
	switch (r->type) {
	case DREQ_RESULT:
		reply_file(h, reply_fd, h->results_fd, "result.json", NULL, true);
		return true;
	case DREQ_FINAL_DIFF:
		reply_file(h, reply_fd, h->results_fd, "final.patch", "diff", false);
		return true;
	case DREQ_REFERENCE_PATCH:
		reply_file(h, reply_fd, h->bench_fd, h->c->task->files.patch.s, "diff", false);
		return true;
	case DREQ_AGENT_EXITED:
		/* Idempotent: the first call closes the tools; each call makes sure the agent's
		 * processes are gone (its worker). */
		if (h->agent_phase)
			sb_log(SB_LOG_INFO, "agent phase ended; tools closed on agent-facing listeners");
		close_agent_tools(h);
		return false;
	case DREQ_BENCHER:
		/* dreq_policy refused a request without a known action; script_missing refuses
		 * it again here rather than trust that. */
		if (script_missing(h->c, r->action)) {
			dproto_reply_error(reply_fd, 500, "script not configured for this action");
			return true;
		}
		if (r->action == SB_ACTION_RUN_POC && h->latest_build == NULL) {
			not_built(reply_fd, h->build_wiped);
			return true;
		}
		return false;
	case DREQ_BASH:
	case DREQ_DIFF:
	case DREQ_FILES:
	case DREQ_DIALOG:
	case DREQ_PREPARE_GRADING:
	case DREQ_MAX_:
		break;
	}
	return false;
}

/* One request from a front: read back with every field checked, the rules, then answered
 * here or queued for a worker. */
static void
handle_request(struct helper *h, enum dchannel ch, const struct dproto_hdr *hdr,
    const char *body, int reply_fd)
{
	enum dreq_type t = (enum dreq_type)hdr->type;
	struct dpolicy pol = { h->c->difficulty, h->agent_phase };
	const char *msg = NULL;
	struct dreq r;
	struct job *j;
	unsigned status;

	if (dreq_decode(t, body, hdr->len, h->c->task->files.poc.n, &r) < 0) {
		dproto_reply_error(reply_fd, 400, "malformed request body");
		goto done;
	}
	status = dreq_policy(&pol, ch, &r, &msg);
	if (status != 0) {
		refuse_request(ch, t, status, msg, reply_fd);
		goto done;
	}
	if (answer_at_once(h, &r, reply_fd))
		goto done;
	j = job_add(queue_of(t));
	if (j == NULL) {
		dproto_reply_error(reply_fd, 503, "too many requests in flight");
		goto done;
	}
	j->spec.type = t;
	j->spec.ch = ch;
	j->spec.req = r; /* the job owns it now */
	j->spec.reply_fd = reply_fd;
	if (r.poc != DREQ_NO_POC)
		j->spec.poc = h->c->task->files.poc.v[r.poc].s;
	schedule(h);
	return;
done:
	dreq_release(&r);
	close(reply_fd);
}

/* Reap children: workers and fronts. A front that dies ends the daemon (fail closed). */
static int
reap(struct helper *h)
{
	for (;;) {
		int status;
		pid_t pid = waitpid(-1, &status, WNOHANG);
		bool found = false;

		if (pid <= 0)
			return 0;
		for (int i = 0; i < 2; i++)
			if (pid == h->front_pids[i]) {
				sb_log(SB_LOG_ERROR, "the %s front exited (status %d); stopping",
				    i == DCH_AGENT ? "agent" : "admin", status);
				h->front_pids[i] = 0;
				return -1;
			}
		for (size_t i = 0; i < njobs && !found; i++)
			if (jobs[i].pid == pid) {
				job_finished(h, &jobs[i], status);
				found = true;
			}
	}
}

int
helper_init(struct helper *h, struct dconf *c, struct sb_error **err)
{
	memset(h, 0, sizeof(*h));
	h->c = c;
	h->channels[DCH_AGENT] = h->channels[DCH_ADMIN] = -1;
	h->bench_fd = h->results_fd = h->runner_fd = h->state_fd = -1;
	h->freezer = (struct sb_freezer)SB_FREEZER_INIT;
	h->agent_phase = true;
	h->session = 1;
	/*
	 * Without a freezer cgroup the agent is held still by SIGSTOP, which the kernel undoes
	 * on the agent's behalf (a timer or notification whose signal is SIGCONT): the run says
	 * so in its log, and ssebench records which one it had (docs/integrity.md). A cgroup
	 * that was named but cannot be used is an error, never a silent fallback.
	 */
	if (c->agent_cgroup != NULL) {
		if (sb_freezer_open(c->agent_cgroup, &h->freezer, err) < 0)
			return sb_error_prefix(err, "SSE_AGENT_CGROUP");
		sb_log(SB_LOG_INFO, "the agent is frozen during checks on hidden material by cgroup %s (v%d)",
		    c->agent_cgroup, h->freezer.v2 ? 2 : 1);
	} else {
		sb_log(SB_LOG_WARN, "no SSE_AGENT_CGROUP: the agent is stopped during checks on hidden "
		    "material by signals, which a SIGCONT the kernel sends for it can undo");
	}
	/*
	 * libgit2 once, here: every capture runs in a child forked from this process, and
	 * initialising it in the child parsed the system's CA bundle (libgit2's TLS, which a
	 * capture never uses) and started libssh2's crypto on every GET /diff: 7 ms of a 32 ms
	 * poll (perf over bench/diff-latency.sh). The price is the library pages that start-up
	 * touches (OpenSSL's libcrypto, mostly) staying resident in this process: 2.5 MB of
	 * shared file pages, shared with every child. A failure is logged here and met again by
	 * each capture.
	 */
	{
		struct sb_error *gerr = NULL;

		if (sb_git_init(&gerr) < 0) {
			sb_log(SB_LOG_WARN, "%s", sb_error_message(gerr));
			sb_error_release(&gerr);
		}
	}
	{
		_cleanup_free_ char *home = home_name(h);

		return work_setup(h, home, err);
	}
}

int
helper_loop(struct helper *h)
{
	sigset_t sigs;
	int sfd;

	sigemptyset(&sigs);
	sigaddset(&sigs, SIGCHLD);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	/* Non-blocking: the loop below drains every queued signal, then returns to poll. */
	sfd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0) {
		sb_log_errno(SB_LOG_ERROR, errno, "signalfd");
		return 1;
	}
	for (;;) {
		struct pollfd p[3] = {
			{ h->channels[DCH_AGENT], POLLIN, 0 },
			{ h->channels[DCH_ADMIN], POLLIN, 0 },
			{ sfd, POLLIN, 0 },
		};

		if (poll(p, 3, enforce_deadlines(h)) < 0) {
			if (errno == EINTR)
				continue;
			sb_log_errno(SB_LOG_ERROR, errno, "poll");
			return 1;
		}
		if (p[2].revents & POLLIN) {
			struct signalfd_siginfo si;

			while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
				if (si.ssi_signo != SIGCHLD) {
					sb_log(SB_LOG_INFO, "stopping on %s", strsignal((int)si.ssi_signo));
					return 0;
				}
			}
			if (reap(h) < 0)
				return 1;
			schedule(h);
		}
		for (int ch = 0; ch < 2; ch++) {
			struct dproto_hdr hdr;
			struct sb_error *err = NULL;
			char *body = NULL;
			int reply_fd = -1, r;

			if (!(p[ch].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			r = dproto_recv(h->channels[ch], &hdr, &body, &reply_fd, &err);
			if (r == 1) {
				sb_log(SB_LOG_ERROR, "the %s front closed its channel; stopping",
				    ch == DCH_AGENT ? "agent" : "admin");
				return 1;
			}
			if (r < 0) {
				/* A front that sends garbage is not our front any more: stop. */
				sb_log(SB_LOG_ERROR, "%s channel: %s; stopping",
				    ch == DCH_AGENT ? "agent" : "admin", sb_error_message(err));
				sb_error_release(&err);
				return 1;
			}
			handle_request(h, (enum dchannel)ch, &hdr, body, reply_fd);
			free(body);
		}
	}
}
