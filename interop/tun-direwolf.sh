#!/bin/bash
# The kernel's IP stack over linklab's AX.25 over a real modem path: two
# `linklab ip ... tun ax0` hosts, each with its TUN device in a network
# namespace of its own (made here, removed at exit), each the KISS client
# of one of two Dire Wolf 1.6 instances joined by a software audio cable
# (interop/direwolf-lib.sh, interop/audio_relay.py), 9600 bd. Dire Wolf
# listens on loopback TCP in the script's namespace; socat turns each of
# its KISS ports into a pseudo-terminal, which the hosts in their own
# namespaces open as `--kiss serial:PTY:9600` (a pty crosses network
# namespaces, loopback TCP does not).
#
#   interop/tun-direwolf.sh -l LINKLAB [-o OUTDIR] [-s BYTES]
#
#   A: Dire Wolf N0CALL-3, KISS 8011 -- pty -- linklab N0CALL-1, 44.0.0.1
#   B: Dire Wolf N0CALL-4, KISS 8021 -- pty -- linklab N0CALL-2, 44.0.0.2
#
# VC mode, ARP over AX.25, the AX.25 settings of linklab-ip-direwolf.sh.
#   ping    the kernel's ping -c 3 from A to B: 3 replies
#   nc      BYTES (default 5120) of random octets through nc, byte-exact
# Needs root, direwolf, socat, python3, iproute2, iputils-ping,
# netcat-openbsd. About a minute.
set -u

here=$(cd "$(dirname "$0")" && pwd)
. "$here/netns-lib.sh"
netns_need tun-direwolf "apt-get install direwolf socat python3 iproute2 iputils-ping netcat-openbsd" \
    direwolf socat python3 ip ping nc
netns_enter TUN_DIREWOLF_IN_NETNS 240 "$@"

out=""; size=5120; linklab=""; baud=9600
while [ $# -gt 0 ]; do
    case "$1" in
        -o) out=$2; shift 2 ;;
        -s) size=$2; shift 2 ;;
        -l) linklab=$2; shift 2 ;;
        *) echo "usage: $0 -l LINKLAB [-o OUTDIR] [-s BYTES]" >&2; exit 2 ;;
    esac
done
[ -x "$linklab" ] || { echo "tun-direwolf: -l LINKLAB must name the linklab binary" >&2; exit 2; }
[ -n "$out" ] || out=$(mktemp -d /tmp/tun-direwolf.XXXXXX)
mkdir -p "$out"; out=$(cd "$out" && pwd)
linklab=$(cd "$(dirname "$linklab")" && pwd)/$(basename "$linklab")

. "$here/direwolf-lib.sh"
dw_mkconf A N0CALL-3 8011 8010 || exit 2
dw_mkconf B N0CALL-4 8021 8020
netns_lo
netns_pids
nsa="lld-$$-a"; nsb="lld-$$-b"
cleanup() {
    netns_cleanup
    ip netns del "$nsa" 2>/dev/null
    ip netns del "$nsb" 2>/dev/null
}
trap cleanup EXIT
for ns in "$nsa" "$nsb"; do
    ip netns add "$ns" && ip -n "$ns" link set lo up ||
        { echo "tun-direwolf: cannot make network namespace $ns"; exit 1; }
done

fail=0
t0=0
start() { t0=$(date +%s.%N); }
result() { # NAME OK DETAIL
    local res=PASS
    [ "$2" = 1 ] || { res=FAIL; fail=1; }
    printf '%-6s %s %6ss  %s\n' "$1" "$res" \
        "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2f", b-a}')" "$3"
}
wait_line() { # FILE PATTERN SECONDS
    for _ in $(seq $(( $3 * 10 ))); do
        grep -q "$2" "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}

dw_start "" 200 0 1 || { echo "tun-direwolf: Dire Wolf did not start"; exit 1; }
for n in A:8011 B:8021; do
    socat "PTY,link=$out/${n%%:*}.pty,raw,echo=0" "TCP:127.0.0.1:${n##*:}" \
        2> "$out/socat-${n%%:*}.log" & pids+=($!)
done
for n in A B; do
    for _ in $(seq 50); do [ -e "$out/$n.pty" ] && break; sleep 0.1; done
done

# The AX.25 timers of linklab-ip-direwolf.sh at 9600 bd.
opts=(--window 4 --t1-ms 4000 --poll-last --monitor)
ip netns exec "$nsa" "$linklab" ip --kiss "serial:$out/A.pty:9600" --mycall N0CALL-1 \
    --addr 44.0.0.1/24 "${opts[@]}" tun ax0 > "$out/host-A.out" 2> "$out/host-A.log" &
ha=$!; pids+=($ha)
ip netns exec "$nsb" "$linklab" ip --kiss "serial:$out/B.pty:9600" --mycall N0CALL-2 \
    --addr 44.0.0.2/24 "${opts[@]}" tun ax0 > "$out/host-B.out" 2> "$out/host-B.log" &
hb=$!; pids+=($hb)
for n in A B; do
    wait_line "$out/host-$n.log" "ax0 up" 10 ||
        { echo "tun-direwolf: host $n never brought ax0 up:"; cat "$out/host-$n.log"; exit 1; }
done
echo "tun-direwolf: $size bytes at 9600 bd, output in $out"

name=ping; start
ip netns exec "$nsa" ping -c 3 -W 20 44.0.0.2 > "$out/ping.log" 2>&1
got=$(grep -c "bytes from 44.0.0.2" "$out/ping.log")
result "$name" "$([ "$got" = 3 ] && echo 1)" "$got of 3 replies; $(sed -n 's/^rtt //p' "$out/ping.log")"

name=nc; start
head -c "$size" /dev/urandom > "$out/nc.in"
ip netns exec "$nsb" timeout 120 nc -l -p 5000 > "$out/nc.out" 2> "$out/nc.server.log" &
srv=$!; pids+=($srv)
wait_listen "$nsb" 5000 || echo "  nc never listened in B"
ip netns exec "$nsa" timeout 120 nc -q 5 -w 60 44.0.0.2 5000 < "$out/nc.in" 2> "$out/nc.client.log"
wait "$srv"
ok=0; cmp -s "$out/nc.in" "$out/nc.out" && ok=1
result "$name" "$ok" "$(stat -c %s "$out/nc.out") of $size octets"

kill -INT "$ha"; wait "$ha"
kill -INT "$hb"; wait "$hb"
exit "$fail"
