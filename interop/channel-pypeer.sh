#!/bin/bash
# interop/pypeer.sh (aioax25 from PyPI against itself and against linklab,
# UI frames) with an emulated radio channel as its hub: `linklab channel`,
# two stations A and B (pypeer's KISS TCP ports 8301 and 8302) at 9600
# bit/s, half duplex, seeded, so every frame crosses the air from one
# station's KISS port to the other's.
#
#   interop/channel-pypeer.sh -l LINKLAB [-o OUTDIR] [-n COUNT] [-S SEED]
#
# pypeer.sh's checks (ui-py-to-py, ui-py-to-py-ba, ui-py-to-linklab,
# ui-linklab-to-py; see there) must pass with COUNT (20) frames each, and
#   channel   the channel's statistics (--stats-json, written when pypeer.sh
#             stops the hub): A sent 3 x COUNT frames (ui-py-to-py,
#             ui-py-to-linklab, ui-linklab-to-py) and B COUNT
#             (ui-py-to-py-ba), each station was delivered what the other
#             sent, none lost
# pypeer.sh makes its virtualenv and network namespace itself. Needs what
# pypeer.sh needs (python3, python3-venv, PyPI on first use, root, iproute2)
# but not gensio. Exits non-zero on any failure.
set -u

here=$(cd "$(dirname "$0")" && pwd)
out=""; count=20; linklab=""; seed=1
while [ $# -gt 0 ]; do
    case "$1" in
        -o) out=$2; shift 2 ;;
        -n) count=$2; shift 2 ;;
        -S) seed=$2; shift 2 ;;
        -l) linklab=$2; shift 2 ;;
        *) echo "usage: $0 -l LINKLAB [-o OUTDIR] [-n COUNT] [-S SEED]" >&2; exit 2 ;;
    esac
done
[ -x "$linklab" ] || { echo "channel-pypeer: -l LINKLAB must name the linklab binary" >&2; exit 2; }
[ -n "$out" ] || out=$(mktemp -d /tmp/channel-pypeer.XXXXXX)
mkdir -p "$out"; out=$(cd "$out" && pwd)
linklab=$(cd "$(dirname "$linklab")" && pwd)/$(basename "$linklab")

# The hub: station s0 on {A}, s1 on the next port, which is pypeer's {B}
# (8301, 8302); `env B={B}` only names B's port in the command, since
# pypeer.sh takes a command without {B} for a shared hub. The channel
# prints its stations and "channel ready" on stdout and its statistics at
# SIGTERM; pypeer.sh sends all of it to hub.log and reads none of it.
hub="env B={B} $linklab channel --stations 2 --base-port {A} --bitrate 9600"
hub+=" --txdelay-ms 50 --txtail-ms 10 --seed $seed --stats-json $out/stats.json"
rm -f "$out/stats.json"
echo "channel-pypeer: hub: $hub"
bash "$here/pypeer.sh" -l "$linklab" -o "$out" -n "$count" -H "$hub"
fail=$?

t0=$(date +%s.%N)
ok=1
stats=$(python3 - "$out/stats.json" <<'EOF'
import json, sys
s = {x["name"]: x for x in json.load(open(sys.argv[1]))["stations"]}
lost = sum(x["lost_to_collisions"] + x["lost_to_errors"] + x["lost_while_transmitting"]
           for x in s.values())
print(s["s0"]["frames_sent"], s["s1"]["frames_sent"], s["s0"]["delivered"],
      s["s1"]["delivered"], lost)
EOF
) || { echo "  channel: no statistics in $out/stats.json"; stats="0 0 0 0 -1"; }
read -r sent0 sent1 dlvd0 dlvd1 lost <<< "$stats"
[ "$sent0" = $((3 * count)) ] && [ "$sent1" = "$count" ] && [ "$dlvd0" = "$count" ] &&
    [ "$dlvd1" = $((3 * count)) ] && [ "$lost" = 0 ] ||
    { ok=0; echo "  channel: expected A to send $((3 * count)) frames and B $count, each delivered at the other, none lost"; }
[ "$ok" = 1 ] && res=PASS || { res=FAIL; fail=1; }
printf '%-18s %s %6ss  %s\n' channel "$res" \
    "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2f", b-a}')" \
    "sent A=$sent0 B=$sent1, delivered A=$dlvd0 B=$dlvd1, lost=$lost"
[ "$fail" = 0 ] && echo "channel-pypeer: all checks passed" || echo "channel-pypeer: FAILED"
exit $fail
