//! An AGWPE client, sans-IO: requests in, the messages to write out;
//! the server's octets in, events out (AGWPE TCP/IP API, "Frames sent by
//! the Application to AGWPE" and "Frames sent by AGWPE to the
//! Application"). It speaks plain AGWPE, so it works with linklab's
//! [`Server`](crate::Server), `linklab station` and other engines (Dire
//! Wolf, AGWPE itself).
//!
//! Time comes in as an argument: the client asks the server for a link's
//! outstanding frames ('Y') every [`ClientOptions::query_every`] while it
//! has data on the way, and hands the server more data ('D', at most
//! [`ClientOptions::paclen`] octets each) only while fewer than
//! [`ClientOptions::max_outstanding`] frames are outstanding: 'Y' is the
//! AGWPE client's only flow control. The octets the peer has
//! acknowledged are counted from the answers: a 'D' of at most PACLEN
//! octets is one I frame on a server whose N1 is at least PACLEN, so the
//! count is exact there and a lower bound otherwise.
//!
//! Drive it like every linklab engine: call a request or
//! [`Client::handle_bytes`] / [`Client::handle_timeout`], then write what
//! [`Client::poll_transmit`] gives, act on each [`Client::poll_event`],
//! and call again at [`Client::poll_timeout`].

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, SystemTime};

use linklab_core::Instant;
use linklab_wire::ax25::Address;

use crate::wire::{CallField, Decoder, Header, Message, StreamError, CALL_LEN};

/// How the client paces the data it sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientOptions {
    /// The most octets handed to the server in one 'D': the largest I
    /// frame the link is expected to carry (N1; AGWPE's and Dire Wolf's
    /// PACLEN default is 256).
    pub paclen: usize,
    /// No more 'D' while the server has this many frames queued or
    /// unacknowledged on the link.
    pub max_outstanding: u32,
    /// How often a link with data on the way is asked for its
    /// outstanding frames ('Y').
    pub query_every: Duration,
}

impl Default for ClientOptions {
    fn default() -> ClientOptions {
        ClientOptions {
            paclen: 256,
            max_outstanding: 16,
            query_every: Duration::from_millis(250),
        }
    }
}

/// A connected-mode link as the server names it: the radio port (0 =
/// the first, as in the header), our callsign and the peer's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Link {
    /// The radio port, counted from 0 as in the header.
    pub port: u8,
    /// Our callsign (CallFrom of our requests).
    pub local: Address,
    /// The peer (CallTo of our requests).
    pub remote: Address,
}

/// A monitor record ('I', 'S', 'U' received; 'T' sent by the server).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MonitorRecord {
    /// The radio port, counted from 0.
    pub port: u8,
    /// The record kind: b'I', b'S', b'U' or b'T'.
    pub kind: u8,
    /// CallFrom: the frame's source.
    pub from: String,
    /// CallTo: the frame's destination.
    pub to: String,
    /// The description line, without its CR.
    pub text: String,
    /// The information field that follows the line (its closing CR and
    /// the NUL removed).
    pub info: Vec<u8>,
}

/// A heard-list entry ('H').
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeardEntry {
    /// The station, as the server spells it.
    pub station: String,
    /// The text line the server sent (callsign and times, its format).
    pub text: String,
    /// When first heard, if the record carries the SYSTEMTIMEs (UTC).
    pub first: Option<SystemTime>,
    /// When last heard, likewise.
    pub last: Option<SystemTime>,
}

/// What the server said, decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientEvent {
    /// 'R': the server's version.
    Version {
        /// Major version.
        major: u32,
        /// Minor version.
        minor: u32,
    },
    /// 'G': each radio port's description, port 1 first.
    Ports(Vec<String>),
    /// 'X': a callsign was registered (`ok`), or refused because another
    /// client of the server holds it.
    Registered {
        /// The callsign.
        call: Address,
        /// True if registered.
        ok: bool,
    },
    /// 'C': a link is up; `incoming` if the peer called.
    Connected {
        /// The link.
        link: Link,
        /// True if the peer called (no 'C' of ours was waiting).
        incoming: bool,
    },
    /// 'D': data from the peer.
    Data {
        /// The link.
        link: Link,
        /// The PID of the I frame.
        pid: u8,
        /// The octets.
        data: Vec<u8>,
    },
    /// 'd': the link is down (or a connection attempt failed).
    Disconnected {
        /// The link.
        link: Link,
        /// The server's text, e.g. `*** DISCONNECTED From Station N0CALL`.
        text: String,
        /// True if the server says the peer stopped answering
        /// (`RETRYOUT`), false for a release.
        retry_out: bool,
        /// Octets the peer had acknowledged, as far as the 'Y' answers
        /// showed.
        acknowledged: u64,
        /// Octets handed to [`Client::send`] and never acknowledged.
        unacknowledged: u64,
    },
    /// 'Y': frames queued or unacknowledged on a link.
    Outstanding {
        /// The link.
        link: Link,
        /// The count.
        frames: u32,
    },
    /// 'I', 'S', 'U', 'T': a frame seen on a port.
    Monitor(MonitorRecord),
    /// 'K': a raw frame received on `port`: the KISS type octet, then the
    /// AX.25 frame without FCS.
    Raw {
        /// The radio port, counted from 0.
        port: u8,
        /// The message's data.
        data: Vec<u8>,
    },
    /// 'H': one heard-list record of `port`; `None` for an empty slot.
    Heard {
        /// The radio port, counted from 0.
        port: u8,
        /// The entry.
        entry: Option<HeardEntry>,
    },
    /// A message this client could not read (a callsign that does not
    /// parse, a short answer); it is otherwise ignored.
    Unreadable(String),
}

/// One link's data on the way.
#[derive(Debug, Default)]
struct Outgoing {
    connected: bool,
    /// We asked for it ('C').
    calling: bool,
    /// Octets not yet handed to the server.
    queue: VecDeque<u8>,
    /// Sizes of the 'D's handed and not yet known to be acknowledged,
    /// oldest first.
    handed: VecDeque<usize>,
    /// Of `handed`, those handed before the 'Y' now in flight.
    before_query: usize,
    /// A 'Y' is in flight.
    querying: bool,
    /// When to ask next.
    next_query: Option<Instant>,
    /// Frames the server holds, as last known plus handed since.
    estimate: u32,
    acknowledged: u64,
}

/// The AGWPE client engine.
#[derive(Debug)]
pub struct Client {
    options: ClientOptions,
    decoder: Decoder,
    out: Vec<u8>,
    events: VecDeque<ClientEvent>,
    links: HashMap<Link, Outgoing>,
}

impl Client {
    /// A client with `options`.
    pub fn new(options: ClientOptions) -> Client {
        Client {
            options,
            decoder: Decoder::new(),
            out: Vec::new(),
            events: VecDeque::new(),
            links: HashMap::new(),
        }
    }

    fn request(&mut self, kind: u8, port: u8, from: CallField, to: CallField, data: Vec<u8>) {
        let mut header = Header::new(port, kind);
        header.call_from = from;
        header.call_to = to;
        Message::new(header, data).encode_into(&mut self.out);
    }

    /// 'R': asks for the server's version.
    pub fn ask_version(&mut self) {
        self.request(b'R', 0, CallField::EMPTY, CallField::EMPTY, Vec::new());
    }

    /// 'G': asks for the radio ports.
    pub fn ask_ports(&mut self) {
        self.request(b'G', 0, CallField::EMPTY, CallField::EMPTY, Vec::new());
    }

    /// 'H': asks for the heard list of `port` (counted from 0).
    pub fn ask_heard(&mut self, port: u8) {
        self.request(b'H', port, CallField::EMPTY, CallField::EMPTY, Vec::new());
    }

    /// 'X': registers `call`, so connections to it come to this client.
    pub fn register(&mut self, call: &Address) {
        let from = CallField::from_address(call);
        self.request(b'X', 0, from, CallField::EMPTY, Vec::new());
    }

    /// 'x': gives `call` up.
    pub fn unregister(&mut self, call: &Address) {
        let from = CallField::from_address(call);
        self.request(b'x', 0, from, CallField::EMPTY, Vec::new());
    }

    /// 'm': turns the monitor records on or off (AGWPE toggles them).
    pub fn toggle_monitor(&mut self) {
        self.request(b'm', 0, CallField::EMPTY, CallField::EMPTY, Vec::new());
    }

    /// 'k': turns the raw frames on or off (AGWPE toggles them).
    pub fn toggle_raw(&mut self) {
        self.request(b'k', 0, CallField::EMPTY, CallField::EMPTY, Vec::new());
    }

    /// 'C' (or 'v' through digipeaters, at most 8): asks for a link.
    pub fn connect(&mut self, link: Link, via: &[Address]) {
        let from = CallField::from_address(&link.local);
        let to = CallField::from_address(&link.remote);
        if via.is_empty() {
            self.request(b'C', link.port, from, to, Vec::new());
        } else {
            let mut data = vec![u8::try_from(via.len()).unwrap_or(u8::MAX)];
            for digi in via {
                data.extend_from_slice(&CallField::from_address(digi).octets()[..CALL_LEN]);
            }
            self.request(b'v', link.port, from, to, data);
        }
        self.links.entry(link).or_default().calling = true;
    }

    /// Queues `data` for the peer of `link`; it goes to the server as the
    /// link and its outstanding frames allow.
    pub fn send(&mut self, now: Instant, link: Link, data: &[u8]) {
        self.links.entry(link).or_default().queue.extend(data);
        self.pump(now, link);
    }

    /// 'd': releases `link` (data already handed to the server still goes
    /// first on linklab's server and Dire Wolf); data not yet handed is
    /// dropped.
    pub fn disconnect(&mut self, link: Link) {
        if let Some(state) = self.links.get_mut(&link) {
            state.queue.clear();
        }
        let from = CallField::from_address(&link.local);
        let to = CallField::from_address(&link.remote);
        self.request(b'd', link.port, from, to, Vec::new());
    }

    /// 'Y': asks for the frames outstanding on `link` now.
    pub fn query_outstanding(&mut self, link: Link) {
        let state = self.links.entry(link).or_default();
        if !state.querying {
            state.querying = true;
            state.before_query = state.handed.len();
            state.next_query = None;
            let from = CallField::from_address(&link.local);
            let to = CallField::from_address(&link.remote);
            self.request(b'Y', link.port, from, to, Vec::new());
        }
    }

    /// The links up or being set up, and those with data on the way.
    pub fn links(&self) -> Vec<Link> {
        let mut links: Vec<Link> = self.links.keys().copied().collect();
        links.sort_by_key(order);
        links
    }

    /// True if `link` is up.
    pub fn is_connected(&self, link: &Link) -> bool {
        self.links.get(link).is_some_and(|s| s.connected)
    }

    /// Octets of `link` the peer has acknowledged, as far as the 'Y'
    /// answers show.
    pub fn acknowledged(&self, link: &Link) -> u64 {
        self.links.get(link).map_or(0, |s| s.acknowledged)
    }

    /// True once everything given to [`Client::send`] on `link` has been
    /// handed to the server and acknowledged by the peer.
    pub fn all_acknowledged(&self, link: &Link) -> bool {
        self.links
            .get(link)
            .is_none_or(|s| s.queue.is_empty() && s.handed.is_empty() && !s.querying)
    }

    /// Octets read from the server. An error means the stream cannot be
    /// trusted any more: close the connection.
    pub fn handle_bytes(&mut self, now: Instant, bytes: &[u8]) -> Result<(), StreamError> {
        self.decoder.push(bytes);
        while let Some(item) = self.decoder.poll_message() {
            let message = item?;
            self.handle_message(now, message);
        }
        Ok(())
    }

    /// Octets to write to the server, if any.
    pub fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        if self.out.is_empty() {
            None
        } else {
            Some(std::mem::take(&mut self.out))
        }
    }

    /// The next event.
    pub fn poll_event(&mut self) -> Option<ClientEvent> {
        self.events.pop_front()
    }

    /// When [`Client::handle_timeout`] is next due.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.links
            .values()
            .filter(|s| !s.querying)
            .filter_map(|s| s.next_query)
            .min()
    }

    /// Asks the links whose time has come for their outstanding frames.
    pub fn handle_timeout(&mut self, now: Instant) {
        let due: Vec<Link> = self
            .links
            .iter()
            .filter(|(_, s)| !s.querying && s.next_query.is_some_and(|t| t <= now))
            .map(|(l, _)| *l)
            .collect();
        let mut due = due;
        due.sort_by_key(order);
        for link in due {
            self.query_outstanding(link);
        }
    }

    /// Hands `link`'s queued data to the server while the window allows,
    /// and asks for the count once something was handed.
    fn pump(&mut self, _now: Instant, link: Link) {
        let paclen = self.options.paclen.max(1);
        let max = self.options.max_outstanding.max(1);
        let Some(state) = self.links.get_mut(&link) else {
            return;
        };
        if !state.connected {
            return;
        }
        let mut chunks = Vec::new();
        while !state.queue.is_empty() && state.estimate < max {
            let n = state.queue.len().min(paclen);
            let chunk: Vec<u8> = state.queue.drain(..n).collect();
            state.handed.push_back(n);
            state.estimate += 1;
            chunks.push(chunk);
        }
        let handed_any = !chunks.is_empty();
        let from = CallField::from_address(&link.local);
        let to = CallField::from_address(&link.remote);
        for chunk in chunks {
            let mut header = Header::new(link.port, b'D');
            header.pid = 0xF0;
            header.call_from = from;
            header.call_to = to;
            Message::new(header, chunk).encode_into(&mut self.out);
        }
        if handed_any {
            self.query_outstanding(link);
        }
    }

    fn link_of(&mut self, header: &Header) -> Option<Link> {
        // The server names the peer in CallFrom and us in CallTo.
        match (header.call_to.address(), header.call_from.address()) {
            (Ok(local), Ok(remote)) => Some(Link {
                port: header.port,
                local,
                remote,
            }),
            _ => {
                self.events.push_back(ClientEvent::Unreadable(format!(
                    "'{}' on port {} between {:?} and {:?}: a callsign does not parse",
                    char::from(header.kind),
                    u16::from(header.port) + 1,
                    header.call_from.text(),
                    header.call_to.text()
                )));
                None
            }
        }
    }

    fn handle_message(&mut self, now: Instant, message: Message) {
        let header = message.header;
        let data = message.data;
        let event = match header.kind {
            b'R' => {
                let word = |at: usize| {
                    data.get(at..at + 4)
                        .and_then(|w| w.try_into().ok())
                        .map_or(0, u32::from_le_bytes)
                };
                ClientEvent::Version {
                    major: word(0),
                    minor: word(4),
                }
            }
            b'G' => {
                let text = text_of(&data);
                let mut parts = text.split(';');
                let count: usize = parts
                    .next()
                    .and_then(|n| n.trim().parse().ok())
                    .unwrap_or(0);
                ClientEvent::Ports(parts.take(count).map(|p| p.trim().to_string()).collect())
            }
            b'X' => match header.call_from.address() {
                Ok(call) => ClientEvent::Registered {
                    call,
                    ok: data.first() == Some(&1),
                },
                Err(e) => {
                    ClientEvent::Unreadable(format!("'X' for {:?}: {e}", header.call_from.text()))
                }
            },
            b'C' => {
                let Some(link) = self.link_of(&header) else {
                    return;
                };
                let state = self.links.entry(link).or_default();
                let incoming = !state.calling;
                state.connected = true;
                self.events
                    .push_back(ClientEvent::Connected { link, incoming });
                self.pump(now, link);
                return;
            }
            b'D' => {
                let Some(link) = self.link_of(&header) else {
                    return;
                };
                ClientEvent::Data {
                    link,
                    pid: header.pid,
                    data,
                }
            }
            b'd' => {
                let Some(link) = self.link_of(&header) else {
                    return;
                };
                let state = self.links.remove(&link).unwrap_or_default();
                let text = text_of(&data).trim_end_matches(['\r', '\n']).to_string();
                let sent: u64 =
                    state.handed.iter().sum::<usize>() as u64 + state.queue.len() as u64;
                ClientEvent::Disconnected {
                    link,
                    retry_out: text.contains("RETRYOUT"),
                    text,
                    acknowledged: state.acknowledged,
                    unacknowledged: sent,
                }
            }
            b'Y' => {
                let Some(frames) = data
                    .get(..4)
                    .and_then(|w| w.try_into().ok())
                    .map(u32::from_le_bytes)
                else {
                    self.events
                        .push_back(ClientEvent::Unreadable("'Y' without a count".into()));
                    return;
                };
                let Some(asked) = self.link_of(&header) else {
                    return;
                };
                // The answer echoes our CallFrom and CallTo; take the link
                // either way round, as the AGWPE texts disagree.
                let flipped = Link {
                    port: asked.port,
                    local: asked.remote,
                    remote: asked.local,
                };
                let link = if self.links.contains_key(&flipped) {
                    flipped
                } else {
                    asked
                };
                self.outstanding(now, link, frames);
                ClientEvent::Outstanding { link, frames }
            }
            b'I' | b'S' | b'U' | b'T' => {
                let cut = data.iter().position(|&b| b == b'\r').unwrap_or(data.len());
                let mut info = data.get(cut + 1..).unwrap_or_default().to_vec();
                if info.last() == Some(&0) {
                    info.pop();
                }
                if info.last() == Some(&b'\r') {
                    info.pop();
                }
                ClientEvent::Monitor(MonitorRecord {
                    port: header.port,
                    kind: header.kind,
                    from: header.call_from.text(),
                    to: header.call_to.text(),
                    text: text_of(&data[..cut]),
                    info,
                })
            }
            b'K' => ClientEvent::Raw {
                port: header.port,
                data,
            },
            b'H' => {
                let entry = (!header.call_from.is_empty()).then(|| {
                    let nul = data.iter().position(|&b| b == 0).unwrap_or(data.len());
                    let times = data.get(nul + 1..).unwrap_or_default();
                    HeardEntry {
                        station: header.call_from.text(),
                        text: text_of(&data[..nul]),
                        first: times.get(..16).and_then(system_time),
                        last: times.get(16..32).and_then(system_time),
                    }
                });
                ClientEvent::Heard {
                    port: header.port,
                    entry,
                }
            }
            _ => return,
        };
        self.events.push_back(event);
    }

    /// A 'Y' answer for `link`: the 'D's the peer has acknowledged are
    /// counted, more data goes, and the next question is set.
    fn outstanding(&mut self, now: Instant, link: Link, frames: u32) {
        let every = self.options.query_every;
        let Some(state) = self.links.get_mut(&link) else {
            return;
        };
        if state.querying {
            state.querying = false;
            let known = state.before_query;
            let acked = known.saturating_sub(frames as usize);
            for _ in 0..acked {
                if let Some(n) = state.handed.pop_front() {
                    state.acknowledged += n as u64;
                }
            }
            let after = state.handed.len().saturating_sub(known - acked);
            state.estimate = frames.saturating_add(u32::try_from(after).unwrap_or(u32::MAX));
        }
        self.pump(now, link);
        if let Some(state) = self.links.get_mut(&link) {
            if !state.querying && (!state.handed.is_empty() || !state.queue.is_empty()) {
                state.next_query = Some(now + every);
            }
        }
    }
}

/// A stable order of links: port, then the callsigns as text.
fn order(link: &Link) -> (u8, String, String) {
    (link.port, link.local.to_string(), link.remote.to_string())
}

/// Text up to the first NUL.
fn text_of(data: &[u8]) -> String {
    let end = data.iter().position(|&b| b == 0).unwrap_or(data.len());
    String::from_utf8_lossy(&data[..end]).into_owned()
}

/// A Windows SYSTEMTIME (UTC): year, month, day of week, day, hour,
/// minute, second, milliseconds, 16 bits little endian each; `None` if
/// empty or not a date.
fn system_time(octets: &[u8]) -> Option<SystemTime> {
    let field = |i: usize| {
        octets
            .get(2 * i..2 * i + 2)
            .map_or(0, |w| u16::from_le_bytes([w[0], w[1]]))
    };
    let month = time::Month::try_from(u8::try_from(field(1)).ok()?).ok()?;
    let date =
        time::Date::from_calendar_date(i32::from(field(0)), month, u8::try_from(field(3)).ok()?)
            .ok()?;
    let clock = time::Time::from_hms_milli(
        u8::try_from(field(4)).ok()?,
        u8::try_from(field(5)).ok()?,
        u8::try_from(field(6)).ok()?,
        field(7),
    )
    .ok()?;
    let at = time::PrimitiveDateTime::new(date, clock).assume_utc();
    Some(SystemTime::from(at))
}
