#!/usr/bin/env bash
# The hash of the sources docs/playground/pkg/ is built from (the binding, the crates it builds
# on, the workspace's manifests and lock file):
# build.sh stores it in pkg/SOURCES, and test.sh warns when the sources have moved on since.
set -euo pipefail
cd "$(dirname "$0")/.."
git ls-files -z playground/src playground/Cargo.toml src crates Cargo.toml Cargo.lock | sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1
