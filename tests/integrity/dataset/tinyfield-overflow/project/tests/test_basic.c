#include <stdio.h>
#include <string.h>

#include "tb.h"

int
main(void)
{
	char buf[16];

	if (tb_field(buf, sizeof(buf), "ab,cd") != 2 || strcmp(buf, "ab") != 0)
		return 1;
	if (tb_field(buf, sizeof(buf), "") != 0 || buf[0] != '\0')
		return 1;
	if (tb_field(buf, 4, "abcdefgh") != 3 || strcmp(buf, "abc") != 0)
		return 1;
	if (tb_count("a,b,c") != 3 || tb_count("") != 1)
		return 1;
	puts("test_basic: ok");
	return 0;
}
