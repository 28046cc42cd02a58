#!/bin/bash
# P at the end of every burst, measured: the same file sent with and
# without --poll-last over `linklab channel` (one channel per run, the
# runs of a row side by side), at 9600 and 1200 bit/s.
#
#   bench/poll_last.sh [-l LINKLAB] [-o OUTDIR]
#
# Each run: a two-station channel (TXDELAY 100 ms, P 63, SLOTTIME 100 ms,
# seed 7), `linklab listen --once` on s1, `linklab send --monitor` on s0
# with --window K and --bitrate (the transmit clock's estimate; the
# channel answers ACKMODE, so it is only the fallback). Prints one line
# per run: the time `send` reports from the first I frame to the last
# acknowledgement, the I frames with P, the enquiries after T1 (RR C P),
# and whether the file arrived byte-exact. Loopback only.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
linklab="$here/target/release/linklab"
out=""
while [ $# -gt 0 ]; do
    case "$1" in
        -l) linklab=$2; shift 2 ;;
        -o) out=$2; shift 2 ;;
        *) echo "usage: $0 [-l LINKLAB] [-o OUTDIR]" >&2; exit 2 ;;
    esac
done
[ -x "$linklab" ] || { echo "poll_last: no linklab binary at $linklab (cargo build --release)" >&2; exit 2; }
[ -n "$out" ] || out=$(mktemp -d /tmp/linklab-poll-last.XXXXXX)
mkdir -p "$out"

# run NAME BITRATE WINDOW SIZE BASEPORT SEND-OPTIONS...
run() {
    local name=$1 rate=$2 window=$3 size=$4 base=$5
    shift 5
    local d="$out/$name"
    mkdir -p "$d"
    head -c "$size" /dev/urandom > "$d/file"
    timeout 300 "$linklab" channel --bitrate "$rate" --base-port "$base" --txdelay-ms 100 \
        --seed 7 > "$d/channel.log" 2>&1 &
    local channel=$!
    local n
    for n in $(seq 50); do
        (exec 3<>"/dev/tcp/127.0.0.1/$((base + 1))") 2>/dev/null && break
        sleep 0.1
    done
    timeout 300 "$linklab" listen --kiss "tcp:127.0.0.1:$((base + 1))" --mycall N0B \
        --out "$d/received" --once --bitrate "$rate" > "$d/listen.log" 2>&1 &
    local listener=$!
    sleep 0.3
    timeout 300 "$linklab" send --kiss "tcp:127.0.0.1:$base" --mycall N0A --to N0B \
        --window "$window" --bitrate "$rate" --monitor "$@" "$d/file" > "$d/send.log" 2>&1
    wait "$listener"
    kill "$channel" 2>/dev/null
    wait "$channel" 2>/dev/null
    local exact=no
    cmp -s "$d/file" "$d/received" && exact=yes
    printf '%-28s %6s bit/s  k=%s  %6s octets  %-8s  %s  P=%s  T1-enquiries=%s  byte-exact=%s\n' \
        "$name" "$rate" "$window" "$size" "${*:-(none)}" \
        "$(grep -o 'in [0-9.]* s' "$d/send.log" | head -1)" \
        "$(grep -c '<I C P' "$d/send.log")" "$(grep -c 'RR C P' "$d/send.log")" "$exact"
}

run 9600-k7-poll 9600 7 7182 9300 --poll-last &
run 9600-k7-nopoll 9600 7 7182 9310 --poll-last=false &
wait
run 1200-k4-poll 1200 4 4096 9320 --poll-last &
run 1200-k4-nopoll 1200 4 4096 9330 --poll-last=false &
run 1200-k7-poll 1200 7 7182 9340 --poll-last &
run 1200-k7-nopoll 1200 7 7182 9350 --poll-last=false &
wait
echo "logs in $out"
