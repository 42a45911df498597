/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz.h: the libFuzzer entry point every target defines. */
#ifndef SB_TESTS_FUZZ_H
#define SB_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
