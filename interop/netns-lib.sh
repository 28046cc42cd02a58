# The prologue every interop script shares: check the tools, re-run itself
# inside a network namespace of its own under a time limit, bring up
# loopback, and kill what it started when it exits.  Sourced, not run, by
# the scripts of interop/ (after `here=$(cd "$(dirname "$0")" && pwd)`):
#
#   netns_need NAME HINT TOOL...    exit 2 with "NAME: needs TOOL (HINT)" on
#                                   stderr for the first TOOL not on PATH
#   netns_enter VAR SECONDS ARGS... unless VAR is set: re-run the script
#                                   ("$0" ARGS...) with VAR=1 in a new
#                                   network namespace (`unshare -n`, needs
#                                   root), killed after SECONDS (and KILLed
#                                   5 s later); its exit status is the
#                                   script's.  With VAR set (inside): return
#   netns_lo [--gensio-addr]        bring up lo (the namespace's only
#                                   interface); --gensio-addr also puts
#                                   192.0.2.1/32 on it, see below
#   netns_pids                      pids=() (append each background process
#                                   to it) and an EXIT trap: netns_cleanup
#   netns_cleanup                   kill every process in pids, wait for all
#                                   children, empty pids
#   wait_port PORT [SECONDS]        wait (10 s unless told) until
#                                   127.0.0.1:PORT accepts; 1 if it never did
#   wait_listen NETNS PORT [SECONDS]
#                                   wait (10 s unless told) until a TCP
#                                   socket listens on PORT in namespace
#                                   NETNS (`ss`, so nothing connects to it);
#                                   1 if none ever did
#
# A script reads:
#   here=$(cd "$(dirname "$0")" && pwd)
#   . "$here/netns-lib.sh"
#   netns_need linklab-x "apt-get install x" x
#   netns_enter LINKLAB_X_IN_NETNS 300 "$@"
#   ...options...
#   netns_lo
#   netns_pids
# The tool check runs again inside the namespace (same PATH): harmless.

netns_need() { # NAME HINT TOOL...
    local name=$1 hint=$2 tool
    shift 2
    for tool in "$@"; do
        command -v "$tool" >/dev/null ||
            { echo "$name: needs $tool ($hint)" >&2; exit 2; }
    done
}

netns_enter() { # VAR SECONDS ARGS...
    local var=$1 secs=$2
    shift 2
    [ -n "${!var:-}" ] && return 0
    exec timeout -k 5 "$secs" unshare -n env "$var=1" bash "$0" "$@"
}

# gensio resolves addresses with AI_ADDRCONFIG, which finds no IPv4 at all
# when the only address is 127.0.0.1 ("Unable to find a valid name on the
# name server"); any non-127 address on lo cures that (docs/interop.md).
netns_lo() { # [--gensio-addr]
    ip link set lo up
    if [ "${1:-}" = --gensio-addr ]; then
        ip addr add 192.0.2.1/32 dev lo
    fi
}

netns_pids() {
    pids=()
    trap netns_cleanup EXIT
}

netns_cleanup() {
    local p
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    pids=()
}

wait_port() { # PORT [SECONDS]
    for _ in $(seq $(( ${2:-10} * 10 ))); do
        (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}

# wait_file PATH [SECONDS]: until PATH exists (interop/kiss_tap.py opens
# its output once connected, so a capture waited for this way does not
# miss the first frames when the machine is slow to start Python).
wait_file() {
    for _ in $(seq $(( ${2:-10} * 10 ))); do
        [ -e "$1" ] && return 0
        sleep 0.1
    done
    return 1
}

wait_listen() { # NETNS PORT [SECONDS]
    for _ in $(seq $(( ${3:-10} * 10 ))); do
        [ -n "$(ip netns exec "$1" ss -Hltn "sport = :$2")" ] && return 0
        sleep 0.1
    done
    return 1
}
