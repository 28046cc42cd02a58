#!/usr/bin/env bash
# Streamed sends (issue 29): for files of 1, 10, 30, 60 and 100 MB sent
# with `linklab send` over a fast two-station KISS hub on loopback, the
# time from the UA to the first I frame, the sender's peak memory, and the
# frame rate in the first fifth of the transfer and in the fifth before the
# last 5% (which ends with the last window's wait for its acknowledgement
# and the release).
#
#   bench/send_stream.sh [LINKLAB ...]
#
# LINKLAB defaults to target/release/linklab; give several binaries (a
# build of main, say) to measure them side by side in one run. SIZES
# (megabytes, default "1 10 30 60 100") and ARGS (extra `send` and
# `listen` options, e.g. "--window 1") may be set in the environment.
#
# The hub is a relay between two TCP ports (a shared channel with perfect
# reception and no bit rate, as the tests' hub): it timestamps the UA it
# relays from the listener and the first I frame from the sender, and
# counts the sender's KISS frames (two FENDs each) as they pass. The
# files are seeded pseudo-random data; every copy is checked byte for
# byte.
set -euo pipefail

cd "$(dirname "$0")/.."
BINARIES=("$@")
[ ${#BINARIES[@]} -eq 0 ] && BINARIES=(target/release/linklab)
SIZES=${SIZES:-"1 10 30 60 100"}
ARGS=${ARGS:-}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

cat > "$WORK/hub.py" <<'EOF'
import json, os, socket, sys, threading, time

def frames(buf):
    """Complete KISS frames in buf (unescaped), and the rest."""
    out = []
    while True:
        start = buf.find(b"\xc0")
        if start < 0:
            return out, b""
        end = buf.find(b"\xc0", start + 1)
        if end < 0:
            return out, buf[start:]
        body = buf[start + 1:end]
        buf = buf[end:]
        if body:
            out.append(body.replace(b"\xdb\xdc", b"\xc0").replace(b"\xdb\xdd", b"\xdb"))

def control(frame):
    """The AX.25 control octet of a KISS data frame, or None."""
    ax25 = frame[1:]
    for i in range(6, min(len(ax25), 70), 7):
        if ax25[i] & 1:
            return ax25[i + 1] if i + 1 < len(ax25) else None
    return None

def main():
    stats_path = sys.argv[1]
    listeners = []
    for _ in range(2):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        listeners.append(s)
    print(listeners[0].getsockname()[1], listeners[1].getsockname()[1], flush=True)
    receiver, _ = listeners[0].accept()
    sender, _ = listeners[1].accept()
    start = time.monotonic()
    stats = {"ua": None, "first_i": None, "samples": []}

    def relay(src, dst, watch):
        rest = b""
        fends = 0
        while True:
            data = src.recv(262144)
            if not data:
                break
            now = time.monotonic() - start
            try:
                dst.sendall(data)
            except OSError:
                pass
            if watch == "sender":
                fends += data.count(b"\xc0")
                stats["samples"].append((now, fends // 2))
            if stats[{"sender": "first_i", "receiver": "ua"}[watch]] is None:
                found, rest = frames(rest + data)
                for frame in found:
                    c = control(frame)
                    if c is None:
                        continue
                    if watch == "sender" and c & 1 == 0:
                        stats["first_i"] = now
                        break
                    if watch == "receiver" and c & 0xEF == 0x63:
                        stats["ua"] = now
                        break

    t = threading.Thread(target=relay, args=(receiver, sender, "receiver"), daemon=True)
    t.start()
    relay(sender, receiver, "sender")
    t.join()
    with open(stats_path + ".new", "w") as f:
        json.dump(stats, f)
    os.rename(stats_path + ".new", stats_path)

main()
EOF

cat > "$WORK/report.py" <<'EOF'
import json, sys
stats = json.load(open(sys.argv[1]))
samples = stats["samples"]
total = samples[-1][1] if samples else 0
def at(frames):
    return next(t for t, n in samples if n >= frames)
def rate(lo, hi):
    a, b = at(max(1, int(total * lo))), at(int(total * hi))
    return (int(total * hi) - max(1, int(total * lo))) / (b - a) if b > a else float("nan")
first = stats["first_i"] - stats["ua"]
print(f"{first * 1000:.1f} {rate(0.0, 0.2):.0f} {rate(0.75, 0.95):.0f} {total}")
EOF

for mb in $SIZES; do
    python3 -c "import random,sys; sys.stdout.buffer.write(random.Random($mb).randbytes($mb*1000000))" \
        > "$WORK/file-$mb"
done

printf '%-28s %6s %14s %14s %16s %16s %10s\n' binary MB "first I (ms)" "peak RSS (MB)" "frames/s first" "frames/s last" "wall (s)"
for bin in "${BINARIES[@]}"; do
    for mb in $SIZES; do
        exec 3< <(python3 "$WORK/hub.py" "$WORK/stats.json")
        read -r port_listen port_send <&3
        # shellcheck disable=SC2086
        "$bin" listen --kiss "tcp:127.0.0.1:$port_listen" --mycall N0CALL-2 --once \
            --out "$WORK/out" $ARGS > "$WORK/listen.log" 2>&1 &
        listener=$!
        # The listener is attached once the hub accepts the second port.
        sleep 0.3
        # shellcheck disable=SC2086
        /usr/bin/time -f "%M %e" -o "$WORK/time" "$bin" send --kiss "tcp:127.0.0.1:$port_send" \
            --mycall N0CALL-1 --to N0CALL-2 $ARGS "$WORK/file-$mb" > "$WORK/send.out" 2> "$WORK/send.err" \
            || { echo "send failed:"; tail -5 "$WORK/send.err"; }
        wait "$listener" || { echo "listen failed:"; tail -5 "$WORK/listen.log"; }
        exec 3<&-
        # The hub writes its statistics once both ends have closed.
        for _ in $(seq 600); do [ -s "$WORK/stats.json" ] && break; sleep 0.1; done
        cmp -s "$WORK/file-$mb" "$WORK/out" || echo "$bin $mb MB: received data differ"
        read -r first early late _ < <(python3 "$WORK/report.py" "$WORK/stats.json")
        read -r rss_kb wall < "$WORK/time"
        printf '%-28s %6s %14s %14.1f %16s %16s %10s\n' "$bin" "$mb" "$first" \
            "$(echo "$rss_kb / 1024" | bc -l)" "$early" "$late" "$wall"
        rm -f "$WORK/stats.json" "$WORK/out"
    done
done
