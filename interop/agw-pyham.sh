#!/bin/bash
# AGWPE servers driven by a client library nobody on the project wrote:
# pyham-pe 1.1.2 from PyPI (package `pe`, the AGWPE engine of the Paracon
# terminal), through interop/agw_pyham.py.  Each target runs in a network
# namespace of its own (loopback only) and writes every client's events
# (NAME.jsonl), summary (NAME.json, the last line) and AGWPE message trace
# (NAME.trace.jsonl) to OUTDIR/TARGET/.
#
#   interop/agw-pyham.sh -t TARGET [-l LINKLAB] [-o OUTDIR] [-s BYTES]
#                        [-n COUNT] [-m MAX_OUTSTANDING] [-b BITRATE]
#                        [-x 'AGW OPTIONS'] [-V VENV]
#
# TARGET:
#   direwolf          two Dire Wolf 1.6 instances joined by the audio relay
#                     (interop/direwolf-lib.sh; A: AGW 8010, B: AGW 8020):
#                     Dire Wolf's AGWPE server and connected-mode engine on
#                     both ends
#   linklab           `LINKLAB agw` on station s0 of `LINKLAB channel
#                     --stations 3` (BITRATE bit/s, default 9600); the peers
#                     are linklab's own `listen`, `send` and `encode` on s1
#                     and s2
#   linklab-direwolf  `LINKLAB agw` as the KISS client of Dire Wolf A (its
#                     modem only), to Dire Wolf B's own engine and AGW port
#   compare           print the observables of OUTDIR/direwolf and
#                     OUTDIR/linklab side by side and list the differences
#   all               direwolf, linklab and linklab-direwolf (the last two
#                     with -l), then compare
# -x gives `LINKLAB agw` options besides --kiss, --listen, --bitrate and
# --monitor: for linklab none (its defaults) unless given, for
# linklab-direwolf linklab-direwolf.sh's --mod128 --window 4 --t1-ms 4000
# --poll-last unless given.  -V names the virtualenv,
# by default one under ~/.cache/linklab-pyham keyed by the Python version
# and the pin, made from PyPI on first use (pyham-pe has no dependencies).
# COUNT (10) UI frames; BYTES (51200) each way, in 256-byte 'D' messages,
# never more than MAX_OUTSTANDING (8) frames outstanding by 'Y'.  At 9600
# bit/s each target takes about 2.5-3 minutes, `all` 8.5.
#
# Checks (every subcommand's summary must say ok, and):
#   info        'R', 'G', 'g' of each port, 'H', 'y', 'X' answered in a
#               form pe accepts (on A / the linklab server)
#   ui          COUNT UI frames N0CALL-1 -> N0CALL-2, payloads "linklab ui
#               NNN", PID F0: direwolf: pyham ui-send on A, pyham ui-recv
#               on B; linklab: pyham ui-send, `linklab listen --monitor`
#               on s2 shows each as <UI C> [F0]; and `linklab encode --ui`
#               frames written to s1, pyham ui-recv on the server gets each
#   ui-via      the same with 3 frames "linklab via NNN" via RELAY,WIDE1-1
#               ('V'; nobody digipeats them)
#   connected   direwolf / linklab-direwolf: pyham accept N0CALL-2 (B,
#               --send) and pyham call N0CALL-1 -> N0CALL-2 (A / linklab,
#               --receive): BYTES each way on one link, both byte-exact,
#               'Y' fell to 0, both 'd' seen.  linklab: pyham call
#               N0CALL-1 -> `linklab listen --once` N0CALL-2 on s1, then
#               `linklab send --mod128` N0CALL-4 on s2 -> pyham accept
#               N0CALL-3; both byte-exact.  One after the other: run at
#               once, the 32-frame windows of one link kept the other's
#               answers 10-20 s in the channel's queues and it failed
#               with RETRYOUT
#   register-twice  a second client registers N0CALL-8 while a first
#               holds it: both answers recorded (either is a pass)
#   info-end    info again after the traffic (the heard list)
#   monitor     pyham monitor --raw on B / the linklab server during it all
#               recorded 'U' and 'K' records (and 'I' on connected runs)
# Differences in texts are reported by compare, never a failure.  Needs
# root (unshare), python3 (venv, pip reaching PyPI on first use), iproute2,
# and direwolf for the Dire Wolf targets.  Exits non-zero on any failure.
set -u

here=$(cd "$(dirname "$0")" && pwd)
. "$here/netns-lib.sh"

pins=(pyham-pe==1.1.2)

usage() {
    echo "usage: $0 -t direwolf|linklab|linklab-direwolf|compare|all [-l LINKLAB] [-o OUTDIR] [-s BYTES] [-n COUNT] [-m MAX_OUTSTANDING] [-b BITRATE] [-x 'AGW OPTIONS'] [-V VENV]" >&2
    exit 2
}
target=""; linklab=""; out=""; size=51200; count=10; maxout=8; bitrate=9600; agw_opts=""; venv=""
args=("$@")
while [ $# -gt 0 ]; do
    case "$1" in
        -t) target=$2; shift 2 ;;
        -l) linklab=$2; shift 2 ;;
        -o) out=$2; shift 2 ;;
        -s) size=$2; shift 2 ;;
        -n) count=$2; shift 2 ;;
        -m) maxout=$2; shift 2 ;;
        -b) bitrate=$2; shift 2 ;;
        -x) agw_opts=$2; shift 2 ;;
        -V) venv=$2; shift 2 ;;
        *) usage ;;
    esac
done
set -- "${args[@]}"
case "$target" in
    direwolf|compare) ;;
    linklab|linklab-direwolf|all)
        [ "$target" = all ] && [ -z "$linklab" ] && echo "agw-pyham: no -l LINKLAB: direwolf only"
        [ "$target" = all ] || [ -x "$linklab" ] ||
            { echo "agw-pyham: -l LINKLAB must name the linklab binary" >&2; exit 2; } ;;
    *) usage ;;
esac
[ -z "$linklab" ] || linklab=$(cd "$(dirname "$linklab")" && pwd)/$(basename "$linklab")
netns_need agw-pyham "apt-get install python3 python3-venv" python3

# The virtualenv, made before entering a namespace (which has no network).
if [ -z "$venv" ]; then
    pyver=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    key=$(printf '%s\n' "${pins[@]}" | cksum | cut -d' ' -f1)
    venv="${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/linklab-pyham/py$pyver-${pins[0]#*==}-$key"
fi
if [ ! -e "$venv/.complete" ]; then
    mkdir -p "$(dirname "$venv")"
    (
        flock 9 # two runs at once make it once
        [ -e "$venv/.complete" ] && exit 0
        rm -rf "$venv"
        echo "agw-pyham: making $venv: ${pins[*]}"
        python3 -m venv "$venv" &&
            timeout 300 "$venv/bin/pip" install -q --disable-pip-version-check "${pins[@]}" &&
            touch "$venv/.complete"
    ) 9> "$venv.lock" || { echo "agw-pyham: could not make the virtualenv $venv" >&2; exit 2; }
fi
py() { "$venv/bin/python" "$here/agw_pyham.py" "$@"; }

compare() {
    [ -d "$out/direwolf" ] && [ -d "$out/linklab" ] ||
        { echo "agw-pyham: compare needs $out/direwolf and $out/linklab" >&2; return 2; }
    py compare "$out/direwolf" "$out/linklab" --names direwolf,linklab
}

if [ "$target" = all ] || [ "$target" = compare ]; then
    [ -n "$out" ] || { [ "$target" = all ] && out=$(mktemp -d /tmp/agw-pyham.XXXXXX); } || usage
    mkdir -p "$out"; out=$(cd "$out" && pwd)
    [ "$target" = compare ] && { compare; exit $?; }
    fail=0
    common=(-o "$out" -s "$size" -n "$count" -m "$maxout" -b "$bitrate" -V "$venv")
    bash "$0" -t direwolf "${common[@]}" || fail=1
    if [ -n "$linklab" ]; then
        bash "$0" -t linklab -l "$linklab" -x "$agw_opts" "${common[@]}" || fail=1
        bash "$0" -t linklab-direwolf -l "$linklab" -x "$agw_opts" "${common[@]}" || fail=1
        compare > "$out/compare.txt"; cat "$out/compare.txt"
    fi
    [ "$fail" = 0 ] && echo "agw-pyham: all targets passed" || echo "agw-pyham: FAILED (output in $out)"
    exit $fail
fi

case "$target" in
    direwolf|linklab-direwolf) netns_need agw-pyham "apt-get install direwolf iproute2" direwolf unshare ip ;;
    *) netns_need agw-pyham "apt-get install iproute2" unshare ip ;;
esac
# 9600 bd: about 100 s for 50 KB each way; scale the limit with the size.
limit=$(( 150 + size * 2 * 8 * 3 / 2 / 9600 ))
netns_enter AGW_PYHAM_IN_NETNS "$limit" "$@"

[ -n "$out" ] || out=$(mktemp -d /tmp/agw-pyham.XXXXXX)
mkdir -p "$out/$target"; out=$(cd "$out" && pwd)
d=$out/$target
rm -f "$d"/*.json "$d"/*.jsonl "$d"/*.err "$d"/*.bin
netns_lo
netns_pids
# Budget for one connected run: both ways on one half-duplex link, 3 times
# the air time at 9600 bit/s, plus 60 s.
budget=$(( size * 2 * 8 * 3 / 9600 + 60 ))
[ "$budget" -lt "$limit" ] || budget=$((limit - 30))

# wait_line FILE PATTERN SECONDS: until grep finds PATTERN in FILE
wait_line() {
    for _ in $(seq $(( $3 * 10 ))); do
        grep -q "$2" "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}

fail=0
t0=0
start() { t0=$(date +%s.%N); }
# result NAME STATUS DETAIL: STATUS 0 is a pass
result() {
    local res=PASS
    [ "$2" = 0 ] || { res=FAIL; fail=1; }
    printf '%-20s %s %6ss  %s\n' "$1" "$res" \
        "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')" "$3"
}
# pyrun NAME SUBCOMMAND ARGS...: agw_pyham.py in the foreground, its events
# to $d/NAME.jsonl, its AGWPE trace to $d/NAME.trace.jsonl; status: the
# client's.  pybg: the same in the background ($! is the client's pid).
pyrun() {
    local name=$1 sub=$2; shift 2
    "$venv/bin/python" "$here/agw_pyham.py" "$sub" --trace "$d/$name.trace.jsonl" "$@" \
        > "$d/$name.jsonl" 2> "$d/$name.err"
}
pybg() {
    local name=$1 sub=$2; shift 2
    "$venv/bin/python" "$here/agw_pyham.py" "$sub" --trace "$d/$name.trace.jsonl" "$@" \
        > "$d/$name.jsonl" 2> "$d/$name.err" &
}
# ok NAME: copy the summary (last line) to $d/NAME.json; it must say ok
ok() {
    tail -n 1 "$d/$1.jsonl" > "$d/$1.json" 2>/dev/null
    grep -q '"ev": "summary", "cmd": [^,]*, "agw": [^,]*, "ok": true' "$d/$1.json"
}
# field NAME EXPR: a value from a summary, by a Python expression on s
field() {
    python3 -c 'import json, sys
try:
    s = json.loads(open(sys.argv[1]).read())
    v = eval(sys.argv[2])
except Exception:
    v = None
print(v if not isinstance(v, (dict, list)) else json.dumps(v))' "$d/$1.json" "$2"
}
why() { # NAME: the client's error, if any
    local e; e=$(field "$1" 's.get("error")')
    [ "$e" = None ] || echo "$1: $e"
}

python3 -c 'import random, sys
n = int(sys.argv[1])
open(sys.argv[2], "wb").write(random.Random(7).randbytes(n))
open(sys.argv[3], "wb").write(random.Random(8).randbytes(n))' "$size" "$d/data-a.bin" "$d/data-b.bin"

echo "agw-pyham: $target, $size bytes each way, $count UI frames, output in $d"

# ---- the AGWPE server(s) ----------------------------------------------------
# agw_a: the server pyham calls from (and asks info of); agw_b: the one it
# accepts on (direwolf, linklab-direwolf).
agw_a=""; agw_b=""
if [ "$target" != linklab ]; then
    . "$here/direwolf-lib.sh"
    baud=9600
    dw_mkconf A N0CALL-3 8011 8010 || exit 2
    dw_mkconf B N0CALL-4 8021 8020
    dw_start "" $((limit - 5)) 0 1 > "$d/direwolf-start.log" 2>&1 ||
        { cat "$d/direwolf-start.log"; echo "agw-pyham: Dire Wolf did not start"; exit 1; }
    agw_a=127.0.0.1:8010; agw_b=127.0.0.1:8020
fi
start_linklab_agw() { # KISS_PORT
    # shellcheck disable=SC2086
    timeout $((limit - 5)) "$linklab" agw --kiss "tcp:127.0.0.1:$1" --listen 127.0.0.1:0 \
        --bitrate "$bitrate" --monitor $agw_opts > "$d/agw.log" 2>&1 & pids+=($!)
    wait_line "$d/agw.log" "agw ready" 10 ||
        { echo "agw-pyham: \`linklab agw\` never said 'agw ready':"; tail -5 "$d/agw.log"; exit 1; }
    agw_a=$(sed -n 's/.*agw listening on \([0-9.]*:[0-9]*\).*/\1/p' "$d/agw.log" | head -1)
    [ -n "$agw_a" ] || { echo "agw-pyham: no 'agw listening on ADDR:PORT' line in $d/agw.log"; exit 1; }
    echo "  linklab agw on $agw_a (KISS 127.0.0.1:$1)"
}
if [ "$target" = linklab ]; then
    # shellcheck disable=SC2086
    timeout $((limit - 5)) "$linklab" channel --stations 3 --base-port 0 --bitrate "$bitrate" \
        --txdelay-ms 100 --monitor --capture "$d/channel.pcap" > "$d/channel.log" 2>&1 & pids+=($!)
    wait_line "$d/channel.log" "channel ready" 10 ||
        { echo "agw-pyham: \`linklab channel\` never said 'channel ready':"; tail -5 "$d/channel.log"; exit 1; }
    kiss=()
    for s in 0 1 2; do
        kiss[s]=$(sed -n "s/.*station s$s: kiss tcp 127.0.0.1:\([0-9]*\).*/\1/p" "$d/channel.log" | head -1)
        [ -n "${kiss[s]}" ] || { echo "agw-pyham: no KISS port for s$s in $d/channel.log"; exit 1; }
    done
    echo "  channel: $bitrate bit/s, s0 KISS ${kiss[0]} (agw), s1 ${kiss[1]}, s2 ${kiss[2]}"
    # linklab's defaults (modulo 8, k = 4, T1 3 s) unless -x says
    # otherwise.  With -x '--mod128' (k = 32) add a longer T1 (6 s): T1
    # runs from the frame's hand-over to the KISS TNC, and 8 I frames (the
    # client's 'Y' limit) are 1.9 s on the air at 9600 bit/s before the
    # TNC's p-persistence wait and the answer; with 3 s, T1 expired before
    # every RR and each poll's F=1 answer sent the window again.
    start_linklab_agw "${kiss[0]}"
elif [ "$target" = linklab-direwolf ]; then
    # Over Dire Wolf's modem linklab's T1 must cover Dire Wolf's CSMA wait,
    # TXDELAY and both transmissions: the options linklab-direwolf.sh uses.
    [ -n "$agw_opts" ] || agw_opts="--mod128 --window 4 --t1-ms 4000 --poll-last"
    start_linklab_agw 8011
fi

# ---- info, and a monitor for the whole run ---------------------------------
start
pyrun info info --agw "$agw_a" --call N0CALL-9 --timeout 20
ok info
result info $? "version=$(field info 's["info"]["version"]') ports=$(field info 's["info"]["ports"]') $(why info)"

# A second client registers a callsign the first holds (AGWPE refuses it)
start
pybg dup-holder accept --agw "$agw_a" --call N0CALL-8 --out "$d/dup-holder.bin" --timeout 8
h=$!; pids+=($h)
wait_line "$d/dup-holder.jsonl" '"ev": "registered"' 10
pyrun info-dup info --agw "$agw_a" --call N0CALL-8 --timeout 20
ok info-dup; rc=$?
kill "$h" 2>/dev/null; wait "$h" 2>/dev/null
result register-twice $rc "first client: $(grep -o '"ev": "registered", "call": "N0CALL-8", "ok": [a-z]*' "$d/dup-holder.jsonl" | sed 's/.*"ok": //'), second client: $(field info-dup 's["info"]["register"]') $(why info-dup)"

mon_agw=$agw_a
[ "$target" = direwolf ] && mon_agw=$agw_b
pybg monitor monitor --agw "$mon_agw" --raw --seconds $((budget + 60)) --out "$d/monitor.records.jsonl"
mon=$!; pids+=($mon)
wait_line "$d/monitor.jsonl" '"ev": "monitoring"' 10

# ---- UI frames ---------------------------------------------------------------
# COUNT frames "linklab ui NNN" ('M'), then 3 frames "linklab via NNN" with
# two digipeaters in the address ('V'; nobody digipeats them).
via=RELAY,WIDE1-1
# ui_direwolf SUFFIX TEXT N [VIA]: pyham ui-send on A, pyham ui-recv on B
ui_direwolf() {
    local sfx=$1 text=$2 n=$3 v=${4:-} s_ok r_ok
    start
    pybg "ui-recv$sfx" ui-recv --agw "$agw_b" --from N0CALL-1 --count "$n" --text "$text" \
        --timeout 40; local r=$!; pids+=($r)
    wait_line "$d/ui-recv$sfx.jsonl" '"ev": "listening"' 10
    pyrun "ui-send$sfx" ui-send --agw "$agw_a" --call N0CALL-1 --to N0CALL-2 ${v:+--via "$v"} \
        --count "$n" --text "$text" --timeout 30
    ok "ui-send$sfx"; s_ok=$?
    wait "$r"; ok "ui-recv$sfx"; r_ok=$?
    [ $s_ok = 0 ] && [ $r_ok = 0 ]
    result "ui-a-to-b$sfx" $? "$(field "ui-recv$sfx" 's["received"]') of $n received, own 'T' records on A: $(field "ui-send$sfx" 's["t_records"]') $(why "ui-send$sfx") $(why "ui-recv$sfx")"
}
# ui_linklab SUFFIX TEXT N [VIA]: pyham ui-send on the server, `linklab
# listen --monitor` on s2 must show each; `linklab encode --ui` frames
# written to s1, pyham ui-recv on the server must get each
ui_linklab() {
    local sfx=$1 text=$2 n=$3 v=${4:-} s_ok got i
    start
    timeout 60 "$linklab" listen --kiss "tcp:127.0.0.1:${kiss[2]}" --mycall N0CALL-2 --monitor \
        --out "$d/ui-listen$sfx.out" > /dev/null 2> "$d/ui-listen$sfx.log" & local l=$!; pids+=($l)
    wait_line "$d/ui-listen$sfx.log" "listening on" 10
    pyrun "ui-send$sfx" ui-send --agw "$agw_a" --call N0CALL-1 --to N0CALL-2 ${v:+--via "$v"} \
        --count "$n" --text "$text" --timeout 30
    ok "ui-send$sfx"; s_ok=$?
    wait_line "$d/ui-listen$sfx.log" "<UI C> \[F0\] $text $(printf %03d "$n")" 10
    kill "$l" 2>/dev/null; wait "$l" 2>/dev/null
    got=$(grep -c "^RX .* N0CALL-1>N0CALL-2${v:+,$v}: <UI C> \[F0\] $text [0-9]*\$" "$d/ui-listen$sfx.log")
    [ $s_ok = 0 ] && [ "$got" = "$n" ]
    result "ui-to-linklab$sfx" $? "$got of $n shown by linklab listen, own 'T' records: $(field "ui-send$sfx" 's["t_records"]') $(why "ui-send$sfx")"
    start
    for i in $(seq "$n"); do
        "$linklab" encode --from N0CALL-1 --to N0CALL-2 ${v:+--via "$v"} \
            --ui "$text $(printf %03d "$i")" --format kiss
    done > "$d/ui-encode$sfx.kiss"
    pybg "ui-recv$sfx" ui-recv --agw "$agw_a" --from N0CALL-1 --count "$n" --text "$text" \
        --timeout 40; local r=$!; pids+=($r)
    wait_line "$d/ui-recv$sfx.jsonl" '"ev": "listening"' 10
    timeout 10 python3 -c 'import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(open(sys.argv[2], "rb").read()); time.sleep(0.5); s.close()' "${kiss[1]}" "$d/ui-encode$sfx.kiss" ||
        echo "  could not write to 127.0.0.1:${kiss[1]}"
    wait "$r"; ok "ui-recv$sfx"
    result "ui-from-linklab$sfx" $? "$(field "ui-recv$sfx" 's["received"]') of $n received $(why "ui-recv$sfx")"
}
case "$target" in
    direwolf) ui_direwolf "" "linklab ui" "$count"; ui_direwolf -via "linklab via" 3 "$via" ;;
    linklab) ui_linklab "" "linklab ui" "$count"; ui_linklab -via "linklab via" 3 "$via" ;;
esac

# ---- connected mode ------------------------------------------------------------
cmpres() { # WANT GOT
    if cmp -s "$1" "$2"; then echo "byte-exact"
    else echo "$(stat -c %s "$2" 2>/dev/null || echo 0) of $(stat -c %s "$1") bytes, NOT byte-exact"; fi
}
if [ "$target" != linklab ]; then
    # pyham accept on B (sends data-b back), pyham call from A (sends data-a)
    start
    pybg accept accept --agw "$agw_b" --call N0CALL-2 --out "$d/rx-accept.bin" --expect "$size" \
        --send "$d/data-b.bin" --max-outstanding "$maxout" --timeout "$budget"; acc=$!; pids+=($acc)
    wait_line "$d/accept.jsonl" '"ev": "registered"' 10
    pyrun call call --agw "$agw_a" --call N0CALL-1 --to N0CALL-2 --file "$d/data-a.bin" \
        --receive "$d/rx-call.bin" --expect-back "$d/data-b.bin" --max-outstanding "$maxout" \
        --timeout $((budget - 5))
    ok call; c_ok=$?
    wait "$acc"; ok accept; a_ok=$?
    cmp -s "$d/data-a.bin" "$d/rx-accept.bin" && cmp -s "$d/data-b.bin" "$d/rx-call.bin" &&
        [ $c_ok = 0 ] && [ $a_ok = 0 ] &&
        [ "$(field call 's["y_fell_to_zero"]')" = True ] && [ "$(field accept 's["y_fell_to_zero"]')" = True ]
    result connected $? "A->B $(cmpres "$d/data-a.bin" "$d/rx-accept.bin"), B->A $(cmpres "$d/data-b.bin" "$d/rx-call.bin"), $(field call 's.get("total_seconds")') s; Y max $(field call 's["y_max"]')/$(field accept 's["y_max"]') $(why call) $(why accept)"
else
    # One link after the other (three stations on one half-duplex channel
    # at once overflow the TNC queues: see the header): pyham call N0CALL-1
    # -> `linklab listen --once` N0CALL-2 on s1, then `linklab send`
    # N0CALL-4 on s2 -> pyham accept N0CALL-3.
    # (the call took 100 s, the send 62 s: 0.6 and 0.4 of the budget)
    start
    timeout $((budget * 6 / 10)) "$linklab" listen --kiss "tcp:127.0.0.1:${kiss[1]}" --mycall N0CALL-2 \
        --once --monitor --out "$d/rx-listen.bin" > /dev/null 2> "$d/listen.log" & l=$!; pids+=($l)
    wait_line "$d/listen.log" "listening on" 10
    pyrun call call --agw "$agw_a" --call N0CALL-1 --to N0CALL-2 --file "$d/data-a.bin" \
        --max-outstanding "$maxout" --timeout $((budget * 6 / 10 - 5))
    ok call; c_ok=$?
    # listen names its file when the link is released: give it a moment
    for _ in $(seq 50); do kill -0 "$l" 2>/dev/null || break; sleep 0.1; done
    kill "$l" 2>/dev/null; wait "$l" 2>/dev/null
    cmp -s "$d/data-a.bin" "$d/rx-listen.bin" && [ $c_ok = 0 ] &&
        [ "$(field call 's["y_fell_to_zero"]')" = True ]
    result call-to-listen $? "$(cmpres "$d/data-a.bin" "$d/rx-listen.bin"), $(field call 's.get("total_seconds")') s; Y max $(field call 's["y_max"]') $(why call)"
    start
    pybg accept accept --agw "$agw_a" --call N0CALL-3 --out "$d/rx-accept.bin" --expect "$size" \
        --timeout $((budget * 4 / 10)); acc=$!; pids+=($acc)
    wait_line "$d/accept.jsonl" '"ev": "registered"' 10
    timeout $((budget * 4 / 10 - 5)) "$linklab" send --kiss "tcp:127.0.0.1:${kiss[2]}" --mycall N0CALL-4 \
        --to N0CALL-3 --mod128 --monitor "$d/data-b.bin" > /dev/null 2> "$d/send.log"
    s_rc=$?
    wait "$acc"; ok accept; a_ok=$?
    cmp -s "$d/data-b.bin" "$d/rx-accept.bin" && [ $a_ok = 0 ] && [ $s_rc = 0 ]
    result send-to-accept $? "$(cmpres "$d/data-b.bin" "$d/rx-accept.bin"), linklab send rc=$s_rc, $(field accept 's.get("connected_seconds")') s $(why accept)"
fi

# ---- info again: the heard list ('H') after the traffic ---------------------
start
pyrun info-end info --agw "$agw_a" --timeout 20
ok info-end
result info-end $? "'H' messages: $(field info-end 's["info"]["heard_messages"]'), records pe parsed: $(field info-end '[h["callsign"] for h in s["info"]["heard"] if h]') $(why info-end)"

# ---- the monitor's records -------------------------------------------------
start
kill -TERM "$mon" 2>/dev/null; wait "$mon" 2>/dev/null
ok monitor
kinds=$(field monitor 's["monitor"]["kinds"]')
python3 -c 'import json, sys
k = json.loads(sys.argv[1]) if sys.argv[1] != "None" else {}
need = ["I", "K"] if sys.argv[2] == "linklab-direwolf" else ["U", "K", "I"]
sys.exit(0 if all(k.get(n) for n in need) else 1)' "$kinds" "$target" && ok monitor
result monitor $? "kinds $kinds on ${mon_agw} $(why monitor)"

netns_cleanup
[ "$target" = linklab ] || cp "$out"/A.conf "$out"/B.conf "$out"/A.log "$out"/B.log "$d/" 2>/dev/null
[ "$fail" = 0 ] && echo "agw-pyham $target: all checks passed" || echo "agw-pyham $target: FAILED (output in $d)"
exit $fail
