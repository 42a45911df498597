/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-policy.c: the daemon's access rules (daemon/request.c), exhaustively: every request
 * type and bencher action x channel x phase x difficulty, against a table written from
 * docs/daemon.md, "Endpoints" and docs/upstream.md, "Difficulty levels" (not computed by the
 * code under test). The real daemon is attacked with the same matrix in tests/daemon/.
 * Also the typed request on the channel: what the helper's reading (dreq_decode) refuses.
 */
#include "config.h"

#include <limits.h>
#include <string.h>

#include "sb/diag.h"
#include "sb/mem.h"
#include "sb/task.h"

#include "../../daemon/daemon.h"
#include "unit.h"

static struct sb_task_config *task;

static const char config_yaml[] =
    "id: t\nproject: p\nrepository: https://e.org\nlanguage: c\nsource: /src/p\n"
    "task_description: {issue: x}\n"
    "scripts: {build: b.sh, run: r.sh, test: t.sh}\n"
    "files: {patch: d/p.diff, future_test: d/t.diff, poc: [pocs/a, pocs/b]}\n";

static void
setup(void)
{
	struct sb_diags d = SB_DIAGS_INIT;

	task = sb_task_config_parse(config_yaml, strlen(config_yaml), "c", &d);
	ck_assert_uint_eq(d.n, 0);
}

static void
teardown(void)
{
	sb_task_config_free(task);
}

/* The spec: which bencher actions each level allows on agent-facing listeners. */
static const char allowed[5][4] = {
	/* build, function_test, run_poc, intent_test */
	{ 1, 1, 1, 1 }, /* 0 FULL_ASSISTANCE */
	{ 1, 1, 1, 0 }, /* 1 NO_INTENT_TEST */
	{ 1, 1, 0, 0 }, /* 2 NO_FUTURE_TEST (default) */
	{ 1, 0, 0, 0 }, /* 3 BUILD_ONLY */
	{ 0, 0, 0, 0 }, /* 4 NO_BUILD */
};
static const char *const actions[4] = { "build", "function_test", "run_poc", "intent_test" };
static const enum sb_action action_ids[4] = { SB_ACTION_BUILD, SB_ACTION_FUNCTION_TEST,
	SB_ACTION_RUN_POC, SB_ACTION_INTENT_TEST };
/* Names that are not actions: near misses of the real ones, and nothing like them. */
static const char *const not_actions[] = { "rm_rf", "", "BUILD", "build ", " build", "Build",
	"run_poc\n", "intent_test2", "intent", "poc", "test", "bash", "prepare_grading", "null" };

static unsigned
call(enum dchannel ch, bool phase, unsigned level, enum dreq_type t, const char *action,
    const char *body)
{
	struct dpolicy p = { level, phase };
	struct dreq req;
	const char *msg = NULL;
	unsigned st;

	ck_assert_msg(dreq_from_client(task, "/ssebench", t, action, NULL, body,
			  body ? strlen(body) : 0, &req) == 0,
	    "request %d %s %s refused as malformed", t, action, body);
	st = dreq_policy(&p, ch, &req, &msg);
	dreq_release(&req);
	return st;
}

/* _i encodes channel (2) x phase (2) x level (5). */
START_TEST(test_matrix)
{
	enum dchannel ch = (_i / 10) ? DCH_ADMIN : DCH_AGENT;
	bool phase = (_i / 5) % 2 == 0;
	unsigned level = (unsigned)(_i % 5);
	bool agent = ch == DCH_AGENT;

	/* Reads: allowed everywhere, always. */
	for (enum dreq_type t = DREQ_DIFF; t <= DREQ_FINAL_DIFF; t++)
		ck_assert_uint_eq(call(ch, phase, level, t, NULL, NULL), 0);
	/* Admin-only endpoints: 403 on the agent channel in both phases. */
	ck_assert_uint_eq(call(ch, phase, level, DREQ_REFERENCE_PATCH, NULL, NULL), agent ? 403 : 0);
	ck_assert_uint_eq(call(ch, phase, level, DREQ_PREPARE_GRADING, NULL, "{}"), agent ? 403 : 0);
	ck_assert_uint_eq(call(ch, phase, level, DREQ_AGENT_EXITED, NULL, "{}"), agent ? 403 : 0);
	/* bash: never gated, closed after the phase on the agent channel. */
	ck_assert_uint_eq(call(ch, phase, level, DREQ_BASH, NULL, "{\"command\":\"true\"}"),
	    agent && !phase ? 403 : 0);
	/* bencher: the level's table in the phase, nothing after; admin never gated. */
	for (int a = 0; a < 4; a++) {
		const char *body = strcmp(actions[a], "run_poc") == 0 ? "{\"poc\":\"pocs/a\"}" : "{}";
		unsigned want = !agent ? 0 : !phase ? 403 : allowed[level][a] ? 0 : 403;

		ck_assert_msg(call(ch, phase, level, DREQ_BENCHER, actions[a], body) == want,
		    "%s ch=%d phase=%d level=%u", actions[a], ch, phase, level);
		/* grading: true is the admin socket's alone. */
		if (strcmp(actions[a], "run_poc") != 0)
			ck_assert_uint_eq(call(ch, phase, level, DREQ_BENCHER, actions[a],
					      "{\"grading\":true}"),
			    agent ? 403 : 0);
	}
	/*
	 * An action that is not one of the four is refused at every level, in both phases, on
	 * both channels, with or without grading: never 0 (go ahead). Upstream's status for it
	 * is 500; on the agent channel after the phase, the closed tools answer first (403).
	 */
	for (size_t n = 0; n < SB_ARRAY_SIZE(not_actions); n++) {
		const char *bodies[] = { "{}", "{\"poc\":\"pocs/a\"}", "{\"grading\":true}" };

		for (size_t b = 0; b < SB_ARRAY_SIZE(bodies); b++) {
			unsigned want = agent && !phase ? 403
				: agent && b == 2	  ? 403
							  : 500;

			ck_assert_msg(call(ch, phase, level, DREQ_BENCHER, not_actions[n],
					  bodies[b]) == want,
			    "'%s' %s ch=%d phase=%d level=%u", not_actions[n], bodies[b], ch, phase,
			    level);
		}
	}
}
END_TEST

/* dreq_from_client on a string body: 0, or -1 for a malformed request. */
static int
FROM(enum dreq_type type, const char *action, const char *since, const char *body,
    struct dreq *out)
{
	struct dreq scratch;
	int rc = dreq_from_client(task, "/ssebench", type, action, since, body,
	    body != NULL ? strlen(body) : 0, out != NULL ? out : &scratch);

	if (out == NULL)
		dreq_release(&scratch);
	return rc;
}

START_TEST(test_bad_requests)
{
	struct dpolicy p = { 0, true };
	const char *msg;
	struct dreq req;

	/* Unknown action: 500, as upstream (after the gate would have let it pass). */
	ck_assert_int_eq(FROM(DREQ_BENCHER, "rm_rf", NULL, "{}", &req), 0);
	ck_assert_int_eq(req.action, SB_ACTION_COUNT);
	ck_assert_uint_eq(dreq_policy(&p, DCH_ADMIN, &req, &msg), 500);
	dreq_release(&req);
	/* A PoC that is not configured, or an escape attempt. */
	ck_assert_int_eq(FROM(DREQ_BENCHER, "run_poc", NULL, "{\"poc\":\"../diffs/p.diff\"}", &req),
	    0);
	ck_assert_int_eq(req.poc, DREQ_NO_POC);
	ck_assert_uint_eq(dreq_policy(&p, DCH_ADMIN, &req, &msg), 500);
	ck_assert_str_eq(msg, "not a PoC of this task");
	dreq_release(&req);
	/* The absolute form of a configured PoC is that PoC: its index in the list. */
	ck_assert_int_eq(dreq_match_poc(task, "/ssebench", "/ssebench/pocs/b"), 1);
	ck_assert_int_eq(dreq_match_poc(task, "/ssebench", "pocs/a"), 0);
	ck_assert_int_eq(dreq_match_poc(task, "/ssebench", "/ssebench2/pocs/b"), DREQ_NO_POC);
	ck_assert_int_eq(dreq_match_poc(task, "/ssebench", NULL), DREQ_NO_POC);
	/* Malformed bodies and values. */
	ck_assert_int_lt(FROM(DREQ_BENCHER, NULL, NULL, "{}", NULL), 0); /* no action */
	ck_assert_int_lt(FROM(DREQ_BENCHER, "build", NULL, "[]", NULL), 0);
	ck_assert_int_lt(FROM(DREQ_BENCHER, "build", NULL, "{\"grading\":1}", NULL), 0);
	ck_assert_int_lt(FROM(DREQ_BENCHER, "build", NULL, "{\"x\":1}", NULL), 0);
	ck_assert_int_lt(FROM(DREQ_BENCHER, "build", NULL, "{\"grading\":true,\"grading\":false}",
			     NULL),
	    0);
	ck_assert_int_lt(FROM(DREQ_BASH, NULL, NULL, "{}", NULL), 0);
	ck_assert_int_lt(FROM(DREQ_BASH, NULL, NULL, "{\"command\":1}", NULL), 0);
	ck_assert_int_lt(FROM(DREQ_BASH, NULL, NULL, "{\"command\":\"x\",\"timeout\":-1}", NULL), 0);
	ck_assert_int_lt(FROM(DREQ_BASH, NULL, NULL, "not json", NULL), 0);
	ck_assert_int_lt(FROM(DREQ_DIALOG, NULL, "-5", NULL, NULL), 0);
	ck_assert_int_lt(FROM(DREQ_DIALOG, NULL, "1e3", NULL, NULL), 0);
	ck_assert_int_lt(FROM(DREQ_PREPARE_GRADING, NULL, NULL, "{\"a\":1}", NULL), 0);
	/* An empty POST body counts as {}. */
	ck_assert_int_eq(FROM(DREQ_AGENT_EXITED, NULL, NULL, "", NULL), 0);
}
END_TEST

/* Encode a request as the front does, then decode it as the helper does. */
static int
round_trip(const struct dreq *r, struct dreq *out)
{
	size_t len;
	char *b = dreq_encode(r, &len);
	int rc = dreq_decode(r->type, b, len, 2, out);

	free(b);
	return rc;
}

/* A wire body for t with the fields a front would send for a valid request, changed by the
 * caller, then decoded; the command follows the fixed fields. */
static int
decode_wire(enum dreq_type t, const struct dreq_wire *w, const char *cmd, size_t cmd_len)
{
	char buf[sizeof(*w) + 64];
	struct dreq out;
	int rc;

	ck_assert_uint_le(cmd_len, 64);
	memcpy(buf, w, sizeof(*w));
	memcpy(buf + sizeof(*w), cmd, cmd_len);
	rc = dreq_decode(t, buf, sizeof(*w) + cmd_len, 2, &out);
	dreq_release(&out);
	return rc;
}

/* The helper's reading of the typed request checks every field: a request a well-behaved
 * front could not have sent is refused, whatever the policy would say of it. */
START_TEST(test_decode_checks)
{
	const struct dreq_wire bencher = { SB_ACTION_RUN_POC, 1, 1, 0, 0, -1 };
	const struct dreq_wire bash = { SB_ACTION_COUNT, 0, DREQ_NO_POC, 4, 30, -1 };
	struct dreq_wire w;
	struct dreq r, out;
	char big[DPROTO_BODY_MAX + 8];

	/* What the front makes comes back unchanged. */
	ck_assert_int_eq(FROM(DREQ_BENCHER, "run_poc", NULL, "{\"poc\":\"/ssebench/pocs/b\"}", &r),
	    0);
	ck_assert_int_eq(round_trip(&r, &out), 0);
	ck_assert_int_eq(out.action, SB_ACTION_RUN_POC);
	ck_assert_int_eq(out.poc, 1);
	ck_assert(!out.grading);
	dreq_release(&r);
	dreq_release(&out);
	ck_assert_int_eq(FROM(DREQ_BASH, NULL, NULL, "{\"command\":\"ls -l\",\"timeout\":7}", &r),
	    0);
	ck_assert_int_eq(round_trip(&r, &out), 0);
	ck_assert_str_eq(out.command, "ls -l");
	ck_assert_int_eq(out.timeout, 7);
	dreq_release(&r);
	dreq_release(&out);
	ck_assert_int_eq(FROM(DREQ_DIALOG, NULL, "12", NULL, &r), 0);
	ck_assert_int_eq(round_trip(&r, &out), 0);
	ck_assert_int_eq(out.since, 12);
	dreq_release(&r);
	ck_assert_int_eq(decode_wire(DREQ_BENCHER, &bencher, "", 0), 0);
	ck_assert_int_eq(decode_wire(DREQ_BASH, &bash, "true", 4), 0);

	/* An action out of range (SB_ACTION_COUNT, the unknown name, is the last value). */
	w = bencher;
	w.action = SB_ACTION_COUNT + 1;
	ck_assert_int_lt(decode_wire(DREQ_BENCHER, &w, "", 0), 0);
	w.action = UINT32_MAX;
	ck_assert_int_lt(decode_wire(DREQ_BENCHER, &w, "", 0), 0);
	/* A PoC index past the list (two PoCs), or below "none". */
	w = bencher;
	w.poc = 2;
	ck_assert_int_lt(decode_wire(DREQ_BENCHER, &w, "", 0), 0);
	w.poc = -2;
	ck_assert_int_lt(decode_wire(DREQ_BENCHER, &w, "", 0), 0);
	/* grading is a bool. */
	w = bencher;
	w.grading = 2;
	ck_assert_int_lt(decode_wire(DREQ_BENCHER, &w, "", 0), 0);
	/* The command: its length is the bytes that follow, no more and no less; no NUL in it;
	 * bash's alone; and a body longer than the channel's bound is refused whole. */
	w = bash;
	w.command_len = 5;
	ck_assert_int_lt(decode_wire(DREQ_BASH, &w, "true", 4), 0);
	w.command_len = 3;
	ck_assert_int_lt(decode_wire(DREQ_BASH, &w, "true", 4), 0);
	w.command_len = UINT32_MAX;
	ck_assert_int_lt(decode_wire(DREQ_BASH, &w, "true", 4), 0);
	w = bash;
	ck_assert_int_lt(decode_wire(DREQ_BASH, &w, "t\0ue", 4), 0);
	w = bencher;
	w.command_len = 4;
	ck_assert_int_lt(decode_wire(DREQ_BENCHER, &w, "true", 4), 0);
	memset(big, 'a', sizeof(big));
	w = bash;
	w.command_len = (uint32_t)(sizeof(big) - sizeof(w));
	memcpy(big, &w, sizeof(w));
	ck_assert_int_lt(dreq_decode(DREQ_BASH, big, sizeof(big), 2, &out), 0);
	ck_assert_ptr_null(out.command);
	/* A timeout below 0, a since below -1. */
	w = bash;
	w.timeout = -1;
	ck_assert_int_lt(decode_wire(DREQ_BASH, &w, "true", 4), 0);
	w = bash;
	w.since = 5;
	ck_assert_int_lt(decode_wire(DREQ_BASH, &w, "true", 4), 0);
	w = (struct dreq_wire){ SB_ACTION_COUNT, 0, DREQ_NO_POC, 0, 0, -2 };
	ck_assert_int_lt(decode_wire(DREQ_DIALOG, &w, "", 0), 0);
	/* Another type's field set: a bencher's action on a /diff. */
	w = (struct dreq_wire){ SB_ACTION_BUILD, 0, DREQ_NO_POC, 0, 0, -1 };
	ck_assert_int_lt(decode_wire(DREQ_DIFF, &w, "", 0), 0);
	/* Too short for the fixed fields; a type out of range. */
	ck_assert_int_lt(dreq_decode(DREQ_DIFF, &bencher, sizeof(bencher) - 1, 2, &out), 0);
	ck_assert_int_lt(dreq_decode(DREQ_MAX_, &bencher, sizeof(bencher), 2, &out), 0);
	ck_assert_int_lt(dreq_decode((enum dreq_type)0, &bencher, sizeof(bencher), 2, &out), 0);
}
END_TEST

/*
 * Red-team review of issue 19 (a front taken over by the agent): every wire field at its
 * boundaries (one past each end, the sign bit, the extremes), for every request type, each
 * decoded as the helper does and then judged on every channel x phase x level. What the
 * helper reads back has every field in range and the other types' fields at their defaults,
 * and what the rules let through on the agent channel is only what docs/daemon.md allows:
 * no admin-only endpoint, no grading, no gated action, no tool after the phase, no run_poc
 * without a PoC of the list. Written against the spec, not the code under test.
 */
static void
check_decoded(enum dreq_type t, const struct dreq *r, size_t n_poc)
{
	ck_assert_int_eq(r->type, t);
	ck_assert((unsigned)r->action <= SB_ACTION_COUNT);
	ck_assert(r->poc == DREQ_NO_POC || (r->poc >= 0 && (size_t)r->poc < n_poc));
	ck_assert(r->timeout >= 0);
	ck_assert(r->since >= -1);
	if (t != DREQ_BENCHER) {
		ck_assert_int_eq(r->action, SB_ACTION_COUNT);
		ck_assert(!r->grading);
		ck_assert_int_eq(r->poc, DREQ_NO_POC);
	}
	if (t != DREQ_BASH) {
		ck_assert_ptr_null(r->command);
		ck_assert_int_eq(r->timeout, 0);
	} else {
		ck_assert_ptr_nonnull(r->command);
	}
	if (t != DREQ_DIALOG)
		ck_assert_int_eq(r->since, -1);
	for (int ch = DCH_AGENT; ch <= DCH_ADMIN; ch++)
		for (int phase = 0; phase < 2; phase++)
			for (unsigned level = 0; level < 5; level++) {
				struct dpolicy p = { level, phase != 0 };
				const char *msg = NULL;
				bool agent = ch == DCH_AGENT;

				if (dreq_policy(&p, (enum dchannel)ch, r, &msg) != 0) {
					ck_assert_ptr_nonnull(msg);
					continue;
				}
				if (agent)
					ck_assert(t != DREQ_PREPARE_GRADING && t != DREQ_AGENT_EXITED &&
					    t != DREQ_REFERENCE_PATCH);
				if (agent && (t == DREQ_BASH || t == DREQ_BENCHER))
					ck_assert(phase);
				if (t != DREQ_BENCHER)
					continue;
				ck_assert_ptr_nonnull(sb_action_name(r->action));
				if (agent) {
					ck_assert(!r->grading);
					ck_assert(allowed[level][r->action == SB_ACTION_BUILD ? 0
							: r->action == SB_ACTION_FUNCTION_TEST ? 1
							: r->action == SB_ACTION_RUN_POC	 ? 2
												 : 3]);
				}
				if (r->action == SB_ACTION_RUN_POC)
					ck_assert(r->poc >= 0 && (size_t)r->poc < n_poc);
			}
}

START_TEST(test_decode_boundaries)
{
	static const uint32_t act[] = { SB_ACTION_BUILD, SB_ACTION_RUN_POC,
		SB_ACTION_FUNCTION_TEST, SB_ACTION_INTENT_TEST, SB_ACTION_COUNT,
		SB_ACTION_COUNT + 1, 0x80000000u, UINT32_MAX };
	static const uint32_t grd[] = { 0, 1, 2, 0x80000000u, UINT32_MAX };
	static const int32_t pocs[] = { INT32_MIN, -2, DREQ_NO_POC, 0, 1, 2, INT32_MAX };
	static const int64_t tmo[] = { INT64_MIN, -1, 0, 1, INT64_MAX };
	static const int64_t snc[] = { INT64_MIN, -2, -1, 0, INT64_MAX };
	/* The command: none, the bytes that follow, one too many and one too few, a NUL inside,
	 * and a length whose sum with the fixed part wraps a 32-bit count. */
	static const struct {
		const char *s;
		size_t n;
		uint32_t len;
	} cmds[] = { { "", 0, 0 }, { "true", 4, 4 }, { "true", 4, 5 }, { "true", 4, 3 },
		{ "t\0ue", 4, 4 }, { "true", 4, UINT32_MAX }, { "true", 4, UINT32_MAX - 31 } };
	size_t dims[] = { DREQ_MAX_ + 1, 2, SB_ARRAY_SIZE(act), SB_ARRAY_SIZE(grd),
		SB_ARRAY_SIZE(pocs), SB_ARRAY_SIZE(tmo), SB_ARRAY_SIZE(snc), SB_ARRAY_SIZE(cmds) };
	size_t total = 1;
	unsigned long accepted = 0;

	for (size_t d = 0; d < SB_ARRAY_SIZE(dims); d++)
		total *= dims[d];
	/* Every combination: k's digits in the mixed radix dims, one per field. */
	for (size_t k = 0; k < total; k++) {
		size_t i[SB_ARRAY_SIZE(dims)], rest = k;
		struct dreq_wire w;
		char buf[sizeof(w) + 8];
		struct dreq out;
		enum dreq_type t;
		size_t n_poc;

		for (size_t d = 0; d < SB_ARRAY_SIZE(dims); d++) {
			i[d] = rest % dims[d];
			rest /= dims[d];
		}
		t = (enum dreq_type)i[0];
		n_poc = i[1] * 2; /* no PoC, or two */
		w = (struct dreq_wire){ act[i[2]], grd[i[3]], pocs[i[4]], cmds[i[7]].len, tmo[i[5]],
			snc[i[6]] };
		memcpy(buf, &w, sizeof(w));
		memcpy(buf + sizeof(w), cmds[i[7]].s, cmds[i[7]].n);
		if (dreq_decode(t, buf, sizeof(w) + cmds[i[7]].n, n_poc, &out) == 0) {
			accepted++;
			ck_assert(t > 0 && t < DREQ_MAX_);
			ck_assert_uint_le(i[7], 1);
			check_decoded(t, &out, n_poc);
		} else {
			ck_assert_ptr_null(out.command);
		}
		dreq_release(&out);
	}
	/* Not vacuous: each valid type has requests that pass. */
	ck_assert_uint_gt(accepted, DREQ_MAX_ - 1);
	/* Bodies shorter than the fixed part, down to none at all (a taken-over front's
	 * zero-length message), are refused without a read past them. */
	for (size_t len = 0; len < sizeof(struct dreq_wire); len++) {
		char *b = sb_xmalloc(len + 1);
		struct dreq out;

		memset(b, 0, len + 1);
		ck_assert_int_lt(dreq_decode(DREQ_DIFF, b, len, 2, &out), 0);
		free(b);
	}
}
END_TEST

START_TEST(test_gate_table)
{
	for (unsigned level = 0; level < 5; level++)
		for (int a = 0; a < 4; a++) {
			enum sb_action parsed;

			ck_assert_msg(sb_level_allows(level, action_ids[a]) == allowed[level][a],
			    "level %u %s", level, actions[a]);
			ck_assert_int_eq(sb_action_parse(actions[a], &parsed), 0);
			ck_assert_int_eq(parsed, action_ids[a]);
			ck_assert_str_eq(sb_action_name(action_ids[a]), actions[a]);
		}
	/* Deny by default: no level lets through a value that is not an action, and a level
	 * that does not exist lets nothing through. */
	for (unsigned level = 0; level < 8; level++) {
		ck_assert(!sb_level_allows(level, SB_ACTION_COUNT));
		ck_assert(!sb_level_allows(level, (enum sb_action)99));
		ck_assert(!sb_level_allows(level, (enum sb_action)-1));
	}
	for (int a = 0; a < 4; a++) {
		ck_assert(!sb_level_allows(5, action_ids[a]));
		ck_assert(!sb_level_allows(UINT_MAX, action_ids[a]));
	}
	for (size_t n = 0; n < SB_ARRAY_SIZE(not_actions); n++) {
		enum sb_action untouched = SB_ACTION_INTENT_TEST;

		ck_assert_int_lt(sb_action_parse(not_actions[n], &untouched), 0);
		ck_assert_int_eq(untouched, SB_ACTION_INTENT_TEST);
	}
	ck_assert_int_lt(sb_action_parse(NULL, NULL), 0);
	ck_assert_ptr_null(sb_action_name(SB_ACTION_COUNT));
}
END_TEST

static Suite *
policy_suite(void)
{
	Suite *s = suite_create("policy");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_matrix, 0, 20);
	tcase_add_test(tc, test_bad_requests);
	tcase_add_test(tc, test_decode_checks);
	tcase_add_test(tc, test_decode_boundaries);
	tcase_add_test(tc, test_gate_table);
	suite_add_tcase(s, tc);
	return s;
}

SB_UNIT_MAIN(policy_suite)
