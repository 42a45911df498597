#!/bin/bash
# The project's tests (every tests/test_*.c), built with AddressSanitizer.
set -u
echo "tinyfield: test.sh"
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
make -j2 check
