#!/usr/bin/env bash
# Builds the browser playground: its binding crate (playground/, a cdylib over the library) for
# wasm32-unknown-unknown, then wasm-bindgen's JS glue, into docs/playground/pkg/ (committed, so
# the page works from any static host with no build step). Needs rustup and cargo; installs the
# wasm32 target and the wasm-bindgen CLI of exactly the version in Cargo.lock if missing.
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(grep -A1 '^name = "wasm-bindgen"$' Cargo.lock | sed -n 's/^version = "\(.*\)"$/\1/p')
[ -n "$version" ] || { echo "no wasm-bindgen in Cargo.lock" >&2; exit 1; }
rustup target list --installed | grep -qx wasm32-unknown-unknown ||
    rustup target add wasm32-unknown-unknown
if [ "$(wasm-bindgen --version 2>/dev/null)" != "wasm-bindgen $version" ]; then
    cargo install wasm-bindgen-cli --version "$version"
fi
# No rustflags: a RUSTFLAGS="-C target-cpu=native" set for native builds means nothing to the
# browser. The library has a portable path for every kernel and runs single-threaded there
# (rayon falls back to the calling thread).
RUSTFLAGS="" cargo build --release -p at5-playground --target wasm32-unknown-unknown
wasm-bindgen --target no-modules --no-typescript --remove-producers-section \
    --out-dir docs/playground/pkg --out-name at5 \
    "${CARGO_TARGET_DIR:-target}/wasm32-unknown-unknown/release/at5_playground.wasm"
playground/sources-hash.sh >docs/playground/pkg/SOURCES
ls -l docs/playground/pkg
