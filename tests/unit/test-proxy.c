/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-proxy.c: what `ssebench proxy up` and `ssebench doctor` work out without Docker or
 * the network (src/ssebench/proxy-litellm.c): YAML scalars typed into the LiteLLM
 * configuration, the os.environ/ names it needs, the configuration made from a models
 * directory, the env file's lines, what `docker container inspect` says, keys hidden in log
 * lines, and the model ids of a /v1/models reply.
 */
#include "config.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "sb/argv.h"
#include "sb/buf.h"
#include "sb/fs.h"
#include "sb/json.h"
#include "sb/mem.h"
#include "sb/yaml.h"

#include "../../src/ssebench/proxy.h"
#include "unit.h"

/* The YAML text as the configuration's JSON (compact, keys sorted). */
static char *
yaml_as_json(const char *text)
{
	_cleanup_ynode_ struct sb_ynode *root = NULL;
	json_t *j;
	char *s;

	ck_assert_int_eq(sb_yaml_load(text, strlen(text), &root, NULL, NULL), 0);
	j = proxy_ynode_json(root);
	s = sb_json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(15));
	json_decref(j);
	return s;
}

static const struct {
	const char *yaml, *json;
} typed_cases[] = {
	{ "a: 1", "{\"a\":1}" },
	{ "a: -7", "{\"a\":-7}" },
	{ "a: 3.0e-06", "{\"a\":3e-6}" },
	{ "a: true", "{\"a\":true}" },
	{ "a: False", "{\"a\":false}" },
	{ "a: null", "{\"a\":null}" },
	{ "a: ~", "{\"a\":null}" },
	{ "a: '1'", "{\"a\":\"1\"}" },   /* quoted: a string */
	{ "a: .inf", "{\"a\":\".inf\"}" }, /* no JSON number: the text */
	{ "a: [x, 2]", "{\"a\":[\"x\",2]}" },
	{ "- {model_name: m, litellm_params: {model: p/m, rpm: 10}}",
	    "[{\"litellm_params\":{\"model\":\"p/m\",\"rpm\":10},\"model_name\":\"m\"}]" },
};

START_TEST(test_ynode_json_typed)
{
	_cleanup_free_ char *got = yaml_as_json(typed_cases[_i].yaml);

	ck_assert_msg(strcmp(got, typed_cases[_i].json) == 0, "%s: got %s, want %s",
	    typed_cases[_i].yaml, got, typed_cases[_i].json);
}
END_TEST

START_TEST(test_env_refs)
{
	static const char text[] = "- model_name: a\n"
				   "  litellm_params:\n"
				   "    model: p/a\n"
				   "    api_key: os.environ/KEY_A\n"
				   "    api_base: os.environ/BASE_A\n"
				   "- model_name: b\n"
				   "  litellm_params: {model: p/b, api_key: os.environ/KEY_A}\n"
				   "- model_name: c\n"
				   "  litellm_params: {model: p/c, api_key: 'os.environ/bad name',\n"
				   "    extra: os.environ/, quoted: \"os.environ/KEY_C\", n: 5}\n";
	_cleanup_ynode_ struct sb_ynode *root = NULL;
	_cleanup_argv_ struct sb_argv names = SB_ARGV_INIT;

	ck_assert_int_eq(sb_yaml_load(text, strlen(text), &root, NULL, NULL), 0);
	proxy_env_refs(root, &names);
	/* Each once, in order; a name that is no variable name (or none) is left out. */
	ck_assert_uint_eq(names.n, 3);
	ck_assert_str_eq(names.v[0], "KEY_A");
	ck_assert_str_eq(names.v[1], "BASE_A");
	ck_assert_str_eq(names.v[2], "KEY_C");
}
END_TEST

static void
write_file(int dfd, const char *name, const char *text)
{
	ck_assert_int_eq(sb_write_file_atomic_at(dfd, name, text, strlen(text), 0644, NULL), 0);
}

START_TEST(test_litellm_config)
{
	char dir[] = "/tmp/test-proxy.XXXXXX";
	_cleanup_argv_ struct sb_argv env = SB_ARGV_INIT;
	_cleanup_free_ char *s = NULL;
	struct sb_error *err = NULL;
	json_t *config = NULL;
	int dfd;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	dfd = sb_open_dir(dir, NULL);
	ck_assert_int_ge(dfd, 0);
	/* Read sorted: b.yml after a.yaml; a hidden file, another suffix, an empty file: none. */
	write_file(dfd, "b.yml", "- model_name: second\n  litellm_params:\n    model: p/second\n"
				 "    api_key: os.environ/KEY_B\n");
	write_file(dfd, "a.yaml", "- model_name: first\n  litellm_params:\n    model: p/first\n"
				  "    api_key: os.environ/KEY_A\n  model_info:\n"
				  "    input_cost_per_token: 1.0e-06\n");
	write_file(dfd, ".hidden.yaml", "- model_name: hidden\n");
	write_file(dfd, "notes.txt", "- model_name: txt\n");
	write_file(dfd, "empty.yaml", "");
	ck_assert_int_eq(proxy_litellm_config(dir, &config, &env, &err), 0);
	s = sb_json_dumps(config, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(15));
	ck_assert_str_eq(s, "{\"general_settings\":{\"master_key\":\"os.environ/LITELLM_MASTER_KEY\"},"
			    "\"model_list\":[{\"litellm_params\":{\"api_key\":\"os.environ/KEY_A\","
			    "\"model\":\"p/first\"},\"model_info\":{\"input_cost_per_token\":1e-6},"
			    "\"model_name\":\"first\"},{\"litellm_params\":{\"api_key\":"
			    "\"os.environ/KEY_B\",\"model\":\"p/second\"},\"model_name\":\"second\"}]}");
	ck_assert_uint_eq(env.n, 2);
	ck_assert_str_eq(env.v[0], "KEY_A");
	ck_assert_str_eq(env.v[1], "KEY_B");
	json_decref(config);

	/* A file that is not a list: an error, and nothing handed back. */
	write_file(dfd, "c.yaml", "model_name: x\n");
	config = NULL;
	ck_assert_int_lt(proxy_litellm_config(dir, &config, NULL, &err), 0);
	ck_assert_ptr_null(config);
	ck_assert_msg(strstr(sb_error_message(err), "c.yaml") != NULL, "%s", sb_error_message(err));
	sb_error_release(&err);
	for (const char *const *n = (const char *const[]){ "a.yaml", "b.yml", ".hidden.yaml",
		 "notes.txt", "empty.yaml", "c.yaml", NULL };
	     *n != NULL; n++)
		ck_assert_int_eq(unlinkat(dfd, *n, 0), 0);
	close(dfd);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

START_TEST(test_env_file_add)
{
	_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(4096);
	struct sb_error *err = NULL;

	ck_assert_int_eq(proxy_env_file_add(&b, "LITELLM_MASTER_KEY", "sk-a b=c'\"", &err), 0);
	ck_assert_int_eq(proxy_env_file_add(&b, "_X1", "", &err), 0);
	/* docker takes a value up to the end of its line: a line break would cut it. */
	ck_assert_int_lt(proxy_env_file_add(&b, "K", "a\nEVIL=1", &err), 0);
	sb_error_release(&err);
	ck_assert_int_lt(proxy_env_file_add(&b, "K", "a\r", &err), 0);
	sb_error_release(&err);
	ck_assert_int_lt(proxy_env_file_add(&b, "1K", "a", &err), 0);
	sb_error_release(&err);
	ck_assert_int_lt(proxy_env_file_add(&b, "K=V", "a", &err), 0);
	sb_error_release(&err);
	ck_assert_int_lt(proxy_env_file_add(&b, "", "a", &err), 0);
	sb_error_release(&err);
	ck_assert_str_eq(b.s, "LITELLM_MASTER_KEY=sk-a b=c'\"\n_X1=\n");
}
END_TEST

START_TEST(test_container_parse)
{
	static const char ours[] =
	    "[{\"Name\": \"/ssebench-proxy\", \"RestartCount\": 2,"
	    " \"State\": {\"Status\": \"running\", \"Running\": true, \"Restarting\": false,"
	    "  \"ExitCode\": 0},"
	    " \"Config\": {\"Image\": \"ghcr.io/berriai/litellm:main-stable\","
	    "  \"Labels\": {\"ssebench.proxy\": \"1\", \"ssebench.proxy.config\": \"abc\"}},"
	    " \"HostConfig\": {\"PortBindings\": {\"4000/tcp\": [{\"HostIp\": \"127.0.0.1\","
	    "  \"HostPort\": \"4123\"}]}}}]";
	static const char stranger[] =
	    "[{\"Name\": \"/litellm\", \"State\": {\"Status\": \"exited\", \"Running\": false,"
	    " \"ExitCode\": 3}, \"Config\": {\"Image\": \"x\", \"Labels\": {\"ssebench.proxy\": \"0\"}},"
	    " \"HostConfig\": {\"PortBindings\": {}}}]";
	struct proxy_container pc = { 0 };
	struct sb_error *err = NULL;

	ck_assert_int_eq(proxy_container_parse(ours, strlen(ours), &pc, &err), 0);
	ck_assert_str_eq(pc.name, "ssebench-proxy");
	ck_assert(pc.running && pc.ours && !pc.restarting);
	ck_assert_uint_eq(pc.restarts, 2);
	ck_assert_str_eq(pc.state, "running");
	ck_assert_str_eq(pc.image, "ghcr.io/berriai/litellm:main-stable");
	ck_assert_str_eq(pc.config_digest, "abc");
	ck_assert_str_eq(pc.host_ip, "127.0.0.1");
	ck_assert_uint_eq(pc.port, 4123);
	proxy_container_release(&pc);

	/* A label other than "1" is not ours; no binding is port 0. */
	ck_assert_int_eq(proxy_container_parse(stranger, strlen(stranger), &pc, &err), 0);
	ck_assert(!pc.running && !pc.ours);
	ck_assert_int_eq(pc.exit_code, 3);
	ck_assert_ptr_null(pc.config_digest);
	ck_assert_uint_eq(pc.port, 0);
	proxy_container_release(&pc);

	ck_assert_int_lt(proxy_container_parse("[]", 2, &pc, &err), 0);
	sb_error_release(&err);
	ck_assert_int_lt(proxy_container_parse("[{\"Name\": 1}]", 13, &pc, &err), 0);
	sb_error_release(&err);
	ck_assert_int_lt(proxy_container_parse("not json", 8, &pc, &err), 0);
	sb_error_release(&err);
}
END_TEST

START_TEST(test_redact)
{
	_cleanup_argv_ struct sb_argv secrets = SB_ARGV_INIT;
	_cleanup_free_ char *a = NULL, *b = NULL;

	sb_argv_push(&secrets, "sk-master-1234");
	sb_argv_push(&secrets, "sk-master-1234567"); /* the longer wins where both start */
	sb_argv_push(&secrets, "abc");		     /* too short to hide: words would go */
	a = proxy_redact("key sk-master-1234567 and sk-master-1234, abc", &secrets);
	ck_assert_str_eq(a, "key [redacted] and [redacted], abc");
	b = proxy_redact("", &secrets);
	ck_assert_str_eq(b, "");
}
END_TEST

START_TEST(test_model_ids)
{
	_cleanup_argv_ struct sb_argv ids = SB_ARGV_INIT;
	json_t *reply = json_pack("{s:[{s:s}, {s:i}, {s:s}, s]}", "data", "id", "m1", "id", 3, "id",
	    "m2", "junk");

	proxy_model_ids(reply, &ids);
	ck_assert_uint_eq(ids.n, 2);
	ck_assert_str_eq(ids.v[0], "m1");
	ck_assert_str_eq(ids.v[1], "m2");
	json_decref(reply);
	reply = json_pack("{s:s}", "data", "not a list");
	proxy_model_ids(reply, &ids);
	ck_assert_uint_eq(ids.n, 2);
	json_decref(reply);
}
END_TEST

static Suite *
proxy_suite(void)
{
	Suite *s = suite_create("proxy");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_ynode_json_typed, 0, (int)SB_ARRAY_SIZE(typed_cases));
	tcase_add_test(tc, test_env_refs);
	tcase_add_test(tc, test_litellm_config);
	tcase_add_test(tc, test_env_file_add);
	tcase_add_test(tc, test_container_parse);
	tcase_add_test(tc, test_redact);
	tcase_add_test(tc, test_model_ids);
	suite_add_tcase(s, tc);
	return s;
}

SB_UNIT_MAIN(proxy_suite)
