#include <string.h>

#include "tb.h"

size_t
tb_field(char *dst, size_t dstlen, const char *rec)
{
	size_t n = 0;

	if (dstlen == 0)
		return 0;
	while (rec[n] != '\0' && rec[n] != ',')
		n++;
	if (n > dstlen)
		n = dstlen - 1;
	memcpy(dst, rec, n);
	dst[n] = '\0';
	return n;
}

size_t
tb_count(const char *rec)
{
	size_t n = 1;

	for (; *rec != '\0'; rec++)
		if (*rec == ',')
			n++;
	return n;
}
