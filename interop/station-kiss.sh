#!/bin/bash
# KISS programs nobody on the project wrote, as clients of a station's
# KISS server: gensio's AX.25 stack (gensiot, gensio-bin) and Dire Wolf's
# kissutil (direwolf), on the same radio port as the station's own
# services, through an emulated channel, in a network namespace of its
# own.
#
#   interop/station-kiss.sh -l LINKLAB [-o OUTDIR] [-s BYTES]
#
# One channel at 9600 bit/s, three stations (127.0.0.1:8701..8703): the
# station on s0 (AGWPE on 8711, KISS server on 8710, an echo service
# N0CALL-4 and a beacon every 10 s), `linklab listen` on s1, `linklab
# listen --monitor` on s2. Checks:
#   gensiot       gensiot (N0GEN-1), a KISS client of the station, connects
#                 through the station's port to `linklab listen` N0CALL-2 on
#                 s1 and sends BYTES (10240): byte-exact
#   kissutil-rx   a kissutil on the station's KISS server receives the
#                 station's own beacon (frames the station sends reach its
#                 KISS clients)
#   kissutil-tx   frames typed to that kissutil go on the air: the monitor
#                 on s2 shows all 5
#   echo          meanwhile the station's echo service answers a call from
#                 s2 (`linklab connect`), so the KISS clients and the
#                 station's engine share the port
# Needs root (unshare), gensiot, kissutil, python3 and iproute2 (ss).
set -u

here=$(cd "$(dirname "$0")" && pwd)
. "$here/netns-lib.sh"
netns_need station-kiss "apt-get install gensio-bin direwolf python3 iproute2" gensiot kissutil ss
netns_enter STATION_KISS_IN_NETNS 150 "$@"

out=""; size=10240; linklab=""
while [ $# -gt 0 ]; do
    case "$1" in
        -o) out=$2; shift 2 ;;
        -s) size=$2; shift 2 ;;
        -l) linklab=$2; shift 2 ;;
        *) echo "usage: $0 -l LINKLAB [-o OUTDIR] [-s BYTES]" >&2; exit 2 ;;
    esac
done
[ -x "$linklab" ] || { echo "station-kiss: -l LINKLAB must name the linklab binary" >&2; exit 2; }
[ -n "$out" ] || out=$(mktemp -d /tmp/station-kiss.XXXXXX)
mkdir -p "$out"

netns_lo --gensio-addr
netns_pids

base=8701
timeout 140 "$linklab" channel --stations 3 --base-port "$base" --bitrate 9600 \
    --txdelay-ms 50 --txtail-ms 10 --seed 4 > "$out/channel.out" 2> "$out/channel.log" &
pids+=($!)
for p in 0 1 2; do
    wait_port $((base + p)) 10 || { echo "station-kiss: station s$p never listened (see $out/channel.log)"; exit 1; }
done

cat > "$out/station.toml" <<EOF
[station]
callsign = "N0CALL"
control = "$out/station.sock"
[agw]
listen = "127.0.0.1:8711"
[kiss-server]
listen = "127.0.0.1:8710"
[[port]]
name = "vhf"
kiss = "tcp:127.0.0.1:$base"
callsigns = ["N0CALL-1"]
txdelay-ms = 50
t1-ms = 3000
[[service]]
callsign = "N0CALL-4"
builtin = "echo"
[[beacon]]
port = "vhf"
text = "station beacon"
every-s = 10
EOF
timeout 130 "$linklab" station --config "$out/station.toml" > /dev/null 2> "$out/station.log" &
pids+=($!)
wait_port 8710 10 || { echo "station-kiss: the station never listened (see $out/station.log)"; exit 1; }

fail=0
t0=0
start() { t0=$(date +%s.%N); }
result() { # NAME OK DETAIL
    local res=PASS
    [ "$2" = 1 ] || { res=FAIL; fail=1; }
    printf '%-14s %s %6ss  %s\n' "$1" "$res" \
        "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2f", b-a}')" "$3"
}
wait_count() { # FILE PATTERN N SECONDS
    for _ in $(seq $(( $4 * 10 ))); do
        [ "$(grep -ac "$2" "$1" 2>/dev/null)" -ge "$3" ] && return 0
        sleep 0.1
    done
    return 1
}
clients() { ss -Htn state established "( sport = :8710 )" | wc -l; }

echo "station-kiss: output in $out"
timeout 120 "$linklab" listen --kiss "tcp:127.0.0.1:$((base + 2))" --mycall N0MON --monitor \
    --out "$out/monitor.out" > /dev/null 2> "$out/monitor.log" & pids+=($!)

# kissutil on the station's KISS server: it receives, and sends what is
# typed on its standard input (a FIFO this shell holds open).
mkfifo "$out/type"
exec 7<> "$out/type"
before=$(clients)
timeout 120 kissutil -h 127.0.0.1 -p 8710 <&7 > "$out/kissutil.log" 2>&1 & pids+=($!)
for _ in $(seq 100); do [ "$(clients)" -gt "$before" ] && break; sleep 0.1; done

# gensiot -> linklab listen on s1, through the station's KISS server.
start
head -c "$size" /dev/urandom > "$out/data.bin"
timeout 120 "$linklab" listen --once --kiss "tcp:127.0.0.1:$((base + 1))" --mycall N0CALL-2 \
    --out "$out/got.bin" > /dev/null 2> "$out/listen.log" & la=$!; pids+=($la)
sleep 0.5
timeout 110 gensiot -i "file(infile=$out/data.bin)" \
    "ax25(laddr=N0GEN-1,extended=0,writewindow=1,addr=\"0,N0CALL-2,N0GEN-1\"),kiss,tcp,127.0.0.1,8710" \
    > "$out/gensiot.log" 2>&1 & ga=$!; pids+=($ga)

# Meanwhile a call to the station's echo service from s2.
(printf 'echo through the station\n'; sleep 8) | timeout 60 "$linklab" connect \
    --kiss "tcp:127.0.0.1:$((base + 2))" --mycall N0CALL-9 N0CALL-4 > "$out/echo.out" 2> "$out/echo.log" &
ec=$!; pids+=($ec)

# Frames typed to kissutil.
for i in 1 2 3 4 5; do echo "N0KSU>N0LL:from kissutil $i/5" >&7; sleep 0.2; done

wait "$la"; lrc=$?
wait "$ga"; grc=$?
if [ "$lrc" = 0 ] && cmp -s "$out/data.bin" "$out/got.bin"; then
    result gensiot 1 "$size bytes byte-exact (gensiot exit $grc)"
else
    result gensiot 0 "listen exit $lrc, gensiot exit $grc (logs in $out)"
fi

start
if wait_count "$out/kissutil.log" "N0CALL>ID:station beacon" 1 25; then
    result kissutil-rx 1 "the station's beacon reached kissutil"
else
    result kissutil-rx 0 "no beacon in $out/kissutil.log"
fi

start
if wait_count "$out/monitor.log" "N0KSU>N0LL: <UI .*> \[F0\] from kissutil [0-9]/5\$" 5 20; then
    result kissutil-tx 1 "5 of 5 typed frames on the air"
else
    result kissutil-tx 0 "$(grep -ac 'N0KSU>N0LL' "$out/monitor.log") of 5 on the air"
fi

start
wait "$ec"
if grep -q "echo through the station" "$out/echo.out"; then
    result echo 1 "the echo service answered meanwhile"
else
    result echo 0 "no echo (see $out/echo.out, $out/echo.log)"
fi

exec 7>&-
[ "$fail" = 0 ] && echo "station-kiss: all passed"
exit "$fail"
