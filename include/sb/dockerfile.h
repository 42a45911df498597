/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dockerfile.h: enough of a Dockerfile parser to check a task's Dockerfile statically
 * (docs/upstream.md, "Dataset validation"): instructions with their line, FROM/ARG/ENV/WORKDIR
 * values, and COPY/ADD sources and destinations, with variable substitution.
 *
 * It follows the syntax the Docker 20.10 engine here accepts: parser directives
 * (# escape=, # syntax=), line continuations with the escape character, comment lines
 * (also inside a continued instruction), the JSON ("exec") form of COPY/ADD.
 */
#ifndef SB_DOCKERFILE_H
#define SB_DOCKERFILE_H

#include "sb/argv.h"
#include "sb/common.h"
#include "sb/diag.h"

struct sb_dockerfile_insn {
	char *cmd;	  /* instruction, upper case: "FROM", "COPY", ... */
	char *args;	  /* the rest of the logical line, continuations joined */
	unsigned line;	  /* where the instruction starts */
	/* COPY and ADD: --flags, then the words (sources..., destination). */
	struct sb_argv flags;
	struct sb_argv words;
	bool json_form;
};

struct sb_dockerfile {
	struct sb_dockerfile_insn *v;
	size_t n;
	char escape;
	bool has_syntax_directive;
	unsigned syntax_line;
};

/*
 * Parse. Problems (unknown instruction, malformed COPY, ...) go to diags under `file`;
 * the instructions that could be read are returned anyway. NULL only if nothing could be
 * read at all (a diag says why).
 */
struct sb_dockerfile *sb_dockerfile_parse(const char *data, size_t len, const char *file,
    struct sb_diags *diags);

void sb_dockerfile_free(struct sb_dockerfile *df);
static inline void
sb_dockerfile_freep(struct sb_dockerfile **df)
{
	sb_dockerfile_free(*df);
}
#define _cleanup_dockerfile_ _cleanup_(sb_dockerfile_freep)

/*
 * Substitute $NAME, ${NAME}, ${NAME:-word} and ${NAME:+word} from vars (an envp-style
 * NAME=value vector); an unknown name expands to "" (as Docker does) and sets
 * *ret_unknown. escape-quoted dollars stay literal.
 */
char *sb_dockerfile_expand(const char *s, const struct sb_argv *vars, char escape,
    bool *ret_unknown);

#endif
