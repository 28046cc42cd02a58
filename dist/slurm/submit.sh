#!/bin/bash
# Run a linklab experiment on a Slurm cluster, split into SHARDS parts.
#
#   dist/slurm/submit.sh [-c|-j CPUS_PER_TASK] [-p PARTITION]
#                               FILE|reproduce SHARDS OUTDIR [-- LINKLAB OPTIONS...]
#
# It submits two jobs and prints their ids ("array 12 merge 13"):
#
#   1. a job array of SHARDS tasks (shard.sbatch); task I runs
#        linklab sim FILE --shard I/SHARDS --out OUTDIR/part-I [OPTIONS]
#      or, when FILE is the word `reproduce` (name a file called that
#      ./reproduce),
#        linklab reproduce --shard I/SHARDS --out OUTDIR/part-I [OPTIONS]
#   2. a merge job (merge.sbatch) that starts once every task has succeeded
#      and runs
#        linklab merge OUTDIR/part-0 ... OUTDIR/part-(SHARDS-1) --out OUTDIR/merged
#      OUTDIR/merged then holds what the unsharded command would have
#      written (output.json, the CSV and SVG files), byte for byte.  If a
#      task fails, the merge job is cancelled instead of waiting forever;
#      run that task again alone, then the merge, with the same arguments:
#        sbatch --array=7 --output=OUTDIR/logs/slurm-%A_%a.out \
#            dist/slurm/shard.sbatch SHARDS OUTDIR FILE [OPTIONS]
#        sbatch --output=OUTDIR/logs/merge-%j.out \
#            dist/slurm/merge.sbatch SHARDS OUTDIR
#
# Slurm's own output of every job goes to OUTDIR/logs/ (slurm-ARRAY_TASK.out
# for the tasks, merge-JOB.out for the merge).  Each task gets
# CPUS_PER_TASK CPUs (sbatch --cpus-per-task, default 1) and runs linklab
# with --jobs CPUS_PER_TASK threads, so do not put -j/--jobs among the
# OPTIONS.  The linklab binary is $LINKLAB if set, else `linklab` on the
# PATH of the jobs; it must be reachable from the compute nodes, and so
# must FILE and OUTDIR (a shared file system).
# The jobs get the environment of this script (sbatch's default,
# --export=ALL), LINKLAB included.  Other sbatch options (time limit,
# account, memory) go on the #SBATCH lines of shard.sbatch and merge.sbatch,
# or in SBATCH_* environment variables (SBATCH_TIMELIMIT, SBATCH_ACCOUNT).
#
# Example, 16 shards of 4 CPUs each, then wait for the result:
#
#   export LINKLAB=$HOME/linklab/target/release/linklab
#   ids=$(dist/slurm/submit.sh -c 4 crates/scenario/experiments/ronan-tables-2-3.toml 16 runs/ronan)
#   merge=${ids##* }
#   while squeue -h -j "$merge" | grep -q .; do sleep 30; done
#   ls runs/ronan/merged
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)

usage() {
    echo "usage: $0 [-c|-j CPUS_PER_TASK] [-p PARTITION] FILE|reproduce SHARDS OUTDIR [-- LINKLAB OPTIONS...]" >&2
    exit 2
}

jobs=1
partition=() # as ${partition[@]+...} below: bash before 4.4 (RHEL 7) calls an empty array unset
while getopts c:j:p:h opt; do
    case $opt in
        c | j) jobs=$OPTARG ;;
        p) partition=(--partition "$OPTARG") ;;
        *) usage ;;
    esac
done
shift $((OPTIND - 1))
[ $# -ge 3 ] || usage
what=$1 shards=$2 out=$3
shift 3
[ "${1:-}" = -- ] && shift # the rest goes to linklab as it is

case $shards in '' | *[!0-9]* | 0*) echo "$0: SHARDS must be a positive number" >&2; exit 2 ;; esac
case $jobs in '' | *[!0-9]* | 0*) echo "$0: CPUS_PER_TASK must be a positive number" >&2; exit 2 ;; esac
if [ "$what" != reproduce ]; then
    [ -f "$what" ] || { echo "$0: no scenario file $what" >&2; exit 2; }
    what=$(cd "$(dirname "$what")" && pwd)/$(basename "$what") # the jobs may start elsewhere
fi

# Slurm does not make the directories of --output: make them here.
mkdir -p "$out/logs"
out=$(cd "$out" && pwd)

# 1. The job array: tasks 0..SHARDS-1.  --parsable prints "ID" (or
#    "ID;CLUSTER" on a multi-cluster setup).
array=$(sbatch --parsable ${partition[@]+"${partition[@]}"} \
    --array="0-$((shards - 1))" \
    --cpus-per-task="$jobs" \
    --output="$out/logs/slurm-%A_%a.out" \
    "$here/shard.sbatch" "$shards" "$out" "$what" "$@")
array=${array%%;*}

# 2. The merge: afterok on an array job waits for every one of its tasks
#    to succeed; --kill-on-invalid-dep cancels the merge when one fails
#    (otherwise it would stay pending with DependencyNeverSatisfied).
merge=$(sbatch --parsable ${partition[@]+"${partition[@]}"} \
    --dependency="afterok:$array" --kill-on-invalid-dep=yes \
    --output="$out/logs/merge-%j.out" \
    "$here/merge.sbatch" "$shards" "$out")
merge=${merge%%;*}

echo "array $array merge $merge"
