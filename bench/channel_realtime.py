#!/usr/bin/env python3
"""How well `linklab channel` keeps to the wall clock under load.

Starts `linklab channel --stations N --bitrate B --base-port 0
--stats-json FILE` (the command line's KISS defaults: TXDELAY 300 ms,
P 63, slot 100 ms, TXTAIL 100 ms unless given), connects one client to
every station and keeps each station's transmit queue full for the whole
run: every client holds up to QUEUE frames in flight (sent to its station
but not yet heard on the air by any other client) and sends the next
QUEUE as soon as the last of them is heard (in its station's TXTAIL, so
they wait for the next channel access and every station contends). Frames are KISS data frames carrying an AX.25 UI frame
(a valid header, PID F0) with 100-250 octets of information, the first
eight a sequence number. Every client reads everything delivered to its
station and checks nothing is lost or dropped for it.

At the end (SIGINT) the channel writes its statistics; this script prints
the lateness of every delivery against its model time (the wall-clock
time the frame was handed to the client's queue minus the model time of
the delivery: p50, p99, max), the server's CPU use (utime + stime from
/proc/PID/stat over the wall time of the loaded run, in % of one core),
the channel's utilisation, frames and deliveries, and the load generator's
own CPU for comparison (it runs on the same machine, not in the figure).

    bench/channel_realtime.py [--linklab target/release/linklab]
        [--stations 16] [--bitrate 9600] [--seconds 60] [--queue 4]
        [--json FILE] [-- extra linklab channel options]
"""

import argparse
import json
import os
import random
import resource
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FEND, FESC, TFEND, TFESC = 0xC0, 0xDB, 0xDC, 0xDD
CLK_TCK = os.sysconf("SC_CLK_TCK")


def kiss_escape(data):
    return (data.replace(bytes([FESC]), bytes([FESC, TFESC]))
            .replace(bytes([FEND]), bytes([FESC, TFEND])))


def kiss_frame(ax25):
    return bytes([FEND, 0x00]) + kiss_escape(ax25) + bytes([FEND])


def address(call, ssid, last, command):
    field = bytes((c << 1) for c in call.ljust(6).encode("ascii"))
    ssid_octet = 0x60 | (ssid << 1) | (0x80 if command else 0) | (1 if last else 0)
    return field + bytes([ssid_octet])


def ui_frame(station, seq, info_len):
    """A UI command from RT<station> to BEACON: 16 octets of header."""
    header = (address("BEACON", 0, False, True) + address(f"RT{station}", 0, True, False)
              + bytes([0x03, 0xF0]))
    body = struct.pack(">HIH", station, seq, info_len)
    info = body + bytes((seq + i) & 0xFF for i in range(info_len - len(body)))
    return header + info


class Deframer:
    def __init__(self):
        self.buf = bytearray()
        self.esc = False
        self.inside = False

    def feed(self, data):
        frames = []
        for b in data:
            if b == FEND:
                if self.buf:
                    frames.append(bytes(self.buf))
                self.buf = bytearray()
                self.esc = False
                continue
            if self.esc:
                self.buf.append(FEND if b == TFEND else FESC if b == TFESC else b)
                self.esc = False
            elif b == FESC:
                self.esc = True
            else:
                self.buf.append(b)
        return frames


class Shared:
    def __init__(self, n):
        self.lock = threading.Lock()
        self.cond = threading.Condition(self.lock)
        self.heard = [-1] * n          # highest sequence of station i heard on the air
        self.received = [0] * n        # frames delivered to station i's client
        self.bad = 0
        self.stop = False


def reader(i, sock, shared):
    deframer = Deframer()
    while True:
        try:
            data = sock.recv(65536)
        except OSError:
            break
        if not data:
            break
        for frame in deframer.feed(data):
            if len(frame) < 2 or frame[0] & 0x0F != 0:
                continue
            ax25 = frame[1:]
            if len(ax25) < 16 + 8 or ax25[14:16] != b"\x03\xf0":
                with shared.lock:
                    shared.bad += 1
                continue
            src, seq, info_len = struct.unpack_from(">HIH", ax25, 16)
            with shared.cond:
                shared.received[i] += 1
                if len(ax25) != 16 + info_len:
                    shared.bad += 1
                if seq > shared.heard[src]:
                    shared.heard[src] = seq
                    shared.cond.notify_all()


def writer(i, sock, shared, queue, rng, continuous):
    seq = 0
    while True:
        with shared.cond:
            # batch: refill once every frame in flight has been heard;
            # continuous: top up as soon as any one has.
            limit = queue if continuous else 1
            while not shared.stop and seq - 1 - shared.heard[i] >= limit:
                shared.cond.wait(0.5)
            if shared.stop:
                return
            burst = queue - (seq - 1 - shared.heard[i])
        data = b"".join(kiss_frame(ui_frame(i, seq + k, rng.randint(100, 250)))
                        for k in range(burst))
        try:
            sock.sendall(data)
        except OSError:
            return
        seq += burst


def proc_cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # fields[0] is field 3 (state): utime is field 14, stime field 15.
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--linklab", default=os.path.join(REPO, "target", "release", "linklab"))
    ap.add_argument("--stations", type=int, default=16)
    ap.add_argument("--bitrate", type=int, default=9600)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--queue", type=int, default=4, help="frames each client keeps in flight")
    ap.add_argument("--refill", choices=["batch", "continuous"], default="batch",
                    help="batch (default): a client sends its next QUEUE frames once all "
                         "its frames in flight were heard, i.e. during its own TXTAIL, so "
                         "they wait for the next channel access; continuous: it tops up "
                         "at once, and as frames queued while a station is keyed join its "
                         "transmission, the first station to key up keeps the channel")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", help="write the results as JSON to this file")
    ap.add_argument("extra", nargs="*", help="more `linklab channel` options (after --)")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="channel-realtime-") as tmp:
        stats_path = os.path.join(tmp, "stats.json")
        out_path = os.path.join(tmp, "channel.out")
        with open(out_path, "w") as out, open(os.path.join(tmp, "channel.err"), "w") as err:
            channel = subprocess.Popen(
                [args.linklab, "channel", "--stations", str(args.stations),
                 "--bitrate", str(args.bitrate), "--base-port", "0", "--bind", "127.0.0.1",
                 "--seed", str(args.seed), "--stats-json", stats_path] + args.extra,
                stdout=out, stderr=err)
        try:
            deadline = time.monotonic() + 20
            text = ""
            while "channel ready" not in text:
                if channel.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"the channel did not start: {text}")
                time.sleep(0.02)
                with open(out_path) as f:
                    text = f.read()
            ports = []
            for line in text.splitlines():
                if line.startswith("station ") and ": kiss tcp " in line:
                    ports.append(line.split(": kiss tcp ")[1].strip())
            shared = Shared(len(ports))
            socks, threads = [], []
            for i, addr in enumerate(ports):
                host, port = addr.rsplit(":", 1)
                s = socket.create_connection((host, int(port)))
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                socks.append(s)
                threads.append(threading.Thread(target=reader, args=(i, s, shared), daemon=True))
            for t in threads:
                t.start()
            time.sleep(0.5)  # every client attached before the load starts
            writers = [threading.Thread(target=writer,
                                        args=(i, s, shared, args.queue, random.Random(i),
                                              args.refill == "continuous"),
                                        daemon=True) for i, s in enumerate(socks)]
            own0 = resource.getrusage(resource.RUSAGE_SELF)
            cpu0, wall0 = proc_cpu_s(channel.pid), time.monotonic()
            for t in writers:
                t.start()
            time.sleep(args.seconds)
            cpu1, wall1 = proc_cpu_s(channel.pid), time.monotonic()
            own1 = resource.getrusage(resource.RUSAGE_SELF)
            with shared.cond:
                shared.stop = True
                shared.cond.notify_all()
            for t in writers:
                t.join(2)
            channel.send_signal(signal.SIGINT)
            channel.wait(20)
        finally:
            if channel.poll() is None:
                channel.kill()
                channel.wait()
        for s in socks:
            s.close()
        with open(stats_path) as f:
            stats = json.load(f)

    wall = wall1 - wall0
    server_cpu = (cpu1 - cpu0) / wall
    own_cpu = ((own1.ru_utime - own0.ru_utime) + (own1.ru_stime - own0.ru_stime)) / wall
    late = stats.get("lateness") or {}
    ch = stats["channels"][0]
    dropped = sum(s.get("dropped_slow_client", 0) + s.get("dropped_no_client", 0)
                  for s in stats["stations"])
    lost = sum(s.get("lost_to_collisions", 0) + s.get("lost_to_errors", 0)
               + s.get("lost_while_transmitting", 0) for s in stats["stations"])
    delivered = sum(s.get("delivered", 0) for s in stats["stations"])
    result = {
        "stations": args.stations, "bitrate": args.bitrate, "seconds": round(wall, 1),
        "queue": args.queue, "refill": args.refill, "lateness": late,
        "server_cpu_pct_of_one_core": round(100 * server_cpu, 2),
        "load_generator_cpu_pct": round(100 * own_cpu, 2),
        "utilisation": ch.get("utilisation"), "transmissions": ch.get("transmissions"),
        "collisions": ch.get("collisions"), "frames_on_air": ch.get("frames_sent"),
        "deliveries": delivered, "client_reads": sum(shared.received),
        "lost_on_air": lost, "dropped_for_clients": dropped, "bad_frames_read": shared.bad,
        "load_average": os.getloadavg(),
    }
    ok_p99 = late.get("p99_us", 1e9) < 1000
    ok_max = late.get("max_us", 1e9) < 5000
    ok_cpu = server_cpu < 0.05
    rows = [
        ("stations / bit rate / run", f"{args.stations} / {args.bitrate} bit/s / {wall:.1f} s"),
        ("channel utilisation", f"{ch.get('utilisation', 0):.3f}"),
        ("transmissions / collisions", f"{ch.get('transmissions')} / {ch.get('collisions')}"),
        ("frames on the air / deliveries", f"{ch.get('frames_sent')} / {delivered} "
                                           f"(read by clients: {sum(shared.received)})"),
        ("lost on the air / dropped for clients", f"{lost} / {dropped}"),
        ("lateness p50", f"{late.get('p50_us')} us"),
        ("lateness p99", f"{late.get('p99_us')} us  (goal < 1000: {'met' if ok_p99 else 'MISSED'})"),
        ("lateness max", f"{late.get('max_us')} us  (goal < 5000: {'met' if ok_max else 'MISSED'})"),
        ("server CPU", f"{100 * server_cpu:.2f} % of one core  "
                       f"(goal < 5 %: {'met' if ok_cpu else 'MISSED'})"),
        ("load generator CPU (not counted)", f"{100 * own_cpu:.2f} % of one core"),
        ("load average at the end", " ".join(f"{x:.2f}" for x in os.getloadavg())),
    ]
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"{k:<{width}}  {v}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
