#!/usr/bin/env python3
"""Results of bench/direwolf_engine.sh: one CSV row per run, and the tables.

    direwolf_engine_report.py frame-time --baud B --mod 8|128 --info N
    direwolf_engine_report.py run RUNDIR        # one CSV row (with header)
    direwolf_engine_report.py table OUTDIR      # results.csv, results.md
    direwolf_engine_report.py emulation OUTDIR LINKLAB   # emulation.csv, .md

The emulation check (issue 29, item 5) compares each run at window k with
`linklab sim` of kind "ronan-transfer" (two engines on the simulated
half-duplex channel, the engine as the TNC) set to the modems' timing:
TXDELAY, TXTAIL 100 ms, SLOTTIME 100 ms, PERSIST 63, N1 256, the same
message, and Dire Wolf's channel access (slot_clock = "after-clear": a
whole SLOTTIME after the carrier drops or the frame is queued before each
persistence draw, DCD looked at every 10 ms).  The simulator times from the moment the message is offered (the
link up) to the end of the receiver's transmission carrying the last
acknowledgement; the real run is timed from linklab's first I frame to its
DISC (the last RR heard), which leaves out that transmission's TXTAIL.
What the relay saw (bursts.txt) gives the real turnaround: from the end
of one side's transmission to the first audio of the other's answer.

The airtime bound of a transfer of S octets with information fields of
N1 = 256 octets and window k, at bit rate R (no loss, no connection set-up
or release counted):

    I frames           n = ceil(S / N1); the last one carries the rest
    frame time         t(L) = (L x 8 x (1 + 1/62) + 16) / R  for a frame
                       of L octets between its flags: 14 (two addresses)
                       + 1 (modulo 8) or 2 (modulo 128) control + 1 PID
                       + info + 2 FCS; 1/62 is the expected bit stuffing
                       of random bits (one 0 after five 1s), and 16 the
                       two flags Dire Wolf sends around every frame
    windows            w = ceil(n / k), each one transmission:
                       TXDELAY + the air time of its I frames
    acknowledgements   one per window, its own transmission:
                       TXDELAY + t(RR), RR being 14 + control + 2 octets
    bound              = sum of the windows + w x (TXDELAY + t(RR))

k is the sender's window: linklab's --window; Dire Wolf's MAXFRAME 4 at
modulo 8 and EMAXFRAME 32 at modulo 128 (XID settles on the smaller of the
two windows offered; both offer their own here).  TXTAIL, channel-access
waits (PERSIST, SLOTTIME) and turnaround are not in the bound: they are
what the real link spends on top of it.

Frames: a Dire Wolf log prints each frame its modem transmits
("[0L] FROM>TO:(KIND cmd|res, ...)") and each frame it decodes
("[0.n] ..."); what the other modem decoded is also read from the KISS
tap on its port (decoded by `linklab decode`).  Measured loss, per
direction: 1 - frames decoded by the receiving modem's tap / frames the
sending modem's log shows transmitted.  Polls: supervisory commands with
P = 1, which both stacks send when T1 expires (with --poll-last, linklab's
window-end polls ride on I frames, counted as I+P).
"""
import csv
import glob
import os
import re
import sys

N1 = 256
TXDELAY_S = {9600: 0.100, 1200: 0.200}  # interop/direwolf-lib.sh's TXDELAY
STUFF = 1 + 1 / 62


def frame_time(baud, octets):
    return (octets * 8 * STUFF + 16) / baud


def bound(size, baud, mod, k):
    ctl = 1 if mod == 8 else 2
    n = -(-size // N1)
    sizes = [N1] * (n - 1) + [size - N1 * (n - 1)]
    t, w = 0.0, 0
    for i in range(0, n, k):
        w += 1
        t += TXDELAY_S[baud] + sum(frame_time(baud, 14 + ctl + 1 + s + 2) for s in sizes[i:i + k])
    t += w * (TXDELAY_S[baud] + frame_time(baud, 14 + ctl + 2))
    return t


def params(run):
    p = {}
    for line in open(os.path.join(run, "params")):
        if "=" in line:
            k, v = line.rstrip("\n").split("=", 1)
            p[k] = v
    return p


DW_TX = re.compile(r"^\[\d+[LH]\] [^:]*:\((\w+) (cmd|res)")
DW_RX = re.compile(r"^\[\d+(\.\d+)?\] [^:]*:\((\w+) (cmd|res)")
LL = re.compile(r"^(TX|RX)\s+([\d.]+) [^:]*: <(\w+) ([CR])?( [PF])?")


def count_kinds(frames):
    """frames: list of (kind, cmd, poll) -> dict of counts."""
    c = {"frames": len(frames), "I": 0, "RR": 0, "RNR": 0, "REJ": 0, "SREJ": 0, "Ipoll": 0, "polls": 0,
         "other": 0}
    for kind, cmd, poll in frames:
        if kind in c:
            c[kind] += 1
        else:
            c["other"] += 1
        if poll and cmd and kind == "I":
            c["Ipoll"] += 1
        elif poll and cmd and kind in ("RR", "RNR", "REJ", "SREJ"):
            c["polls"] += 1
    return c


def dw_sent(log):
    out = []
    if not os.path.exists(log):
        return out
    for line in open(log, errors="replace"):
        m = DW_TX.match(line)
        if m:
            # "(RR cmd, n(r)=0, p=1)", "(I cmd, n(s)=0, n(r)=0, p=1, pid=0xf0)"
            out.append((m.group(1), m.group(2) == "cmd", re.search(r", p=1[,)]", line) is not None))
    return out


def heard(txt):
    """Frames a modem passed to its KISS tap, as `linklab decode` shows them."""
    out = []
    if not os.path.exists(txt):
        return out
    for line in open(txt, errors="replace"):
        m = re.search(r": <(\w+)(?: ([CR]))?(?: ([PF]))?", line)
        if m:
            out.append((m.group(1), m.group(2) == "C", m.group(3) == "P"))
        elif line.strip():
            out.append(("undecodable", False, False))
    return out


def linklab_sent(log):
    out = []
    for line in open(log, errors="replace"):
        m = LL.match(line)
        if m and m.group(1) == "TX":
            out.append((m.group(3), m.group(4) == "C", (m.group(5) or "").strip() == "P"))
    return out


def run_time(run, p):
    log = os.path.join(run, "send.log")
    if not os.path.exists(log):
        return None
    text = open(log, errors="replace").read()
    if p["role"] == "ll-send":
        t0 = t1 = None
        for line in text.splitlines():
            m = LL.match(line)
            if not m or m.group(1) != "TX":
                continue
            if t0 is None and m.group(3) in ("SABM", "SABME"):
                t0 = float(m.group(2))
            if m.group(3) == "DISC":
                t1 = float(m.group(2))
                break
        return t1 - t0 if t0 is not None and t1 is not None else None
    m = re.search(r"acknowledged ([\d.]+) s after the connect request", text)
    return float(m.group(1)) if m else None


COLUMNS = ["name", "baud", "mod", "loss_set", "role", "sender", "receiver", "time_s", "exact", "ok", "k",
           "bound_s", "pct_of_bound", "loss_data_dir", "iloss_data_dir", "loss_ack_dir",
           "snd_I", "snd_Ipoll", "snd_polls", "snd_RR", "snd_REJ", "snd_SREJ", "snd_other",
           "rcv_I", "rcv_RR", "rcv_RNR", "rcv_REJ", "rcv_SREJ", "rcv_polls", "rcv_other",
           "sent_A", "heard_B", "sent_B", "heard_A", "modulo_seen", "linklab_opts", "relay", "seed"]


def row(run):
    p = params(run)
    baud, mod, size = int(p["baud"]), int(p["mod"]), int(p["size"])
    role = p["role"]
    # who sends the data, on which modem
    snd_modem, rcv_modem = ("A", "B") if role in ("ll-send", "dw-send") else ("B", "A")
    sender = {"ll-send": "linklab", "dw-send": "direwolf-A", "ll-recv": "direwolf-B",
              "dw-recv": "direwolf-B"}[role]
    receiver = {"ll-send": "direwolf-B", "dw-send": "direwolf-B", "ll-recv": "linklab",
                "dw-recv": "direwolf-A"}[role]
    sent = {n: dw_sent(os.path.join(run, f"{n}.log")) for n in "AB"}
    hrd = {n: heard(os.path.join(run, f"{n}.heard.txt")) for n in "AB"}
    # linklab's own frames: its monitor (exact whatever the modulo)
    ll_log = os.path.join(run, "send.log" if role == "ll-send" else "recv.log")
    kinds = {n: count_kinds(sent[n]) for n in "AB"}
    if role.startswith("ll-") and os.path.exists(ll_log):
        kinds["A"] = count_kinds(linklab_sent(ll_log))
    t = run_time(run, p)
    exact = p.get("exact") == "yes"
    ok = exact and p.get("rc_send") == "0" and p.get("rc_recv") == "0" and t is not None
    if role == "ll-send":
        m = re.search(r"--window (\d+)", p["linklab_opts"])
        k = int(m.group(1)) if m else (4 if mod == 8 else 32)
    else:
        k = 4 if mod == 8 else 32
    if mod == 128:
        k = min(k, 32)
    b = bound(size, baud, mod, k)

    def loss(frm, to, kind=None):
        s = [f for f in sent[frm] if kind is None or f[0] == kind]
        h = [f for f in hrd[to] if kind is None or f[0] == kind]
        return f"{1 - len(h) / len(s):.3f}" if s else ""

    seen = "".join(sorted({k for k, _, _ in sent["A"] + sent["B"] if k in ("SABM", "SABME")}))
    ks, kr = kinds[snd_modem], kinds[rcv_modem]
    return {
        "name": p["name"], "baud": baud, "mod": mod, "loss_set": p["loss"], "role": role,
        "sender": sender, "receiver": receiver,
        "time_s": f"{t:.2f}" if t is not None else "", "exact": "yes" if exact else "no",
        "ok": "yes" if ok else "no", "k": k, "bound_s": f"{b:.2f}",
        "pct_of_bound": f"{100 * b / t:.1f}" if t else "",
        # Dire Wolf's log does not say which frames of a modulo-128 link
        # are I frames when they came from a KISS client; the I-frame loss
        # is counted where the sender's log shows them.
        "loss_data_dir": loss(snd_modem, rcv_modem), "iloss_data_dir": loss(snd_modem, rcv_modem, "I"),
        "loss_ack_dir": loss(rcv_modem, snd_modem),
        "snd_I": ks["I"], "snd_Ipoll": ks["Ipoll"], "snd_polls": ks["polls"], "snd_RR": ks["RR"],
        "snd_REJ": ks["REJ"], "snd_SREJ": ks["SREJ"], "snd_other": ks["other"],
        "rcv_I": kr["I"], "rcv_RR": kr["RR"], "rcv_RNR": kr["RNR"], "rcv_REJ": kr["REJ"],
        "rcv_SREJ": kr["SREJ"], "rcv_polls": kr["polls"], "rcv_other": kr["other"],
        "sent_A": len(sent["A"]), "heard_B": len(hrd["B"]), "sent_B": len(sent["B"]),
        "heard_A": len(hrd["A"]), "modulo_seen": seen, "linklab_opts": p["linklab_opts"],
        "relay": p["relay"], "seed": p.get("seed", ""),
    }


def table(outdir):
    rows = []
    for f in sorted(glob.glob(os.path.join(outdir, "runs", "*", "result.csv"))):
        rows += list(csv.DictReader(open(f)))
    with open(os.path.join(outdir, "results.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, COLUMNS)
        w.writeheader()
        w.writerows(rows)
    # A cell's side: every run of it (--seeds), the first seed first.
    by = {}
    for r in sorted(rows, key=lambda r: (len(r["name"]), r["name"])):
        by.setdefault(re.sub(r"-s\d+$", "", r["name"]), []).append(r)
    cells = sorted({(int(r["baud"]), int(r["mod"]), int(r["loss_set"])) for r in rows},
                   key=lambda c: (-c[0], c[1], c[2]))
    md = []

    def t1(r):
        if r["ok"] != "yes":
            return f"FAILED{' ' + r['time_s'] + ' s' if r['time_s'] else ''}"
        return f"{float(r['time_s']):.1f} s"

    def median(rs):
        """The run of median time among those that completed (the lower
        middle one of an even count), or None."""
        ok = sorted((r for r in rs or [] if r["ok"] == "yes"), key=lambda r: float(r["time_s"]))
        return ok[(len(ok) - 1) // 2] if ok else None

    def t(rs):
        if not rs:
            return "not run"
        if len(rs) == 1:
            return t1(rs[0])
        m = median(rs)
        each = ", ".join(t1(r).removesuffix(" s") for r in rs)
        return f"{float(m['time_s']):.1f} s ({each})" if m else f"FAILED ({each})"

    def pct(r):
        return f"{r['pct_of_bound']}%" if r and r["ok"] == "yes" else "-"

    def loss(r):
        if not r or not r["iloss_data_dir"]:
            return "-"
        return f"{100 * float(r['iloss_data_dir']):.0f}% / {100 * float(r['loss_data_dir']):.0f}%"

    def frames(r):
        if not r:
            return "-"
        return (f"I {r['snd_I']} (P {r['snd_Ipoll']}), T1 polls {r['snd_polls']}; "
                f"RR {r['rcv_RR']} REJ {r['rcv_REJ']} SREJ {r['rcv_SREJ']}")

    for title, ll, dw in (("linklab sends (A to B's engine) against A's engine sending", "ll-send", "dw-send"),
                          ("linklab receives (from B's engine) against A's engine receiving", "ll-recv",
                           "dw-recv")):
        md += [f"### {title}", "",
               "| bit/s | modulo | loss set | linklab | Dire Wolf | ratio | linklab % of bound | "
               "Dire Wolf % of bound | bound (k) | I-frame / all-frame loss measured (linklab run; DW run) | "
               "frames, linklab run | frames, DW run |",
               "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for baud, mod, loss_set in cells:
            a_runs = by.get(f"{baud}-mod{mod}-loss{loss_set}-{ll}")
            d_runs = by.get(f"{baud}-mod{mod}-loss{loss_set}-{dw}")
            ta, td = t(a_runs), t(d_runs)
            # Loss, bound and frames of the median run (of the only one
            # without --seeds); a side with no completed run shows its first.
            a = median(a_runs) or (a_runs or [None])[0]
            d = median(d_runs) or (d_runs or [None])[0]
            ratio = "-"
            if a and d and a["ok"] == "yes" and d["ok"] == "yes":
                ratio = f"{float(a['time_s']) / float(d['time_s']):.2f}"
            bnd = "; ".join(f"{float(r['bound_s']):.1f} s (k {r['k']})" for r in (a, d) if r)
            md.append(f"| {baud} | {mod} | {loss_set}% | {ta} | {td} | {ratio} | {pct(a)} | {pct(d)} | "
                      f"{bnd} | {loss(a)}; {loss(d)} | {frames(a)} | {frames(d)} |")
        md.append("")
    md.append("ratio = linklab's time / Dire Wolf's engine's time (below 1: linklab faster); with "
              "several seeds, of the median runs, whose loss and frames are shown, every run's time "
              "in brackets. "
              "Frames: what the data's sender transmitted (I frames, of them with P, supervisory "
              "polls after T1) and what the receiver answered (RR, REJ, SREJ).")
    text = "\n".join(md) + "\n"
    open(os.path.join(outdir, "results.md"), "w").write(text)
    print(text)


TXTAIL_S = 0.100  # Dire Wolf's default TXTAIL 10
SLOT_S, PERSIST = 0.100, 63  # Dire Wolf's defaults SLOTTIME 10, PERSIST 63
CARRIER_POLL_S = 0.010  # Dire Wolf's transmit thread looks at DCD every 10 ms


def bursts(run):
    out = []
    f = os.path.join(run, "bursts.txt")
    if not os.path.exists(f):
        return out
    for line in open(f):
        w = line.split()
        if len(w) >= 9:
            out.append((w[0], float(w[2]), float(w[4]), float(w[6]), int(w[8])))
    return sorted(out, key=lambda b: b[1])


def turnaround(bs):
    """Mean gap (s) from the end of a transmission to the first audio of the
    other side's next one, by the direction of that next one, and count."""
    gaps = {"A->B": [], "B->A": []}
    for prev, cur in zip(bs, bs[1:]):
        if prev[0] != cur[0]:
            gaps[cur[0]].append(cur[1] - prev[3])
    return {d: (sum(g) / len(g) if g else float("nan"), len(g)) for d, g in gaps.items()}


def air_check(run, baud, direction):
    """Measured air time of one direction (relay chunks, 10 ms each) against
    the expected: per transmission TXDELAY + TXTAIL, plus every frame's
    t(L) (L from the receiving modem's KISS tap)."""
    bs = [b for b in bursts(run) if b[0] == direction]
    tap = os.path.join(run, ("B" if direction == "A->B" else "A") + ".times")
    lengths = [int(line.split()[1]) - 1 for line in open(tap)] if os.path.exists(tap) else []
    measured = sum(b[4] for b in bs) * 0.010
    expected = len(bs) * (TXDELAY_S[baud] + TXTAIL_S) + sum(frame_time(baud, n) for n in lengths)
    return measured, expected, len(bs), len(lengths)


def emulation(outdir, linklab):
    import json
    import subprocess
    runs = sorted((r for r in glob.glob(os.path.join(outdir, "runs", "9600-mod8-loss0-ll-send-w*"))
                   if os.path.isdir(r)), key=lambda r: int(r.rsplit("-w", 1)[1]))
    real = {}
    size = None
    for run in runs:
        p = params(run)
        size = int(p["size"])
        k = int(run.rsplit("-w", 1)[1])
        t_full = run_time(run, p)
        t_i = t_disc = None
        frames = []
        log = os.path.join(run, "send.log")
        for line in open(log, errors="replace") if os.path.exists(log) else []:
            m = LL.match(line)
            if m and m.group(1) == "TX":
                frames.append((m.group(3), m.group(4) == "C", (m.group(5) or "").strip() == "P"))
                if t_i is None and m.group(3) == "I":
                    t_i = float(m.group(2))
                if m.group(3) == "DISC" and t_disc is None:
                    t_disc = float(m.group(2))
        c = count_kinds(frames)
        ok = p.get("exact") == "yes" and t_i is not None and t_disc is not None
        real[k] = {"ok": ok, "full": t_full, "data": (t_disc - t_i) if ok else None, "I": c["I"],
                   "Ipoll": c["Ipoll"], "polls": c["polls"], "turn": turnaround(bursts(run)),
                   "air_ab": air_check(run, 9600, "A->B"), "air_ba": air_check(run, 9600, "B->A")}
    if not real:
        print("no emulation runs found", file=sys.stderr)
        return 1
    em = os.path.join(outdir, "emulation")
    os.makedirs(em, exist_ok=True)
    toml = os.path.join(em, "direwolf-9600.toml")
    with open(toml, "w") as f:
        f.write("# linklab sim of bench/direwolf_engine.sh --emulation: Dire Wolf's modem timing\n"
                'kind = "ronan-transfer"\nbit_rate_bps = 9600\n'
                f"window = [{', '.join(str(k) for k in sorted(real))}]\n"
                f"n1_octets = {N1}\nmessage_octets = {size}\n"
                f"slot_ms = {SLOT_S * 1000:.0f}\ntxdelay_ms = {TXDELAY_S[9600] * 1000:.0f}\n"
                f"txtail_ms = {TXTAIL_S * 1000:.0f}\npersistence = {PERSIST}\n"
                f'slot_clock = "after-clear"\ncarrier_poll_ms = {CARRIER_POLL_S * 1000:.0f}\n'
                "replications = 20\n")
    subprocess.run([linklab, "sim", toml, "--out", os.path.join(em, "sim")], check=True,
                   stdout=subprocess.DEVNULL)
    out = json.load(open(os.path.join(em, "sim", "output.json")))
    tab = out["tables"][0]
    col = {c: i for i, c in enumerate(tab["columns"])}
    sim = {r[col["window"]]: r for r in tab["rows"]}
    rows, md = [], [
        "| window | real, SABM to DISC | real, first I to DISC | sim | ci95 | real - sim | "
        "real I frames (P; T1 polls) | sim I frames / acks | real turnaround: B answers / A sends next | "
        "sim access wait | air time measured / expected, A to B; B to A |",
        "|---|---|---|---|---|---|---|---|---|---|---|"]
    for k in sorted(real):
        r, s = real[k], sim.get(k)
        if s is None:
            continue
        st = s[col["simulated_s"]]
        diff = f"{100 * (r['data'] - st) / st:+.1f}%" if r["ok"] else "-"
        tb, ta = r["turn"]["B->A"], r["turn"]["A->B"]
        ab, ba = r["air_ab"], r["air_ba"]
        rows.append({"window": k, "real_full_s": f"{r['full']:.2f}" if r["full"] else "",
                     "real_data_s": f"{r['data']:.2f}" if r["ok"] else "", "sim_s": st,
                     "sim_ci95_s": s[col["ci95_s"]], "diff_pct": diff.rstrip("%"),
                     "real_I": r["I"], "real_Ipoll": r["Ipoll"], "real_t1_polls": r["polls"],
                     "sim_I": s[col["i_frames"]], "sim_acks": s[col["acks"]],
                     "turn_B_ms": f"{1000 * tb[0]:.0f}", "turn_B_n": tb[1],
                     "turn_A_ms": f"{1000 * ta[0]:.0f}", "turn_A_n": ta[1],
                     "sim_access_wait_ms": s[col["access_wait_ms"]],
                     "air_ab_measured_s": f"{ab[0]:.2f}", "air_ab_expected_s": f"{ab[1]:.2f}",
                     "air_ab_tx": ab[2], "air_ba_measured_s": f"{ba[0]:.2f}",
                     "air_ba_expected_s": f"{ba[1]:.2f}", "air_ba_tx": ba[2]})
        md.append(f"| {k} | {r['full']:.1f} s | {r['data']:.1f} s | {st:.1f} s | {s[col['ci95_s']]:.1f} s | "
                  f"{diff} | {r['I']} ({r['Ipoll']}; {r['polls']}) | {s[col['i_frames']]:.0f} / "
                  f"{s[col['acks']]:.0f} | {1000 * tb[0]:.0f} ms ({tb[1]}) / {1000 * ta[0]:.0f} ms ({ta[1]}) | "
                  f"{s[col['access_wait_ms']]:.0f} ms | {ab[0]:.1f} / {ab[1]:.1f} s ({ab[2]} tx); "
                  f"{ba[0]:.1f} / {ba[1]:.1f} s ({ba[2]} tx) |" if r["ok"] else f"| {k} | FAILED |")
    with open(os.path.join(outdir, "emulation.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, list(rows[0].keys()) if rows else ["window"])
        w.writeheader()
        w.writerows(rows)
    text = "\n".join(md) + "\n"
    open(os.path.join(outdir, "emulation.md"), "w").write(text)
    print(text)
    return 0


def main():
    a = sys.argv[1:]
    if a[:1] == ["frame-time"]:
        o = dict(zip(a[1::2], a[2::2]))
        mod = int(o["--mod"])
        octets = 14 + (1 if mod == 8 else 2) + 1 + int(o["--info"]) + 2
        print(f"{frame_time(int(o['--baud']), octets):.4f}")
    elif a[:1] == ["run"] and len(a) == 2:
        w = csv.DictWriter(sys.stdout, COLUMNS)
        w.writeheader()
        w.writerow(row(a[1]))
    elif a[:1] == ["table"] and len(a) == 2:
        table(a[1])
    elif a[:1] == ["emulation"] and len(a) == 3:
        return emulation(a[1], a[2])
    else:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
