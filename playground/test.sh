#!/usr/bin/env bash
# The playground's browser test. Serves docs/ on 127.0.0.1, opens the page in headless Chromium
# and checks what it reports (playground/check.py). Training runs, each preset in the page's URL
# and trained to the end in its worker: AT5 on lag-4 (L = 16) reaches > 90 % dev accuracy with a
# prior peaking at -4; T5 on lag-8 (L = 24), where offsets -8 and -9 share a bucket, learns a
# plateau over that bucket; and each run's first-epoch training loss equals the native `train`
# binary's for the same flags to 1e-4. Scenarios, each driven through the page's controls by
# playground/drive.js in a frame: `refuse` (a huge L, an empty field, letters, a negative number
# are refused in the page's words with the field marked, no run left on screen and no trap),
# `trap` (the wasm module traps mid-run; the page restarts its worker by itself), `midepoch`
# (New run, a changed field and Pause pressed mid-epoch leave each run's epochs 1..n only),
# `more` (Train more and a raised epochs field continue a finished run, whose epochs equal
# native `train --epochs` with the total), `url` (the settings go into the URL and come back
# from it) and `labels` (no text in the plots overlaps another or leaves its plot, at the
# sizes' ends). It tests the committed docs/playground/pkg/ (what a static host serves);
# playground/build.sh rebuilds it. Each run leaves a screenshot in target/playground-test/;
# `--screenshots DIR` also copies the trained AT5 and T5 ones to DIR/playground-at5.png and
# DIR/playground-t5.png (the README's). Needs chromium (or $CHROMIUM) and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
keep=""
if [ "${1:-}" = "--screenshots" ]; then keep=$2; fi
browser=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
[ -n "$browser" ] || { echo "playground test: no chromium (apt-get install chromium)" >&2; exit 1; }
[ -f docs/playground/pkg/at5_bg.wasm ] ||
    { echo "docs/playground/pkg/ is missing: run playground/build.sh" >&2; exit 1; }
if [ "$(cat docs/playground/pkg/SOURCES 2>/dev/null)" != "$(playground/sources-hash.sh)" ]; then
    echo "note: docs/playground/pkg/ was built from other sources than these (the crates," \
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
# own flags, then checks. drive NAME: the scenario NAME of drive.js, then checks (and for
# `more`, native `train` with the page's final flags).
run() {
    page "$1" "playground/index.html?$2&train=1&report=/report/$1&hold=/wait/$1"
}
drive() {
    page "$1" "test/drive.html?scenario=$1"
}
page() {
    local name=$1 start=$SECONDS
    local url="http://127.0.0.1:$port/$2"
    echo "== $name: $url"
    if ! timeout 900 "$browser" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
        --hide-scrollbars --window-size=1340,1060 --screenshot="$out/$name.png" "$url" >"$out/$name.log" 2>&1 ||
        [ ! -s "$out/$name.json" ]; then
        echo "the page did not report ($out/$name.log):" >&2
        tail -20 "$out/$name.log" >&2
        return 1
    fi
    echo "   the page reported in $((SECONDS - start)) s"
    # (set -e does not reach inside a function called with ||: each step says if it failed.)
    local flags
    flags=$(python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))
sys.exit("the page failed: " + s["error"]) if "error" in s else print(s["info"]["command"].split(" -- ", 1)[1] if "info" in s else "")' \
        "$out/$name.json") || return 1
    if [ -z "$flags" ]; then
        python3 playground/check.py "$name" "$out/$name.json" -
        return
    fi
    # shellcheck disable=SC2086 # the page's flags, split as a shell would
    cargo run --release --quiet --bin train -- $flags --quiet --threads 1 \
        --out "$out/native-$name" >/dev/null || { echo "native train failed" >&2; return 1; }
    python3 playground/check.py "$name" "$out/$name.json" "$out/native-$name/record.json"
}

status=0 passed=0 failed=0 begin=$SECONDS
for scenario in \
    "at5-lagk task=lagk&len=16&lag=4&bias=at5&heads=4&lr=0.005&epochs=20&seed=1" \
    "t5-lagk task=lagk&len=24&lag=8&bias=t5&heads=4&lr=0.005&epochs=15&seed=1" \
    "at5-alive-lagk task=lagk&len=16&lag=4&bias=at5&init=alive&heads=4&lr=0.005&epochs=3&seed=2" \
    "t5-adding task=adding&T=20&bias=t5&heads=4&lr=0.003&epochs=2&seed=1" \
    refuse trap midepoch more url labels; do
    if [ "${scenario#* }" = "$scenario" ]; then
        drive "$scenario" && passed=$((passed + 1)) || { failed=$((failed + 1)) status=1; }
    elif run ${scenario%% *} "${scenario#* }"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1)) status=1
    fi
done
if [ -n "$keep" ]; then
    for f in at5-lagk t5-lagk; do
        if [ -s "$out/$f.png" ]; then cp "$out/$f.png" "$keep/playground-${f%-lagk}.png"; fi
    done
fi
# One closing line in the form test runners print, counting the browser scenarios.
echo "playground: $passed passed, $failed failed ($((SECONDS - begin)) s)"
exit "$status"
