#!/usr/bin/env python3
"""Minimal AGWPE-protocol client for Dire Wolf's AGW port (connected mode).

    agw_client.py listen  --port 8020 --call N0CALL-2 --out FILE [--echo]
                          [--expect BYTES] [--timeout S] [--monitor FILE] [--raw FILE]
    agw_client.py connect --port 8010 --call N0CALL-1 --to N0CALL-2 --send FILE
                          [--paclen 256] [--expect-echo FILE] [--timeout S]
                          [--poll-s 1.0] [--monitor FILE] [--raw FILE]

Every AGWPE message is a 36-octet header followed by DataLen octets:

    offset size  field
    0      1     Port (radio channel, 0 = first)
    1      3     reserved (0)
    4      1     DataKind (an ASCII letter)
    5      1     reserved (0)
    6      1     PID (0xF0 for connected data)
    7      1     reserved (0)
    8      10    CallFrom, ASCII, NUL padded
    18     10    CallTo, ASCII, NUL padded
    28     4     DataLen, little endian
    32     4     User (reserved, 0)

Kinds used here (client -> Dire Wolf): 'X' register CallFrom (reply 'X' with
one data octet, 1 = ok); 'C' connect CallFrom -> CallTo; 'D' connected data;
'd' disconnect; 'Y' frames outstanding for CallFrom/CallTo (reply 'Y', a
4-octet little-endian count); 'm' monitor on/off; 'k' raw frames on/off.
(Dire Wolf -> client): 'C' connection up (data "*** CONNECTED With ..." or
"*** CONNECTED To ..."), 'D' data, 'd' disconnected ("*** DISCONNECTED
From ..."), 'I'/'S'/'U' received frames and 'T' own transmitted frames in
monitor text (after 'm'), 'K' received frames raw (after 'k'; data = one KISS
type octet, then the AX.25 frame without FCS).

--monitor FILE writes the monitor text, one line per frame, stamped with the
wall clock (HH:MM:SS.mmm, so that two files merge with `sort`) and --tag;
--raw FILE writes the 'K' frames as a KISS byte stream for `linklab decode`.
listen: registers --call, accepts the first incoming connection, writes its
data to --out (and, with --echo, sends it back), exits 0 when the peer
disconnects (or when --expect bytes have arrived and the link then drops).
connect: registers --call, connects to --to, sends --send in --paclen pieces,
waits until Dire Wolf reports no frame outstanding (asked every --poll-s
seconds; and, with --expect-echo, until the echo has arrived), disconnects
and exits 0; it prints the time from the connect request to that answer
("acknowledged N s after the connect request").  Both print a line per
event with a timestamp on stdout and exit 1 on timeout.  Standard library only.
"""
import argparse
import socket
import struct
import sys
import time

HDR = struct.Struct("<B3xcxBx10s10sII")
T0 = time.monotonic()


def ts():
    return f"{time.monotonic() - T0:8.3f}"


def text(data):
    return data.split(b"\0")[0].decode("latin-1").strip()


def log(*a):
    print(ts(), *a, flush=True)


class Agw:
    def __init__(self, host, port, timeout, lull=0.5):
        deadline = time.monotonic() + 10
        while True:
            try:
                self.s = socket.create_connection((host, port), timeout=2)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        self.s.settimeout(lull)
        self.buf = b""
        self.mon = None
        self.raw = None
        self.tag = ""

    def send(self, kind, call_from=b"", call_to=b"", data=b"", pid=0xF0, port=0):
        h = HDR.pack(port, kind.encode(), pid, call_from.encode() if isinstance(call_from, str) else call_from,
                     call_to.encode() if isinstance(call_to, str) else call_to, len(data), 0)
        self.s.sendall(h + data)

    def recv(self):
        """One message (kind, from, to, data), or None after a lull (0.5 s, or --poll-s if shorter)."""
        while len(self.buf) < HDR.size or len(self.buf) < HDR.size + HDR.unpack_from(self.buf)[5]:
            try:
                chunk = self.s.recv(65536)
            except socket.timeout:
                return None
            if not chunk:
                raise EOFError("AGW server closed the connection")
            self.buf += chunk
        port, kind, pid, cf, ct, n, _ = HDR.unpack_from(self.buf)
        data = self.buf[HDR.size:HDR.size + n]
        self.buf = self.buf[HDR.size + n:]
        kind = kind.decode("latin-1")
        cf = cf.split(b"\0")[0].decode("latin-1")
        ct = ct.split(b"\0")[0].decode("latin-1")
        if kind in "ISUT" and self.mon:
            # first line only: the frame summary, not the (binary) payload
            text = data.split(b"\0")[0].split(b"\r")[0].decode("latin-1").strip()
            now = time.time()
            stamp = time.strftime("%H:%M:%S", time.localtime(now)) + f".{int(now % 1 * 1000):03d}"
            self.mon.write(f"{stamp} {self.tag}{kind} {text}\n")
            self.mon.flush()
        if kind == "K" and self.raw:
            frame = bytes(data)  # type octet + AX.25 frame
            esc = frame.replace(b"\xdb", b"\xdb\xdd").replace(b"\xc0", b"\xdb\xdc")
            self.raw.write(b"\xc0" + esc + b"\xc0")
            self.raw.flush()
        return kind, cf, ct, data


def setup(a):
    agw = Agw(a.host, a.port, a.timeout, min(0.5, a.poll_s))
    if a.monitor:
        agw.mon = open(a.monitor, "w")
        agw.tag = a.tag + " " if a.tag else ""
        agw.send("m")
    if a.raw:
        agw.raw = open(a.raw, "wb")
        agw.send("k")
    agw.send("X", a.call)
    end = time.monotonic() + 5
    while time.monotonic() < end:
        m = agw.recv()
        if m and m[0] == "X":
            ok = m[3][:1] == b"\x01"
            log(f"register {a.call}: {'ok' if ok else 'REFUSED'}")
            if not ok:
                sys.exit(1)
            return agw
    log("no reply to 'X' register")
    sys.exit(1)


def listen(a):
    agw = setup(a)
    out = open(a.out, "wb")
    got, peer, t_conn = 0, None, None
    end = time.monotonic() + a.timeout
    while time.monotonic() < end:
        m = agw.recv()
        if not m:
            continue
        kind, cf, ct, data = m
        if kind == "C":
            peer, t_conn = cf, time.monotonic()
            log(f"connected: {text(data)} (from {cf} to {ct})")
        elif kind == "D":
            out.write(data)
            out.flush()
            got += len(data)
            if a.echo and peer:
                agw.send("D", a.call, peer, data)
            if a.verbose:
                log(f"data {len(data)} octets, total {got}")
        elif kind == "d":
            dt = time.monotonic() - t_conn if t_conn else 0
            log(f"disconnected: {text(data)}; "
                f"received {got} octets in {dt:.2f} s")
            ok = not a.expect or got >= a.expect
            sys.exit(0 if ok else 1)
    log(f"timeout; received {got} octets")
    sys.exit(1)


def outstanding(agw, a):
    agw.send("Y", a.call, a.to)
    end = time.monotonic() + 5
    while time.monotonic() < end:
        m = agw.recv()
        if m and m[0] == "Y":
            return struct.unpack("<I", m[3][:4])[0]
        if m and m[0] == "d":
            return -1
    return None


def connect(a):
    agw = setup(a)
    payload = open(a.send, "rb").read()
    echo_want = open(a.expect_echo, "rb").read() if a.expect_echo else None
    echo = bytearray()
    end = time.monotonic() + a.timeout
    t_start = time.monotonic()
    agw.send("C", a.call, a.to)
    log(f"connect {a.call} -> {a.to}")
    while True:
        if time.monotonic() > end:
            log("timeout waiting for the connection")
            sys.exit(1)
        m = agw.recv()
        if not m:
            continue
        if m[0] == "C":
            log(f"connected: {text(m[3])}")
            break
        if m[0] == "d":
            log(f"connect failed: {text(m[3])}")
            sys.exit(1)
    t_conn = time.monotonic()
    for i in range(0, len(payload), a.paclen):
        agw.send("D", a.call, a.to, payload[i:i + a.paclen])
    log(f"queued {len(payload)} octets in {-(-len(payload) // a.paclen)} 'D' messages")
    last_poll = 0
    while True:
        if time.monotonic() > end:
            log(f"timeout; echo {len(echo)} octets")
            sys.exit(1)
        m = agw.recv()
        if m and m[0] == "D":
            echo += m[3]
        elif m and m[0] == "d":
            log(f"peer disconnected: {text(m[3])}")
            sys.exit(1)
        if time.monotonic() - last_poll > a.poll_s:
            last_poll = time.monotonic()
            n = outstanding(agw, a)
            if n == 0 and (echo_want is None or len(echo) >= len(echo_want)):
                break
    t_done = time.monotonic()
    log(f"all {len(payload)} octets acknowledged {t_done - t_conn:.2f} s after connect "
        f"({len(payload) * 8 / (t_done - t_conn):.0f} bit/s)")
    log(f"acknowledged {t_done - t_start:.3f} s after the connect request")
    if echo_want is not None:
        if bytes(echo[:len(echo_want)]) != echo_want:
            log("echo DIFFERS")
            sys.exit(1)
        log(f"echo of {len(echo_want)} octets matches")
    agw.send("d", a.call, a.to)
    while time.monotonic() < end:
        m = agw.recv()
        if m and m[0] == "d":
            log(f"disconnected: {text(m[3])}; "
                f"total {time.monotonic() - t_start:.2f} s")
            sys.exit(0)
    log("timeout waiting for the disconnection")
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=["listen", "connect"])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--call", required=True)
    ap.add_argument("--to")
    ap.add_argument("--send")
    ap.add_argument("--out")
    ap.add_argument("--echo", action="store_true")
    ap.add_argument("--expect", type=int, default=0)
    ap.add_argument("--expect-echo")
    ap.add_argument("--paclen", type=int, default=256)
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--poll-s", type=float, default=1.0,
                    help="connect: ask for the frames outstanding this often (seconds)")
    ap.add_argument("--monitor")
    ap.add_argument("--raw")
    ap.add_argument("--tag", default="", help="prefix for monitor lines (e.g. A or B)")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    if a.mode == "listen":
        if not a.out:
            ap.error("listen needs --out")
        listen(a)
    else:
        if not (a.to and a.send):
            ap.error("connect needs --to and --send")
        connect(a)


if __name__ == "__main__":
    main()
