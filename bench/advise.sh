#!/usr/bin/env bash
# `linklab advise` on the cases its tests and docs use, one after the
# other in one run, each timed (wall and CPU) on this machine's cores.
# The issue's goal: under 10 s for a two-station case on 2 cores. See
# docs/performance.md, "linklab advise".
#
#   bench/advise.sh            # every case, 10 replications per setting
#   RUNS=5 bench/advise.sh     # the median of 5 runs of each case
#
# Needs cargo; builds the release binary first.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
runs="${RUNS:-3}"
cargo build --release --quiet
bin="$root/target/release/linklab"

cases=(
  "KISS 1200 bit/s|--bitrate 1200"
  "KISS 9600 bit/s|--bitrate 9600"
  "KISS 1200 bit/s, BER 1e-4|--bitrate 1200 --ber 1e-4"
  "Dire Wolf's engine, 1200 bit/s, modulo 128|--bitrate 1200 --stack dire-wolf --mod128"
  "KISS 9600 bit/s, modulo 128, N1 to 1024|--bitrate 9600 --mod128 --n1-max 1024"
  "Ronan et al. Table I, 1200 bit/s|--bitrate 1200 --txdelay-ms 150 --txtail-ms 20 --tnc-per-frame-ms 180 --carrier-hold-ms 500 --size 7182 --n1-max 255"
  "TNC2 (MFJ) firmware, 1200 bit/s|--bitrate 1200 --tnc tnc2-mfj --txdelay-ms 400 --txtail-ms 0 --size 8192"
  "TNC3 firmware, 9600 bit/s|--bitrate 9600 --tnc tnc3 --txdelay-ms 400 --txtail-ms 0 --size 8192"
  "Bux et al. line, 48 kbit/s, t_p 50 ms, two-way|--bitrate 48000 --line-tp-ms 50 --ber 1e-5 --both-ways --mod128 --n1-max 2048"
  "KISS 1200 bit/s, 256 KiB|--bitrate 1200 --size 262144"
)

printf '%-48s %9s %9s %s\n' case wall_s cpu_s advice
for c in "${cases[@]}"; do
  name="${c%%|*}"
  args="${c#*|}"
  walls=() cpus=()
  for _ in $(seq "$runs"); do
    # shellcheck disable=SC2086
    out=$( { /usr/bin/time -f '%e %U %S' "$bin" advise $args >/tmp/advise-bench.$$ ; } 2>&1 )
    read -r wall user sys <<<"$out"
    walls+=("$wall")
    cpus+=("$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')")
  done
  median() { printf '%s\n' "$@" | sort -n | sed -n "$(( ($# + 1) / 2 ))p"; }
  best=$(sed -n 's/^Best settings: //p' /tmp/advise-bench.$$)
  printf '%-48s %9s %9s %s\n' "$name" "$(median "${walls[@]}")" "$(median "${cpus[@]}")" "$best"
done
rm -f /tmp/advise-bench.$$
