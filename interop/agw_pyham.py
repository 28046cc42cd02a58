#!/usr/bin/env python3
"""AGWPE scenario client built on an independent AGWPE library: pyham-pe
1.1.2 from PyPI (package `pe`, the engine of the Paracon terminal), pinned
and installed by interop/agw-pyham.sh.  Used against Dire Wolf's AGW port
and `linklab agw` alike.

    agw_pyham.py info     --agw HOST:PORT [--call CALL]
    agw_pyham.py accept   --agw HOST:PORT --call CALL --out FILE
                          [--expect BYTES] [--send FILE [--paclen 256]
                          [--max-outstanding 8]]
    agw_pyham.py call     --agw HOST:PORT --call CALL --to DEST [--via D1,D2]
                          --file FILE [--paclen 256] [--max-outstanding 8]
                          [--receive FILE] [--expect-back FILE]
    agw_pyham.py ui-send  --agw HOST:PORT --call CALL --to DEST [--via D1,..]
                          --count N [--gap S] [--text PREFIX]
    agw_pyham.py monitor  --agw HOST:PORT --seconds S --out FILE [--raw]
    agw_pyham.py ui-recv  --agw HOST:PORT --from CALL --count N [--out FILE]
                          [--text PREFIX]
    agw_pyham.py compare  DIR_A DIR_B [--names A,B]

Common options: --radio-port N (0), --timeout S (whole run), --trace FILE
(every AGWPE message each way, header fields and data in hex, JSON lines).

Every subcommand connects with pe.PacketEngine, which asks 'R', 'G' and 'g'
for every port before it reports ready, and prints one JSON object per
event on stdout ({"t": seconds since start (monotonic), "ev": ...}), then a
final summary line {"ev": "summary", "ok": ..., ...}.  Exit 0 on success,
1 on failure or timeout (the reason on stderr and in the summary's "error").

info     'R', 'G', 'g' of every port, 'H' and 'y' of --radio-port; with
         --call, 'X' register (either answer is a result) and 'x'
         unregister of CALL.
accept   registers CALL ('X', must be answered 1), waits for an incoming
         'C', writes every 'D' to FILE; with --send, sends FILE back paced
         by 'Y' as `call` does; ends when the caller's 'd' arrives
         (--expect: that many bytes must have come).
call     registers CALL, connects ('C', or 'v' with --via), waits for the
         'C' answer, sends FILE as 'D' messages of --paclen bytes, never
         while the outstanding count ('Y', asked continually, plus what
         was sent since) is >= --max-outstanding; then asks 'Y' until it
         is 0 (with --expect-back, also until that file's length came back,
         compared byte-exact; --receive writes what came back), sends 'd'
         and waits for the server's 'd'.
ui-send  N UI frames ('M', or 'V' with --via), PID F0, payloads
         "PREFIX 001".. (PREFIX "linklab ui"); monitoring on, so the
         server's 'T' records of them are counted; asks 'y' until 0.
monitor  'm' (and 'k' with --raw) for S seconds or until SIGTERM; every
         'I','S','U','T' record (header, text, data) and 'K' frame (hex)
         to FILE as JSON lines; the summary counts kinds and keeps one
         example text per kind, frame type and P/F bit.
ui-recv  'm', then waits for N 'U' records from CALL carrying
         "PREFIX 001".."PREFIX NNN" (any order, duplicates counted).
compare  reads the summaries (*.json) two harness runs wrote and prints the
         observable results side by side, then each difference (exit 0
         whatever the differences; 2 if a directory has no summaries).

pe's own defects met here are worked around in a subclass, not patched:
its receive thread spins forever once the server closes the socket (we
stop it and report "server_closed"), and its frame errors go only to the
`pe` logger (we record them as "pe_error" events, since a message pe
rejects -- wrong length, bad text -- is an interop finding).
"""
import argparse
import glob
import json
import logging
import os
import queue
import re
import signal
import sys
import threading
import time

T0 = time.monotonic()
_print_lock = threading.Lock()


def now():
    return round(time.monotonic() - T0, 3)


def emit(ev, **kw):
    rec = {"t": now(), "ev": ev}
    rec.update(kw)
    with _print_lock:
        print(json.dumps(rec), flush=True)


class Failure(Exception):
    pass


try:
    import pe
    from pe import PacketEngine, ReceiveHandler
except ImportError:  # compare needs no pe
    pe = None
    PacketEngine = object
    ReceiveHandler = object


class TracingEngine(PacketEngine):
    """PacketEngine with a trace of every message and an end-of-stream
    event. Only hooks pe's internal methods; behaviour is unchanged."""

    def __init__(self, handler, trace=None):
        self.trace = trace
        self.rx_kinds = {}
        super().__init__(handler)

    def _log(self, direction, header, data):
        if direction == "rx":
            self.rx_kinds[header.data_kind] = self.rx_kinds.get(header.data_kind, 0) + 1
        if self.trace:
            d = data.encode("utf-8") if isinstance(data, str) else bytes(data or b"")
            rec = {"t": now(), "dir": direction, "kind": header.data_kind,
                   "port": header.port, "pid": header.pid,
                   "from": header.call_from, "to": header.call_to,
                   "len": header.data_len, "data": d[:300].hex()}
            with _print_lock:
                self.trace.write(json.dumps(rec) + "\n")
                self.trace.flush()

    def _send_frame(self, header, data=None):
        self._log("tx", header, data)
        super()._send_frame(header, data)

    def _frame_received(self, header, data):
        self._log("rx", header, data)
        super()._frame_received(header, data)

    def _receive_data(self):
        try:
            super()._receive_data()
        except Exception as e:  # socket gone under us while closing
            err = str(e)
        else:
            err = None
        # pe's loop would call us again at once on a closed socket: stop it.
        if self._receiver:
            self._receiver.active = False
        h = self._client_handler
        if h is not None and hasattr(h, "post"):
            h.post("server_closed", error=err)


class PeErrors(logging.Handler):
    """pe reports malformed messages only through its logger."""

    def __init__(self, client):
        super().__init__(level=logging.WARNING)
        self.client = client

    def emit(self, record):
        self.client.post("pe_error", level=record.levelname, message=record.getMessage())


class Client(ReceiveHandler):
    def __init__(self, a):
        self.a = a
        self.q = queue.Queue()
        self.deadline = time.monotonic() + a.timeout
        self.summary = {"ev": "summary", "cmd": a.cmd, "agw": a.agw, "ok": False}
        self.pe_errors = []
        self.registered = {}
        self.version = None
        self.ports = None
        self.caps = {}
        self.heard = []
        self.y_port = None
        self.y_values = []     # 'Y' answers, in order
        self.y_answers = 0
        self.conn = None       # the 'C' message
        self.disc = None       # the 'd' message
        self.rx = bytearray()
        self.rx_first = None   # header of the first 'D'
        self.rx_count = 0
        self.mon = []          # monitor records (dicts)
        self.closed = False
        self.trace = open(a.trace, "w") if getattr(a, "trace", None) else None
        self.engine = None
        self.ready = threading.Event()

    # ---- plumbing --------------------------------------------------------
    def post(self, _what, **kw):
        self.q.put((_what, kw))

    def left(self):
        return self.deadline - time.monotonic()

    def pump(self, timeout):
        """Handle the events that arrive within timeout (at least one wait)."""
        try:
            kind, kw = self.q.get(timeout=max(0.0, min(timeout, self.left())))
        except queue.Empty:
            return
        self.dispatch(kind, kw)
        while True:
            try:
                kind, kw = self.q.get_nowait()
            except queue.Empty:
                return
            self.dispatch(kind, kw)

    def wait(self, cond, what, timeout=None):
        end = time.monotonic() + (timeout if timeout is not None else self.left())
        while not cond():
            if self.closed:
                raise Failure("server closed the connection while waiting for " + what)
            t = min(end, self.deadline) - time.monotonic()
            if t <= 0:
                raise Failure("timeout waiting for " + what)
            self.pump(min(t, 0.5))
        return True

    def dispatch(self, kind, kw):
        if kind == "pe_error":
            self.pe_errors.append(kw["message"])
            emit("pe_error", **kw)
        elif kind == "server_closed":
            if not self.closed:
                self.closed = True
                emit("server_closed", **kw)
        elif kind == "X":
            self.registered[kw["call"]] = kw["ok"]
            emit("registered", **kw)
        elif kind == "R":
            self.version = kw
            emit("version", **kw)
        elif kind == "G":
            self.ports = kw["ports"]
            emit("ports", **kw)
        elif kind == "g":
            self.caps[kw["port"]] = kw["caps"]
            emit("caps", **kw)
        elif kind == "H":
            self.heard.append(kw)
            emit("heard", **kw)
        elif kind == "y":
            self.y_port = kw["frames"]
            emit("port_outstanding", **kw)
        elif kind == "Y":
            if not self.y_values:
                self.summary["y_hdr"] = {"from": kw["from"], "to": kw["to"]}
            self.y_values.append(kw["frames"])
            self.y_answers += 1
            emit("outstanding", **kw)
        elif kind == "C":
            if self.conn is None:
                self.conn = kw
            emit("connected", **kw)
        elif kind == "D":
            if self.rx_first is None:
                self.rx_first = {k: kw[k] for k in ("port", "from", "to", "pid")}
            self.rx += kw["data"]
            self.rx_count += 1
            emit("data", port=kw["port"], **{"from": kw["from"], "to": kw["to"]},
                 pid=kw["pid"], len=len(kw["data"]), total=len(self.rx))
        elif kind == "d":
            if self.disc is None:
                self.disc = kw
            emit("disconnected", **kw)
        elif kind == "mon":
            self.on_monitor(kw)

    def on_monitor(self, rec):
        self.mon.append(rec)
        emit("monitor", **{k: v for k, v in rec.items() if k != "data_hex"})

    # ---- pe callbacks (receive thread) -----------------------------------
    def version_info(self, major, minor):
        self.post("R", major=major, minor=minor)

    def callsign_registered(self, callsign, success):
        self.post("X", call=callsign, ok=bool(success))

    def port_info(self, info):
        self.post("G", ports=list(info))

    def port_caps(self, port, caps):
        self.post("g", port=port, caps=caps._asdict())

    def callsign_heard_on_port(self, port, heard_call):
        h = None if heard_call is None else {
            "callsign": heard_call.callsign, "first": heard_call.first_heard,
            "last": heard_call.last_heard}
        self.post("H", port=port, heard=h)

    def frames_waiting_on_port(self, port, frames):
        self.post("y", port=port, frames=frames)

    def frames_waiting_on_connection(self, port, call_from, call_to, frames):
        self.post("Y", port=port, frames=frames, **{"from": call_from, "to": call_to})

    def connection_received(self, port, call_from, call_to, incoming, message):
        self.post("C", port=port, incoming=incoming, text=message,
                  **{"from": call_from, "to": call_to})

    def connected_data(self, port, call_from, call_to, pid, data):
        self.post("D", port=port, pid=pid, data=bytes(data),
                  **{"from": call_from, "to": call_to})

    def disconnected(self, port, call_from, call_to, message):
        self.post("d", port=port, text=message, **{"from": call_from, "to": call_to})

    def _mon(self, kind, port, call_from, call_to, text, data):
        d = bytes(data or b"")
        self.post("mon", kind=kind, port=port, text=text, data_len=len(d),
                  data=d[:64].decode("latin-1"), data_hex=d.hex(),
                  **{"from": call_from, "to": call_to})

    def monitored_connected(self, port, call_from, call_to, text, data):
        self._mon("I", port, call_from, call_to, text, data)

    def monitored_supervisory(self, port, call_from, call_to, text):
        self._mon("S", port, call_from, call_to, text, b"")

    def monitored_unproto(self, port, call_from, call_to, text, data):
        self._mon("U", port, call_from, call_to, text, data)

    def monitored_own(self, port, call_from, call_to, text, data):
        self._mon("T", port, call_from, call_to, text, data)

    def monitored_raw(self, port, data):
        d = bytes(data)
        self.post("mon", kind="K", port=port, text=None, data_len=len(d),
                  data=None, data_hex=d.hex(), **{"from": None, "to": None})

    # ---- steps -----------------------------------------------------------
    def start(self):
        host, _, port = self.a.agw.rpartition(":")
        host = host or "127.0.0.1"
        log = logging.getLogger("pe")
        log.setLevel(logging.WARNING)
        log.addHandler(PeErrors(self))
        pe.tocsin.signal(pe.SIG_ENGINE_READY).listen(lambda name, data: self.ready.set())
        self.engine = TracingEngine(self, self.trace)
        end = time.monotonic() + min(10.0, self.left())
        while True:
            try:
                self.engine.connect_to_server(host, int(port))
                break
            except OSError as e:
                if time.monotonic() > end:
                    raise Failure("cannot reach the AGWPE server at %s: %s" % (self.a.agw, e))
                self.engine._sock = None
                time.sleep(0.2)
        emit("tcp_connected", agw=self.a.agw)
        end = time.monotonic() + min(10.0, self.left())
        while not self.ready.is_set():
            self.pump(0.1)  # pe_error events while pe initialises
            if self.closed:
                raise Failure("server closed the connection during pe's start-up ('R','G','g')")
            if time.monotonic() > end:
                st = getattr(self.engine._active_handler, "_state", None)
                raise Failure("pe never became ready: stuck in %s (no valid answer to the "
                              "'R'/'G'/'g' it asked)%s" % (
                                  getattr(st, "name", st),
                                  "; pe errors: %s" % self.pe_errors if self.pe_errors else ""))
        eng = self.engine
        caps = [c._asdict() if c else None for c in (eng._port_caps or [])]
        self.summary["startup"] = {
            "version": list(eng.version_info) if eng.version_info else None,
            "ports": eng.get_cached_port_info(), "caps": caps}
        emit("ready", **self.summary["startup"])

    def register(self, call):
        self.engine.register_callsign(call)
        self.wait(lambda: call in self.registered, "the 'X' answer to registering " + call, 5)
        self.summary["registered"] = self.registered[call]
        if not self.registered[call]:
            raise Failure("the server refused to register " + call)

    def ask_y(self, own, remote):
        self.engine.ask_frames_waiting_on_connection(self.a.radio_port, own, remote)

    def send_paced(self, own, remote, data, paclen, max_out):
        """Send data as 'D' messages, never more than max_out outstanding:
        the last 'Y' answer plus the pieces sent after the 'Y' was asked."""
        pieces = [data[i:i + paclen] for i in range(0, len(data), paclen)]
        i = 0
        known, base = 0, 0      # last answer, and pieces sent when it was asked
        asked_at, asked_n, answers = None, 0, self.y_answers
        blocked, last_ask = 0, 0.0
        t_start = time.monotonic()
        while i < len(pieces) or asked_at is not None:
            if self.disc is not None:
                raise Failure("disconnected after %d of %d 'D' messages: %r" % (
                    i, len(pieces), self.disc.get("text")))
            if self.closed:
                raise Failure("server closed the connection while sending")
            if asked_at is not None and self.y_answers > answers:
                known, base = self.y_values[-1], asked_n
                answers = self.y_answers
                asked_at = None
            if asked_at is None and i < len(pieces) and time.monotonic() - last_ask >= 0.1:
                self.ask_y(own, remote)
                asked_at, asked_n = time.monotonic(), i
                last_ask = asked_at
            if asked_at is not None and time.monotonic() - asked_at > 5:
                raise Failure("no answer to 'Y' within 5 s (after %d 'D' messages)" % i)
            if i < len(pieces) and known + (i - base) < max_out:
                self.engine.send_data(self.a.radio_port, own, remote, pieces[i])
                i += 1
                self.pump(0)
                continue
            if i < len(pieces):
                blocked += 1
            if time.monotonic() > self.deadline:
                raise Failure("timeout after sending %d of %d 'D' messages" % (i, len(pieces)))
            self.pump(0.05)
        self.summary.update(bytes_sent=len(data), d_messages=len(pieces),
                            paced_waits=blocked,
                            send_seconds=round(time.monotonic() - t_start, 3))
        # Until the server says everything was acknowledged.
        while True:
            n = self.y_answers
            self.ask_y(own, remote)
            self.wait(lambda: self.y_answers > n or self.disc is not None,
                      "an answer to 'Y' (data not yet acknowledged)", min(5, self.left()))
            if self.disc is not None:
                raise Failure("disconnected before all data was acknowledged: %r" % self.disc.get("text"))
            if self.y_values[-1] == 0:
                break
            self.pump(0.25)
        self.summary["acked_seconds"] = round(time.monotonic() - t_start, 3)

    def y_summary(self):
        ys = self.y_values
        runs = []  # [value, how many answers in a row]
        for v in ys:
            if runs and runs[-1][0] == v:
                runs[-1][1] += 1
            else:
                runs.append([v, 1])
        self.summary.update(y_runs=runs, y_max=max(ys) if ys else None,
                            y_fell_to_zero=bool(ys) and ys[-1] == 0,
                            y_answers=len(ys))

    def finish(self, ok, error=None):
        s = self.summary
        s["ok"] = ok
        if error:
            s["error"] = error
        s["pe_errors"] = self.pe_errors
        s["elapsed"] = now()
        if self.engine:
            s["rx_kinds"] = dict(sorted(self.engine.rx_kinds.items()))
        s["t"] = now()
        with _print_lock:
            print(json.dumps(s), flush=True)
        if error:
            print("agw_pyham %s: %s" % (self.a.cmd, error), file=sys.stderr, flush=True)
        try:
            if self.engine and self.engine._sock:
                self.engine.disconnect_from_server()
        except Exception:
            pass
        sys.stdout.flush()
        os._exit(0 if ok else 1)


def conn_info(c):
    return None if c is None else {k: c.get(k) for k in ("port", "from", "to", "incoming", "text")}


def own_remote(conn, mycall):
    """Which side of a 'C' message is ours (the server's convention is
    under test, so look at both callsigns)."""
    if conn["to"] == mycall:
        return mycall, conn["from"]
    return mycall, conn["to"] if conn["from"] == mycall else conn["from"]


# ---- subcommands -----------------------------------------------------------

def cmd_info(c):
    a = c.a
    eng = c.engine
    out = {}
    eng.ask_version()
    c.wait(lambda: c.version is not None, "the 'R' answer", 5)
    out["version"] = [c.version["major"], c.version["minor"]]
    eng.ask_port_info()
    c.wait(lambda: c.ports is not None, "the 'G' answer", 5)
    out["ports"] = c.ports
    out["caps"] = {}
    for p in range(max(1, len(c.ports))):
        eng.ask_port_caps(p)
        c.wait(lambda: p in c.caps, "the 'g' answer for port %d" % p, 5)
        out["caps"][str(p)] = c.caps[p]
    eng.ask_callsigns_heard_on_port(a.radio_port)
    # 'H' has no end marker: take what comes within 2 s.
    end = time.monotonic() + 2
    while time.monotonic() < end:
        c.pump(0.1)
    out["heard"] = [h["heard"] for h in c.heard]
    out["heard_messages"] = len(c.heard)
    eng.ask_frames_waiting_on_port(a.radio_port)
    try:
        c.wait(lambda: c.y_port is not None, "the 'y' answer", 5)
    except Failure as e:
        out["y_error"] = str(e)
    out["y_port"] = c.y_port
    if a.call:  # refused is an answer too (e.g. another client holds it)
        eng.register_callsign(a.call)
        c.wait(lambda: a.call in c.registered, "the 'X' answer to registering " + a.call, 5)
        out["register"] = c.registered[a.call]
        eng.unregister_callsign(a.call)
        c.pump(0.5)
    c.summary["info"] = out
    c.finish(True)


def cmd_accept(c):
    a = c.a
    c.register(a.call)
    back = open(a.send, "rb").read() if a.send else None
    c.wait(lambda: c.conn is not None, "an incoming connection ('C')")
    c.summary["connect"] = conn_info(c.conn)
    t_conn = time.monotonic()
    own, remote = own_remote(c.conn, a.call)
    c.summary.update(own=own, remote=remote)
    if back is not None:
        c.send_paced(own, remote, back, a.paclen, a.max_outstanding)
        c.y_summary()
    c.wait(lambda: c.disc is not None, "the caller's disconnection ('d')")
    c.summary["disconnect"] = conn_info(c.disc)
    c.summary.update(bytes_received=len(c.rx), d_received=c.rx_count, first_d=c.rx_first,
                     connected_seconds=round(time.monotonic() - t_conn, 3))
    with open(a.out, "wb") as f:
        f.write(c.rx)
    if a.expect is not None and len(c.rx) != a.expect:
        c.finish(False, "received %d bytes, expected %d" % (len(c.rx), a.expect))
    c.finish(True)


def cmd_call(c):
    a = c.a
    data = open(a.file, "rb").read()
    want = open(a.expect_back, "rb").read() if a.expect_back else None
    c.register(a.call)
    c.summary.update(own=a.call, remote=a.to)
    via = [v for v in (a.via or "").split(",") if v]
    t0 = time.monotonic()
    c.engine.connect(a.radio_port, a.call, a.to, via or None)
    c.wait(lambda: c.conn is not None or c.disc is not None, "the 'C' answer to connecting")
    if c.conn is None:
        c.summary["disconnect"] = conn_info(c.disc)
        c.finish(False, "connection refused or failed: %r" % c.disc.get("text"))
    c.summary["connect"] = conn_info(c.conn)
    c.summary["connect_seconds"] = round(time.monotonic() - t0, 3)
    c.send_paced(a.call, a.to, data, a.paclen, a.max_outstanding)
    c.y_summary()
    if want is not None:
        c.wait(lambda: len(c.rx) >= len(want) or c.disc is not None,
               "%d bytes back (have %d)" % (len(want), len(c.rx)))
    if a.receive:
        with open(a.receive, "wb") as f:
            f.write(c.rx)
    c.summary.update(bytes_received=len(c.rx), d_received=c.rx_count, first_d=c.rx_first)
    if c.disc is not None:
        c.summary["disconnect"] = conn_info(c.disc)
        c.finish(False, "the peer disconnected first: %r" % c.disc.get("text"))
    if want is not None:
        c.summary["back_equal"] = bytes(c.rx) == want
        if bytes(c.rx) != want:
            c.finish(False, "data back differs: %d bytes, expected %d" % (len(c.rx), len(want)))
    t_d = time.monotonic()
    c.engine.disconnect(a.radio_port, a.call, a.to)
    c.wait(lambda: c.disc is not None, "the server's 'd' after our 'd'")
    c.summary["disconnect"] = conn_info(c.disc)
    c.summary["disconnect_seconds"] = round(time.monotonic() - t_d, 3)
    c.summary["total_seconds"] = round(time.monotonic() - t0, 3)
    c.finish(True)


def ui_payload(i, text="linklab ui"):
    return "%s %03d" % (text, i)


def payload_of(rec):
    """A monitor record's data, less any CR/LF/NUL a server appends."""
    return (rec.get("data") or "").rstrip("\r\n\0")


def cmd_ui_send(c):
    a = c.a
    via = [v for v in (a.via or "").split(",") if v]
    c.engine.enable_monitoring(True)
    for i in range(1, a.count + 1):
        c.engine.send_unproto(a.radio_port, a.call, a.to, ui_payload(i, a.text), via or None)
        c.pump(a.gap)
    ys = []
    while True:
        c.y_port = None
        c.engine.ask_frames_waiting_on_port(a.radio_port)
        try:
            c.wait(lambda: c.y_port is not None, "the 'y' answer", 5)
        except Failure as e:
            c.summary["y_error"] = str(e)
            break
        ys.append(c.y_port)
        if c.y_port == 0:
            break
        c.pump(0.25)
    mine = {ui_payload(i, a.text) for i in range(1, a.count + 1)}
    own = lambda: [m for m in c.mon if m["kind"] == "T" and payload_of(m) in mine]
    end = time.monotonic() + min(3, max(0, c.left()))
    while len(own()) < a.count and time.monotonic() < end:
        c.pump(0.1)
    t = own()
    c.summary.update(sent=a.count, frame_kind="V" if via else "M", y_port_values=ys,
                     t_records=len(t), t_example=t[0]["text"] if t else None,
                     monitor_kinds=count_kinds(c.mon))
    c.finish(True)


def count_kinds(recs):
    k = {}
    for m in recs:
        k[m["kind"]] = k.get(m["kind"], 0) + 1
    return dict(sorted(k.items()))


def frame_type(text):
    """The frame type in a monitor text, e.g. 'UI', 'I', 'RR', 'SABM'."""
    if not text or "<" not in text:
        return None
    t = text.split("<", 1)[1]
    for sep in (" ", ">", ":"):
        t = t.split(sep, 1)[0]
    return t


class MonitorOut:
    def __init__(self, c, path):
        self.f = open(path, "w")
        self.c = c
        orig = c.on_monitor

        def on(rec):
            rec = dict(rec, t=now())
            self.f.write(json.dumps(rec) + "\n")
            self.f.flush()
            orig(rec)
        c.on_monitor = on


def monitor_summary(c):
    ex = {}
    for m in c.mon:
        key = m["kind"] + ":" + str(frame_type(m["text"]) if m["kind"] != "K" else "raw")
        pf = re.search(r" (P|F|PF)=1\b", m["text"] or "")
        if pf:  # a command with P and a response with F are two formats
            key += " " + pf.group(1)
        if key not in ex:
            ex[key] = {"text": m["text"], "from": m["from"], "to": m["to"],
                       "data_len": m["data_len"], "data_hex": m["data_hex"][:80]}
    kinds = count_kinds(c.mon)
    short = 0
    for m in c.mon:
        n = re.search(r" Len=(\d+) ", m["text"] or "")
        if m["kind"] in "IT" and n and m["data_len"] < int(n.group(1)):
            short += 1
    first_k = next((m for m in c.mon if m["kind"] == "K"), None)
    return {"records": len(c.mon), "kinds": kinds, "examples": ex,
            "k_is_received_only": kinds.get("K", 0) == sum(kinds.get(k, 0) for k in "ISU"),
            "k_first_octet": first_k["data_hex"][:2] if first_k else None,
            "data_short": short}


def cmd_monitor(c):
    a = c.a
    MonitorOut(c, a.out)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    c.engine.enable_monitoring(True)
    if a.raw:
        c.engine.enable_raw_ax25(True)
    emit("monitoring", raw=a.raw, seconds=a.seconds)
    end = time.monotonic() + a.seconds
    while time.monotonic() < end and not stop.is_set() and not c.closed:
        c.pump(0.2)
    c.pump(0.05)
    c.summary["monitor"] = monitor_summary(c)
    c.summary["stopped_by"] = "signal" if stop.is_set() else (
        "server_closed" if c.closed else "time")
    c.finish(not c.closed, "server closed the connection" if c.closed else None)


def cmd_ui_recv(c):
    a = c.a
    if a.out:
        MonitorOut(c, a.out)
    want = {ui_payload(i, a.text) for i in range(1, a.count + 1)}
    c.engine.enable_monitoring(True)
    emit("listening", call_from=a.call_from, count=a.count)

    def got():
        return [m for m in c.mon if m["kind"] == "U" and m["from"] == a.call_from
                and payload_of(m) in want]
    try:
        c.wait(lambda: len({payload_of(m) for m in got()}) >= a.count,
               "%d UI frames from %s" % (a.count, a.call_from))
        err = None
    except Failure as e:
        err = str(e)
    g = got()
    seen = {payload_of(m) for m in g}
    c.summary.update(expected=a.count, received=len(seen), duplicates=len(g) - len(seen),
                     missing=sorted(want - seen), example=g[0] if g else None,
                     monitor_kinds=count_kinds(c.mon))
    if c.summary["example"]:
        c.summary["example"] = {k: g[0][k] for k in ("kind", "port", "from", "to", "text",
                                                      "data", "data_len", "data_hex")}
    c.finish(err is None, err)


# ---- compare ---------------------------------------------------------------

def load_dir(d):
    out = {}
    for p in sorted(glob.glob(os.path.join(d, "*.json"))):
        try:
            with open(p) as f:
                lines = [ln for ln in f.read().splitlines() if ln.strip()]
            out[os.path.basename(p)[:-5]] = json.loads(lines[-1]) if lines else {}
        except (OSError, ValueError, IndexError) as e:
            out[os.path.basename(p)[:-5]] = {"unreadable": str(e)}
    return out


def pick(s, *path):
    for k in path:
        if isinstance(s, dict) and k in s:
            s = s[k]
        else:
            return None
    return s


def normalise(v, calls):
    """Callsigns to their roles ({own}, {remote}, ...), clock times to
    HH:MM:SS, so that runs with other callsigns and times compare."""
    if isinstance(v, list):
        return [normalise(x, calls) for x in v]
    if isinstance(v, dict):
        return {k: normalise(x, calls) for k, x in v.items()}
    if not isinstance(v, str):
        return v
    v = re.sub(r"\b\d\d:\d\d:\d\d\b", "HH:MM:SS", v)
    for call, role in sorted(calls.items(), key=lambda cr: -len(cr[0])):
        v = re.sub(r"(?<![\w-])%s(?![\w-])" % re.escape(call), role, v)
    return v


def observables(runs):
    """(label, value, scenario) triples of what a client can see, from a
    run's summaries.  scenario: the value depends on what the harness did
    on that target (e.g. data sent back or not), so a side without it is
    not a difference."""
    rows = []
    calls = {}

    def add(label, v, scenario=False):
        rows.append((label, normalise(v, calls), scenario))

    def kinds(d):
        return "".join(sorted(d)) if isinstance(d, dict) else None
    for name in ("info", "info-end"):
        info = runs.get(name, {})
        add("%s ok" % name, info.get("ok"), name == "info-end")
        if info.get("error"):
            add("%s error" % name, info.get("error"))
        if name == "info":
            add("R version", pick(info, "info", "version"))
            add("G ports", pick(info, "info", "ports"))
            caps = pick(info, "info", "caps") or {}
            for p in sorted(caps):
                add("g caps port %s" % p, caps[p], p != "0")
            add("y port outstanding (idle)", pick(info, "info", "y_port"))
            add("X register answer", pick(info, "info", "register"))
            add("X register of a call another client holds",
                pick(runs.get("info-dup", {}), "info", "register"))
        add("%s H messages" % name, pick(info, "info", "heard_messages"), name == "info-end")
        heard = pick(info, "info", "heard")
        add("%s H records pe parsed" % name, None if heard is None else {
            "calls": [h["callsign"] for h in heard if h],
            "empty": len([h for h in heard if not h])}, name == "info-end")
        add("%s pe errors" % name, info.get("pe_errors"))
        if name == "info":
            add("info kinds received", kinds(info.get("rx_kinds")))
    for name in ("call", "accept"):
        s = runs.get(name, {})
        calls.clear()
        if s.get("own"):
            calls.update({s["own"]: "{own}", s.get("remote") or "?": "{remote}"})
        add("%s ok" % name, s.get("ok"))
        if s.get("error"):
            add("%s error" % name, s.get("error"))
        add("%s C text" % name, pick(s, "connect", "text"))
        add("%s C from/to" % name, [pick(s, "connect", "from"), pick(s, "connect", "to")])
        add("%s C incoming (pe)" % name, pick(s, "connect", "incoming"))
        add("%s d text" % name, pick(s, "disconnect", "text"))
        add("%s d from/to" % name, [pick(s, "disconnect", "from"), pick(s, "disconnect", "to")])
        fd = s.get("first_d")
        add("%s D from/to/pid" % name, [pick(fd, k) for k in ("from", "to", "pid")] if fd else None, True)
        yh = s.get("y_hdr")
        add("%s Y from/to" % name, [pick(yh, "from"), pick(yh, "to")] if yh else None, True)
        add("%s Y max" % name, s.get("y_max"), True)
        add("%s Y fell to zero" % name, s.get("y_fell_to_zero"), True)
        add("%s pe errors" % name, s.get("pe_errors"))
    calls.clear()
    u = runs.get("ui-send", {})
    add("ui-send ok", u.get("ok"))
    add("ui-send T records of own UI", u.get("t_records"))
    add("ui-send T text", u.get("t_example"))
    add("ui-send y after sending", (u.get("y_port_values") or [None])[0])
    u = runs.get("ui-send-via", {})
    add("ui-send-via ok", u.get("ok"))
    add("ui-send-via T text", u.get("t_example"))
    for name in ("ui-recv", "ui-recv-via"):
        r = runs.get(name, {})
        add("%s ok" % name, r.get("ok"))
        add("%s received/expected" % name, [r.get("received"), r.get("expected")])
        add("%s U text" % name, pick(r, "example", "text"))
        add("%s U from/to" % name, [pick(r, "example", "from"), pick(r, "example", "to")])
        add("%s U data (raw)" % name, pick(r, "example", "data_hex"))
    m = runs.get("monitor", {})
    mon = pick(m, "monitor") or {}
    add("monitor kinds", kinds(mon.get("kinds")))
    add("monitor K = I+S+U (received only)", mon.get("k_is_received_only"))
    add("monitor K first octet", mon.get("k_first_octet"))
    add("monitor I/T data shorter than Len=", mon.get("data_short"))
    ex = mon.get("examples") or {}
    for k in sorted(ex):
        t = ex[k].get("text")
        if t:  # the format, not the stations or the sequence numbers
            t = re.sub(r"\bN0CALL(-\d+)?\b", "CALL", t)
            t = re.sub(r"\b([SR])\d+\b", r"\1#", t)
        add("monitor %s text" % k, t, True)
    return rows


def cmd_compare(a):
    names = (a.names or "%s,%s" % (os.path.basename(a.dir_a.rstrip("/")),
                                   os.path.basename(a.dir_b.rstrip("/")))).split(",")
    ra, rb = load_dir(a.dir_a), load_dir(a.dir_b)
    if not ra or not rb:
        print("compare: no summaries in %s" % (a.dir_a if not ra else a.dir_b), file=sys.stderr)
        return 2
    la = observables(ra)
    lb = {label: v for label, v, _ in observables(rb)}
    w = 44

    def show(v):
        return "-" if v is None else json.dumps(v, sort_keys=True) if not isinstance(v, str) else repr(v)

    def cut(t, n):
        return t if len(t) <= n else t[:n - 3] + "..."
    print("  %-34s %-*s %s" % ("observable", w, names[0], names[1]))
    diffs = []
    for label, va, scenario in la + [(k, None, True) for k in lb if k not in {x[0] for x in la}]:
        vb = lb.get(label)
        if va == vb:
            mark = " "
        elif scenario and (va is None or vb is None):
            mark = "~"  # only one scenario has it
        else:
            mark = "*"
            diffs.append((label, show(va), show(vb)))
        print("%s %-34s %-*s %s" % (mark, cut(label, 34), w, cut(show(va), w), cut(show(vb), 90)))
    print()
    print("* differs; ~ only one target's scenario yields it")
    print("%d differences (%s vs %s):" % (len(diffs), names[0], names[1]))
    for label, sa, sb in diffs:
        print("- %s:\n    %s: %s\n    %s: %s" % (label, names[0], sa, names[1], sb))
    return 0


# ---- main ------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)

    def common(p):
        p.add_argument("--agw", required=True, help="HOST:PORT of the AGWPE server")
        p.add_argument("--radio-port", type=int, default=0)
        p.add_argument("--timeout", type=float, default=60)
        p.add_argument("--trace", help="JSON lines of every AGWPE message each way")
        return p
    p = common(sub.add_parser("info"))
    p.add_argument("--call", help="also register and unregister CALL")
    p = common(sub.add_parser("accept"))
    p.add_argument("--call", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--expect", type=int)
    p.add_argument("--send")
    p.add_argument("--paclen", type=int, default=256)
    p.add_argument("--max-outstanding", type=int, default=8)
    p = common(sub.add_parser("call"))
    p.add_argument("--call", required=True)
    p.add_argument("--to", required=True)
    p.add_argument("--via")
    p.add_argument("--file", required=True)
    p.add_argument("--paclen", type=int, default=256)
    p.add_argument("--max-outstanding", type=int, default=8)
    p.add_argument("--receive")
    p.add_argument("--expect-back")
    p = common(sub.add_parser("ui-send"))
    p.add_argument("--call", required=True)
    p.add_argument("--to", required=True)
    p.add_argument("--via")
    p.add_argument("--count", type=int, default=10)
    p.add_argument("--gap", type=float, default=0.1, help="seconds between frames")
    p.add_argument("--text", default="linklab ui", help="payload prefix")
    p = common(sub.add_parser("monitor"))
    p.add_argument("--seconds", type=float, required=True)
    p.add_argument("--raw", action="store_true")
    p.add_argument("--out", required=True)
    p = common(sub.add_parser("ui-recv"))
    p.add_argument("--from", dest="call_from", required=True)
    p.add_argument("--count", type=int, default=10)
    p.add_argument("--text", default="linklab ui", help="payload prefix")
    p.add_argument("--out")
    p = sub.add_parser("compare")
    p.add_argument("dir_a")
    p.add_argument("dir_b")
    p.add_argument("--names")
    a = ap.parse_args()
    if a.cmd == "compare":
        sys.exit(cmd_compare(a))
    if pe is None:
        print("agw_pyham: the `pe` package (pyham-pe 1.1.2) is not installed", file=sys.stderr)
        sys.exit(2)
    if a.cmd == "monitor":
        a.timeout = max(a.timeout, a.seconds + 15)
    c = Client(a)
    emit("start", cmd=a.cmd, agw=a.agw, pe_version=pe.__version__,
         args={k: v for k, v in vars(a).items() if k not in ("cmd", "agw")})
    fn = {"info": cmd_info, "accept": cmd_accept, "call": cmd_call, "ui-send": cmd_ui_send,
          "monitor": cmd_monitor, "ui-recv": cmd_ui_recv}[a.cmd]
    # A send() blocked by a server that stops reading would outlive
    # --timeout: a watchdog ends the run 10 s after it.
    dog = threading.Timer(a.timeout + 10, lambda: c.finish(
        False, "watchdog: still running 10 s after --timeout (blocked in pe?)"))
    dog.daemon = True
    dog.start()
    try:
        c.start()
        fn(c)
    except Failure as e:
        if a.cmd in ("call", "accept"):
            c.y_summary()
            c.summary.setdefault("bytes_received", len(c.rx))
            c.summary.setdefault("connect", conn_info(c.conn))
            c.summary.setdefault("disconnect", conn_info(c.disc))
        c.finish(False, str(e))
    except Exception as e:  # a bug here, or pe raising: still one summary
        c.finish(False, "%s: %s" % (type(e).__name__, e))


if __name__ == "__main__":
    main()
