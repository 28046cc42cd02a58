#!/bin/bash
# `linklab station`'s NET/ROM node against LinBPQ, by hand (LinBPQ is not
# in Debian, so CI does not run this). Four stations on one `linklab
# channel` at 38 400 bit/s, in a line where each hears only its
# neighbours, in a network namespace of their own (loopback only):
#
#   A  linklab station  node N0LLA-2 / LLA, service N0LLA-5 (echo),
#                       LinBPQ's transport timeout (60 s, 3 tries),
#                       AGWPE 8201 (port 2 is the node)          KISS 8101
#   B  LinBPQ           N0BPB / BPQB, telnet 8112                KISS 8102
#   C  LinBPQ           N0BPC / BPQC, telnet 8113                KISS 8103
#   D  linklab station  service N0ECH-5 (echo), no NET/ROM       KISS 8104
#
#   interop/linbpq-station.sh -l LINKLAB -q LINBPQ [-o OUTDIR]
#
# What it checks, one PASS/FAIL line each:
#   nodes-b, nodes-c   LinBPQ's NODES at B and at C list LLA:N0LLA-2 (at C
#                      only through B); their ROUTES and NODES answers are
#                      kept, with the qualities
#   nodes-a            `linklab status` at A lists BPQB and BPQC, BPQC at
#                      the quality B's broadcast and the port give it
#   a-to-d-20k         an AGWPE client at A connects on the node's port to
#                      BPQC, types `C 1 N0ECH-5` there, sends 20 480
#                      octets and gets them back from D's echo byte-exact
#                      (A's node, B, C's node and C's AX.25 downlink)
#   c-to-a             C's console connects to LLA; the line typed comes
#                      back from A's echo service
#   cut-fails          a circuit from A to BPQC is open when B stops; the
#                      line sent then goes unanswered and the circuit
#                      ends, the client told (transport timeout)
#   cut-new-fails      a new circuit to BPQC fails as well
#   routes-age-out     A's routes through B are gone after obsolescence
#                      (3 broadcasts of 60 s here)
#   routes-return      B started again: A learns BPQC again
# OUTDIR keeps the configs, every log, LinBPQ's answers, A's status at
# each step and the channel's pcap. Needs root (unshare), python3,
# iproute2. Up to 40 minutes.
set -u

here=$(cd "$(dirname "$0")" && pwd)
. "$here/netns-lib.sh"
netns_need linbpq-station "apt-get install python3 iproute2" python3 ip
netns_enter LINKLAB_BPQ_STATION_IN_NETNS 2400 "$@"

linklab= linbpq= out=
while [ $# -gt 0 ]; do
    case $1 in
        -l) linklab=$2; shift 2 ;;
        -q) linbpq=$2; shift 2 ;;
        -o) out=$2; shift 2 ;;
        *) echo "linbpq-station: unknown option $1" >&2; exit 2 ;;
    esac
done
for b in "$linklab" "$linbpq"; do
    [ -x "$b" ] || { echo "linbpq-station: -l and -q need executables (got '$b')" >&2; exit 2; }
done
out=${out:-$(mktemp -d /tmp/linbpq-station.XXXXXX)}
mkdir -p "$out"
out=$(cd "$out" && pwd)
netns_lo
netns_pids
. "$here/linbpq-lib.sh"

line_channel 35 '[["a", "c"], ["a", "d"], ["b", "d"]]'

cat >"$out/a.toml" <<EOF
[station]
callsign = "N0LLA"
control = "$out/a.sock"
[agw]
listen = "127.0.0.1:8201"
[[port]]
name = "vhf"
kiss = "tcp:127.0.0.1:8101"
callsigns = ["N0LLA"]
[[service]]
callsign = "N0LLA-5"
builtin = "echo"
[netrom]
callsign = "N0LLA-2"
alias = "LLA"
service = "N0LLA-5"
nodes-interval-s = 60
obsolescence = 3
transport-timeout-s = 60
transport-tries = 3
[[netrom.port]]
name = "vhf"
quality = 192
EOF
cat >"$out/d.toml" <<EOF
[station]
control = "$out/d.sock"
[[port]]
name = "vhf"
kiss = "tcp:127.0.0.1:8104"
callsigns = ["N0ECH"]
[[service]]
callsign = "N0ECH-5"
builtin = "echo"
EOF
"$linklab" station --config "$out/a.toml" >"$out/a.log" 2>&1 &
pids+=($!)
"$linklab" station --config "$out/d.toml" >"$out/d.log" 2>&1 &
pids+=($!)
bpq b N0BPB BPQB 8102 8112 8122
b_pid=${pids[-1]}
bpq c N0BPC BPQC 8103 8113 8123
wait_port 8112 && wait_port 8113 && wait_port 8201 ||
    { echo "linbpq-station: a node did not start" >&2; exit 1; }

status() { "$linklab" status --control "$out/a.sock" --json; }
# Waits up to SECONDS until `linklab status` at A does (1) or does not
# (0) list the destination CALL: SECONDS WANT CALL
wait_dest() {
    local i
    for i in $(seq "$1"); do
        if status | python3 -c '
import json, sys
r = json.load(sys.stdin)
have = any(d["callsign"] == sys.argv[2] and d["routes"] for d in r["netrom"]["destinations"])
sys.exit(0 if have == (sys.argv[1] == "1") else 1)' "$2" "$3"; then
            return 0
        fi
        sleep 1
    done
    return 1
}

# An AGWPE client at A on the node's port (AGWPE port 2, 1 in the
# header): CALL-TO, OCTETS of payload to send and get back after the
# lines (0: none), then the lines to type; a line `!kill PID` stops that
# process instead, and `!until-cut` waits for the circuit to end by
# itself.
agw() {
    python3 - "$@" <<'EOF'
import os, random, signal, socket, struct, sys, time
to, octets, lines = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
s = socket.create_connection(("127.0.0.1", 8201), timeout=5)
def send(kind, data=b""):
    f = lambda c: c.encode().ljust(10, b"\0")
    s.sendall(struct.pack("<B3xcxBx10s10sII", 1, kind, 0xF0, f("N0USR-3"), f(to), len(data), 0) + data)
buf = b""
def frames(secs):
    global buf
    end = time.time() + secs
    while time.time() < end:
        while len(buf) >= 36:
            n = struct.unpack("<I", buf[28:32])[0]
            if len(buf) < 36 + n:
                break
            h, d, buf = buf[:36], buf[36:36 + n], buf[36 + n:]
            yield chr(h[4]), d
        s.settimeout(max(0.05, min(1, end - time.time())))
        try:
            got = s.recv(65536)
        except socket.timeout:
            continue
        if not got:
            return
        buf += got
def wait(kinds, secs, text=None):
    seen = b""
    for kind, data in frames(secs):
        if kind == "D":
            seen += data
        print(kind, data.decode("latin-1").replace("\r", "\n"), flush=True)
        if kind in kinds and (text is None or text in seen):
            return kind, seen
    return None, seen
send(b"C")
kind, _ = wait("Cd", 300)
if kind != "C":
    print("RESULT not connected:", kind)
    sys.exit(1)
for line in lines:
    if line.startswith("!kill "):
        os.kill(int(line.split()[1]), signal.SIGTERM)
        print(">> (the middle node stopped)", flush=True)
        continue
    if line == "!until-cut":
        kind, _ = wait("d", 900)
        print("RESULT cut:", "disconnected" if kind == "d" else "still open", flush=True)
        sys.exit(0)
    send(b"D", line.encode() + b"\r")
    print(">>", line, flush=True)
    wait("D", 60, b"Connected to" if line.startswith("C ") else None)
if octets:
    rng = random.Random(20480)
    payload = b"".join(bytes(rng.choice(b"abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(79)) + b"\r" for _ in range(octets // 80))
    for i in range(0, len(payload), 1024):
        send(b"D", payload[i:i + 1024])
    got = b""
    start = time.time()
    for kind, data in frames(900):
        if kind == "D":
            got += data
        if kind == "d" or len(got) >= len(payload):
            break
    same = next((i for i, (a, b) in enumerate(zip(got, payload)) if a != b), min(len(got), len(payload)))
    verdict = "byte-exact" if got == payload else (f"cut short, the first {same} octets right" if same == len(got) else f"DIFFERENT from octet {same}")
    print("RESULT", f"{len(got)} octets back in {time.time() - start:.0f} s,", verdict)
send(b"d")
wait("d", 120)
EOF
}


# C's entry reaches A through B in two or three NODES rounds.
wait_dest 400 1 N0BPC
status >"$out/a-status-1.json"
"$linklab" status --control "$out/a.sock" >"$out/a-status-1.txt"
console 4 8112 NODES ROUTES "N LLA" >"$out/b-nodes.txt"
console 4 8113 NODES ROUTES "N LLA" >"$out/c-nodes.txt"
check nodes-b grep -q "LLA:N0LLA-2" "$out/b-nodes.txt"
check nodes-c grep -q "LLA:N0LLA-2" "$out/c-nodes.txt"
check nodes-a grep -q "BPQC:N0BPC" "$out/a-status-1.txt"

agw BPQC 20480 "C 1 N0ECH-5" >"$out/a-to-d.txt" 2>&1
check a-to-d-20k grep -q "RESULT 20480 octets back .* byte-exact" "$out/a-to-d.txt"

console 30 8113 "C LLA" "hello from BPQC" >"$out/c-to-a.txt"
check c-to-a bash -c "grep -A3 '>> hello from BPQC' '$out/c-to-a.txt' | grep -q '^hello from BPQC'"

# The middle node goes away under an open circuit, which fails by
# itself; a new one then fails too.
agw BPQC 0 "!kill $b_pid" "a line after the cut" "!until-cut" >"$out/cut.txt" 2>&1
wait "$b_pid" 2>/dev/null
check cut-fails bash -c "grep -q 'RESULT cut: disconnected' '$out/cut.txt' && grep -q 'no answer from the far node' '$out/a.log'"
agw BPQC 0 >"$out/cut-new.txt" 2>&1
check cut-new-fails grep -q 'RESULT not connected: d' "$out/cut-new.txt"
wait_dest 400 0 N0BPC
check routes-age-out wait_dest 1 0 N0BPB
status >"$out/a-status-2.json"

# And comes back.
bpq b N0BPB BPQB 8102 8112 8122
wait_port 8112 || echo "linbpq-station: B did not start again" >&2
check routes-return wait_dest 400 1 N0BPC
status >"$out/a-status-3.json"
"$linklab" status --control "$out/a.sock" >"$out/a-status-3.txt"

echo "linbpq-station: $pass passed, $fail failed; logs in $out"
[ "$fail" -eq 0 ]
