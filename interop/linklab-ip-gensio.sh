#!/bin/bash
# TCP/IP over AX.25 between two `linklab ip` processes through gensio's
# KISS hub (greflector, gensio-bin 2.6.2) on loopback, in a network
# namespace of its own.
#
#   interop/linklab-ip-gensio.sh -l LINKLAB [-o OUTDIR] [-s BYTES]
#
# For VC mode (ARP) and datagram mode (static neighbours): N0CALL-2 at
# 44.0.0.2 serves one TCP transfer; N0CALL-1 at 44.0.0.1 pings it three
# times and sends it a file. Every ping must be answered, the received file
# must equal the one sent (cmp), all three programs must exit 0, and the
# KISS stream recorded by a listen-only client of the hub
# (interop/kiss_tap.py) must decode in linklab with no undecodable frame and
# in tshark (AX.25, ARP, IP, ICMP, TCP) with no malformed packet. Needs
# root (unshare), gensio-bin, python3, iproute2 and tshark. Exits non-zero
# on any failure.
set -u

here=$(cd "$(dirname "$0")" && pwd)
. "$here/netns-lib.sh"
netns_need linklab-ip-gensio "apt-get install gensio-bin tshark python3" greflector tshark python3
netns_enter LINKLAB_IP_GENSIO_IN_NETNS 120 "$@"

out=""; size=20480; linklab=""
while [ $# -gt 0 ]; do
    case "$1" in
        -o) out=$2; shift 2 ;;
        -s) size=$2; shift 2 ;;
        -l) linklab=$2; shift 2 ;;
        *) echo "usage: $0 -l LINKLAB [-o OUTDIR] [-s BYTES]" >&2; exit 2 ;;
    esac
done
[ -x "$linklab" ] || { echo "linklab-ip-gensio: -l LINKLAB must name the linklab binary" >&2; exit 2; }
[ -n "$out" ] || out=$(mktemp -d /tmp/linklab-ip-gensio.XXXXXX)
mkdir -p "$out"

# Loopback, with the address gensio's AI_ADDRCONFIG needs.
netns_lo --gensio-addr

head -c "$size" /dev/urandom > "$out/data.bin"

netns_pids

fail=0
port=8200
# run NAME MODE: one ping and one transfer in MODE (vc or datagram)
run() {
    local name=$1 mode=$2
    port=$((port + 1))
    local hub="kiss,tcp,127.0.0.1,$port" kiss="tcp:127.0.0.1:$port"
    local n1=() n2=()
    if [ "$mode" = datagram ]; then
        n1=(--no-arp --neighbour 44.0.0.2=N0CALL-2)
        n2=(--no-arp --neighbour 44.0.0.1=N0CALL-1)
    fi
    timeout 60 greflector "$hub" > "$out/$name.hub.log" 2>&1 & local hubpid=$!; pids+=($hubpid)
    wait_port "$port" 5 # at most 5 s; the run fails and says so if it never listens
    timeout 60 python3 "$here/kiss_tap.py" 127.0.0.1 "$port" "$out/$name.kiss" \
        --pcap "$out/$name.pcap" & local tappid=$!; pids+=($tappid)
    wait_file "$out/$name.kiss" 10 # the tap is connected; the run fails on a short capture otherwise
    local common=(ip --kiss "$kiss" --mode "$mode" --monitor)
    timeout 45 "$linklab" "${common[@]}" --mycall N0CALL-2 --addr 44.0.0.2/24 "${n2[@]}" \
        serve --port 5001 --count 1 --out "$out/$name.out" \
        > "$out/$name.serve.out" 2> "$out/$name.serve.log" &
    local server=$!; pids+=($server)
    sleep 0.5
    local rc_p rc_s rc_v t0 t1
    t0=$(date +%s.%N)
    timeout 30 "$linklab" "${common[@]}" --mycall N0CALL-1 --addr 44.0.0.1/24 "${n1[@]}" \
        ping 44.0.0.2 -c 3 -i 0.2 > "$out/$name.ping.out" 2> "$out/$name.ping.log"
    rc_p=$?
    timeout 30 "$linklab" "${common[@]}" --mycall N0CALL-1 --addr 44.0.0.1/24 "${n1[@]}" \
        send "$out/data.bin" 44.0.0.2:5001 > "$out/$name.send.out" 2> "$out/$name.send.log"
    rc_s=$?
    wait "$server"; rc_v=$?
    t1=$(date +%s.%N)
    sleep 0.3
    kill "$tappid" "$hubpid" 2>/dev/null; wait "$tappid" "$hubpid" 2>/dev/null
    local ok=1
    [ "$rc_p" = 0 ] && [ "$rc_s" = 0 ] && [ "$rc_v" = 0 ] ||
        { ok=0; echo "  $name: exit codes ping=$rc_p send=$rc_s serve=$rc_v (logs in $out)"; }
    grep -q '3 packets transmitted, 3 received, 0% packet loss' "$out/$name.ping.out" ||
        { ok=0; echo "  $name: ping lost replies: $(grep transmitted "$out/$name.ping.out")"; }
    cmp -s "$out/data.bin" "$out/$name.out" ||
        { ok=0; echo "  $name: received file differs ($(stat -c %s "$out/$name.out" 2>/dev/null || echo 0) of $size bytes)"; }
    "$linklab" decode --format kiss "$out/$name.kiss" > "$out/$name.txt" 2>&1
    grep -q 'undecodable\|bad KISS' "$out/$name.txt" &&
        { ok=0; echo "  $name: linklab could not decode some frames (see $out/$name.txt)"; }
    local malformed ip tcp
    malformed=$(tshark -n -r "$out/$name.pcap" -Y '_ws.malformed || _ws.expert.severity == error' 2>/dev/null | wc -l)
    [ "$malformed" = 0 ] || { ok=0; echo "  $name: tshark finds $malformed malformed packets"; }
    # tshark must see the TCP segments and ICMP echoes inside the AX.25 frames.
    tcp=$(tshark -n -r "$out/$name.pcap" -Y tcp 2>/dev/null | wc -l)
    ip=$(tshark -n -r "$out/$name.pcap" -Y 'icmp.type == 0' 2>/dev/null | wc -l)
    [ "$tcp" -gt 0 ] && [ "$ip" = 3 ] ||
        { ok=0; echo "  $name: tshark sees $tcp TCP segments and $ip echo replies"; }
    local frames; frames=$(wc -l < "$out/$name.txt")
    [ "$ok" = 1 ] && res=PASS || { res=FAIL; fail=1; }
    printf '%-12s %s %6ss  frames=%s tcp=%s %s\n' "$name" "$res" \
        "$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f", b-a}')" "$frames" "$tcp" \
        "$(grep -o 'goodput [0-9]* bit/s' "$out/$name.send.out")"
}

echo "linklab-ip-gensio: $size bytes, output in $out"
run vc vc
run datagram datagram
[ "$fail" = 0 ] && echo "linklab-ip-gensio: all runs passed" || echo "linklab-ip-gensio: FAILED"
exit $fail
