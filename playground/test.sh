#!/usr/bin/env bash
# The playground's browser test. Serves docs/ on 127.0.0.1, opens the page in headless Chromium
# with a run preset in its URL, lets it train to the end in its worker, and checks the state the
# page reports (playground/check.py): AT5 on lag-4 (L = 16) reaches > 90 % dev accuracy with a
# prior peaking at -4; T5 on lag-8 (L = 24), where offsets -8 and -9 share a bucket, learns a
# plateau over that bucket; and each run's first-epoch training loss equals the native `train`
# binary's for the same flags to 1e-4. It tests the committed docs/playground/pkg/ (what a static
# host serves); playground/build.sh rebuilds it. Each run leaves a screenshot in
# target/playground-test/; `--screenshot FILE` also copies the AT5 one to FILE (the README's).
# Needs chromium (or $CHROMIUM) and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
keep=""
if [ "${1:-}" = "--screenshot" ]; then keep=$2; fi
browser=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
[ -n "$browser" ] || { echo "playground test: no chromium (apt-get install chromium)" >&2; exit 1; }
[ -f docs/playground/pkg/at5_bg.wasm ] ||
    { echo "docs/playground/pkg/ is missing: run playground/build.sh" >&2; exit 1; }
if [ "$(cat docs/playground/pkg/SOURCES 2>/dev/null)" != "$(playground/sources-hash.sh)" ]; then
    echo "note: docs/playground/pkg/ was built from other sources than these (src/, Cargo.toml," \
        "Cargo.lock); playground/build.sh rebuilds it" >&2
fi
cargo build --release --bin train
out=target/playground-test
rm -rf "$out" && mkdir -p "$out"
python3 playground/serve.py docs "$out" "$out/port" &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
for _ in $(seq 100); do [ -s "$out/port" ] && break; sleep 0.1; done
port=$(cat "$out/port")

# run NAME QUERY: trains the page's run QUERY to its end, then native `train` with the page's
# own flags, then checks.
run() {
    local name=$1 query=$2 start=$SECONDS
    local url="http://127.0.0.1:$port/playground/index.html?$query&train=1"
    url+="&report=/report/$name&hold=/wait/$name"
    echo "== $name: $url"
    if ! timeout 900 "$browser" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
        --hide-scrollbars --window-size=1340,1060 --screenshot="$out/$name.png" "$url" >"$out/$name.log" 2>&1 ||
        [ ! -s "$out/$name.json" ]; then
        echo "the page did not report ($out/$name.log):" >&2
        tail -20 "$out/$name.log" >&2
        return 1
    fi
    echo "   the page trained and reported in $((SECONDS - start)) s"
    # (set -e does not reach inside a function called with ||: each step says if it failed.)
    local flags
    flags=$(python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))
sys.exit("the page failed: " + s["error"]) if "error" in s else print(s["info"]["command"].split(" -- ", 1)[1])' \
        "$out/$name.json") || return 1
    # shellcheck disable=SC2086 # the page's flags, split as a shell would
    cargo run --release --quiet --bin train -- $flags --quiet --threads 1 \
        --out "$out/native-$name" >/dev/null || { echo "native train failed" >&2; return 1; }
    python3 playground/check.py "$name" "$out/$name.json" "$out/native-$name/record.json"
}

status=0 passed=0 failed=0
for scenario in \
    "at5-lagk task=lagk&len=16&lag=4&bias=at5&heads=4&lr=0.005&epochs=20&seed=1" \
    "t5-lagk task=lagk&len=24&lag=8&bias=t5&heads=4&lr=0.005&epochs=15&seed=1" \
    "at5-alive-lagk task=lagk&len=16&lag=4&bias=at5&init=alive&heads=4&lr=0.005&epochs=3&seed=2" \
    "t5-adding task=adding&T=20&bias=t5&heads=4&lr=0.003&epochs=2&seed=1"; do
    if run ${scenario%% *} "${scenario#* }"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1)) status=1
    fi
done
if [ -n "$keep" ] && [ -s "$out/at5-lagk.png" ]; then cp "$out/at5-lagk.png" "$keep"; fi
# One closing line in the form test runners print, counting the browser scenarios.
echo "playground: $passed passed, $failed failed"
exit "$status"
