#!/bin/bash
# The kernel's own IP stack over `linklab station`'s [[tun]] tables, next
# to everything else the station serves, on the same port at the same
# time (AGWPE, DTN, program, TCP and builtin services, beacons, the
# digipeater): two stations, each in a network namespace of its own
# (made here, removed at exit), each with a TUN device ax0, joined
# through an emulated radio channel
# (`linklab channel`, in the script's own namespace) whose stations they
# reach through the channel's pseudo-terminals (`kiss =
# "serial:/dev/pts/N:BAUD"`: a pty crosses network namespaces, loopback
# TCP does not).
#
#   interop/station-tun.sh -l LINKLAB [-o OUTDIR] [-m vc|datagram] [-S SEED]
#
# The channel: 9 stations, 115200 bit/s, TXDELAY 10 ms, TXTAIL 10 ms,
# slot 10 ms. s0: station A (namespace A): [[tun]] ax0 44.128.0.1/24
# (callsign N0TA); its port has the callsign N0TA-1, the alias RELAY and
# digipeat = true; an [agw] server on A's loopback; [[service]]s N0CALL-4
# (builtin echo), N0CALL-2 (a shell script, program = [...]: it greets
# with $LINKLAB_CALLER and answers "got: LINE") and N0CALL-6 (tcp, to a
# python3 line server in namespace A answering in capitals); a
# [[beacon]] every 10 s; a [dtn] node ipn:1.0 (N0CALL-12, its store and
# Unix application socket in OUTDIR, ax25-peers N0CALL-13=ipn:2.*); a
# control socket. s1: station B (namespace B): [[tun]] ax0 44.128.0.2/24
# (N0TB). In the script's namespace: s2 `linklab listen --kiss` (N0LIS-1),
# s3, s5, s6 `linklab connect --kiss` (N0ECH-9, N0SCR-9, N0TCP-9), s4
# `linklab dtn node --kiss serial:PTY` (ipn:2.0, N0CALL-13), s7 the
# monitor (`linklab listen --monitor`, from the start), s8 where a frame
# is injected. In VC mode the port is modulo 128 with N1 256 and the MTU
# 1280, so every full datagram is cut by the AX.25 segmenter, and IPv6
# (fd00::1/64, fd00::2/64, static neighbours) runs too; in datagram mode
# (UI frames) the MTU is 256 and IPv6 is left out. Every check runs in
# both modes.
#   ping4       ping -c 3 44.128.0.2 from A: 3 replies
#   ping6       ping -6 -c 3 fd00::2 from A (VC mode): 3 replies
#   nc-ab       100 KB of random octets through nc, A to B, byte-exact
#               (sha256), while everything down to digi runs on the same
#               port, all started at once:
#   ping-busy   ping -c 3 -w 30 44.128.0.2 from A: 3 replies
#   agw         `linklab send --station` to A's AGWPE server (in namespace
#               A) sends 50 KB to the `linklab listen` on s2: byte-exact
#   dtn         `linklab dtn send --report` through A's node: 20 KB to
#               ipn:2.1 on s4's node, `linklab dtn recv` gets it byte-exact
#               and the report from [ipn:2.0] says delivered
#   echo        `linklab connect` on s3 to the echo service N0CALL-4: a
#               line comes back
#   script      `linklab connect` on s5 to the script N0CALL-2: its
#               greeting names the caller, two lines answered, and the
#               script's exit releases the link
#   tcp-svc     `linklab connect` on s6 to N0CALL-6: the line server's
#               greeting, and a line back in capitals
#   digi        `linklab encode --via RELAY --ui` written to s8's KISS
#               port: the monitor sees it repeated as N0X>APRS,N0TA-1*
#   beacon      the monitor saw at least two beacons from N0TA-1, each
#               10 s (+- 2 s) after the one before
#   overlap     every transfer, call and the digipeated frame ran while
#               nc-ab did, and a beacon went out meanwhile
#   nc-ba       100 KB through nc, B to A, byte-exact
#   status      `linklab status --json` of A: ax0 with datagrams both
#               ways, no drops; each service served once, one frame
#               digipeated, beacons sent, the DTN node running
#   released    SIGTERM to A, then to B: each exits 0, and no ax0 is left
#               in either namespace
# Needs root, iproute2, iputils-ping, netcat-openbsd, python3. Exits
# non-zero on any failure.
set -u

here=$(cd "$(dirname "$0")" && pwd)
. "$here/netns-lib.sh"
netns_need station-tun "apt-get install iproute2 iputils-ping netcat-openbsd python3" \
    ip ping nc ss sha256sum python3
netns_enter STATION_TUN_IN_NETNS 240 "$@"

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
result() { # NAME OK DETAIL [END]: the time is from t0 to END (or now)
    local res=PASS
    [ "$2" = 1 ] || { res=FAIL; fail=1; }
    printf '%-10s %s %6ss  %s\n' "$1" "$res" \
        "$(awk -v a="$t0" -v b="${4:-$(date +%s.%N)}" 'BEGIN{printf "%.2f", b-a}')" "$3"
}
# wait_line FILE PATTERN SECONDS
wait_line() {
    for _ in $(seq $(( $3 * 10 ))); do
        grep -q "$2" "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}
sha() { sha256sum < "$1" | cut -c1-16; }
# caller NAME STATION MYCALL SERVICE GREETING [SAY EXPECT]...: `linklab
# connect` from channel station sSTATION to SERVICE; waits for GREETING
# (unless empty) in what comes back, then sends each SAY and waits for
# its EXPECT, then (with CALLER_END set) for CALLER_END in its log.
# Writes NAME.ok (1 or 0) and NAME.end (when it ended). Run in the
# background.
caller() {
    local name=$1 st=$2 my=$3 svc=$4 greeting=$5 ok=0 fd pid
    shift 5
    mkfifo "$out/$name.in"
    timeout 90 "$linklab" connect --kiss "tcp:$(tcp "$st")" --mycall "$my" "$svc" \
        < "$out/$name.in" > "$out/$name.out" 2> "$out/$name.log" &
    pid=$!
    exec {fd}> "$out/$name.in"
    if wait_line "$out/$name.log" "connected to $svc" 60 &&
        { [ -z "$greeting" ] || wait_line "$out/$name.out" "$greeting" 30; }; then
        ok=1
        while [ $# -ge 2 ]; do
            echo "$1" >&"$fd"
            wait_line "$out/$name.out" "$2" 30 || { ok=0; break; }
            shift 2
        done
        [ -z "${CALLER_END:-}" ] || wait_line "$out/$name.log" "$CALLER_END" 30 || ok=0
    fi
    exec {fd}>&-
    wait "$pid"
    echo "$ok" > "$out/$name.ok"
    date +%s.%N > "$out/$name.end"
}

timeout 230 "$linklab" channel --stations 9 --base-port 0 --pty --bitrate 115200 \
    --txdelay-ms 10 --txtail-ms 10 --slot-ms 10 --seed "$seed" \
    --stats-json "$out/stats.json" > "$out/channel.out" 2> "$out/channel.log" &
chan=$!; pids+=($chan)
wait_line "$out/channel.out" "^channel ready" 10 ||
    { echo "station-tun: the channel never started (see $out/channel.log)"; exit 1; }
pty() { sed -n "s/^station s$1: .*, pty //p" "$out/channel.out"; }
tcp() { sed -n "s/^station s$1: kiss tcp \\([^,]*\\),.*/\\1/p" "$out/channel.out"; }

# The monitor, on s7 from the start: every frame on the air with the
# seconds since it started (at t_mon).
t_mon=$(date +%s.%N)
timeout 230 "$linklab" listen --kiss "tcp:$(tcp 7)" --mycall N0MON --monitor \
    > /dev/null 2> "$out/monitor.log" &
pids+=($!)
wait_line "$out/monitor.log" "listening on" 10 ||
    { echo "station-tun: the monitor never started:"; cat "$out/monitor.log"; exit 1; }

if [ "$mode" = vc ]; then
    portkeys='mod128 = true
n1 = 256'
    mtu=1280
else
    portkeys=''
    mtu=256
fi
# station_file PTY CALL N PEER_CALL PEER_N PORT_EXTRA EXTRA
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
$6

[[tun]]
port = "radio"
name = "ax0"
callsign = "$2"
addresses = ["44.128.0.$3/24"$v6]
mode = "$mode"
mtu = $mtu
$n6
$7
EOF
}
cat > "$out/hello.sh" <<'EOF'
#!/bin/sh
echo "hello $LINKLAB_CALLER, this is $LINKLAB_CALLED ($1)"
while read -r line; do echo "got: $line"; [ "$line" = bye ] && exit 0; done
EOF
chmod +x "$out/hello.sh"
station_file "$(pty 0)" N0TA 1 N0TB 2 'callsigns = ["N0TA-1"]
aliases = ["RELAY"]
digipeat = true' "
[agw]
listen = \"127.0.0.1:8000\"

[[service]]
callsign = \"N0CALL-4\"
builtin = \"echo\"

[[service]]
callsign = \"N0CALL-2\"
program = [\"$out/hello.sh\", \"%U\"]

[[service]]
callsign = \"N0CALL-6\"
tcp = \"127.0.0.1:7000\"

[[beacon]]
port = \"radio\"
text = \"linklab station-tun beacon\"
every-s = 10

[dtn]
port = \"radio\"
eid = \"ipn:1.0\"
callsign = \"N0CALL-12\"
store = \"$out/dtn-a-store\"
app-socket = \"$out/dtn-a.sock\"
ax25-peers = [\"N0CALL-13=ipn:2.*\"]" > "$out/station-N0TA.toml"
station_file "$(pty 1)" N0TB 2 N0TA 1 '' '' > "$out/station-N0TB.toml"

# (`ip netns exec` execs linklab, so $! is linklab itself: the SIGTERM
# below reaches it alone; the script's own time limit bounds it.)
station() { # NS CALL
    ip netns exec "$1" "$linklab" station --config "$out/station-$2.toml" \
        > "$out/station-$2.out" 2> "$out/station-$2.log" &
}
# The TCP service N0CALL-6 forwards to: a line server in A's namespace.
ip netns exec "$nsa" timeout 230 python3 -c '
import socketserver
class Capitals(socketserver.StreamRequestHandler):
    def handle(self):
        self.wfile.write(b"capitals service ready\n")
        for line in self.rfile:
            self.wfile.write(line.upper())
socketserver.ThreadingTCPServer.allow_reuse_address = True
socketserver.ThreadingTCPServer(("127.0.0.1", 7000), Capitals).serve_forever()
' 2> "$out/capitals.log" &
pids+=($!)
wait_listen "$nsa" 7000 ||
    { echo "station-tun: the capitals service never listened:"; cat "$out/capitals.log"; exit 1; }
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

# nc A to B, and on the same port meanwhile everything else the station
# serves: an AGWPE transfer, a DTN bundle with its report, three calls to
# services, a digipeated frame, and the beacons.
"$linklab" listen --kiss "tcp:$(tcp 2)" --mycall N0LIS-1 --out "$out/agw.out" --once \
    > /dev/null 2> "$out/listen.log" &
lis=$!; pids+=($lis)
wait_line "$out/listen.log" "listening on" 10 ||
    { echo "station-tun: linklab listen never started:"; cat "$out/listen.log"; exit 1; }
timeout 150 "$linklab" dtn node --eid ipn:2.0 --store "$out/dtn-peer-store" \
    --app-socket "$out/dtn-peer.sock" --kiss "serial:$(pty 4):9600" --mycall N0CALL-13 \
    --ax25-peer 'N0CALL-12=ipn:1.*' > "$out/dtn-peer.out" 2> "$out/dtn-peer.log" &
peer=$!; pids+=($peer)
wait_line "$out/dtn-peer.log" "applications on" 10 ||
    { echo "station-tun: the peer DTN node never started:"; cat "$out/dtn-peer.log"; exit 1; }
wait_line "$out/station-N0TA.log" "applications on" 10 ||
    { echo "station-tun: station A's DTN node never started:"; cat "$out/station-N0TA.log"; exit 1; }
timeout 150 "$linklab" dtn recv --endpoint ipn:2.1 --count 1 --node "$out/dtn-peer.sock" \
    --out "$out/dtn.out" > "$out/dtn.recv.out" 2> "$out/dtn.recv.log" &
rcv=$!; pids+=($rcv)
head -c 102400 /dev/urandom > "$out/nc-ab.in"
head -c 51200 /dev/urandom > "$out/agw.in"
head -c 20480 /dev/urandom > "$out/dtn.in"
ip netns exec "$nsb" timeout 120 nc -l -p 5000 > "$out/nc-ab.out" 2> "$out/nc-ab.server.log" &
srv=$!; pids+=($srv)
wait_listen "$nsb" 5000 || echo "  nc never listened in B"
name=nc-ab; start; t_nc=$t0
# (Each in a subshell that notes when it started and ended, and how.)
(
    ip netns exec "$nsa" timeout 120 nc -q 2 -w 60 44.128.0.2 5000 < "$out/nc-ab.in" \
        2> "$out/nc-ab.client.log"
    date +%s.%N > "$out/nc-ab.end"
) &
cli=$!; pids+=($cli)
date +%s.%N > "$out/agw.start"
(
    ip netns exec "$nsa" timeout 120 "$linklab" send --station 127.0.0.1:8000 --mycall N0SND-1 \
        --to N0LIS-1 "$out/agw.in" > "$out/agw.send.out" 2> "$out/agw.send.log"
    echo $? > "$out/agw.send.rc"
    date +%s.%N > "$out/agw.end"
) &
snd=$!; pids+=($snd)
date +%s.%N > "$out/dtn.start"
(
    timeout 130 "$linklab" dtn send "$out/dtn.in" ipn:2.1 --report --wait 120 \
        --node "$out/dtn-a.sock" > "$out/dtn.send.out" 2> "$out/dtn.send.log"
    echo $? > "$out/dtn.send.rc"
    date +%s.%N > "$out/dtn.end"
) &
dsn=$!; pids+=($dsn)
date +%s.%N > "$out/ping-busy.start"
(
    ip netns exec "$nsa" ping -c 3 -w 30 44.128.0.2 > "$out/ping-busy.log" 2>&1
    date +%s.%N > "$out/ping-busy.end"
) &
pbs=$!; pids+=($pbs)
date +%s.%N > "$out/echo.start"
caller echo 3 N0ECH-9 N0CALL-4 "" "echo me $$" "echo me $$" &
pids+=($!); c_echo=$!
date +%s.%N > "$out/script.start"
CALLER_END="released by the peer" caller script 5 N0SCR-9 N0CALL-2 \
    "hello N0SCR-9, this is N0CALL-2 (N0SCR)" "one" "got: one" "bye" "got: bye" &
pids+=($!); c_script=$!
date +%s.%N > "$out/tcp-svc.start"
caller tcp-svc 6 N0TCP-9 N0CALL-6 "capitals service ready" "packet radio $$" "PACKET RADIO $$" &
pids+=($!); c_tcp=$!

# A UI frame to APRS via the alias RELAY from s8, repeated by A with its
# own callsign, H set.
name=digi; t_digi=$(date +%s.%N); t0=$t_digi
digi_ok=0
"$linklab" encode --from N0X --to APRS --via RELAY --ui "digi me $$" --format kiss \
    > "$out/digi.kiss" &&
    (cat "$out/digi.kiss" > "/dev/tcp/$(tcp 8 | tr : /)") 2> "$out/digi.log"
wait_line "$out/monitor.log" "N0X>APRS,N0TA-1\*: <UI.*digi me $$" 30 && digi_ok=1
t_digi_end=$(date +%s.%N)

wait "$cli"
wait "$srv"
t_nc_end=$(cat "$out/nc-ab.end")
name=nc-ab; t0=$t_nc
ok=0; cmp -s "$out/nc-ab.in" "$out/nc-ab.out" && ok=1
result "$name" "$ok" "$(stat -c %s "$out/nc-ab.out") of 102400 octets, sha256 $(sha "$out/nc-ab.out") (sent $(sha "$out/nc-ab.in"))" \
    "$t_nc_end"

name=agw; t0=$(cat "$out/agw.start")
wait "$snd"
sent=$(cat "$out/agw.send.rc")
wait "$lis"
ok=0; [ "$sent" = 0 ] && cmp -s "$out/agw.in" "$out/agw.out" && ok=1
result "$name" "$ok" "$(stat -c %s "$out/agw.out" 2>/dev/null || echo 0) of 51200 octets through A's AGWPE server, sha256 $(sha "$out/agw.out" 2>/dev/null) (sent $(sha "$out/agw.in"))" \
    "$(cat "$out/agw.end")"

name=dtn; t0=$(cat "$out/dtn.start")
wait "$dsn"
wait "$rcv"
ok=0
[ "$(cat "$out/dtn.send.rc")" = 0 ] && cmp -s "$out/dtn.in" "$out/dtn.out" &&
    grep -q "report from \[ipn:2.0\].*delivered" "$out/dtn.send.out" "$out/dtn.send.log" && ok=1
result "$name" "$ok" "$(stat -c %s "$out/dtn.out" 2>/dev/null || echo 0) of 20480 octets ipn:1.0 to ipn:2.1, sha256 $(sha "$out/dtn.out" 2>/dev/null) (sent $(sha "$out/dtn.in")); $(cat "$out/dtn.send.out" "$out/dtn.send.log" | grep -m1 -o "report from \[[^]]*\]\|delivered" | tr '\n' ' ')" \
    "$(cat "$out/dtn.end")"

name=ping-busy; t0=$(cat "$out/$name.start")
wait "$pbs"
got=$(grep -c "bytes from 44.128.0.2" "$out/$name.log")
result "$name" "$([ "$got" = 3 ] && echo 1)" \
    "$got of 3 replies while the port is busy, rtt $(sed -n 's|^rtt min/avg/max/mdev = \([^ ]*\) ms|\1|p' "$out/$name.log" | cut -d/ -f1-3) ms" \
    "$(cat "$out/$name.end")"

for name in echo script tcp-svc; do
    eval "wait \$c_${name/-svc/}"
    t0=$(cat "$out/$name.start")
    result "$name" "$(cat "$out/$name.ok")" "$(head -c 80 "$out/$name.out" | tr '\r\n' '  ')" \
        "$(cat "$out/$name.end")"
done

name=digi; t0=$t_digi
result "$name" "$digi_ok" "$(grep -m1 "N0X>APRS,N0TA-1\*:" "$out/monitor.log" | cut -c1-70)" \
    "$t_digi_end"

# Beacons, as the monitor on s7 saw them (its times are seconds since it
# started, at t_mon).
name=beacon; t0=$t_mon
awk '/N0TA-1>ID: <UI.*linklab station-tun beacon/ {print $2}' "$out/monitor.log" \
    > "$out/beacon.times"
detail=$(awk -v m="$t_mon" -v a="$t_nc" '
    { t[NR] = $1 }
    END {
        ok = NR >= 2
        for (i = 2; i <= NR; i++) {
            d = t[i] - t[i-1]; gaps = gaps sprintf(" %.1f", d)
            if (d < 8 || d > 12) ok = 0
        }
        print ok + 0, NR " beacons from N0TA-1, every" gaps " s"
    }' "$out/beacon.times")
result "$name" "${detail%% *}" "${detail#* }"

name=overlap; t0=$t_nc
for n in ping-busy agw dtn echo script tcp-svc; do
    echo "$n $(cat "$out/$n.start") $(cat "$out/$n.end")"
done > "$out/overlap.times"
echo "digi $t_digi $t_digi_end" >> "$out/overlap.times"
awk -v m="$t_mon" '{printf "beacon %.3f %.3f\n", m + $1, m + $1}' "$out/beacon.times" >> "$out/overlap.times"
detail=$(awk -v a="$t_nc" -v ae="$t_nc_end" '
    $1 == "beacon" { if ($2 > a && $2 < ae) { beacons++; text = text sprintf(", beacon %.1f", $2 - a) }; next }
    { n++; if ($2 < ae && $3 > a) inside++; text = text sprintf(", %s %.1f-%.1f", $1, $2 - a, $3 - a) }
    END { print (inside == n && beacons >= 1) ? 1 : 0, sprintf("nc 0.0-%.1f s", ae - a) text }' \
    "$out/overlap.times")
result "$name" "${detail%% *}" "${detail#* }"

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
p = s["ports"][0] if len(s["ports"]) == 1 else {}
served = {v["callsign"]: v["served"] for v in s["services"]}
beacons = sum(b["sent"] for b in s["beacons"])
ok = (len(t) == 1 and t[0]["from_kernel"] > 0 and t[0]["to_kernel"] > 0
      and t[0]["dropped"] == 0 and len(s["ports"]) == 1
      and served == {"N0CALL-4": 1, "N0CALL-2": 1, "N0CALL-6": 1} and bool(s["agw"])
      and p.get("digipeated") == 1 and beacons >= 2
      and bool(s["dtn"]) and s["dtn"]["running"])
t = t[0] if t else {}
print(int(ok), "ax0 %s %s from_kernel %s to_kernel %s dropped %s links %s; agw %s; services served %s; digipeated %s; %d beacons; dtn %s" % (
    t.get("callsign"), t.get("mode"), t.get("from_kernel"), t.get("to_kernel"),
    t.get("dropped"), t.get("links"), s.get("agw"),
    ",".join(str(n) for n in served.values()), p.get("digipeated"), beacons,
    "running" if (s["dtn"] or {}).get("running") else "not running"))
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
