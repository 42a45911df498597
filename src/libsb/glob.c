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

/* One pattern component against one path component. */
static bool
match_part(struct span p, struct span s)
{
	size_t pi = 0, si = 0, star_p = (size_t)-1, star_s = 0;

	while (si < s.n) {
		if (pi < p.n && p.s[pi] == '*') {
			star_p = ++pi;
			star_s = si;
			continue;
		}
		if (pi < p.n) {
			bool hit = false;
			size_t len = 1;

			if (p.s[pi] == '?')
				hit = true;
			else if (p.s[pi] == '[' && (len = match_set(p.s + pi, p.n - pi, (unsigned char)s.s[si], &hit)) > 0)
				;
			else
				hit = p.s[pi] == s.s[si], len = 1;
			if (hit) {
				pi += len;
				si++;
				continue;
			}
		}
		if (star_p == (size_t)-1)
			return false;
		pi = star_p;
		si = ++star_s;
	}
	while (pi < p.n && p.s[pi] == '*')
		pi++;
	return pi == p.n;
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
	size_t np, ns, pi = 0, si = 0, star_p = (size_t)-1, star_s = 0;
	size_t plen = strlen(pattern);

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
	while (si < ns) {
		if (pi < np && is_globstar(p[pi])) {
			star_p = ++pi;
			star_s = si;
			continue;
		}
		if (pi < np && match_part(p[pi], s[si])) {
			pi++;
			si++;
			continue;
		}
		if (star_p == (size_t)-1)
			return false;
		pi = star_p;
		si = ++star_s;
	}
	while (pi < np && is_globstar(p[pi]))
		pi++;
	return pi == np;
}
