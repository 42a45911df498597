/* SPDX-License-Identifier: Apache-2.0 */
/*
 * startup.h: the command line every ssebench server program takes before it reads its
 * environment (the daemon, the MCP server, the evaluator): --version, --help, and at most
 * one argument of its own.
 */
#ifndef SB_STARTUP_H
#define SB_STARTUP_H

#include <stdio.h>

#include "sb/common.h"

enum sb_startup_options_flags {
	SB_STARTUP_OPTIONS_SHORT_VERSION = 1 << 0, /* -V as well as --version */
	SB_STARTUP_OPTIONS_SHORT_HELP = 1 << 1,	   /* -h as well as --help */
};

/*
 * Read argv: --version prints "NAME VERSION" and --help the usage on stdout (exit status
 * SB_EXIT_OK); anything else but one `own` argument (NULL: none) prints the usage on stderr
 * (SB_EXIT_USAGE). Returns the exit status main is to return, or -1 to go on: no argument,
 * or `own` alone (argv[1]).
 */
int sb_startup_options(int argc, char **argv, const char *name, void (*usage)(FILE *out),
    const char *own, unsigned flags);

#endif
