#!/bin/bash
# The kernel's own IP stack and unmodified programs over linklab's AX.25:
# two `linklab ip ... tun ax0` instances, each with its TUN device in a
# network namespace of its own (made here, removed at exit), joined through
# an emulated radio channel (`linklab channel`, in the script's own
# namespace) whose stations they reach through the channel's
# pseudo-terminals (`--kiss serial:/dev/pts/N:BAUD`: a pty crosses network
# namespaces, loopback TCP does not).
#
#   interop/tun-channel.sh -l LINKLAB [-o OUTDIR] [-m vc|datagram] [-S SEED]
#
# The channel: 2 stations, 115200 bit/s, TXDELAY 10 ms, TXTAIL 10 ms,
# slot 10 ms (a fast radio, to keep the run short). Each host: IPv4
# 44.0.0.1/24 and 44.0.0.2/24 (ARP over AX.25), IPv6 fd44::1/64 and
# fd44::2/64 (static neighbours: no neighbour discovery on AX.25), MTU
# 1280 (IPv6's minimum) on a modulo-128 link with N1 256, so every full
# datagram is cut by the AX.25 segmenter (VC mode; in datagram mode the
# MTU is N1 = 256 and IPv6 is left out).
#   ping4       ping -c 3 44.0.0.2 from host A: 3 replies
#   ping6       ping -6 -c 3 fd44::2 (VC mode): 3 replies
#   unreach     ping to 44.0.0.9, which never answers ARP: the kernel's ping
#               shows "Destination Host Unreachable" (ICMP from linklab)
#   nc          100 KB of random octets through nc, A to B, byte-exact
#   iperf3      iperf3 TCP for 8 s, A to B: the receiver got data
#   http        curl from A to `python3 -m http.server` on B: the page
#   released    SIGINT to A, then to B: each releases its links, exits 0
#               and reports its counters, and no ax0 is left in either
#               namespace
# Needs root, iproute2, iputils-ping, netcat-openbsd, iperf3, curl,
# python3. Exits non-zero on any failure.
set -u

here=$(cd "$(dirname "$0")" && pwd)
. "$here/netns-lib.sh"
netns_need tun-channel "apt-get install iproute2 iputils-ping netcat-openbsd iperf3 curl python3" \
    ip ping nc iperf3 curl python3
netns_enter TUN_CHANNEL_IN_NETNS 300 "$@"

out=""; linklab=""; mode=vc; seed=1
while [ $# -gt 0 ]; do
    case "$1" in
        -o) out=$2; shift 2 ;;
        -m) mode=$2; shift 2 ;;
        -S) seed=$2; shift 2 ;;
        -l) linklab=$2; shift 2 ;;
        *) echo "usage: $0 -l LINKLAB [-o OUTDIR] [-m vc|datagram] [-S SEED]" >&2; exit 2 ;;
    esac
done
[ -x "$linklab" ] || { echo "tun-channel: -l LINKLAB must name the linklab binary" >&2; exit 2; }
[ -n "$out" ] || out=$(mktemp -d /tmp/tun-channel.XXXXXX)
mkdir -p "$out"

netns_lo
netns_pids
nsa="llt-$$-a"; nsb="llt-$$-b"
cleanup() {
    netns_cleanup
    ip netns del "$nsa" 2>/dev/null
    ip netns del "$nsb" 2>/dev/null
}
trap cleanup EXIT
for ns in "$nsa" "$nsb"; do
    ip netns add "$ns" && ip -n "$ns" link set lo up ||
        { echo "tun-channel: cannot make network namespace $ns"; exit 1; }
done

fail=0
t0=0
start() { t0=$(date +%s.%N); }
result() { # NAME OK DETAIL
    local res=PASS
    [ "$2" = 1 ] || { res=FAIL; fail=1; }
    printf '%-10s %s %6ss  %s\n' "$1" "$res" \
        "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2f", b-a}')" "$3"
}
# wait_line FILE PATTERN SECONDS
wait_line() {
    for _ in $(seq $(( $3 * 10 ))); do
        grep -q "$2" "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}

timeout 280 "$linklab" channel --stations 2 --base-port 0 --pty --bitrate 115200 \
    --txdelay-ms 10 --txtail-ms 10 --slot-ms 10 --seed "$seed" \
    --stats-json "$out/stats.json" > "$out/channel.out" 2> "$out/channel.log" &
chan=$!; pids+=($chan)
wait_line "$out/channel.out" "^channel ready" 10 ||
    { echo "tun-channel: the channel never started (see $out/channel.log)"; exit 1; }
pty0=$(sed -n 's/^station s0: .*, pty //p' "$out/channel.out")
pty1=$(sed -n 's/^station s1: .*, pty //p' "$out/channel.out")

if [ "$mode" = vc ]; then
    link=(--mod128 --mtu 1280 --n1 256)
else
    link=(--mode datagram --mtu 256)
fi
# host NS PTY CALL N PEER_CALL PEER_N
# (`ip netns exec` execs linklab, so $! is linklab itself: the SIGINT
# below reaches it alone; the script's own time limit bounds it.)
host() {
    local v6=() n6=()
    [ "$mode" = vc ] && { v6=(--add-addr "fd44::$4/64"); n6=(--neighbour "fd44::$6=$5"); }
    ip netns exec "$1" "$linklab" ip --kiss "serial:$2:115200" --mycall "$3" \
        --addr "44.0.0.$4/24" "${n6[@]}" "${link[@]}" --monitor tun ax0 "${v6[@]}" \
        > "$out/host-$3.out" 2> "$out/host-$3.log" &
}
host "$nsa" "$pty0" N0TA 1 N0TB 2; ha=$!; pids+=($ha)
host "$nsb" "$pty1" N0TB 2 N0TA 1; hb=$!; pids+=($hb)
for c in N0TA N0TB; do
    wait_line "$out/host-$c.log" "ax0 up" 10 ||
        { echo "tun-channel: host $c never brought ax0 up:"; cat "$out/host-$c.log"; exit 1; }
done
echo "tun-channel: $mode mode, output in $out"

name=ping4; start
ip netns exec "$nsa" ping -c 3 -W 10 44.0.0.2 > "$out/$name.log" 2>&1
got=$(grep -c "bytes from 44.0.0.2" "$out/$name.log")
result "$name" "$([ "$got" = 3 ] && echo 1)" "$got of 3 replies"

if [ "$mode" = vc ]; then
    name=ping6; start
    ip netns exec "$nsa" ping -6 -c 3 -W 10 fd44::2 > "$out/$name.log" 2>&1
    got=$(grep -c "bytes from fd44::2" "$out/$name.log")
    result "$name" "$([ "$got" = 3 ] && echo 1)" "$got of 3 replies"
fi

# A neighbour that never answers ARP: the kernel's usual answer, ICMP
# "Destination Host Unreachable", from the host's own address.
name=unreach; start
ip netns exec "$nsa" ping -c 5 -i 1 -W 2 44.0.0.9 > "$out/$name.log" 2>&1
got=$(grep -c "Destination Host Unreachable" "$out/$name.log")
result "$name" "$([ "$got" -ge 1 ] && echo 1)" "$got \"Destination Host Unreachable\" for 44.0.0.9"

name=nc; start
head -c 102400 /dev/urandom > "$out/nc.in"
ip netns exec "$nsb" timeout 120 nc -l -p 5000 > "$out/nc.out" 2> "$out/nc.server.log" &
srv=$!; pids+=($srv)
wait_listen "$nsb" 5000 || echo "  nc never listened in B"
ip netns exec "$nsa" timeout 120 nc -q 2 -w 60 44.0.0.2 5000 < "$out/nc.in" 2> "$out/nc.client.log"
wait "$srv"
ok=0; cmp -s "$out/nc.in" "$out/nc.out" && ok=1
result "$name" "$ok" "$(stat -c %s "$out/nc.out") of 102400 octets"

name=iperf3; start
ip netns exec "$nsb" timeout 60 iperf3 -s -1 -B 44.0.0.2 > "$out/iperf3.server.log" 2>&1 &
srv=$!; pids+=($srv)
wait_listen "$nsb" 5201 || echo "  iperf3 never listened in B"
ip netns exec "$nsa" timeout 60 iperf3 -c 44.0.0.2 -t 8 -J > "$out/iperf3.json" 2> "$out/iperf3.client.log"
wait "$srv"
rate=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); e=d["end"]["sum_received"]; print(int(e["bytes"]), int(e["bits_per_second"]))' "$out/iperf3.json" 2>/dev/null)
ok=0; [ -n "$rate" ] && [ "${rate%% *}" -gt 0 ] && ok=1
result "$name" "$ok" "received ${rate%% *} octets at ${rate##* } bit/s"

name=http; start
mkdir -p "$out/www"; echo "linklab tun page $$" > "$out/www/index.html"
ip netns exec "$nsb" timeout 60 python3 -m http.server 8080 --bind 44.0.0.2 --directory "$out/www" \
    > "$out/http.server.log" 2>&1 & srv=$!; pids+=($srv)
page=""
for _ in $(seq 20); do
    page=$(ip netns exec "$nsa" timeout 30 curl -s http://44.0.0.2:8080/index.html) && [ -n "$page" ] && break
    sleep 0.5
done
kill "$srv" 2>/dev/null
result "$name" "$([ "$page" = "linklab tun page $$" ] && echo 1)" "got \"$page\""

# One after the other: A releases its link (DISC, B answers UA), then B,
# with no link left, stops at once. (Both at once may cross their DISCs on
# the half-duplex channel, a keyed radio being deaf; the last to hear the
# other's UA then retries DISC until its release bound.)
name=released; start; ok=1
kill -INT "$ha"
wait "$ha" || { ok=0; echo "  host A exited with $?"; }
kill -INT "$hb"
wait "$hb" || { ok=0; echo "  host B exited with $?"; }
for ns in "$nsa" "$nsb"; do
    ip -n "$ns" link show ax0 > /dev/null 2>&1 && { ok=0; echo "  ax0 is left in $ns"; }
done
grep -q "ax0 removed: " "$out/host-N0TA.log" || ok=0
result "$name" "$ok" "$(sed -n 's/^linklab: ax0 removed: //p' "$out/host-N0TA.log")"

kill -INT "$chan"; wait "$chan"
exit "$fail"
