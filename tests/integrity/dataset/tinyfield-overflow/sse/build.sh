#!/bin/bash
# Build tinyfield (libtb.a and the PoC driver tbpoc) with AddressSanitizer.
set -eu
echo "tinyfield: build.sh in $PWD"
make -j2 all
