#!/usr/bin/env python3
"""Listen-only KISS TCP client: record what a KISS TCP port sends.

    kiss_tap.py HOST PORT OUT.kiss [--pcap OUT.pcap] [--times OUT.times]
                [--duration SECONDS] [--connect-timeout SECONDS]

Writes the raw byte stream to OUT.kiss (feed it to `linklab decode --format
kiss`), optionally a pcap file with link type 202 (AX.25 with KISS header,
one record per KISS frame, stamped at arrival) and a text file with one line
per KISS frame: seconds since the first frame, and the frame length.  Since
`linklab decode` prints exactly one line per KISS frame, `paste` joins the
two.  Never writes to the socket.  Stops at EOF, on SIGTERM/SIGINT, or after
--duration seconds.  Standard library only.
"""
import argparse
import signal
import socket
import struct
import sys
import time

FEND, FESC, TFEND, TFESC = 0xC0, 0xDB, 0xDC, 0xDD


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("host")
    ap.add_argument("port", type=int)
    ap.add_argument("out")
    ap.add_argument("--pcap")
    ap.add_argument("--times")
    ap.add_argument("--duration", type=float, default=3600.0)
    ap.add_argument("--connect-timeout", type=float, default=10.0)
    a = ap.parse_args()

    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))

    deadline = time.monotonic() + a.connect_timeout
    while True:
        try:
            s = socket.create_connection((a.host, a.port), timeout=1.0)
            break
        except OSError:
            if time.monotonic() > deadline or stop:
                print(f"kiss_tap: cannot connect to {a.host}:{a.port}", file=sys.stderr)
                return 1
            time.sleep(0.1)
    s.settimeout(0.2)
    end = time.monotonic() + a.duration

    raw = open(a.out, "wb")
    pcap = open(a.pcap, "wb") if a.pcap else None
    times = open(a.times, "w") if a.times else None
    if pcap:
        # magic, v2.4, thiszone, sigfigs, snaplen, linktype 202
        pcap.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 202))
    frame, in_frame, esc, t0 = bytearray(), False, False, None

    def emit(body):
        nonlocal t0
        now = time.time()
        if t0 is None:
            t0 = now
        if times:
            times.write(f"{now - t0:9.3f} {len(body):4d}\n")
            times.flush()
        if pcap:
            sec = int(now)
            pcap.write(struct.pack("<IIII", sec, int((now - sec) * 1e6), len(body), len(body)))
            pcap.write(body)
            pcap.flush()

    while not stop and time.monotonic() < end:
        try:
            data = s.recv(65536)
        except socket.timeout:
            continue
        except OSError:
            break
        if not data:
            break
        raw.write(data)
        raw.flush()
        for b in data:
            if b == FEND:
                if in_frame and frame:
                    emit(bytes(frame))
                frame, in_frame, esc = bytearray(), True, False
            elif not in_frame:
                continue
            elif esc:
                frame.append({TFEND: FEND, TFESC: FESC}.get(b, b))
                esc = False
            elif b == FESC:
                esc = True
            else:
                frame.append(b)
    s.close()
    for f in (raw, pcap, times):
        if f:
            f.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
