/* SPDX-License-Identifier: Apache-2.0 */
/*
 * glob.c: path patterns (glob.h). Two levels of the same greedy wildcard walk: bytes within a
 * component ('*', '?', '[...]'), components within a path ('**'). Each level remembers only
 * its last star and retries from one position further, which is enough for a star that
 * matches any run (a later star can always take over what an earlier one would have), and
 * keeps the work at most the product of the two lengths.
 */
#include "config.h"

#include <string.h>

#include "sb/glob.h"

struct span {
	const char *s;
	size_t n;
};

/* [set] at p (p[0] == '['), against byte c. Returns the length of the set, or 0 if it is
 * not closed; *hit says whether c is in it. */
static size_t
match_set(const char *p, size_t n, unsigned char c, bool *hit)
{
	size_t i = 1;
	bool neg = false, in = false;

	if (i < n && p[i] == '!') {
		neg = true;
		i++;
	}
	/* A ']' right after '[' or '[!' is a member, as in fnmatch. */
	for (bool first = true; i < n && (first || p[i] != ']'); first = false) {
		unsigned char lo = (unsigned char)p[i], hi = lo;

		if (i + 2 < n && p[i + 1] == '-' && p[i + 2] != ']') {
			hi = (unsigned char)p[i + 2];
			i += 3;
		} else {
			i++;
		}
		if (c >= lo && c <= hi)
			in = true;
	}
	if (i >= n)
		return 0;
	*hit = in != neg;
	return i + 1;
}

/*
 * The greedy wildcard walk both levels share: items 0..np of a pattern against items 0..ns
 * of a subject. is_star(ctx, pi) says whether pattern item pi matches any run of subject
 * items; step(ctx, pi, si) how many pattern items from pi match subject item si (0: none).
 */
struct walk {
	bool (*is_star)(const void *ctx, size_t pi);
	size_t (*step)(const void *ctx, size_t pi, size_t si);
	const void *ctx;
};

static bool
walk_match(const struct walk *w, size_t np, size_t ns)
{
	size_t pi = 0, si = 0, star_p = (size_t)-1, star_s = 0, len;

	while (si < ns) {
		if (pi < np && w->is_star(w->ctx, pi)) {
			star_p = ++pi;
			star_s = si;
			continue;
		}
		if (pi < np && (len = w->step(w->ctx, pi, si)) > 0) {
			pi += len;
			si++;
			continue;
		}
		if (star_p == (size_t)-1)
			return false;
		pi = star_p;
		si = ++star_s;
	}
	while (pi < np && w->is_star(w->ctx, pi))
		pi++;
	return pi == np;
}

/* The byte level: one pattern component against one path component. */
struct part_pair {
	struct span p, s;
};

static bool
byte_is_star(const void *ctx, size_t pi)
{
	const struct part_pair *x = ctx;

	return x->p.s[pi] == '*';
}

static size_t
byte_step(const void *ctx, size_t pi, size_t si)
{
	const struct part_pair *x = ctx;
	bool hit = false;
	size_t len;

	if (x->p.s[pi] == '?')
		return 1;
	/* A '[' that is not closed is an ordinary byte. */
	if (x->p.s[pi] == '[' &&
	    (len = match_set(x->p.s + pi, x->p.n - pi, (unsigned char)x->s.s[si], &hit)) > 0)
		return hit ? len : 0;
	return x->p.s[pi] == x->s.s[si] ? 1 : 0;
}

static bool
match_part(struct span p, struct span s)
{
	struct part_pair x = { p, s };
	struct walk w = { byte_is_star, byte_step, &x };

	return walk_match(&w, p.n, s.n);
}

/* Split at '/' into at most max spans; returns the count, or max + 1 if there are more. */
static size_t
split(const char *s, struct span *out, size_t max)
{
	size_t n = 0;

	while (*s != '\0') {
		const char *e = strchr(s, '/');
		size_t len = e != NULL ? (size_t)(e - s) : strlen(s);

		if (n == max)
			return max + 1;
		out[n].s = s;
		out[n].n = len;
		n++;
		s += len;
		if (*s == '/')
			s++;
	}
	return n;
}

static bool
is_globstar(struct span p)
{
	return p.n == 2 && p.s[0] == '*' && p.s[1] == '*';
}

/* The component level: the components of a pattern against those of a path. */
struct path_pair {
	const struct span *p, *s;
};

static bool
part_is_star(const void *ctx, size_t pi)
{
	const struct path_pair *x = ctx;

	return is_globstar(x->p[pi]);
}

static size_t
part_step(const void *ctx, size_t pi, size_t si)
{
	const struct path_pair *x = ctx;

	return match_part(x->p[pi], x->s[si]) ? 1 : 0;
}

int
sb_glob_check(const char *pattern, struct sb_error **err)
{
	struct span parts[SB_GLOB_PARTS_MAX];
	size_t len = pattern != NULL ? strlen(pattern) : 0, n, stars = 0;

	if (len == 0)
		return sb_error_set(err, EINVAL, "an empty pattern");
	if (len > SB_GLOB_MAX)
		return sb_error_set(err, EINVAL, "a pattern longer than %d bytes", SB_GLOB_MAX);
	if (pattern[0] == '/')
		return sb_error_set(err, EINVAL, "'%s' is absolute (patterns are relative to the tree)",
		    pattern);
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)pattern[i] < 0x20 || pattern[i] == 0x7f)
			return sb_error_set(err, EINVAL, "'%s' holds a control byte", pattern);
	n = split(pattern, parts, SB_GLOB_PARTS_MAX);
	if (n > SB_GLOB_PARTS_MAX)
		return sb_error_set(err, EINVAL, "'%s' has more than %d components", pattern,
		    SB_GLOB_PARTS_MAX);
	for (size_t i = 0; i < n; i++) {
		struct span p = parts[i];

		if (p.n == 0)
			return sb_error_set(err, EINVAL, "'%s' has an empty component", pattern);
		if ((p.n == 1 && p.s[0] == '.') || (p.n == 2 && p.s[0] == '.' && p.s[1] == '.'))
			return sb_error_set(err, EINVAL, "'%s' has a '.' or '..' component", pattern);
		if (is_globstar(p)) {
			stars++;
			continue;
		}
		for (size_t j = 0; j < p.n; j++) {
			bool hit;

			if (p.s[j] == '*')
				stars++;
			if (p.s[j] == '[' && match_set(p.s + j, p.n - j, 0, &hit) == 0)
				return sb_error_set(err, EINVAL, "'%s' has a '[' that is not closed",
				    pattern);
		}
	}
	if (stars > SB_GLOB_STARS_MAX)
		return sb_error_set(err, EINVAL, "'%s' has more than %d stars", pattern,
		    SB_GLOB_STARS_MAX);
	return 0;
}

bool
sb_glob_match(const char *pattern, const char *path)
{
	struct span p[SB_GLOB_PARTS_MAX + 1], s[4096 / 2 + 1];
	size_t np, ns, plen = strlen(pattern);
	struct path_pair x;
	struct walk w = { part_is_star, part_step, &x };

	if (plen == 0 || plen > SB_GLOB_MAX || path[0] == '\0' || path[0] == '/' ||
	    strlen(path) > 4096)
		return false;
	np = split(pattern, p, SB_GLOB_PARTS_MAX);
	if (np > SB_GLOB_PARTS_MAX)
		return false;
	/* "dir/": the directory and everything below it. */
	if (pattern[plen - 1] == '/') {
		p[np].s = "**";
		p[np].n = 2;
		np++;
	}
	ns = split(path, s, SB_ARRAY_SIZE(s) - 1);
	if (ns >= SB_ARRAY_SIZE(s))
		return false;
	x = (struct path_pair){ p, s };
	return walk_match(&w, np, ns);
}
