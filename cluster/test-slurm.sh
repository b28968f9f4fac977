#!/usr/bin/env bash
# The Slurm array, for real: starts a one-node Slurm cluster on this machine, runs a small plan
# through cluster/slurm-array.sh, stops one task mid-run and requeues it, merges, and checks that
# the report and every record equal the same plan run here by `sweep` itself (timings aside).
#
#   cluster/test-slurm.sh            (as root: installs slurm-wlm and munge when missing)
#
# The cluster is munged, slurmctld and slurmd from Debian's packages with a generated
# slurm.conf: one node, localhost, 2 CPUs, proctrack/linuxproc, no cgroups, no accounting. Its
# state, logs and the runs live in a temporary folder (AT5_SLURM_KEEP=1 keeps it); every daemon
# started here is stopped on the way out, however the test ends. Nothing is written in the
# repository but what `cargo build` writes in target/.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

say() { echo "test-slurm: $*"; }
die() {
    echo "test-slurm: FAILED: $*" >&2
    exit 1
}

need=()
command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v sbatch >/dev/null || need+=(slurm-wlm)
command -v munged >/dev/null || need+=(munge)
command -v python3 >/dev/null || need+=(python3)
if [[ ${#need[@]} -gt 0 ]]; then
    say "installing ${need[*]}"
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}"
fi

cargo build --release --quiet --bin train --bin sweep --bin merge
bin=$repo/target/release

tmp=$(mktemp -d /tmp/at5-slurm.XXXXXX)
pids=()
cleanup() {
    local rc=$?
    set +e
    if [[ -n "${SLURM_CONF:-}" ]] && [[ -n "${job:-}" ]]; then
        timeout 10 scancel "$job" 2>/dev/null
        # Let slurmd end the steps it started before it stops.
        for _ in $(seq 20); do
            [[ -z "$(timeout 5 squeue -h -j "$job" 2>/dev/null)" ]] && break
            sleep 0.5
        done
    fi
    # Daemons in reverse order of starting: slurmd, slurmctld, munged; each by its own id.
    for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
        kill "${pids[i]}" 2>/dev/null
    done
    for pid in "${pids[@]}"; do
        for _ in $(seq 50); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -9 "$pid" 2>/dev/null
    done
    if [[ $rc -ne 0 ]]; then
        for f in "$tmp"/log/*.log "$tmp"/slurm-logs/*; do
            [[ -f "$f" ]] && { echo "--- $f (last lines)"; tail -n 20 "$f"; }
        done
    fi
    if [[ "${AT5_SLURM_KEEP:-}" == 1 ]]; then
        say "kept $tmp"
    else
        rm -rf "$tmp"
    fi
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$tmp"/{munge,state,spool,log}
chmod 700 "$tmp"/munge

# munged with its own key and socket, so an installed munge is neither used nor disturbed.
dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$tmp/munge/munge.key"
munged --foreground --force --key-file="$tmp/munge/munge.key" \
    --socket="$tmp/munge/munge.socket" --pid-file="$tmp/munge/munged.pid" \
    --seed-file="$tmp/munge/munged.seed" --log-file="$tmp/log/munged.log" \
    >"$tmp/log/munged.out" 2>&1 &
pids+=($!)

# Ports away from Slurm's defaults, so a Slurm already on this machine is left alone.
ctld_port=${AT5_SLURM_PORT:-16817}
cat >"$tmp/slurm.conf" <<EOF
ClusterName=at5test
SlurmctldHost=localhost
SlurmctldPort=$ctld_port
SlurmdPort=$((ctld_port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
# cred_expire is also how long a requeued job waits before it may start again (120 s by
# default); sched_interval how often pending jobs are looked at without an event (60 s).
AuthInfo=socket=$tmp/munge/munge.socket,cred_expire=10
SchedulerParameters=sched_interval=2
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MpiDefault=none
JobRequeue=1
KillWait=5
MinJobAge=600
NodeName=localhost NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=test Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$tmp/slurm.conf
slurmctld -D -i -f "$SLURM_CONF" >"$tmp/log/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -N localhost -f "$SLURM_CONF" >"$tmp/log/slurmd.out" 2>&1 &
pids+=($!)

# Wait (bounded) until the node takes jobs.
for i in $(seq 60); do
    state=$(timeout 5 sinfo -h -n localhost -o %T 2>/dev/null || true)
    [[ "$state" == idle ]] && break
    [[ $i -eq 60 ]] && die "the node is not idle after 30 s (state: ${state:-none})"
    sleep 0.5
done
say "one-node cluster up ($(sinfo --version))"

# The plan: four lag-k runs of the quick preset (k = 2 and 4, T5 and AT5, one seed, L = 32),
# 60 epochs each, long enough to be stopped between epochs: at 20 epochs a run took 5-10 s on an
# AMD core but 1.5 s on an AVX-512 Xeon, where task 1 finished before its scancel arrived.
plan=(--preset quick --task lagk --ranges 2,4 --biases t5,at5 --seeds 1 --lag-len 32
    --train-flags "--epochs 60")
timeout 300 "$bin/sweep" "${plan[@]}" --out "$tmp/local" --jobs 2 --quiet >"$tmp/log/local.out" 2>&1 ||
    die "the local run failed: $(tail -n 3 "$tmp/log/local.out")"
"$bin/sweep" "${plan[@]}" --out "$tmp/cluster" --emit-jobs "$tmp/jobs.txt" >/dev/null
runs=$(wc -l <"$tmp/jobs.txt")
[[ $runs -eq 4 ]] || die "expected 4 jobs, the list has $runs"

submit=$(cluster/slurm-array.sh --train "$bin/train" --logs "$tmp/slurm-logs" "$tmp/jobs.txt")
echo "$submit" | sed 's/^/  | /'
job=$(sed -nE 's/^array job ([0-9]+):.*/\1/p' <<<"$submit")
[[ -n "$job" ]] || die "no job id in the submission's output"
grep -q "merge -- $tmp/cluster\$" <<<"$submit" || die "the printed merge command does not name $tmp/cluster"

# Task 1 runs the list's first run: stop it once it has a checkpoint and before it finishes.
first_out=$(sed -E "s/.* --out ('[^']*'|[^ ]*) .*/\1/" <<<"$(head -n 1 "$tmp/jobs.txt")")
epochs_in() {
    python3 -c 'import json,sys
try: r = json.load(open(sys.argv[1]))
except Exception: print("0 none"); sys.exit()
print(len(r["epochs"]), r["status"].replace(" ", "_"))' "$1/record.json"
}
# The wait polls for the checkpoint file alone, 50 times a second, without parsing the record,
# so the scancel follows it closely; the record is read once the run is stopped.
deadline=$((SECONDS + 120))
until [[ -f "$first_out/checkpoint.bin" ]]; do
    ((SECONDS < deadline)) || die "task 1 wrote no checkpoint within 120 s"
    sleep 0.02
done
scancel "${job}_1"
read -r done_epochs status < <(epochs_in "$first_out")
[[ $status == running || $status == none ]] || die "task 1 finished ($status) before it could be stopped"
say "scancel sent to task 1 after its epoch $done_epochs"
for i in $(seq 100); do
    state=$(scontrol -o show job "${job}_1" | sed -nE 's/.* JobState=([A-Z_]+) .*/\1/p')
    [[ "$state" == CANCELLED ]] && break
    [[ $i -eq 100 ]] && die "task 1 is $state, not CANCELLED, 20 s after scancel"
    sleep 0.2
done
read -r stopped_epochs status < <(epochs_in "$first_out")
[[ $status == running ]] || die "task 1's run is $status after scancel, not interrupted"
scontrol requeue "${job}_1"
say "requeued task 1 (its record had $stopped_epochs epochs)"

# Wait, bounded, for the whole array to leave the queue.
deadline=$((SECONDS + 300))
while [[ -n "$(squeue -h -j "$job")" ]]; do
    ((SECONDS < deadline)) || die "the array is still queued after 300 s: $(squeue -j "$job")"
    sleep 1
done
for t in $(seq "$runs"); do
    state=$(scontrol -o show job "${job}_$t" | sed -nE 's/.* JobState=([A-Z_]+) .*/\1/p')
    [[ "$state" == COMPLETED ]] || die "task $t ended $state"
done

# The requeued task resumed: its second attempt trained only the epochs after the checkpoint.
log=$(ls "$tmp"/slurm-logs/*-"${job}"_1.out)
[[ $(grep -c '^== task 1 of array' "$log") -eq 2 ]] || die "$log does not hold two attempts"
first_epoch_again=$(awk '/^== task 1 .*attempt 2/ {a = 1} a && /^epoch [0-9]+\// {split($2, e, "/"); print e[1]; exit}' "$log")
[[ -n "$first_epoch_again" && $first_epoch_again -gt 1 ]] ||
    die "the requeued attempt started at epoch ${first_epoch_again:-none}, not after the checkpoint"
say "task 1 resumed at epoch $first_epoch_again (stopped after $stopped_epochs)"

"$bin/merge" "$tmp/cluster" >/dev/null
"$bin/merge" "$tmp/local" >/dev/null
python3 - "$tmp/local" "$tmp/cluster" <<'EOF'
# Every report and record of the two folders: the same files, byte for byte, but JSON fields
# that hold times; checkpoints hold times too and are compared by presence only.
import json, os, sys
local, cluster = sys.argv[1:]
TIMES = {"train_seconds", "steps_per_second", "seconds"}
import re
# A task killed inside an atomic write leaves its temp file (`.record.json.tmp.XXXXXX`, a random
# suffix) beside the file it was replacing; nothing reads it.
LEFTOVER = re.compile(r"^\..+\.tmp\..+$")
# The folder lock holds its last writer's pid: compared by presence, like a checkpoint.
BY_PRESENCE = (".bin", ".at5.lock")
def files(root):
    return sorted(os.path.relpath(os.path.join(d, f), root)
                  for d, _, fs in os.walk(root) for f in fs if not LEFTOVER.match(f))
def untimed(v):
    if isinstance(v, dict):
        return {k: untimed(x) for k, x in v.items() if k not in TIMES}
    if isinstance(v, list):
        return [untimed(x) for x in v]
    return v
a, b = files(local), files(cluster)
if a != b:
    sys.exit(f"different files: only here {sorted(set(a) - set(b))}, only there {sorted(set(b) - set(a))}")
counts = {"records": 0, "other JSON files": 0, "report files": 0, "checkpoints": 0, "locks": 0}
for f in a:
    pa, pb = os.path.join(local, f), os.path.join(cluster, f)
    if f.endswith(BY_PRESENCE):
        counts["checkpoints" if f.endswith(".bin") else "locks"] += 1
    elif f.endswith(".json"):
        ja, jb = (untimed(json.load(open(p))) for p in (pa, pb))
        if ja != jb:
            sys.exit(f"{f} differs (timings aside)")
        counts["records" if f.endswith("record.json") else "other JSON files"] += 1
    else:
        if open(pa, "rb").read() != open(pb, "rb").read():
            sys.exit(f"{f} differs")
        counts["report files"] += 1
print("test-slurm: equal to the local run: {records} records and {other JSON files} other JSON "
      "files (plan, results.json, priors) but for their timings, {report files} report files "
      "(table, figures) byte for byte; {checkpoints} checkpoints and {locks} folder locks present "
      "in both".format(**counts))
EOF
say "passed"
