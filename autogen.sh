#!/bin/sh
# autogen.sh: generate ./configure from configure.ac (needs autoconf, automake, pkg-config).
set -eu
cd "$(dirname "$0")"
autoreconf --install --force --warnings=all
