/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz.h: the libFuzzer entry point every target defines, and what the targets share. */
#ifndef SB_TESTS_FUZZ_H
#define SB_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * Split the n bytes at data into at most max fields separated by NUL bytes (the last one
 * takes the rest, NULs included): *ret_copy is a NUL-terminated copy that field[] points
 * into (free it), len[] each field's length. Returns how many fields there were (at least
 * one, maybe empty). In fuzz.c.
 */
size_t fuzz_fields(const uint8_t *data, size_t n, char **ret_copy, const char **field, size_t *len,
    size_t max);

#endif
