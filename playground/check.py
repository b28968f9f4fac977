"""The playground test's assertions, on the state the page reported (see test.sh).

check.py SCENARIO REPORT.json NATIVE_RECORD.json
  at5-lagk: dev accuracy passed 90 %, and some head's prior peaks at offset -k;
  t5-lagk:  -k shares its T5 bucket with a neighbour, some head's prior peaks in that bucket,
            is equal over all of it (a plateau) and stands above the offsets on either side;
  at5-alive-lagk: the page's init control reached the run (`--at5-init alive`);
  t5-adding: the Adding task (real-valued inputs, a regression head) trains in the page.
All: the first epoch's mean training loss equals native `train`'s with the same flags to 1e-4.
"""
import json
import shlex
import sys

scenario, report_path, native_path = sys.argv[1:4]
page = json.load(open(report_path))
native = json.load(open(native_path))
info, history, prior = page["info"], page["history"], page["prior"]
flags = shlex.split(info["command"].split(" -- ", 1)[1])
k = int(flags[flags.index("--lag") + 1]) if "--lag" in flags else None
q, length = info["query"], info["len"]
failures = []


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        failures.append(what)


def mode(row):
    return max(range(len(row)), key=lambda j: row[j]) - q


accs = [e["dev"]["accuracy"] for e in history]
print(f"{scenario}: {info['command']}")
print(f"  {len(history)} epochs in {page['seconds']:.1f} s of training "
      f"({page['wall_seconds']:.1f} s wall), dev accuracy by epoch: "
      + " ".join(f"{a:.3f}" for a in accs))
print("  prior modes by head: " + " ".join(str(mode(r)) for r in prior))

check(len(history) == info["epochs"], f"the page trained all {info['epochs']} epochs")
ours, theirs = history[0]["train_loss"], native["epochs"][0]["train_loss"]
check(abs(ours - theirs) <= 1e-4,
      f"epoch 1 mean training loss: page {ours:.6f}, native {theirs:.6f} "
      f"(|diff| {abs(ours - theirs):.2e} <= 1e-4)")
last = min(len(history), len(native["epochs"])) - 1
print(f"  (epoch {last + 1}: page {history[last]['train_loss']:.6f}, "
      f"native {native['epochs'][last]['train_loss']:.6f})")

if scenario == "at5-lagk":
    check(max(accs) > 0.9, f"dev accuracy passed 90 % (best {max(accs):.3f})")
    check(any(mode(r) == -k for r in prior), f"some head's prior peaks at offset -{k}")
elif scenario == "t5-lagk":
    b = info["buckets"]
    answer = q - k
    bucket = [j for j in range(length) if b[j] == b[answer]]
    offsets = [j - q for j in bucket]
    check(len(bucket) > 1, f"T5 puts offset -{k} in a bucket with others: offsets {offsets}")
    heads = [h for h, r in enumerate(prior) if mode(r) in offsets]
    check(bool(heads), f"some head's prior peaks inside that bucket (heads {heads})")
    for h in heads:
        r = prior[h]
        vals = [r[j] for j in bucket]
        check(max(vals) - min(vals) <= 1e-12 * max(vals),
              f"head {h}: the prior is equal over offsets {offsets} ({vals[0]:.5f})")
        outside = [r[j] for j in (bucket[0] - 1, bucket[-1] + 1) if 0 <= j < length]
        check(all(v < vals[0] for v in outside),
              f"head {h}: the plateau stands above its neighbours "
              f"({', '.join(f'{v:.5f}' for v in outside)})")
elif scenario == "at5-alive-lagk":
    check(flags[flags.index("--at5-init") + 1] == "alive" if "--at5-init" in flags else False,
          "the run was built with --at5-init alive")
elif scenario == "t5-adding":
    check(flags[flags.index("--task") + 1] == "adding", "the run is the adding task")
    check(all(e["train_loss"] == e["train_loss"] for e in history), "every epoch's loss is a number")
else:
    sys.exit(f"unknown scenario {scenario}")

sys.exit(1 if failures else 0)
