#!/usr/bin/env python3
"""An independent AX.25 peer for linklab's interop tests: the aioax25
package from PyPI (pinned in interop/pypeer.sh), speaking KISS over TCP.

    ax25_pypeer.py --kiss HOST:PORT ui-send --mycall A --to B --count N --text PREFIX
    ax25_pypeer.py --kiss HOST:PORT ui-recv --mycall B --count N --timeout S

ui-send sends N UI frames (PID F0) whose payloads are "PREFIX i/N", i from 1,
and exits once they are written to the TNC. ui-recv prints one line
"SRC>DST: PAYLOAD" for each UI frame addressed to B, from any station, and
exits 0 once N distinct payloads arrived, 1 if the timeout came first.

Only UI frames: no aioax25 release on PyPI (0.0.11.post0 is the newest) has
connected mode; its peer/station code exists only in the git repository.

aioax25's KISS device is opened with kiss_commands=[] and
reset_on_close=False: by default it types "INT KISS" and "RESET" as ASCII
into the TCP stream on open (sleeping 0.1 s a byte in the event loop, 2.3 s
in all) and sends a KISS "return" frame (C0 FF C0) on close, neither of
which belongs on a shared channel (greflector drops both). Its UI frames
are responses (C bit in the source address) unless cr=True.
Exit status: 0 success, 1 timeout, 2 usage or connection error.
"""

import argparse
import asyncio
import sys

from aioax25.frame import AX25Address, AX25UnnumberedInformationFrame
from aioax25.interface import AX25Interface
from aioax25.kiss import KISSDeviceState, TCPKISSDevice

CONNECT_TIMEOUT = 5.0


def fail(msg, code=1):
    print(f"ax25_pypeer: {msg}", file=sys.stderr)
    sys.exit(code)


def host_port(text):
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit():
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {text!r}")
    return host, int(port)


def callsign(text):
    try:
        return str(AX25Address.decode(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a callsign: {text!r}")


def check_closed(dev):
    if dev.state == KISSDeviceState.CLOSED:
        fail("the KISS TNC closed the connection", 2)


async def wait_until(dev, done, timeout):
    """Wait until done() or timeout seconds; False on timeout."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not done():
        check_closed(dev)
        if loop.time() > deadline:
            return False
        await asyncio.sleep(0.02)
    return True


async def open_kiss(host, port):
    """Connect to the KISS TNC; returns (device, interface on KISS port 0)."""
    loop = asyncio.get_running_loop()
    dev = TCPKISSDevice(host, port, loop=loop, kiss_commands=[],
                        reset_on_close=False, send_block_size=4096,
                        send_block_delay=0)
    # aioax25 connects in a task of its own and leaves its error to the
    # loop's exception handler: catch it there and poll the state.
    errors = []
    loop.set_exception_handler(lambda _, ctx: errors.append(
        ctx.get("exception") or ctx["message"]))
    dev.open()
    deadline = loop.time() + CONNECT_TIMEOUT
    while dev.state != KISSDeviceState.OPEN:
        if errors:
            fail(f"cannot reach the KISS TNC at {host}:{port}: {errors[0]}", 2)
        check_closed(dev)
        if loop.time() > deadline:
            fail(f"no KISS TNC at {host}:{port} after {CONNECT_TIMEOUT} s", 2)
        await asyncio.sleep(0.05)
    return dev, AX25Interface(dev[0], loop=loop)


def close_kiss(dev):
    # dev.close() calls transport.flush(), which asyncio transports lack;
    # closing the transport itself still sends what is buffered.
    if dev._transport is not None:
        dev._transport.close()


async def ui_send(args):
    dev, iface = await open_kiss(*args.kiss)
    left = args.count
    def on_sent(**_):
        nonlocal left
        left -= 1
    for i in range(1, args.count + 1):
        payload = f"{args.text} {i}/{args.count}".encode()
        iface.transmit(AX25UnnumberedInformationFrame(
            destination=args.to, source=args.mycall, pid=0xF0,
            payload=payload, cr=True), callback=on_sent)
    # aioax25 writes its buffer in blocks after the callbacks
    if not await wait_until(dev, lambda: left == 0 and not dev._tx_buffer,
                            args.timeout):
        fail(f"only {args.count - left} of {args.count} UI frames sent "
             f"in {args.timeout} s")
    print(f"sent {args.count} UI frames {args.mycall}>{args.to}")
    close_kiss(dev)
    await asyncio.sleep(0.1)


async def ui_recv(args):
    dev, iface = await open_kiss(*args.kiss)
    mycall = args.mycall
    seen = set()
    def on_frame(frame, **_):
        if not isinstance(frame, AX25UnnumberedInformationFrame):
            return
        src, dst = (str(a).rstrip("*") for a in  # "*" marks the C bit
                    (frame.header.source, frame.header.destination))
        if dst != mycall:
            return
        payload = bytes(frame.payload)
        print(f"{src}>{dst}: "
              f"{payload.decode('latin-1')}", flush=True)
        seen.add(payload)
    iface.received_msg.connect(on_frame)
    print(f"ax25_pypeer: {mycall} listening on {args.kiss[0]}:{args.kiss[1]}",
          file=sys.stderr, flush=True)
    if not await wait_until(dev, lambda: len(seen) >= args.count,
                            args.timeout):
        fail(f"timeout: {len(seen)} of {args.count} UI frames to {mycall} "
             f"in {args.timeout} s")
    close_kiss(dev)
    print(f"received {len(seen)} UI frames")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--kiss", type=host_port, required=True,
                   metavar="HOST:PORT", help="KISS TNC over TCP")
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("ui-send", help="send N UI frames")
    s.add_argument("--mycall", required=True, type=callsign)
    s.add_argument("--to", required=True, type=callsign)
    s.add_argument("--count", type=int, default=1)
    s.add_argument("--text", default="pypeer")
    s.add_argument("--timeout", type=float, default=30)
    r = sub.add_parser("ui-recv", help="receive N UI frames")
    r.add_argument("--mycall", required=True, type=callsign)
    r.add_argument("--count", type=int, default=1)
    r.add_argument("--timeout", type=float, default=30)
    args = p.parse_args()
    asyncio.run({"ui-send": ui_send, "ui-recv": ui_recv}[args.cmd](args))


if __name__ == "__main__":
    main()
