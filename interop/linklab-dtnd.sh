#!/bin/bash
# linklab's TCPCLv4 session engine (crates/tcpcl) against dtn7-rs's dtnd
# (`cargo install dtn7 --locked`), on loopback in a network namespace of
# its own.
#
#   interop/linklab-dtnd.sh -p TCPCL_PEER [-o OUTDIR]
#
# TCPCL_PEER is the example crates/tcpcl/examples/tcpcl_peer.rs, built. It
# opens a session to dtnd, sends a bundle that dtnd must deliver
# byte-exact, receives dtnd's status reports on it, receives a bundle dtnd
# creates and one put into it over HTTP (byte-exact), and ends with
# SESS_TERM. tshark records the session; its TCPCL dissector must find the
# message types used, nothing malformed and no expert error on linklab's
# packets (dtnd's are listed: dtn7 0.21.0 does not copy the segment flags
# into XFER_ACK, RFC 9174 section 5.2.3). Needs root (unshare), dtnd, tshark and
# iproute2. Exits non-zero on any failure; bounded to 180 s.
set -u

here=$(cd "$(dirname "$0")" && pwd)
. "$here/netns-lib.sh"
netns_need linklab-dtnd "cargo install dtn7 --locked; apt-get install tshark iproute2" dtnd tshark unshare ip
netns_enter LINKLAB_DTND_IN_NETNS 180 "$@"

out=""; peer=""
while [ $# -gt 0 ]; do
    case "$1" in
        -o) out=$2; shift 2 ;;
        -p) peer=$2; shift 2 ;;
        *) echo "usage: $0 -p TCPCL_PEER [-o OUTDIR]" >&2; exit 2 ;;
    esac
done
[ -x "$peer" ] || { echo "linklab-dtnd: -p must name the built tcpcl_peer example" >&2; exit 2; }
[ -n "$out" ] || out=$(mktemp -d /tmp/linklab-dtnd.XXXXXX)
mkdir -p "$out"

netns_lo
netns_pids

pcap="$out/tcpcl.pcapng"
tshark -i lo -f "tcp port 4556" -w "$pcap" > "$out/capture.log" 2>&1 &
capture=$!; pids+=($capture)
for _ in $(seq 100); do grep -q "Capturing on" "$out/capture.log" && break; sleep 0.1; done

echo "--- dtnd $(dtnd --version 2>&1 | head -n 1)"
RUST_LOG=info dtnd -n node1 -W "$out/dtnd" -D mem -r epidemic --disable_nd -i 0 \
    -C tcp:port=4556:bind=127.0.0.1 -w 3000 -e incoming --generate-status-reports \
    > "$out/dtnd.log" 2>&1 &
pids+=($!)
for port in 3000 4556; do
    wait_port "$port" ||
        { echo "linklab-dtnd: nothing listens on port $port" >&2; tail -n 20 "$out/dtnd.log"; exit 1; }
done

fail=0
timeout 60 "$peer" --tcpcl 127.0.0.1:4556 --http 127.0.0.1:3000 --dtnd-node dtn://node1/ \
    2>&1 | tee "$out/peer.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || { fail=1; echo "--- dtnd log"; tail -n 30 "$out/dtnd.log"; }

sleep 1
kill -INT "$capture" 2>/dev/null; wait "$capture" 2>/dev/null

echo "--- tshark's TCPCLv4 dissector on the captured session (two passes)"
ts() { tshark -2 -n -r "$pcap" -d tcp.port==4556,tcpcl "$@" 2>/dev/null; }
types=$(ts -T fields -e tcpcl.v4.mhdr.type | tr ',' '\n' | grep -v '^$' | sort | uniq -c)
echo "message types (count, code): $(echo $types)"
# XFER_SEGMENT, XFER_ACK, SESS_TERM and SESS_INIT must all be there.
for code in 0x01 0x02 0x05 0x07; do
    echo "$types" | awk '{print $2}' | grep -qx "$code" ||
        { echo "linklab-dtnd: tshark saw no TCPCLv4 message of type $code" >&2; fail=1; }
done
malformed=$(ts -Y '_ws.malformed' | wc -l)
ours=$(ts -Y 'tcp.dstport == 4556 && _ws.expert.severity >= error' | wc -l)
theirs=$(ts -Y 'tcp.srcport == 4556 && _ws.expert.severity >= error' -T fields -e frame.number -e _ws.expert.message)
echo "malformed packets: $malformed; expert errors on linklab's packets: $ours"
if [ -n "$theirs" ]; then echo "expert errors on dtnd's packets (frame, message):"; echo "$theirs"; fi
[ "$malformed" -eq 0 ] && [ "$ours" -eq 0 ] ||
    { ts -Y '_ws.malformed || (tcp.dstport == 4556 && _ws.expert.severity >= error)' -V | head -n 80; fail=1; }

if [ $fail -eq 0 ]; then echo "linklab-dtnd: PASS"; else echo "linklab-dtnd: FAIL (logs in $out)"; fi
exit $fail
