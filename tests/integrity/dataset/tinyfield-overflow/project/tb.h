/* tinyfield: split comma-separated records (a test project for SSEBench's integrity suite). */
#ifndef TB_H
#define TB_H
#include <stddef.h>

/* Copy the first field of rec (up to the first ',' or the end) into dst, which holds dstlen
 * bytes, always NUL-terminated; a longer field is cut. Returns the length copied. */
size_t tb_field(char *dst, size_t dstlen, const char *rec);

/* Number of fields in rec (an empty record has one empty field). */
size_t tb_count(const char *rec);
#endif
