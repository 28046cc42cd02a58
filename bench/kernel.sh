#!/usr/bin/env bash
# The linklab-sim kernel beside SimPy on the same M/D/1 queue (rho = 0.8,
# D = 1 ms, Poisson arrivals), in one run, with the ratio of their event
# rates. See docs/performance.md.
#
#   bench/kernel.sh                 # 1,000,000 customers each
#   CUSTOMERS=200000 bench/kernel.sh
#
# Environment:
#   CUSTOMERS    customers per run, both engines (default 1000000)
#   RUNS         Rust runs, the median is reported (default 5)
#   SIMPY_RUNS   SimPy runs, the median is reported (default 1; ~5-10 s each)
#   BENCH_VENV   where SimPy is installed if missing (default target/bench-venv)
#   PYTHON       the Python 3 used to create that venv (default python3)
#
# Needs cargo and Python 3; installs SimPy from PyPI into BENCH_VENV, no root.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
customers="${CUSTOMERS:-1000000}"
runs="${RUNS:-5}"
simpy_runs="${SIMPY_RUNS:-1}"
venv="${BENCH_VENV:-$root/target/bench-venv}"
python="${PYTHON:-python3}"

# SimPy in a private venv or, where Python lacks the venv module (Debian
# without python3-venv), a plain `pip install --target` directory.
site="$venv/site"
has_simpy() { "$1" -c 'import simpy' >/dev/null 2>&1; }
use_site() { export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"; simpy_python="$python"; }
simpy_python="$venv/bin/python"
if has_simpy "$simpy_python"; then
    :
elif [ -d "$site" ] && PYTHONPATH="$site" has_simpy "$python"; then
    use_site
else
    echo "installing SimPy into $venv ..." >&2
    if "$python" -m venv "$venv" >/dev/null 2>&1 && "$simpy_python" -m pip install -q simpy; then
        :
    elif "$python" -m pip install -q --target "$site" simpy; then
        use_site
    else
        echo "kernel.sh: could not install SimPy with $python (needs the venv or pip module)" >&2
        exit 1
    fi
fi

echo "machine       $(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)"
echo "load average  $(cut -d ' ' -f 1-3 /proc/loadavg 2>/dev/null) (before the runs)"
echo "date          $(date -u '+%Y-%m-%d %H:%M UTC')"
echo

cargo build --release --quiet -p linklab-sim --example md1
kernel_out="$(cargo run --release --quiet -p linklab-sim --example md1 -- "$customers" "$runs")"
echo "$kernel_out"
echo
simpy_out="$("$simpy_python" bench/md1_simpy.py "$customers" "$simpy_runs")"
echo "$simpy_out"
echo

echo "load average  $(cut -d ' ' -f 1-3 /proc/loadavg 2>/dev/null) (after the runs)"
rate() { awk '$1 == "events/s" { print $2 }'; }
kernel_rate="$(rate <<<"$kernel_out")"
simpy_rate="$(rate <<<"$simpy_out")"
awk -v k="$kernel_rate" -v s="$simpy_rate" 'BEGIN {
    printf "comparison    linklab-sim %.2f M events/s, SimPy %.3f M events/s: linklab-sim is %.0fx faster\n",
        k / 1e6, s / 1e6, k / s
}'
