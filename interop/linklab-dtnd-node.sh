#!/bin/bash
# A linklab DTN node (`linklab dtn node`) and dtn7-rs's dtnd
# (`cargo install dtn7 --locked`) exchanging bundles over TCPCLv4, on
# loopback in a network namespace of its own.
#
#   interop/linklab-dtnd-node.sh -l LINKLAB [-o OUTDIR]
#
# The linklab node (dtn://linklab/) keeps a TCPCL session to dtnd
# (dtn://node1/) and routes dtn://node1/* to it. Two runs, each printing
# "NAME PASS" or "NAME FAIL":
#
#   to-dtnd    `linklab dtn send --report` a file to dtn://node1/incoming;
#              dtnd's delivery status report must come back to the sender,
#              and dtnrecv must fetch the payload byte-exact;
#   from-dtnd  dtnsend a file to dtn://linklab/rx; `linklab dtn recv` must
#              write it byte-exact, and the linklab node's delivery status
#              report on it (dtnd's bundles ask for one) must reach dtnd,
#              which logs it decoded.
#
# Needs root (unshare), dtnd, dtnsend, dtnrecv and iproute2. Exits non-zero
# on any failure; bounded to 120 s.
set -u

here=$(cd "$(dirname "$0")" && pwd)
. "$here/netns-lib.sh"
netns_need linklab-dtnd-node "cargo install dtn7 --locked; apt-get install iproute2" dtnd dtnsend dtnrecv unshare ip
netns_enter LINKLAB_DTND_NODE_IN_NETNS 120 "$@"

out=""; linklab=""
while [ $# -gt 0 ]; do
    case "$1" in
        -o) out=$2; shift 2 ;;
        -l) linklab=$2; shift 2 ;;
        *) echo "usage: $0 -l LINKLAB [-o OUTDIR]" >&2; exit 2 ;;
    esac
done
[ -x "$linklab" ] || { echo "linklab-dtnd-node: -l must name the linklab binary" >&2; exit 2; }
[ -n "$out" ] || out=$(mktemp -d /tmp/linklab-dtnd-node.XXXXXX)
mkdir -p "$out"

netns_lo
netns_pids

echo "--- dtnd $(dtnd --version 2>&1 | head -n 1)"
# dtnd sends the status reports it makes at its janitor's rounds (10 s by
# default): every second here.
RUST_LOG=info dtnd -n node1 -W "$out/dtnd" -D mem -r epidemic --disable_nd -i 0 -j 1s \
    -C tcp:port=4556:bind=127.0.0.1 -w 3000 -e incoming --generate-status-reports \
    > "$out/dtnd.log" 2>&1 &
pids+=($!)
for port in 3000 4556; do
    wait_port "$port" ||
        { echo "linklab-dtnd-node: nothing listens on port $port" >&2; tail -n 20 "$out/dtnd.log"; exit 1; }
done

sock="$out/linklab.sock"
"$linklab" dtn node --eid dtn://linklab/ --store "$out/store" \
    --peer 'tcpcl:127.0.0.1:4556=dtn://node1/*' --app-socket "$sock" \
    > "$out/node.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do grep -q "session with dtn://node1/ .* up" "$out/node.log" && break; sleep 0.1; done
grep -q "session with dtn://node1/ .* up" "$out/node.log" ||
    { echo "linklab-dtnd-node: no TCPCL session with dtnd"; cat "$out/node.log"; exit 1; }
echo "--- linklab node"; cat "$out/node.log"

fail=0
result() { # NAME OK DETAIL
    if [ "$2" -eq 0 ]; then echo "$1 PASS $3"; else echo "$1 FAIL $3"; fail=1; fi
}

echo "--- to-dtnd"
head -c 30000 /dev/urandom > "$out/to-dtnd"
timeout 40 "$linklab" dtn send "$out/to-dtnd" dtn://node1/incoming --report --wait 30 \
    --node "$sock" 2>&1 | tee "$out/send.log"
ok=${PIPESTATUS[0]}
grep -q "byte report from \[dtn://node1/\].*delivered" "$out/send.log" || ok=1
got=1
for _ in $(seq 50); do
    dtnrecv -e incoming -o "$out/at-dtnd" > "$out/dtnrecv.log" 2>&1
    if [ -s "$out/at-dtnd" ]; then got=0; break; fi
    sleep 0.1
done
[ "$got" -eq 0 ] && cmp "$out/to-dtnd" "$out/at-dtnd" || ok=1
result to-dtnd "$ok" "(30000 bytes, payload byte-exact at dtnd, delivery report from dtnd)"

echo "--- from-dtnd"
head -c 25000 /dev/urandom > "$out/from-dtnd"
timeout 40 "$linklab" dtn recv --endpoint dtn://linklab/rx --count 1 --out "$out/at-linklab" \
    --node "$sock" > "$out/recv.log" 2>&1 &
recv=$!
sleep 0.5
dtnsend -r dtn://linklab/rx "$out/from-dtnd" 2>&1 | tee "$out/dtnsend.log"
wait $recv; ok=$?
cat "$out/recv.log"
[ "$ok" -eq 0 ] && cmp "$out/from-dtnd" "$out/at-linklab" || ok=1
# dtnsend prints "Bundle-Id: dtn://node1/-CREATED-SEQ"; dtnd logs the
# report it receives on that bundle with the "delivered" item (the third)
# asserted.
id=$(sed -n 's/^Bundle-Id: .*-\([0-9]*\)-\([0-9]*\)$/\1, \2/p' "$out/dtnsend.log")
report=""
for _ in $(seq 50); do
    report=$(grep "administrative record: dtn://linklab/" "$out/dtnd.log" | grep "CreationTimestamp($id)")
    [ -n "$report" ] && break
    sleep 0.1
done
echo "dtnd received: ${report#*administrative record: }" | cut -c1-400
echo "$report" | grep -q "status_information: \[[^]]*}, [^]]*}, BundleStatusItem { asserted: true" || ok=1
result from-dtnd "$ok" "(25000 bytes, payload byte-exact at linklab, linklab's delivery report decoded by dtnd)"

if [ $fail -ne 0 ]; then
    echo "--- linklab node log"; cat "$out/node.log"
    echo "--- dtnd log"; tail -n 30 "$out/dtnd.log"
fi
exit $fail
