#!/usr/bin/env bash
# Fuzzing to depth: runs every cargo-fuzz target until it reaches its runs
# goal or its time budget, whichever comes first, and prints a Markdown
# table of runs, coverage and corpus per target (docs/testing.md,
# "Fuzzing").
#
#   fuzz/depth.sh [--budget SECONDS] [--jobs N] [--nice N] [--only TARGET...] [--no-cmin]
#
# Goals: a decoder (a target that decodes one input and keeps no state
# between steps) 10 million runs, a stateful target (an engine driven
# through steps) 1 million. --budget caps each target's time (default
# 600 s); --jobs runs that many targets at once (default 1), each at
# niceness --nice (default 19, so that fuzzing yields to other work; 0
# makes the fuzzers a full load, as for the CI-under-load runs of
# docs/testing.md);
# --only runs the targets named (default: every target of `cargo fuzz
# list`). New inputs libFuzzer finds are kept in fuzz/corpus/TARGET, and
# each corpus is minimised at the end as `cargo fuzz cmin` would (--no-cmin
# skips that). Logs go to fuzz/depth-logs/TARGET.log. Exits 1 if any
# target crashed or hung (the table gives the artifact to reproduce it
# with `cargo fuzz run --sanitizer none --debug-assertions TARGET ARTIFACT`).
set -euo pipefail

usage() {
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
    exit 2
}

budget=600
jobs=1
niceness=19
cmin=1
only=()
while [ $# -gt 0 ]; do
    case "$1" in
        --budget)
            [ $# -ge 2 ] || usage
            budget="$2"
            shift 2
            ;;
        --jobs)
            [ $# -ge 2 ] || usage
            jobs="$2"
            shift 2
            ;;
        --nice)
            [ $# -ge 2 ] || usage
            niceness="$2"
            shift 2
            ;;
        --no-cmin)
            cmin=0
            shift
            ;;
        --only)
            shift
            while [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; do
                only+=("$1")
                shift
            done
            [ ${#only[@]} -gt 0 ] || { echo "depth.sh: --only needs at least one target" >&2; exit 2; }
            ;;
        -h | --help) usage ;;
        *)
            echo "depth.sh: unknown argument '$1'" >&2
            usage
            ;;
    esac
done
case "$budget" in '' | *[!0-9]* | 0) echo "depth.sh: --budget must be a positive number of seconds, not '$budget'" >&2; exit 2 ;; esac
case "$jobs" in '' | *[!0-9]* | 0) echo "depth.sh: --jobs must be a positive whole number, not '$jobs'" >&2; exit 2 ;; esac

cd "$(dirname "$0")/.."

# The decoders: one input decoded (and re-encoded), nothing kept between
# steps. Every other target drives an engine with state.
decoders=" ax25_frame ax25_xid lapb_frame kiss_decoder pcap_reader monitor hdlc_deframe \
 x25_packet netrom_decode axudp_decode ax25_digipeat ax25_digipeat_aprs normcl_object part_file "
decoder_runs=10000000
stateful_runs=1000000

if ! command -v cargo-fuzz > /dev/null; then
    echo "installing cargo-fuzz" >&2
    cargo install cargo-fuzz --locked
fi
# cargo-fuzz needs nightly features: the nightly toolchain if there is
# one, else the stable one told to allow them.
if rustup toolchain list 2> /dev/null | grep -q '^nightly'; then
    fuzz=(cargo +nightly fuzz)
else
    export RUSTC_BOOTSTRAP=1
    fuzz=(cargo fuzz)
fi

all=$("${fuzz[@]}" list)
if [ ${#only[@]} -gt 0 ]; then
    for t in "${only[@]}"; do
        grep -qx "$t" <<< "$all" || { echo "depth.sh: no fuzz target '$t' (cargo fuzz list: $(echo $all))" >&2; exit 2; }
    done
    targets=("${only[@]}")
else
    mapfile -t targets <<< "$all"
fi

# Without a sanitizer and with debug assertions: every linklab crate
# forbids unsafe code, so AddressSanitizer would find little and slows
# the runs several times, while overflow checks catch arithmetic that
# release builds would wrap. Panics, hangs and running out of memory are
# caught either way.
build=(--sanitizer none --debug-assertions)
echo "building ${#targets[@]} target(s)" >&2
nice -n 10 "${fuzz[@]}" build "${build[@]}"
bin=fuzz/target/$(rustc -vV | sed -n 's/^host: //p')/release

logs=fuzz/depth-logs
mkdir -p "$logs"

kind_of() {
    case "$decoders" in *" $1 "*) echo decoder ;; *) echo stateful ;; esac
}

# The binaries are run as `cargo fuzz run` would run them, but directly,
# so that nothing is rebuilt between targets.
run_one() {
    local t=$1 goal
    if [ "$(kind_of "$t")" = decoder ]; then goal=$decoder_runs; else goal=$stateful_runs; fi
    mkdir -p "fuzz/corpus/$t" "fuzz/artifacts/$t"
    echo "$(date -u +%H:%M:%S) $t: up to $goal runs or $budget s" >&2
    local start=$SECONDS
    # A single input running a minute is a hang worth reporting.
    nice -n "$niceness" "$bin/$t" -artifact_prefix="fuzz/artifacts/$t/" -runs="$goal" \
        -max_total_time="$budget" -timeout=60 -print_final_stats=1 \
        "fuzz/corpus/$t" > "$logs/$t.log" 2>&1 || true
    echo $((SECONDS - start)) > "$logs/$t.seconds"
}

running=0
for t in "${targets[@]}"; do
    if [ "$running" -ge "$jobs" ]; then
        wait -n || true
        running=$((running - 1))
    fi
    run_one "$t" &
    running=$((running + 1))
done
wait

if [ "$cmin" = 1 ]; then
    for t in "${targets[@]}"; do
        # As `cargo fuzz cmin` does: merge the corpus into an empty one,
        # keeping the inputs that add coverage. A crashed target's corpus
        # is minimised too: the merge skips the crashing input, and what
        # it found stays in the artifact.
        echo "$(date -u +%H:%M:%S) minimising fuzz/corpus/$t" >&2
        min="fuzz/corpus/.$t.min"
        rm -rf "$min"
        mkdir -p "$min"
        if nice -n "$niceness" "$bin/$t" -merge=1 -timeout=60 "$min" "fuzz/corpus/$t" > "$logs/$t.cmin.log" 2>&1 &&
            [ -n "$(ls -A "$min")" ]; then
            rm -rf "fuzz/corpus/$t"
            mv "$min" "fuzz/corpus/$t"
        else
            rm -rf "$min"
            echo "depth.sh: minimising $t failed, corpus kept as it grew (see $logs/$t.cmin.log)" >&2
        fi
    done
fi

failed=0
echo
echo "| target | kind | goal | runs | seconds | runs/s | cov | ft | corpus | result |"
echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
for t in "${targets[@]}"; do
    log="$logs/$t.log"
    kind=$(kind_of "$t")
    if [ "$kind" = decoder ]; then goal=$decoder_runs; else goal=$stateful_runs; fi
    # libFuzzer's last words: "Done N runs in S second(s)", and its last
    # status line "#N ... cov: C ft: F corp: ...".
    read -r runs secs < <(sed -n 's/^Done \([0-9]*\) runs in \([0-9]*\) second.*/\1 \2/p' "$log" | tail -1) || true
    read -r cov ft < <(sed -n 's/^#[0-9]*.*cov: \([0-9]*\) ft: \([0-9]*\).*/\1 \2/p' "$log" | tail -1) || true
    if [ -z "${runs:-}" ]; then
        # No "Done": it stopped on a failure; its final stats say how far
        # it got, and the wall clock how long (building included).
        runs=$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\).*/\1/p' "$log" | tail -1)
        secs=$(cat "$logs/$t.seconds" 2> /dev/null || true)
    fi
    corpus=$(find "fuzz/corpus/$t" -type f | wc -l)
    artifact=$(sed -n 's/.*Test unit written to \([^ ]*\).*/\1/p' "$log" | tail -1)
    if [ -n "$artifact" ]; then
        what=CRASH
        grep -q 'libFuzzer: timeout' "$log" && what=HANG
        grep -q 'out-of-memory' "$log" && what=OOM
        result="$what: $artifact"
        failed=1
    elif grep -q '^Done [0-9]* runs' "$log"; then
        result="no crash"
        [ "${runs:-0}" -lt "$goal" ] && result="no crash; short of the goal"
    elif grep -q 'libFuzzer: run interrupted' "$log"; then
        # Stopped by SIGINT (the runs so far are its final stats).
        result="no crash; interrupted short of the goal"
    else
        result="did not run: see $log"
        failed=1
    fi
    rate=
    [ -n "${secs:-}" ] && [ "${secs:-0}" -gt 0 ] && rate=$((runs / secs))
    echo "| \`$t\` | $kind | $goal | ${runs:-?} | ${secs:-?} | ${rate:-?} | ${cov:-?} | ${ft:-?} | $corpus | $result |"
    unset runs secs cov ft
done
exit "$failed"
