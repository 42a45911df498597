/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz.h: the libFuzzer entry point every target defines. */
#ifndef SB_TESTS_FUZZ_H
#define SB_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sb/mem.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * Split the n bytes at data into at most max fields separated by NUL bytes (the last one
 * takes the rest, NULs included): *ret_copy is a NUL-terminated copy that field[] points
 * into (free it), len[] each field's length. Returns how many fields there were (at least
 * one, maybe empty).
 */
static inline size_t
fuzz_fields(const uint8_t *data, size_t n, char **ret_copy, const char **field, size_t *len,
    size_t max)
{
	char *copy = sb_xmalloc(n + 1);
	size_t k = 0;

	memcpy(copy, data, n);
	copy[n] = '\0';
	for (const char *p = copy, *end = copy + n; k < max;) {
		size_t l = k + 1 == max ? (size_t)(end - p) : strnlen(p, (size_t)(end - p));

		field[k] = p;
		len[k++] = l;
		if (p + l >= end)
			break;
		p += l + 1;
	}
	*ret_copy = copy;
	return k;
}

#endif
