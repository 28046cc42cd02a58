#!/bin/bash
# Dire Wolf's kissutil (Debian direwolf 1.6) and linklab exchanging UI
# frames through an emulated radio channel (`linklab channel`), every
# station a KISS TCP port on loopback, in a network namespace of its own.
#
#   interop/channel-kissutil.sh -l LINKLAB [-o OUTDIR] [-n COUNT] [-S SEED]
#
# One channel at 9600 bit/s, three stations (127.0.0.1:8501..8503), no bit
# errors and instant DCD (two stations collide only if they key up in the
# same microsecond), so every frame must arrive:
#   kissutil-to-linklab  kissutil on s0 sends COUNT (20) UI frames, typed on
#                        its standard input in monitor format
#                        (N0KSU>N0LL:text); `linklab listen --monitor` on s1
#                        shows every one, and a second kissutil on s2 (-o,
#                        one file per frame) receives every one
#   linklab-to-kissutil  COUNT frames from `linklab encode --ui --format
#                        kiss`, written to s1 by a plain TCP client; the
#                        kissutil on s0 prints every one, the one on s2
#                        saves every one
#   channel              the channel's statistics (--stats-json): s0 and s1
#                        sent COUNT frames each, s2 received and delivered
#                        2 x COUNT, nothing lost anywhere
# Counts must be exact and every text must match. Needs root (unshare),
# direwolf (kissutil), python3 and iproute2 (ss). Exits non-zero on any
# failure.
set -u

here=$(cd "$(dirname "$0")" && pwd)
. "$here/netns-lib.sh"
netns_need channel-kissutil "apt-get install direwolf python3 iproute2" kissutil python3 ss
netns_enter CHANNEL_KISSUTIL_IN_NETNS 120 "$@"

out=""; count=20; linklab=""; seed=1
while [ $# -gt 0 ]; do
    case "$1" in
        -o) out=$2; shift 2 ;;
        -n) count=$2; shift 2 ;;
        -S) seed=$2; shift 2 ;;
        -l) linklab=$2; shift 2 ;;
        *) echo "usage: $0 -l LINKLAB [-o OUTDIR] [-n COUNT] [-S SEED]" >&2; exit 2 ;;
    esac
done
[ -x "$linklab" ] || { echo "channel-kissutil: -l LINKLAB must name the linklab binary" >&2; exit 2; }
[ -n "$out" ] || out=$(mktemp -d /tmp/channel-kissutil.XXXXXX)
mkdir -p "$out"

netns_lo
netns_pids

base=8501
timeout 110 "$linklab" channel --stations 3 --base-port "$base" --bitrate 9600 \
    --txdelay-ms 50 --txtail-ms 10 --seed "$seed" --monitor --stats-json "$out/stats.json" \
    > "$out/channel.out" 2> "$out/channel.log" & chan=$!; pids+=($chan)
for p in 0 1 2; do
    wait_port $((base + p)) 10 || { echo "channel-kissutil: station s$p never listened (see $out/channel.log)"; exit 1; }
done

# wait_client PORT: until some client holds a TCP connection to PORT
wait_client() {
    for _ in $(seq 100); do
        [ -n "$(ss -Htn state established "( sport = :$1 )")" ] && return 0
        sleep 0.1
    done
    return 1
}
# wait_count FILE PATTERN N SECONDS: until grep counts N lines
wait_count() {
    for _ in $(seq $(( $4 * 10 ))); do
        [ "$(grep -c "$2" "$1" 2>/dev/null)" -ge "$3" ] && return 0
        sleep 0.1
    done
    return 1
}

# The kissutils that receive: s0 prints frames, s2 saves one file each.
# kissutil exits at end of its standard input, so each reads a FIFO this
# shell holds open.
mkfifo "$out/hold"
exec 7<> "$out/hold"
mkdir -p "$out/s2.rx"
timeout 100 kissutil -h 127.0.0.1 -p "$base" <&7 > "$out/s0.kissutil.log" 2>&1 & k0=$!; pids+=($k0)
timeout 100 kissutil -h 127.0.0.1 -p $((base + 2)) -o "$out/s2.rx" <&7 > "$out/s2.kissutil.log" 2>&1 &
k2=$!; pids+=($k2)
timeout 100 "$linklab" listen --kiss "tcp:127.0.0.1:$((base + 1))" --mycall N0LL --monitor \
    --out "$out/linklab.out" > /dev/null 2> "$out/linklab.log" & l=$!; pids+=($l)
wait_client "$base" && wait_client $((base + 1)) && wait_client $((base + 2)) ||
    { echo "channel-kissutil: kissutil or linklab never connected (logs in $out)"; exit 1; }

fail=0
t0=0
start() { t0=$(date +%s.%N); }
# result NAME OK DETAIL
result() {
    local res=PASS
    [ "$2" = 1 ] || { res=FAIL; fail=1; }
    printf '%-20s %s %6ss  %s\n' "$1" "$res" \
        "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2f", b-a}')" "$3"
}
# saved PATTERN: how many of the frames s2 saved (a file each, "[0] " and
# the monitor-format line) match PATTERN
saved() { cat "$out"/s2.rx/* 2>/dev/null | grep -ac "$1"; }

echo "channel-kissutil: $count UI frames each way, output in $out"

# kissutil on s0 sends; it connects before it reads its first line (a line
# read before the connection is up is lost: "ERROR writing KISS frame to
# socket"), hence the wait for its connection.
name=kissutil-to-linklab; start; ok=1
mkfifo "$out/send"
n_before=$(ss -Htn state established "( sport = :$base )" | wc -l)
timeout 60 kissutil -h 127.0.0.1 -p "$base" < "$out/send" > "$out/$name.kissutil.log" 2>&1 &
ks=$!; pids+=($ks)
exec 8> "$out/send"
for _ in $(seq 100); do
    [ "$(ss -Htn state established "( sport = :$base )" | wc -l)" -gt "$n_before" ] && break
    sleep 0.1
done
for i in $(seq "$count"); do
    echo "N0KSU>N0LL:$name $i/$count" >&8
    sleep 0.05
done
wait_count "$out/linklab.log" "N0KSU>N0LL: <UI .*> \[F0\] $name [0-9]*/$count\$" "$count" 30
wait_count "$out/s2.kissutil.log" "^\[0\] N0KSU>N0LL:$name " "$count" 5
exec 8>&-
wait "$ks" || { ok=0; echo "  $name: the sending kissutil failed (see $out/$name.kissutil.log)"; }
got_l=0; got_k=0
for i in $(seq "$count"); do
    grep -q "^RX .* N0KSU>N0LL: <UI .*> \[F0\] $name $i/$count\$" "$out/linklab.log" && got_l=$((got_l + 1))
    [ "$(saved "^\[0\] N0KSU>N0LL:$name $i/$count\$")" = 1 ] && got_k=$((got_k + 1))
done
all_l=$(grep -c "N0KSU>N0LL: <UI" "$out/linklab.log")
[ "$got_l" = "$count" ] && [ "$all_l" = "$count" ] ||
    { ok=0; echo "  $name: linklab showed $got_l of $count frames ($all_l in all; see $out/linklab.log)"; }
[ "$got_k" = "$count" ] || { ok=0; echo "  $name: kissutil on s2 saved $got_k of $count (see $out/s2.rx)"; }
grep -q ERROR "$out/$name.kissutil.log" && { ok=0; echo "  $name: $(grep -m1 ERROR "$out/$name.kissutil.log")"; }
result "$name" "$ok" "linklab $got_l of $count, kissutil(s2) $got_k of $count"

name=linklab-to-kissutil; start; ok=1
for i in $(seq "$count"); do
    "$linklab" encode --from N0LL --to N0KSU --ui "$name $i/$count" --format kiss
done > "$out/$name.kiss"
timeout 30 python3 -c 'import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
for f in open(sys.argv[2], "rb").read().split(b"\xc0"):
    if f:
        s.sendall(b"\xc0" + f + b"\xc0"); time.sleep(0.05)
time.sleep(0.5); s.close()' $((base + 1)) "$out/$name.kiss" ||
    { ok=0; echo "  $name: could not write to 127.0.0.1:$((base + 1))"; }
wait_count "$out/s0.kissutil.log" "^\[0\] N0LL>N0KSU:$name " "$count" 30
wait_count "$out/s2.kissutil.log" "^\[0\] N0LL>N0KSU:$name " "$count" 5
got_0=0; got_2=0
for i in $(seq "$count"); do
    [ "$(grep -c "^\[0\] N0LL>N0KSU:$name $i/$count\$" "$out/s0.kissutil.log")" = 1 ] && got_0=$((got_0 + 1))
    [ "$(saved "^\[0\] N0LL>N0KSU:$name $i/$count\$")" = 1 ] && got_2=$((got_2 + 1))
done
all_0=$(grep -c "^\[0\] " "$out/s0.kissutil.log")
[ "$got_0" = "$count" ] && [ "$all_0" = "$count" ] ||
    { ok=0; echo "  $name: kissutil on s0 printed $got_0 of $count ($all_0 frames in all; see $out/s0.kissutil.log)"; }
[ "$got_2" = "$count" ] || { ok=0; echo "  $name: kissutil on s2 saved $got_2 of $count (see $out/s2.rx)"; }
result "$name" "$ok" "kissutil(s0) $got_0 of $count, kissutil(s2) $got_2 of $count"

# The channel's own account, written when it stops.
name=channel; start; ok=1
sleep 0.3
kill "$l" "$k0" "$k2" 2>/dev/null; wait "$l" "$k0" "$k2" 2>/dev/null
kill -TERM "$chan"; wait "$chan"
files=$(find "$out/s2.rx" -type f | wc -l)
stats=$(python3 - "$out/stats.json" <<'EOF'
import json, sys
s = {x["name"]: x for x in json.load(open(sys.argv[1]))["stations"]}
lost = sum(x["lost_to_collisions"] + x["lost_to_errors"] + x["lost_while_transmitting"]
           for x in s.values())
print(s["s0"]["frames_sent"], s["s1"]["frames_sent"], s["s2"]["received"],
      s["s2"]["delivered"], lost, json.load(open(sys.argv[1]))["channels"][0]["collisions"])
EOF
) || { echo "  channel: no statistics in $out/stats.json"; stats="0 0 0 0 -1 -1"; }
read -r sent0 sent1 rcvd2 dlvd2 lost coll <<< "$stats"
[ "$sent0" = "$count" ] && [ "$sent1" = "$count" ] && [ "$rcvd2" = $((2 * count)) ] &&
    [ "$dlvd2" = $((2 * count)) ] && [ "$files" = $((2 * count)) ] && [ "$lost" = 0 ] ||
    { ok=0; echo "  channel: expected $count, $count sent, $((2 * count)) received and delivered at s2 and as files, none lost"; }
result "$name" "$ok" "sent s0=$sent0 s1=$sent1, s2 received=$rcvd2 delivered=$dlvd2 files=$files, lost=$lost collisions=$coll"

[ "$fail" = 0 ] && echo "channel-kissutil: all runs passed" || echo "channel-kissutil: FAILED"
exit $fail
