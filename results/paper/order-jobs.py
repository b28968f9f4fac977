#!/usr/bin/env python3
"""Orders an emitted job list so the paper's first question is answered first.

1. AT5 vs T5 on Reber, Process-50, Adding-100 (claim C1); 2. the ablations there (none, t5-nob,
at5-nob; claim C3); 3. Adding-500, T5 and AT5; 4. its ablations; 5. the modern references
(alibi, fire). Within a group the cheapest task first (Adding-100, Process-50, Reber), all its
seeds, so whole cells (five seeds) are finished as early as possible.
Usage: python3 order-jobs.py < jobs.txt > jobs-ordered.txt
"""
import re
import sys

TASKS = ["adding-100", "process50", "reber", "adding-500"]
BIASES = ["t5", "at5", "none", "t5-nob", "at5-nob", "alibi", "fire"]


def key(line):
    run = re.search(r"runs/(\S+)-s(\d+) ", line)
    rid, seed = run.group(1), int(run.group(2))
    task = next(t for t in TASKS if rid.startswith(t + "-"))
    bias = rid[len(task) + 1 :]
    long = task == "adding-500"
    if bias in ("alibi", "fire"):
        group = 5
    elif bias in ("t5", "at5"):
        group = 3 if long else 1
    else:
        group = 4 if long else 2
    return (group, TASKS.index(task), seed, BIASES.index(bias))


lines = [l for l in sys.stdin if l.strip()]
sys.stdout.writelines(sorted(lines, key=key))
