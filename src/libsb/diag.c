/* SPDX-License-Identifier: Apache-2.0 */
/* diag.c: located problem lists. */
#include "config.h"

#include <stdarg.h>
#include <string.h>

#include "sb/buf.h"
#include "sb/diag.h"
#include "sb/mem.h"

void
sb_diags_add(struct sb_diags *d, const char *file, unsigned line, unsigned col,
    const char *fmt, ...)
{
	va_list ap;

	if (d->n == d->cap) {
		d->cap = d->cap ? d->cap * 2 : 16;
		d->v = sb_xreallocarray(d->v, d->cap, sizeof(*d->v));
	}
	va_start(ap, fmt);
	d->v[d->n].msg = sb_xvasprintf(fmt, ap);
	va_end(ap);
	d->v[d->n].file = sb_xstrdup(file);
	d->v[d->n].line = line;
	d->v[d->n].col = line ? (col ? col : 1) : 0;
	d->n++;
}

void
sb_diags_move(struct sb_diags *dst, struct sb_diags *src)
{
	for (size_t i = 0; i < src->n; i++) {
		if (dst->n == dst->cap) {
			dst->cap = dst->cap ? dst->cap * 2 : 16;
			dst->v = sb_xreallocarray(dst->v, dst->cap, sizeof(*dst->v));
		}
		dst->v[dst->n++] = src->v[i];
	}
	free(src->v);
	src->v = NULL;
	src->n = src->cap = 0;
}

static int
diag_cmp(const struct sb_diag *a, const struct sb_diag *b)
{
	int c = strcmp(a->file, b->file);

	if (c != 0)
		return c;
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	if (a->col != b->col)
		return a->col < b->col ? -1 : 1;
	return 0;
}

void
sb_diags_sort(struct sb_diags *d)
{
	/* Insertion sort: stable, and lists are short. */
	for (size_t i = 1; i < d->n; i++) {
		struct sb_diag x = d->v[i];
		size_t j = i;

		while (j > 0 && diag_cmp(&d->v[j - 1], &x) > 0) {
			d->v[j] = d->v[j - 1];
			j--;
		}
		d->v[j] = x;
	}
}

void
sb_diag_print(const struct sb_diag *d, FILE *out)
{
	_cleanup_free_ char *file = sb_escape(d->file);
	_cleanup_free_ char *msg = sb_escape(d->msg);

	if (d->line == 0)
		fprintf(out, "%s: %s\n", file, msg);
	else
		fprintf(out, "%s:%u:%u: %s\n", file, d->line, d->col, msg);
}

void
sb_diags_print(const struct sb_diags *d, FILE *out)
{
	for (size_t i = 0; i < d->n; i++)
		sb_diag_print(&d->v[i], out);
}

void
sb_diags_release(struct sb_diags *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->v[i].file);
		free(d->v[i].msg);
	}
	free(d->v);
	d->v = NULL;
	d->n = d->cap = 0;
}
