#!/bin/bash
# linklab against gensio's AX.25 stack (gensiot, gensio-bin 2.6.2), through
# a greflector KISS hub on loopback, in a network namespace of its own.
#
#   interop/linklab-gensio.sh -l LINKLAB [-o OUTDIR] [-s BYTES]
#
# For modulo 8 and modulo 128:
#   to-gensio    `linklab send` connects to a gensiot that accepts and
#                writes what it receives to a file
#   from-gensio  a gensiot connects to `linklab listen --once` and sends a file
# Every received file must equal the one sent (cmp), both programs must exit
# 0, and the KISS stream recorded by a listen-only client of the hub
# (interop/kiss_tap.py) must decode in linklab with no undecodable frame and
# in tshark with no malformed packet. Needs root (unshare), gensio-bin,
# python3, iproute2 and tshark. Exits non-zero on any failure.
set -u

here=$(cd "$(dirname "$0")" && pwd)
. "$here/netns-lib.sh"
netns_need linklab-gensio "apt-get install gensio-bin tshark python3" gensiot greflector tshark python3
netns_enter LINKLAB_GENSIO_IN_NETNS 300 "$@"

out=""; size=20480; linklab=""
while [ $# -gt 0 ]; do
    case "$1" in
        -o) out=$2; shift 2 ;;
        -s) size=$2; shift 2 ;;
        -l) linklab=$2; shift 2 ;;
        *) echo "usage: $0 -l LINKLAB [-o OUTDIR] [-s BYTES]" >&2; exit 2 ;;
    esac
done
[ -x "$linklab" ] || { echo "linklab-gensio: -l LINKLAB must name the linklab binary" >&2; exit 2; }
[ -n "$out" ] || out=$(mktemp -d /tmp/linklab-gensio.XXXXXX)
mkdir -p "$out"

# Loopback, with the address gensio's AI_ADDRCONFIG needs.
netns_lo --gensio-addr

head -c "$size" /dev/urandom > "$out/data.bin"

netns_pids

fail=0
port=8100
# run NAME MODULUS DIRECTION
run() {
    local name=$1 m=$2 dir=$3
    port=$((port + 1))
    local hub="kiss,tcp,127.0.0.1,$port" kiss="tcp:127.0.0.1:$port"
    local ext=0 mod=""; [ "$m" = 128 ] && { ext=1; mod=--mod128; }
    timeout 120 greflector "$hub" > "$out/$name.hub.log" 2>&1 & local hubpid=$!; pids+=($hubpid)
    wait_port "$port" 5 # at most 5 s; the run fails and says so if it never listens
    timeout 120 python3 "$here/kiss_tap.py" 127.0.0.1 "$port" "$out/$name.kiss" \
        --pcap "$out/$name.pcap" & local tappid=$!; pids+=($tappid)
    wait_file "$out/$name.kiss" 10 # the tap is connected; the run fails on a short capture otherwise
    local rc_l rc_g t0 t1
    t0=$(date +%s.%N)
    if [ "$dir" = to-gensio ]; then
        timeout 90 gensiot -i "file(outfile=$out/$name.out,create)" \
            -a "ax25(laddr=N0CALL-1,extended=$ext),conacc,$hub" > "$out/$name.gensio.log" 2>&1 &
        local g=$!; pids+=($g)
        sleep 0.5
        timeout 90 "$linklab" send --kiss "$kiss" --mycall N0CALL-2 --to N0CALL-1 $mod \
            --monitor "$out/data.bin" > "$out/$name.linklab.out" 2> "$out/$name.linklab.log"
        rc_l=$?; wait "$g"; rc_g=$?
    else
        timeout 90 "$linklab" listen --once --kiss "$kiss" --mycall N0CALL-1 --monitor \
            --out "$out/$name.out" > "$out/$name.linklab.out" 2> "$out/$name.linklab.log" &
        local l=$!; pids+=($l)
        sleep 0.5
        timeout 90 gensiot -i "file(infile=$out/data.bin)" \
            "ax25(laddr=N0CALL-2,extended=$ext,addr=\"0,N0CALL-1,N0CALL-2\"),$hub" \
            > "$out/$name.gensio.log" 2>&1
        rc_g=$?; wait "$l"; rc_l=$?
    fi
    t1=$(date +%s.%N)
    sleep 0.3
    kill "$tappid" "$hubpid" 2>/dev/null; wait "$tappid" "$hubpid" 2>/dev/null
    local ok=1
    [ "$rc_l" = 0 ] && [ "$rc_g" = 0 ] ||
        { ok=0; echo "  $name: exit codes linklab=$rc_l gensiot=$rc_g (logs in $out)"; }
    cmp -s "$out/data.bin" "$out/$name.out" ||
        { ok=0; echo "  $name: received file differs ($(stat -c %s "$out/$name.out" 2>/dev/null || echo 0) of $size bytes)"; }
    "$linklab" decode --format kiss $mod "$out/$name.kiss" > "$out/$name.txt" 2>&1
    grep -q 'undecodable\|bad KISS' "$out/$name.txt" &&
        { ok=0; echo "  $name: linklab could not decode some frames (see $out/$name.txt)"; }
    # tshark reads every I and S control field as modulo 8, so in a
    # modulo-128 capture the second control octet looks like a PID; 0x01
    # (X.25) then sends random data to its X.25 dissector, which calls it
    # malformed. Those dissectors say nothing about our frames: turn them off.
    local malformed noL3=""
    [ "$m" = 128 ] && noL3="--disable-protocol x25"
    malformed=$(tshark -n $noL3 -r "$out/$name.pcap" -Y '_ws.malformed || _ws.expert.severity == error' 2>/dev/null | wc -l)
    [ "$malformed" = 0 ] || { ok=0; echo "  $name: tshark finds $malformed malformed packets"; }
    local frames; frames=$(wc -l < "$out/$name.txt")
    [ "$ok" = 1 ] && res=PASS || { res=FAIL; fail=1; }
    printf '%-18s %s %6ss  frames=%s\n' "$name" "$res" \
        "$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f", b-a}')" "$frames"
}

echo "linklab-gensio: $size bytes, output in $out"
for m in 8 128; do
    run "mod$m-to-gensio" "$m" to-gensio
    run "mod$m-from-gensio" "$m" from-gensio
done
[ "$fail" = 0 ] && echo "linklab-gensio: all runs passed" || echo "linklab-gensio: FAILED"
exit $fail
