#!/bin/bash
# TCP/IP over a real modem path: two `linklab ip` processes, each the KISS
# client of one of two Dire Wolf 1.6 instances joined by a software audio
# cable (interop/direwolf-lib.sh, interop/audio_relay.py), 9600 bd, in a
# network namespace of its own (loopback only).
#
#   interop/linklab-ip-direwolf.sh -l LINKLAB [-o OUTDIR] [-s BYTES]
#
#   A: Dire Wolf N0CALL-3, KISS TCP 8011 -- linklab ip N0CALL-1, 44.0.0.1
#   B: Dire Wolf N0CALL-4, KISS TCP 8021 -- linklab ip N0CALL-2, 44.0.0.2
#
# Runs (each with freshly started Dire Wolf instances and relay), in VC
# mode (ARP) and datagram mode (static neighbours): B serves one TCP
# transfer; A pings it three times, then sends BYTES (default 5120).
# Checks per run: every program exits 0, every ping is answered, the
# received file equals the one sent (cmp). One PASS/FAIL line per run with
# the round trips and the goodput; exit status non-zero on any failure.
# Needs root (unshare), direwolf, python3, iproute2. About a minute.
set -u

here=$(cd "$(dirname "$0")" && pwd)
. "$here/netns-lib.sh"
netns_need linklab-ip-direwolf "apt-get install direwolf python3" direwolf python3
netns_enter LINKLAB_IPDW_IN_NETNS 240 "$@"

out=""; baud=9600; size=5120; linklab=""
while [ $# -gt 0 ]; do
    case "$1" in
        -o) out=$2; shift 2 ;;
        -s) size=$2; shift 2 ;;
        -l) linklab=$2; shift 2 ;;
        *) echo "usage: $0 -l LINKLAB [-o OUTDIR] [-s BYTES]" >&2; exit 2 ;;
    esac
done
[ -x "$linklab" ] || { echo "linklab-ip-direwolf: -l LINKLAB must name the linklab binary" >&2; exit 2; }
[ -n "$out" ] || out=$(mktemp -d /tmp/linklab-ip-direwolf.XXXXXX)
mkdir -p "$out"; out=$(cd "$out" && pwd)
linklab=$(cd "$(dirname "$linklab")" && pwd)/$(basename "$linklab")

. "$here/direwolf-lib.sh"
dw_mkconf A N0CALL-3 8011 8010 || exit 2
dw_mkconf B N0CALL-4 8021 8020
netns_lo

# The AX.25 timers of interop/linklab-direwolf.sh at 9600 bd (T1 4 s from
# the hand-over to Dire Wolf, 4 I frames a window, P on the last); a TCP
# window of 4 segments of 216 octets, so that a window fits in one
# transmission.
opts=(--window 4 --t1-ms 4000 --poll-last --tcp-window 864 --timeout 60)
budget=$(( size * 8 * 4 / baud + 40 ))
head -c "$size" /dev/urandom > "$out/data.bin"

netns_pids

fail=0
# run NAME MODE
run() {
    local name=$1 mode=$2 p="$out/$1"
    local n1=() n2=()
    if [ "$mode" = datagram ]; then
        n1=(--no-arp --neighbour 44.0.0.2=N0CALL-2)
        n2=(--no-arp --neighbour 44.0.0.1=N0CALL-1)
    fi
    dw_start "$name." $((budget + 30)) 0 1 || { echo "$name FAIL (Dire Wolf did not start)"; fail=1; netns_cleanup; return; }
    timeout "$budget" "$linklab" ip --kiss tcp:127.0.0.1:8021 --mycall N0CALL-2 --addr 44.0.0.2/24 \
        --mode "$mode" "${opts[@]}" "${n2[@]}" --monitor serve --port 5001 --count 1 --out "$p.out" \
        > "$p.serve.out" 2> "$p.serve.log" &
    local server=$!; pids+=($server)
    sleep 0.5
    local rc_p rc_s rc_v t0 t1
    t0=$(date +%s.%N)
    timeout 40 "$linklab" ip --kiss tcp:127.0.0.1:8011 --mycall N0CALL-1 --addr 44.0.0.1/24 \
        --mode "$mode" "${opts[@]}" "${n1[@]}" --monitor ping 44.0.0.2 -c 3 -i 1 -W 10 \
        > "$p.ping.out" 2> "$p.ping.log"
    rc_p=$?
    timeout "$budget" "$linklab" ip --kiss tcp:127.0.0.1:8011 --mycall N0CALL-1 --addr 44.0.0.1/24 \
        --mode "$mode" "${opts[@]}" "${n1[@]}" --monitor send "$out/data.bin" 44.0.0.2:5001 \
        > "$p.send.out" 2> "$p.send.log"
    rc_s=$?
    wait "$server"; rc_v=$?
    t1=$(date +%s.%N)
    netns_cleanup
    local ok=1
    [ "$rc_p" = 0 ] && [ "$rc_s" = 0 ] && [ "$rc_v" = 0 ] ||
        { ok=0; echo "  $name: exit codes ping=$rc_p send=$rc_s serve=$rc_v (logs in $out)"; }
    grep -q '3 packets transmitted, 3 received, 0% packet loss' "$p.ping.out" ||
        { ok=0; echo "  $name: ping lost replies: $(grep transmitted "$p.ping.out")"; }
    cmp -s "$out/data.bin" "$p.out" ||
        { ok=0; echo "  $name: received file differs ($(stat -c %s "$p.out" 2>/dev/null || echo 0) of $size bytes)"; }
    [ "$ok" = 1 ] && res=PASS || { res=FAIL; fail=1; }
    printf '%-10s %s %6ss  rtt %s ms; %s; %s\n' "$name" "$res" \
        "$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f", b-a}')" \
        "$(sed -n 's/^rtt min\/avg\/max\/mdev = \([^ ]*\) ms/\1/p' "$p.ping.out")" \
        "$(grep -o 'in [0-9.]* s: goodput [0-9]* bit/s' "$p.send.out")" \
        "$(grep -o '[0-9]* retransmitted' "$p.send.out")"
}

echo "linklab-ip-direwolf: $size bytes at $baud bd, output in $out"
run vc vc
run datagram datagram
[ "$fail" = 0 ] && echo "linklab-ip-direwolf: all runs passed" || echo "linklab-ip-direwolf: FAILED"
exit $fail
