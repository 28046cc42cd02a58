#!/bin/bash
# linklab against an independent AX.25 stack from PyPI, aioax25 (pinned
# below), driven by interop/ax25_pypeer.py, over KISS TCP: two stations, A
# and B, on a KISS hub this script starts in a network namespace of its own,
# or on KISS ports already listening on 127.0.0.1.
#
#   interop/pypeer.sh -l LINKLAB [-o OUTDIR] [-n COUNT] [-V VENV]
#                     [-H 'HUB COMMAND' | -k PORT_A[,PORT_B]]
#
# -H  the hub: a command run in the background, with {A} and {B} replaced by
#     the two stations' KISS TCP ports (8301 and 8302 in the namespace); a
#     command without {B} is a shared hub, B's port is A's. Default:
#     'greflector kiss,tcp,127.0.0.1,{A}' (gensio-bin).
# -k  use KISS ports already listening on 127.0.0.1 (no namespace, no hub).
# -V  the virtualenv; by default one under ~/.cache/linklab-pypeer keyed by
#     the Python version and the pins, made (from PyPI) on first use.
#
# Checks, COUNT (20) UI frames each (PID F0, distinct payloads):
#   ui-py-to-py     ax25_pypeer ui-send on A, ax25_pypeer ui-recv on B
#   ui-py-to-py-ba  the same from B to A
#   ui-py-to-linklab  ax25_pypeer ui-send on A; `linklab listen --monitor`
#                   on B must show every frame as <UI C> [F0] with its text
#   ui-linklab-to-py  `linklab encode --ui ... --format kiss` frames written
#                   to A, ax25_pypeer ui-recv on B gets every one
#   decode          (shared hub only) the stream recorded by a listen-only
#                   client (kiss_tap.py) decodes in `linklab decode` with no
#                   undecodable frame and holds 4 x COUNT UI frames
# No connected mode: no aioax25 release on PyPI (0.0.11.post0 is the newest)
# has it. Needs python3 (venv, pip reaching PyPI on first use), and for the
# default hub root (unshare), iproute2 and gensio-bin. Exits non-zero on any
# failure.
set -u

here=$(cd "$(dirname "$0")" && pwd)
. "$here/netns-lib.sh"

pins=(aioax25==0.0.11.post0 pyserial==3.5 pyserial-asyncio==0.6
      signalslot==0.2.0 contexter==0.1.4 six==1.17.0)

usage() {
    echo "usage: $0 -l LINKLAB [-o OUTDIR] [-n COUNT] [-V VENV] [-H 'HUB {A} {B}' | -k PORT_A[,PORT_B]]" >&2
    exit 2
}
out=""; count=20; linklab=""; venv=""; ports=""
hub='greflector kiss,tcp,127.0.0.1,{A}'
args=("$@")
while [ $# -gt 0 ]; do
    case "$1" in
        -o) out=$2; shift 2 ;;
        -n) count=$2; shift 2 ;;
        -l) linklab=$2; shift 2 ;;
        -V) venv=$2; shift 2 ;;
        -H) hub=$2; shift 2 ;;
        -k) ports=$2; shift 2 ;;
        *) usage ;;
    esac
done
set -- "${args[@]}"
[ -x "$linklab" ] || { echo "pypeer: -l LINKLAB must name the linklab binary" >&2; exit 2; }
netns_need pypeer "apt-get install python3 python3-venv" python3

# The virtualenv, made before entering the namespace (which has no network).
if [ -z "$venv" ]; then
    pyver=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    key=$(printf '%s\n' "${pins[@]}" | cksum | cut -d' ' -f1)
    venv="${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/linklab-pypeer/py$pyver-${pins[0]#*==}-$key"
fi
if [ ! -e "$venv/.complete" ]; then
    mkdir -p "$(dirname "$venv")"
    (
        flock 9 # two runs at once make it once
        [ -e "$venv/.complete" ] && exit 0
        rm -rf "$venv"
        echo "pypeer: making $venv: ${pins[*]}"
        python3 -m venv "$venv" &&
            timeout 300 "$venv/bin/pip" install -q --disable-pip-version-check "${pins[@]}" &&
            touch "$venv/.complete"
    ) 9> "$venv.lock" || { echo "pypeer: could not make the virtualenv $venv" >&2; exit 2; }
fi
py="$venv/bin/python"
peer() { "$py" "$here/ax25_pypeer.py" "$@"; }

if [ -z "$ports" ]; then
    netns_need pypeer "apt-get install gensio-bin iproute2" "${hub%% *}" unshare ip
    netns_enter PYPEER_IN_NETNS 180 "$@"
    netns_lo --gensio-addr
    a=8301; b=8302
    case "$hub" in *'{B}'*) ;; *) b=$a ;; esac
else
    a=${ports%,*}; b=${ports#*,}
fi
[ -n "$out" ] || out=$(mktemp -d /tmp/linklab-pypeer.XXXXXX)
mkdir -p "$out"
netns_pids

# wait_line FILE PATTERN SECONDS: until grep finds PATTERN in FILE
wait_line() {
    for _ in $(seq $(( $3 * 10 ))); do
        grep -q "$2" "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}

if [ -z "$ports" ]; then
    hubcmd=${hub//\{A\}/$a}; hubcmd=${hubcmd//\{B\}/$b}
    echo "pypeer: hub: $hubcmd"
    timeout 170 bash -c "exec $hubcmd" > "$out/hub.log" 2>&1 & pids+=($!)
fi
wait_port "$a" 5 && wait_port "$b" 5 ||
    { echo "pypeer: no KISS TCP port at 127.0.0.1:$a and :$b (see $out/hub.log)" >&2; exit 1; }
tap=""
if [ "$a" = "$b" ]; then
    timeout 170 python3 "$here/kiss_tap.py" 127.0.0.1 "$a" "$out/hub.kiss" & tap=$!; pids+=($tap)
fi

fail=0
t0=0
start() { t0=$(date +%s.%N); }
# result NAME OK DETAIL
result() {
    local res=PASS
    [ "$2" = 1 ] || { res=FAIL; fail=1; }
    printf '%-18s %s %6ss  %s\n' "$1" "$res" \
        "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2f", b-a}')" "$3"
}

# ui_py NAME FROM_PORT FROM TO_PORT TO: ax25_pypeer to ax25_pypeer
ui_py() {
    local name=$1 pa=$2 from=$3 pb=$4 to=$5 ok=1 rc_s rc_r
    start
    peer --kiss "127.0.0.1:$pb" ui-recv --mycall "$to" --count "$count" --timeout 30 \
        > "$out/$name.recv" 2> "$out/$name.recv.log" & local r=$!; pids+=($r)
    wait_line "$out/$name.recv.log" listening 10
    peer --kiss "127.0.0.1:$pa" ui-send --mycall "$from" --to "$to" --count "$count" \
        --text "$name" --timeout 30 > "$out/$name.send" 2> "$out/$name.send.log"
    rc_s=$?; wait "$r"; rc_r=$?
    [ "$rc_s" = 0 ] && [ "$rc_r" = 0 ] ||
        { ok=0; echo "  $name: exit codes ui-send=$rc_s ui-recv=$rc_r (logs in $out)"; }
    result "$name" "$ok" "$(grep -c ": $name " "$out/$name.recv") of $count frames"
}

ui_py ui-py-to-py "$a" N0A "$b" N0B
ui_py ui-py-to-py-ba "$b" N0B "$a" N0A

# ax25_pypeer to linklab's KISS receiver and monitor
name=ui-py-to-linklab; start; ok=1
timeout 40 "$linklab" listen --kiss "tcp:127.0.0.1:$b" --mycall N0B --monitor \
    --out "$out/$name.out" > /dev/null 2> "$out/$name.linklab.log" & l=$!; pids+=($l)
wait_line "$out/$name.linklab.log" "listening on" 10
peer --kiss "127.0.0.1:$a" ui-send --mycall N0A --to N0B --count "$count" --text "$name" \
    --timeout 30 > "$out/$name.send" 2> "$out/$name.send.log" ||
    { ok=0; echo "  $name: ui-send failed (logs in $out)"; }
wait_line "$out/$name.linklab.log" "<UI C> \[F0\] $name $count/$count" 10
kill "$l" 2>/dev/null; wait "$l" 2>/dev/null
got=$(grep -c "^RX .* N0A>N0B: <UI C> \[F0\] $name [0-9]*/$count\$" "$out/$name.linklab.log")
[ "$got" = "$count" ] || { ok=0; echo "  $name: linklab showed $got of $count frames (see $out/$name.linklab.log)"; }
result "$name" "$ok" "$got of $count frames"

# linklab's encoder to ax25_pypeer
name=ui-linklab-to-py; start; ok=1
for i in $(seq "$count"); do
    "$linklab" encode --from N0A --to N0B --ui "$name $i/$count" --format kiss
done > "$out/$name.kiss"
peer --kiss "127.0.0.1:$b" ui-recv --mycall N0B --count "$count" --timeout 30 \
    > "$out/$name.recv" 2> "$out/$name.recv.log" & r=$!; pids+=($r)
wait_line "$out/$name.recv.log" listening 10
timeout 10 python3 -c 'import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(open(sys.argv[2], "rb").read()); time.sleep(0.5); s.close()' "$a" "$out/$name.kiss" ||
    { ok=0; echo "  $name: could not write to 127.0.0.1:$a"; }
wait "$r" || { ok=0; echo "  $name: ui-recv failed (logs in $out)"; }
result "$name" "$ok" "$(grep -c ": $name " "$out/$name.recv") of $count frames"

if [ -n "$tap" ]; then
    name=decode; start; ok=1
    sleep 0.3; kill "$tap" 2>/dev/null; wait "$tap" 2>/dev/null
    "$linklab" decode --format kiss "$out/hub.kiss" > "$out/hub.txt" 2>&1
    grep -q 'undecodable\|bad KISS' "$out/hub.txt" &&
        { ok=0; echo "  $name: linklab could not decode some frames (see $out/hub.txt)"; }
    frames=$(wc -l < "$out/hub.txt"); ui=$(grep -c '<UI C> \[F0\]' "$out/hub.txt")
    [ "$frames" = $((4 * count)) ] && [ "$ui" = "$frames" ] ||
        { ok=0; echo "  $name: $frames frames, $ui of them UI commands; expected $((4 * count)) (see $out/hub.txt)"; }
    result "$name" "$ok" "frames=$frames UI=$ui"
fi

[ "$fail" = 0 ] && echo "pypeer: all checks passed" || echo "pypeer: FAILED (output in $out)"
exit $fail
