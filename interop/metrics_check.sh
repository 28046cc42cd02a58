#!/bin/bash
# The station's /metrics read by an OpenMetrics parser from PyPI (the
# prometheus-client package, pinned below) in a virtualenv of its own,
# checked against docs/station.md's metric table by
# interop/metrics_check.py (see there for the checks).
#
#   interop/metrics_check.sh [-V VENV] DOC STILL SAMPLE...
#
# -V  the virtualenv; by default one under ~/.cache/linklab-metrics keyed
#     by the Python version and the pin, made (from PyPI) on first use.
# Exits 0 if every check passed, 1 if one failed, 2 if the virtualenv
# cannot be made (no python3-venv, no PyPI): the caller may skip then.
set -u

here=$(cd "$(dirname "$0")" && pwd)
pin=prometheus-client==0.21.1
venv=""
if [ "${1:-}" = "-V" ]; then venv=$2; shift 2; fi
[ $# -ge 3 ] || { echo "usage: $0 [-V VENV] DOC STILL SAMPLE..." >&2; exit 2; }
command -v python3 >/dev/null 2>&1 || { echo "metrics_check: no python3" >&2; exit 2; }
if [ -z "$venv" ]; then
    pyver=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    venv="${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/linklab-metrics/py$pyver-${pin#*==}"
fi
if [ ! -e "$venv/.complete" ]; then
    mkdir -p "$(dirname "$venv")"
    (
        flock 9
        [ -e "$venv/.complete" ] && exit 0
        rm -rf "$venv"
        echo "metrics_check: making $venv: $pin"
        python3 -m venv "$venv" &&
            timeout 300 "$venv/bin/pip" install -q --disable-pip-version-check "$pin" &&
            touch "$venv/.complete"
    ) 9> "$venv.lock" || { echo "metrics_check: could not make the virtualenv $venv" >&2; exit 2; }
fi
"$venv/bin/python" "$here/metrics_check.py" "$@"
