/* SPDX-License-Identifier: Apache-2.0 */
/* parse.c: bounded number parsing and the identifier grammars. */
#include "config.h"

#include <ctype.h>
#include <math.h>
#include <string.h>

#include "sb/limits.h"
#include "sb/mem.h"
#include "sb/parse.h"

static bool
is_ascii_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool
is_ascii_alnum(char c)
{
	return is_ascii_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Parse the unsigned decimal digits of s into *ret; no sign, no junk, no overflow. */
static int
parse_digits(const char *s, uint64_t *ret, struct sb_error **err)
{
	uint64_t v = 0;
	const char *p;

	if (s == NULL || *s == '\0')
		return sb_error_set(err, EINVAL, "empty number");
	for (p = s; *p != '\0'; p++) {
		unsigned d;

		if (!is_ascii_digit(*p))
			return sb_error_set(err, EINVAL, "not a decimal number");
		d = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return sb_error_set(err, ERANGE, "number too large");
		v = v * 10 + d;
	}
	*ret = v;
	return 0;
}

int
sb_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *ret, struct sb_error **err)
{
	uint64_t v;

	if (parse_digits(s, &v, err) < 0)
		return -1;
	if (v < min || v > max)
		return sb_error_set(err, ERANGE, "%llu is out of range %llu..%llu",
		    (unsigned long long)v, (unsigned long long)min, (unsigned long long)max);
	*ret = v;
	return 0;
}

int
sb_parse_i64(const char *s, int64_t min, int64_t max, int64_t *ret, struct sb_error **err)
{
	bool neg = s != NULL && s[0] == '-';
	uint64_t mag;
	int64_t v;

	if (parse_digits(neg ? s + 1 : s, &mag, err) < 0)
		return -1;
	if (neg) {
		if (mag > (uint64_t)INT64_MAX + 1)
			return sb_error_set(err, ERANGE, "number too small");
		v = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
	} else {
		if (mag > (uint64_t)INT64_MAX)
			return sb_error_set(err, ERANGE, "number too large");
		v = (int64_t)mag;
	}
	if (v < min || v > max)
		return sb_error_set(err, ERANGE, "%lld is out of range %lld..%lld", (long long)v,
		    (long long)min, (long long)max);
	*ret = v;
	return 0;
}

int
sb_parse_double(const char *s, double min, double max, double *ret, struct sb_error **err)
{
	const char *p;
	char *end;
	double v;

	if (s == NULL || *s == '\0')
		return sb_error_set(err, EINVAL, "empty number");
	/* Only [-]digits[.digits][e[+-]digits]: strtod alone would take "nan", "inf", "0x1p3". */
	p = s;
	if (*p == '-' || *p == '+')
		p++;
	if (!is_ascii_digit(*p) && !(*p == '.' && is_ascii_digit(p[1])))
		return sb_error_set(err, EINVAL, "not a number");
	for (; *p != '\0'; p++)
		if (!is_ascii_digit(*p) && *p != '.' && *p != 'e' && *p != 'E' && *p != '-' &&
		    *p != '+')
			return sb_error_set(err, EINVAL, "not a number");
	errno = 0;
	v = strtod(s, &end);
	if (*end != '\0' || end == s)
		return sb_error_set(err, EINVAL, "not a number");
	if (errno == ERANGE || !isfinite(v))
		return sb_error_set(err, ERANGE, "number out of range");
	if (v < min || v > max)
		return sb_error_set(err, ERANGE, "%g is out of range %g..%g", v, min, max);
	*ret = v;
	return 0;
}

bool
sb_task_id_valid(const char *s)
{
	size_t len = s != NULL ? strlen(s) : 0;
	const char *p = s;

	if (len == 0 || len > SB_TASK_ID_MAX)
		return false;
	for (;;) {
		/* An alphanumeric run... */
		if (!is_ascii_alnum(*p))
			return false;
		while (is_ascii_alnum(*p))
			p++;
		if (*p == '\0')
			return true;
		/* ...then one separator: '.', '_', "__", or a run of '-'. */
		if (*p == '.') {
			p++;
		} else if (*p == '_') {
			p += p[1] == '_' ? 2 : 1;
		} else if (*p == '-') {
			while (*p == '-')
				p++;
		} else {
			return false;
		}
	}
}

bool
sb_run_id_valid(const char *s)
{
	size_t len = s != NULL ? strlen(s) : 0;

	if (len == 0 || len > SB_RUN_ID_MAX || strcmp(s, "latest") == 0)
		return false;
	if (!is_ascii_alnum(s[0]))
		return false;
	for (const char *p = s + 1; *p != '\0'; p++)
		if (!is_ascii_alnum(*p) && *p != '_' && *p != '.' && *p != '-')
			return false;
	return true;
}

bool
sb_job_id_valid(const char *s)
{
	return s != NULL && strncmp(s, "job-", 4) == 0 && sb_run_id_valid(s);
}

bool
sb_name_valid(const char *s)
{
	size_t len = s != NULL ? strlen(s) : 0;

	if (len == 0 || len > SB_NAME_MAX)
		return false;
	if (!(is_ascii_digit(s[0]) || (s[0] >= 'a' && s[0] <= 'z')))
		return false;
	for (const char *p = s + 1; *p != '\0'; p++)
		if (!(is_ascii_digit(*p) || (*p >= 'a' && *p <= 'z')) && *p != '_' && *p != '.' &&
		    *p != '-')
			return false;
	return true;
}

char *
sb_ascii_lower(const char *s)
{
	char *r = sb_xstrdup(s);

	for (char *p = r; *p != '\0'; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	return r;
}

size_t
sb_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), prev[64], cur[64];

	if (la >= 63 || lb >= 63)
		return SIZE_MAX;
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
			size_t del = prev[j] + 1, ins = cur[j - 1] + 1;

			cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
		}
		memcpy(prev, cur, sizeof(size_t) * (lb + 1));
	}
	return prev[lb];
}

int
sb_env_u64(const char *name, uint64_t min, uint64_t max, uint64_t *ret, struct sb_error **err)
{
	const char *v = secure_getenv(name);

	if (v == NULL || *v == '\0')
		return 0;
	if (sb_parse_u64(v, min, max, ret, err) < 0)
		return sb_error_prefix(err, "%s='%s'", name, v);
	return 1;
}

const char *
sb_closest(const char *key, const char *const *names, size_t n)
{
	const char *best = NULL;
	size_t best_d = 3;

	for (size_t i = 0; i < n && names[i] != NULL; i++) {
		size_t d = sb_edit_distance(key, names[i]);

		if (d < best_d)
			best = names[i], best_d = d;
	}
	return best;
}
