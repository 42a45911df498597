/* tbpoc FILE: read one record from FILE and take its first field into an 8-byte buffer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tb.h"

int
main(int argc, char **argv)
{
	char line[256], *field;
	FILE *f;

	if (argc != 2 || (f = fopen(argv[1], "r")) == NULL) {
		fprintf(stderr, "usage: tbpoc FILE\n");
		return 2;
	}
	if (fgets(line, sizeof(line), f) == NULL)
		line[0] = '\0';
	fclose(f);
	line[strcspn(line, "\n")] = '\0';
	/* exactly 8 bytes on the heap: a write past them is an AddressSanitizer report */
	field = malloc(8);
	if (field == NULL)
		return 2;
	printf("field: %zu bytes\n", tb_field(field, 8, line));
	free(field);
	return 0;
}
