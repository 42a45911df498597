/* SPDX-License-Identifier: Apache-2.0 */
/* test-sha256.c: FIPS 180-4 test vectors, and block boundaries against one-shot hashing. */
#include "config.h"

#include <string.h>

#include "sb/sha256.h"

#include "unit.h"

static const struct {
	const char *in;
	const char *hex;
} vectors[] = {
	{ "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
	{ "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
	{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
	    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
	{ "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnop"
	  "qrlmnopqrsmnopqrstnopqrstu",
	    "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1" },
};

START_TEST(test_vectors)
{
	char hex[65];

	sb_sha256_hex(vectors[_i].in, strlen(vectors[_i].in), hex);
	ck_assert_str_eq(hex, vectors[_i].hex);
}
END_TEST

START_TEST(test_million_a)
{
	static char a[1000];
	struct sb_sha256 s;
	unsigned char d[32];
	char hex[65];

	memset(a, 'a', sizeof(a));
	sb_sha256_init(&s);
	for (int i = 0; i < 1000; i++)
		sb_sha256_update(&s, a, sizeof(a));
	sb_sha256_final(&s, d);
	sb_sha256_to_hex(d, hex);
	ck_assert_str_eq(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}
END_TEST

START_TEST(test_split_updates)
{
	/* Every length around the 55/56/64-byte padding boundaries, fed in odd pieces. */
	unsigned char data[200];
	char one[65], pieces[65];

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (unsigned char)(i * 7 + 3);
	for (size_t len = 0; len <= sizeof(data); len++) {
		struct sb_sha256 s;
		unsigned char d[32];

		sb_sha256_hex(data, len, one);
		sb_sha256_init(&s);
		for (size_t off = 0; off < len; off += 13)
			sb_sha256_update(&s, data + off, len - off < 13 ? len - off : 13);
		sb_sha256_final(&s, d);
		sb_sha256_to_hex(d, pieces);
		ck_assert_msg(strcmp(one, pieces) == 0, "length %zu", len);
	}
}
END_TEST

static Suite *
sha256_suite(void)
{
	Suite *s = suite_create("sha256");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_vectors, 0, (int)SB_ARRAY_SIZE(vectors));
	tcase_add_test(tc, test_million_a);
	tcase_add_test(tc, test_split_updates);
	suite_add_tcase(s, tc);
	return s;
}

SB_UNIT_MAIN(sha256_suite)
