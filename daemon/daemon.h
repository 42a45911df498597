/* SPDX-License-Identifier: Apache-2.0 */
/*
 * daemon.h: what the parts of ssebench-daemon share.
 *
 * Three processes (docs/daemon.md):
 *   - the helper (root, single-threaded): owns all state and every privileged operation,
 *     and forks one worker per request;
 *   - the agent front (an unprivileged uid): serves the agent socket and TCP with
 *     libmicrohttpd and forwards requests to the helper over its own channel;
 *   - the admin front (root, no capabilities): serves the admin socket, its own channel.
 * The helper knows which channel a request came from, and that, not anything in the
 * request, decides what is allowed: a compromised agent front cannot ask for the reference
 * patch, grading or a withheld check.
 */
#ifndef SSEBENCH_DAEMON_H
#define SSEBENCH_DAEMON_H

#include <jansson.h>
#include <stdint.h>
#include <sys/types.h>

#include "sb/common.h"
#include "sb/error.h"
#include "sb/priv.h"
#include "sb/task.h"

/* --- configuration (daemon/config.c) --- */

struct dconf {
	/* Paths */
	char *bench_path;   /* SSE_BENCH_PATH, /ssebench: task files (root-only) */
	char *repo_path;    /* SSE_REPO_PATH, /ssebench-repo: pristine source (root-only) */
	char *source;	    /* the agent's source tree (the config's source) */
	char *results;	    /* SSE_RESULTS: logs, final.patch (root-only) */
	char *archive;	    /* SSE_ARCHIVE: dialog.jsonl (the agent's) */
	char *runner_dir;   /* SSE_RUNNER_DIR: scratch copies, 0710 root:runner */
	char *runner_root;  /* SSE_RUNNER_ROOT: the scripts' own copy of the image ("/": none) */
	char *state_dir;    /* SSE_DAEMON_STATE: private state, 0711 root */
	char *agent_cgroup; /* SSE_AGENT_CGROUP: the agent's freezer cgroup, or NULL (signals) */
	/* Listeners */
	char *agent_socket; /* SSE_DAEMON_SOCKET */
	char *admin_socket; /* SSE_ADMIN_SOCKET */
	unsigned http_port; /* SSE_HTTP_PORT; 0 = no TCP listener */
	char *token;	    /* SSE_DAEMON_TOKEN; TCP requests must carry it */
	/* The gate */
	unsigned difficulty; /* SSE_DIFFICULTY 0..4 */
	/* Users */
	struct sb_creds agent;	/* SSE_AGENT_USER (model) */
	struct sb_creds runner; /* SSE_RUNNER_USER (sse-runner) */
	struct sb_creds front;	/* SSE_DAEMON_USER (sse-daemon, else nobody): the agent front */
	char *agent_home;
	char *runner_name;
	/* Limits (seconds / bytes); non-positive or unparsable values fall back to defaults */
	unsigned build_timeout, test_timeout, poc_timeout, bash_timeout, bash_timeout_max;
	size_t output_cap;
	unsigned runner_nproc; /* SSE_RUNNER_NPROC: RLIMIT_NPROC of task scripts */
	/* The environment given to scripts and bash calls (secrets and SSE_ADMIN_* removed) */
	char **base_env;
	/* The task */
	struct sb_task_config *task;
	json_t *project_view; /* GET /project */
	json_t *capabilities; /* GET /capabilities */
};

/*
 * Read the environment and the task; on failure *err says why and the caller exits 2
 * (bad difficulty, bad config) or 1. Does not touch the file system beyond reading.
 */
int dconf_load(struct dconf *c, struct sb_error **err);

/* A variable of the environment scripts get (base_env: "PATH"), or NULL. */
const char *dconf_env_get(const struct dconf *c, const char *name);

/* --- messages between fronts and helper (daemon/proto.c) --- */

enum dreq_type {
	DREQ_BASH = 1,
	DREQ_BENCHER,
	DREQ_DIFF,
	DREQ_FILES,
	DREQ_DIALOG,
	DREQ_RESULT,
	DREQ_FINAL_DIFF,
	DREQ_PREPARE_GRADING,
	DREQ_AGENT_EXITED,
	DREQ_REFERENCE_PATCH,
	DREQ_MAX_,
};

#define DPROTO_MAGIC	0x53534231u /* "SSB1" */
#define DPROTO_BODY_MAX (256 * 1024) /* request bodies (struct dreq_wire and the command) */
#define DPROTO_REPLY_MAX ((uint64_t)128 * 1024 * 1024)

struct dproto_hdr {
	uint32_t magic;
	uint32_t type; /* enum dreq_type */
	uint32_t len;  /* body bytes that follow (struct dreq_wire and the command) */
	uint32_t pad;
};

struct dproto_reply_hdr {
	uint32_t status; /* HTTP status */
	uint32_t pad;
	uint64_t len;	 /* JSON body bytes that follow */
};

const char *dreq_name(enum dreq_type t);

/*
 * Front side: send a request on the channel and wait for the reply on a private socketpair
 * whose other end travels with the request (SCM_RIGHTS). *ret_body is the reply (JSON).
 */
int dproto_call(int channel, enum dreq_type type, const char *body, size_t len,
    unsigned *ret_status, char **ret_body, size_t *ret_len, struct sb_error **err);

/*
 * Helper side: receive one request. *ret_reply_fd is where the reply goes. Returns 0, 1 at
 * end of file (the front went away), or -1 for a malformed message.
 */
int dproto_recv(int channel, struct dproto_hdr *ret_hdr, char **ret_body, int *ret_reply_fd,
    struct sb_error **err);

/* Write a reply (status + JSON) to fd, blocking until written. */
int dproto_reply(int fd, unsigned status, const json_t *body);
/* The same with a ready-made body. */
int dproto_reply_raw(int fd, unsigned status, const char *body, size_t len);
/* {"error": msg} with status. */
int dproto_reply_error(int fd, unsigned status, const char *fmt, ...) _printf_(3, 4);

/* --- requests and their rules (daemon/request.c) --- */

enum dchannel {
	DCH_AGENT = 0, /* the agent front: agent socket and TCP */
	DCH_ADMIN = 1, /* the admin front: admin socket */
};

/*
 * One request, typed. The front makes it from what the client sent (dreq_from_client):
 * the action's name is parsed there, once, into enum sb_action, and the PoC's path matched
 * there, once, against the task's list; nothing after that sees a client's string but the
 * bash command. On the channel it travels as struct dreq_wire followed by the command's
 * bytes (dreq_encode); the helper reads it back with dreq_decode, which checks every field's
 * range and length: the helper does not trust the front.
 */
struct dreq {
	enum dreq_type type;
	/* bencher */
	enum sb_action action; /* SB_ACTION_COUNT: the client named no action (refused, 500) */
	bool grading;
	int poc;	       /* index in the task's files.poc, or DREQ_NO_POC */
	/* bash */
	char *command;	       /* owned; NUL-terminated, no NUL inside; NULL for other types */
	int64_t timeout;       /* seconds, >= 0; 0: the default */
	/* dialog */
	int64_t since;	       /* -1: from the start */
};

#define DREQ_NO_POC (-1)

/* struct dreq on the channel: fixed-size fields, then command_len bytes of the command. */
struct dreq_wire {
	uint32_t action; /* enum sb_action, SB_ACTION_COUNT at most */
	uint32_t grading; /* 0 or 1 */
	int32_t poc;	  /* DREQ_NO_POC .. the number of PoCs - 1 */
	uint32_t command_len;
	int64_t timeout;
	int64_t since;
};

#define DREQ_COMMAND_MAX (DPROTO_BODY_MAX - sizeof(struct dreq_wire))

/* What the access rules look at. */
struct dpolicy {
	unsigned difficulty;
	bool agent_phase;
};

/* The configured PoC that given names ("/ssebench/<rel>" or "<rel>"): its index in the task's
 * files.poc, or DREQ_NO_POC. */
int dreq_match_poc(const struct sb_task_config *t, const char *bench_path, const char *given);

/*
 * The typed request for type from what a client sent: the query's action/since and the
 * body (NULL for requests without one); the PoC is looked up in t's list (bench_path: where
 * the task's files are, for the absolute form). -1 means a malformed request (400). Strict:
 * an unknown key or a wrong type in the body is malformed. Release with dreq_release.
 */
int dreq_from_client(const struct sb_task_config *t, const char *bench_path,
    enum dreq_type type, const char *action, const char *since, const char *body, size_t len,
    struct dreq *out);

/* r on the channel (struct dreq_wire and the command): *ret_len bytes, malloc'd. */
char *dreq_encode(const struct dreq *r, size_t *ret_len);

/*
 * The helper's reading of a body the front sent: -1 unless every field is in range (an
 * action at most SB_ACTION_COUNT, grading 0 or 1, a PoC index below n_poc, a command only
 * for bash, of exactly the length left and with no NUL, a timeout >= 0, since >= -1).
 */
int dreq_decode(enum dreq_type type, const void *body, size_t len, size_t n_poc,
    struct dreq *out);

void dreq_release(struct dreq *r);

/*
 * The access rules (docs/daemon.md, "Endpoints"; the gate: docs/upstream.md, "Difficulty
 * levels"): 0 if the request may go ahead, else an HTTP status and a fixed message.
 */
unsigned dreq_policy(const struct dpolicy *p, enum dchannel ch, const struct dreq *r,
    const char **ret_msg);

/* --- the fronts (daemon/server.c) --- */

enum listener_kind {
	LISTEN_AGENT_UNIX, /* agent-facing, no token */
	LISTEN_AGENT_TCP,  /* agent-facing, token required */
	LISTEN_ADMIN,	   /* privileged, peer must be uid 0 */
};

struct front_listener {
	enum listener_kind kind;
	int fd;
};

/* One request as a front received it (daemon/front.c): what libmicrohttpd parsed. */
struct front_request {
	enum listener_kind kind;
	const char *method, *url;
	const char *authorization, *x_sse_token; /* the headers, or NULL */
	const char *action, *since;		 /* the query values, or NULL */
	bool query_bad;	 /* a query value decoded to a NUL byte: refused */
	bool peer_root;	 /* the admin socket's peer is uid 0 (SO_PEERCRED) */
	const char *body; /* NUL-terminated; body_len bytes before the NUL */
	size_t body_len;
	bool too_big; /* the body, or its declared length, passed the front's bound */
};

enum front_local {
	FRONT_LOCAL_NONE,
	FRONT_LOCAL_VERSION,
	FRONT_LOCAL_PROJECT,
	FRONT_LOCAL_CAPABILITIES,
};

/*
 * What to do with it: an error answered at once (status, error: a fixed text, and for a 405
 * the Allow header), a public view answered at once (status 200, local), or a request for
 * the helper (status 0, type, and request: the typed request, owned by the caller).
 */
struct front_decision {
	unsigned status;
	const char *error;
	char *allow;
	enum front_local local;
	enum dreq_type type;
	struct dreq *request;
};

/*
 * Route, authenticate (the run's token on TCP, uid 0 on the admin socket) and check one
 * request, in that order: nothing a client sent is looked at before it is authenticated,
 * and nothing it sent is echoed back. task and bench_path: the PoCs a run_poc may name.
 * Release with front_decision_release.
 */
void front_decide(const char *token, const struct sb_task_config *task, const char *bench_path,
    const struct front_request *rq, struct front_decision *out);
void front_decision_release(struct front_decision *d);

/*
 * Serve listeners with libmicrohttpd, forwarding to the helper over channel, until the
 * channel closes or a signal arrives. Returns the process exit status.
 */
int front_run(const struct dconf *c, const struct front_listener *ls, size_t n, int channel);

#endif
