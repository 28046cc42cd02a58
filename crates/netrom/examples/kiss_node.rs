//! A NET/ROM node on one KISS TCP port, for trying the engines against a
//! real node (interop/linbpq-netrom.sh runs it against LinBPQ on
//! `linklab channel`). Not the station: one port, no configuration file,
//! a fixed run time.
//!
//! It sends NODES broadcasts (UI frames to `NODES`, PID 0xCF), learns from
//! those it hears, carries datagrams in AX.25 I frames (PID 0xCF) over one
//! connected link per neighbour (AX.25 v2.2 4.3.1), and on the transport:
//! - `--connect NAME` opens a circuit to a node (alias or callsign) once a
//!   route to it is known, sends each `--send` text as a line, prints what
//!   comes back, and disconnects after `--hold-secs`;
//! - an incoming circuit gets a prompt and has every line echoed back.
//!
//! `cargo run -p linklab-netrom --example kiss_node -- --kiss
//! 127.0.0.1:8103 --call N0LLC --alias LLC [--quality 192]
//! [--nodes-secs 60] [--connect BPQB --send NODES ...] [--run-secs 300]`
//!
//! Everything it does is printed, one line per event, with the seconds
//! since start.

use std::collections::{BTreeMap, VecDeque};
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::process::ExitCode;

use linklab_core::{Duration, Engine, Instant};
use linklab_link::{Config, DataLink, Event, State};
use linklab_netrom::l3::NODES_DESTINATION;
use linklab_netrom::routing::NeighbourKey;
use linklab_netrom::wire::Alias;
use linklab_netrom::{CircuitEvent, CircuitHandle, Node, NodeConfig, Transmit};
use linklab_wire::ax25::{same_station, Address, Frame, Pid};
use linklab_wire::control::Modulus;
use linklab_wire::kiss;

/// PID 0xCF: NET/ROM (AX.25 v2.2 3.4, table 3.2).
const PID_NETROM: u8 = 0xCF;
/// The only port of this node.
const PORT: usize = 0;

struct Options {
    kiss: String,
    call: Address,
    alias: Alias,
    quality: u8,
    nodes_secs: u64,
    connect: Option<String>,
    send: Vec<String>,
    hold_secs: u64,
    run_secs: u64,
    send_octets: usize,
}

fn parse_options() -> Result<Options, String> {
    let mut args = std::env::args().skip(1);
    let mut kiss = None;
    let mut call = None;
    let mut alias = None;
    let mut o = Options {
        kiss: String::new(),
        call: "N0CALL".parse().map_err(|e| format!("{e}"))?,
        alias: Alias::BLANK,
        quality: 192,
        nodes_secs: 60,
        connect: None,
        send: Vec::new(),
        hold_secs: 20,
        run_secs: 300,
        send_octets: 0,
    };
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or(format!("{flag} needs a value"));
        let number = |v: String| v.parse::<u64>().map_err(|e| format!("{flag} {v}: {e}"));
        match flag.as_str() {
            "--kiss" => kiss = Some(value()?),
            "--call" => {
                let v = value()?;
                call = Some(v.parse().map_err(|e| format!("--call {v}: {e}"))?)
            }
            "--alias" => {
                let v = value()?;
                alias = Some(v.parse().map_err(|e| format!("--alias {v}: {e}"))?)
            }
            "--quality" => {
                let v = value()?;
                o.quality = v.parse().map_err(|e| format!("--quality {v}: {e}"))?
            }
            "--nodes-secs" => o.nodes_secs = number(value()?)?.max(1),
            "--connect" => o.connect = Some(value()?),
            "--send" => o.send.push(value()?),
            "--hold-secs" => o.hold_secs = number(value()?)?,
            "--run-secs" => o.run_secs = number(value()?)?,
            "--send-octets" => o.send_octets = number(value()?)? as usize,
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    o.kiss = kiss.ok_or("--kiss HOST:PORT is required")?;
    o.call = call.ok_or("--call CALL is required")?;
    o.alias = alias.ok_or("--alias ALIAS is required")?;
    Ok(o)
}

/// The node, its AX.25 links and the socket to the KISS port.
struct Driver {
    start: std::time::Instant,
    socket: TcpStream,
    decoder: kiss::Decoder,
    node: Node,
    links: BTreeMap<(String, u8), DataLink>,
    call: Address,
    outgoing: Option<CircuitHandle>,
    /// Octets each circuit's user has given and the transport has not
    /// taken yet (its window was full).
    pending: BTreeMap<CircuitHandle, VecDeque<u8>>,
    /// Datagrams for a neighbour whose AX.25 link is being set up.
    waiting: BTreeMap<(String, u8), Vec<Vec<u8>>>,
    /// With `--send-octets`: what came back on the outgoing circuit.
    echoed: Vec<u8>,
    counting: bool,
}

impl Driver {
    fn now(&self) -> Instant {
        Instant::ZERO + self.start.elapsed()
    }

    fn log(&self, text: impl AsRef<str>) {
        println!(
            "{:9.3} {}",
            self.start.elapsed().as_secs_f64(),
            text.as_ref()
        );
    }

    fn send_frame(&mut self, frame: &Frame) -> std::io::Result<()> {
        let octets = kiss::encode(&kiss::Frame::data(frame.encode()));
        self.socket.write_all(&octets)
    }

    fn link(&mut self, remote: Address) -> &mut DataLink {
        let key = key(&remote);
        let call = self.call;
        self.links.entry(key).or_insert_with(|| {
            let config = Config {
                modulus: Modulus::Mod8,
                window_mod8: 4,
                ..Config::default()
            };
            let mut link = DataLink::new(config, call, remote, &[]).expect("AX.25 link config");
            link.set_accept_incoming(true);
            link
        })
    }

    /// One AX.25 frame from the channel.
    fn handle_frame(&mut self, now: Instant, octets: &[u8]) {
        let frame = match Frame::decode(octets, Modulus::Mod8) {
            Ok(f) => f,
            Err(e) => {
                self.log(format!("undecodable frame ({e})"));
                return;
            }
        };
        let from = *frame.address().source();
        let to = *frame.address().dest();
        if frame.pid() == Some(Pid::from(PID_NETROM)) && to.callsign().as_str() == NODES_DESTINATION
        {
            match self.node.handle_nodes(PORT, from, frame.info()) {
                Ok(learned) => self.log(format!("NODES from {from}: {learned:?}")),
                Err(e) => self.log(format!("bad NODES from {from}: {e}")),
            }
            return;
        }
        if same_station(&to, &self.call) && frame.address().digipeaters().is_empty() {
            self.link(from).handle_frame(now, &frame);
        }
    }

    /// Moves everything the engines want to say: link events into the
    /// node, the node's output onto links and the air, circuit events to
    /// the user.
    fn drain(&mut self, now: Instant) -> std::io::Result<()> {
        loop {
            let mut busy = false;
            let remotes: Vec<(String, u8)> = self.links.keys().cloned().collect();
            for key in remotes {
                while let Some(event) = self.links.get_mut(&key).and_then(|l| l.poll_event()) {
                    busy = true;
                    let remote = self.links[&key].remote();
                    match event {
                        Event::Data { pid, data } if pid == Pid::from(PID_NETROM) => {
                            let from = NeighbourKey {
                                port: PORT,
                                call: remote,
                            };
                            if let Err(e) = self.node.handle_datagram(now, from, &data) {
                                self.log(format!("bad datagram from {remote}: {e}"));
                            }
                        }
                        Event::LinkFailure { reason } => {
                            self.log(format!("link to {remote} failed: {reason:?}"));
                            self.node.handle_link_failure(NeighbourKey {
                                port: PORT,
                                call: remote,
                            });
                        }
                        other => self.log(format!("link {remote}: {other:?}")),
                    }
                }
                let up = self
                    .links
                    .get(&key)
                    .is_some_and(|l| matches!(l.state(), State::Connected | State::TimerRecovery));
                let down = self
                    .links
                    .get(&key)
                    .is_some_and(|l| l.state() == State::Disconnected);
                if up || down {
                    if let Some(held) = self.waiting.remove(&key) {
                        busy = true;
                        for info in held {
                            let sent = match self.links.get_mut(&key) {
                                Some(link) if up => {
                                    link.send_with_pid(Pid::from(PID_NETROM), info).is_ok()
                                }
                                _ => false,
                            };
                            if !sent {
                                self.log(format!(
                                    "a datagram for {}-{} lost: no link",
                                    key.0, key.1
                                ));
                            }
                        }
                    }
                }
                while let Some(frame) = self.links.get_mut(&key).and_then(|l| l.poll_transmit(now))
                {
                    busy = true;
                    self.send_frame(&frame)?;
                }
            }
            while let Some(t) = self.node.poll_transmit(now) {
                busy = true;
                match t {
                    Transmit::Nodes { info, .. } => {
                        let nodes: Address = NODES_DESTINATION.parse().expect("NODES is a call");
                        let frame = Frame::ui(nodes, self.call, &[], Pid::from(PID_NETROM), info)
                            .expect("UI frame");
                        self.log("sending NODES");
                        self.send_frame(&frame)?;
                    }
                    Transmit::Datagram { neighbour, info } => {
                        let key = key(&neighbour.call);
                        let link = self.link(neighbour.call);
                        if matches!(link.state(), State::Connected | State::TimerRecovery) {
                            if let Err(e) = link.send_with_pid(Pid::from(PID_NETROM), info) {
                                self.log(format!("datagram to {} lost: {e:?}", neighbour.call));
                            }
                        } else {
                            // Held until the link is up (AX.25 v2.2 6.3.1).
                            if link.state() == State::Disconnected {
                                let _ = link.connect(now);
                            }
                            self.waiting.entry(key).or_default().push(info);
                        }
                    }
                }
            }
            while let Some(event) = self.node.transport_mut().poll_event() {
                busy = true;
                self.circuit_event(now, event);
            }
            if !busy {
                return Ok(());
            }
        }
    }

    fn circuit_event(&mut self, now: Instant, event: CircuitEvent) {
        match event {
            CircuitEvent::Incoming {
                circuit,
                user,
                originating_node,
                node,
            } => {
                self.log(format!(
                    "circuit in from {user} at {originating_node} (node {node})"
                ));
                let prompt = format!(
                    "linklab {}:{}}} echo\r",
                    self.node.config().alias,
                    self.call
                );
                self.send(circuit, prompt.as_bytes());
            }
            CircuitEvent::Connected { circuit } => self.log(format!("circuit {circuit:?} up")),
            CircuitEvent::Readable { circuit } => {
                let mut buf = vec![0; self.node.transport().readable(circuit)];
                let n = self.node.transport_mut().recv(now, circuit, &mut buf);
                buf.truncate(n);
                if self.counting && Some(circuit) == self.outgoing {
                    self.echoed.extend_from_slice(&buf);
                    return;
                }
                if Some(circuit) != self.outgoing {
                    self.log(format!("circuit {circuit:?}: {n} octets echoed"));
                    self.send(circuit, &buf);
                    return;
                }
                for line in String::from_utf8_lossy(&buf).split('\r') {
                    if !line.is_empty() {
                        self.log(format!("circuit {circuit:?} < {line}"));
                    }
                }
            }
            CircuitEvent::Closed { circuit, reason } => {
                self.log(format!("circuit {circuit:?} closed: {reason:?}"));
                self.node.transport_mut().release(circuit);
            }
        }
    }

    /// Queues `data` for `circuit`; [`Driver::flush`] hands it to the
    /// transport as its window allows.
    fn send(&mut self, circuit: CircuitHandle, data: &[u8]) {
        self.pending
            .entry(circuit)
            .or_default()
            .extend(data.iter().copied());
        self.flush();
    }

    /// Gives every circuit's queued octets to the transport, as much as it
    /// takes.
    fn flush(&mut self) {
        let circuits: Vec<CircuitHandle> = self.pending.keys().copied().collect();
        for circuit in circuits {
            let Some(queue) = self.pending.get_mut(&circuit) else {
                continue;
            };
            let (front, _) = queue.as_slices();
            let chunk = front.to_vec();
            match self.node.transport_mut().send(circuit, &chunk) {
                Ok(n) => {
                    queue.drain(..n);
                }
                Err(e) => {
                    let lost = queue.len();
                    self.pending.remove(&circuit);
                    self.log(format!(
                        "circuit {circuit:?}: {lost} octets not sent: {e:?}"
                    ));
                    continue;
                }
            }
            if self.pending.get(&circuit).is_some_and(|q| q.is_empty()) {
                self.pending.remove(&circuit);
            }
        }
    }

    /// Reads what the channel sends within `wait` and hands its frames
    /// on.
    fn receive(&mut self, buf: &mut [u8], wait: Duration) -> std::io::Result<()> {
        self.socket
            .set_read_timeout(Some(std::time::Duration::from_micros(
                wait.as_micros() as u64
            )))?;
        match self.socket.read(buf) {
            Ok(0) => Err(std::io::Error::new(
                ErrorKind::UnexpectedEof,
                "closed by the channel",
            )),
            Ok(n) => {
                self.decoder.push(&buf[..n]);
                let now = self.now();
                while let Some(item) = self.decoder.next() {
                    match item {
                        Ok(kiss::Frame {
                            command: kiss::Command::Data(octets),
                            ..
                        }) => self.handle_frame(now, &octets),
                        Ok(_) => {}
                        Err(e) => self.log(format!("bad KISS frame: {e}")),
                    }
                }
                Ok(())
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => Ok(()),
            Err(e) => Err(e),
        }
    }

    fn print_table(&self) {
        for d in self.node.table().destinations() {
            let routes: Vec<String> = d
                .routes
                .iter()
                .map(|r| format!("{} q{} obs{}", r.neighbour.call, r.quality, r.obsolescence))
                .collect();
            self.log(format!(
                "node {}:{} via {}",
                d.alias,
                d.call,
                routes.join(", ")
            ));
        }
    }
}

fn run(o: Options) -> Result<(), String> {
    let socket = TcpStream::connect(&o.kiss).map_err(|e| format!("KISS {}: {e}", o.kiss))?;
    let mut config = NodeConfig::new(o.call, o.alias, vec![PORT]);
    config.nodes_interval = Duration::from_secs(o.nodes_secs);
    config.routing.minimum_quality = 10;
    let mut d = Driver {
        start: std::time::Instant::now(),
        socket,
        decoder: kiss::Decoder::new(1024),
        node: Node::new(config, Instant::from_micros(2_000_000)),
        links: BTreeMap::new(),
        call: o.call,
        outgoing: None,
        pending: BTreeMap::new(),
        waiting: BTreeMap::new(),
        echoed: Vec::new(),
        counting: o.send_octets > 0,
    };
    d.node.table_mut().set_port_quality(PORT, o.quality);
    let end = Duration::from_secs(o.run_secs);
    let mut connected_at: Option<Instant> = None;
    let mut sent = false;
    let mut buf = [0u8; 4096];
    loop {
        let now = d.now();
        if now - Instant::ZERO >= end {
            break;
        }
        // Time: the node's and every link's timers.
        if d.node.poll_timeout().is_some_and(|t| t <= now) {
            d.node.handle_timeout(now);
        }
        for link in d.links.values_mut() {
            if link.poll_timeout().is_some_and(|t| t <= now) {
                link.handle_timeout(now);
            }
        }
        // The user: connect once a route is known, send, hold, close.
        if let (Some(name), None) = (&o.connect, d.outgoing) {
            if let Some(dest) = d.node.table().resolve(name).map(|x| x.call) {
                match d.node.connect(now, o.call, dest) {
                    Ok(c) => {
                        d.log(format!("connecting to {name} ({dest}) as {c:?}"));
                        d.outgoing = Some(c);
                    }
                    Err(e) => return Err(format!("connect to {name}: {e}")),
                }
            }
        }
        if let Some(c) = d.outgoing {
            let up = d.node.transport().state(c) == Some(linklab_netrom::l4::State::Connected);
            if up && !sent {
                for text in o.send.clone() {
                    d.send(c, format!("{text}\r").as_bytes());
                }
                if o.send_octets > 0 {
                    d.log(format!("sending {} octets", o.send_octets));
                    d.send(c, &octets(o.send_octets));
                }
                sent = true;
                connected_at = Some(now);
            }
            let back = after_prompt(&d.echoed).len();
            if d.counting && back >= o.send_octets && connected_at.is_some() {
                let sent = octets(o.send_octets);
                let echoed = after_prompt(&d.echoed);
                match echoed.iter().zip(&sent).position(|(a, b)| a != b) {
                    None if echoed.len() == sent.len() => d.log(format!(
                        "echo: {} octets back, byte-exact, {:.1} s after connect",
                        sent.len(),
                        (now - connected_at.unwrap_or(now)).as_secs_f64()
                    )),
                    None => d.log(format!(
                        "echo: {} octets back, more than sent",
                        echoed.len()
                    )),
                    Some(i) => d.log(format!("echo: differs at octet {i}")),
                }
                d.counting = false;
                d.log(format!("disconnecting {c:?}"));
                d.node.transport_mut().disconnect(c);
                connected_at = None;
            }
            if connected_at.is_some_and(|t| now - t >= Duration::from_secs(o.hold_secs)) {
                d.log(format!("disconnecting {c:?}"));
                d.node.transport_mut().disconnect(c);
                connected_at = None;
            }
        }
        d.flush();
        d.drain(now).map_err(|e| format!("KISS {}: {e}", o.kiss))?;
        // Wait for octets until the next timer, at most 100 ms.
        let next = [d.node.poll_timeout()]
            .into_iter()
            .chain(d.links.values().map(|l| l.poll_timeout()))
            .flatten()
            .min();
        let wait = next
            .map(|t| t - d.now())
            .unwrap_or(Duration::from_millis(100))
            .min(Duration::from_millis(100))
            .max(Duration::from_millis(1));
        d.receive(&mut buf, wait)
            .map_err(|e| format!("KISS {}: {e}", o.kiss))?;
    }
    // Release every AX.25 link, so that a neighbour does not keep
    // sending on a link nobody holds (LinBPQ would, until its T3).
    let now = d.now();
    for link in d.links.values_mut() {
        if link.state() != State::Disconnected {
            let _ = link.disconnect(now);
        }
    }
    let closing = std::time::Instant::now();
    while closing.elapsed() < std::time::Duration::from_secs(5)
        && d.links.values().any(|l| l.state() != State::Disconnected)
    {
        let now = d.now();
        for link in d.links.values_mut() {
            if link.poll_timeout().is_some_and(|t| t <= now) {
                link.handle_timeout(now);
            }
        }
        d.drain(now).map_err(|e| format!("KISS {}: {e}", o.kiss))?;
        d.receive(&mut buf, Duration::from_millis(100))
            .map_err(|e| format!("KISS {}: {e}", o.kiss))?;
    }
    d.print_table();
    let c = d.node.counters();
    d.log(format!("counters {c:?}"));
    Ok(())
}

/// A neighbour as a map key.
fn key(call: &Address) -> (String, u8) {
    (call.callsign().as_str().to_owned(), call.ssid())
}

/// What an echo sent after its prompt (the far `kiss_node` first sends
/// "linklab ALIAS:CALL} echo" and a CR).
fn after_prompt(echoed: &[u8]) -> &[u8] {
    const END: &[u8] = b"} echo\r";
    echoed
        .windows(END.len())
        .position(|w| w == END)
        .map_or(&echoed[..0], |i| &echoed[i + END.len()..])
}

/// `len` octets of a fixed pseudo-random sequence (xorshift32), the same
/// on every run.
fn octets(len: usize) -> Vec<u8> {
    let mut x: u32 = 0x3434_3434;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}

fn main() -> ExitCode {
    match parse_options().and_then(run) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kiss_node: {e}");
            ExitCode::from(2)
        }
    }
}
