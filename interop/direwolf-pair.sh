#!/bin/bash
# Two Dire Wolf 1.6 soundcard TNCs joined by a software audio cable, in a
# network namespace of their own (loopback only).
#
#   interop/direwolf-pair.sh [-b 9600|1200] [-d DROP_RATE] [--seed N]
#                            [-s BYTES] [-o OUTDIR] [-l LINKLAB] [--keep-going]
#
#   A: MYCALL N0CALL-3, KISS TCP 8011, AGW 8010
#   B: MYCALL N0CALL-4, KISS TCP 8021, AGW 8020
#
# Each instance transmits through an ALSA `file` PCM (slave "null") that
# writes raw S16_LE mono at 48000 Hz to a FIFO, and receives from standard
# input (`ADEVICE stdin dwtx`).  interop/audio_relay.py plays A's transmit
# audio into B's stdin and B's into A's in real time, with silence between
# transmissions, dropping a fraction DROP_RATE of the 10 ms chunks that carry
# audio (seeded).  Then:
#   (a) a UI frame written to A's KISS port must come out of B's KISS port;
#   (b) an AGW client on B registers N0CALL-2 and sinks data; an AGW client
#       on A connects N0CALL-1 -> N0CALL-2 ('C'), sends BYTES (default 5120)
#       and disconnects: Dire Wolf's own connected-mode engine on both ends.
# Records (in OUTDIR): the configs, both direwolf logs, A.kiss/B.kiss (all
# frames each side's KISS port delivered, with .times), A.mon/B.mon (AGW
# monitor lines incl. own transmissions 'T'), timeline.txt (both merged),
# A.raw/B.raw (AGW raw frames as KISS), relay.log.  Needs root (unshare),
# direwolf, python3, iproute2.  Exits non-zero on failure.
set -u

here=$(cd "$(dirname "$0")" && pwd)
. "$here/netns-lib.sh"
netns_need direwolf-pair "apt-get install direwolf" direwolf
netns_enter DW_PAIR_IN_NETNS 900 "$@"

baud=9600; drop=0; seed=1; size=5120; out=""; linklab="${LINKLAB:-}"
while [ $# -gt 0 ]; do
    case "$1" in
        -b) baud=$2; shift 2 ;;
        -d) drop=$2; shift 2 ;;
        --seed) seed=$2; shift 2 ;;
        -s) size=$2; shift 2 ;;
        -o) out=$2; shift 2 ;;
        -l) linklab=$2; shift 2 ;;
        *) echo "usage: $0 [-b 9600|1200] [-d DROP_RATE] [--seed N] [-s BYTES] [-o OUTDIR] [-l LINKLAB]" >&2; exit 2 ;;
    esac
done
[ -n "$out" ] || out=$(mktemp -d /tmp/direwolf-pair.XXXXXX)
mkdir -p "$out"; out=$(cd "$out" && pwd)
if [ -z "$linklab" ]; then
    if [ -x "$here/../target/release/linklab" ]; then linklab="$here/../target/release/linklab"
    elif command -v linklab >/dev/null; then linklab=$(command -v linklab); fi
fi
# Transfer budget: bits on air at the modem rate, times 4, plus a minute.
budget=$(( size * 8 * 4 / baud + 60 ))

netns_lo
netns_pids

. "$here/direwolf-lib.sh"
dw_mkconf A N0CALL-3 8011 8010 || exit 2
dw_mkconf B N0CALL-4 8021 8020

echo "direwolf-pair: $baud bd, drop rate $drop (seed $seed), $size bytes, output in $out"
dw_start "" $((budget + 110)) "$drop" "$seed" || exit 1
timeout $((budget + 100)) python3 "$here/kiss_tap.py" 127.0.0.1 8011 "$out/A.kiss" --times "$out/A.times" & pids+=($!)
timeout $((budget + 100)) python3 "$here/kiss_tap.py" 127.0.0.1 8021 "$out/B.kiss" --times "$out/B.times" & pids+=($!)
sleep 0.5
fail=0

# (a) UI frame A -> B through the cable
msg="linklab interop $(date +%s)"
if [ -n "$linklab" ]; then
    "$linklab" encode --from N0CALL-3 --to APRS --ui "$msg" --format kiss > "$out/ui.kiss"
else # AX.25 UI frame by hand: APRS <- N0CALL-3, control 03, PID F0
    python3 -c '
import sys
def a(c, s, cbit, last): return bytes(ord(x) << 1 for x in c.ljust(6)) + bytes([cbit | 0x60 | s << 1 | last])
f = a("APRS", 0, 0x80, 0) + a("N0CALL", 3, 0, 1) + b"\x03\xf0" + sys.argv[1].encode()
sys.stdout.buffer.write(b"\xc0\x00" + f.replace(b"\xdb", b"\xdb\xdd").replace(b"\xc0", b"\xdb\xdc") + b"\xc0")' "$msg" > "$out/ui.kiss"
fi
t0=$(date +%s.%N)
timeout 5 python3 -c '
import socket, sys, time
s = socket.create_connection(("127.0.0.1", 8011)); s.sendall(open(sys.argv[1], "rb").read()); time.sleep(0.5); s.close()' "$out/ui.kiss"
got=""
for _ in $(seq 100); do
    grep -q "$msg" "$out/B.kiss" 2>/dev/null && { got=1; break; }; sleep 0.1
done
t1=$(date +%s.%N)
secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f", b-a}')
if [ -n "$got" ]; then
    line=""
    [ -n "$linklab" ] && line=$("$linklab" decode --format kiss "$out/B.kiss" | grep -F "$msg" | head -1)
    echo "(a) UI frame A->B: PASS in ${secs}s  ${line}"
else
    echo "(a) UI frame A->B: FAIL (nothing on B's KISS port after ${secs}s)"; fail=1
fi

# (b) connected mode, Dire Wolf to Dire Wolf, through the AGW ports
head -c "$size" /dev/urandom > "$out/payload.bin"
timeout $((budget + 20)) python3 "$here/agw_client.py" listen --port 8020 --call N0CALL-2 \
    --out "$out/received.bin" --expect "$size" --timeout $((budget + 15)) \
    --monitor "$out/B.mon" --tag B --raw "$out/B.raw" > "$out/agw-B.log" 2>&1 & lpid=$!; pids+=($lpid)
sleep 1
timeout $((budget + 10)) python3 "$here/agw_client.py" connect --port 8010 --call N0CALL-1 --to N0CALL-2 \
    --send "$out/payload.bin" --timeout "$budget" \
    --monitor "$out/A.mon" --tag A --raw "$out/A.raw" > "$out/agw-A.log" 2>&1
rc=$?
wait $lpid; lrc=$?
sed 's/^/    A: /' "$out/agw-A.log"; sed 's/^/    B: /' "$out/agw-B.log"
if [ $rc = 0 ] && [ $lrc = 0 ] && cmp -s "$out/payload.bin" "$out/received.bin"; then
    echo "(b) connected mode A->B $size bytes: PASS (byte-exact)"
else
    echo "(b) connected mode A->B $size bytes: FAIL (connect rc=$rc, listen rc=$lrc)"; fail=1
fi
sleep 1
netns_cleanup

sort "$out/A.mon" "$out/B.mon" 2>/dev/null | cut -c1-110 > "$out/timeline.txt"
# frames each side transmitted, by kind (from the 'T' monitor lines)
for n in A B; do
    kinds=$(grep -a " $n T " "$out/timeline.txt" | sed -n 's/.*<\([A-Z]*\).*/\1/p' | sort | uniq -c | awk '{printf "%s=%s ", $2, $1}')
    echo "    $n transmitted: $kinds"
done
if [ -n "$linklab" ]; then
    for n in A B; do
        m=""; grep -q 'SABME' "$out/timeline.txt" && m=--mod128
        "$linklab" decode --format kiss $m "$out/$n.kiss" > "$out/$n.dec" 2>&1
        paste -d' ' "$out/$n.times" "$out/$n.dec" > "$out/$n.txt"
        bad=$(grep -c 'undecodable\|bad KISS' "$out/$n.dec")
        echo "    linklab decode of $n's KISS output: $(wc -l < "$out/$n.dec") frames, $bad undecodable"
        [ "$bad" = 0 ] || fail=1
    done
fi
echo "    $(tail -1 "$out/relay.log")"
[ "$fail" = 0 ] && echo "direwolf-pair: all checks passed" || echo "direwolf-pair: FAILED"
exit $fail
