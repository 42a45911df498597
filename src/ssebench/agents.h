/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agents.h: an agent folder (docs/agents.md, "The contract"; docs/upstream.md, "Agents"):
 * agents/<name>/ with agent.yaml and a Dockerfile that starts FROM ssebench-agent.
 *
 * agent.yaml, strictly:
 *   name: <the folder's name>
 *   version: <image tag>                # optional; default: the SSEBench version
 *   npm:                                # optional: packages the image is built from
 *     - package: "@scope/name"          # an npm registry package
 *       version: 1.2.3
 *       sha256: <64 hex digits>         # of the registry's tarball
 *       arch: amd64                     # optional: only for hosts of this architecture
 *
 * The run container has no internet, so an agent's CLI must be in its image. The CLI
 * downloads each npm package of the host's architecture from the registry when it builds
 * the image (once: they are cached by hash), checks its SHA-256 against the pin, and puts it
 * in the build context as npm/<package>.tgz, for the Dockerfile to ADD.
 */
#ifndef SSEBENCH_AGENTS_H
#define SSEBENCH_AGENTS_H

#include "sb/error.h"

struct agent_npm {
	char *package, *version, *sha256, *arch; /* arch NULL: any */
};

struct agent_info {
	char *name;
	char *version; /* agent.yaml's version, or the SSEBench version */
	char *dir;
	struct agent_npm *npm;
	size_t n_npm;
	bool no_model; /* agent.yaml says "model: none": runs without --model */
};

/* Find agents/<name> (the home's, then $SSEBENCH_AGENTS) and read its agent.yaml. */
/* The agents' names, sorted: every folder of home's agents/ and of $SSEBENCH_AGENTS. */
struct sb_argv;
void agent_names(const char *home, struct sb_argv *out);

int agent_load(const char *home, const char *name, struct agent_info *ret, struct sb_error **err);
void agent_info_release(struct agent_info *a);

/* "amd64", "arm64", ...: the Docker name of this host's architecture. */
const char *agent_host_arch(void);

/*
 * Fetch and check the agent's npm packages for this architecture into the cache (those that
 * are there already are kept). *ret_n (may be NULL) gets how many packages apply.
 */
int agent_fetch(const struct agent_info *ag, size_t *ret_n, struct sb_error **err);

/*
 * The build context of the agent's image: ag->dir itself when it has no npm packages
 * (*ret_tmp false), else a new directory with the folder's files and npm/<package>.tgz for
 * each package of this architecture, fetched and checked (*ret_tmp true: remove it with
 * agent_context_remove). Progress lines say what is downloaded.
 */
int agent_context(const struct agent_info *ag, char **ret_dir, bool *ret_tmp, struct sb_error **err);
void agent_context_remove(const char *dir);

/* Where downloads are kept: $SSEBENCH_CACHE, else $XDG_CACHE_HOME/ssebench, else
 * ~/.cache/ssebench (malloc'd). */
char *agent_cache_dir(void);

#endif
