#!/bin/bash
# A sharded linklab experiment run the way a researcher runs it on a
# cluster: through dist/slurm/submit.sh on a private one-node Slurm
# cluster (Debian's slurm-wlm 22.05 and munge), in a network namespace of
# its own, with every file in OUTDIR.
#
#   interop/slurm-cluster.sh -l LINKLAB [-o OUTDIR] [-f FILE|reproduce]
#                            [-n SHARDS] [-x 'SIM OPTIONS'] [-t SECONDS]
#
# The cluster: its own munge key and munged (OUTDIR/munge/, socket
# OUTDIR/munge/munge.sock, named to Slurm by AuthInfo), slurmctld -D and
# slurmd -D with a generated OUTDIR/slurm/slurm.conf (ports 7817 and 7818
# on loopback, state, spool, logs and pid files in OUTDIR/slurm/, one node
# with the CPUs and memory `slurmd -C` finds, no cgroups, no accounting);
# SLURM_CONF points the client commands at it.  Nothing of the system's
# munge or Slurm (key, sockets, daemons, /etc/slurm) is used.  Three
# reports, each "NAME PASS ..." or "NAME FAIL ...":
#
#   slurm-up         munge encodes and decodes a credential through the
#                    private socket, the node is idle (sinfo) within 60 s
#   array-and-merge  submit.sh FILE SHARDS OUTDIR/cluster -- SIM OPTIONS
#                    with LINKLAB set: every task of the job array and the
#                    merge job COMPLETED within SECONDS (polled with
#                    scontrol show job), and each task I wrote its part
#                    into OUTDIR/cluster/part-I/
#   byte-for-byte    `diff -r` finds no difference between the unsharded
#                    `LINKLAB sim FILE --out OUTDIR/whole SIM OPTIONS` (or
#                    `LINKLAB reproduce`), run directly, and
#                    OUTDIR/cluster/merged (for reproduce, the run times
#                    in summary.json and report.html excepted; python3
#                    reads summary.json)
#
# FILE defaults to crates/scenario/experiments/ronan-tables-2-3.toml of
# this repository, SHARDS to 4, SIM OPTIONS to --quick (-x '' for a full
# run), SECONDS to 600.  On any exit every job is cancelled and slurmd,
# slurmctld and munged are stopped (by their pid files, waited for), then
# whatever else still runs in the namespace is killed.  Needs root
# (unshare, and slurmd starts the jobs), slurm-wlm, munge and iproute2;
# without them each report is a FAIL naming the packages.  Exits non-zero
# on any failure; bounded to SECONDS + 180 s.
set -u

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
. "$here/netns-lib.sh"

usage() {
    echo "usage: $0 -l LINKLAB [-o OUTDIR] [-f FILE|reproduce] [-n SHARDS] [-x 'SIM OPTIONS'] [-t SECONDS]" >&2
    exit 2
}
linklab=""; out=""; file="$repo/crates/scenario/experiments/ronan-tables-2-3.toml"
shards=4; extra="--quick"; limit=600
args=("$@")
while [ $# -gt 0 ]; do
    [ $# -ge 2 ] || usage
    case "$1" in
        -l) linklab=$2 ;;
        -o) out=$2 ;;
        -f) file=$2 ;;
        -n) shards=$2 ;;
        -x) extra=$2 ;;
        -t) limit=$2 ;;
        *) usage ;;
    esac
    shift 2
done
set -- "${args[@]}"
[ -x "$linklab" ] || { echo "slurm-cluster: -l LINKLAB must name the linklab binary" >&2; exit 2; }
case "$shards$limit" in *[!0-9]*) usage ;; esac
[ "$file" = reproduce ] || [ -f "$file" ] || { echo "slurm-cluster: no scenario file $file" >&2; exit 2; }

# A missing tool, or not being root, is a failure of every check, never a
# skip.
cannot() { # WHY
    for name in slurm-up array-and-merge byte-for-byte; do echo "$name FAIL ($1)"; done
    echo "slurm-cluster: FAILED ($1)"
    exit 1
}
for tool in munged mungekey munge unmunge slurmctld slurmd sbatch scontrol sinfo squeue scancel unshare ip; do
    command -v "$tool" >/dev/null || cannot "needs $tool: apt-get install slurm-wlm munge iproute2"
done
[ "$(id -u)" -eq 0 ] || cannot "needs root: unshare -n, and slurmd runs the jobs"
netns_enter SLURM_CLUSTER_IN_NETNS $((limit + 180)) "$@"

[ -n "$out" ] || out=$(mktemp -d /tmp/slurm-cluster.XXXXXX)
mkdir -p "$out"
out=$(cd "$out" && pwd)
linklab=$(cd "$(dirname "$linklab")" && pwd)/$(basename "$linklab")
[ "$file" = reproduce ] || file=$(cd "$(dirname "$file")" && pwd)/$(basename "$file")

# Slurm resolves names with AI_ADDRCONFIG, which finds nothing when the
# only address is 127.0.0.1 ("Unable to resolve localhost"): the gensio
# cure (netns-lib.sh) serves it too.
netns_lo --gensio-addr

# Nothing of a surrounding Slurm job or of the user's sbatch defaults.
while read -r var; do unset "$var"; done < <(compgen -e | grep -E '^(SLURM|SBATCH|SALLOC|SRUN)_')

mu=$out/munge sl=$out/slurm cluster=$out/cluster
rm -rf "$mu" "$sl" "$cluster" "$out/whole"
mkdir -p "$mu" "$sl/state" "$sl/spool"
export SLURM_CONF=$sl/slurm.conf

fail=0
result() { # NAME OK DETAIL
    if [ "$2" -eq 0 ]; then echo "$1 PASS $3"; else echo "$1 FAIL $3"; fail=1; fi
}
tails() { # FILE...
    local f
    for f in "$@"; do [ -f "$f" ] && { echo "--- tail $f"; tail -n 25 "$f"; }; done
}
slurm_logs() { tails "$sl/slurmctld.log" "$sl/slurmd.log" "$sl/slurmctld.stderr" "$sl/slurmd.stderr" "$mu/munged.log"; }

# The functions below run from the EXIT trap.
# shellcheck disable=SC2317
# stop NAME PIDFILE [PID]: TERM the daemon, wait up to 15 s, then KILL.
stop() {
    local pid=""
    [ -s "$2" ] && pid=$(cat "$2")
    [ -n "$pid" ] || pid=${3:-}
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
    kill "$pid" 2>/dev/null
    for _ in $(seq 150); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
    echo "slurm-cluster: $1 (pid $pid) did not stop on TERM: KILL" >&2
    kill -KILL "$pid" 2>/dev/null
}

# in_netns: every live process of this network namespace but this shell,
# "PID COMMAND" a line: all started here (munged, the Slurm daemons,
# slurmstepd, the jobs), whatever became of their parents.
# shellcheck disable=SC2317
in_netns() {
    local me p cmd
    me=$(readlink /proc/$$/ns/net)
    for p in $(find /proc/[0-9]*/ns/net -maxdepth 0 -printf '%h %l\n' 2>/dev/null |
            grep -F " $me" | cut -d/ -f3); do
        { [ "$p" = $$ ] || [ "$p" = "$BASHPID" ]; } && continue
        cmd=$(tr '\0' ' ' 2>/dev/null < "/proc/$p/cmdline")
        [ -n "$cmd" ] && echo "$p $cmd" # a zombie has none
    done
}

# The states a job ends in.
terminal='COMPLETED|CANCELLED|FAILED|TIMEOUT|OUT_OF_MEMORY|NODE_FAIL|PREEMPTED|BOOT_FAIL|DEADLINE'
ctld="" slurmd_pid="" signalled=0
# On a normal exit: cancel the jobs and wait for them (slurmstepd and the
# job outlive slurmd), then stop slurmd, slurmctld and munged in turn.  On
# a signal (netns_enter's time limit: `timeout` then KILLs after 5 s, and
# has already sent the signal to our process group, daemons included) no
# time for that: TERM all in the namespace, KILL after 1 s (slurmstepd
# ignores TERM).  Either way nothing in the namespace survives.
# shellcheck disable=SC2317
cleanup() {
    trap - EXIT INT TERM HUP
    local p left
    if [ "$signalled" -eq 0 ]; then
        if [ -n "$ctld" ] && kill -0 "$ctld" 2>/dev/null; then
            timeout 10 scancel --user=root 2>/dev/null
            for _ in $(seq 50); do
                timeout 5 squeue -h -t all -o '%T' 2>/dev/null | grep -q -v -x -E "$terminal" || break
                sleep 0.2
            done
        fi
        stop slurmd "$sl/slurmd.pid" "$slurmd_pid"
        stop slurmctld "$sl/slurmctld.pid" "$ctld"
        stop munged "$mu/munged.pid"
    else
        for p in $(in_netns | cut -d' ' -f1); do kill "$p" 2>/dev/null; done
        for _ in $(seq 10); do [ -n "$(in_netns)" ] || break; sleep 0.1; done
    fi
    left=$(in_netns)
    if [ -n "$left" ]; then
        echo "slurm-cluster: killing what was left:" >&2
        echo "$left" >&2
        for p in $(echo "$left" | cut -d' ' -f1); do kill -KILL "$p" 2>/dev/null; done
    fi
    wait 2>/dev/null
}
trap cleanup EXIT
trap 'signalled=1; exit 143' INT TERM HUP

# --- the cluster -------------------------------------------------------
start=$SECONDS
up=1 why=""
# munged checks that every directory above its socket can be entered by
# all, which a private OUTDIR (mode 700) is not: --force makes that a
# warning.  As a daemon (no --foreground) it writes its pid file and log,
# and returns once the socket is there.
chmod 755 "$mu"
if ! mungekey --create --keyfile="$mu/munge.key" >"$mu/mungekey.log" 2>&1; then
    why="mungekey failed: $(cat "$mu/mungekey.log")"
elif ! munged --force --socket="$mu/munge.sock" --key-file="$mu/munge.key" \
        --pid-file="$mu/munged.pid" --log-file="$mu/munged.log" \
        --seed-file="$mu/munged.seed" >"$mu/munged.stderr" 2>&1; then
    why="munged did not start: $(cat "$mu/munged.stderr")"
elif ! munge --socket="$mu/munge.sock" --no-input 2>"$mu/munge.err" |
        unmunge --socket="$mu/munge.sock" >"$mu/unmunge.out" 2>&1; then
    why="no credential through $mu/munge.sock: $(cat "$mu/munge.err" "$mu/unmunge.out")"
else
    up=0
fi

if [ $up -eq 0 ]; then
    # NodeName=HOST CPUs=... Boards=... SocketsPerBoard=... CoresPerSocket=...
    # ThreadsPerCore=... RealMemory=..., this machine as slurmd sees it.
    node=$(slurmd -C 2>/dev/null | grep -m 1 '^NodeName=')
    nodename=${node%% *}; nodename=${nodename#NodeName=}
    [ -n "$nodename" ] || { up=1; why="slurmd -C did not describe this machine: $(slurmd -C 2>&1 | head -n 5)"; }
fi
if [ $up -eq 0 ]; then
    cat > "$SLURM_CONF" <<EOF
# A private one-node cluster for interop/slurm-cluster.sh (written by it).
ClusterName=linklab-test
# Loopback of this network namespace only, so any ports are free: not
# the default 6817/6818 all the same.
SlurmctldHost=localhost
SlurmctldPort=7817
SlurmdPort=7818
SlurmUser=root
SlurmdUser=root
# The private munged, for the daemons and every client command alike.
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$mu/munge.sock
StateSaveLocation=$sl/state
SlurmdSpoolDir=$sl/spool
SlurmctldPidFile=$sl/slurmctld.pid
SlurmdPidFile=$sl/slurmd.pid
SlurmctldLogFile=$sl/slurmctld.log
SlurmdLogFile=$sl/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# Not Debian's /etc/slurm/plugstack.conf.
PlugStackConfig=$sl/plugstack.conf
# No cgroups, no accounting, no MPI.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
MpiDefault=none
MailProg=/bin/true
SwitchType=switch/none
# The node comes up idle when slurmd registers, whatever its last state.
ReturnToService=2
# Finished jobs stay visible to scontrol show job for 10 minutes.
MinJobAge=600
# This machine, as slurmd -C sees it.
$node NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=main Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
    : > "$sl/plugstack.conf"
    slurmctld -D -f "$SLURM_CONF" >"$sl/slurmctld.stderr" 2>&1 &
    ctld=$!
    slurmd -D -f "$SLURM_CONF" -N "$nodename" >"$sl/slurmd.stderr" 2>&1 &
    slurmd_pid=$!
    state=""
    for _ in $(seq 120); do
        state=$(sinfo -h -o %t 2>/dev/null)
        [ "$state" = idle ] && break
        if ! kill -0 "$ctld" 2>/dev/null || ! kill -0 "$slurmd_pid" 2>/dev/null; then
            state="down: a daemon exited"; break
        fi
        sleep 0.5
    done
    [ "$state" = idle ] || { up=1; why="the node is not idle within 60 s: ${state:-no answer from slurmctld}"; }
fi
if [ $up -eq 0 ]; then
    cpus=${node#*CPUs=}; mem=${node#*RealMemory=}
    result slurm-up 0 "node $nodename (${cpus%% *} CPUs, ${mem%% *} MB) idle $((SECONDS - start)) s after munged started"
else
    result slurm-up 1 "($why)"
    slurm_logs
    echo "array-and-merge FAIL (not run: no cluster)"
    echo "byte-for-byte FAIL (not run: no cluster)"
    echo "slurm-cluster: FAILED (output in $out)"
    exit 1
fi

# --- the experiment ----------------------------------------------------
# SIM OPTIONS are words.
read -r -a opts <<< "$extra"

echo "--- unsharded: $linklab ${file/#$repo\//} ${opts[*]}"
start=$SECONDS
if [ "$file" = reproduce ]; then
    "$linklab" reproduce --out "$out/whole" "${opts[@]}" >"$out/whole.log" 2>&1
else
    "$linklab" sim "$file" --out "$out/whole" "${opts[@]}" >"$out/whole.log" 2>&1
fi
whole_rc=$?
echo "exit status $whole_rc in $((SECONDS - start)) s"
[ $whole_rc -eq 0 ] || tails "$out/whole.log"

echo "--- dist/slurm/submit.sh ${file/#$repo\//} $shards $cluster -- ${opts[*]}"
start=$SECONDS
ids=$(LINKLAB=$linklab bash "$repo/dist/slurm/submit.sh" "$file" "$shards" "$cluster" -- "${opts[@]}" 2>"$out/submit.err")
submit_rc=$?
echo "$ids"
array="" merge=""
if [ $submit_rc -eq 0 ] && [[ $ids =~ ^array\ ([0-9]+)\ merge\ ([0-9]+)$ ]]; then
    array=${BASH_REMATCH[1]} merge=${BASH_REMATCH[2]}
fi

job_state() { # JOBID: the JobState of each record, one a line
    scontrol -o show job "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | cut -d= -f2
}
ok=1 detail=""
if [ -z "$merge" ]; then
    detail="(submit.sh exit status $submit_rc, printed '$ids': $(cat "$out/submit.err"))"
else
    mstate=""
    while [ $((SECONDS - start)) -lt "$limit" ]; do
        mstate=$(job_state "$merge")
        [[ $mstate =~ ^($terminal)$ ]] && break
        sleep 0.5
    done
    took=$((SECONDS - start))
    # Each task of the array is a record: "ArrayTaskId=I ... JobState=S".
    tasks=$(scontrol -o show job "$array" 2>/dev/null |
        sed -n 's/.*ArrayTaskId=\([0-9-]*\) .*JobState=\([A-Z_]*\) .*/\1:\2/p' | sort -n | tr '\n' ' ' | sed 's/ $//')
    done_tasks=$(scontrol -o show job "$array" 2>/dev/null | grep -c 'JobState=COMPLETED ')
    parts=0
    for ((i = 0; i < shards; i++)); do
        [ -n "$(ls -A "$cluster/part-$i" 2>/dev/null)" ] && parts=$((parts + 1))
    done
    if [ "$mstate" = COMPLETED ] && [ "$done_tasks" -eq "$shards" ] && [ "$parts" -eq "$shards" ]; then
        ok=0
        detail="array $array ($shards tasks) and merge $merge COMPLETED in $took s"
    else
        detail="(after $took s: merge $merge ${mstate:-unknown}; array $array tasks $tasks; $parts of $shards part directories written)"
    fi
fi
result array-and-merge $ok "$detail"
if [ $ok -ne 0 ]; then
    [ -z "$merge" ] || scontrol show job "$array" "$merge" 2>&1 | grep -E 'JobId=|JobState=|ExitCode'
    tails "$cluster"/logs/*.out
    slurm_logs
fi

if [ $whole_rc -ne 0 ]; then
    result byte-for-byte 1 "(the unsharded run failed, exit status $whole_rc; $out/whole.log)"
elif [ ! -d "$cluster/merged" ]; then
    result byte-for-byte 1 "(no $cluster/merged)"
else
    # `linklab reproduce` writes its run times into summary.json (its
    # "timing" member) and report.html, which no two runs share: there
    # summary.json is compared without them and report.html (made from
    # the same numbers) not at all.
    skip=() note=""
    if [ "$file" = reproduce ]; then
        skip=(-x report.html -x summary.json)
        note="; summary.json identical but for its timing; report.html not compared (run times)"
        untimed() { python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); d.pop("timing", None); print(json.dumps(d, indent=1))' "$1"; }
        diff <(untimed "$out/whole/summary.json") <(untimed "$cluster/merged/summary.json") > "$out/diff.txt" 2>&1
        same=$?
    else
        : > "$out/diff.txt"; same=0
    fi
    diff -r "${skip[@]}" "$out/whole" "$cluster/merged" >> "$out/diff.txt" 2>&1 || same=1
    if [ $same -eq 0 ]; then
        n=$(($(find "$out/whole" -type f | wc -l) - ${#skip[@]} / 2))
        result byte-for-byte 0 "$n files identical in $out/whole and $cluster/merged$note"
    else
        result byte-for-byte 1 "($out/whole and $cluster/merged differ)"
        head -n 60 "$out/diff.txt"
    fi
fi

if [ $fail -eq 0 ]; then echo "slurm-cluster: all checks passed"; else echo "slurm-cluster: FAILED (output in $out)"; fi
exit $fail
