//! The AGWPE server in virtual time: a [`Server`] with one radio port on
//! an ideal half-millisecond medium shared with peer stations
//! ([`linklab_io::Station`]), and clients that are plain byte streams.

use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, SystemTime};

use linklab_agw::wire::{CallField, Decoder, Header, Message};
use linklab_agw::{ClientId, PortConfig, Server, LINK_QUEUE_LIMIT};
use linklab_core::{Engine, Instant};
use linklab_io::{AckMode, KissParams, Station, StationEvent};
use linklab_link::{Config, Event, State};
use linklab_wire::ax25::{Address, Frame, Pid};
use linklab_wire::control::Modulus;
use linklab_wire::kiss;

const DELAY: Duration = Duration::from_micros(500);

fn call(text: &str) -> Address {
    text.parse().unwrap()
}

/// Wall clock at time zero: 2026-01-01 00:00:00 UTC.
fn epoch() -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(1_767_225_600)
}

enum To {
    Server,
    Peer(usize),
}

struct Bench {
    now: Instant,
    server: Server,
    peers: Vec<Station>,
    peer_events: Vec<(usize, StationEvent)>,
    air: VecDeque<(Instant, To, Vec<u8>)>,
    clients: BTreeMap<ClientId, (Decoder, Vec<Message>)>,
    /// Frames the server put on the air.
    server_frames: Vec<Vec<u8>>,
}

/// The link settings of both sides: modulo 8, as most stations on the air.
fn mod8() -> Config {
    Config {
        modulus: Modulus::Mod8,
        ..Config::default()
    }
}

fn port_config() -> PortConfig {
    PortConfig {
        description: "test port".into(),
        kiss: KissParams::default(),
        link: mod8(),
        answer_for: vec![call("N0CALL-9")],
        max_links: 64,
        bit_rate: Some(9600),
        ackmode: AckMode::Off,
    }
}

impl Bench {
    fn new(peers: &[&str]) -> Bench {
        let mut server = Server::new(vec![port_config()], epoch());
        server.port_up(Instant::ZERO, 0);
        let peers = peers
            .iter()
            .map(|c| {
                let mut s = Station::new(call(c), mod8()).unwrap();
                s.set_listening(true);
                s
            })
            .collect();
        let mut bench = Bench {
            now: Instant::ZERO,
            server,
            peers,
            peer_events: Vec::new(),
            air: VecDeque::new(),
            clients: BTreeMap::new(),
            server_frames: Vec::new(),
        };
        bench.settle();
        bench
    }

    fn client(&mut self) -> ClientId {
        let id = self.server.client_connected();
        self.clients.insert(id, (Decoder::new(), Vec::new()));
        id
    }

    fn request(&mut self, id: ClientId, kind: u8, from: &str, to: &str, data: &[u8]) {
        let mut header = Header::new(0, kind);
        header.pid = if matches!(kind, b'D' | b'M') { 0xF0 } else { 0 };
        header.call_from = CallField::from_text(from);
        header.call_to = CallField::from_text(to);
        let mut octets = Vec::new();
        Message::new(header, data.to_vec()).encode_into(&mut octets);
        self.server.handle_client_bytes(self.now, id, &octets);
        self.settle();
    }

    /// Moves everything that can move at `now`.
    fn settle(&mut self) {
        let tx = self.server.take_tx(0);
        if !tx.is_empty() {
            let mut decoder = kiss::Decoder::new(4096);
            decoder.push(&tx);
            while let Some(Ok(frame)) = decoder.next() {
                if let kiss::Command::Data(data) = frame.command {
                    self.server_frames.push(data);
                }
            }
            for i in 0..self.peers.len() {
                self.air
                    .push_back((self.now + DELAY, To::Peer(i), tx.clone()));
            }
        }
        for i in 0..self.peers.len() {
            let mut out = Vec::new();
            while let Some(frame) = self.peers[i].poll_transmit(self.now) {
                kiss::encode_into(&kiss::Frame::data(frame.encode()), &mut out);
            }
            while let Some(event) = self.peers[i].poll_event() {
                self.peer_events.push((i, event));
            }
            if !out.is_empty() {
                self.air
                    .push_back((self.now + DELAY, To::Server, out.clone()));
                for j in (0..self.peers.len()).filter(|&j| j != i) {
                    self.air
                        .push_back((self.now + DELAY, To::Peer(j), out.clone()));
                }
            }
        }
        for (id, (decoder, messages)) in &mut self.clients {
            decoder.push(&self.server.take_output(*id));
            while let Some(Ok(m)) = decoder.poll_message() {
                messages.push(m);
            }
        }
    }

    /// Runs until `done` or `limit` of virtual time; whether `done`.
    fn run_until(&mut self, limit: Duration, done: impl Fn(&Bench) -> bool) -> bool {
        let end = self.now + limit;
        while !done(self) {
            let next = [
                self.air.iter().map(|(t, _, _)| *t).min(),
                self.server.poll_timeout(),
                self.peers.iter().filter_map(Engine::poll_timeout).min(),
            ]
            .into_iter()
            .flatten()
            .min();
            let Some(next) = next.filter(|t| *t <= end) else {
                self.now = end;
                return done(self);
            };
            self.now = self.now.max(next);
            let due: Vec<_> = {
                let (due, rest): (Vec<_>, Vec<_>) =
                    self.air.drain(..).partition(|(t, _, _)| *t <= self.now);
                self.air = rest.into();
                due
            };
            for (_, to, bytes) in due {
                match to {
                    To::Server => self.server.handle_kiss_bytes(self.now, 0, &bytes),
                    To::Peer(i) => self.peers[i].handle_kiss_bytes(self.now, &bytes),
                }
            }
            self.server.handle_timeout(self.now);
            for peer in &mut self.peers {
                if peer.poll_timeout().is_some_and(|t| t <= self.now) {
                    peer.handle_timeout(self.now);
                }
            }
            self.settle();
        }
        true
    }

    /// Client `id` registers N0CALL-1 and connects to N0CALL-2 (the first
    /// peer); returns once the 'C' has come.
    fn connect_out(&mut self, id: ClientId) {
        self.request(id, b'X', "N0CALL-1", "", &[]);
        self.request(id, b'C', "N0CALL-1", "N0CALL-2", &[]);
        assert!(self.run_until(Duration::from_secs(5), |b| b.last(id, b'C').is_some()));
    }

    fn messages(&self, id: ClientId) -> &[Message] {
        &self.clients[&id].1
    }

    fn kinds(&self, id: ClientId) -> String {
        self.messages(id)
            .iter()
            .map(|m| char::from(m.header.kind))
            .collect()
    }

    fn last(&self, id: ClientId, kind: u8) -> Option<&Message> {
        self.messages(id)
            .iter()
            .rev()
            .find(|m| m.header.kind == kind)
    }

    fn data_from(&self, id: ClientId) -> Vec<u8> {
        self.messages(id)
            .iter()
            .filter(|m| m.header.kind == b'D')
            .flat_map(|m| m.data.clone())
            .collect()
    }

    fn outstanding(&mut self, id: ClientId, from: &str, to: &str) -> u32 {
        self.request(id, b'Y', from, to, &[]);
        let m = self.last(id, b'Y').unwrap();
        u32::from_le_bytes(m.data[..4].try_into().unwrap())
    }

    fn peer_data(&self, peer: usize) -> Vec<u8> {
        self.peer_events
            .iter()
            .filter(|(i, _)| *i == peer)
            .filter_map(|(_, e)| match e {
                StationEvent::Link {
                    event: Event::Data { data, .. },
                    ..
                } => Some(data.clone()),
                _ => None,
            })
            .flatten()
            .collect()
    }
}

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

#[test]
fn version_ports_and_capabilities() {
    let mut b = Bench::new(&[]);
    let c = b.client();
    b.request(c, b'R', "", "", &[]);
    b.request(c, b'G', "", "", &[]);
    b.request(c, b'g', "", "", &[]);
    assert_eq!(b.kinds(c), "RGg");
    let m = b.messages(c);
    assert_eq!(
        m[0].data,
        [0xD5, 0x07, 0, 0, 0x7F, 0, 0, 0],
        "2005.127, as Dire Wolf"
    );
    assert_eq!(m[1].data, b"1;Port1 test port;\0");
    // 9600 bit/s (code 3), no autoupdate, window 7 (Config::default), no links.
    assert_eq!(m[2].data[0], 3);
    assert_eq!(m[2].data[6], mod8().window_mod8);
    assert_eq!(m[2].data.len(), 12);
}

#[test]
fn registration_is_one_clients_and_answered() {
    let mut b = Bench::new(&[]);
    let (c1, c2) = (b.client(), b.client());
    b.request(c1, b'X', "N0CALL-1", "", &[]);
    b.request(c2, b'X', "N0CALL-1", "", &[]);
    b.request(c2, b'X', "NOT A CALL", "", &[]);
    assert_eq!(b.last(c1, b'X').unwrap().data, [1]);
    let answers: Vec<u8> = b.messages(c2).iter().map(|m| m.data[0]).collect();
    assert_eq!(answers, [0, 0]);
    assert_eq!(
        b.last(c1, b'X').unwrap().header.call_from.text(),
        "N0CALL-1"
    );
}

#[test]
fn connect_out_transfer_both_ways_and_disconnect() {
    let mut b = Bench::new(&["N0CALL-2"]);
    let c = b.client();
    b.connect_out(c);
    let connected = b.last(c, b'C').unwrap();
    assert_eq!(connected.data, b"*** CONNECTED With Station N0CALL-2\r\0");
    assert_eq!(connected.header.call_from.text(), "N0CALL-2");
    assert_eq!(connected.header.call_to.text(), "N0CALL-1");

    let out = pattern(20_000, 1);
    for chunk in out.chunks(1000) {
        b.request(c, b'D', "N0CALL-1", "N0CALL-2", chunk);
    }
    let first = b.outstanding(c, "N0CALL-1", "N0CALL-2");
    assert!(first > 0);
    let back = pattern(10_000, 2);
    b.peers[0]
        .send(&call("N0CALL-1"), back.clone())
        .unwrap_or_else(|_| {
            for chunk in back.chunks(256) {
                b.peers[0].send(&call("N0CALL-1"), chunk.to_vec()).unwrap();
            }
        });
    assert!(
        b.run_until(Duration::from_secs(120), |b| b.peer_data(0).len()
            == out.len()
            && b.data_from(c).len() == back.len())
    );
    assert_eq!(b.peer_data(0), out);
    assert_eq!(b.data_from(c), back);
    // Every I frame carried at most N1 octets.
    assert!(b.server_frames.iter().all(|f| f.len() <= 16 + 256));
    b.run_until(Duration::from_secs(10), |_| false);
    assert_eq!(b.outstanding(c, "N0CALL-1", "N0CALL-2"), 0);
    // The other order of the calls names the same link.
    assert_eq!(b.outstanding(c, "N0CALL-2", "N0CALL-1"), 0);

    b.request(c, b'd', "N0CALL-1", "N0CALL-2", &[]);
    assert!(b.run_until(Duration::from_secs(5), |b| b.last(c, b'd').is_some()));
    assert_eq!(
        b.last(c, b'd').unwrap().data,
        b"*** DISCONNECTED From Station N0CALL-2\r\0"
    );
}

#[test]
fn incoming_connection_goes_to_the_registering_client() {
    let mut b = Bench::new(&["N0CALL-2"]);
    let (c1, c2) = (b.client(), b.client());
    b.request(c1, b'X', "N0CALL-1", "", &[]);
    b.request(c2, b'X', "N0CALL-3", "", &[]);
    b.peers[0].connect(b.now, call("N0CALL-3"), &[]).unwrap();
    b.settle();
    assert!(
        b.run_until(Duration::from_secs(5), |b| b.last(c2, b'C').is_some()
            && b.peers[0]
                .link(&call("N0CALL-3"))
                .is_some_and(|l| l.state() == State::Connected))
    );
    assert_eq!(
        b.last(c2, b'C').unwrap().data,
        b"*** CONNECTED To Station N0CALL-2\r\0"
    );
    assert!(b.last(c1, b'C').is_none());
    b.peers[0]
        .send(&call("N0CALL-3"), b"hello".to_vec())
        .unwrap();
    b.settle();
    assert!(b.run_until(Duration::from_secs(5), |b| !b.data_from(c2).is_empty()));
    assert_eq!(b.data_from(c2), b"hello");
    assert_eq!(b.last(c2, b'D').unwrap().header.pid, 0xF0);
    b.peers[0].disconnect(b.now, &call("N0CALL-3")).unwrap();
    b.settle();
    assert!(b.run_until(Duration::from_secs(5), |b| b.last(c2, b'd').is_some()));
    assert_eq!(
        b.last(c2, b'd').unwrap().data,
        b"*** DISCONNECTED From Station N0CALL-2\r\0"
    );
}

#[test]
fn unregistered_callsigns_answer_dm_only_if_the_port_answers_for_them() {
    let mut b = Bench::new(&["N0CALL-2"]);
    // N0CALL-9 is the port's own (answer_for): refused with DM.
    b.peers[0].connect(b.now, call("N0CALL-9"), &[]).unwrap();
    b.settle();
    assert!(
        b.run_until(Duration::from_secs(5), |b| b.peer_events.iter().any(
            |(_, e)| matches!(
                e,
                StationEvent::Link {
                    event: Event::Disconnected { .. },
                    ..
                }
            )
        ))
    );
    let replies = b.server_frames.len();
    assert_eq!(replies, 1, "one DM");
    // N0CALL-5 is nobody's: not answered at all.
    b.peers[0].connect(b.now, call("N0CALL-5"), &[]).unwrap();
    b.settle();
    b.run_until(Duration::from_secs(2), |_| false);
    assert_eq!(b.server_frames.len(), replies);
}

#[test]
fn a_client_that_goes_away_has_its_links_released() {
    let mut b = Bench::new(&["N0CALL-2"]);
    let c = b.client();
    b.connect_out(c);
    b.server.client_closed(b.now, c);
    b.settle();
    assert!(
        b.run_until(Duration::from_secs(5), |b| b.peer_events.iter().any(
            |(_, e)| matches!(
                e,
                StationEvent::Link {
                    event: Event::Disconnected { .. },
                    ..
                }
            )
        ))
    );
    let last = Frame::decode(b.server_frames.last().unwrap(), Modulus::Mod8).unwrap();
    assert_eq!(last.control().name(), "DISC");
    assert!(b.run_until(Duration::from_secs(5), |b| b.server.link_count() == 0));
}

#[test]
fn a_fast_client_is_paced_and_nothing_is_lost() {
    let mut b = Bench::new(&["N0CALL-2"]);
    let c = b.client();
    b.connect_out(c);
    let out = pattern(64 * 1024, 7);
    let mut chunks = out.chunks(256);
    let mut max_queued = 0;
    let mut pauses = 0;
    loop {
        if b.server.accepts_input(c) {
            let Some(chunk) = chunks.next() else { break };
            b.request(c, b'D', "N0CALL-1", "N0CALL-2", chunk);
        } else {
            pauses += 1;
            let deadline = b.now + Duration::from_millis(100);
            b.run_until(Duration::from_millis(100), |b| b.now >= deadline);
        }
        max_queued = max_queued.max(b.outstanding(c, "N0CALL-1", "N0CALL-2"));
    }
    assert!(pauses > 0, "the client was paused");
    assert!(
        max_queued as usize <= LINK_QUEUE_LIMIT + 7 + 1,
        "queue bounded: {max_queued}"
    );
    assert!(
        b.run_until(Duration::from_secs(300), |b| b.peer_data(0).len()
            == out.len())
    );
    assert_eq!(b.peer_data(0), out);
}

#[test]
fn absurd_header_closes_only_that_client() {
    let mut b = Bench::new(&[]);
    let (bad, good) = (b.client(), b.client());
    let mut header = Header::new(0, b'D');
    header.data_len = 1 << 30;
    b.server.handle_client_bytes(b.now, bad, &header.encode());
    assert_eq!(b.server.poll_close(), Some(bad));
    b.server.client_closed(b.now, bad);
    let log: Vec<String> = std::iter::from_fn(|| b.server.poll_log()).collect();
    assert!(
        log.iter()
            .any(|l| l.contains("client 1") && l.contains("1073741824")),
        "{log:?}"
    );
    b.request(good, b'R', "", "", &[]);
    assert_eq!(b.kinds(good), "R");
}

#[test]
fn unknown_kinds_are_logged_and_skipped() {
    let mut b = Bench::new(&[]);
    let c = b.client();
    for _ in 0..15 {
        b.request(c, b'Z', "", "", b"junk");
    }
    b.request(c, b'R', "", "", &[]);
    assert_eq!(b.kinds(c), "R");
    let log: Vec<String> = std::iter::from_fn(|| b.server.poll_log()).collect();
    assert_eq!(
        log.iter()
            .filter(|l| l.contains("unknown kind 'Z'"))
            .count(),
        10
    );
}

#[test]
fn monitor_raw_and_unproto() {
    let mut b = Bench::new(&["N0CALL-2"]);
    let c = b.client();
    b.request(c, b'm', "", "", &[]);
    b.request(c, b'k', "", "", &[]);
    b.request(c, b'M', "N0CALL-1", "CQ", b"hello");
    let own = b.last(c, b'T').unwrap();
    assert!(own
        .data
        .starts_with(b" 1:Fm N0CALL-1 To CQ <UI pid=F0 Len=5 P=0 >[00:00:00]\rhello\r\0"));
    let ui = Frame::ui(
        call("APRS"),
        call("N0CALL-2"),
        &[],
        Pid::NoLayer3,
        b"beacon".to_vec(),
    )
    .unwrap();
    let mut kiss_bytes = Vec::new();
    kiss::encode_into(&kiss::Frame::data(ui.encode()), &mut kiss_bytes);
    b.server.handle_kiss_bytes(b.now, 0, &kiss_bytes);
    b.settle();
    let u = b.last(c, b'U').unwrap();
    assert_eq!(u.header.call_from.text(), "N0CALL-2");
    assert!(u.data.ends_with(b"\rbeacon\r\0"));
    let k = b.last(c, b'K').unwrap();
    assert_eq!(k.data[0], 0);
    assert_eq!(&k.data[1..], ui.encode().as_slice());
    // 'V' with a digipeater, and the heard list.
    let mut via = vec![1u8];
    via.extend_from_slice(&CallField::from_text("WIDE1-1").octets());
    via.extend_from_slice(b"x");
    b.request(c, b'V', "N0CALL-1", "CQ", &via);
    assert!(b
        .last(c, b'T')
        .unwrap()
        .data
        .starts_with(b" 1:Fm N0CALL-1 To CQ Via WIDE1-1 <UI"));
    b.request(c, b'H', "", "", &[]);
    let heard: Vec<&Message> = b
        .messages(c)
        .iter()
        .filter(|m| m.header.kind == b'H')
        .collect();
    assert_eq!(heard.len(), 20);
    assert_eq!(heard[0].header.call_from.text(), "N0CALL-2");
    assert!(heard[1].header.call_from.is_empty());
}

#[test]
fn a_lost_tnc_ends_the_links_and_refuses_new_ones() {
    let mut b = Bench::new(&["N0CALL-2"]);
    let c = b.client();
    b.connect_out(c);
    b.server
        .port_down(b.now, 0, "the KISS TNC closed the connection");
    b.settle();
    assert_eq!(
        b.last(c, b'd').unwrap().data,
        b"*** DISCONNECTED From Station N0CALL-2\r\0"
    );
    let before = b.messages(c).len();
    b.request(c, b'C', "N0CALL-1", "N0CALL-2", &[]);
    assert_eq!(b.messages(c).len(), before + 1);
    assert_eq!(b.last(c, b'd').unwrap().header.kind, b'd');
    b.server.port_up(b.now, 0);
    b.request(c, b'C', "N0CALL-1", "N0CALL-2", &[]);
    assert!(b.run_until(Duration::from_secs(5), |b| b.kinds(c).ends_with('C')));
}

#[test]
fn sixteen_clients_with_a_link_each_on_one_port() {
    let mut b = Bench::new(&["N0CALL-2"]);
    let clients: Vec<ClientId> = (0..16).map(|_| b.client()).collect();
    for (i, c) in clients.iter().enumerate() {
        let me = format!("N{i:X}CALL");
        b.request(*c, b'X', &me, "", &[]);
        b.request(*c, b'C', &me, "N0CALL-2", &[]);
    }
    assert!(b.run_until(Duration::from_secs(60), |b| clients
        .iter()
        .all(|c| b.last(*c, b'C').is_some())));
    for (i, c) in clients.iter().enumerate() {
        b.request(
            *c,
            b'D',
            &format!("N{i:X}CALL"),
            "N0CALL-2",
            format!("from {i}").as_bytes(),
        );
    }
    let ok = b.run_until(Duration::from_secs(60), |b| b.peer_data(0).len() >= 16 * 6);
    let log: Vec<String> = std::iter::from_fn(|| b.server.poll_log()).collect();
    assert!(ok, "{} {log:?}", b.peer_data(0).len());
    assert_eq!(b.server.link_count(), 16);
}

#[test]
fn data_given_before_the_link_is_up_is_sent_once_it_is() {
    let mut b = Bench::new(&["N0CALL-2"]);
    let c = b.client();
    b.request(c, b'X', "N0CALL-1", "", &[]);
    b.request(c, b'C', "N0CALL-1", "N0CALL-2", &[]);
    b.request(c, b'D', "N0CALL-1", "N0CALL-2", b"early");
    assert!(b.last(c, b'C').is_none(), "not up yet");
    assert!(b.run_until(Duration::from_secs(10), |b| b.peer_data(0) == b"early"));
}

/// Whether peer 0 saw its link end, and the last frame the server sent.
fn released(b: &Bench) -> Option<&'static str> {
    let ended = b.peer_events.iter().any(|(_, e)| {
        matches!(
            e,
            StationEvent::Link {
                event: Event::Disconnected { .. },
                ..
            }
        )
    });
    let last = Frame::decode(b.server_frames.last()?, Modulus::Mod8).ok()?;
    (ended && last.control().name() == "DISC").then_some("DISC")
}

#[test]
fn a_bbs_last_lines_before_d_are_delivered_before_disc() {
    let mut b = Bench::new(&["N0CALL-2"]);
    let c = b.client();
    b.connect_out(c);
    // More than a window of I frames: most of it still queued at 'd'.
    let lines = pattern(3000, 7);
    b.request(c, b'D', "N0CALL-1", "N0CALL-2", &lines);
    b.request(c, b'd', "N0CALL-1", "N0CALL-2", &[]);
    assert!(
        b.run_until(Duration::from_secs(120), |b| released(b).is_some()
            && b.last(c, b'd').is_some())
    );
    assert_eq!(b.peer_data(0), lines, "every line given before 'd' arrived");
    assert_eq!(
        b.last(c, b'd').unwrap().data,
        b"*** DISCONNECTED From Station N0CALL-2\r\0"
    );
}

#[test]
fn a_bbs_that_sends_d_and_closes_its_socket_at_once_still_delivers_its_last_lines() {
    let mut b = Bench::new(&["N0CALL-2"]);
    let c = b.client();
    b.connect_out(c);
    let lines = pattern(3000, 9);
    b.request(c, b'D', "N0CALL-1", "N0CALL-2", &lines);
    b.request(c, b'd', "N0CALL-1", "N0CALL-2", &[]);
    b.server.client_closed(b.now, c);
    b.settle();
    assert!(b.run_until(Duration::from_secs(120), |b| released(b).is_some()));
    assert_eq!(
        b.peer_data(0),
        lines,
        "every line given before it went arrived"
    );
    assert!(b.run_until(Duration::from_secs(5), |b| b.server.link_count() == 0));
}

#[test]
fn a_client_that_goes_away_without_d_has_its_data_delivered_then_disc() {
    let mut b = Bench::new(&["N0CALL-2"]);
    let c = b.client();
    b.connect_out(c);
    let lines = pattern(3000, 11);
    b.request(c, b'D', "N0CALL-1", "N0CALL-2", &lines);
    b.server.client_closed(b.now, c);
    b.settle();
    assert!(b.run_until(Duration::from_secs(120), |b| released(b).is_some()));
    assert_eq!(b.peer_data(0), lines);
}
