/* SPDX-License-Identifier: Apache-2.0 */
/*
 * models.h: the models a run may use: models/<name>.yaml, in LiteLLM's model-list format
 * (docs/upstream.md, "Models and the proxy"), read strictly.
 *
 * Each file is a YAML list of entries:
 *   - model_name: claude-sonnet-4-6          # what --model takes
 *     litellm_params:
 *       model: anthropic/claude-sonnet-4-6   # <provider>/<model id>, required
 *       api_key: os.environ/ANTHROPIC_API_KEY
 *       ...                                  # any other LiteLLM parameter
 *     model_info: {input_cost_per_token: 3e-06, output_cost_per_token: 1.5e-05}
 * Unlike upstream, a malformed file is an error (docs/upstream.md, "Known weaknesses and our
 * answers", 18), not silently skipped, and so is a key written into a file: api_key must
 * name an environment variable, so that provider keys live in the proxy's environment only,
 * never in a file we copy around.
 */
#ifndef SSEBENCH_MODELS_H
#define SSEBENCH_MODELS_H

#include "sb/diag.h"
#include "sb/error.h"

struct model {
	char *name;    /* model_name */
	char *target;  /* litellm_params.model */
	char *key_env; /* NAME of api_key: os.environ/NAME, or NULL */
	char *file;    /* where it is defined */
	unsigned line;
};

struct models {
	char *dir;
	struct model *v;
	size_t n;
};

/* A model name is a path component of the results layout: [A-Za-z0-9._-], no leading dot. */
bool model_name_valid(const char *name);

/* The models directory: ./models when it is a directory (ssebench init), else the home's. */
char *models_dir(void);

/*
 * Read every *.yaml and *.yml of dir (sorted). Every problem goes to diags as
 * file:line:col; err is only for a directory that cannot be read. ret is filled either way
 * (with the entries that were valid).
 */
int models_load(const char *dir, struct models *ret, struct sb_diags *diags, struct sb_error **err);

const struct model *models_find(const struct models *m, const char *name);

/* "a, b or c": up to three names closest to name (malloc'd), or NULL if there are none. */
char *models_closest(const struct models *m, const char *name);

void models_release(struct models *m);

#endif
