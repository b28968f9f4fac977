"""The playground test's assertions, on the state the page reported (see test.sh).

check.py SCENARIO REPORT.json NATIVE_RECORD.json (or - where there is no native run)
Training runs:
  at5-lagk: dev accuracy passed 90 %, and some head's prior peaks at offset -k;
  t5-lagk:  -k shares its T5 bucket with a neighbour, some head's prior peaks in that bucket,
            is equal over all of it (a plateau) and stands above the offsets on either side;
  at5-alive-lagk: the page's init control reached the run (`--at5-init alive`);
  t5-adding: the Adding task (real-valued inputs, a regression head) trains in the page.
  All: the first epoch's mean training loss equals native `train`'s with the same flags to 1e-4.
Scenarios driven through the page's controls (playground/drive.js; what each does is there):
  refuse, trap, midepoch, url, labels: see their functions below;
  more: the run trained on past its first budget counts its epochs on, and its first epoch and
        the first epoch of each extension equal native `train` with the final --epochs.
"""
import json
import shlex
import sys

scenario, report_path, native_path = sys.argv[1:4]
page = json.load(open(report_path))
native = json.load(open(native_path)) if native_path != "-" else None
failures = []


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        failures.append(what)


def epochs_of(s):
    return [e["epoch"] for e in s["history"]]


def loss1(s):
    return s["history"][0]["train_loss"]


def same_loss(a, b, what):
    check(abs(a - b) <= 1e-4, f"{what}: {a:.6f} and {b:.6f} (|diff| {abs(a - b):.2e} <= 1e-4)")


def matches_native(epoch, what):
    ours = page["history"][epoch - 1]["train_loss"]
    theirs = native["epochs"][epoch - 1]["train_loss"]
    check(abs(ours - theirs) <= 1e-4,
          f"epoch {epoch} mean training loss{what}: page {ours:.6f}, native {theirs:.6f} "
          f"(|diff| {abs(ours - theirs):.2e} <= 1e-4)")


def training(info, history, prior):
    flags = shlex.split(info["command"].split(" -- ", 1)[1])
    k = int(flags[flags.index("--lag") + 1]) if "--lag" in flags else None
    q, length = info["query"], info["len"]

    def mode(row):
        return max(range(len(row)), key=lambda j: row[j]) - q

    accs = [e["dev"]["accuracy"] for e in history]
    print(f"{scenario}: {info['command']}")
    print(f"  {len(history)} epochs in {page['seconds']:.1f} s of training "
          f"({page['wall_seconds']:.1f} s wall), dev accuracy by epoch: "
          + " ".join(f"{a:.3f}" for a in accs))
    print("  prior modes by head: " + " ".join(str(mode(r)) for r in prior))

    check(len(history) == info["epochs"], f"the page trained all {info['epochs']} epochs")
    matches_native(1, "")
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
        check(all(e["train_loss"] == e["train_loss"] for e in history),
              "every epoch's loss is a number")


def refused(s, field, message, what):
    """The page refused the settings: `message` beside the marked `field`, no run on screen."""
    said = [r["message"] for r in s["refused"] if r["field"] == field]
    check(bool(said) and said[0].startswith(message),
          f"{what}: refused with '{message}' (the page says {said or s['shown_error']!r})")
    check(s["invalid"] == [field], f"{what}: the field {field} alone is marked ({s['invalid']})")
    check(message in s["shown_error"], f"{what}: the status area says it")
    check(s["info"] is None and s["command"] == "" and s["history"] == [] and s["drawn"] == 0,
          f"{what}: no run, command or plot left on screen (status: {s['status']!r})")
    check(s["traps"] == 0 and s["workers"] == 1, f"{what}: no trap, the first worker still in use")


def refuse():
    refused(page["huge_url"], "len", "L must be ≤ 128", "L = 100000 in the URL")
    check(page["trained"]["history"] and epochs_of(page["trained"]) == [1], "then L = 16 trains")
    refused(page["huge"], "len", "L must be ≤ 128", "L = 100000 typed after a trained epoch")
    refused(page["empty"], "len", "L must be a whole number", "an empty L")
    refused(page["letters"], "len", "L must be a whole number", "letters in L")
    refused(page["negative"], "len", "L must be ≥ 5", "L = -5")
    refused(page["lag"], "lag", "k must be ≤ 15", "k = 16 at L = 16")
    refused(page["lr"], "lr", "lr must be a number", "an empty lr")
    refused(page["seed"], "seed", "seed must be a whole number", "seed = 1.5")
    after = page["after"]
    check(epochs_of(after) == [1] and after["invalid"] == [] and after["shown_error"] == "",
          "fixed again, the run trains with nothing marked")
    same_loss(loss1(after), loss1(page["trained"]), "the rebuilt run's epoch 1 equals the first's")


def trap():
    before, rec, stepped, done = page["before"], page["recovered"], page["stepped"], page["finished"]
    check(rec["traps"] == 1 and rec["workers"] == 2, "the trap was seen and the worker replaced")
    check("trapped" in rec["notice"] and "restarted" in rec["notice"],
          f"the page says what happened: {rec['notice']!r}")
    check(rec["info"] is not None and rec["history"] == [] and rec["command"] != "",
          "a fresh run of the same settings is built, at epoch 0")
    check(rec["command"] == before["command"], "with the same command")
    check(epochs_of(stepped) == [1], "it steps")
    same_loss(loss1(stepped), loss1(before), "its epoch 1 equals the run's before the trap")
    check(epochs_of(done) == [1, 2, 3, 4] and done["progress"] == 1, "it trains to its end")


def midepoch():
    first, new, changed = page["first"], page["new_run"], page["changed"]
    paused, step = page["paused"], page["paused_step"]
    check(epochs_of(new) == [1, 2], f"New run mid-epoch: the new run holds epochs {epochs_of(new)}")
    check(new["status"].startswith("epoch 2/30"), f"its status reads {new['status']!r}")
    check(new["run"] > first["run"], "it is another run")
    same_loss(loss1(new), loss1(first), "its epoch 1 equals the first run's (same settings)")
    check(epochs_of(changed) == [1], f"a field changed mid-epoch: epochs {epochs_of(changed)}")
    check("--seed 2" in changed["command"], "the changed run is the new seed's")
    n = len(paused["history"])
    check(n >= 2 and epochs_of(paused) == list(range(1, n + 1)),
          f"Pause mid-epoch: epochs {epochs_of(paused)}, none missing or repeated")
    check(epochs_of(step) == list(range(1, n + 2)), "Step after the pause goes on from there")


def more():
    first, extended, final = page["first"], page["more"], page["final"]
    print(f"more: {final['command']}")
    check(epochs_of(first) == [1, 2] and "--epochs 2" in first["command"], "a 2-epoch run finished")
    none = page["none_more"]
    check(none["invalid"] == ["moreN"] and "Train more must be ≥ 1" in none["shown_error"]
          and epochs_of(none) == [1, 2] and "--epochs 2" in none["command"],
          "Train more 0 is refused, its field marked, the run kept")
    check(epochs_of(extended) == [1, 2, 3, 4] and "--epochs 4" in extended["command"]
          and "epochs=4" in extended["url"], "Train more 2 went on to epoch 4, command and URL say 4")
    check(epochs_of(final) == [1, 2, 3, 4, 5] and "--epochs 5" in final["command"]
          and "epochs=5" in final["url"], "epochs raised to 5 went on to epoch 5")
    check(final["progress"] == 1 and final["status"].startswith("epoch 5/5"),
          f"one progress bar over the run, full at its end ({final['status']!r})")
    check(len(native["epochs"]) == 5, "native train ran the page's final command to epoch 5")
    for epoch, what in ((1, ""), (3, " (the first Train more added)"),
                        (5, " (the first the raised field added)")):
        matches_native(epoch, what)


def url():
    from urllib.parse import parse_qs, urlsplit
    query = dict(p.split("=") for p in page["query"].split("&"))
    opened, changed, reopened = page["opened"], page["changed"], page["reopened"]
    check(opened["settings"] == query, "the settings in the URL are the fields' on opening")
    written = {k: v[0] for k, v in parse_qs(opened["url"][1:]).items()}
    check(written == query, f"and the URL the page writes holds every one ({opened['url']})")
    check("--seq-len 20 --lag 5 --bias t5 --heads 2 --lr 0.01 --epochs 3 --seed 7"
          in opened["command"], f"the run is built from them: {opened['command']}")
    link = {k: v[0] for k, v in parse_qs(urlsplit(page["link"]).query).items()}
    check(link == changed["settings"] and link["task"] == "adding" and link["seed"] == "9",
          f"after the fields change, the link holds the new settings ({page['link']})")
    check(page["copy_button"], "a copy button stands beside the command")
    check(reopened["settings"] == changed["settings"], "opening the link restores them")
    check(reopened["command"] == changed["command"],
          f"and builds the same run: {reopened['command']}")


def labels():
    for case in page["cases"]:
        what = f"{case['task']} L={case['len']} k={case['lag']} {case['bias']} {case['heads']} heads"
        texts = case["texts"]
        bad = [t for _, t, b, (w, h) in texts if b[0] < -0.5 or b[1] < -0.5 or b[2] > w + 0.5 or b[3] > h + 0.5]
        check(not bad, f"{what}: {len(texts)} labels, none clipped {bad or ''}")
        clash = []
        for i, (s1, t1, b1, _) in enumerate(texts):
            for s2, t2, b2, _ in texts[:i]:
                if s1 == s2 and min(b1[2], b2[2]) - max(b1[0], b2[0]) > 0.5 \
                        and min(b1[3], b2[3]) - max(b1[1], b2[1]) > 0.5:
                    clash.append(f"{s1}: {t2!r} / {t1!r}")
        check(not clash, f"{what}: none overlaps another {clash or ''}")


if "error" in page:
    sys.exit(f"{scenario}: the page failed: {page['error']}")
if page.get("errors"):
    check(False, f"no uncaught error in the page: {page['errors']}")
DRIVEN = {"refuse": refuse, "trap": trap, "midepoch": midepoch, "more": more, "url": url,
          "labels": labels}
if scenario in DRIVEN:
    DRIVEN[scenario]()
elif scenario in ("at5-lagk", "t5-lagk", "at5-alive-lagk", "t5-adding"):
    training(page["info"], page["history"], page["prior"])
else:
    sys.exit(f"unknown scenario {scenario}")

sys.exit(1 if failures else 0)
