#!/bin/bash
# The kernel's own IP stack over `linklab station`'s [[tun]] tables, next
# to the station's other services on the same port: two stations, each
# in a network namespace of its own (made here, removed at exit), each
# with a TUN device ax0, joined through an emulated radio channel
# (`linklab channel`, in the script's own namespace) whose stations they
# reach through the channel's pseudo-terminals (`kiss =
# "serial:/dev/pts/N:BAUD"`: a pty crosses network namespaces, loopback
# TCP does not).
#
#   interop/station-tun.sh -l LINKLAB [-o OUTDIR] [-m vc|datagram] [-S SEED]
#
# The channel: 4 stations, 115200 bit/s, TXDELAY 10 ms, TXTAIL 10 ms,
# slot 10 ms. s0: station A (namespace A): [[tun]] ax0 44.128.0.1/24
# (callsign N0TA), an [agw] server on A's loopback, a [[service]] echo
# builtin N0CALL-4, a control socket. s1: station B (namespace B): [[tun]]
# ax0 44.128.0.2/24 (N0TB). s2: `linklab listen --kiss` (N0LIS-1), s3:
# `linklab connect --kiss` (N0ECH-9), both in the script's namespace. In
# VC mode the port is modulo 128 with N1 256 and the MTU 1280, so every
# full datagram is cut by the AX.25 segmenter, and IPv6 (fd00::1/64,
# fd00::2/64, static neighbours) runs too; in datagram mode (UI frames)
# the MTU is 256 and IPv6 is left out.
#   ping4       ping -c 3 44.128.0.2 from A: 3 replies
#   ping6       ping -6 -c 3 fd00::2 from A (VC mode): 3 replies
#   nc-ab       100 KB of random octets through nc, A to B, byte-exact
#               (sha256), while the next two run on the same port:
#   agw         `linklab send --station` to A's AGWPE server (in namespace
#               A) sends 20 KB to the `linklab listen` on s2: byte-exact
#   echo        `linklab connect` on s3 to the echo service N0CALL-4: a
#               line comes back
#   overlap     the AGWPE transfer and the call ran while nc-ab did
#   nc-ba       100 KB through nc, B to A, byte-exact
#   status      `linklab status --json` of A: ax0 with datagrams both
#               ways, no drops, the echo service and the port
#   released    SIGTERM to A, then to B: each exits 0, and no ax0 is left
#               in either namespace
# Needs root, iproute2, iputils-ping, netcat-openbsd, python3. Exits
# non-zero on any failure.
set -u

here=$(cd "$(dirname "$0")" && pwd)
. "$here/netns-lib.sh"
netns_need station-tun "apt-get install iproute2 iputils-ping netcat-openbsd python3" \
    ip ping nc ss sha256sum python3
netns_enter STATION_TUN_IN_NETNS 150 "$@"

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
[ -x "$linklab" ] || { echo "station-tun: -l LINKLAB must name the linklab binary" >&2; exit 2; }
[ -n "$out" ] || out=$(mktemp -d /tmp/station-tun.XXXXXX)
mkdir -p "$out"

netns_lo
netns_pids
nsa="llst-$$-a"; nsb="llst-$$-b"
cleanup() {
    netns_cleanup
    ip netns del "$nsa" 2>/dev/null
    ip netns del "$nsb" 2>/dev/null
}
trap cleanup EXIT
for ns in "$nsa" "$nsb"; do
    ip netns add "$ns" && ip -n "$ns" link set lo up ||
        { echo "station-tun: cannot make network namespace $ns"; exit 1; }
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
# wait_listen NS PORT: until a TCP socket listens on PORT in NS (10 s)
wait_listen() {
    for _ in $(seq 100); do
        [ -n "$(ip netns exec "$1" ss -Hltn "sport = :$2")" ] && return 0
        sleep 0.1
    done
    return 1
}
sha() { sha256sum < "$1" | cut -c1-16; }

timeout 140 "$linklab" channel --stations 4 --base-port 0 --pty --bitrate 115200 \
    --txdelay-ms 10 --txtail-ms 10 --slot-ms 10 --seed "$seed" \
    --stats-json "$out/stats.json" > "$out/channel.out" 2> "$out/channel.log" &
chan=$!; pids+=($chan)
wait_line "$out/channel.out" "^channel ready" 10 ||
    { echo "station-tun: the channel never started (see $out/channel.log)"; exit 1; }
pty() { sed -n "s/^station s$1: .*, pty //p" "$out/channel.out"; }
tcp() { sed -n "s/^station s$1: kiss tcp \\([^,]*\\),.*/\\1/p" "$out/channel.out"; }

if [ "$mode" = vc ]; then
    portkeys='mod128 = true
n1 = 256'
    mtu=1280
else
    portkeys=''
    mtu=256
fi
# station_file PTY CALL N PEER_CALL PEER_N EXTRA
station_file() {
    local v6="" n6=""
    if [ "$mode" = vc ]; then
        v6=", \"fd00::$3/64\""
        n6="neighbours = { \"fd00::$5\" = \"$4\" }"
    fi
    cat <<EOF
[station]
control = "$out/station-$2.sock"

[[port]]
name = "radio"
kiss = "serial:$1:115200"
$portkeys

[[tun]]
port = "radio"
name = "ax0"
callsign = "$2"
addresses = ["44.128.0.$3/24"$v6]
mode = "$mode"
mtu = $mtu
$n6
$6
EOF
}
station_file "$(pty 0)" N0TA 1 N0TB 2 '
[agw]
listen = "127.0.0.1:8000"

[[service]]
callsign = "N0CALL-4"
builtin = "echo"' > "$out/station-N0TA.toml"
station_file "$(pty 1)" N0TB 2 N0TA 1 '' > "$out/station-N0TB.toml"

# (`ip netns exec` execs linklab, so $! is linklab itself: the SIGTERM
# below reaches it alone; the script's own time limit bounds it.)
station() { # NS CALL
    ip netns exec "$1" "$linklab" station --config "$out/station-$2.toml" \
        > "$out/station-$2.out" 2> "$out/station-$2.log" &
}
station "$nsa" N0TA; sa=$!; pids+=($sa)
station "$nsb" N0TB; sb=$!; pids+=($sb)
for c in N0TA N0TB; do
    wait_line "$out/station-$c.log" "TNC .*connected" 10 ||
        { echo "station-tun: station $c never came up:"; cat "$out/station-$c.log"; exit 1; }
done
grep -q "ax0 up" "$out/station-N0TA.log" ||
    { echo "station-tun: station A has no ax0:"; cat "$out/station-N0TA.log"; exit 1; }
echo "station-tun: $mode mode, output in $out"

name=ping4; start
ip netns exec "$nsa" ping -c 3 -W 10 44.128.0.2 > "$out/$name.log" 2>&1
got=$(grep -c "bytes from 44.128.0.2" "$out/$name.log")
result "$name" "$([ "$got" = 3 ] && echo 1)" "$got of 3 replies"

if [ "$mode" = vc ]; then
    name=ping6; start
    ip netns exec "$nsa" ping -6 -c 3 -W 10 fd00::2 > "$out/$name.log" 2>&1
    got=$(grep -c "bytes from fd00::2" "$out/$name.log")
    result "$name" "$([ "$got" = 3 ] && echo 1)" "$got of 3 replies"
fi

# nc A to B, and on the same port meanwhile an AGWPE transfer and a call
# to the echo service.
"$linklab" listen --kiss "tcp:$(tcp 2)" --mycall N0LIS-1 --out "$out/agw.out" --once \
    > /dev/null 2> "$out/listen.log" &
lis=$!; pids+=($lis)
wait_line "$out/listen.log" "listening on" 10 ||
    { echo "station-tun: linklab listen never started:"; cat "$out/listen.log"; exit 1; }
head -c 102400 /dev/urandom > "$out/nc-ab.in"
head -c 20480 /dev/urandom > "$out/agw.in"
ip netns exec "$nsb" timeout 90 nc -l -p 5000 > "$out/nc-ab.out" 2> "$out/nc-ab.server.log" &
srv=$!; pids+=($srv)
wait_listen "$nsb" 5000 || echo "  nc never listened in B"
name=nc-ab; start; t_nc=$t0
# (Each in a subshell that notes when it ended and how.)
(
    ip netns exec "$nsa" timeout 90 nc -q 2 -w 60 44.128.0.2 5000 < "$out/nc-ab.in" \
        2> "$out/nc-ab.client.log"
    date +%s.%N > "$out/nc-ab.end"
) &
cli=$!; pids+=($cli)
t_snd=$(date +%s.%N)
(
    ip netns exec "$nsa" timeout 90 "$linklab" send --station 127.0.0.1:8000 --mycall N0SND-1 \
        --to N0LIS-1 "$out/agw.in" > "$out/agw.send.out" 2> "$out/agw.send.log"
    echo $? > "$out/agw.send.rc"
    date +%s.%N > "$out/agw.end"
) &
snd=$!; pids+=($snd)

mkfifo "$out/echo.in"
timeout 60 "$linklab" connect --kiss "tcp:$(tcp 3)" --mycall N0ECH-9 N0CALL-4 \
    < "$out/echo.in" > "$out/echo.out" 2> "$out/echo.log" &
ech=$!; pids+=($ech)
exec 5> "$out/echo.in"
echo_ok=0
if wait_line "$out/echo.log" "connected to N0CALL-4" 30; then
    echo "echo me $$" >&5
    wait_line "$out/echo.out" "echo me $$" 30 && echo_ok=1
fi
exec 5>&-
wait "$ech"
t_echo=$(date +%s.%N)

wait "$cli"
wait "$srv"
t_nc_end=$(cat "$out/nc-ab.end")
ok=0; cmp -s "$out/nc-ab.in" "$out/nc-ab.out" && ok=1
result "$name" "$ok" "$(stat -c %s "$out/nc-ab.out") of 102400 octets, sha256 $(sha "$out/nc-ab.out") (sent $(sha "$out/nc-ab.in"))"

name=agw; t0=$t_snd
wait "$snd"
sent=$(cat "$out/agw.send.rc")
t_snd_end=$(cat "$out/agw.end")
wait "$lis"
ok=0; [ "$sent" = 0 ] && cmp -s "$out/agw.in" "$out/agw.out" && ok=1
result "$name" "$ok" "$(stat -c %s "$out/agw.out" 2>/dev/null || echo 0) of 20480 octets through A's AGWPE server, sha256 $(sha "$out/agw.out" 2>/dev/null) (sent $(sha "$out/agw.in"))"

name=echo; t0=$t_snd
result "$name" "$echo_ok" "$(head -c 60 "$out/echo.out" | tr '\r\n' '  ')"

name=overlap; t0=$t_nc
ok=$(awk -v a="$t_nc" -v ae="$t_nc_end" -v b="$t_snd" -v be="$t_snd_end" -v e="$t_echo" \
    'BEGIN{print (b < ae && be > a && e < ae) ? 1 : 0}')
result "$name" "$ok" "$(awk -v a="$t_nc" -v ae="$t_nc_end" -v b="$t_snd" -v be="$t_snd_end" -v e="$t_echo" \
    'BEGIN{printf "nc %.1f-%.1f s, AGWPE %.1f-%.1f s, echo done at %.1f s", 0, ae-a, b-a, be-a, e-a}')"

name=nc-ba; start
head -c 102400 /dev/urandom > "$out/nc-ba.in"
ip netns exec "$nsa" timeout 60 nc -l -p 5001 > "$out/nc-ba.out" 2> "$out/nc-ba.server.log" &
srv=$!; pids+=($srv)
wait_listen "$nsa" 5001 || echo "  nc never listened in A"
ip netns exec "$nsb" timeout 60 nc -q 2 -w 60 44.128.0.1 5001 < "$out/nc-ba.in" 2> "$out/nc-ba.client.log"
wait "$srv"
ok=0; cmp -s "$out/nc-ba.in" "$out/nc-ba.out" && ok=1
result "$name" "$ok" "$(stat -c %s "$out/nc-ba.out") of 102400 octets, sha256 $(sha "$out/nc-ba.out") (sent $(sha "$out/nc-ba.in"))"

name=status; start
"$linklab" status --json --control "$out/station-N0TA.sock" > "$out/status.json" 2> "$out/status.log"
detail=$(python3 - "$out/status.json" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
t = [t for t in s["tuns"] if t["name"] == "ax0"]
ok = (len(t) == 1 and t[0]["from_kernel"] > 0 and t[0]["to_kernel"] > 0
      and t[0]["dropped"] == 0 and len(s["ports"]) == 1
      and any(v["callsign"] == "N0CALL-4" for v in s["services"]) and bool(s["agw"]))
t = t[0] if t else {}
print(int(ok), "ax0 %s %s from_kernel %s to_kernel %s dropped %s links %s; agw %s, %d services" % (
    t.get("callsign"), t.get("mode"), t.get("from_kernel"), t.get("to_kernel"),
    t.get("dropped"), t.get("links"), s.get("agw"), len(s["services"])))
EOF
)
result "$name" "${detail%% *}" "${detail#* }"

# One after the other: A releases its links (DISC, B answers UA), then B.
name=released; start; ok=1
kill -TERM "$sa"
wait "$sa" || { ok=0; echo "  station A exited with $?"; }
kill -TERM "$sb"
wait "$sb" || { ok=0; echo "  station B exited with $?"; }
for ns in "$nsa" "$nsb"; do
    ip -n "$ns" link show ax0 > /dev/null 2>&1 && { ok=0; echo "  ax0 is left in $ns"; }
done
grep -q "stopped" "$out/station-N0TA.log" || ok=0
result "$name" "$ok" "both exited 0, no ax0 left: $(grep -c . "$out/station-N0TA.log") log lines from A"

kill -INT "$chan"; wait "$chan"
exit "$fail"
