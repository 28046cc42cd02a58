#!/bin/bash
# gensio's AX.25 stack (gensiot, gensio-bin 2.6.2) and linklab on one
# emulated half-duplex radio channel (`linklab channel`: p-persistent CSMA,
# TXDELAY, collisions, bit errors), every station a KISS TCP port on
# loopback, in a network namespace of its own.
#
#   interop/channel-gensio.sh -l LINKLAB [-o OUTDIR] [-s BYTES] [-S SEED]
#
# One channel at 19200 bit/s, five stations (s0..s4 on 127.0.0.1:8401..8405),
# bit errors at every receiver (seeded with -S); two connected-mode
# transfers of BYTES (20480) at the same time, so four stations contend for
# the one channel, and a fifth that beacons UI frames and is hidden from
# the linklab sender:
#   from-gensio  s0: a gensiot (N0CALL-1) connects (SABM, modulo 8) and
#                sends the file to s1: `linklab listen --once` (N0CALL-2)
#   to-gensio    s2: `linklab send --mod128` (N0CALL-3) connects and sends
#                the file to s3: a gensiot that accepts (N0CALL-4)
#   beacon       s4 (N0CALL-5, linklab's encoder through a plain TCP
#                client), hidden from s2: 20 UI frames, one every 2 s
#   channel      the channel's statistics (--stats-json at SIGTERM): all
#                five stations transmitted, there were collisions, and
#                frames lost to collisions and to bit errors
# Every received file must equal the one sent (cmp) and both programs of a
# transfer exit 0. Needs root (unshare), gensio-bin, python3 and iproute2.
# Exits non-zero on any failure.
set -u

here=$(cd "$(dirname "$0")" && pwd)
. "$here/netns-lib.sh"
netns_need channel-gensio "apt-get install gensio-bin python3" gensiot python3
netns_enter CHANNEL_GENSIO_IN_NETNS 400 "$@"

out=""; size=20480; linklab=""; seed=1
while [ $# -gt 0 ]; do
    case "$1" in
        -o) out=$2; shift 2 ;;
        -s) size=$2; shift 2 ;;
        -S) seed=$2; shift 2 ;;
        -l) linklab=$2; shift 2 ;;
        *) echo "usage: $0 -l LINKLAB [-o OUTDIR] [-s BYTES] [-S SEED]" >&2; exit 2 ;;
    esac
done
[ -x "$linklab" ] || { echo "channel-gensio: -l LINKLAB must name the linklab binary" >&2; exit 2; }
[ -n "$out" ] || out=$(mktemp -d /tmp/channel-gensio.XXXXXX)
mkdir -p "$out"

# Loopback, with the address gensio's AI_ADDRCONFIG needs.
netns_lo --gensio-addr

head -c "$size" /dev/urandom > "$out/data-a.bin"
head -c "$size" /dev/urandom > "$out/data-b.bin"

netns_pids

# The channel: 19200 bit/s, every radio with TXDELAY 50 ms, P = 63, slot
# 100 ms (the values gensio's kiss gensio means to set on its TNC) and
# TXTAIL 10 ms. A receiver's DCD follows a transmitter's key-up 20 ms late
# (squelch and modem lock of a real radio; with instant DCD two stations
# collide only when they key up in the same microsecond). One bit in 50 000
# is wrong at each receiver, which loses about one 256-octet I frame in 23.
# Contention among the four stations of the transfers alone gives a
# collision now and then (slot ticks within 20 ms of each other), zero in
# some runs; the beacon s4 is behind a hill from linklab's sender s2
# (neither hears the other), so its beacons that start while s2 transmits
# collide at the other stations for sure: the hidden terminal. (Hiding the
# beacon from gensio's sender s0 too, or the two senders from each other,
# collapses gensio's transfer, see docs/interop.md.)
base=8401
cat > "$out/channel.toml" <<EOF
seed = $seed
[defaults]
txdelay_ms = 50
persistence = 63
slot_ms = 100
txtail_ms = 10
[[channel]]
name = "vhf"
bitrate = 19200
dcd_delay_ms = 20
ber = 2e-5
hidden = [["s2", "s4"]]
EOF
for p in 0 1 2 3 4; do printf '[[station]]\nname = "s%s"\nport = %s\n' "$p" $((base + p)); done >> "$out/channel.toml"
timeout 380 "$linklab" channel "$out/channel.toml" \
    --monitor --stats-json "$out/stats.json" > "$out/channel.out" 2> "$out/channel.log" &
chan=$!; pids+=($chan)
for p in 0 1 2 3 4; do
    wait_port $((base + p)) 10 || { echo "channel-gensio: station s$p never listened (see $out/channel.log)"; exit 1; }
done
kiss() { echo "kiss,tcp,127.0.0.1,$((base + $1))"; }

echo "channel-gensio: $size bytes each way, seed $seed, output in $out"
t0=$(date +%s.%N)
# from-gensio: s0 gensiot -> s1 linklab listen
timeout 300 "$linklab" listen --once --kiss "tcp:127.0.0.1:$((base + 1))" --mycall N0CALL-2 \
    --monitor --out "$out/from-gensio.out" > "$out/from-gensio.linklab.out" \
    2> "$out/from-gensio.linklab.log" & la=$!; pids+=($la)
# to-gensio: s2 linklab send -> s3 gensiot accepting
timeout 300 gensiot -i "file(outfile=$out/to-gensio.out,create)" \
    -a "ax25(laddr=N0CALL-4,extended=1),conacc,$(kiss 3)" > "$out/to-gensio.gensio.log" 2>&1 &
gb=$!; pids+=($gb)
sleep 0.5
timeout 300 gensiot -i "file(infile=$out/data-a.bin)" \
    "ax25(laddr=N0CALL-1,extended=0,addr=\"0,N0CALL-2,N0CALL-1\"),$(kiss 0)" \
    > "$out/from-gensio.gensio.log" 2>&1 & ga=$!; pids+=($ga)
timeout 300 "$linklab" send --kiss "tcp:127.0.0.1:$((base + 2))" --mycall N0CALL-3 --to N0CALL-4 \
    --mod128 --monitor "$out/data-b.bin" > "$out/to-gensio.linklab.out" \
    2> "$out/to-gensio.linklab.log" & lb=$!; pids+=($lb)
# beacon: s4, 20 UI frames 2 s apart
beacons=20
for i in $(seq "$beacons"); do
    "$linklab" encode --from N0CALL-5 --to BEACON --ui "beacon $i/$beacons" --format kiss
done > "$out/beacon.kiss"
timeout 100 python3 -c 'import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
for f in open(sys.argv[2], "rb").read().split(b"\xc0"):
    if f:
        s.sendall(b"\xc0" + f + b"\xc0"); time.sleep(2)
s.close()' $((base + 4)) "$out/beacon.kiss" > "$out/beacon.log" 2>&1 & bc=$!; pids+=($bc)

# Wait for the four programs in the order they end, noting when each ends.
declare -A rc end
left=("$la" "$ga" "$lb" "$gb" "$bc")
while [ ${#left[@]} -gt 0 ]; do
    wait -n -p done "${left[@]}"; rc[$done]=$?; end[$done]=$(date +%s.%N)
    left=($(printf '%s\n' "${left[@]}" | grep -vx "$done"))
done

fail=0
# finish NAME LINKLAB_PID GENSIO_PID DATA: check a transfer, report it
finish() {
    local name=$1 rc_l=${rc[$2]} rc_g=${rc[$3]} ok=1 res t1
    t1=$(printf '%s\n' "${end[$2]}" "${end[$3]}" | sort -n | tail -n 1)
    [ "$rc_l" = 0 ] && [ "$rc_g" = 0 ] ||
        { ok=0; echo "  $name: exit codes linklab=$rc_l gensiot=$rc_g (logs in $out)"; }
    cmp -s "$4" "$out/$name.out" ||
        { ok=0; echo "  $name: received file differs ($(stat -c %s "$out/$name.out" 2>/dev/null || echo 0) of $size bytes)"; }
    local ll="$out/$name.linklab.log"
    [ "$ok" = 1 ] && res=PASS || { res=FAIL; fail=1; }
    printf '%-12s %s %6ss  linklab TX=%s RX=%s REJ=%s\n' "$name" "$res" \
        "$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}')" \
        "$(grep -c '^TX' "$ll")" "$(grep -c '^RX' "$ll")" "$(grep -c '<REJ' "$ll")"
}
finish from-gensio "$la" "$ga" "$out/data-a.bin"
finish to-gensio "$lb" "$gb" "$out/data-b.bin"
heard=$(grep -c "N0CALL-5>BEACON: <UI C> \[F0\] beacon [0-9]*/$beacons\( \|$\)" "$out/channel.out")
t1=${end[$bc]}
[ "${rc[$bc]}" = 0 ] && [ "$heard" = "$beacons" ] && res=PASS ||
    { res=FAIL; fail=1; echo "  beacon: exit code ${rc[$bc]}, $heard of $beacons on the air"; }
printf '%-12s %s %6ss  %s of %s UI frames on the air\n' beacon "$res" \
    "$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}')" "$heard" "$beacons"

# The channel's statistics, written when it stops.
kill -TERM "$chan"; wait "$chan"
stats=$(python3 - "$out/stats.json" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
ch = s["channels"][0]
st = s["stations"]
coll = sum(x["lost_to_collisions"] for x in st)
err = sum(x["lost_to_errors"] for x in st)
deaf = sum(x["lost_while_transmitting"] for x in st)
busy = sum(1 for x in st if x["frames_sent"] > 0)
print(ch["collisions"], coll, err, deaf, busy, ch["transmissions"], ch["frames_sent"],
      "%.0f" % (100 * ch["utilisation"]))
EOF
) || { echo "  channel: no statistics in $out/stats.json"; stats="0 0 0 0 0 0 0 0"; }
read -r coll lcoll lerr ldeaf busy tx frames util <<< "$stats"
ok=1
[ "$busy" -ge 5 ] || { ok=0; echo "  channel: only $busy stations transmitted"; }
[ "$coll" -gt 0 ] || { ok=0; echo "  channel: no collision"; }
[ "$lcoll" -gt 0 ] && [ "$lerr" -gt 0 ] ||
    { ok=0; echo "  channel: frames lost to collisions $lcoll, to bit errors $lerr: both must be lost"; }
[ "$ok" = 1 ] && res=PASS || { res=FAIL; fail=1; }
printf '%-12s %s %6ss  stations=%s transmissions=%s frames=%s busy=%s%% collisions=%s lost: collided=%s bit-errors=%s deaf=%s\n' \
    channel "$res" "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')" "$busy" "$tx" "$frames" "$util" "$coll" "$lcoll" "$lerr" "$ldeaf"

[ "$fail" = 0 ] && echo "channel-gensio: all runs passed" || echo "channel-gensio: FAILED"
exit $fail
