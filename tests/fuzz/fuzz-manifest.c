/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz-manifest.c: the CLI's readers of the files a user, a dataset's author or an agent's
 * author hands it, other than a task's config.yaml (fuzz-config): a models file
 * (src/ssebench/models.c:models_load), an agent.yaml (agents.c:agent_load), a dataset.yaml
 * (libsb/taskdir.c:sb_dataset_load) and a .env (settings.c:cli_dotenv_parse).
 *
 * Layout of an input: byte 0 picks the file (modulo 4: models, agent, dataset, .env); the
 * rest is its text. Each is written where its reader looks, in a directory of the target's
 * own, and read as the CLI reads it.
 *
 * Checked beyond memory safety: every model loaded has a name and a '<provider>/<model>'
 * target; a loaded agent is named as asked and its version has no blank, '/' or ':'; every
 * .env name is set once and holds no '='.
 */
#include "config.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sb/argv.h"
#include "sb/diag.h"
#include "sb/mem.h"
#include "sb/taskdir.h"
#include "sb/tree.h"

#include "../../src/ssebench/agents.h"
#include "../../src/ssebench/cli.h"
#include "../../src/ssebench/images.h"
#include "../../src/ssebench/models.h"
#include "fuzz.h"

static char root[] = "/tmp/sb-fuzz-manifest.XXXXXX";

/* What agents.c and models.c take from the rest of the CLI. */
const char *
cli_home(void)
{
	return root;
}

void
progress(const char *fmt, ...)
{
	(void)fmt;
}

double
progress_clock(void)
{
	return 0;
}

static void
remove_root(void)
{
	(void)sb_remove_tree_at(AT_FDCWD, root, NULL);
}

static void
put(const char *rel, const uint8_t *data, size_t n)
{
	_cleanup_free_ char *p = sb_xasprintf("%s/%s", root, rel);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0 || write(fd, data, n) != (ssize_t)n)
		abort();
	close(fd);
}

static void
fuzz_models(const uint8_t *data, size_t n)
{
	_cleanup_free_ char *dir = sb_xasprintf("%s/models", root);
	struct sb_diags diags = SB_DIAGS_INIT;
	struct models m;

	put("models/fuzz.yaml", data, n);
	if (models_load(dir, &m, &diags, NULL) == 0) {
		for (size_t i = 0; i < m.n; i++)
			if (m.v[i].name == NULL || m.v[i].target == NULL ||
			    strchr(m.v[i].target, '/') == NULL)
				abort();
		free(models_closest(&m, "gpt-5"));
	}
	models_release(&m);
	sb_diags_release(&diags);
}

static void
fuzz_agent(const uint8_t *data, size_t n)
{
	struct agent_info a;

	put("agents/fuzz/agent.yaml", data, n);
	if (agent_load(root, "fuzz", &a, NULL) == 0) {
		if (strcmp(a.name, "fuzz") != 0 || strpbrk(a.version, " \t/:") != NULL)
			abort();
		agent_info_release(&a);
	}
}

static void
fuzz_dataset(const uint8_t *data, size_t n)
{
	_cleanup_free_ char *dir = sb_xasprintf("%s/dataset", root);
	struct sb_diags diags = SB_DIAGS_INIT;
	struct sb_dataset *d = NULL;

	put("dataset/dataset.yaml", data, n);
	if (sb_dataset_load(dir, &d, &diags, NULL) == 0)
		sb_dataset_free(d);
	sb_diags_release(&diags);
}

static void
fuzz_dotenv(const uint8_t *data, size_t n)
{
	struct sb_argv env = SB_ARGV_INIT;
	struct sb_diags diags = SB_DIAGS_INIT;
	char *text = sb_xmalloc(n + 1);

	memcpy(text, data, n);
	text[n] = '\0';
	cli_dotenv_parse(text, &env, &diags);
	for (size_t i = 0; i < diags.n; i++)
		if (diags.v[i].line == 0 || diags.v[i].line > n + 1)
			abort();
	for (size_t i = 0; i < env.n; i++) {
		const char *eq = strchr(env.v[i], '=');

		if (eq == NULL)
			abort();
		for (size_t j = i + 1; j < env.n; j++)
			if (strncmp(env.v[i], env.v[j], (size_t)(eq - env.v[i]) + 1) == 0)
				abort();
	}
	sb_argv_release(&env);
	sb_diags_release(&diags);
	free(text);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool init;

	if (!init) {
		_cleanup_free_ char *models = NULL, *agents = NULL, *agent = NULL, *ds = NULL,
				    *task = NULL;

		if (mkdtemp(root) == NULL)
			abort();
		atexit(remove_root);
		models = sb_xasprintf("%s/models", root);
		agents = sb_xasprintf("%s/agents", root);
		agent = sb_xasprintf("%s/agents/fuzz", root);
		ds = sb_xasprintf("%s/dataset", root);
		task = sb_xasprintf("%s/dataset/.hidden", root);
		if (mkdir(models, 0755) < 0 || mkdir(agents, 0755) < 0 || mkdir(agent, 0755) < 0 ||
		    mkdir(ds, 0755) < 0 || mkdir(task, 0755) < 0)
			abort();
		put("agents/fuzz/Dockerfile", (const uint8_t *)"FROM scratch\n", 13);
		init = true;
	}
	if (size < 1)
		return 0;
	switch (data[0] % 4) {
	case 0: fuzz_models(data + 1, size - 1); break;
	case 1: fuzz_agent(data + 1, size - 1); break;
	case 2: fuzz_dataset(data + 1, size - 1); break;
	default: fuzz_dotenv(data + 1, size - 1); break;
	}
	return 0;
}
