#!/usr/bin/env bash
# `linklab station` with four radio ports on an emulated channel: its CPU
# when idle, a load of many links and AGWPE clients at once, and its
# memory over a long steady run. One part per run; each prints a short
# report and writes CSV. See docs/performance.md, "The station".
#
#   bench/station.sh idle   [--duration S]   # default 60 s idle
#   bench/station.sh load                    # 16 links, 32 AGWPE clients
#   bench/station.sh memory [--duration S]   # default 3600 s, RSS every 30 s
#
# Options (after the part):
#   --duration S    idle: seconds measured; memory: seconds of traffic
#   --out DIR       where the CSVs, logs and configuration go
#                   (default target/bench-station; each part in DIR/PART/)
#   --bitrate BPS   the channels' bit rate (default 9600)
#   --quick-radios  every radio TXDELAY 10 ms, P 255, SLOTTIME and TXTAIL
#                   10 ms instead of linklab channel's 300/63/100/100: more
#                   transfers per minute (to look for growth per session)
# Environment:
#   SIZE            load: octets per transfer (default 4096)
#   MONITORS        memory: `linklab monitor` clients (default 4)
#   INTERVAL        memory: seconds between RSS samples (default 30)
#   SKIP_BUILD=1    use target/release/linklab as it is
#   CHANNEL_ARGS    more options for linklab channel (e.g. --monitor: every
#                   frame on the air in DIR/PART/log/channel.out)
#
# The topology: one `linklab channel` with four channels ch1-ch4 at the
# same bit rate. On channel N, station pN is the station's port N, and
# cNa, cNb, cNc, cNd and cNe are other stations (callers and listeners).
set -euo pipefail

# The whole script is one function, read by bash before it runs, so that
# editing the file cannot disturb a run that is going (an hour-long one).
main() {
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

part="${1:-}"
case "$part" in
  idle | load | memory) shift ;;
  *) echo "usage: bench/station.sh idle|load|memory [--duration S] [--out DIR] [--bitrate BPS]" >&2; exit 2 ;;
esac
duration=""
out="$root/target/bench-station"
bitrate=9600
quick=0
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) duration="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --bitrate) bitrate="$2"; shift 2 ;;
    --quick-radios) quick=1; shift ;;
    *) echo "station.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
case "$part" in
  idle) duration="${duration:-60}" ;;
  memory) duration="${duration:-3600}" ;;
esac
size="${SIZE:-4096}"
monitors="${MONITORS:-4}"
interval="${INTERVAL:-30}"

if [ "${SKIP_BUILD:-0}" != 1 ]; then
  cargo build --release --quiet
fi
bin="$root/target/release/linklab"
work="$out/$part"
rm -rf "$work"
mkdir -p "$work/drop" "$work/in" "$work/got" "$work/log"
tck="$(getconf CLK_TCK)"

# ---- processes: every one started is recorded and killed on exit ----

pids=()
kill_tree() { # a process and its descendants, by id
  local p
  for p in $(pgrep -P "$1" 2>/dev/null); do kill_tree "$p"; done
  kill "$1" 2>/dev/null || true
}
cleanup() { # the last started first: clients before the station and the channel
  local i
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill_tree "${pids[$i]}"; done
  wait 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- /proc readings ----

# utime + stime of PID in clock ticks
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# voluntary + involuntary context switches of every thread of PID
switches() {
  cat /proc/"$1"/task/*/status 2>/dev/null |
    awk '/^(non)?voluntary_ctxt_switches/ { n += $2 } END { print n + 0 }'
}
# time on a CPU of every thread of PID, in ns (schedstat)
run_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ n += $1 } END { printf "%.0f", n }'; }
status_kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
percent() { awk -v d="$1" -v t="$tck" -v s="$2" 'BEGIN { printf "%.3f", 100 * d / t / s }'; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# ---- the channel and the station ----

start_channel() {
  {
    echo "seed = 1"
    if [ "$quick" = 1 ]; then
      printf '[defaults]\ntxdelay_ms = 10\npersistence = 255\nslot_ms = 10\ntxtail_ms = 10\n'
    fi
    for n in 1 2 3 4; do printf '[[channel]]\nname = "ch%s"\nbitrate = %s\n' "$n" "$bitrate"; done
    for n in 1 2 3 4; do
      for s in "p$n" "c${n}a" "c${n}b" "c${n}c" "c${n}d" "c${n}e"; do
        printf '[[station]]\nname = "%s"\nchannels = ["ch%s"]\n' "$s" "$n"
      done
    done
  } >"$work/channel.toml"
  : >"$work/log/channel.out"
  # shellcheck disable=SC2086
  "$bin" channel "$work/channel.toml" ${CHANNEL_ARGS:-} >"$work/log/channel.out" 2>"$work/log/channel.err" &
  channel_pid=$!
  pids+=("$channel_pid")
  for _ in $(seq 100); do
    grep -q '^channel ready' "$work/log/channel.out" && break
    sleep 0.1
  done
  grep -q '^channel ready' "$work/log/channel.out" || { echo "station.sh: the channel did not start" >&2; cat "$work/log/channel.err" >&2; exit 1; }
}
# the channel's own statistics (busy, collisions), printed on SIGUSR1
channel_stats() {
  local before
  before=$(grep -c '^channel ch' "$work/log/channel.out" || true)
  kill -USR1 "$channel_pid"
  for _ in $(seq 50); do
    [ "$(grep -c '^channel ch' "$work/log/channel.out" || true)" -gt "$before" ] && break
    sleep 0.1
  done
  grep '^channel ch' "$work/log/channel.out" | tail -n 4 | sed 's/^/              /'
}
# the KISS address of channel station NAME
kiss_of() { sed -n "s/^station $1: kiss tcp /tcp:/p" "$work/log/channel.out"; }

start_station() {
  local n
  {
    printf '[station]\ncallsign = "N0STN"\ncontrol = "%s"\n\n' "$work/station.sock"
    printf '[agw]\nlisten = "127.0.0.1:0"\n\n[kiss-server]\nlisten = "127.0.0.1:0"\n\n'
    for n in 1 2 3 4; do
      printf '[[port]]\nname = "p%s"\nkiss = "%s"\nbitrate = %s\ncallsigns = ["N0STN-%s"]\naliases = ["RELAY%s"]\ndigipeat = true\n\n' \
        "$n" "$(kiss_of "p$n")" "$bitrate" "$n" "$n"
      printf '[[beacon]]\nport = "p%s"\ntext = "N0STN port %s: bench/station.sh"\nevery-s = 600\n\n' "$n" "$n"
    done
    printf '[[service]]\ncallsign = "ECHO"\nbuiltin = "echo"\n\n'
    printf '[[service]]\ncallsign = "DROP"\nbuiltin = "drop"\ndirectory = "%s"\n\n' "$work/drop"
    printf '[[service]]\ncallsign = "GREET"\nbuiltin = "greeting"\ntext = "Hello %%u on %%d\\r"\n\n'
    printf '[[service]]\ncallsign = "CAT"\nprogram = ["/bin/cat"]\n\n'
    printf '[[service]]\ncallsign = "TELNET"\ntcp = "127.0.0.1:9"\n'
  } >"$work/station.toml"
  : >"$work/log/station.err"
  "$bin" station --config "$work/station.toml" 2>"$work/log/station.err" &
  station_pid=$!
  pids+=("$station_pid")
  for _ in $(seq 100); do
    [ "$(grep -c 'TNC connected' "$work/log/station.err")" -ge 4 ] && break
    sleep 0.1
  done
  [ "$(grep -c 'TNC connected' "$work/log/station.err")" -ge 4 ] || { echo "station.sh: the station did not come up" >&2; cat "$work/log/station.err" >&2; exit 1; }
  agw="$(sed -n 's/.*AGWPE server on //p' "$work/log/station.err" | head -n 1)"
  kiss_server="$(sed -n 's/.*KISS server on //p' "$work/log/station.err" | head -n 1)"
}

header() {
  echo "machine       $(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
  echo "load average  $(cut -d ' ' -f 1-3 /proc/loadavg) (before the run)"
  echo "date          $(date -u '+%Y-%m-%d %H:%M UTC'), $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')"
  echo "channels      4 x $bitrate bit/s$([ "$quick" = 1 ] && echo ', quick radios'); station: 4 ports, AGWPE, KISS server, control socket,"
  echo "              5 services (echo, drop, greeting, program, tcp), 4 beacons every 600 s, digipeating"
}

# a deterministic file of N octets: text lines (for connect) or any octets
make_input() { # FILE N text|binary SEED
  python3 - "$@" <<'EOF'
import random, sys
path, n, kind, seed = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
r = random.Random(seed)
if kind == "binary":
    data = bytes(r.getrandbits(8) for _ in range(n))
else:
    out, i = bytearray(), 0
    while len(out) < n:
        line = f"{seed:03d} {i:05d} " + "".join(r.choice("abcdefghijklmnopqrstuvwxyz ") for _ in range(r.randint(10, 70)))
        out += line.encode() + b"\n"
        i += 1
    data = bytes(out[: n - 1]) + b"\n"
open(path, "wb").write(data)
EOF
}

# ---- idle ----

if [ "$part" = idle ]; then
  start_channel
  start_station
  # a client on each server, as a station usually has: axlisten's
  # successor on AGWPE, and a program with a TNC of its own on KISS port 0
  "$bin" monitor --station "$agw" >"$work/got/monitor" 2>"$work/log/monitor.err" &
  pids+=($!)
  "$bin" listen --kiss "tcp:$kiss_server" --mycall N0IDLE >"$work/got/listen" 2>"$work/log/listen.err" &
  pids+=($!)
  header
  echo "idle          1 AGWPE client (linklab monitor), 1 KISS client (linklab listen on KISS port 0);"
  echo "              settling 5 s (the first beacons go at 2 s), then $duration s measured"
  sleep 5
  s0=$(cpu_ticks "$station_pid") c0=$(cpu_ticks "$channel_pid")
  w0=$(switches "$station_pid") r0=$(run_ns "$station_pid") t0=$(now)
  echo "t_s,station_ticks,channel_ticks,station_switches" >"$work/idle.csv"
  for i in $(seq "$duration"); do
    sleep 1
    echo "$i,$(( $(cpu_ticks "$station_pid") - s0 )),$(( $(cpu_ticks "$channel_pid") - c0 )),$(( $(switches "$station_pid") - w0 ))" >>"$work/idle.csv"
  done
  t1=$(now)
  s1=$(cpu_ticks "$station_pid") c1=$(cpu_ticks "$channel_pid") w1=$(switches "$station_pid") r1=$(run_ns "$station_pid")
  secs=$(elapsed "$t0" "$t1")
  echo
  echo "station idle: $(percent $((s1 - s0)) "$secs")% of one core ($((s1 - s0)) ticks of 1/$tck s in $secs s; goal < 0.5%)"
  echo "              $(awk -v r=$((r1 - r0)) -v s="$secs" 'BEGIN { printf "%.4f", 100 * r / 1e9 / s }')% by /proc/PID/task/*/schedstat (ns), $(awk -v w=$((w1 - w0)) -v s="$secs" 'BEGIN { printf "%.2f", w / s }') context switches/s, RSS $(status_kb "$station_pid" VmRSS) kB, threads $(status_kb "$station_pid" Threads)"
  echo "channel idle: $(percent $((c1 - c0)) "$secs")% of one core ($((c1 - c0)) ticks); since it started:"
  channel_stats
  echo "csv           $work/idle.csv"
  exit 0
fi

# ---- load ----

if [ "$part" = load ]; then
  start_channel
  start_station
  header
  # 28 passive AGWPE clients, half of them asking for raw frames
  for i in $(seq 1 28); do
    raw=""; [ $((i % 2)) = 0 ] && raw="--raw"
    "$bin" monitor --station "$agw" $raw >"$work/got/monitor-$i" 2>"$work/log/monitor-$i.err" &
    pids+=($!)
  done
  # a listener on each channel for the AGWPE senders
  for n in 1 2 3 4; do
    "$bin" listen --kiss "$(kiss_of "c${n}e")" --mycall "N${n}LIS" --once --out "$work/got/agw-$n" \
      2>"$work/log/listen-$n.err" &
    pids+=($!)
  done
  # the files, made before the clock starts
  for n in 1 2 3 4; do
    make_input "$work/in/drop-${n}a" "$size" binary "${n}1"
    make_input "$work/in/drop-${n}b" "$size" binary "${n}2"
    make_input "$work/in/echo-${n}c" "$size" text "${n}3"
    make_input "$work/in/echo-${n}d" "$size" text "${n}4"
    make_input "$work/in/agw-$n" "$size" binary "${n}5"
  done
  sleep 2
  jobs_=()
  names=()
  t0=$(now)
  s0=$(cpu_ticks "$station_pid") c0=$(cpu_ticks "$channel_pid")
  for n in 1 2 3 4; do
    # two file drops and two echo sessions on every channel
    for s in a b; do
      "$bin" send --kiss "$(kiss_of "c$n$s")" --mycall "N${n}DR${s^^}" --to DROP "$work/in/drop-$n$s" \
        >"$work/log/drop-$n$s.out" 2>"$work/log/drop-$n$s.err" &
      pids+=($!); jobs_+=($!); names+=("drop-$n$s")
    done
    for s in c d; do
      want=$(stat -c %s "$work/in/echo-$n$s")
      : >"$work/got/echo-$n$s"
      # stdin stays open until the whole echo is back (or 600 s); the
      # pipeline in a subshell of its own, whose id kills both sides
      (
        {
          cat "$work/in/echo-$n$s"
          for _ in $(seq 6000); do
            [ "$(stat -c %s "$work/got/echo-$n$s")" -ge "$want" ] && break
            sleep 0.1
          done
        } | "$bin" connect --kiss "$(kiss_of "c$n$s")" --mycall "N${n}EC${s^^}" ECHO \
          >"$work/got/echo-$n$s" 2>"$work/log/echo-$n$s.err"
      ) &
      pids+=($!); jobs_+=($!); names+=("echo-$n$s")
    done
    # one transfer from an AGWPE client, out of port n to the listener
    "$bin" send --station "$agw" --port "$n" --mycall "N${n}AGW" --to "N${n}LIS" "$work/in/agw-$n" \
      >"$work/log/agw-$n.out" 2>"$work/log/agw-$n.err" &
    pids+=($!); jobs_+=($!); names+=("agw-$n")
  done
  # the links and clients the status counts while the transfers run
  (
    while kill -0 "$station_pid" 2>/dev/null; do
      "$bin" status --json --control "$work/station.sock" 2>/dev/null |
        python3 -c 'import json,sys; d=json.load(sys.stdin); print(len(d["links"]), d["clients"])' 2>/dev/null || true
      sleep 1
    done
  ) >"$work/links.txt" &
  pids+=($!)
  failed=0
  for i in "${!jobs_[@]}"; do
    if ! wait "${jobs_[$i]}"; then
      echo "${names[$i]}: exit status non-zero (log in $work/log/${names[$i]}.err)"
      failed=$((failed + 1))
    fi
  done
  t1=$(now)
  s1=$(cpu_ticks "$station_pid") c1=$(cpu_ticks "$channel_pid")
  secs=$(elapsed "$t0" "$t1")
  sleep 3 # the drops' DISC, the listeners' files
  # byte-exact? and when each result was last written, from the start
  python3 - "$work" "$t0" >"$work/load.csv" <<'EOF'
import glob, os, sys
work, t0 = sys.argv[1], float(sys.argv[2])
print("transfer,octets,result,done_s")
for n in "1234":
    pairs = []
    for s in "ab":
        got = [f for f in glob.glob(f"{work}/drop/N{n}DR{s.upper()}-*") if not f.endswith(".partial")]
        pairs.append((f"drop-{n}{s}", got[0] if got else None))
    for s in "cd":
        pairs.append((f"echo-{n}{s}", f"{work}/got/echo-{n}{s}"))
    pairs.append((f"agw-{n}", f"{work}/got/agw-{n}"))
    for name, got in pairs:
        want = open(f"{work}/in/{name}", "rb").read()
        if got is None or not os.path.exists(got):
            print(f"{name},{len(want)},missing,")
            continue
        data = open(got, "rb").read()
        result = "exact" if data == want else f"differs ({len(data)} octets)"
        print(f"{name},{len(want)},{result},{os.path.getmtime(got) - t0:.1f}")
EOF
  ok=$(grep -c ',exact,' "$work/load.csv" || true)
  total=$(($(wc -l <"$work/load.csv") - 1))
  # frames each monitor client printed: a record starts at column 0
  frames() { for i in $(seq "$1" 2 28); do grep -c '^[0-9]' "$work/got/monitor-$i" || true; done | sort -n | uniq | tr '\n' ' '; }
  mon_m=$(frames 1) mon_raw=$(frames 2)
  slowest=$(sed 1d "$work/load.csv" | sort -t, -k4 -n | tail -n 1 | cut -d, -f1,4)
  fastest=$(sed 1d "$work/load.csv" | sort -t, -k4 -n | head -n 1 | cut -d, -f1,4)
  echo
  echo "load          16 links to services from KISS callers (8 x $size octets into DROP, 8 x $size"
  echo "              octets through ECHO, 2 of each per channel) and 4 links from AGWPE clients"
  echo "              (linklab send --station, one per port, $size octets to a listener on the channel);"
  echo "              28 more AGWPE clients: linklab monitor --station (14 with --raw)"
  echo "transfers     $ok of $total byte-exact; $failed exited non-zero"
  echo "time          $secs s from the first caller's start to the last one's end"
  echo "              first done ${fastest/,/ at } s, last ${slowest/,/ at } s (load.csv has every transfer)"
  echo "station       $(percent $((s1 - s0)) "$secs")% of one core over the run ($((s1 - s0)) ticks), peak RSS (VmHWM) $(status_kb "$station_pid" VmHWM) kB,"
  echo "              RSS now $(status_kb "$station_pid" VmRSS) kB; status (1 s samples): at most $(sort -n "$work/links.txt" | tail -n 1 | cut -d ' ' -f 1) links,"
  echo "              $(sort -n -k2 "$work/links.txt" | tail -n 1 | cut -d ' ' -f 2) AGWPE and KISS clients at once"
  echo "channel       $(percent $((c1 - c0)) "$secs")% of one core ($((c1 - c0)) ticks); since it started:"
  channel_stats
  echo "monitors      frames each monitor client printed: ${mon_m}('m' records: sent and received),"
  echo "              ${mon_raw}(--raw, 'k': received only); on the air (all channels):" \
    "$(grep '^channel ch' "$work/log/channel.out" | tail -n 4 | awk '{ n += $9 } END { print n }')"
  echo "csv           $work/load.csv"
  [ "$ok" = "$total" ] && [ "$failed" = 0 ]
  exit
fi

# ---- memory ----

start_channel
start_station
header
for i in $(seq 1 "$monitors"); do
  "$bin" monitor --station "$agw" >"$work/got/monitor-$i" 2>"$work/log/monitor-$i.err" &
  pids+=($!)
done
make_input "$work/in/drop" "$size" binary 7
# the caller: one file after another into DROP, each checked and removed
(
  n=0 bad=0 last_bad=0
  while :; do
    n=$((n + 1))
    if "$bin" send --kiss "$(kiss_of c1a)" --mycall N1LOOP --to DROP "$work/in/drop" \
      >/dev/null 2>"$work/log/loop.err"; then
      f=""
      for _ in $(seq 100); do # the station stores the file on the caller's DISC
        f=$(ls "$work/drop/N1LOOP"-* 2>/dev/null | grep -v partial | head -n 1 || true)
        [ -n "$f" ] && break
        sleep 0.1
      done
      if [ -n "$f" ] && cmp -s "$f" "$work/in/drop"; then rm -f "$f"; else bad=$((bad + 1)); fi
    else
      bad=$((bad + 1))
    fi
    if [ "$bad" != "$last_bad" ]; then # keep what went wrong, out of the way
      last_bad=$bad
      mkdir -p "$work/bad/$n"
      cp "$work/log/loop.err" "$work/bad/$n/send.err"
      mv "$work/drop/N1LOOP"-* "$work/bad/$n/" 2>/dev/null || true
    fi
    echo "$n $bad" >"$work/loop.count"
  done
) &
loop_pid=$!
pids+=("$loop_pid")
echo "memory        $duration s: one caller sending $size octets into DROP again and again on ch1,"
echo "              $monitors AGWPE monitor clients; VmRSS every $interval s"
echo "t_s,rss_kb,hwm_kb,cpu_ticks,transfers,failed,rss_anon_kb,rss_file_kb" >"$work/memory.csv"
t0=$(now)
c0=$(cpu_ticks "$station_pid")
sample() {
  local t count
  t=$(elapsed "$t0" "$(now)")
  count=$(cat "$work/loop.count" 2>/dev/null || echo "0 0")
  echo "$t,$(status_kb "$station_pid" VmRSS),$(status_kb "$station_pid" VmHWM),$(( $(cpu_ticks "$station_pid") - c0 )),${count% *},${count#* },$(status_kb "$station_pid" RssAnon),$(status_kb "$station_pid" RssFile)" >>"$work/memory.csv"
}
sample
end=$(awk -v a="$t0" -v d="$duration" 'BEGIN { printf "%.0f", a + d }')
while [ "$(date +%s)" -lt "$end" ]; do
  sleep "$interval"
  sample
done
secs=$(elapsed "$t0" "$(now)")
kill_tree "$loop_pid" # before its channel goes away under it
python3 - "$work/memory.csv" "$duration" "$tck" "$secs" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
duration, tck, secs = float(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
window = min(600.0, duration / 3)
t = [float(r["t_s"]) for r in rows]
rss = [int(r["rss_kb"]) for r in rows]
first = [v for s, v in zip(t, rss) if s <= window]
last = [v for s, v in zip(t, rss) if s >= t[-1] - window]
a, b = statistics.median(first), statistics.median(last)
print(f"samples       {len(rows)}; RSS min {min(rss)} kB, max {max(rss)} kB, peak (VmHWM) {rows[-1]['hwm_kb']} kB")
print(f"RSS median    first {window:.0f} s {a:.0f} kB, last {window:.0f} s {b:.0f} kB: {100 * (b - a) / a:+.1f}% (goal: within 5%)")
print(f"traffic       {rows[-1]['transfers']} transfers done, {rows[-1]['failed']} of them failed or not byte-exact")
print(f"station CPU   {100 * int(rows[-1]['cpu_ticks']) / tck / secs:.3f}% of one core over {secs:.0f} s")
EOF
echo "csv           $work/memory.csv"
}

main "$@"; exit
