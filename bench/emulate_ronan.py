#!/usr/bin/env python3
"""Emulate equals simulate: Ronan, Long and Walsh's Table I transfer over
`linklab channel` against the simulator's same-seed run.

For each (bit rate, window) it takes the plan of one replication from the
example `ronan_emulation_plan` (its master seed, its simulated transfer
time, the mean and 95 % half-width over the replications: the reproduce
value of Table III), then runs the real thing in real time:

- `linklab channel FILE --seed SEED --capture air.pcap`: one channel named
  "radio" at the bit rate, stations s0 (sender) and s1 (receiver), Table I
  KISS defaults (TXDELAY 150 ms, P 63, slot 20 ms, TXTAIL 20 ms). With the
  replication's seed the channel draws the slot phases and the persistence
  numbers exactly as the simulator's transfer bench does.
- `linklab listen` on s1 and `linklab send` on s0 with the model's station
  behaviour: modulo 8 (SABM, v2.0, no XID), window k on both ends, N1 255,
  P on the last I frame of a window (`--poll-last`), a poll answered at
  once (`--ack-policy window`), T1 and T2 so long they never run out
  (the simulated T1 pauses while the channel is busy; KISS gives the host
  no such hint, so here it must simply never expire).
- The message is the simulator's own: 7182 octets from the replication's
  stream "payload" (xoshiro256** seeded through SplitMix64, as
  linklab_core::Streams; checked against the plan's slot phases, drawn
  from the stream "slot-phase"). The same octets give the same bit
  stuffing, so every frame has the same length on the air in both runs.

The emulated span is read from the capture (each record stamped with the
end of the frame's closing flag, model time): from the end of the
receiver's UA to the end of the receiver's frame that acknowledged the
last I frame. The simulation offers the message to an idle channel a
second after the link is up; the emulated sender has the message at once
and waits for the UA's TXTAIL, so its span (last RR end + TXTAIL) -
(UA end + TXTAIL) is the same quantity. As one second is a whole number
of 20 ms slots, the slot clocks stand where they stood in the simulation.

Prints per row: rate, window, the reproduce mean +- ci95, the same-seed
simulated time, the emulated time, and emulated/simulated and
emulated/mean; the verdict is emulated within 2 % of the same-seed
simulation. Exit status 1 if any row fails (or the file arrived damaged).

    bench/emulate_ronan.py [--rates 9600,1200] [--windows 1-7]
        [--linklab target/release/linklab] [--replication R|R0-R1]
        [--plan-cmd 'CMD ...'] [--plan FILE] [--keep DIR] [--json FILE]

The plan comes from `--plan FILE` (a JSON object as the example prints, or
a list of them; tests/emulate_ronan.rs computes it in Rust), else from
`--plan-cmd`, else from target/release/examples/ronan_emulation_plan if
built, else from `cargo run --release -p linklab-scenario --example
ronan_emulation_plan --`.
"""

import argparse
import json
import os
import shlex
import signal
import struct
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOLERANCE = 0.02
MASK = (1 << 64) - 1
SEND_CALL = "N0SEND"
RECV_CALL = "N0RECV"

# --- linklab_core::Streams, bit for bit (crates/core/src/rng.rs) ----------

GAMMA = 0x9E3779B97F4A7C15
DOMAIN_NAME = 0x6E616D65


def mix64(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def fnv1a(data):
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & MASK
    return h


def rotl(x, k):
    return ((x << k) | (x >> (64 - k))) & MASK


class Stream:
    """xoshiro256** seeded through SplitMix64, as linklab_core::Stream."""

    def __init__(self, seed):
        state = seed
        s = []
        for _ in range(4):
            state = (state + GAMMA) & MASK
            s.append(mix64(state))
        self.s = s if any(s) else [GAMMA, 1, 2, 3]

    def next_u64(self):
        s0, s1, s2, s3 = self.s
        out = (rotl((s1 * 5) & MASK, 7) * 9) & MASK
        t = (s1 << 17) & MASK
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = rotl(s3, 45)
        self.s = [s0, s1, s2, s3]
        return out

    def below(self, n):
        if n == 0:
            return 0
        threshold = ((-n) & MASK) % n
        while True:
            m = self.next_u64() * n
            if (m & MASK) >= threshold:
                return m >> 64


def named_stream(master_seed, name):
    base = mix64((master_seed + GAMMA) & MASK)
    seed = mix64(base ^ mix64(fnv1a(name.encode()) ^ mix64(DOMAIN_NAME)))
    return Stream(seed)


def simulator_message(plan):
    """The octets the simulator sent, checked through the slot phases."""
    seed = plan["seed"]
    slot_us = int(round(plan["station"]["slot_ms"] * 1000))
    phases = named_stream(seed, "slot-phase")
    drawn = [phases.below(slot_us), phases.below(slot_us)]
    if drawn != list(plan["slot_phase_us"]):
        raise SystemExit(
            f"the Python copy of linklab_core::Streams disagrees with the plan: "
            f"slot phases {drawn} != {plan['slot_phase_us']}")
    payload = named_stream(seed, "payload")
    n = plan["station"]["message_octets"]
    return bytes(payload.below(256) for _ in range(n))


# --- plan -------------------------------------------------------------------

def plan_command(args):
    if args.plan_cmd:
        return shlex.split(args.plan_cmd)
    built = os.path.join(REPO, "target", "release", "examples", "ronan_emulation_plan")
    if os.access(built, os.X_OK):
        return [built]
    return ["cargo", "run", "--quiet", "--release", "-p", "linklab-scenario",
            "--example", "ronan_emulation_plan", "--"]


def get_plan(args, rate, window, replication, given):
    for p in given:
        if p["station"]["bit_rate"] == rate and p["station"]["window"] == window \
                and p.get("replication", 0) == replication:
            return p
    if given:
        raise SystemExit(f"--plan has no entry for {rate} bit/s, window {window}, "
                         f"replication {replication}")
    cmd = plan_command(args) + ["--rate", str(rate), "--window", str(window),
                                "--replication", str(replication)]
    out = subprocess.run(cmd, cwd=REPO, check=True, stdout=subprocess.PIPE).stdout
    return json.loads(out)


# --- pcap and AX.25 ----------------------------------------------------------

def read_pcap(path):
    """(time in s, frame octets) of every record; link type 3 expected."""
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack_from("<I", data, 0)[0]
    if magic == 0xA1B2C3D4:
        endian, scale = "<", 1e-6
    elif magic == 0xD4C3B2A1:
        endian, scale = ">", 1e-6
    elif magic == 0xA1B23C4D:
        endian, scale = "<", 1e-9
    elif magic == 0x4D3CB2A1:
        endian, scale = ">", 1e-9
    else:
        raise ValueError(f"{path}: not a pcap file")
    linktype = struct.unpack_from(endian + "I", data, 20)[0]
    if linktype != 3:
        raise ValueError(f"{path}: link type {linktype}, expected 3 (AX.25)")
    records, off = [], 24
    while off + 16 <= len(data):
        sec, frac, incl, _orig = struct.unpack_from(endian + "IIII", data, off)
        off += 16
        records.append((sec + frac * scale, data[off:off + incl]))
        off += incl
    return records


def callsign(field):
    call = bytes(b >> 1 for b in field[:6]).decode("ascii", "replace").strip()
    ssid = (field[6] >> 1) & 0x0F
    return f"{call}-{ssid}" if ssid else call


def parse_ax25(frame):
    """(source, destination, kind, ns, nr, pf) for a modulo-8 frame."""
    i = 0
    while i + 7 <= len(frame) and not frame[i + 6] & 1:
        i += 7
    ctl_at = i + 7
    if ctl_at >= len(frame):
        return None
    dest, src, c = callsign(frame[0:7]), callsign(frame[7:14]), frame[ctl_at]
    pf = (c >> 4) & 1
    if c & 1 == 0:
        return src, dest, "I", (c >> 1) & 7, (c >> 5) & 7, pf
    if c & 3 == 1:
        kind = {0: "RR", 1: "RNR", 2: "REJ", 3: "SREJ"}[(c >> 2) & 3]
        return src, dest, kind, None, (c >> 5) & 7, pf
    kind = {0x2F: "SABM", 0x63: "UA", 0x43: "DISC", 0x0F: "DM", 0x87: "FRMR",
            0x03: "UI", 0x6F: "SABME", 0xAF: "XID", 0xE3: "TEST"}.get(c & ~0x10, f"U{c:02x}")
    return src, dest, kind, None, None, pf


def emulated_span(records, message_octets, n1):
    """Seconds from the end of the receiver's UA to the end of the
    receiver's frame that acknowledged the last I frame, and a summary."""
    frames = [(t, parse_ax25(f)) for t, f in records]
    frames = [(t, p) for t, p in frames if p]
    ua = next((t for t, p in frames if p[0] == RECV_CALL and p[2] == "UA"), None)
    if ua is None:
        raise RuntimeError("no UA from the receiver in the capture")
    i_frames = (message_octets + n1 - 1) // n1
    seen, last_at, last_ns = 0, None, None
    end = None
    for t, p in frames:
        src, _dst, kind, ns, nr, _pf = p
        if src == SEND_CALL and kind == "I" and t > ua:
            seen += 1
            if seen == i_frames:
                last_at, last_ns = t, ns
        elif (last_at is not None and src == RECV_CALL and t > last_at
              and kind in ("RR", "RNR", "REJ", "I") and nr == (last_ns + 1) % 8):
            end = t
            break
    if end is None:
        raise RuntimeError(f"no acknowledgement of I frame {i_frames} in the capture "
                           f"({seen} I frames seen)")
    summary = {
        "i_frames_on_air": seen,
        "retransmissions": seen - i_frames,
        "receiver_frames": sum(1 for t, p in frames if p[0] == RECV_CALL and ua < t <= end),
        "ua_end_s": ua,
        "last_ack_end_s": end,
    }
    return end - ua, summary


# --- one run ---------------------------------------------------------------

def wait_for(path, text, proc, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                content = f.read()
        except FileNotFoundError:
            content = ""
        if text in content:
            return content
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args[0]} exited ({proc.returncode}) before "
                               f"printing {text!r}: {content}")
        time.sleep(0.02)
    raise RuntimeError(f"no {text!r} in {path} within {timeout} s")


def stop(proc, sig=signal.SIGINT, timeout=10):
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def run_one(args, plan, workdir):
    st = plan["station"]
    rate, window, n1 = st["bit_rate"], st["window"], st["n1"]
    message = simulator_message(plan)
    msg_path = os.path.join(workdir, "message.bin")
    with open(msg_path, "wb") as f:
        f.write(message)
    toml = os.path.join(workdir, "channel.toml")
    # The seed goes on the command line: TOML integers stop at 2^63 - 1.
    with open(toml, "w") as f:
        f.write(f"""# Ronan et al. Table I at {rate} bit/s, replication seed {plan['seed']}
seed = 0
bind = "127.0.0.1"

[defaults]
txdelay_ms = {st['txdelay_ms']:g}
persistence = {st['persistence']}
slot_ms = {st['slot_ms']:g}
txtail_ms = {st['txtail_ms']:g}

[[channel]]
name = "radio"
bitrate = {rate}

[[station]]
name = "s0"
port = 0

[[station]]
name = "s1"
port = 0
""")
    pcap = os.path.join(workdir, "air.pcap")
    stats = os.path.join(workdir, "stats.json")
    got = os.path.join(workdir, "got")
    files = {n: open(os.path.join(workdir, n), "w") for n in
             ("channel.out", "channel.err", "listen.out", "listen.err", "send.out", "send.err")}
    # Generous bound on the transfer: the simulated time plus slack.
    timeout = 3 * plan["simulated_s"] + 30
    # T1 = 600 s: T1V starts there, SRT = 300 s; adaptation shrinks SRT by
    # 1/8 per acknowledgement and clamps T1V to 60 s, far above any round
    # trip here, even at 1200 bit/s with window 1 (29 round trips).
    link = ["--window", str(window), "--n1", str(n1), "--t1-ms", "600000",
            "--t2-ms", "600000", "--ack-policy", "window"]
    channel = listen = send = None
    try:
        channel = subprocess.Popen(
            [args.linklab, "channel", toml, "--seed", str(plan["seed"]),
             "--capture", pcap, "--stats-json", stats],
            stdout=files["channel.out"], stderr=files["channel.err"])
        out = wait_for(os.path.join(workdir, "channel.out"), "channel ready", channel, 20)
        ports = {}
        for line in out.splitlines():
            if line.startswith("station ") and ": kiss tcp " in line:
                name, addr = line[len("station "):].split(": kiss tcp ")
                ports[name] = addr.strip()
        listen = subprocess.Popen(
            [args.linklab, "listen", "--kiss", f"tcp:{ports['s1']}", "--mycall", RECV_CALL,
             "--out", got, "--once"] + link,
            stdout=files["listen.out"], stderr=files["listen.err"])
        wait_for(os.path.join(workdir, "listen.err"), "listening on", listen, 20)
        send = subprocess.Popen(
            [args.linklab, "send", "--kiss", f"tcp:{ports['s0']}", "--mycall", SEND_CALL,
             "--to", RECV_CALL, "--poll-last"] + link + [msg_path],
            stdout=files["send.out"], stderr=files["send.err"])
        send_rc = send.wait(timeout)
        listen_rc = listen.wait(30)
    finally:
        for p in (send, listen):
            if p is not None:
                stop(p, signal.SIGTERM)
        if channel is not None:
            stop(channel)
        for f in files.values():
            f.close()
    if send_rc != 0 or listen_rc != 0:
        raise RuntimeError(f"send exited {send_rc}, listen {listen_rc}; see {workdir}")
    with open(got, "rb") as f:
        intact = f.read() == message
    span, summary = emulated_span(read_pcap(pcap), len(message), n1)
    with open(stats) as f:
        summary["lateness"] = json.load(f).get("lateness")
    summary["intact"] = intact
    return span, summary


def parse_list(text):
    out = []
    for part in text.split(","):
        if "-" in part:
            a, b = part.split("-")
            out.extend(range(int(a), int(b) + 1))
        elif part:
            out.append(int(part))
    return out


def run_row(args, rate, window, replication, given):
    """Runs one replication and prints its row."""
    plan = get_plan(args, rate, window, replication, given)
    if args.keep:
        workdir = os.path.join(args.keep, f"{rate}-k{window}-r{replication}")
        os.makedirs(workdir, exist_ok=True)
        span, summary = run_one(args, plan, workdir)
    else:
        with tempfile.TemporaryDirectory(prefix="emulate-ronan-") as workdir:
            span, summary = run_one(args, plan, workdir)
    sim, mean = plan["simulated_s"], plan["mean_s"]
    ratio = span / sim
    passed = abs(ratio - 1) <= TOLERANCE and summary["intact"]
    late = summary.get("lateness") or {}
    verdict = "ok" if passed else "FAIL"
    if not summary["intact"]:
        verdict += " (file damaged)"
    print(f"{rate:>5} {window:>2} {replication:>2} {mean:>8.3f} ± {plan['ci95_s']:<6.3f} "
          f"{sim:>13.3f} {span:>9.3f} {ratio:>8.4f} {span / mean:>8.4f} "
          f"{(span - sim) * 1e3:>+8.3f} "
          f"{str(late.get('p99_us')) + '/' + str(late.get('max_us')):>15}  {verdict}",
          flush=True)
    return {"rate": rate, "window": window, "seed": plan["seed"],
            "replication": plan.get("replication", replication),
            "mean_s": mean, "ci95_s": plan["ci95_s"], "simulated_s": sim,
            "emulated_s": span, "ratio_sim": ratio, "ratio_mean": span / mean,
            "pass": passed, **summary}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rates", default="9600", help="bit rates, e.g. 9600,1200")
    ap.add_argument("--windows", default="1-7", help="windows, e.g. 1-7 or 1,7")
    ap.add_argument("--linklab", default=os.path.join(REPO, "target", "release", "linklab"))
    ap.add_argument("--replication", default="0",
                    help="replication(s) of the plan, e.g. 0 or 0-4; with several, a mean "
                         "line per window compares the emulated mean with reproduce's")
    ap.add_argument("--plan", help="JSON file: the plan object(s) instead of running the example")
    ap.add_argument("--plan-cmd", help="command printing the plan (given --rate, --window, "
                                       "--replication)")
    ap.add_argument("--keep", help="keep each run's files under this directory")
    ap.add_argument("--json", help="write the rows as JSON to this file")
    args = ap.parse_args()

    given = []
    if args.plan:
        with open(args.plan) as f:
            loaded = json.load(f)
        given = loaded if isinstance(loaded, list) else [loaded]

    header = (f"{'rate':>5} {'k':>2} {'r':>2} {'reproduce mean':>17} {'same-seed sim':>13} "
              f"{'emulated':>9} {'emu/sim':>8} {'emu/mean':>8} {'diff ms':>8} "
              f"{'late p99/max us':>15}  verdict")
    print(header, flush=True)
    rows = []
    for rate in parse_list(args.rates):
        for window in parse_list(args.windows):
            group = [run_row(args, rate, window, replication, given)
                     for replication in parse_list(args.replication)]
            rows.extend(group)
            if len(group) > 1:
                emu = sum(r["emulated_s"] for r in group) / len(group)
                sim = sum(r["simulated_s"] for r in group) / len(group)
                mean = group[0]["mean_s"]
                print(f"{rate:>5} {window:>2}  * mean of {len(group)} replications: emulated "
                      f"{emu:.3f} s, simulated {sim:.3f} s, reproduce mean {mean:.3f} s "
                      f"(emulated/mean {emu / mean:.4f})", flush=True)
    ok = all(r["pass"] for r in rows)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    print(f"verdict: {'every row' if ok else 'NOT every row'} within "
          f"{TOLERANCE:.0%} of the same-seed simulation")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
