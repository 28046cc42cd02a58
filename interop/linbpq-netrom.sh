#!/bin/bash
# crates/netrom against LinBPQ, a real NET/ROM node, by hand (LinBPQ is not
# in Debian, so CI does not run this). Three stations in a line on one
# `linklab channel` at 38 400 bit/s, and a fourth station D beside C, all
# hearing only B (A, C and D hidden from each other), in a network
# namespace of their own (loopback only):
#
#   A  LinBPQ  N0BPA / BPQA (application N0BPA-1 BPQAB)  KISS 8101, telnet 8111
#   B  LinBPQ  N0BPB / BPQB (application N0BPB-1 BPQBB)  KISS 8102, telnet 8112
#   C  crates/netrom/examples/kiss_node  N0LLC / LLC      KISS 8103
#   D  crates/netrom/examples/kiss_node  N0LLD / LLD      KISS 8104
#
#   interop/linbpq-netrom.sh -l LINKLAB -n KISS_NODE -q LINBPQ [-o OUTDIR]
#
# LINKLAB is the linklab binary, KISS_NODE the example
# (`cargo build -p linklab-netrom --example kiss_node`), LINBPQ a linbpq
# built from its public source (docs/interop.md says how). NODES go every
# minute on all three. What it checks, one PASS/FAIL line each:
#   nodes-a, nodes-b  LinBPQ's NODES command at A and at B lists LLC
#                     (at A only through B)
#   c-to-a            C opens a circuit to BPQA through B once it has a
#                     route, sends NODES and gets A's node table back
#   a-to-c            A's console connects to LLC through B and the line
#                     sent comes back from C's echo
#   d-to-c-20k        D opens a circuit to LLC through B and sends 20 480
#                     pseudo-random octets; C echoes them; D gets all
#                     back byte-exact (20 KB each way through LinBPQ's
#                     layer 3)
# OUTDIR keeps the configs, every log, LinBPQ's NODES/ROUTES answers, the
# channel's monitor log and its pcap (every NET/ROM frame on the air).
# Needs root (unshare), python3, iproute2. Up to 16 minutes.
set -u

here=$(cd "$(dirname "$0")" && pwd)
. "$here/netns-lib.sh"
netns_need linbpq-netrom "apt-get install python3 iproute2" python3 ip
netns_enter LINKLAB_BPQ_IN_NETNS 1000 "$@"

linklab= node= linbpq= out=
while [ $# -gt 0 ]; do
    case $1 in
        -l) linklab=$2; shift 2 ;;
        -n) node=$2; shift 2 ;;
        -q) linbpq=$2; shift 2 ;;
        -o) out=$2; shift 2 ;;
        *) echo "linbpq-netrom: unknown option $1" >&2; exit 2 ;;
    esac
done
for b in "$linklab" "$node" "$linbpq"; do
    [ -x "$b" ] || { echo "linbpq-netrom: -l, -n and -q need executables (got '$b')" >&2; exit 2; }
done
out=${out:-$(mktemp -d /tmp/linbpq-netrom.XXXXXX)}
mkdir -p "$out"
out=$(cd "$out" && pwd)
netns_lo
netns_pids

. "$here/linbpq-lib.sh"
line_channel 34 '[["a", "c"], ["a", "d"], ["c", "d"]]'

bpq a N0BPA BPQA 8101 8111 8121
bpq b N0BPB BPQB 8102 8112 8122
wait_port 8111 && wait_port 8112 || { echo "linbpq-netrom: LinBPQ did not start" >&2; exit 1; }

"$node" --kiss 127.0.0.1:8103 --call N0LLC --alias LLC --nodes-secs 60 \
    --connect BPQA --send NODES --hold-secs 20 --run-secs 900 \
    >"$out/kiss_node.log" 2>&1 &
node_pid=$!
pids+=($node_pid)
"$node" --kiss 127.0.0.1:8104 --call N0LLD --alias LLD --nodes-secs 60 \
    --connect LLC --send-octets 20480 --hold-secs 800 --run-secs 900 \
    >"$out/kiss_node_d.log" 2>&1 &
node_d_pid=$!
pids+=($node_d_pid)

# C's entry reaches A through B in two or three NODES rounds; C connects
# to BPQA as soon as B advertises it. Wait for A's answer on that circuit
# (at most 280 s), then ask the consoles.
for _ in $(seq 280); do
    grep -q "< BPQA:N0BPA} Nodes" "$out/kiss_node.log" && break
    sleep 1
done
console 4 8111 NODES ROUTES "N LLC" >"$out/a-nodes.txt"
console 4 8112 NODES ROUTES "N LLC" "N BPQA" >"$out/b-nodes.txt"
# The circuit shares the air with D's transfer: give each answer 30 s.
console 30 8111 "C LLC" "hello from BPQA" >"$out/a-to-c.txt"

check nodes-a grep -q "LLC:N0LLC" "$out/a-nodes.txt"
check nodes-b grep -q "LLC:N0LLC" "$out/b-nodes.txt"
check c-to-a grep -q "< BPQA:N0BPA} Nodes" "$out/kiss_node.log"
for _ in $(seq 700); do
    grep -q "echo: " "$out/kiss_node_d.log" && break
    sleep 1
done
check d-to-c-20k grep -q "echo: 20480 octets back, byte-exact" "$out/kiss_node_d.log"
check a-to-c bash -c "grep -q 'linklab LLC:N0LLC} echo' '$out/a-to-c.txt' && grep -A2 '>> hello from BPQA' '$out/a-to-c.txt' | grep -q '^hello from BPQA'"
wait "$node_pid" "$node_d_pid"
echo "linbpq-netrom: $pass passed, $fail failed; logs in $out"
[ "$fail" -eq 0 ]
