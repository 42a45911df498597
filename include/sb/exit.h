/* SPDX-License-Identifier: Apache-2.0 */
/*
 * exit.h: every exit status ssebench's programs use (docs/design.md, "Exit statuses").
 *
 * Where the upstream contract fixes a number it wins (CLI user error 1, interrupted 130,
 * daemon bad difficulty 2, runs not found 3 / ambiguous 4); the rest are the numbers
 * `docker run`, timeout(1) and shells already use.
 */
#ifndef SB_EXIT_H
#define SB_EXIT_H

enum sb_exit {
	SB_EXIT_OK = 0,
	SB_EXIT_FAILURE = 1,	    /* user error, or a check that failed (validate) */
	SB_EXIT_USAGE = 2,	    /* bad command line or configuration */
	SB_EXIT_RUN_NOT_FOUND = 3,  /* `runs`: no such run id */
	SB_EXIT_RUN_AMBIGUOUS = 4,  /* `runs`: the id names several runs */
	SB_EXIT_TIMEOUT = 124,	    /* a time limit killed the command */
	SB_EXIT_HARNESS = 125,	    /* the harness itself failed */
	SB_EXIT_CANNOT_EXEC = 126,  /* found but not executable */
	SB_EXIT_NOT_FOUND = 127,    /* program not found */
	SB_EXIT_SIGNAL_BASE = 128,  /* 128 + N: killed by signal N */
	SB_EXIT_INTERRUPTED = 130,  /* SIGINT (128 + 2) */
};

#endif
