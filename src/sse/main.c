/* SPDX-License-Identifier: Apache-2.0 */
/*
 * main.c: the `sse` command, for agents and agent wrappers inside a run (docs/agents.md):
 *
 *   sse version | project | capabilities | prompt | diff
 *   sse bash [--timeout S] (-c TEXT | -- WORD...)
 *   sse bench build | poc [PATH...] | test | intent
 *   sse dialog init|prompt|message|thinking|tool|complete ...
 *   sse agent [--format F] [--name N] [--events FILE] [--timeout S] -- PROGRAM [ARG...]
 *
 * It is a client of the daemon's agent-facing socket and nothing more: whatever it asks
 * for, the daemon's difficulty gate decides (a withheld check is "not available", exit 3).
 * Exit statuses: 0 done; a tool's own status for bash and bench; 1 the daemon failed or
 * refused; 2 usage; 3 refused by the difficulty gate or after the agent phase.
 */
#include "config.h"

#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>

#include "sb/argv.h"
#include "sb/buf.h"
#include "sb/dialog.h"
#include "sb/exit.h"
#include "sb/json.h"
#include "sb/mem.h"
#include "sb/parse.h"
#include "sb/path.h"
#include "sb/prompt.h"
#include "sb/sdk.h"
#include "sb/spawn.h"

#include "sse.h"

#define EXIT_REFUSED 3 /* the daemon's gate said no (403) */

extern char **environ;

static struct sb_sdk sdk = SB_SDK_INIT;
static long arg_timeout_ms; /* --timeout before the command: every daemon call */

static const char usage_text[] =
    "usage: sse [--socket PATH] [--timeout S] COMMAND [ARGS]\n"
    "\n"
    "The task and the daemon's tools, from inside a run (docs/agents.md):\n"
    "  version                    this program's and the daemon's versions\n"
    "  project                    the task's public view (JSON)\n"
    "  capabilities               which checks the task has (JSON)\n"
    "  prompt                     the task prompt (Markdown)\n"
    "  diff                       the agent's changes so far\n"
    "  bash [--timeout S] -c TEXT | -- WORD...\n"
    "                             run a command through the daemon's bash tool\n"
    "  bench build|poc [PATH...]|test|intent\n"
    "                             a check, if the difficulty level allows it\n"
    "  dialog TYPE [OPTIONS]      add an entry to $SSE_ARCHIVE/dialog.jsonl\n"
    "                             (init, prompt, message, thinking, tool, complete)\n"
    "  agent [--format F] [--name N] [--events FILE] [--timeout S] -- PROGRAM [ARG...]\n"
    "                             run an agent CLI on the task prompt, recording its\n"
    "                             event stream (claude-code, codex, opencode, none);\n"
    "                             --timeout defaults to $TIMEOUT less a margin\n"
    "\n"
    "docs/sse.md has the details.\n";

static int
usage(const char *fmt, ...) _printf_(1, 2);

static int
usage(const char *fmt, ...)
{
	va_list ap;

	fputs("sse: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\n(sse --help lists the commands)\n", stderr);
	return SB_EXIT_USAGE;
}

/* A failed daemon call: its message, and the exit status it stands for. */
static int
fail(struct sb_error **err)
{
	int code = sb_error_code(*err) == EACCES ? EXIT_REFUSED : SB_EXIT_FAILURE;

	fprintf(stderr, "sse: %s\n", sb_error_message(*err));
	if (code == EXIT_REFUSED)
		fprintf(stderr, "sse: not available (the difficulty level withholds it, or the "
				"agent phase is over)\n");
	sb_error_release(err);
	return code;
}

static int
print_json(const json_t *j)
{
	_cleanup_free_ char *s = sb_json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS);

	printf("%s\n", s);
	return fflush(stdout) == 0 ? SB_EXIT_OK : SB_EXIT_FAILURE;
}

static int
get_json(const char *path, json_t **ret)
{
	struct sb_error *err = NULL;

	if (sb_sdk_call(&sdk, "GET", path, NULL, arg_timeout_ms, ret, &err) < 0)
		return fail(&err);
	return SB_EXIT_OK;
}

/* --- version, project, capabilities, prompt, diff --- */

static int
cmd_version(int argc, char **argv)
{
	_cleanup_free_ char *v = NULL;
	struct sb_error *err = NULL;

	(void)argc, (void)argv;
	printf("sse %s\n", PACKAGE_VERSION);
	if (sb_sdk_version(&sdk, &v, &err) < 0)
		return fail(&err);
	printf("daemon %s\n", v);
	if (strcmp(v, PACKAGE_VERSION) != 0)
		fprintf(stderr, "sse: this sse (%s) and the daemon (%s) are not the same version\n",
		    PACKAGE_VERSION, v);
	return SB_EXIT_OK;
}

static int
cmd_show(const char *path)
{
	json_t *j = NULL;
	int rc = get_json(path, &j);

	if (rc == SB_EXIT_OK)
		rc = print_json(j);
	json_decref(j);
	return rc;
}

static int
cmd_project(int argc, char **argv)
{
	(void)argc, (void)argv;
	return cmd_show("/project");
}

static int
cmd_capabilities(int argc, char **argv)
{
	(void)argc, (void)argv;
	return cmd_show("/capabilities");
}

/* The prompt of the task the daemon serves (malloc'd), or NULL with a message printed. */
static char *
task_prompt(json_t **ret_project, int *ret_rc)
{
	struct sb_error *err = NULL;
	json_t *project = NULL;
	char *p;

	*ret_rc = get_json("/project", &project);
	if (*ret_rc != SB_EXIT_OK)
		return NULL;
	p = sb_prompt_build(project, &err);
	if (p == NULL) {
		*ret_rc = fail(&err);
		json_decref(project);
		return NULL;
	}
	if (ret_project != NULL)
		*ret_project = project;
	else
		json_decref(project);
	return p;
}

static int
cmd_prompt(int argc, char **argv)
{
	_cleanup_free_ char *p = NULL;
	int rc;

	(void)argc, (void)argv;
	p = task_prompt(NULL, &rc);
	if (p == NULL)
		return rc;
	fputs(p, stdout);
	return fflush(stdout) == 0 ? SB_EXIT_OK : SB_EXIT_FAILURE;
}

static int
cmd_diff(int argc, char **argv)
{
	json_t *j = NULL;
	int rc;

	(void)argc, (void)argv;
	rc = get_json("/diff", &j);
	if (rc == SB_EXIT_OK)
		fputs(json_string_value(json_object_get(j, "diff")) ?: "", stdout);
	json_decref(j);
	return rc;
}

/* --- bash, bench --- */

/* A tool's result on our stdout and stderr; its status is ours. */
static int
print_result(struct sb_script_result *r, const char *what)
{
	int code = r->code;

	fputs(r->out, stdout);
	fputs(r->err, stderr);
	fflush(stdout);
	if (r->timed_out)
		fprintf(stderr, "sse: %s timed out\n", what);
	if (r->truncated)
		fprintf(stderr, "sse: %s: output truncated by the daemon\n", what);
	sb_script_result_release(r);
	/* A status that does not fit an exit status (-1: not built yet) is a failure. */
	return code >= 0 && code <= 255 ? code : SB_EXIT_FAILURE;
}

/* One shell word, quoted so the daemon's bash reads it back as exactly this string. */
static void
append_quoted(struct sb_buf *b, const char *w)
{
	if (*w != '\0' && w[strspn(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				   "0123456789_-./=:@%+,")] == '\0') {
		(void)sb_buf_appends(b, w, NULL);
		return;
	}
	(void)sb_buf_appendc(b, '\'', NULL);
	for (const char *p = w; *p != '\0'; p++)
		(void)sb_buf_appends(b, *p == '\'' ? "'\\''" : (char[]){ *p, '\0' }, NULL);
	(void)sb_buf_appendc(b, '\'', NULL);
}

static int
cmd_bash(int argc, char **argv)
{
	static const struct option opts[] = { { "timeout", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 } };
	_cleanup_buf_ struct sb_buf cmd = SB_BUF_INIT(1024 * 1024);
	struct sb_script_result r;
	struct sb_error *err = NULL;
	const char *text = NULL;
	uint64_t t = 0;
	int c;

	optind = 0; /* a full restart of getopt (GNU): main() parsed with other options */
	while ((c = getopt_long(argc, argv, "+c:", opts, NULL)) != -1) {
		if (c == 'c')
			text = optarg;
		else if (c == 't' && sb_parse_u64(optarg, 1, 86400, &t, NULL) == 0)
			continue;
		else
			return usage("bash: usage: sse bash [--timeout S] -c TEXT | -- WORD...");
	}
	if (text != NULL && optind < argc)
		return usage("bash: give either -c TEXT or words after --, not both");
	if (text == NULL) {
		/*
		 * Words, not a command line: each is quoted, so `sse bash -- ls "a b"` lists one
		 * file named "a b" (upstream joined argv with spaces and lost the quoting:
		 * docs/upstream.md, "Known weaknesses and our answers", 5).
		 */
		if (optind >= argc)
			return usage("bash: no command");
		for (int i = optind; i < argc; i++) {
			if (i > optind)
				(void)sb_buf_appendc(&cmd, ' ', NULL);
			append_quoted(&cmd, argv[i]);
		}
		text = cmd.s;
	}
	if (sb_sdk_bash(&sdk, text, (unsigned)t, &r, &err) < 0)
		return fail(&err);
	return print_result(&r, "bash");
}

static int
run_bencher(const char *action, const char *poc)
{
	struct sb_script_result r;
	struct sb_error *err = NULL;

	if (sb_sdk_bencher(&sdk, action, poc, &r, &err) < 0)
		return fail(&err);
	return print_result(&r, action);
}

static int
cmd_bench(int argc, char **argv)
{
	static const struct {
		const char *name, *action;
	} checks[] = { { "build", "build" }, { "poc", "run_poc" }, { "test", "function_test" },
		{ "intent", "intent_test" } };
	const char *action = NULL;

	if (argc < 2)
		return usage("bench: which check? build, poc, test or intent");
	for (size_t i = 0; i < SB_ARRAY_SIZE(checks); i++)
		if (strcmp(argv[1], checks[i].name) == 0)
			action = checks[i].action;
	if (action == NULL)
		return usage("bench: unknown check '%s' (build, poc, test, intent)", argv[1]);
	if (strcmp(action, "run_poc") != 0) {
		if (argc > 2)
			return usage("bench %s takes no arguments", argv[1]);
		return run_bencher(action, NULL);
	}
	/* poc: the PoCs named, or every PoC of the task in order; the first failure stops. */
	if (argc > 2) {
		for (int i = 2; i < argc; i++) {
			int rc = run_bencher(action, argv[i]);

			if (rc != 0)
				return rc;
		}
		return SB_EXIT_OK;
	}
	{
		json_t *project = NULL, *p;
		size_t i;
		int rc = get_json("/project", &project);

		json_array_foreach (json_object_get(project, "poc"), i, p) {
			if (rc != SB_EXIT_OK || !json_is_string(p))
				break;
			fprintf(stderr, "sse: PoC %s\n", json_string_value(p));
			rc = run_bencher(action, json_string_value(p));
		}
		json_decref(project);
		return rc;
	}
}

/* --- dialog --- */

/* A file of the agent's archive directory ($SSE_ARCHIVE, the agent's own). */
static char *
archive_file(const char *name)
{
	const char *a = getenv("SSE_ARCHIVE");

	return sb_xasprintf("%s/%s", a != NULL && *a != '\0' ? a : "/tmp/sse-archive", name);
}

static char *
dialog_path(void)
{
	return archive_file("dialog.jsonl");
}

/* TEXT, or stdin for "-" (NULL, said, when stdin cannot be read or is too long). */
static char *
text_arg(const char *a)
{
	struct sb_buf b = SB_BUF_INIT(SB_DIALOG_ENTRY_MAX);
	struct sb_error *err = NULL;

	if (strcmp(a, "-") != 0)
		return sb_xstrdup(a);
	if (sb_buf_read_fd(&b, STDIN_FILENO, &err) < 0) {
		fprintf(stderr, "sse: dialog: reading stdin: %s\n", sb_error_message(err));
		sb_error_release(&err);
		sb_buf_release(&b);
		return NULL;
	}
	return sb_buf_detach(&b, NULL);
}

static int
dialog_write(const char *type, json_t *fields, unsigned flags)
{
	_cleanup_free_ char *path = dialog_path();
	struct sb_dialog d = SB_DIALOG_INIT;
	struct sb_error *err = NULL;

	if (sb_dialog_open(&d, path, flags, &err) < 0 ||
	    sb_dialog_append(&d, type, TAKE_PTR(fields), &err) < 0) {
		json_decref(fields);
		sb_dialog_close(&d);
		fprintf(stderr, "sse: dialog: %s\n", sb_error_message(err));
		sb_error_release(&err);
		return SB_EXIT_FAILURE;
	}
	sb_dialog_close(&d);
	return SB_EXIT_OK;
}

/* The init entry: the task (from the daemon), the working directory, the model, the agent. */
static json_t *
init_fields(const char *agent, const json_t *project)
{
	_cleanup_free_ char *cwd = getcwd(NULL, 0);
	const char *model = getenv("SSE_MODEL_NAME");

	return json_pack("{s:{s:s?, s:s?, s:s?, s:s}}", "data", "task",
	    json_string_value(json_object_get(project, "id")), "cwd", cwd, "model",
	    model != NULL && *model != '\0' ? model : NULL, "agent", agent);
}

static int
cmd_dialog(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "agent", required_argument, NULL, 'a' },
		{ "id", required_argument, NULL, 'i' },
		{ "name", required_argument, NULL, 'n' },
		{ "status", required_argument, NULL, 's' },
		{ "args", required_argument, NULL, 'A' },
		{ "result", required_argument, NULL, 'r' },
		{ "error", required_argument, NULL, 'e' },
		{ "turns", required_argument, NULL, 'T' },
		{ "duration-ms", required_argument, NULL, 'D' },
		{ "tokens-in", required_argument, NULL, 'I' },
		{ "tokens-out", required_argument, NULL, 'O' },
		{ "message", required_argument, NULL, 'm' },
		{ NULL, 0, NULL, 0 },
	};
	const char *type = NULL;
	const char *agent = NULL, *id = NULL, *name = NULL, *status = NULL, *args = NULL;
	const char *result = NULL, *error = NULL, *message = NULL;
	uint64_t turns = 0, dur = 0, tin = 0, tout = 0;
	json_t *f = NULL;
	int c;

	/* Options may come before or after the entry's text (getopt permutes). */
	optind = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		uint64_t *n = c == 'T' ? &turns : c == 'D' ? &dur : c == 'I' ? &tin : c == 'O' ? &tout : NULL;

		if (n != NULL) {
			if (sb_parse_u64(optarg, 0, INT64_MAX, n, NULL) < 0)
				return usage("dialog: '%s' is not a count", optarg);
			continue;
		}
		switch (c) {
		case 'a': agent = optarg; break;
		case 'i': id = optarg; break;
		case 'n': name = optarg; break;
		case 's': status = optarg; break;
		case 'A': args = optarg; break;
		case 'r': result = optarg; break;
		case 'e': error = optarg; break;
		case 'm': message = optarg; break;
		default: return usage("dialog: unknown option");
		}
	}
	if (optind >= argc)
		return usage("dialog: which entry? init, prompt, message, thinking, tool, complete");
	type = argv[optind++];
	if (strcmp(type, "init") == 0) {
		json_t *project = NULL;
		int rc;

		if (agent == NULL)
			return usage("dialog init: --agent NAME is required");
		if ((rc = get_json("/project", &project)) != SB_EXIT_OK)
			return rc;
		f = init_fields(agent, project);
		json_decref(project);
		return dialog_write("init", f, SB_DIALOG_TRUNCATE);
	}
	if (strcmp(type, "prompt") == 0 || strcmp(type, "message") == 0 ||
	    strcmp(type, "thinking") == 0) {
		_cleanup_free_ char *text = NULL;

		if (optind != argc - 1)
			return usage("dialog %s: give the text (or - to read it from stdin)", type);
		text = text_arg(argv[optind]);
		if (text == NULL)
			return SB_EXIT_FAILURE;
		f = strcmp(type, "message") == 0
		    ? json_pack("{s:s, s:s}", "role", "assistant", "content", text)
		    : json_pack("{s:s}", "content", text);
		if (f == NULL)
			return usage("dialog %s: the text is not UTF-8", type);
		if (tin > 0 || tout > 0)
			json_object_set_new(f, "tokens",
			    json_pack("{s:I, s:I}", "in", (json_int_t)tin, "out", (json_int_t)tout));
		return dialog_write(type, f, 0);
	}
	if (strcmp(type, "tool") == 0) {
		if (id == NULL || name == NULL || status == NULL ||
		    (strcmp(status, "running") != 0 && strcmp(status, "success") != 0 &&
			strcmp(status, "error") != 0))
			return usage("dialog tool: --id, --name and --status running|success|error");
		f = json_pack("{s:s, s:s, s:s}", "tool_id", id, "name", name, "status", status);
		if (args != NULL) {
			json_t *a = NULL;

			if (sb_json_load(args, strlen(args), SB_DIALOG_ENTRY_MAX, &a, NULL) < 0) {
				json_decref(f);
				return usage("dialog tool: --args must be JSON");
			}
			json_object_set_new(f, "args", a);
		}
		if (result != NULL)
			json_object_set_new(f, "result", json_string(result));
		if (error != NULL)
			json_object_set_new(f, "error", json_string(error));
		return dialog_write("tool", f, 0);
	}
	if (strcmp(type, "complete") == 0) {
		if (status == NULL || (strcmp(status, "success") != 0 && strcmp(status, "error") != 0 &&
					  strcmp(status, "timeout") != 0))
			return usage("dialog complete: --status success|error|timeout");
		f = json_pack("{s:s, s:I, s:I, s:{s:I, s:I}}", "status", status, "turns",
		    (json_int_t)turns, "duration_ms", (json_int_t)dur, "total_tokens", "in",
		    (json_int_t)tin, "out", (json_int_t)tout);
		if (message != NULL)
			json_object_set_new(f, "message", json_string(message));
		return dialog_write("complete", f, 0);
	}
	return usage("dialog: unknown entry '%s'", type);
}

/* --- agent --- */

static volatile sig_atomic_t got_signal;

static void
on_signal(int sig)
{
	got_signal = sig;
}


/* The prompt as an unnamed file (the child's stdin): nothing lands in the source tree. */
static int
prompt_fd(const char *text, struct sb_error **err)
{
	const char *tmp = getenv("TMPDIR");
	_cleanup_close_ int fd = open(tmp != NULL && *tmp == '/' ? tmp : "/tmp",
	    O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	size_t len = strlen(text), off = 0;

	if (fd < 0)
		return sb_error_errno(err, errno, "a file for the prompt");
	while (off < len) {
		ssize_t n = SB_RETRY_EINTR(write(fd, text + off, len - off));

		if (n <= 0)
			return sb_error_errno(err, n < 0 ? errno : EIO, "writing the prompt");
		off += (size_t)n;
	}
	if (lseek(fd, 0, SEEK_SET) < 0)
		return sb_error_errno(err, errno, "lseek");
	return TAKE_FD(fd);
}

struct agent_run {
	enum events_format fmt;
	struct events *ev;
	int events_fd; /* the raw stream, or -1 */
};

/* Hand each complete line of the chunk to the converter (and the raw copy). */
static void
take_chunk(struct agent_run *ar, const char *p, size_t n)
{
	struct sb_error *err = NULL;

	if (ar->events_fd >= 0)
		(void)!write(ar->events_fd, p, n);
	if (ar->fmt == EVENTS_NONE) {
		/* Not an event stream: it is the program's log, and goes where ours goes. */
		(void)!write(STDOUT_FILENO, p, n);
		return;
	}
	if (events_take(ar->ev, p, n, &err) < 0) {
		fprintf(stderr, "sse: dialog: %s, ignoring\n", sb_error_message(err));
		sb_error_release(&err);
	}
}

static int
cmd_agent(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "name", required_argument, NULL, 'n' },
		{ "events", required_argument, NULL, 'e' },
		{ "timeout", required_argument, NULL, 't' },
		{ "no-prompt", no_argument, NULL, 'P' },
		{ NULL, 0, NULL, 0 },
	};
	_cleanup_free_ char *prompt = NULL, *prog = NULL, *dpath = dialog_path();
	_cleanup_free_ char *events_default = NULL;
	_cleanup_close_ int in_fd = -1, rd = -1, wr = -1, events_fd = -1;
	struct sb_dialog d = SB_DIALOG_INIT;
	struct agent_run ar = { EVENTS_NONE, NULL, -1 };
	struct sb_cmd cmd = SB_CMD_INIT;
	struct sb_cmd_result res;
	struct sb_error *err = NULL;
	const char *format = "none", *name = NULL, *events = NULL;
	const struct events_summary *sum;
	json_t *project = NULL, *f;
	uint64_t timeout_s = 0, start, deadline = 0, killed_at = 0, exited_at = 0;
	bool no_prompt = false, timed_out = false;
	int fmt, c, rc, fds[2];
	const char *status;

	optind = 0; /* a full restart of getopt (GNU): main() parsed with other options */
	while ((c = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		switch (c) {
		case 'f': format = optarg; break;
		case 'n': name = optarg; break;
		case 'e': events = optarg; break;
		case 'P': no_prompt = true; break;
		case 't':
			if (sb_parse_u64(optarg, 1, 7 * 86400, &timeout_s, NULL) < 0)
				return usage("agent: --timeout must be a number of seconds");
			break;
		default: return usage("agent: unknown option");
		}
	}
	if (optind >= argc)
		return usage("agent: no program to run (sse agent [OPTIONS] -- PROGRAM [ARG...])");
	fmt = events_format_parse(format);
	if (fmt < 0)
		return usage("agent: unknown --format '%s' (claude-code, codex, opencode, none)",
		    format);
	if (name == NULL)
		name = sb_path_basename(argv[optind]);
	/*
	 * Without --timeout, stop the program a little before the run's own limit (TIMEOUT),
	 * so that the record is completed ("timeout") before the entrypoint kills every process
	 * of the agent's user.
	 */
	if (timeout_s == 0 && getenv("TIMEOUT") != NULL) {
		uint64_t run_s;

		if (sb_parse_u64(getenv("TIMEOUT"), 1, 30 * 86400, &run_s, NULL) == 0)
			timeout_s = run_s > 600 ? run_s - 60 : run_s - run_s / 10;
		if (timeout_s == 0)
			timeout_s = 1;
	}

	/* The task, its prompt, and the record's first two entries. */
	prompt = task_prompt(&project, &rc);
	if (prompt == NULL)
		return rc;
	/* A record that cannot be written costs the record, not the agent's run. */
	if (sb_dialog_open(&d, dpath, SB_DIALOG_TRUNCATE, &err) < 0 ||
	    sb_dialog_append(&d, "init", init_fields(name, project), &err) < 0 ||
	    sb_dialog_append(&d, "prompt", json_pack("{s:s}", "content", prompt), &err) < 0) {
		fprintf(stderr, "sse: dialog: %s: the session is not recorded\n",
		    sb_error_message(err));
		sb_error_release(&err);
		sb_dialog_close(&d);
	}
	json_decref(project);
	/* The raw stream is kept next to the record, for whoever reads the run afterwards. */
	if (events == NULL && fmt != EVENTS_NONE) {
		_cleanup_free_ char *base = sb_xasprintf("%s-events.jsonl", name);

		events_default = archive_file(base);
		events = events_default;
	}
	if (events != NULL) {
		events_fd = open(events, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (events_fd < 0)
			fprintf(stderr, "sse: cannot open '%s' for the events: %s, ignoring\n", events,
			    strerror(errno));
	}

	/* The program: found on our PATH, run with our environment (the agent's own). */
	rc = 0;
	if (sb_cmd_find_program(argv[optind], getenv("PATH"), &prog, &err) < 0)
		rc = sb_exit_code_for_exec_errno(sb_error_code(err));
	else if (!no_prompt && (in_fd = prompt_fd(prompt, &err)) < 0)
		rc = SB_EXIT_HARNESS;
	else if (pipe2(fds, O_CLOEXEC) < 0 && sb_error_errno(&err, errno, "pipe2") < 0)
		rc = SB_EXIT_HARNESS;
	if (rc == 0) {
		rd = fds[0];
		wr = fds[1];
		cmd.path = prog;
		cmd.argv = argv + optind;
		cmd.envp = environ;
		cmd.stdin_fd = no_prompt ? SB_CMD_DEVNULL : in_fd;
		cmd.stdout_fd = wr;
		cmd.stderr_fd = SB_CMD_INHERIT;
		cmd.flags = SB_CMD_NEW_PGRP | SB_CMD_DEATHSIG;
		signal(SIGTERM, on_signal);
		signal(SIGINT, on_signal);
		signal(SIGHUP, on_signal);
		if (sb_cmd_start(&cmd, &err) < 0)
			rc = sb_exit_code_for_exec_errno(sb_error_code(err));
	}
	/* It did not start: the record says so, as a shell's status would. */
	if (rc != 0) {
		fprintf(stderr, "sse: %s\n", sb_error_message(err));
		sb_error_release(&err);
		if (d.fd >= 0)
			(void)sb_dialog_append(&d, "complete",
			    json_pack("{s:s, s:i, s:i, s:{s:i, s:i}, s:s}", "status", "error", "turns",
				0, "duration_ms", 0, "total_tokens", "in", 0, "out", 0, "message",
				"the agent program could not start"),
			    NULL);
		sb_dialog_close(&d);
		fprintf(stderr, "[%s] exited with code %d\n", name, rc);
		return rc;
	}
	start = sb_now_ms();
	if (timeout_s > 0)
		deadline = start + timeout_s * 1000;
	wr = sb_close(wr);
	ar.fmt = (enum events_format)fmt;
	ar.ev = events_new(ar.fmt, d.fd >= 0 ? &d : NULL);
	ar.events_fd = events_fd;

	/*
	 * Read the stream until it ends. The program's exit ends it too, after a second of
	 * draining: something it left behind may hold the pipe open. Our timeout and the
	 * signals we get stop its whole process group (SIGTERM, then SIGKILL 10 s later).
	 */
	for (;;) {
		struct pollfd pfd[2] = { { .fd = rd, .events = POLLIN },
			{ .fd = cmd.pidfd, .events = POLLIN } };
		uint64_t now = sb_now_ms();
		char chunk[65536];
		int np = cmd.pidfd >= 0 && exited_at == 0 ? 2 : 1;

		if (got_signal != 0 && killed_at == 0) {
			sb_cmd_kill(&cmd, SIGTERM);
			killed_at = now;
		}
		if (deadline != 0 && now >= deadline && killed_at == 0) {
			fprintf(stderr, "sse: %s: time is up after %llu s, stopping it\n", name,
			    (unsigned long long)timeout_s);
			timed_out = true;
			sb_cmd_kill(&cmd, SIGTERM);
			killed_at = now;
		}
		if (killed_at != 0 && exited_at == 0 && now >= killed_at + 10000)
			sb_cmd_kill(&cmd, SIGKILL);
		if (exited_at != 0 && now >= exited_at + 1000)
			break;
		if (poll(pfd, (nfds_t)np, 200) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (np == 2 && (pfd[1].revents & POLLIN))
			exited_at = sb_now_ms(); /* the drain starts now */
		if (pfd[0].revents & (POLLIN | POLLHUP)) {
			ssize_t n = read(rd, chunk, sizeof(chunk));

			if (n > 0)
				take_chunk(&ar, chunk, (size_t)n);
			else if (n == 0 || (errno != EINTR && errno != EAGAIN))
				break;
		}
	}
	/* The stream ended: the program has 15 s more to exit (sb_cmd_wait counts from its start). */
	cmd.timeout_ms = sb_now_ms() - cmd.start_ms + 15000;
	if (sb_cmd_wait(&cmd, &res, &err) < 0) {
		fprintf(stderr, "sse: %s\n", sb_error_message(err));
		sb_error_release(&err);
		res.exit_code = SB_EXIT_HARNESS;
		res.out = (struct sb_buf)SB_BUF_INIT(0);
		res.err = (struct sb_buf)SB_BUF_INIT(0);
	}
	rc = res.exit_code;
	sb_cmd_result_release(&res);
	(void)events_finish(ar.ev, NULL);
	sum = events_summary(ar.ev);
	status = timed_out ? "timeout" : rc != 0 || sum->failed ? "error" : "success";
	f = json_pack("{s:s, s:I, s:I, s:{s:I, s:I}}", "status", status, "turns",
	    (json_int_t)sum->turns, "duration_ms", (json_int_t)(sb_now_ms() - start), "total_tokens",
	    "in", (json_int_t)sum->tokens_in, "out", (json_int_t)sum->tokens_out);
	if (sum->error != NULL || sum->last_text != NULL)
		json_object_set_new(f, "message",
		    json_string(sum->failed && sum->error ? sum->error : sum->last_text ?: sum->error));
	if (events_unparsed(ar.ev) > 0)
		json_object_set_new(f, "unrecorded_events",
		    json_integer((json_int_t)events_unparsed(ar.ev)));
	if (d.fd < 0)
		json_decref(f);
	else if (sb_dialog_append(&d, "complete", f, &err) < 0) {
		fprintf(stderr, "sse: dialog: %s, ignoring\n", sb_error_message(err));
		sb_error_release(&err);
	}
	if (events_ignored(ar.ev) > 0)
		fprintf(stderr, "sse: %zu line%s of the event stream not recorded\n",
		    events_ignored(ar.ev), events_ignored(ar.ev) == 1 ? "" : "s");
	events_free(ar.ev);
	sb_dialog_close(&d);
	fprintf(stderr, "[%s] exited with code %d\n", name, rc);
	return rc;
}

/* --- dispatch --- */

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
} commands[] = {
	{ "version", cmd_version },
	{ "project", cmd_project },
	{ "capabilities", cmd_capabilities },
	{ "prompt", cmd_prompt },
	{ "diff", cmd_diff },
	{ "bash", cmd_bash },
	{ "bench", cmd_bench },
	{ "dialog", cmd_dialog },
	{ "agent", cmd_agent },
};

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct sb_error *err = NULL;
	const char *socket = NULL;
	uint64_t t;
	int c, rc;

	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 's': socket = optarg; break;
		case 't':
			if (sb_parse_u64(optarg, 1, 86400, &t, NULL) < 0)
				return usage("--timeout must be a number of seconds");
			arg_timeout_ms = (long)t * 1000;
			break;
		case 'h': fputs(usage_text, stdout); return SB_EXIT_OK;
		case 'V': printf("sse %s\n", PACKAGE_VERSION); return SB_EXIT_OK;
		default: return usage("unknown option");
		}
	}
	if (optind >= argc)
		return usage("no command");
	for (size_t i = 0; i < SB_ARRAY_SIZE(commands); i++) {
		if (strcmp(argv[optind], commands[i].name) != 0)
			continue;
		if (socket != NULL)
			sb_sdk_init_socket(&sdk, socket);
		else if (sb_sdk_init_env(&sdk, &err) < 0) {
			fprintf(stderr, "sse: %s\n", sb_error_message(err));
			sb_error_release(&err);
			return SB_EXIT_USAGE;
		}
		sdk.timeout_ms = arg_timeout_ms;
		rc = commands[i].run(argc - optind, argv + optind);
		sb_sdk_release(&sdk);
		return rc;
	}
	return usage("unknown command '%s'", argv[optind]);
}
