//! A thin UDP driver around the NORM engines, for trying them against
//! real peers (interop/linklab-norm.sh runs it against libnorm).
//!
//! ```text
//! norm_udp send --bind ADDR --to ADDR [--node N] [--rate BPS] [--segment N]
//!               [--block K] [--parity P] [--auto-parity A] [--acker NODE]
//!               [--drop-every N] FILE...
//! norm_udp recv --bind ADDR [--node N] --count N --out DIR [--drop-every N]
//! ```
//!
//! `send` sends each FILE as a data object and, with `--acker`, asks that
//! node to acknowledge a watermark on the last one; it exits 0 when the
//! watermark is acknowledged (or, without one, when the flushes are done).
//! `recv` writes the first COUNT objects to DIR/rx.1, rx.2, ... and exits
//! 0. `--drop-every N` discards every Nth source symbol of first-time
//! NORM_DATA (sent, or received) so that repair has to go through the
//! Reed-Solomon parity. Both give up after 120 s. A summary line goes to
//! standard output.

use linklab_core::{Engine, Instant};
use linklab_norm::wire::{object_flags, Message, Packet};
use linklab_norm::{
    ObjectKind, Receiver, ReceiverConfig, ReceiverEvent, Sender, SenderConfig, SenderEvent,
};
use std::net::{SocketAddr, UdpSocket};
use std::process::ExitCode;
use std::time::Duration;

struct Args {
    mode: String,
    opts: Vec<(String, String)>,
    files: Vec<String>,
}

impl Args {
    fn parse() -> Result<Args, String> {
        let mut it = std::env::args().skip(1);
        let mode = it.next().ok_or("first argument: send or recv")?;
        let mut opts = Vec::new();
        let mut files = Vec::new();
        while let Some(a) = it.next() {
            if let Some(name) = a.strip_prefix("--") {
                let v = it.next().ok_or(format!("--{name} needs a value"))?;
                opts.push((name.to_string(), v));
            } else {
                files.push(a);
            }
        }
        Ok(Args { mode, opts, files })
    }

    fn get<T: std::str::FromStr>(&self, name: &str, default: Option<T>) -> Result<T, String> {
        match self.opts.iter().rev().find(|(n, _)| n == name) {
            Some((_, v)) => v.parse().map_err(|_| format!("--{name}: bad value {v:?}")),
            None => default.ok_or(format!("--{name} is required")),
        }
    }
}

/// Whether the driver discards this datagram: every `every`-th source
/// symbol of first-time NORM_DATA, never the first symbol of a block.
fn dropped(bytes: &[u8], every: u32) -> bool {
    if every == 0 {
        return false;
    }
    match Packet::decode(bytes) {
        Ok(Packet {
            message: Message::Data(d),
            ..
        }) => {
            d.flags & object_flags::REPAIR == 0
                && d.payload_id.esi > 0
                && u32::from(d.payload_id.esi) % every == every - 1
        }
        _ => false,
    }
}

struct Clock(std::time::Instant);

impl Clock {
    fn now(&self) -> Instant {
        Instant::ZERO + self.0.elapsed()
    }

    /// Socket read time-out until `t` (at least 100 µs, at most 50 ms).
    fn until(&self, t: Option<Instant>) -> Duration {
        let now = self.now();
        let d = t.map_or(Duration::from_millis(50), |t| t - now);
        d.clamp(Duration::from_micros(100), Duration::from_millis(50))
    }
}

fn send(args: &Args) -> Result<bool, String> {
    let bind: SocketAddr = args.get("bind", None)?;
    let to: SocketAddr = args.get("to", None)?;
    let mut c = SenderConfig::new(args.get("node", Some(1))?, to, args.get("rate", Some(1e6))?);
    c.segment_size = args.get("segment", Some(1024))?;
    c.block_len = args.get("block", Some(64))?;
    c.num_parity = args.get("parity", Some(16))?;
    c.auto_parity = args.get("auto-parity", Some(0))?;
    c.instance_id = std::process::id() as u16;
    c.seed = u64::from(std::process::id());
    let acker: Option<u32> = args.get("acker", Some(0)).map(|a| (a != 0).then_some(a))?;
    let every: u32 = args.get("drop-every", Some(0))?;
    let sock = UdpSocket::bind(bind).map_err(|e| format!("bind {bind}: {e}"))?;
    let clock = Clock(std::time::Instant::now());
    let mut sender = Sender::new(c, clock.now()).map_err(|e| e.to_string())?;
    let mut last = None;
    for f in &args.files {
        let data = std::fs::read(f).map_err(|e| format!("{f}: {e}"))?;
        last = Some(
            sender
                .enqueue(clock.now(), data, ObjectKind::Data)
                .map_err(|e| format!("{f}: {e}"))?,
        );
    }
    let last = last.ok_or("no FILE to send")?;
    if let Some(a) = acker {
        sender.set_watermark(last, &[a]);
    }
    let mut buf = vec![0u8; 65536];
    let mut drops = 0;
    while clock.0.elapsed() < Duration::from_secs(120) {
        while let Some(t) = sender.poll_transmit(clock.now()) {
            if dropped(&t.payload, every) {
                drops += 1;
                continue;
            }
            sock.send_to(&t.payload, t.destination)
                .map_err(|e| e.to_string())?;
        }
        while let Some(e) = sender.poll_event() {
            eprintln!("norm_udp: {e:?}");
            let ok = match e {
                SenderEvent::WatermarkCompleted { missing, .. } => Some(missing.is_empty()),
                SenderEvent::FlushCompleted if acker.is_none() => Some(true),
                _ => None,
            };
            if let Some(ok) = ok {
                let s = sender.stats();
                println!(
                    "sent {} data, {} repairs, {} commands; {} NACKs, {} ACKs received; {} dropped here; GRTT {:?}",
                    s.data_sent, s.repairs_sent, s.commands_sent, s.nacks_received, s.acks_received, drops, sender.grtt()
                );
                return Ok(ok);
            }
        }
        sock.set_read_timeout(Some(clock.until(sender.poll_timeout())))
            .map_err(|e| e.to_string())?;
        if let Ok((n, from)) = sock.recv_from(&mut buf) {
            sender.handle_datagram(clock.now(), from, &buf[..n]);
        }
        sender.handle_timeout(clock.now());
    }
    Err("timed out".into())
}

fn recv(args: &Args) -> Result<bool, String> {
    let bind: SocketAddr = args.get("bind", None)?;
    let count: usize = args.get("count", None)?;
    let out: String = args.get("out", None)?;
    let every: u32 = args.get("drop-every", Some(0))?;
    let mut c = ReceiverConfig::new(args.get("node", Some(2))?);
    c.seed = u64::from(std::process::id());
    let mut receiver = Receiver::new(c);
    let sock = UdpSocket::bind(bind).map_err(|e| format!("bind {bind}: {e}"))?;
    let clock = Clock(std::time::Instant::now());
    let mut buf = vec![0u8; 65536];
    let (mut got, mut drops) = (0, 0);
    let mut done_at: Option<std::time::Instant> = None;
    while clock.0.elapsed() < Duration::from_secs(120) {
        while let Some(t) = receiver.poll_transmit(clock.now()) {
            sock.send_to(&t.payload, t.destination)
                .map_err(|e| e.to_string())?;
        }
        while let Some(e) = receiver.poll_event() {
            match e {
                ReceiverEvent::ObjectCompleted {
                    object_id, data, ..
                } if got < count => {
                    got += 1;
                    let path = format!("{out}/rx.{got}");
                    std::fs::write(&path, &data).map_err(|e| format!("{path}: {e}"))?;
                    eprintln!(
                        "norm_udp: object {object_id} complete ({} octets) -> {path}",
                        data.len()
                    );
                }
                other => eprintln!("norm_udp: {other:?}"),
            }
        }
        if got == count && done_at.is_none() {
            done_at = Some(std::time::Instant::now());
        }
        // Linger after the last object so watermark requests are answered.
        if done_at.is_some_and(|t| t.elapsed() > Duration::from_secs(3)) {
            let s = receiver.stats();
            println!(
                "received {} data, {} blocks decoded from parity, {} NACKs and {} ACKs sent, {} dropped here",
                s.data_received, s.blocks_decoded, s.nacks_sent, s.acks_sent, drops
            );
            return Ok(true);
        }
        sock.set_read_timeout(Some(clock.until(receiver.poll_timeout())))
            .map_err(|e| e.to_string())?;
        if let Ok((n, from)) = sock.recv_from(&mut buf) {
            if dropped(&buf[..n], every) {
                drops += 1;
                continue;
            }
            receiver.handle_datagram(clock.now(), from, &buf[..n]);
        }
        receiver.handle_timeout(clock.now());
    }
    Err(format!("timed out with {got} of {count} objects"))
}

fn main() -> ExitCode {
    let result = Args::parse().and_then(|a| match a.mode.as_str() {
        "send" => send(&a),
        "recv" => recv(&a),
        m => Err(format!("unknown mode {m:?}: send or recv")),
    });
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!("norm_udp: not acknowledged");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("norm_udp: {e}");
            ExitCode::from(2)
        }
    }
}
