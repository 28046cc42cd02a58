#!/bin/bash
# linklab against Dire Wolf 1.6's own connected-mode engine, on the same
# pair of Dire Wolf soundcard modems (interop/direwolf-lib.sh: A and B
# joined by interop/audio_relay.py, a software audio cable in real time).
# Issue 29, item 4.  See docs/performance.md, "linklab against Dire Wolf's
# engine".
#
#   bench/direwolf_engine.sh -l LINKLAB [-o OUTDIR] [-j N] [--size BYTES]
#                            [--only PATTERN[,PATTERN...]] [--list]
#                            [--emulation] [--linklab-extra OPTS] [--hole-ms MS]
#                            [--seeds N]
#
# A cell is a bit rate (9600, 1200), a modulo (8: SABM, 128: SABME) and a
# frame loss (0, 5, 20 %).  Each cell has four runs, each moving the same
# seeded pseudo-random file (--size, default 51,200 octets) once:
#   ll-send  linklab on A (KISS client of modem A) sends to B's engine
#   dw-send  A's engine (an AGW client on A) sends to B's engine
#   ll-recv  B's engine sends to linklab listening on A
#   dw-recv  B's engine sends to A's engine
# so linklab sending (ll-send) and receiving (ll-recv) each meet Dire Wolf's
# engine in the same role over the same modems (dw-send, dw-recv).  A run is
# named BAUD-modM-lossL-ROLE (e.g. 9600-mod8-loss5-ll-send); --only takes
# shell patterns matched against the names (e.g. --only '9600-*').  Each
# run gets fresh Dire Wolf instances and relay in a network namespace of
# its own (`unshare -n`, loopback only; the ports repeat across runs), so
# -j N runs N at once.
#
# Time of a run: from the connect request to the moment all data is
# acknowledged.  linklab sending: from its SABM(E) (monitor time 0) to its
# DISC, which it sends when the last I frame is acknowledged.  An engine
# of Dire Wolf sending: interop/agw_client.py from its 'C' (connect)
# request to Dire Wolf's first answer of 0 frames outstanding ('Y', asked
# every 0.1 s).  Loss: interop/audio_relay.py cuts 1 ms (9600) or 4 ms
# (1200) holes into the transmit audio at a rate set so that an I frame
# of N1 = 256 octets is lost with the cell's probability (rate =
# -ln(1 - loss) / its air time); the frame loss reported is measured:
# frames each modem's log shows it transmitted against frames the other
# modem passed to a listen-only KISS tap.  The airtime bound is defined
# in bench/direwolf_engine_report.py.
#
# --emulation (issue 29, item 5) runs instead linklab sending to B's
# engine at 9600 bit/s, modulo 8, no loss, with windows 1 to 7 (runs
# 9600-mod8-loss0-ll-send-wK), and `linklab sim` of the same transfer
# (kind "ronan-transfer" with Dire Wolf's modem timing: TXDELAY, TXTAIL,
# SLOTTIME, PERSIST as above, and its channel access, slot_clock =
# "after-clear"), and prints both times per window with the
# difference, and the turnaround the relay saw (emulation.md).
#
# --seeds N runs every cell with loss N times, each with other holes
# (runs NAME, NAME-s2 ... NAME-sN; the relay's seed is the cell's plus
# 1000 per seed), since a single lossy run varies by 10% or more with
# where the holes fall.  The table then gives each side's median time
# and every run's.  Lossless cells run once: without holes nothing is
# drawn.
#
# --hole-ms MS sets the length of the relay's holes (default 1 ms at 9600,
# 4 ms at 1200), to calibrate the loss.
# --linklab-extra OPTS appends OPTS to linklab's options in every run (and
# records them), to try another setting against the same table.
#
# Output in OUTDIR (default target/bench-direwolf): runs/NAME/ (every log,
# capture and the received file), results.csv (one row per run) and
# results.md (the tables).  Needs root (unshare), direwolf, python3,
# iproute2; tshark is not needed.
set -u

# The whole script is one function, read by bash before it runs, so that
# editing the file cannot disturb runs that are going (each run is a new
# invocation of it).
main() {

bench=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$bench/.." && pwd)
interop="$root/interop"
# interop/direwolf-lib.sh finds audio_relay.py in $here.
here=$interop

usage() {
    echo "usage: $0 -l LINKLAB [-o OUTDIR] [-j N] [--size BYTES] [--only PATTERN,...] [--list] [--emulation] [--linklab-extra OPTS] [--hole-ms MS] [--seeds N]" >&2
    exit 2
}

# --- what a cell runs --------------------------------------------------

# Dire Wolf's modem settings, the same for every run and both engines
# (interop/direwolf-lib.sh): TXDELAY 10 (100 ms) at 9600, 20 (200 ms) at
# 1200; TXTAIL, PERSIST, SLOTTIME and DWAIT at Dire Wolf's defaults (10 =
# 100 ms, 63, 10 = 100 ms, 0).  Dire Wolf's engine at its 1.6 defaults
# (no line in the config): MAXFRAME 4 (modulo 8), EMAXFRAME 32 (modulo
# 128), FRACK 3 s, RETRY 10, PACLEN 256; it connects with SABME (and
# XID) unless the peer is on a V20 line, which the modulo-8 cells add.
dw_settings="MAXFRAME 4, EMAXFRAME 32, FRACK 3, RETRY 10, PACLEN 256 (1.6 defaults); modulo 8 by V20 PEER"

# linklab's settings per cell: its defaults (initial T1 3 s held until
# the frames leave the air, P on the last I frame of every burst, ACKMODE
# asked for; Dire Wolf 1.6 does not answer it, so the transmit clock
# estimates from --bitrate and the TXDELAY it sends, Dire Wolf's own),
# the largest window (7, or 32 at modulo 128 as Dire Wolf's EMAXFRAME),
# SREJ on modulo 128.  LINKLAB_DW_OPTS_OLD=1 takes the settings measured
# before T1 counted from the air (T1 from the hand-over to the TNC had to
# cover a whole window's air time).
linklab_opts() { # BAUD MOD
    local txdelay=$(( $( [ "$1" = 9600 ] && echo 10 || echo 20 ) * 10 ))
    local air="--bitrate $1 --txdelay-ms $txdelay"
    if [ -n "${LINKLAB_DW_OPTS_OLD:-}" ]; then
        case "$1-$2" in
            9600-8) echo "--window 7 --t1-ms 4000 --poll-last" ;;
            9600-128) echo "--mod128 --srej --window 32 --t1-ms 12000 --poll-last" ;;
            1200-8) echo "--window 4 --t1-ms 12000 --poll-last" ;;
            1200-128) echo "--mod128 --srej --window 8 --t1-ms 25000 --poll-last" ;;
        esac
        return
    fi
    case "$2" in
        8) echo "--window 7 $air" ;;
        128) echo "--mod128 --srej --window 32 $air" ;;
    esac
}

# Air time of one I frame with N1 = 256 (modulo 8), for the loss rate.
iframe_seconds() { # BAUD
    python3 "$bench/direwolf_engine_report.py" frame-time --baud "$1" --mod 8 --info 256
}

hole_ms() {
    if [ -n "$hole" ]; then echo "$hole"; return; fi
    case "$1" in 9600) echo 1 ;; 1200) echo 4 ;; esac
}

all_runs() {
    local b m l r
    if [ "$emulation" = 1 ]; then
        for r in 1 2 3 4 5 6 7; do echo "9600-mod8-loss0-ll-send-w$r"; done
        return
    fi
    # The longest runs first, so that -j N ends sooner.
    for b in 1200 9600; do for m in 8 128; do for l in 20 5 0; do
        for r in ll-send dw-send ll-recv dw-recv; do
            echo "$b-mod$m-loss$l-$r"
            [ "$l" = 0 ] || for ((s = 2; s <= seeds; s++)); do echo "$b-mod$m-loss$l-$r-s$s"; done
        done
    done; done; done
}

# --- one run, inside its own network namespace ------------------------

run_one() { # NAME
    local name=$1
    local suf
    IFS=- read -r baud mod loss role1 role2 suf <<< "$name"
    mod=${mod#mod}; loss=${loss#loss}
    local role="$role1-$role2"
    out="$outdir/runs/$name"
    rm -rf "$out"; mkdir -p "$out"
    . "$interop/direwolf-lib.sh"
    dw_mkconf A N0CALL-3 8011 8010 || return 2
    dw_mkconf B N0CALL-4 8021 8020
    # Dire Wolf's engine connects with SABME unless told the peer is v2.0.
    if [ "$mod" = 8 ]; then
        echo "V20 N0CALL-1" >> "$out/A.conf"
        echo "V20 N0CALL-2" >> "$out/B.conf"
    fi
    netns_lo
    netns_pids

    local seed rate
    # The same holes for the four runs of a cell; -sK (--seeds): other ones.
    seed=$(( baud / 100 + mod + loss ))
    [[ $suf == s* ]] && seed=$(( seed + 1000 * (${suf#s} - 1) ))
    dw_relay_opts=""
    if [ "$loss" != 0 ]; then
        rate=$(awk -v l="$loss" -v t="$(iframe_seconds "$baud")" 'BEGIN { printf "%.4f", -log(1 - l / 100) / t }')
        dw_relay_opts="--hole-rate $rate --hole-ms $(hole_ms "$baud")"
    fi
    local opts; opts=$(linklab_opts "$baud" "$mod")
    # -wK (--emulation): linklab's window K
    [[ $suf == w* ]] && opts=$(sed "s/--window [0-9]*/--window ${suf#w}/" <<< "$opts")
    [ -n "$extra" ] && opts="$opts $extra"
    # Budget: 6 times the air time of the data plus 120 s.
    local budget=$(( size * 8 * 6 / baud + 120 ))
    {
        echo "name=$name"; echo "baud=$baud"; echo "mod=$mod"; echo "loss=$loss"; echo "role=$role"
        echo "size=$size"; echo "relay=$dw_relay_opts"; echo "seed=$seed"; echo "linklab_opts=$opts"
        echo "dw=$dw_settings"; echo "txdelay=$txdelay"
        echo "linklab=$linklab"; echo "linklab_version=$("$linklab" --version 2>/dev/null)"
    } > "$out/params"
    dw_start "" $((budget + 30)) 0 "$seed" || { echo "rc=dw-start" >> "$out/params"; return 1; }
    local t
    for t in A:8011 B:8021; do
        timeout $((budget + 25)) python3 "$interop/kiss_tap.py" 127.0.0.1 "${t#*:}" "$out/${t%%:*}.kiss" \
            --times "$out/${t%%:*}.times" & pids+=($!)
    done
    sleep 0.3
    local rc_s=0 rc_r=0 rx tx
    local agw="python3 $interop/agw_client.py"
    case "$role" in
        ll-send|dw-send)
            timeout $((budget + 15)) $agw listen --port 8020 --call N0CALL-1 --out "$out/recv.bin" \
                --expect "$size" --timeout $((budget + 10)) --monitor "$out/B.agw.mon" --tag B \
                > "$out/recv.log" 2>&1 & rx=$!; pids+=($rx)
            sleep 1
            if [ "$role" = ll-send ]; then
                # shellcheck disable=SC2086
                timeout "$budget" "$linklab" send --kiss tcp:127.0.0.1:8011 --mycall N0CALL-2 \
                    --to N0CALL-1 $opts --monitor "$data" > "$out/send.out" 2> "$out/send.log"
                rc_s=$?
            else
                timeout "$budget" $agw connect --port 8010 --call N0CALL-2 --to N0CALL-1 \
                    --send "$data" --poll-s 0.1 --timeout $((budget - 5)) \
                    --monitor "$out/A.agw.mon" --tag A > "$out/send.log" 2>&1
                rc_s=$?
            fi
            wait "$rx"; rc_r=$?
            ;;
        ll-recv|dw-recv)
            if [ "$role" = ll-recv ]; then
                # shellcheck disable=SC2086
                timeout $((budget + 15)) "$linklab" listen --once --kiss tcp:127.0.0.1:8011 \
                    --mycall N0CALL-2 ${opts/--mod128/} --monitor --out "$out/recv.bin" \
                    > "$out/recv.out" 2> "$out/recv.log" & rx=$!; pids+=($rx)
            else
                timeout $((budget + 15)) $agw listen --port 8010 --call N0CALL-2 --out "$out/recv.bin" \
                    --expect "$size" --timeout $((budget + 10)) --monitor "$out/A.agw.mon" --tag A \
                    > "$out/recv.log" 2>&1 & rx=$!; pids+=($rx)
            fi
            sleep 1
            timeout "$budget" $agw connect --port 8020 --call N0CALL-1 --to N0CALL-2 \
                --send "$data" --poll-s 0.1 --timeout $((budget - 5)) \
                --monitor "$out/B.agw.mon" --tag B > "$out/send.log" 2>&1
            rc_s=$?
            wait "$rx"; rc_r=$?
            ;;
    esac
    sleep 0.5
    netns_cleanup
    { echo "rc_send=$rc_s"; echo "rc_recv=$rc_r"; } >> "$out/params"
    local n mflag=""
    [ "$mod" = 128 ] && mflag=--mod128
    for n in A B; do
        "$linklab" decode --format kiss $mflag "$out/$n.kiss" > "$out/$n.heard.txt" 2>&1
    done
    cmp -s "$data" "$out/recv.bin" && echo "exact=yes" >> "$out/params" || echo "exact=no" >> "$out/params"
    python3 "$bench/direwolf_engine_report.py" run "$out" > "$out/result.csv"
}

# --- options, then either one run (in a namespace) or the scheduler ----


linklab=""; outdir=""; jobs=1; size=51200; only=""; list=0; one=""; emulation=0; extra=""; hole=""; seeds=1
while [ $# -gt 0 ]; do
    case "$1" in
        -l) linklab=$2; shift 2 ;;
        -o) outdir=$2; shift 2 ;;
        -j) jobs=$2; shift 2 ;;
        --size) size=$2; shift 2 ;;
        --only) only=$2; shift 2 ;;
        --list) list=1; shift ;;
        --emulation) emulation=1; shift ;;
        --linklab-extra) extra=$2; shift 2 ;;
        --hole-ms) hole=$2; shift 2 ;;
        --seeds) seeds=$2; shift 2 ;;
        --run) one=$2; shift 2 ;;
        *) usage ;;
    esac
done
case "$jobs" in ''|*[!0-9]*|0) echo "$0: -j takes a number of runs at once (1 or more)" >&2; exit 2 ;; esac
case "$seeds" in ''|*[!0-9]*|0) echo "$0: --seeds takes a number of runs per lossy cell (1 or more)" >&2; exit 2 ;; esac
case "$size" in ''|*[!0-9]*|0) echo "$0: --size takes a number of octets" >&2; exit 2 ;; esac

runs=()
for r in $(all_runs); do
    if [ -z "$only" ]; then runs+=("$r"); continue; fi
    IFS=, read -ra pats <<< "$only"
    for p in "${pats[@]}"; do
        # shellcheck disable=SC2053
        [[ $r == $p ]] && { runs+=("$r"); break; }
    done
done
if [ "$list" = 1 ]; then printf '%s\n' "${runs[@]}"; exit 0; fi
[ "${#runs[@]}" -gt 0 ] || { echo "$0: --only '$only' matches no run (see --list)" >&2; exit 2; }
[ -x "$linklab" ] || { echo "$0: -l LINKLAB must name the linklab binary" >&2; exit 2; }
linklab=$(cd "$(dirname "$linklab")" && pwd)/$(basename "$linklab")
[ -n "$outdir" ] || outdir="$root/target/bench-direwolf"
mkdir -p "$outdir/runs"; outdir=$(cd "$outdir" && pwd)
data="$outdir/data.bin"

. "$interop/netns-lib.sh"
if [ -n "$one" ]; then
    netns_need direwolf_engine "apt-get install direwolf python3" direwolf python3
    # 1200 bit/s with loss: up to 6 times 341 s of air, plus set-up.
    netns_enter DW_ENGINE_IN_NETNS 2700 -l "$linklab" -o "$outdir" --size "$size" \
        --linklab-extra "$extra" --hole-ms "$hole" --run "$one"
    run_one "$one"
    exit $?
fi

netns_need direwolf_engine "apt-get install direwolf python3" direwolf python3 unshare
[ "$(id -u)" = 0 ] || { echo "$0: needs root (unshare -n)" >&2; exit 2; }
# The same bytes every time (as the relay's holes), so that runs compare
# frame by frame.
python3 -c 'import random, sys; sys.stdout.buffer.write(random.Random(7).randbytes(int(sys.argv[1])))' \
    "$size" > "$data"
{
    echo "bench_commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null) (of these scripts, not of linklab)"
    echo "linklab=$linklab ($("$linklab" --version 2>/dev/null), built $(date -u -r "$linklab" +%FT%TZ), sha256 $(sha256sum "$linklab" | cut -c1-16))"
    echo "direwolf=$(direwolf -h 2>&1 | head -1 | tr -d '\r')"
    echo "machine=$(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)"
    echo "jobs=$jobs size=$size runs=${#runs[@]} seeds=$seeds linklab-extra=$extra"
    echo "started=$(date -u +%FT%TZ)"
} > "$outdir/about"
echo "direwolf_engine: ${#runs[@]} runs, $jobs at once, $size octets each; output in $outdir"
# Sample the machine's CPU every 5 s while the runs go (busy % of all
# cores, from /proc/stat), to show whether parallel runs starve Dire Wolf's
# demodulators; each relay also says when it fell behind real time.
( read -r _ u n s i w x y z _ < /proc/stat; pb=$((u + n + s + x + y + z)); pt=$((pb + i + w))
  while sleep 5; do
      read -r _ u n s i w x y z _ < /proc/stat; b=$((u + n + s + x + y + z)); t=$((b + i + w))
      echo "$(date +%T) busy $(( 100 * (b - pb) / (t - pt) ))%"
      pb=$b; pt=$t
  done ) > "$outdir/cpu.log" 2>&1 &
cpu_pid=$!
t0=$(date +%s)
printf '%s\n' "${runs[@]}" |
    xargs -P "$jobs" -I{} bash -c '"$0" -l "$1" -o "$2" --size "$3" --linklab-extra "$5" --hole-ms "$6" --run "$4" > "$2/runs/$4.log" 2>&1; echo "$4 done (exit $?)"' \
        "$0" "$linklab" "$outdir" "$size" {} "$extra" "$hole"
kill "$cpu_pid" 2>/dev/null
echo "finished=$(date -u +%FT%TZ) wall=$(( $(date +%s) - t0 ))s" >> "$outdir/about"
echo "cpu busy: mean $(awk '{ gsub("%", "", $3); s += $3; n++ } END { if (n) printf "%.0f%%", s / n }' "$outdir/cpu.log") over $(wc -l < "$outdir/cpu.log") samples; relays behind real time: $(cat "$outdir"/runs/*/relay.err 2>/dev/null | grep -c 'behind real time')" | tee -a "$outdir/about"
if [ "$emulation" = 1 ]; then
    python3 "$bench/direwolf_engine_report.py" emulation "$outdir" "$linklab"
else
    python3 "$bench/direwolf_engine_report.py" table "$outdir"
fi
}

# One line: bash has read it whole before main runs.
main "$@"; exit $?
