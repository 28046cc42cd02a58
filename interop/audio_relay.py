#!/usr/bin/env python3
"""Software audio cable between two Dire Wolf instances.

    audio_relay.py --a-tx A.tx --b-rx B.rx --b-tx B.tx --a-rx A.rx
                   [--rate 48000] [--chunk-ms 10] [--prebuffer-ms 60]
                   [--drop-rate 0.0] [--hole-rate 0.0] [--hole-ms 1.0]
                   [--seed 1] [--duration SECONDS] [--log FILE] [--bursts FILE]

A.tx / B.tx are FIFOs (or growing files) that each Dire Wolf's ALSA `file`
PCM writes its transmit audio to: raw signed 16-bit little-endian mono at
--rate.  A.rx / B.rx are FIFOs that are each Dire Wolf's standard input
(`ADEVICE stdin ...`).  Every --chunk-ms of wall-clock time the relay writes
exactly one chunk to each receiver: transmit audio of the other side if
there is some, silence otherwise, so the receivers' sample clocks run in
real time whether anybody transmits or not.  Transmit audio is buffered and
played out at real-time pace; when a transmission starts the relay first
gathers --prebuffer-ms of it so that an ALSA period arriving late does not
cut a hole in the frame.

--drop-rate P replaces each chunk that carries transmit audio with silence
with probability P (random.Random(--seed), one stream per direction), which
destroys the frame it falls in: a way to cause frame loss.  A 10 ms chunk
is a tenth of a frame at 9600 bit/s but can span two frames, and with
several drops per transmission the loss comes in clusters.  --hole-rate R
instead cuts short holes, --hole-ms long, into transmit audio: each chunk
of it gets one hole with probability R x chunk duration (R holes per second
of transmit audio), at a random offset, so that a hole falls inside one
frame and fails its FCS while the frames around it survive: with holes
spread uniformly over the audio, a frame of T seconds is lost with
probability about 1 - exp(-R T), and a short frame (RR) rarely.  Both use
random.Random(--seed), one stream per direction.  --gain scales
the audio (Dire Wolf transmits at full scale; its receiver likes a level of
about 50, which a gain of 0.25 gives).  The relay counts
chunks of audio, silence and drops per direction and prints them (and writes
them to --log) every 5 s and at exit.  --bursts FILE gets one line per
transmission and direction: the wall-clock time (Unix seconds) at which its
first transmit audio reached the relay, when the relay started and finished
playing it, and how many chunks it had; with these, a frame's delay can be
split into the sender's time to key up, the relay's gather, and air time.
Standard library only.
"""
import argparse
import array
import errno
import os
import random
import signal
import sys
import time

SAMPLE_BYTES = 2  # signed 16-bit mono


class Direction:
    def __init__(self, name, tx_path, rx_path, chunk_bytes, prebuffer_bytes, rng, drop_rate,
                 gain=1.0, hole_p=0.0, hole_bytes=0):
        self.name = name
        self.tx_path = tx_path
        self.rx_path = rx_path
        self.chunk = chunk_bytes
        self.prebuffer = prebuffer_bytes
        self.rng = rng
        self.drop_rate = drop_rate
        self.gain = gain
        self.hole_p = hole_p  # probability that a chunk of transmit audio gets a hole
        self.hole_bytes = hole_bytes
        self.buf = bytearray()
        self.playing = False
        self.tx_fd = None
        self.rx_fd = None
        self.silence = bytes(chunk_bytes)
        self.stats = {"audio": 0, "silence": 0, "dropped": 0, "holes": 0, "bursts": 0, "rx_bytes": 0,
                      "split_samples": 0}
        self.bursts = None  # file for one line per burst, or None
        self.t_first = None  # when the current burst's first audio arrived
        self.t_play = None
        self.burst_chunks = 0

    def open(self):
        # Non-blocking read-open of a FIFO succeeds without a writer; the
        # ALSA file plugin's open for writing then succeeds too.
        if self.tx_fd is None:
            self.tx_fd = os.open(self.tx_path, os.O_RDONLY | os.O_NONBLOCK)
        if self.rx_fd is None:
            try:
                self.rx_fd = os.open(self.rx_path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError as e:
                if e.errno != errno.ENXIO:  # no reader yet: try again later
                    raise
                return False
            os.set_blocking(self.rx_fd, True)
        return True

    def pull(self):
        while True:
            try:
                data = os.read(self.tx_fd, 1 << 16)
            except BlockingIOError:
                return
            if not data:  # FIFO has no writer (yet, or any more)
                return
            if not self.buf and not self.playing and self.t_first is None:
                self.t_first = time.time()
            self.buf += data
            self.stats["rx_bytes"] += len(data)
            if len(data) % SAMPLE_BYTES:
                self.stats["split_samples"] += 1  # a read that ended inside a sample

    def tick(self):
        """Write one chunk to the receiver."""
        self.pull()
        # Only whole samples are played: a read from the FIFO may end inside
        # one, and its other byte arrives with the next read.  Playing the
        # odd byte would shift every later sample of this direction by one
        # byte, and the receiver would decode nothing for the rest of the run.
        whole = len(self.buf) - len(self.buf) % SAMPLE_BYTES
        if not self.playing and whole >= min(self.prebuffer, self.chunk) and \
                (whole >= self.prebuffer or self.stale):
            self.playing = True
            self.stats["bursts"] += 1
            self.t_play = time.time()
            self.burst_chunks = 0
        out = self.silence
        if self.playing:
            if whole:
                self.burst_chunks += 1
                take = min(self.chunk, whole)
                piece = bytes(self.buf[:take])
                del self.buf[:take]
                if len(piece) < self.chunk:
                    piece += bytes(self.chunk - len(piece))
                if self.drop_rate > 0 and self.rng.random() < self.drop_rate:
                    self.stats["dropped"] += 1
                else:
                    out = piece
                    if self.gain != 1.0:
                        samples = array.array("h", piece)
                        if sys.byteorder != "little":
                            samples.byteswap()
                        samples = array.array("h", (int(v * self.gain) for v in samples))
                        if sys.byteorder != "little":
                            samples.byteswap()
                        out = samples.tobytes()
                    if self.hole_p > 0 and self.rng.random() < self.hole_p:
                        # a hole of hole_bytes at a random sample offset,
                        # clipped at the chunk's end
                        at = 2 * self.rng.randrange(self.chunk // 2)
                        n = min(self.hole_bytes, self.chunk - at)
                        out = out[:at] + bytes(n) + out[at + n:]
                        self.stats["holes"] += 1
                    self.stats["audio"] += 1
            if len(self.buf) < SAMPLE_BYTES:
                self.playing = False
                if self.bursts:
                    self.bursts.write(f"{self.name} arrived {self.t_first:.3f} play {self.t_play:.3f} "
                                      f"end {time.time():.3f} chunks {self.burst_chunks}\n")
                    self.bursts.flush()
                self.t_first = None
        else:
            self.stats["silence"] += 1
        # something waited a whole tick: play it next time
        self.stale = len(self.buf) >= SAMPLE_BYTES
        if self.rx_fd is not None:
            os.write(self.rx_fd, out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--a-tx", required=True)
    ap.add_argument("--a-rx", required=True)
    ap.add_argument("--b-tx", required=True)
    ap.add_argument("--b-rx", required=True)
    ap.add_argument("--rate", type=int, default=48000)
    ap.add_argument("--chunk-ms", type=float, default=10.0)
    ap.add_argument("--prebuffer-ms", type=float, default=60.0)
    ap.add_argument("--drop-rate", type=float, default=0.0)
    ap.add_argument("--hole-rate", type=float, default=0.0,
                    help="holes per second of transmit audio (see above)")
    ap.add_argument("--hole-ms", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--duration", type=float, default=3600.0)
    ap.add_argument("--gain", type=float, default=0.25)
    ap.add_argument("--log")
    ap.add_argument("--bursts")
    a = ap.parse_args()

    chunk_samples = max(1, int(a.rate * a.chunk_ms / 1000))
    chunk_bytes = 2 * chunk_samples
    pre = 2 * int(a.rate * a.prebuffer_ms / 1000)
    period = chunk_samples / a.rate
    hole_p = a.hole_rate * period
    if hole_p > 1 or a.hole_rate < 0:
        ap.error(f"--hole-rate must be between 0 and {1 / period:.0f} (one hole per chunk)")
    hole_bytes = 2 * max(1, int(a.rate * a.hole_ms / 1000))
    dirs = [
        Direction("A->B", a.a_tx, a.b_rx, chunk_bytes, pre, random.Random(a.seed * 2 + 0), a.drop_rate,
                  a.gain, hole_p, hole_bytes),
        Direction("B->A", a.b_tx, a.a_rx, chunk_bytes, pre, random.Random(a.seed * 2 + 1), a.drop_rate,
                  a.gain, hole_p, hole_bytes),
    ]
    bursts = open(a.bursts, "w") if a.bursts else None
    for d in dirs:
        d.stale = False
        d.bursts = bursts

    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    log = open(a.log, "a") if a.log else None

    def report(tag):
        line = f"audio_relay {tag}: " + "  ".join(
            f"{d.name} " + " ".join(f"{k}={v}" for k, v in d.stats.items()) for d in dirs)
        print(line, file=sys.stderr, flush=True)
        if log:
            log.write(line + "\n")
            log.flush()

    start = time.monotonic()
    next_t = start
    next_report = start + 5
    n = 0
    try:
        while not stop and time.monotonic() - start < a.duration:
            for d in dirs:
                d.open()
            for d in dirs:
                d.tick()
            n += 1
            next_t = start + n * period
            now = time.monotonic()
            if next_t > now:
                time.sleep(next_t - now)
            elif now - next_t > 1.0:  # fell far behind (machine busy): resynchronise
                print("audio_relay: more than 1 s behind real time, skipping ahead",
                      file=sys.stderr, flush=True)
                n = int((now - start) / period)
            if now >= next_report:
                report(f"t={now - start:.0f}s")
                next_report += 5
    except BrokenPipeError:
        print("audio_relay: a receiver went away", file=sys.stderr)
    report("end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
