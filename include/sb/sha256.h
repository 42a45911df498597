/* SPDX-License-Identifier: Apache-2.0 */
/* sha256.h: SHA-256 (FIPS 180-4), for content digests (task folders, image labels). */
#ifndef SB_SHA256_H
#define SB_SHA256_H

#include <stdint.h>

#include "sb/common.h"
#include "sb/error.h"

struct sb_sha256 {
	uint32_t h[8];
	uint64_t len;	    /* bytes hashed so far */
	unsigned char buf[64];
	size_t nbuf;
};

void sb_sha256_init(struct sb_sha256 *s);
void sb_sha256_update(struct sb_sha256 *s, const void *data, size_t len);
void sb_sha256_final(struct sb_sha256 *s, unsigned char out[32]);
/* Lower-case hex of a whole buffer; out has room for 65 bytes. */
void sb_sha256_hex(const void *data, size_t len, char out[65]);
void sb_sha256_to_hex(const unsigned char digest[32], char out[65]);
/* The hex digest of the regular file rel below dirfd (links inside allowed, not out). */
int sb_sha256_file_at(int dirfd, const char *rel, char out[65], struct sb_error **err);

#endif
