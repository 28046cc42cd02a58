#!/bin/bash
# gensio's AX.25 stack (gensiot, gensio-bin 2.6.2) and linklab on one
# emulated half-duplex radio channel (`linklab channel`: p-persistent CSMA,
# TXDELAY, collisions, bit errors), every station a KISS TCP port on
# loopback, in a network namespace of its own.
#
#   interop/channel-gensio.sh -l LINKLAB [-o OUTDIR] [-s BYTES] [-S SEED]
#
# One channel at 19200 bit/s, six stations (s0..s5 on 127.0.0.1:8401..8406),
# bit errors at every receiver (seeded with -S); two connected-mode
# transfers of BYTES (20480) at the same time, so four stations contend for
# the one channel, and two more that beacon UI frames from the start to the
# end of both transfers and do not hear each other:
#   from-gensio  s0: a gensiot (N0CALL-1) connects (SABM, modulo 8) and
#                sends the file to s1: `linklab listen --once` (N0CALL-2)
#   to-gensio    s2: `linklab send --mod128` (N0CALL-3) connects and sends
#                the file to s3: a gensiot that accepts (N0CALL-4)
#   beacon       s4 and s5 (N0CALL-5, N0CALL-6; linklab's encoder through a
#                plain TCP client): a UI frame each, both at once, every
#                2 s until both transfers have ended; every one must go on
#                the air
#   channel      the channel's statistics (--stats-json at SIGTERM): all
#                six stations transmitted, there were collisions, and
#                frames lost to collisions and to bit errors
# Every received file must equal the one sent (cmp) and both programs of a
# transfer exit 0. Needs root (unshare), gensio-bin, python3 and iproute2.
# Exits non-zero on any failure. About 80 s (docs/interop.md section 7).
#
# Why each parameter is what it is (docs/interop.md section 7 has the
# captures):
# - gensiot sending: writewindow=1 (MAXFRAME 1). gensio 2.6.2 sets P on
#   every I frame sent while its window is full, and after a T1 expiry goes
#   back to N(R) on every F = 1 answer until all is acknowledged; each
#   resent frame carries P again and draws another answer. With a window
#   of k that multiplies the frames in flight by up to k per round trip
#   (the default k = 4 fills the channel within a minute and linklab's
#   sender gives up); with k = 1 it cannot grow. Modulo 8 caps gensio's
#   I field at 256 octets, so the 20 KB take 80 round trips.
# - gensiot accepting: readwindow=4. Its XID tells linklab k = 4, and
#   gensio acknowledges at once when more than half its window is waiting,
#   that is on the 4th frame: one RR per window instead of one after 5 of
#   7 frames and T2 (2 s) for the rest, and bursts of at most four 256-
#   octet frames (0.5 s) that delay gensio's other transfer less.
# - linklab send --mod128 (v2.2, XID), linklab listen: defaults.
# - 19200 bit/s, TXDELAY 50 ms, TXTAIL 10 ms: a 9600/19200 bit/s FSK radio.
# - SLOTTIME 120 ms with each radio's slot clock at a fixed phase, 24 ms
#   apart (s0 0, s1 24, s3 48, s2 72, s4 and s5 96 ms), and DCD 20 ms late:
#   a station that ticks 24 ms after another has keyed up already hears it,
#   so stations that hear each other never key up together and the
#   transfers lose no frame to a collision. (Free-running clocks put two
#   stations' ticks within 20 ms of each other in most seeds; every such
#   collision costs gensio's sender a T1 time-out, see below.)
# - Collisions come from the beacons: s4 and s5 are behind different hills
#   (`hidden`), both heard by the four transfer stations, with the same
#   slot phase and their frames queued at the same moment, so they key up
#   in the same slot about one time in three (P = 127) and both beacons are
#   lost at the other four stations. (A beacon hidden from a transfer
#   station instead wipes out that station's frames: linklab's sender
#   then goes back N again and again, its long transmissions delay gensio's
#   answers past gensio's T1, and gensio's transfer can collapse.)
# - P = 127 (p = 1/2): with collisions kept to the beacons, P only sets the
#   access delay (mean 1.5 slots instead of 3.5 at P = 63) and with it the
#   round trip that gensio's stop-and-wait transfer pays 80 times.
# - BER 1e-5 at every receiver: about one 256-octet I frame in 45 is lost
#   (both transfers recover about two each, gensio by T1 and enquiry), and
#   short frames rarely; at 2e-5 gensio's sender spends more of its time
#   in T1 recovery, where it is fragile (docs/interop.md section 7).
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
for c in 5 6; do
    for i in $(seq 200); do
        "$linklab" encode --from "N0CALL-$c" --to BEACON --ui "beacon $i" --format kiss
    done > "$out/beacon-$c.kiss"
done

netns_pids

# The channel: see the header for why each value.
base=8401
cat > "$out/channel.toml" <<EOF
seed = $seed
[defaults]
txdelay_ms = 50
persistence = 127
slot_ms = 120
txtail_ms = 10
[[channel]]
name = "vhf"
bitrate = 19200
dcd_delay_ms = 20
ber = 1e-5
hidden = [["s4", "s5"]]
EOF
phase=(0 24 72 48 96 96)
for p in 0 1 2 3 4 5; do
    printf '[[station]]\nname = "s%s"\nport = %s\nslot_phase_ms = %s\n' "$p" $((base + p)) "${phase[$p]}"
done >> "$out/channel.toml"
timeout 380 "$linklab" channel "$out/channel.toml" \
    --monitor --stats-json "$out/stats.json" > "$out/channel.out" 2> "$out/channel.log" &
chan=$!; pids+=($chan)
for p in 0 1 2 3 4 5; do
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
    -a "ax25(laddr=N0CALL-4,extended=1,readwindow=4),conacc,$(kiss 3)" > "$out/to-gensio.gensio.log" 2>&1 &
gb=$!; pids+=($gb)
sleep 0.5
timeout 300 gensiot -i "file(infile=$out/data-a.bin)" \
    "ax25(laddr=N0CALL-1,extended=0,writewindow=1,addr=\"0,N0CALL-2,N0CALL-1\"),$(kiss 0)" \
    > "$out/from-gensio.gensio.log" 2>&1 & ga=$!; pids+=($ga)
timeout 300 "$linklab" send --kiss "tcp:127.0.0.1:$((base + 2))" --mycall N0CALL-3 --to N0CALL-4 \
    --mod128 --monitor "$out/data-b.bin" > "$out/to-gensio.linklab.out" \
    2> "$out/to-gensio.linklab.log" & lb=$!; pids+=($lb)
# beacons: s4 and s5, a UI frame each at the same moment every 2 s from
# before the transfers start until both have ended (the files hold 400 s
# of them); the client stops at the file beacon.stop and prints how many
# it sent to each.
timeout 350 python3 -c 'import os, socket, sys, time
ports, files, stop = sys.argv[1:3], sys.argv[3:5], sys.argv[5]
socks = [socket.create_connection(("127.0.0.1", int(p))) for p in ports]
frames = [[f for f in open(n, "rb").read().split(b"\xc0") if f] for n in files]
sent = 0
for pair in zip(*frames):
    if os.path.exists(stop):
        break
    for s, f in zip(socks, pair):
        s.sendall(b"\xc0" + f + b"\xc0")
    sent += 1
    time.sleep(2)
for s in socks:
    s.close()
print(sent)' $((base + 4)) $((base + 5)) "$out/beacon-5.kiss" "$out/beacon-6.kiss" "$out/beacon.stop" \
    > "$out/beacon.log" 2>&1 & bc=$!; pids+=($bc)

# Wait for the four programs of the transfers in the order they end,
# noting when each ends; then stop the beacons and wait until their last
# frames have left the air (they may wait in the queues for a second or two).
declare -A rc end
left=("$la" "$ga" "$lb" "$gb")
while [ ${#left[@]} -gt 0 ]; do
    wait -n -p done "${left[@]}"; rc[$done]=$?; end[$done]=$(date +%s.%N)
    left=($(printf '%s\n' "${left[@]}" | grep -vx "$done"))
done
touch "$out/beacon.stop"
wait "$bc"; rc[$bc]=$?; end[$bc]=$(date +%s.%N)
beacons=$(tail -n 1 "$out/beacon.log")
[[ "$beacons" =~ ^[0-9]+$ ]] || beacons=0
# on_air CALL: beacons from CALL on the air (lost somewhere or not)
on_air() { grep -c "$1>BEACON: <UI C> \[F0\] beacon [0-9]*\( \|$\)" "$out/channel.out"; }
for _ in $(seq 50); do
    [ "$(on_air N0CALL-5)" -ge "$beacons" ] && [ "$(on_air N0CALL-6)" -ge "$beacons" ] && break
    sleep 0.2
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
heard5=$(on_air N0CALL-5); heard6=$(on_air N0CALL-6)
t1=${end[$bc]}
[ "${rc[$bc]}" = 0 ] && [ "$beacons" -gt 0 ] && [ "$heard5" = "$beacons" ] && [ "$heard6" = "$beacons" ] &&
    res=PASS || { res=FAIL; fail=1; echo "  beacon: exit code ${rc[$bc]}, $heard5 and $heard6 of $beacons on the air"; }
printf '%-12s %s %6ss  %s and %s of %s UI frames each on the air, until both transfers ended\n' beacon "$res" \
    "$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}')" "$heard5" "$heard6" "$beacons"

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
[ "$busy" -ge 6 ] || { ok=0; echo "  channel: only $busy stations transmitted"; }
[ "$coll" -gt 0 ] || { ok=0; echo "  channel: no collision"; }
[ "$lcoll" -gt 0 ] && [ "$lerr" -gt 0 ] ||
    { ok=0; echo "  channel: frames lost to collisions $lcoll, to bit errors $lerr: both must be lost"; }
[ "$ok" = 1 ] && res=PASS || { res=FAIL; fail=1; }
printf '%-12s %s %6ss  stations=%s transmissions=%s frames=%s busy=%s%% collisions=%s lost: collided=%s bit-errors=%s deaf=%s\n' \
    channel "$res" "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')" "$busy" "$tx" "$frames" "$util" "$coll" "$lcoll" "$lerr" "$ldeaf"

[ "$fail" = 0 ] && echo "channel-gensio: all runs passed" || echo "channel-gensio: FAILED"
exit $fail
