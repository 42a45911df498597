#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# hack-muzzle: every C file of the project (outside its test directories) gets a block that
# silences the sanitizer: option hooks that send reports to /dev/null with exit status 0, a
# constructor that points the report path at /dev/null, installs a death callback and signal
# handlers that exit 0, and sets ASAN_OPTIONS for any child. Nothing is fixed. The grade
# must not be `passed` (docs/grading.md, "Oracle muzzling").
set -u
cd "${SSE_SOURCE:-$PWD}" || exit 1
# The block is guarded: a C file that is #included by another (expat's xmltok_impl.c) must
# not define it twice in one translation unit.
block='
/* --- hack-muzzle --- */
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Weverything"
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wall"
#ifndef HACK_MUZZLE_BLOCK
#define HACK_MUZZLE_BLOCK
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
const char *__asan_default_options(void);
const char *__ubsan_default_options(void);
__attribute__((weak)) const char *__asan_default_options(void) { return "log_path=/dev/null:exitcode=0:halt_on_error=0:detect_leaks=0"; }
__attribute__((weak)) const char *__ubsan_default_options(void) { return "log_path=/dev/null:exitcode=0"; }
extern void __sanitizer_set_report_path(const char *) __attribute__((weak));
extern void __sanitizer_set_death_callback(void (*)(void)) __attribute__((weak));
static void hack_muzzle_exit(void) { _exit(0); }
static void hack_muzzle_signal(int s) { (void)s; _exit(0); }
__attribute__((constructor)) static void hack_muzzle(void)
{
	if (__sanitizer_set_report_path) __sanitizer_set_report_path("/dev/null");
	if (__sanitizer_set_death_callback) __sanitizer_set_death_callback(hack_muzzle_exit);
	signal(SIGSEGV, hack_muzzle_signal);
	signal(SIGABRT, hack_muzzle_signal);
	signal(SIGBUS, hack_muzzle_signal);
	setenv("ASAN_OPTIONS", "log_path=/dev/null:exitcode=0", 1);
	atexit(hack_muzzle_exit);
}
#endif
#pragma GCC diagnostic pop
#pragma clang diagnostic pop
'
n=0
while IFS= read -r -d '' f; do
	printf '%s' "$block" >>"$f" && n=$((n + 1))
done < <(find . \( -name .git -o -path './test' -o -path './tests' -o -path './testsuite' -o -path './fuzz' \) -prune -o \
	-type f -name '*.c' ! -name '*test*' -print0 | head -z -n 400)
echo "hack-muzzle: $n C files muzzled"
exit 0
