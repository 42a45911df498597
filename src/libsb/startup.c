/* SPDX-License-Identifier: Apache-2.0 */
/* startup.c: the server programs' shared command line (sb/startup.h). */
#include "config.h"

#include <string.h>

#include "sb/exit.h"
#include "sb/startup.h"

int
sb_startup_options(int argc, char **argv, const char *name, void (*usage)(FILE *out),
    const char *own, unsigned flags)
{
	const char *a = argc > 1 ? argv[1] : NULL;

	if (a == NULL)
		return -1;
	if (strcmp(a, "--version") == 0 ||
	    ((flags & SB_STARTUP_OPTIONS_SHORT_VERSION) && strcmp(a, "-V") == 0)) {
		printf("%s %s\n", name, PACKAGE_VERSION);
		return SB_EXIT_OK;
	}
	if (strcmp(a, "--help") == 0 ||
	    ((flags & SB_STARTUP_OPTIONS_SHORT_HELP) && strcmp(a, "-h") == 0)) {
		usage(stdout);
		return SB_EXIT_OK;
	}
	if (argc > 2 || own == NULL || strcmp(a, own) != 0) {
		usage(stderr);
		return SB_EXIT_USAGE;
	}
	return -1;
}
