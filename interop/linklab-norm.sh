#!/bin/bash
# linklab's NORM engines (crates/norm, driven over UDP by the norm_udp
# example) against Debian's libnorm (libnorm-dev 1.5.9, through the small
# C API harness interop/norm/norm_peer.c), on loopback in a network
# namespace of its own.
#
#   interop/linklab-norm.sh -u NORM_UDP [-o OUTDIR]
#
# Runs, each with two objects, byte-exact (cmp) and with the sender's
# watermark positively acknowledged by the receiver (NORM_CMD(FLUSH) /
# NORM_ACK(FLUSH)):
#   from-libnorm       libnorm sends to linklab, 2 Mbit/s
#   from-libnorm-fec   the same at the paper's 128 kbit/s, with linklab
#                      discarding every 5th source symbol: the blocks must be
#                      rebuilt from libnorm's Reed-Solomon parity
#   to-libnorm         linklab sends to libnorm, 2 Mbit/s
#   to-libnorm-fec     the same at 84 kbit/s, linklab discarding every 5th
#                      source symbol it sends: libnorm rebuilds the blocks
#                      from linklab's parity
# Every datagram of every run is captured (dumpcap) and must decode in
# tshark's NORM dissector with no malformed packet. Needs root (unshare),
# g++, libnorm-dev, tshark. Exits non-zero on any failure.
set -u

here=$(cd "$(dirname "$0")" && pwd)
. "$here/netns-lib.sh"
netns_need linklab-norm "apt-get install g++ tshark libnorm-dev" g++ tshark dumpcap unshare
[ -f /usr/include/normApi.h ] ||
    { echo "linklab-norm: needs libnorm-dev (apt-get install libnorm-dev)" >&2; exit 2; }
netns_enter LINKLAB_NORM_IN_NETNS 300 "$@"

out=""; norm_udp=""
while [ $# -gt 0 ]; do
    case "$1" in
        -o) out=$2; shift 2 ;;
        -u) norm_udp=$2; shift 2 ;;
        *) echo "usage: $0 -u NORM_UDP [-o OUTDIR]" >&2; exit 2 ;;
    esac
done
[ -x "$norm_udp" ] || { echo "linklab-norm: -u must name the norm_udp example binary" >&2; exit 2; }
[ -n "$out" ] || out=$(mktemp -d /tmp/linklab-norm.XXXXXX)
mkdir -p "$out"
netns_lo

peer="$out/norm_peer"
g++ -x c++ -O1 -Wall -o "$peer" "$here/norm/norm_peer.c" -lnorm ||
    { echo "linklab-norm: norm_peer does not build against libnorm" >&2; exit 1; }

netns_pids

fail=0
port=6100
# run NAME DIRECTION RATE-BPS DROP-EVERY SIZE1 SIZE2
run() {
    local name=$1 dir=$2 rate=$3 drop=$4
    local d="$out/$name"; mkdir -p "$d"
    port=$((port + 1))
    head -c "$5" /dev/urandom > "$d/a.bin"
    head -c "$6" /dev/urandom > "$d/b.bin"
    dumpcap -q -i lo -f "udp" -w "$d/norm.pcapng" > "$d/dumpcap.log" 2>&1 & local cap=$!; pids+=($cap)
    for _ in $(seq 50); do [ -s "$d/norm.pcapng" ] && break; sleep 0.1; done
    local rx_rc tx_rc summary
    if [ "$dir" = from ]; then
        timeout 150 "$norm_udp" recv --bind 127.0.0.1:$port --node 2 --count 2 --out "$d" \
            --drop-every "$drop" > "$d/linklab.out" 2> "$d/linklab.err" & local rx=$!; pids+=($rx)
        sleep 0.3
        timeout 150 "$peer" send 127.0.0.1 $port 1 "$rate" 1024 64 16 0 2 "$d/a.bin" "$d/b.bin" \
            2> "$d/libnorm.err"; tx_rc=$?
        wait $rx; rx_rc=$?
    else
        timeout 150 "$peer" recv 127.0.0.1 $port 2 2 "$d" 2> "$d/libnorm.err" & local rx=$!; pids+=($rx)
        sleep 0.3
        timeout 150 "$norm_udp" send --bind 127.0.0.1:$((port + 1000)) --to 127.0.0.1:$port \
            --node 1 --rate "$rate" --acker 2 --drop-every "$drop" "$d/a.bin" "$d/b.bin" \
            > "$d/linklab.out" 2> "$d/linklab.err"; tx_rc=$?
        wait $rx; rx_rc=$?
    fi
    sleep 0.5
    kill -INT $cap 2>/dev/null; wait $cap 2>/dev/null
    local why=""
    [ $tx_rc -eq 0 ] || why="$why sender-exit=$tx_rc"
    [ $rx_rc -eq 0 ] || why="$why receiver-exit=$rx_rc"
    cmp -s "$d/a.bin" "$d/rx.1" && cmp -s "$d/b.bin" "$d/rx.2" || why="$why not-byte-exact"
    local msgs malformed
    msgs=$(tshark -r "$d/norm.pcapng" -d udp.port==$port,norm -d udp.port==$((port + 1000)),norm \
        -Y norm 2>/dev/null | wc -l)
    malformed=$(tshark -r "$d/norm.pcapng" -d udp.port==$port,norm -d udp.port==$((port + 1000)),norm \
        -Y "_ws.malformed || _ws.expert.severity == error" 2>/dev/null | wc -l)
    [ "$msgs" -gt 0 ] || why="$why no-norm-in-capture"
    [ "$malformed" -eq 0 ] || why="$why tshark-malformed=$malformed"
    if [ "$drop" -gt 0 ]; then
        if [ "$dir" = from ]; then
            grep -Eq ' [1-9][0-9]* blocks decoded from parity' "$d/linklab.out" || why="$why no-parity-decoding"
        else
            grep -Eq ' [1-9][0-9]* repairs' "$d/linklab.out" || why="$why no-repairs"
        fi
    fi
    summary=$(head -n 1 "$d/linklab.out" 2>/dev/null)
    if [ -z "$why" ]; then
        echo "$name PASS $5+$6 octets, $msgs NORM messages decoded by tshark; linklab: $summary"
    else
        echo "$name FAIL$why (see $d)"
        fail=1
    fi
}

run from-libnorm     from 2000000 0 30000 100001
run from-libnorm-fec from 128000  5 20000 30001
run to-libnorm       to   2000000 0 30000 100001
run to-libnorm-fec   to   84000   5 20000 30001
exit $fail
