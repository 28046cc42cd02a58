# Shared pieces of the Dire Wolf interop scripts (direwolf-pair.sh,
# linklab-direwolf.sh): two Dire Wolf 1.6 instances joined by
# interop/audio_relay.py.  Sourced, not run, after interop/netns-lib.sh.
# Expects:
#   $here    the interop/ directory
#   $out     the output directory (absolute)
#   $baud    9600 or 1200
#   pids     netns_pids's array, which netns_cleanup kills
#
#   dw_txdelay                      TXDELAY (10 ms units) for $baud -> $txdelay
#   dw_mkconf NAME MYCALL KISSPORT AGWPORT
#                                   $out/NAME.conf, $out/NAME/.asoundrc and
#                                   the FIFOs $out/NAME.tx, $out/NAME.rx
#   dw_start PREFIX SECONDS DROP SEED
#                                   start the relay (drop rate DROP, seed
#                                   SEED) and both instances, every process
#                                   under `timeout SECONDS`; logs go to
#                                   $out/PREFIX{relay.log,relay.err,A.log,B.log};
#                                   returns when all four TCP ports answer
#                                   (netns-lib.sh's wait_port, 10 s each)
#   dw_relay_opts (optional)        further audio_relay.py options for
#                                   dw_start, e.g. "--hole-rate 0.5"
#
# Audio: each instance transmits through an ALSA `file` PCM (slave "null")
# that writes raw S16_LE mono at 48000 Hz to NAME.tx, and receives from its
# standard input (`ADEVICE stdin dwtx`), which is NAME.rx.  The relay plays
# A's transmit audio into B's stdin and B's into A's in real time, with
# silence between transmissions.  See docs/interop.md.

dw_txdelay() {
    case "$baud" in
        9600) txdelay=10 ;;
        1200) txdelay=20 ;;
        *) echo "baud must be 9600 or 1200" >&2; return 2 ;;
    esac
}

# One config, ALSA file PCM and pair of FIFOs per instance.  Dire Wolf reads
# ~/.asoundrc, so each instance gets its own HOME.
dw_mkconf() { # NAME MYCALL KISSPORT AGWPORT
    dw_txdelay || return 2
    mkdir -p "$out/$1"
    rm -f "$out/$1.tx" "$out/$1.rx"
    mkfifo -m 600 "$out/$1.tx" "$out/$1.rx"
    cat > "$out/$1/.asoundrc" <<EOF
# transmit audio of $1: raw S16_LE to a FIFO read by audio_relay.py
pcm.dwtx {
    type file
    slave.pcm "null"
    file "$out/$1.tx"
    format "raw"
}
EOF
    cat > "$out/$1.conf" <<EOF
# receive from stdin, transmit to the ALSA PCM "dwtx" of ~/.asoundrc
ADEVICE stdin dwtx
ARATE 48000
ACHANNELS 1
CHANNEL 0
MYCALL $2
MODEM $baud
TXDELAY $txdelay
KISSPORT $3
AGWPORT $4
EOF
}

# Ports of the instances made by dw_mkconf, read back from the configs.
dw_ports() { sed -n 's/^\(KISS\|AGW\)PORT //p' "$out/$1.conf"; }

dw_start() { # PREFIX SECONDS DROP SEED
    local prefix=$1 secs=$2 drop=$3 seed=$4 n p
    # The FIFOs are single-use: a Dire Wolf that exits closes them.
    for n in A B; do
        rm -f "$out/$n.tx" "$out/$n.rx"
        mkfifo -m 600 "$out/$n.tx" "$out/$n.rx"
    done
    timeout "$secs" python3 "$here/audio_relay.py" --a-tx "$out/A.tx" --a-rx "$out/A.rx" \
        --b-tx "$out/B.tx" --b-rx "$out/B.rx" --drop-rate "$drop" --seed "$seed" \
        --log "$out/${prefix}relay.log" --bursts "$out/${prefix}bursts.txt" ${dw_relay_opts:-} \
        2> "$out/${prefix}relay.err" & pids+=($!)
    for n in A B; do
        # -t 0: no colour escapes in the log; "-" on the command line would
        # also select stdin, the config says it already.
        ( cd "$out/$n" && HOME="$out/$n" exec timeout "$secs" direwolf -t 0 -c "$out/$n.conf" \
            < "$out/$n.rx" > "$out/${prefix}$n.log" 2>&1 ) & pids+=($!)
    done
    for p in $(dw_ports A) $(dw_ports B); do
        wait_port "$p" || {
            echo "direwolf: port $p never opened"
            tail "$out/${prefix}A.log" "$out/${prefix}B.log"
            return 1
        }
    done
}
