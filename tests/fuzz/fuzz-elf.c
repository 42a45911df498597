/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz-elf.c: the ELF and ar reader on arbitrary bytes, every reported string touched. */
#include "config.h"

#include <string.h>

#include "sb/elf.h"

#include "fuzz.h"

/* Read every byte of every string, so ASan sees a name that is not inside the input. */
static int
touch(const struct sb_elf_object *obj, void *arg)
{
	size_t *sum = arg;

	if (obj->member != NULL)
		*sum += strlen(obj->member);
	for (size_t i = 0; i < obj->nsymbols; i++) {
		const struct sb_elf_symbol *s = &obj->symbols[i];

		*sum += strlen(s->name) + s->defined + s->dynamic + s->bind + s->type;
	}
	for (size_t i = 0; i < obj->nneeded; i++)
		*sum += strlen(obj->needed[i]);
	*sum += obj->kind + obj->machine + obj->nskipped + obj->truncated;
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sb_error *err = NULL;
	size_t sum = 0;

	(void)sb_elf_sniff(data, size);
	if (sb_elf_scan_buf(data, size, touch, &sum, &err) < 0)
		sb_error_release(&err);
	/* Keep the sum alive so the reads are not optimised away. */
	__asm__ volatile("" : : "r"(sum));
	return 0;
}
