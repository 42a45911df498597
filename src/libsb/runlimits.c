/* SPDX-License-Identifier: Apache-2.0 */
/* runlimits.c: the run container's resource limits, resolved fail-closed (see runlimits.h). */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sb/common.h"
#include "sb/mem.h"
#include "sb/parse.h"
#include "sb/runlimits.h"

#define MIB (1024.0 * 1024.0)

/*
 * The floors are what a run needs to start at all (the daemon, a compiler, a test runner):
 * a value below one would not be "tighter", it would be a run that cannot grade. The
 * ceilings keep a typo (a missing suffix, an extra digit) from meaning "the whole machine".
 */
static const struct sb_run_limit_spec specs[SB_RUN_LIMIT_COUNT] = {
	[SB_RUN_LIMIT_MEMORY] = { "SSEBENCH_MEMORY", "--memory", SB_RUN_MEMORY_DEFAULT,
		64 * MIB, 1024.0 * 1024 * MIB, "bytes",
		"memory of the run container (agent, daemon, builds and grading together); "
		"suffixes k, m, g, t (powers of 1024)" },
	[SB_RUN_LIMIT_CPUS] = { "SSEBENCH_CPUS", "--cpus", SB_RUN_CPUS_DEFAULT, 0.01, 1024, "CPUs",
		"CPU time of the run container, in CPUs (decimals allowed); never more than the "
		"machine has online" },
	[SB_RUN_LIMIT_PIDS] = { "SSEBENCH_PIDS", "--pids-limit", SB_RUN_PIDS_DEFAULT, 64, 4194304,
		"processes", "processes and threads in the run container (a fork bomb stops here)" },
	[SB_RUN_LIMIT_DISK] = { "SSEBENCH_DISK", "", SB_RUN_DISK_DEFAULT, 256 * MIB,
		16.0 * 1024 * 1024 * MIB, "bytes",
		"each of the run's two file systems: the agent's (its tree and home, /tmp, "
		"/var/tmp, the archive) and the harness's (the runner's area, the daemon's "
		"state); 5% of each is root's; the host must have room for both; suffixes k, m, "
		"g, t (powers of 1024)" },
};

const struct sb_run_limit_spec *
sb_run_limit_spec(enum sb_run_limit which)
{
	return (unsigned)which < SB_RUN_LIMIT_COUNT ? &specs[which] : NULL;
}

/* Memory: a number with an optional b/k/m/g/t suffix, in bytes; -1 when rejected. */
static double
memory_bytes(const char *v)
{
	static const char suffixes[] = "bkmgt";
	size_t n = strlen(v);
	double mult = 1, d;
	const char *s;

	if (n == 0)
		return -1;
	s = strchr(suffixes, v[n - 1] | 0x20);
	if (n > 1 && s != NULL) {
		for (const char *q = suffixes; q < s; q++)
			mult *= 1024.0;
		n--;
	}
	{
		_cleanup_free_ char *num = sb_xstrndup(v, n);

		if (sb_parse_double(num, 0, 1e18, &d, NULL) < 0)
			return -1;
	}
	return d * mult;
}

static char *
canonical(enum sb_run_limit which, const char *v)
{
	const struct sb_run_limit_spec *sp = &specs[which];
	double d;

	if (v == NULL)
		return NULL;
	switch (which) {
	case SB_RUN_LIMIT_MEMORY:
	case SB_RUN_LIMIT_DISK:
		d = memory_bytes(v);
		if (!isfinite(d) || d < sp->min || d > sp->max)
			return NULL;
		return sb_xasprintf("%.0f", floor(d));
	case SB_RUN_LIMIT_CPUS: {
		char buf[32];
		char *end;

		if (sb_parse_double(v, sp->min, sp->max, &d, NULL) < 0)
			return NULL;
		/* Docker takes at most two decimals' worth (nano-CPUs); trim the zeros. */
		snprintf(buf, sizeof(buf), "%.2f", d);
		end = buf + strlen(buf);
		while (end[-1] == '0')
			*--end = '\0';
		if (end[-1] == '.')
			end[-1] = '\0';
		if (strcmp(buf, "0") == 0)
			return NULL;
		return sb_xstrdup(buf);
	}
	case SB_RUN_LIMIT_PIDS: {
		uint64_t n;

		if (sb_parse_u64(v, (uint64_t)sp->min, (uint64_t)sp->max, &n, NULL) < 0)
			return NULL;
		return sb_xasprintf("%llu", (unsigned long long)n);
	}
	case SB_RUN_LIMIT_COUNT:
		break;
	}
	return NULL;
}

char *
sb_run_limit_resolve(enum sb_run_limit which, const char *value, bool *ret_fell_back)
{
	char *c;

	if ((unsigned)which >= SB_RUN_LIMIT_COUNT)
		abort();
	c = canonical(which, value);
	if (ret_fell_back != NULL)
		*ret_fell_back = c == NULL;
	if (c != NULL)
		return c;
	c = canonical(which, specs[which].def);
	if (c == NULL) /* a broken default is a bug in the table above, not a user error */
		abort();
	return c;
}
