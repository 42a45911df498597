/* SPDX-License-Identifier: Apache-2.0 */
/* test-yaml.c: the strict YAML loader, with hostile documents. */
#include "config.h"

#include <string.h>
#include <time.h>

#include "sb/buf.h"
#include "sb/limits.h"
#include "sb/mem.h"
#include "sb/yaml.h"

#include "unit.h"

static struct sb_ynode *
load_ok(const char *doc)
{
	struct sb_ynode *root = NULL;
	struct sb_error *err = NULL;

	ck_assert_msg(sb_yaml_load(doc, strlen(doc), &root, NULL, &err) == 0, "%s",
	    sb_error_message(err));
	return root;
}

/* Load a document that must fail; check the message and the position. */
static void
load_bad(const char *doc, size_t len, const char *msg_part, unsigned line, unsigned col)
{
	struct sb_ynode *root = (struct sb_ynode *)0x1;
	struct sb_error *err = NULL;
	struct sb_yloc loc = { 0, 0 };

	ck_assert_int_eq(sb_yaml_load(doc, len, &root, &loc, &err), -1);
	ck_assert_ptr_eq(root, (struct sb_ynode *)0x1); /* untouched */
	ck_assert_msg(strstr(sb_error_message(err), msg_part) != NULL, "message '%s' lacks '%s'",
	    sb_error_message(err), msg_part);
	if (line != 0)
		ck_assert_uint_eq(loc.line, line);
	if (col != 0)
		ck_assert_uint_eq(loc.col, col);
	sb_error_release(&err);
}

START_TEST(test_mapping_with_positions)
{
	struct sb_ynode *root = load_ok("id: t1\nfiles:\n  poc:\n    - pocs/a\n    - 'pocs/b'\n");
	const struct sb_ynode *files = sb_ymap_get(root, "files"), *poc = sb_ymap_get(files, "poc");

	ck_assert_int_eq(root->kind, SB_YNODE_MAP);
	ck_assert_str_eq(sb_ymap_get(root, "id")->value, "t1");
	ck_assert_uint_eq(sb_ymap_get(root, "id")->line, 1);
	ck_assert_uint_eq(sb_ymap_get(root, "id")->col, 5);
	ck_assert_int_eq(poc->kind, SB_YNODE_SEQ);
	ck_assert_uint_eq(poc->n, 2);
	ck_assert_str_eq(poc->items[1]->value, "pocs/b");
	ck_assert_uint_eq(poc->items[1]->line, 5);
	ck_assert_ptr_null(sb_ymap_get(root, "nope"));
	sb_ynode_free(root);
}
END_TEST

static const struct {
	const char *text;
	enum sb_yscalar_type type;
} scalar_cases[] = {
	{ "v:", SB_YSCALAR_NULL },	  { "v: ~", SB_YSCALAR_NULL },
	{ "v: null", SB_YSCALAR_NULL },	  { "v: 'null'", SB_YSCALAR_STR },
	{ "v: true", SB_YSCALAR_BOOL },	  { "v: FALSE", SB_YSCALAR_BOOL },
	{ "v: yes", SB_YSCALAR_STR },	  /* YAML 1.1 only */
	{ "v: 42", SB_YSCALAR_INT },	  { "v: -7", SB_YSCALAR_INT },
	{ "v: 0x1f", SB_YSCALAR_INT },	  { "v: 0o17", SB_YSCALAR_INT },
	{ "v: 1.5", SB_YSCALAR_FLOAT },	  { "v: 1e3", SB_YSCALAR_FLOAT },
	{ "v: .inf", SB_YSCALAR_FLOAT },  { "v: .nan", SB_YSCALAR_FLOAT },
	{ "v: 9f58baa7a6", SB_YSCALAR_STR }, { "v: \"42\"", SB_YSCALAR_STR },
	{ "v: !!str 42", SB_YSCALAR_STR }, { "v: |\n  text\n", SB_YSCALAR_STR },
};

START_TEST(test_scalar_types)
{
	struct sb_ynode *root = load_ok(scalar_cases[_i].text);
	const struct sb_ynode *v = sb_ymap_get(root, "v");

	ck_assert_msg(v->type == scalar_cases[_i].type, "case '%s': type %d", scalar_cases[_i].text,
	    v->type);
	sb_ynode_free(root);
}
END_TEST

START_TEST(test_empty_document)
{
	struct sb_ynode *root = (struct sb_ynode *)0x1;

	ck_assert_int_eq(sb_yaml_load("", 0, &root, NULL, NULL), 0);
	ck_assert_ptr_null(root);
	ck_assert_int_eq(sb_yaml_load("# only a comment\n", 17, &root, NULL, NULL), 0);
	ck_assert_ptr_null(root);
}
END_TEST

/* A mapping of 49,000 keys (the size that took 78 s of CPU pairwise): every key is there,
 * and one repeated at the end is found, naming the first. */
START_TEST(test_many_keys)
{
	const size_t n = 49000;
	struct sb_buf b = SB_BUF_INIT(1 << 24);
	struct sb_ynode *root = NULL;

	for (size_t i = 0; i < n; i++)
		ck_assert_int_eq(sb_buf_appendf(&b, NULL, "key%zu: %zu\n", (i * 7919) % n, i), 0);
	ck_assert_int_eq(sb_yaml_load(b.s, b.len, &root, NULL, NULL), 0);
	ck_assert_ptr_nonnull(root);
	ck_assert_uint_eq(root->n, n);
	sb_ynode_free(root);
	root = NULL;
	ck_assert_int_eq(sb_buf_appendf(&b, NULL, "key0: again\n"), 0);
	load_bad(b.s, b.len, "duplicate key 'key0' (first at line 1)", (unsigned)n + 1, 1);
	sb_buf_release(&b);
}
END_TEST

START_TEST(test_refusals)
{
	const char *dup = "a: 1\nb: 2\na: 3\n";

	load_bad(dup, strlen(dup), "duplicate key 'a' (first at line 1)", 3, 1);
	/* The earliest key that repeats one before it, as a check in document order finds it;
	 * with a third of one name, the second is named. */
	dup = "a: 1\nb: 2\nc: 3\nb: 4\na: 5\n";
	load_bad(dup, strlen(dup), "duplicate key 'b' (first at line 2)", 4, 1);
	dup = "x: 1\ny: 2\nx: 3\nx: 4\n";
	load_bad(dup, strlen(dup), "duplicate key 'x' (first at line 1)", 3, 1);
	dup = "m:\n  k: 1\n  j: 0\n  k: 2\nk: 3\n";
	load_bad(dup, strlen(dup), "duplicate key 'k' (first at line 2)", 4, 3);
	/* Keys equal as text, whatever their style. */
	dup = "'q': 1\n\"q\": 2\n";
	load_bad(dup, strlen(dup), "duplicate key 'q' (first at line 1)", 2, 1);
	load_bad("a: &x 1\nb: *x\n", 14, "anchors", 1, 4);
	load_bad("a: !!python/object:os.system x\n", 31, "tags", 1, 4);
	load_bad("a: 1\n---\nb: 2\n", 14, "more than one YAML document", 2, 1);
	load_bad("? [a, b]\n: 1\n", 13, "mapping keys", 0, 0);
	load_bad("a: [1, 2\n", 9, "", 0, 0); /* libyaml syntax error */
	load_bad("a: \"x\0y\"\n", 9, "", 0, 0);
}
END_TEST

START_TEST(test_alias_bomb)
{
	/* "Billion laughs": each level refers to the previous one ten times. The loader must
	 * refuse the first anchor instead of expanding anything. */
	struct sb_buf b = SB_BUF_INIT(1 << 20);
	struct timespec t0, t1;

	sb_buf_appends(&b, "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
	    NULL);
	for (char c = 'b'; c <= 'j'; c++)
		sb_buf_appendf(&b, NULL, "%c: &%c [*%c,*%c,*%c,*%c,*%c,*%c,*%c,*%c,*%c]\n", c, c, c - 1,
		    c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	load_bad(b.s, b.len, "anchors", 1, 4);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ck_assert_int_lt(t1.tv_sec - t0.tv_sec, 2);
	/* An alias without any anchor is refused as an alias. */
	load_bad("a: *nothing\n", 12, "", 0, 0);
	sb_buf_release(&b);
}
END_TEST

START_TEST(test_depth_cap)
{
	struct sb_buf b = SB_BUF_INIT(1 << 22);
	struct sb_ynode *root = NULL;

	/* Exactly the limit is fine... */
	for (int i = 0; i < SB_YAML_DEPTH_MAX; i++)
		sb_buf_appendc(&b, '[', NULL);
	for (int i = 0; i < SB_YAML_DEPTH_MAX; i++)
		sb_buf_appendc(&b, ']', NULL);
	ck_assert_int_eq(sb_yaml_load(b.s, b.len, &root, NULL, NULL), 0);
	sb_ynode_free(root);
	/* ...one more is not, and a million levels are refused quickly. */
	sb_buf_reset(&b);
	for (int i = 0; i <= SB_YAML_DEPTH_MAX; i++)
		sb_buf_appendc(&b, '[', NULL);
	load_bad(b.s, b.len, "nested too deeply", 1, SB_YAML_DEPTH_MAX + 1);
	sb_buf_reset(&b);
	for (int i = 0; i < 1000000; i++)
		sb_buf_appendc(&b, '[', NULL);
	load_bad(b.s, b.len, "nested too deeply", 0, 0);
	/* Block-style nesting counts the same. */
	sb_buf_reset(&b);
	for (int i = 0; i <= SB_YAML_DEPTH_MAX; i++)
		sb_buf_appendf(&b, NULL, "%*sk%d:\n", i * 2, "", i);
	sb_buf_appendf(&b, NULL, "%*sv: 1\n", (SB_YAML_DEPTH_MAX + 1) * 2, "");
	load_bad(b.s, b.len, "nested too deeply", 0, 0);
	sb_buf_release(&b);
}
END_TEST

START_TEST(test_ten_megabyte_line)
{
	/* A 10 MB scalar is over the scalar limit: refused with a message, not loaded. */
	size_t n = 10 * 1024 * 1024;
	struct sb_buf b = SB_BUF_INIT(n + 16);
	char *x = sb_xmalloc(n);

	memset(x, 'x', n);
	sb_buf_appends(&b, "v: ", NULL);
	sb_buf_append(&b, x, n, NULL);
	sb_buf_appendc(&b, '\n', NULL);
	load_bad(b.s, b.len, "scalar longer than the limit", 1, 4);
	free(x);
	sb_buf_release(&b);
}
END_TEST

START_TEST(test_node_cap)
{
	struct sb_buf b = SB_BUF_INIT(1 << 24);

	sb_buf_appendc(&b, '[', NULL);
	for (int i = 0; i < SB_YAML_NODES_MAX + 10; i++)
		sb_buf_appends(&b, "1,", NULL);
	sb_buf_appendc(&b, ']', NULL);
	load_bad(b.s, b.len, "too many YAML nodes", 0, 0);
	sb_buf_release(&b);
}
END_TEST

static Suite *
yaml_suite(void)
{
	Suite *s = suite_create("yaml");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_mapping_with_positions);
	tcase_add_loop_test(tc, test_scalar_types, 0, (int)SB_ARRAY_SIZE(scalar_cases));
	tcase_add_test(tc, test_empty_document);
	tcase_add_test(tc, test_refusals);
	tcase_add_test(tc, test_many_keys);
	tcase_add_test(tc, test_alias_bomb);
	tcase_add_test(tc, test_depth_cap);
	tcase_add_test(tc, test_ten_megabyte_line);
	tcase_add_test(tc, test_node_cap);
	suite_add_tcase(s, tc);
	return s;
}

SB_UNIT_MAIN(yaml_suite)
