/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz.c: what the fuzz targets share (fuzz.h). */
#include "config.h"

#include <string.h>

#include "sb/mem.h"

#include "fuzz.h"

size_t
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

