#!/usr/bin/env bash
# Submits a job list written by `--emit-jobs` as one Slurm array: task i runs line i.
#
#   cluster/slurm-array.sh [OPTIONS] JOBS [-- SBATCH-OPTIONS...]
#
#   --train BIN      run BIN in place of each line's `cargo run --release --quiet --bin train --`
#                    (build it first: `cargo build --release --bin train`); without it every
#                    task runs cargo, which must then be on the nodes
#   --logs DIR       where each task's log goes, as DIR/NAME-JOBID_TASK.out (default: slurm-logs)
#   --name NAME      the array's job name (default: at5-<the experiment's folder>)
#   --max-running K  at most K tasks at once (`--array=1-N%K`)
#   --dry-run        print the batch script and the sbatch command; submit nothing
#   SBATCH-OPTIONS   passed to sbatch as they are: --partition, --time, --mem, --account, …
#
# Each task runs `train … --out ROOT/runs/ID --continue`, so a task that is killed, preempted
# or requeued resumes from its run's last finished epoch when it runs again, and a finished run
# is left as it is. That needs the run folders (and so the checkpoints) on a filesystem every
# node sees: the array is submitted from the current directory and every task runs there, so
# relative --out paths resolve the same on every node. The job's lines are copied into the
# batch script when it is submitted: rewriting JOBS afterwards changes nothing in this array.
# A requeued task appends to its log, so the attempt that was stopped keeps its lines.
#
# When every task has finished, `merge` builds the reports; the command is printed at the end.
set -euo pipefail

usage() {
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
}
fail() {
    echo "error: $*" >&2
    exit 2
}

train="" logs="slurm-logs" name="" max_running="" dry_run=false jobs=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --train) [[ $# -ge 2 ]] || fail "--train needs a path"; train="$2"; shift 2 ;;
        --logs) [[ $# -ge 2 ]] || fail "--logs needs a folder"; logs="$2"; shift 2 ;;
        --name) [[ $# -ge 2 ]] || fail "--name needs a name"; name="$2"; shift 2 ;;
        --max-running) [[ $# -ge 2 ]] || fail "--max-running needs a number"; max_running="$2"; shift 2 ;;
        --dry-run) dry_run=true; shift ;;
        -h | --help) usage; exit 0 ;;
        --) shift; break ;;
        -*) fail "unknown option $1 (see --help)" ;;
        *) [[ -z "$jobs" ]] || fail "one job list at a time: $jobs and $1"; jobs="$1"; shift ;;
    esac
done
sbatch_extra=("$@")

if [[ -n "$max_running" && ! "$max_running" =~ ^[1-9][0-9]*$ ]]; then
    fail "--max-running $max_running: expected a whole number of tasks, at least 1"
fi
[[ -n "$jobs" ]] || fail "give the job list that --emit-jobs wrote (see --help)"
[[ -f "$jobs" ]] || fail "$jobs: no such file"

# The job list's lines, each checked: a `train … --out DIR --continue` command, so that
# running it again is safe.
prefix="cargo run --release --quiet --bin train --"
lines=() roots=()
n=0
while IFS= read -r line || [[ -n "$line" ]]; do
    n=$((n + 1))
    [[ -n "${line// /}" ]] || continue
    if [[ "$line" != *" --continue"* || "$line" != *" --out "* ]]; then
        fail "$jobs:$n: not a \`train … --out DIR --continue\` line; give a file that --emit-jobs wrote"
    fi
    # The run's folder is ROOT/runs/ID: ROOT is what `merge` reads.
    out=$(sed -E "s/.* --out ('[^']*'|[^ ]*) .*/\1/" <<<"$line")
    out=${out#\'} out=${out%\'}
    roots+=("$(dirname "$(dirname "$out")")")
    if [[ -n "$train" ]]; then
        [[ "$line" == "$prefix "* ]] || fail "$jobs:$n: does not start with \`$prefix\`, so --train cannot replace it"
        line="__TRAIN__ ${line#"$prefix "}"
    fi
    lines+=("$line")
done <"$jobs"
count=${#lines[@]}
if [[ $count -eq 0 ]]; then
    echo "$jobs holds no job: every run of its plan had finished when it was written; merge its folder"
    exit 0
fi

if [[ -n "$train" ]]; then
    [[ -x "$train" && -f "$train" ]] || fail "--train $train: not an executable file (build it: cargo build --release --bin train)"
    train=$(realpath "$train")
    quoted_train=$(printf '%q' "$train")
    lines=("${lines[@]/#__TRAIN__/$quoted_train}")
fi
mapfile -t roots < <(printf '%s\n' "${roots[@]}" | sort -u)
if [[ -z "$name" ]]; then
    name="at5-$(basename "${roots[0]}")"
fi
[[ "$name" =~ ^[A-Za-z0-9._-]+$ ]] || fail "--name $name: use letters, digits, '.', '_' or '-'"
logs=$(realpath -m "$logs")

# The batch script: the lines themselves, one array element each, so a requeued task runs the
# line it was submitted with.
script=$(
    echo '#!/usr/bin/env bash'
    echo "# The job list $(realpath "$jobs"), one line per array task ($count in all)."
    echo 'lines=('
    printf '    %q\n' "${lines[@]}"
    echo ')'
    cat <<'EOF'
line=${lines[SLURM_ARRAY_TASK_ID - 1]}
echo "== task $SLURM_ARRAY_TASK_ID of array $SLURM_ARRAY_JOB_ID, attempt $((${SLURM_RESTART_COUNT:-0} + 1)), on $(hostname) at $(date '+%F %T')"
echo "== $line"
eval "$line"
EOF
)

array="1-$count${max_running:+%$max_running}"
# --requeue: a preempted task or a node failure puts the task back in the queue, where --continue
# resumes it. --open-mode=append: its log keeps the stopped attempt. One CPU a task: each line
# trains with --threads 1.
sbatch_args=(
    --array="$array" --job-name="$name" --chdir="$PWD"
    --output="$logs/%x-%A_%a.out" --open-mode=append
    --requeue --ntasks=1 --cpus-per-task=1
    "${sbatch_extra[@]}"
)
if $dry_run; then
    echo "sbatch $(printf '%q ' "${sbatch_args[@]}")<<'SCRIPT'"
    echo "$script"
    echo "SCRIPT"
    exit 0
fi
command -v sbatch >/dev/null || fail "sbatch not found: run this on a Slurm login node (or use --dry-run)"
mkdir -p "$logs" || fail "--logs $logs: cannot create the folder"
submitted=$(sbatch --parsable "${sbatch_args[@]}" <<<"$script")
job=${submitted%%;*}
echo "array job $job: $count tasks, logs in $logs/$name-${job}_TASK.out"
echo "follow it with: squeue -j $job"
echo "when no task of it is left in the queue, build the reports with:"
for r in "${roots[@]}"; do
    echo "    cargo run --release --bin merge -- $(printf '%q' "$r")"
done
echo "(a task that failed says why in its log; submitting the same job list again resumes every"
echo " unfinished run from its checkpoint, and a finished one ends at once)"
