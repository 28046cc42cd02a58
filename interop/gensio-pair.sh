#!/bin/bash
# Two gensio AX.25 stacks (gensiot, gensio-bin 2.6.2) connected through one
# greflector KISS hub on loopback, in a network namespace of their own.
#
#   interop/gensio-pair.sh [-o OUTDIR] [-s BYTES] [-l LINKLAB] [--loss]
#
# For modulo 8 (extended=0) and modulo 128 (extended=1) it runs
#   ab      the connecting side (N0CALL-2) sends a file and exits when it is
#           acknowledged; the accepting side (N0CALL-1) writes it to a file and
#           exits on DISC
#   ba      the accepting side sends, the connecting side receives
#   duplex  both send at once (piggy-backed acknowledgements); stopped once
#           both files have arrived
# and, with --loss, "ab" again with gensio's undocumented drop=9 option (each
# stack silently drops every 10th frame it sends), which provokes REJ and T1
# recovery.  Every received file is compared with cmp.  A listen-only client
# of the hub (interop/kiss_tap.py) records the KISS stream of every run in
# OUTDIR/<run>.kiss/.pcap/.times; when linklab is found the stream is decoded
# into OUTDIR/<run>.txt ("seconds length monitor-line").  Needs root (unshare)
# plus gensio-bin, python3 and iproute2.  Exits non-zero on any failure.
set -u

here=$(cd "$(dirname "$0")" && pwd)
. "$here/netns-lib.sh"
netns_need gensio-pair "apt-get install gensio-bin" gensiot greflector
netns_enter GENSIO_PAIR_IN_NETNS 300 "$@"

out=""; size=20480; linklab="${LINKLAB:-}"; loss=0
while [ $# -gt 0 ]; do
    case "$1" in
        -o) out=$2; shift 2 ;;
        -s) size=$2; shift 2 ;;
        -l) linklab=$2; shift 2 ;;
        --loss) loss=1; shift ;;
        *) echo "usage: $0 [-o OUTDIR] [-s BYTES] [-l LINKLAB] [--loss]" >&2; exit 2 ;;
    esac
done
[ -n "$out" ] || out=$(mktemp -d /tmp/gensio-pair.XXXXXX)
mkdir -p "$out"
if [ -z "$linklab" ]; then
    if [ -x "$here/../target/release/linklab" ]; then linklab="$here/../target/release/linklab"
    elif command -v linklab >/dev/null; then linklab=$(command -v linklab); fi
fi

# Loopback only, with the address gensio's AI_ADDRCONFIG needs.
netns_lo --gensio-addr

head -c "$size" /dev/urandom > "$out/a.bin"
head -c "$size" /dev/urandom > "$out/b.bin"

netns_pids

fail=0
port=8000
# run NAME EXTENDED EXTRA_AX25_OPTS ACCEPTER_IO INITIATOR_IO WANT_FILE... (pairs src dst)
run() {
    local name=$1 ext=$2 extra=$3 acc_io=$4 ini_io=$5; shift 5
    port=$((port + 1))
    local hub="kiss,tcp,127.0.0.1,$port"
    timeout 120 greflector "$hub" > "$out/$name.hub.log" 2>&1 & local hubpid=$!; pids+=($hubpid)
    wait_port "$port" 5 # at most 5 s; the run fails and says so if it never listens
    timeout 120 python3 "$here/kiss_tap.py" 127.0.0.1 "$port" "$out/$name.kiss" \
        --pcap "$out/$name.pcap" --times "$out/$name.times" & local tappid=$!; pids+=($tappid)
    wait_file "$out/$name.kiss" 10 # the tap is connected; the run fails on a short capture otherwise
    local opts="extended=$ext$extra"
    timeout 90 gensiot -i "$acc_io" -a "ax25(laddr=N0CALL-1,$opts),conacc,$hub" \
        > "$out/$name.acc.log" 2>&1 & local acc=$!; pids+=($acc)
    sleep 0.5
    local t0=$(date +%s.%N)
    timeout 90 gensiot -i "$ini_io" "ax25(laddr=N0CALL-2,$opts,addr=\"0,N0CALL-1,N0CALL-2\"),$hub" \
        > "$out/$name.ini.log" 2>&1 & local ini=$!; pids+=($ini)
    local rca rci
    if [ "$name" != "${name%duplex}" ]; then
        # nobody closes in duplex mode: wait for both files, then stop both ends
        for _ in $(seq 600); do
            [ "$(stat -c %s "$out/$name.to1" 2>/dev/null)" = "$size" ] &&
            [ "$(stat -c %s "$out/$name.to2" 2>/dev/null)" = "$size" ] && break
            sleep 0.1
        done
        local t1=$(date +%s.%N)
        sleep 0.5; kill "$acc" "$ini" 2>/dev/null; wait "$acc" "$ini" 2>/dev/null; rca=0; rci=0
    else
        wait "$ini"; rci=$?; wait "$acc"; rca=$?
        local t1=$(date +%s.%N)
    fi
    sleep 0.3
    kill "$tappid" "$hubpid" 2>/dev/null; wait "$tappid" "$hubpid" 2>/dev/null
    local ok=1
    [ "$rci" = 0 ] && [ "$rca" = 0 ] || { ok=0; echo "  $name: gensiot exit codes initiator=$rci accepter=$rca"; }
    while [ $# -gt 0 ]; do
        cmp -s "$out/$1" "$out/$2" || { ok=0; echo "  $name: $2 differs from $1 ($(stat -c %s "$out/$2" 2>/dev/null || echo 0) bytes)"; }
        shift 2
    done
    local secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f", b-a}')
    local stats=""
    if [ -n "$linklab" ]; then
        local m=""; [ "$ext" = 1 ] && m=--mod128
        "$linklab" decode --format kiss $m "$out/$name.kiss" > "$out/$name.dec" 2>&1
        paste -d' ' "$out/$name.times" "$out/$name.dec" > "$out/$name.txt"
        stats=$(awk '{
            if ($0 ~ /undecodable|bad KISS/) bad++
            else if (match($0, /<[A-Z]+/)) n[substr($0, RSTART+1, RLENGTH-1)]++ }
            END { for (k in n) printf "%s=%d ", k, n[k]; printf "undecodable=%d", bad+0 }' "$out/$name.dec")
        grep -q 'undecodable\|bad KISS' "$out/$name.dec" && { ok=0; echo "  $name: linklab could not decode some frames (see $out/$name.txt)"; }
    fi
    [ "$ok" = 1 ] && res=PASS || { res=FAIL; fail=1; }
    printf '%-12s %s %6ss  frames=%s %s\n' "$name" "$res" "$secs" "$(wc -l < "$out/$name.times")" "$stats"
}

echo "gensio-pair: $size bytes each way, output in $out"
for m in 8 128; do
    ext=0; [ $m = 128 ] && ext=1
    run "mod$m-ab" $ext "" "file(outfile=$out/mod$m-ab.out,create)" "file(infile=$out/a.bin)" \
        a.bin "mod$m-ab.out"
    run "mod$m-ba" $ext "" "file(infile=$out/b.bin)" "file(outfile=$out/mod$m-ba.out,create)" \
        b.bin "mod$m-ba.out"
    run "mod$m-duplex" $ext "" \
        "file(infile=$out/b.bin,outfile=$out/mod$m-duplex.to1,create,read_close=false)" \
        "file(infile=$out/a.bin,outfile=$out/mod$m-duplex.to2,create,read_close=false)" \
        a.bin "mod$m-duplex.to1" b.bin "mod$m-duplex.to2"
done
if [ "$loss" = 1 ]; then
    run "mod8-loss" 0 ",drop=9" "file(outfile=$out/mod8-loss.out,create)" "file(infile=$out/a.bin)" \
        a.bin "mod8-loss.out"
fi
[ "$fail" = 0 ] && echo "gensio-pair: all runs passed" || echo "gensio-pair: FAILED"
exit $fail
