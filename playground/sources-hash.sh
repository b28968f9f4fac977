#!/usr/bin/env bash
# The hash of the sources docs/playground/pkg/ is built from (the library and its lock file):
# build.sh stores it in pkg/SOURCES, and test.sh warns when the sources have moved on since.
set -euo pipefail
cd "$(dirname "$0")/.."
git ls-files -z src Cargo.toml Cargo.lock | sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1
