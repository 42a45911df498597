/* SPDX-License-Identifier: Apache-2.0 */
/* test-space.c: the disk accounting of images (src/ssebench/space.c). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "sb/error.h"
#include "sb/json.h"
#include "sb/mem.h"
#include "sb/sha256.h"

#include "../../src/ssebench/space.h"
#include "unit.h"

static const struct {
	const char *ref;
	bool ours;
	enum space_kind kind;
	const char *tag, *dataset, *task, *agent;
} names[] = {
    {"reg/x/debian:bookworm", true, SPACE_ROOTFS, "bookworm", NULL, NULL, NULL},
    {"reg/x/debian:trixie", true, SPACE_OTHER, "trixie", NULL, NULL, NULL},
    {"reg/x/base-generic-c:0.1.0", true, SPACE_BASE, "0.1.0", NULL, NULL, NULL},
    {"reg/x/case/pilot/cjson-cve-1", true, SPACE_CASE, "latest", "pilot", "cjson-cve-1", NULL},
    {"reg/x/runtime:0.1.0", true, SPACE_RUNTIME, "0.1.0", NULL, NULL, NULL},
    {"reg/x/tool/t1:0.1.0", true, SPACE_TOOL, "0.1.0", NULL, "t1", NULL},
    {"reg/x/tool-sidecar/t1:0.1.0", true, SPACE_SIDECAR_TASK, "0.1.0", NULL, "t1", NULL},
    {"reg/x/tool-sidecar-agent:0.1.0", true, SPACE_SIDECAR_AGENTRT, "0.1.0", NULL, NULL, NULL},
    {"reg/x/agent-dummy/t1:2", true, SPACE_AGENT, "2", NULL, "t1", "dummy"},
    {"reg/x/agent-codex/sidecar:0.9", true, SPACE_AGENT_SIDECAR, "0.9", NULL, NULL, "codex"},
    {"reg/x/mine/a/b/c:1", true, SPACE_OTHER, "1", NULL, NULL, NULL},
    {"reg/x/tool//t1:1", true, SPACE_OTHER, "1", NULL, NULL, NULL},
    /* Not under the prefix: another registry, or one that only starts the same. */
    {"reg/x-test/tool/t1:0.1.0", false, SPACE_OTHER, NULL, NULL, NULL, NULL},
    {"reg/xtool/t1:0.1.0", false, SPACE_OTHER, NULL, NULL, NULL, NULL},
    {"other/tool/t1:0.1.0", false, SPACE_OTHER, NULL, NULL, NULL, NULL},
    {"reg/x", false, SPACE_OTHER, NULL, NULL, NULL, NULL},
};

static bool
str_eq(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

START_TEST(test_name_parse)
{
	struct space_name n = {.kind = SPACE_OTHER};
	bool ours = space_name_parse("reg/x", names[_i].ref, &n);

	ck_assert_msg(ours == names[_i].ours, "%s", names[_i].ref);
	if (!ours)
		return;
	ck_assert_msg(
	    n.kind == names[_i].kind, "%s: kind %s", names[_i].ref, space_kind_name(n.kind));
	ck_assert_msg(str_eq(n.tag, names[_i].tag), "%s: tag %s", names[_i].ref, n.tag);
	ck_assert_msg(str_eq(n.dataset, names[_i].dataset), "%s: dataset", names[_i].ref);
	ck_assert_msg(str_eq(n.task, names[_i].task), "%s: task", names[_i].ref);
	ck_assert_msg(str_eq(n.agent, names[_i].agent), "%s: agent", names[_i].ref);
	space_name_release(&n);
}
END_TEST

START_TEST(test_keep_reason)
{
	static const char *const tasks[] = {"t1", "cjson-cve-1"};
	static const struct {
		const char *ref;
		bool keep;
	} cases[] = {
	    {"r/debian:bookworm", true},
	    {"r/base-generic-go:latest", true},
	    {"r/mine/a/b/c", true}, /* not ssebench's: only --all */
	    {"r/case/pilot/t1", true},
	    {"r/case/other/t1", false}, /* another dataset's */
	    {"r/case/pilot/gone", false},
	    {"r/tool/t1:0.1.0", true},
	    {"r/tool/t1:0.0.9", false}, /* an older ssebench's */
	    {"r/tool/gone:0.1.0", false},
	    {"r/tool-sidecar/cjson-cve-1:0.1.0", true},
	    {"r/agent-x/t1:7", true},
	    {"r/agent-x/gone:7", false},
	    {"r/agent-x/sidecar:7", true},
	    {"r/runtime:0.1.0", true},
	    {"r/runtime:0.0.9", false},
	    {"r/tool-sidecar-agent:0.0.9", false},
	};

	for (size_t i = 0; i < SB_ARRAY_SIZE(cases); i++) {
		struct space_name n;

		ck_assert(space_name_parse("r", cases[i].ref, &n));
		ck_assert_msg(
		    (space_keep_reason(&n, tasks, 2, "pilot", "0.1.0") != NULL) == cases[i].keep,
		    "%s", cases[i].ref);
		space_name_release(&n);
	}
}
END_TEST

/* A diff id of 64 hex digits made from one letter. */
static char *
diff(char c)
{
	char hex[65];

	memset(hex, c, 64);
	hex[64] = '\0';
	return sb_xasprintf("\"sha256:%s\"", hex);
}

/* An inspect element with the diff ids of the letters in layers, and size. */
static json_t *
inspect_json(char idc, const char *layers, unsigned long long size, const char *tags)
{
	char hex[65], *text, *ls = sb_xstrdup("");
	json_t *j = NULL;

	memset(hex, idc, 64);
	hex[64] = '\0';
	for (const char *p = layers; *p != '\0'; p++) {
		char *d = diff(*p), *n = sb_xasprintf("%s%s%s", ls, *ls ? "," : "", d);

		free(d);
		free(ls);
		ls = n;
	}
	text = sb_xasprintf("{\"Id\": \"sha256:%s\", \"RepoTags\": [%s], \"Size\": %llu, "
			    "\"RootFS\": {\"Type\": \"layers\", \"Layers\": [%s]}, "
			    "\"Config\": {\"Labels\": {\"ssebench.task-id\": \"t\"}}}",
	    hex, tags, size, ls);
	ck_assert_int_eq(sb_json_load(text, strlen(text), 1 << 20, &j, NULL), 0);
	free(text);
	free(ls);
	return j;
}

/* The image with the layers of the letters in layers, each layer's size its history's. */
static void
image(struct space_image *img, char idc, const char *layers, const uint64_t *sizes)
{
	size_t n = strlen(layers);
	struct space_hist h[16];
	uint64_t total = 0;
	json_t *j;

	for (size_t i = 0; i < n; i++) {
		total += sizes[i];
		h[n - 1 - i] = (struct space_hist){sizes[i], "RUN make"}; /* newest first */
	}
	j = inspect_json(idc, layers, total, "\"r/x:1\"");
	ck_assert_int_eq(space_image_from_inspect(j, img, NULL), 0);
	json_decref(j);
	space_image_set_history(img, h, n);
	ck_assert(img->exact);
}

START_TEST(test_chain_ids)
{
	struct space_image img;
	json_t *j = inspect_json('1', "ab", 10, "\"r/x:1\", \"q:2\"");
	_cleanup_free_ char *a = diff('a'), *b = diff('b'), *in = NULL;
	char hex[65];

	ck_assert_int_eq(space_image_from_inspect(j, &img, NULL), 0);
	ck_assert_int_eq(img.n_layers, 2);
	ck_assert_int_eq(img.n_tags, 2);
	ck_assert_str_eq(img.tags[1], "q:2");
	/* The first chain id is the diff id; the next the SHA-256 of "<chain> <diff>". */
	a[strlen(a) - 1] = '\0';
	b[strlen(b) - 1] = '\0';
	ck_assert_str_eq(img.chains[0], a + 1);
	in = sb_xasprintf("%s %s", a + 1, b + 1);
	sb_sha256_hex(in, strlen(in), hex);
	ck_assert_str_eq(img.chains[1] + 7, hex);
	/* Until the history: the whole size on the top layer, not exact. */
	ck_assert(!img.exact);
	ck_assert_uint_eq(img.sizes[0], 0);
	ck_assert_uint_eq(img.sizes[1], 10);
	ck_assert_str_eq(json_string_value(json_object_get(img.labels, "ssebench.task-id")), "t");
	space_image_release(&img);
	json_decref(j);
}
END_TEST

START_TEST(test_inspect_hostile)
{
	static const char *const bad[] = {
	    "[]",
	    "{\"Id\": \"sha256:zz\", \"Size\": 1, \"RootFS\": {\"Layers\": []}}",
	    "{\"Id\": 5}",
	    "{\"Id\": \"sha256:1111111111111111111111111111111111111111111111111111111111111111\", "
	    "\"Size\": -1, \"RootFS\": {\"Layers\": []}}",
	    "{\"Id\": \"sha256:1111111111111111111111111111111111111111111111111111111111111111\", "
	    "\"Size\": 1, \"RootFS\": {\"Layers\": [\"../x\"]}}",
	    "{\"Id\": \"sha256:1111111111111111111111111111111111111111111111111111111111111111\", "
	    "\"Size\": 1, \"RepoTags\": [1], \"RootFS\": {\"Layers\": []}}",
	    "{\"Id\": \"sha256:1111111111111111111111111111111111111111111111111111111111111111\", "
	    "\"Size\": 1, \"RootFS\": {\"Layers\": []}, \"Config\": {\"Labels\": []}}",
	};

	for (size_t i = 0; i < SB_ARRAY_SIZE(bad); i++) {
		struct space_image img = {.size = 77};
		struct sb_error *err = NULL;
		json_t *j = NULL;

		ck_assert_int_eq(sb_json_load(bad[i], strlen(bad[i]), 1 << 20, &j, NULL), 0);
		ck_assert_msg(space_image_from_inspect(j, &img, &err) < 0, "case %zu", i);
		ck_assert_ptr_nonnull(err);
		ck_assert_uint_eq(img.size, 77); /* untouched */
		sb_error_release(&err);
		json_decref(j);
	}
}
END_TEST

START_TEST(test_history_mapping)
{
	struct space_image img;
	json_t *j = inspect_json('1', "abc", 30, "");
	/* Newest first: LABEL (none), WORKDIR making a directory (a layer of 0), COPY 20,
	 * ENV (none), the import 10. Three layers: 10, 0, 20. */
	const struct space_hist h[] = {{0, "LABEL a=b"}, {20, "COPY x /x # buildkit"},
	    {0, "WORKDIR /src"}, {0, "/bin/sh -c #(nop)  ENV A=1"}, {10, ""}};
	const struct space_hist wrong_sum[] = {{5, "RUN x"}, {10, ""}};
	const struct space_hist unclear[] = {
	    {20, "COPY x /x"}, {0, "RUN true"}, {0, "RUN true"}, {10, ""}};

	ck_assert_int_eq(space_image_from_inspect(j, &img, NULL), 0);
	space_image_set_history(&img, wrong_sum, 2);
	ck_assert(!img.exact);
	ck_assert_uint_eq(img.sizes[2], 30);
	space_image_set_history(&img, h, SB_ARRAY_SIZE(h));
	ck_assert(img.exact);
	ck_assert_uint_eq(img.sizes[0], 10);
	ck_assert_uint_eq(img.sizes[1], 0);
	ck_assert_uint_eq(img.sizes[2], 20);
	/* Two RUNs of size 0 for one layer of size 0: which one cannot be told. */
	space_image_set_history(&img, unclear, SB_ARRAY_SIZE(unclear));
	ck_assert(!img.exact);
	ck_assert_uint_eq(img.sizes[0] + img.sizes[1] + img.sizes[2], 30);
	space_image_release(&img);
	json_decref(j);

	ck_assert(space_hist_is_metadata("LABEL x"));
	ck_assert(space_hist_is_metadata("/bin/sh -c #(nop)  CMD [\"sh\"]"));
	ck_assert(space_hist_is_metadata("env A=1"));
	ck_assert(!space_hist_is_metadata("WORKDIR /x"));
	ck_assert(!space_hist_is_metadata("/bin/sh -c #(nop) WORKDIR /x"));
	ck_assert(!space_hist_is_metadata("RUN /bin/sh -c echo LABEL"));
	ck_assert(!space_hist_is_metadata("/bin/sh -c apt-get update"));
	ck_assert(!space_hist_is_metadata(NULL));
	ck_assert(!space_hist_is_metadata("ENVX"));
}
END_TEST

/*
 * Four images: base (a), case (a b), tool (a b c) and an unrelated import (d); and one that
 * starts with the same diff as the case but on another base (e b): its b is another layer.
 */
START_TEST(test_accounting)
{
	struct space_image im[5];
	static const uint64_t base[] = {100}, cas[] = {100, 10}, tool[] = {100, 10, 1};
	static const uint64_t other[] = {7}, twin[] = {50, 10};
	uint64_t shared, unique;
	bool sel[5] = {0};

	image(&im[0], '1', "a", base);
	image(&im[1], '2', "ab", cas);
	image(&im[2], '3', "abc", tool);
	image(&im[3], '4', "d", other);
	image(&im[4], '5', "eb", twin);

	space_split(im, 5, NULL, 2, &shared, &unique);
	ck_assert_uint_eq(shared, 110);
	ck_assert_uint_eq(unique, 1);
	space_split(im, 5, NULL, 3, &shared, &unique);
	ck_assert_uint_eq(shared, 0);
	ck_assert_uint_eq(unique, 7);
	space_split(im, 5, NULL, 4, &shared, &unique);
	ck_assert_uint_eq(shared, 0); /* b on e is not b on a */
	ck_assert_uint_eq(unique, 60);
	/* Only the images among count: without the tool, the case shares only the base. */
	sel[0] = sel[1] = true;
	space_split(im, 5, sel, 1, &shared, &unique);
	ck_assert_uint_eq(shared, 100);
	ck_assert_uint_eq(unique, 10);

	ck_assert_uint_eq(space_distinct(im, 5, NULL), 100 + 10 + 1 + 7 + 50 + 10);
	memset(sel, 0, sizeof(sel));
	sel[1] = sel[2] = true;
	ck_assert_uint_eq(space_distinct(im, 5, sel), 111);
	/* Removing case and tool frees b and c; a stays with the base. */
	ck_assert_uint_eq(space_freed(im, 5, sel), 11);
	/* Removing the tool alone frees c; the case alone frees nothing (the tool holds it). */
	memset(sel, 0, sizeof(sel));
	sel[2] = true;
	ck_assert_uint_eq(space_freed(im, 5, sel), 1);
	memset(sel, 0, sizeof(sel));
	sel[1] = true;
	ck_assert_uint_eq(space_freed(im, 5, sel), 0);
	for (size_t i = 0; i < 5; i++)
		space_image_release(&im[i]);
}
END_TEST

START_TEST(test_human)
{
	char b[24];

	ck_assert_str_eq(space_human(0, b, sizeof(b)), "0 B");
	ck_assert_str_eq(space_human(999, b, sizeof(b)), "999 B");
	ck_assert_str_eq(space_human(9835, b, sizeof(b)), "9.84 kB");
	ck_assert_str_eq(space_human(203400000, b, sizeof(b)), "203 MB");
	ck_assert_str_eq(space_human(1897561937, b, sizeof(b)), "1.90 GB");
	ck_assert_str_eq(space_human(999999, b, sizeof(b)), "1.00 MB");
	ck_assert_str_eq(space_human(UINT64_MAX, b, sizeof(b)), "18.4 EB");
}
END_TEST

static Suite *
space_suite(void)
{
	Suite *s = suite_create("space");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_name_parse, 0, (int)SB_ARRAY_SIZE(names));
	tcase_add_test(tc, test_keep_reason);
	tcase_add_test(tc, test_chain_ids);
	tcase_add_test(tc, test_inspect_hostile);
	tcase_add_test(tc, test_history_mapping);
	tcase_add_test(tc, test_accounting);
	tcase_add_test(tc, test_human);
	suite_add_tcase(s, tc);
	return s;
}

SB_UNIT_MAIN(space_suite)
