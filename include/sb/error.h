/* SPDX-License-Identifier: Apache-2.0 */
/*
 * error.h: the error contract of libsb (docs/error-handling.md).
 *
 * A function that can fail returns int (< 0 failure, >= 0 success) or a pointer (NULL on
 * failure) and takes `struct sb_error **err` last. On failure it stores an errno-like code
 * and a message in *err; on success *err is untouched. err may be NULL when the caller does
 * not want the details. Messages are built on the way up: sb_error_prefix() puts context in
 * front ("task 'x': config: unknown key 'y'").
 */
#ifndef SB_ERROR_H
#define SB_ERROR_H

#include "sb/common.h"

struct sb_error {
	int code;  /* errno-like: EINVAL, ENOENT, ... (never 0) */
	char *msg; /* owned, never NULL */
};

/*
 * Store a new error in *err (if err is not NULL) and return -1. A code of 0 is stored as
 * EIO. If *err already holds an error, the old one is released: the newest failure wins.
 */
int sb_error_set(struct sb_error **err, int code, const char *fmt, ...) _printf_(3, 4);

/* Like sb_error_set, then appends ": <strerror(code)>" to the message. */
int sb_error_errno(struct sb_error **err, int code, const char *fmt, ...) _printf_(3, 4);

/* Prefix the message in *err with "<context>: " and return -1. No-op if err or *err is NULL. */
int sb_error_prefix(struct sb_error **err, const char *fmt, ...) _printf_(2, 3);

/* The code, or 0 for no error. */
int sb_error_code(const struct sb_error *err);

/* The message, or "" for no error; valid until the error is released. */
const char *sb_error_message(const struct sb_error *err);

/* Free *err and set it to NULL. Safe on NULL and on an empty slot. */
void sb_error_release(struct sb_error **err);

/* Move the error out of *src into the return value; *src becomes NULL. */
struct sb_error *sb_error_take(struct sb_error **src);

#define _cleanup_error_ _cleanup_(sb_error_release)

#endif
