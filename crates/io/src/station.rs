//! A station: one local callsign and its AX.25 connected-mode links to any
//! number of remote stations over one KISS port, sans-IO.
//!
//! A [`Station`] routes what comes off the port to the [`DataLink`] of the
//! frame's source (AX.25 v2.2 6.1: a link is identified by the pair of
//! addresses), creates a link for a frame from a station it does not know
//! yet so that the engine answers as the SDL says (UA to SABM/SABME when
//! listening, DM otherwise, C4.3 "Disconnected" state), and forgets links
//! that end disconnected. Like the engines it never does I/O and never
//! reads a clock: bytes and time come in as arguments, frames and events
//! are drained by the caller (the [`driver`](crate::driver) in real time,
//! tests in virtual time).

use linklab_core::{Engine, Instant};
use std::collections::{BTreeMap, VecDeque};

use linklab_link::{
    Config, DataLink, DisconnectReason, Event, Framing, InvalidFrame, LinkError, NewLinkError, Pdu,
    RoleError, SendError, State, Stats,
};
use linklab_wire::ax25::{
    Address, AddressError, AddressField, Callsign, CommandResponse, Frame, FrameError, Pid,
};
use linklab_wire::control::{Control, Modulus, Unnumbered};
use linklab_wire::kiss::{self, KissError, Port};
use linklab_wire::monitor::LinkModuli;
use thiserror::Error;

use crate::bad_input::{BadInputCount, BadInputLimiter};
use crate::kiss_input::{KissInput, KissItem};

/// Longest KISS frame accepted: an AX.25 frame with the largest v2.2 N1
/// (2048 octets), a full address field (72) and a two-octet control field
/// and PID.
pub const KISS_MAX_FRAME: usize = 2048 + 72 + 3;

/// A remote station as a map key: callsign and SSID, whatever the C/H and
/// reserved bits of the address it came in.
type Key = (Callsign, u8);

fn key(address: &Address) -> Key {
    (address.callsign(), address.ssid())
}

/// Whether a frame went out or came in, for the monitor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Sent by this station.
    Tx,
    /// Received from the port.
    Rx,
}

/// Links a station keeps at most by default ([`Station::set_max_links`]).
pub const DEFAULT_MAX_LINKS: usize = 64;

/// Octets of a dropped frame quoted in an [`InputError`] message.
const QUOTED_OCTETS: usize = 24;

/// Input that could not be used; the station drops it and goes on. The
/// messages are shown to users: each names what was wrong, whose frame it
/// was when known, and quotes the frame's first octets in hex.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum InputError {
    /// Octets outside any KISS frame: before the first FEND, or after a
    /// damaged frame up to the next FEND (KISS spec, "Asynchronous
    /// framing"). Reported once the decoder finds a frame boundary again.
    #[error("{octets} {} on the KISS port discarded while looking for the start of a frame (FEND, 0xC0)", if *.octets == 1 { "octet" } else { "octets" })]
    Garbage {
        /// How many octets.
        octets: u64,
    },
    /// A damaged KISS frame (bad escape, unknown command, too long); the
    /// decoder resynchronised at the next FEND.
    #[error("damaged KISS frame dropped: {0}")]
    Kiss(#[from] KissError),
    /// A KISS data frame whose AX.25 address field does not decode
    /// (AX.25 v2.2 3.12).
    #[error("{len}-octet AX.25 frame dropped: its address field does not decode: {error} [{}]", quote(.head, *.len))]
    Address {
        /// Length of the frame.
        len: usize,
        /// Its first octets (at most 24).
        head: Vec<u8>,
        /// Why it did not decode.
        error: AddressError,
    },
    /// A frame for us whose control field or layout does not decode with
    /// the modulus of its link (AX.25 v2.2 4.2, 4.3). If a link with its
    /// source exists and the fault is one of the SDL's errors L, M or N
    /// ([`InvalidFrame`]), the link is told too and answers as the SDL
    /// prescribes (re-establishment while connected, C4.3).
    #[error("{len}-octet AX.25 frame from {remote} dropped: {error} (decoded as {modulus}) [{}]", quote(.head, *.len))]
    Frame {
        /// Its source.
        remote: Address,
        /// The modulus tried.
        modulus: Modulus,
        /// Length of the frame.
        len: usize,
        /// Its first octets (at most 24).
        head: Vec<u8>,
        /// Why it did not decode.
        error: FrameError,
    },
    /// A frame from a station with no link while the station already has
    /// [`Station::max_links`] links: no link is kept for it, and it is
    /// answered as a disconnected link that does not listen answers
    /// (DM to a command, AX.25 v2.2 6.3.5, C4.3 state 0).
    #[error("frame from {remote} refused: this station already has {limit} links, the most it keeps (a command is answered DM)")]
    TooManyLinks {
        /// Its source.
        remote: Address,
        /// The limit in force.
        limit: usize,
    },
}

impl InputError {
    /// The octets of input this dropped, where known: the octets
    /// discarded, or the length of the frame dropped; 0 for a damaged
    /// KISS frame (the octets it had are not kept) and for a frame refused
    /// for [`InputError::TooManyLinks`] (which is answered).
    pub fn octets(&self) -> u64 {
        match self {
            InputError::Garbage { octets } => *octets,
            InputError::Address { len, .. } | InputError::Frame { len, .. } => {
                u64::try_from(*len).unwrap_or(u64::MAX)
            }
            InputError::Kiss(_) | InputError::TooManyLinks { .. } => 0,
        }
    }
}

/// `head` in hex, with an ellipsis if the frame (`len` octets) is longer.
fn quote(head: &[u8], len: usize) -> String {
    let mut text: Vec<String> = head.iter().map(|b| format!("{b:02x}")).collect();
    if len > head.len() {
        text.push("...".to_string());
    }
    text.join(" ")
}

/// The first octets of a frame, to quote in an [`InputError`].
fn head(bytes: &[u8]) -> Vec<u8> {
    bytes.iter().take(QUOTED_OCTETS).copied().collect()
}

/// What a [`Station`] reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StationEvent {
    /// An event of the link with `remote` (connected, data, released,
    /// failed, protocol error).
    Link {
        /// The remote station.
        remote: Address,
        /// What happened.
        event: Event,
    },
    /// The number of I frames of the link with `remote` that are queued or
    /// sent and not yet acknowledged changed; zero once all is delivered
    /// (or discarded by a release or failure, reported first).
    Outstanding {
        /// The remote station.
        remote: Address,
        /// `DataLink::unacked() + DataLink::queued()`.
        frames: usize,
        /// Data units [`Station::send`] has accepted for this link so far,
        /// counted when `frames` was: a sender that gives data units of at
        /// most N1 octets knows that all but the last `frames` of them are
        /// acknowledged, whatever it has given since.
        accepted: u64,
    },
    /// The octets given to [`Station::send`] for `remote` and not yet sent
    /// once have fallen to the mark asked for with
    /// [`Station::notify_unsent`] (or were at most that when asked): time
    /// to give more. Reported once per request.
    Unsent {
        /// The remote station.
        remote: Address,
        /// `DataLink::queued_octets()` now.
        octets: usize,
    },
    /// A frame sent or received (only with [`Station::set_monitor`]),
    /// including frames not addressed to this station. `bytes` is the
    /// AX.25 frame; `modulus` the one to decode it with.
    Monitor {
        /// Sent or received.
        direction: Direction,
        /// The frame's octets (no flags, no FCS).
        bytes: Vec<u8>,
        /// The modulus of its link (modulo 8 for others' traffic).
        modulus: Modulus,
    },
    /// Input dropped (see [`InputError`]); after a burst of them, they are
    /// counted instead ([`StationEvent::BadInputCount`]).
    BadInput(InputError),
    /// Bad input dropped without a [`StationEvent::BadInput`] of its own
    /// (see [`BadInputCount`]).
    BadInputCount(BadInputCount),
    /// Late answers on the link with `remote`: F = 1 received with no
    /// P = 1 outstanding (DL-ERROR indication A), as when the peer answers
    /// each of several polls after the first answer ended recovery. The
    /// first of a link's is reported as its [`Event::Error`]; the others
    /// only counted, and reported here just before the link's end
    /// ([`Event::Disconnected`] or [`Event::LinkFailure`]).
    LateFinals {
        /// The remote station.
        remote: Address,
        /// Error A indications not reported one by one (at least 1).
        count: u32,
    },
}

/// Why a user request was not carried out.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum StationError {
    /// No link with that station exists.
    #[error("no link with {remote}")]
    NoLink {
        /// The remote station.
        remote: Address,
    },
    /// A link with that station is already set up or in progress.
    #[error("a link with {remote} already exists: it is {}", state_words(*.state))]
    AlreadyLinked {
        /// The remote station.
        remote: Address,
        /// Its state.
        state: State,
    },
    /// The link could not be built.
    #[error(transparent)]
    NewLink(#[from] NewLinkError),
    /// The station's role cannot honour the request (never for an AX.25
    /// station, which is combined).
    #[error(transparent)]
    Role(#[from] RoleError),
    /// The data was refused.
    #[error("cannot send to {remote}: {error}")]
    Send {
        /// The remote station.
        remote: Address,
        /// Why.
        error: SendError,
    },
}

/// One link and the outstanding count last reported for it.
#[derive(Debug, Clone)]
struct Entry {
    link: DataLink,
    outstanding: usize,
    /// Data units accepted by [`Station::send`] so far.
    accepted: u64,
    /// Report [`StationEvent::Unsent`] once at most this many octets are
    /// queued and unsent ([`Station::notify_unsent`]).
    unsent_mark: Option<usize>,
    /// Disconnect once nothing is outstanding ([`Station::release`]).
    release_when_done: bool,
    /// Error A indications of this link so far ([`StationEvent::LateFinals`]).
    late_finals: u32,
}

impl Entry {
    /// Passes on an event of the link, except error A after the first,
    /// which is counted; before the link's end, the count.
    fn report(&mut self, remote: Address, event: Event, events: &mut VecDeque<StationEvent>) {
        match event {
            Event::Error(LinkError::UnexpectedFinal) => {
                self.late_finals += 1;
                if self.late_finals > 1 {
                    return;
                }
            }
            Event::Disconnected { .. } | Event::LinkFailure { .. } => {
                self.report_late_finals(remote, events)
            }
            _ => {}
        }
        events.push_back(StationEvent::Link { remote, event });
    }

    /// Reports the error A indications counted and not yet reported.
    fn report_late_finals(&mut self, remote: Address, events: &mut VecDeque<StationEvent>) {
        if self.late_finals > 1 {
            events.push_back(StationEvent::LateFinals {
                remote,
                count: self.late_finals - 1,
            });
        }
        self.late_finals = 0;
    }
}

/// A station with callsign `mycall` on one KISS port: the links to remote
/// stations, keyed by the remote's callsign and SSID.
#[derive(Debug, Clone)]
pub struct Station {
    mycall: Address,
    config: Config,
    listening: bool,
    monitor: bool,
    port: Port,
    input: KissInput,
    /// Which bad inputs are reported one by one.
    limiter: BadInputLimiter,
    links: BTreeMap<Key, Entry>,
    /// The counters of the links forgotten ([`Station::ended_stats`]).
    ended: Stats,
    /// Most links kept for remote stations ([`Station::set_max_links`]).
    max_links: usize,
    /// Frames of links not kept (refused or evicted), sent first.
    out: VecDeque<Frame>,
    /// The link served last by `poll_transmit`, for round robin.
    last_served: Option<Key>,
    events: VecDeque<StationEvent>,
    /// The channel-busy hint given to every link ([`Station::set_channel_busy`]).
    channel_busy: bool,
    /// ACKMODE answers from the TNC, for the port's [`crate::AirClock`].
    transmitted: VecDeque<u16>,
    /// The modulus of other stations' links, for the monitor.
    others: LinkModuli,
    /// When a frame was last heard on the port and not yet reported, and
    /// its length in octets ([`Station::poll_heard`]).
    heard: Option<(Instant, usize)>,
}

impl Station {
    /// A station with no links, not listening, on KISS port 0. `config`
    /// applies to every link (its modulus to links this station sets up).
    pub fn new(mycall: Address, config: Config) -> Result<Station, NewLinkError> {
        config.validate()?;
        let mut mycall = mycall;
        mycall.set_c_or_h(false);
        Ok(Station {
            mycall,
            config,
            listening: false,
            monitor: false,
            port: Port::ZERO,
            input: KissInput::new(),
            limiter: BadInputLimiter::default(),
            links: BTreeMap::new(),
            ended: Stats::default(),
            max_links: DEFAULT_MAX_LINKS,
            out: VecDeque::new(),
            last_served: None,
            events: VecDeque::new(),
            channel_busy: false,
            transmitted: VecDeque::new(),
            heard: None,
            others: LinkModuli::new(),
        })
    }

    /// The local callsign.
    pub fn mycall(&self) -> Address {
        self.mycall
    }

    /// The link configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Accept incoming connections (answer SABM/SABME with UA) or refuse
    /// them with DM (C4.1 "DL-CONNECT indication", 6.3.1).
    pub fn set_listening(&mut self, listening: bool) {
        self.listening = listening;
        for entry in self.links.values_mut() {
            entry.link.set_accept_incoming(listening);
        }
    }

    /// Whether incoming connections are accepted.
    pub fn listening(&self) -> bool {
        self.listening
    }

    /// Report every frame sent and received as [`StationEvent::Monitor`].
    pub fn set_monitor(&mut self, monitor: bool) {
        self.monitor = monitor;
    }

    /// Keep at most `max` links (default [`DEFAULT_MAX_LINKS`]), so that
    /// frames from many stations (a flood of SABMs from random callsigns)
    /// cannot grow memory without bound. A frame from a new station beyond
    /// the limit is answered as by a disconnected link that does not
    /// listen, and reported as [`InputError::TooManyLinks`]. Links set up
    /// with [`Station::connect`] count but are never refused.
    pub fn set_max_links(&mut self, max: usize) {
        self.max_links = max;
    }

    /// The most links kept for remote stations.
    pub fn max_links(&self) -> usize {
        self.max_links
    }

    /// Channel hint for every link, present and future: frames of ours
    /// have not left the air yet (the port's [`crate::AirClock`]), so T1
    /// is held still (`DataLink::set_channel_busy`).
    pub fn set_channel_busy(&mut self, now: Instant, busy: bool) {
        if busy == self.channel_busy {
            return;
        }
        self.channel_busy = busy;
        for entry in self.links.values_mut() {
            entry.link.set_channel_busy(now, busy);
        }
    }

    /// When a frame was last heard on our port since the last call, and
    /// its length in octets, for the port's [`crate::AirClock`]
    /// ([`crate::AirClock::heard`]).
    pub fn poll_heard(&mut self) -> Option<(Instant, usize)> {
        self.heard.take()
    }

    /// The next ACKMODE answer the TNC sent on our port: the frame handed
    /// over with that sequence has been transmitted.
    pub fn poll_transmitted(&mut self) -> Option<u16> {
        self.transmitted.pop_front()
    }

    /// The KISS port data frames are taken from (others are ignored).
    pub fn set_kiss_port(&mut self, port: Port) {
        self.port = port;
    }

    /// The KISS port in use.
    pub fn kiss_port(&self) -> Port {
        self.port
    }

    /// The link with `remote`, if any.
    pub fn link(&self, remote: &Address) -> Option<&DataLink> {
        self.links.get(&key(remote)).map(|e| &e.link)
    }

    /// Every link, ordered by remote callsign and SSID.
    pub fn links(&self) -> impl Iterator<Item = &DataLink> {
        self.links.values().map(|e| &e.link)
    }

    /// The KISS decoder's counters (frames, garbage octets, errors).
    pub fn kiss_stats(&self) -> kiss::DecoderStats {
        self.input.stats()
    }

    // ---- input ----

    /// Octets from the TNC's byte stream, in chunks of any size: KISS data
    /// frames on our port go to [`Station::handle_kiss_frame`]; parameter
    /// frames and other ports are ignored; damaged KISS input is reported
    /// as [`InputError::Kiss`] and [`InputError::Garbage`] and skipped.
    pub fn handle_kiss_bytes(&mut self, now: Instant, bytes: &[u8]) {
        self.input.push(bytes);
        while let Some(item) = self.input.next(self.port) {
            match item {
                Ok(KissItem::Frame(data)) => {
                    self.heard = Some((now, data.len()));
                    self.handle_kiss_frame(now, &data)
                }
                Ok(KissItem::Transmitted(seq)) => self.transmitted.push_back(seq),
                Err(error) => self.bad_input(now, error),
            }
        }
    }

    /// One AX.25 frame (the contents of a KISS data frame). Frames for
    /// another station, or still to be repeated by a digipeater, are only
    /// monitored; frames for us go to the link with their source, created
    /// if needed. A frame for us that does not decode is reported as
    /// [`InputError::Frame`] and, if its source has a link, handed to it
    /// with [`DataLink::handle_invalid_frame`] (errors L, M, N).
    pub fn handle_kiss_frame(&mut self, now: Instant, bytes: &[u8]) {
        let (field, used) = match AddressField::decode(bytes) {
            Ok(decoded) => decoded,
            Err(error) => {
                self.monitor_frame(Direction::Rx, bytes, Modulus::Mod8);
                return self.bad_input(
                    now,
                    InputError::Address {
                        len: bytes.len(),
                        head: head(bytes),
                        error,
                    },
                );
            }
        };
        if let Some(count) = self.limiter.resume() {
            self.events.push_back(StationEvent::BadInputCount(count));
        }
        // 6.1 / 3.12.5: a frame is ours once every digipeater in its path
        // has repeated it (H bit set) and its destination is our address.
        let for_us = key(field.dest()) == key(&self.mycall)
            && field.digipeaters().iter().all(Address::c_or_h);
        if !for_us {
            if self.monitor {
                let modulus = self.others.observe(bytes);
                self.monitor_frame(Direction::Rx, bytes, modulus);
            }
            return;
        }
        let remote_key = key(field.source());
        let modulus = match self.links.get(&remote_key) {
            Some(entry) => entry.link.modulus(),
            None => self.config.modulus,
        };
        self.monitor_frame(Direction::Rx, bytes, modulus);
        let frame = match Frame::decode(bytes, modulus) {
            Ok(frame) => frame,
            Err(error) => {
                let invalid = InvalidFrame::of(&error);
                self.bad_input(
                    now,
                    InputError::Frame {
                        remote: plain(field.source()),
                        modulus,
                        len: bytes.len(),
                        head: head(bytes),
                        error,
                    },
                );
                // A frame of an existing link with a bad control field
                // or layout: errors L, M, N (C4.3); the link answers.
                let rest = bytes.get(used..).unwrap_or_default();
                let command = field.command_response() == CommandResponse::Command;
                if let (Some(invalid), Some(entry)) = (invalid, self.links.get_mut(&remote_key)) {
                    let control = control_octets(rest, modulus);
                    entry
                        .link
                        .handle_invalid_frame(now, invalid, control, command);
                    self.collect(remote_key, Some(now));
                }
                return;
            }
        };
        if !self.links.contains_key(&remote_key) {
            // Answer over the reverse path (3.12.5).
            let via: Vec<Address> = field.digipeaters().iter().rev().copied().collect();
            let remote = plain(field.source());
            let Ok(link) = DataLink::new(self.config.clone(), self.mycall, remote, &via) else {
                // Unreachable: the config was validated and a decoded
                // field has at most 8 digipeaters.
                return;
            };
            if self.links.len() >= self.max_links {
                self.evict_disconnected(now);
            }
            if self.links.len() >= self.max_links {
                self.bad_input(
                    now,
                    InputError::TooManyLinks {
                        remote,
                        limit: self.max_links,
                    },
                );
                return self.answer_without_link(now, link, &frame);
            }
            self.insert(now, link);
        }
        if let Some(entry) = self.links.get_mut(&remote_key) {
            entry.link.handle_frame(now, &frame);
        }
        self.collect(remote_key, Some(now));
    }

    // ---- user requests ----

    /// DL-CONNECT request to `remote` through the digipeaters `via`:
    /// SABME if the configured modulus is 128, else SABM.
    pub fn connect(
        &mut self,
        now: Instant,
        remote: Address,
        via: &[Address],
    ) -> Result<(), StationError> {
        let remote = plain(&remote);
        if let Some(entry) = self.links.get(&key(&remote)) {
            let state = entry.link.state();
            if state != State::Disconnected {
                return Err(StationError::AlreadyLinked { remote, state });
            }
        }
        let link = DataLink::new(self.config.clone(), self.mycall, remote, via)?;
        let k = self.insert(now, link);
        if let Some(entry) = self.links.get_mut(&k) {
            entry.link.connect(now)?;
        }
        self.collect(k, Some(now));
        Ok(())
    }

    /// DL-DATA request: queues `data` (at most N1 octets on a v2.0 link;
    /// segmented on a v2.2 link) for `remote`.
    pub fn send(&mut self, remote: &Address, data: Vec<u8>) -> Result<(), StationError> {
        self.send_with_pid(remote, Pid::NoLayer3, data)
    }

    /// DL-DATA request with the layer 3 protocol `pid` (AX.25 v2.2 3.4),
    /// as [`Station::send`].
    pub fn send_with_pid(
        &mut self,
        remote: &Address,
        pid: Pid,
        data: Vec<u8>,
    ) -> Result<(), StationError> {
        let k = key(remote);
        let entry = self
            .links
            .get_mut(&k)
            .ok_or(StationError::NoLink { remote: *remote })?;
        entry
            .link
            .send_with_pid(pid, data)
            .map_err(|error| StationError::Send {
                remote: *remote,
                error,
            })?;
        entry.accepted += 1;
        self.collect(k, None);
        Ok(())
    }

    /// Octets given to [`Station::send`] for `remote` and not yet sent once
    /// (the link's I frame queue), or `None` with no link.
    pub fn unsent_octets(&self, remote: &Address) -> Option<usize> {
        self.link(remote).map(DataLink::queued_octets)
    }

    /// Asks for one [`StationEvent::Unsent`] as soon as at most `octets`
    /// given to [`Station::send`] for `remote` are unsent (at once if that
    /// is so already), replacing an earlier request. A sender feeding the
    /// link from a stream gives more when told, so the link always has a
    /// window's worth to send and memory does not grow with the stream.
    pub fn notify_unsent(&mut self, remote: &Address, octets: usize) -> Result<(), StationError> {
        let k = key(remote);
        let entry = self
            .links
            .get_mut(&k)
            .ok_or(StationError::NoLink { remote: *remote })?;
        entry.unsent_mark = Some(octets);
        self.collect(k, None);
        Ok(())
    }

    /// DL-DISCONNECT request to `remote`.
    pub fn disconnect(&mut self, now: Instant, remote: &Address) -> Result<(), StationError> {
        let k = key(remote);
        let entry = self
            .links
            .get_mut(&k)
            .ok_or(StationError::NoLink { remote: *remote })?;
        entry.link.disconnect(now)?;
        self.collect(k, Some(now));
        Ok(())
    }

    /// Orderly release: DL-DISCONNECT request to `remote` as soon as all
    /// data given to [`Station::send`] has been acknowledged (at once if
    /// none is outstanding), since a disconnect discards queued and
    /// unacknowledged data (fig. C4.4a).
    pub fn release(&mut self, now: Instant, remote: &Address) -> Result<(), StationError> {
        let k = key(remote);
        let entry = self
            .links
            .get_mut(&k)
            .ok_or(StationError::NoLink { remote: *remote })?;
        entry.release_when_done = true;
        self.collect(k, Some(now));
        Ok(())
    }

    /// Ends the link with `remote` at once, without waiting for an
    /// answer: queued and unacknowledged data are discarded, a DM response
    /// (F = 0) tells the peer that this station is disconnected (AX.25
    /// v2.2 4.3.3.5), and the link is forgotten. A peer in the connected
    /// states takes that DM as a link ended by the other side (fig. C4.4,
    /// "DM": DL-ERROR indication E, DL-DISCONNECT indication), unlike an
    /// orderly release with DISC, so it can tell a cut transfer from a
    /// complete one. Reported as a disconnection at our request.
    pub fn abort(&mut self, remote: &Address) -> Result<(), StationError> {
        let k = key(remote);
        let mut entry = self
            .links
            .remove(&k)
            .ok_or(StationError::NoLink { remote: *remote })?;
        let link = &entry.link;
        let remote = link.remote();
        if link.state() != State::Disconnected {
            let dm = Pdu {
                command: false,
                control: Control::U {
                    kind: Unnumbered::Dm,
                    pf: false,
                },
                modulus: link.modulus(),
                pid: None,
                info: Vec::new(),
            };
            self.out.extend(link.framing().encode(dm));
            let event = Event::Disconnected {
                reason: DisconnectReason::LocalRequest,
            };
            entry.report(remote, event, &mut self.events);
        }
        if entry.outstanding != 0 {
            self.events.push_back(StationEvent::Outstanding {
                remote,
                frames: 0,
                accepted: entry.accepted,
            });
        }
        Ok(())
    }

    /// DL-DISCONNECT request on every link.
    pub fn disconnect_all(&mut self, now: Instant) {
        let keys: Vec<Key> = self.links.keys().copied().collect();
        for k in keys {
            if let Some(entry) = self.links.get_mut(&k) {
                // Always honoured: an AX.25 station is combined.
                let _ = entry.link.disconnect(now);
            }
            self.collect(k, Some(now));
        }
    }

    // ---- output ----

    /// The next event.
    pub fn poll_event(&mut self) -> Option<StationEvent> {
        self.events.pop_front()
    }

    /// Reports the bad input counted and not yet reported, if any, as a
    /// [`StationEvent::BadInputCount`] (before the station is dropped).
    pub fn flush_bad_input(&mut self) {
        if let Some(count) = self.limiter.flush() {
            self.events.push_back(StationEvent::BadInputCount(count));
        }
    }

    // ---- internals ----

    fn insert(&mut self, now: Instant, mut link: DataLink) -> Key {
        link.set_accept_incoming(self.listening);
        if self.channel_busy {
            link.set_channel_busy(now, true);
        }
        let k = key(&link.remote());
        let replaced = self.links.insert(
            k,
            Entry {
                link,
                outstanding: 0,
                accepted: 0,
                unsent_mark: None,
                release_when_done: false,
                late_finals: 0,
            },
        );
        if let Some(old) = replaced {
            self.ended.add(old.link.stats());
        }
        k
    }

    /// The counters of every link this station has forgotten (a
    /// disconnected link is forgotten at once), added up.
    pub fn ended_stats(&self) -> &Stats {
        &self.ended
    }

    /// Forgets the disconnected links, keeping the frames they have left to
    /// send (a DM, say) and reporting their events.
    fn evict_disconnected(&mut self, now: Instant) {
        let gone: Vec<Key> = self
            .links
            .iter()
            .filter(|(_, e)| e.link.state() == State::Disconnected)
            .map(|(k, _)| *k)
            .collect();
        for k in gone {
            if let Some(entry) = self.links.get_mut(&k) {
                while let Some(frame) = entry.link.poll_transmit(now) {
                    self.out.push_back(frame);
                }
            }
            self.collect(k, Some(now));
            if let Some(entry) = self.links.remove(&k) {
                self.ended.add(entry.link.stats());
            }
        }
    }

    /// Lets `link`, new and disconnected, not listening, answer `frame`,
    /// then forgets it: its frames and events are kept.
    fn answer_without_link(&mut self, now: Instant, mut link: DataLink, frame: &Frame) {
        link.set_accept_incoming(false);
        link.handle_frame(now, frame);
        while let Some(frame) = link.poll_transmit(now) {
            self.out.push_back(frame);
        }
        let remote = link.remote();
        while let Some(event) = link.poll_event() {
            self.events.push_back(StationEvent::Link { remote, event });
        }
    }

    /// Moves the link's events to the station's queue, tagged with the
    /// remote, and reports a change of its outstanding count and unsent
    /// octets at the mark asked for.
    /// With `now`, also starts a release asked for by [`Station::release`]
    /// once nothing is outstanding.
    fn collect(&mut self, k: Key, now: Option<Instant>) {
        let Some(entry) = self.links.get_mut(&k) else {
            return;
        };
        let remote = entry.link.remote();
        if let Some(now) = now {
            let idle = entry.link.unacked() + entry.link.queued() == 0;
            if entry.release_when_done && idle {
                entry.release_when_done = false;
                // Always honoured: an AX.25 station is combined.
                let _ = entry.link.disconnect(now);
            }
        }
        while let Some(event) = entry.link.poll_event() {
            entry.report(remote, event, &mut self.events);
        }
        let frames = entry.link.unacked() + entry.link.queued();
        if frames != entry.outstanding {
            entry.outstanding = frames;
            self.events.push_back(StationEvent::Outstanding {
                remote,
                frames,
                accepted: entry.accepted,
            });
        }
        let octets = entry.link.queued_octets();
        if entry.unsent_mark.is_some_and(|mark| octets <= mark) {
            entry.unsent_mark = None;
            self.events
                .push_back(StationEvent::Unsent { remote, octets });
        }
    }

    fn monitor_frame(&mut self, direction: Direction, bytes: &[u8], modulus: Modulus) {
        if self.monitor {
            self.events.push_back(StationEvent::Monitor {
                direction,
                bytes: bytes.to_vec(),
                modulus,
            });
        }
    }

    /// Reports `error`, or counts it after a burst ([`BadInputLimiter`]).
    fn bad_input(&mut self, now: Instant, error: InputError) {
        let (due, show) = self.limiter.bad(now, error.octets());
        if let Some(count) = due {
            self.events.push_back(StationEvent::BadInputCount(count));
        }
        if show {
            self.events.push_back(StationEvent::BadInput(error));
        }
    }
}

impl Engine for Station {
    type Transmit = Frame;

    /// The next frame to send, taking the links in turn. Links that are
    /// disconnected with nothing left to send are forgotten here.
    fn poll_transmit(&mut self, now: Instant) -> Option<Self::Transmit> {
        if let Some(frame) = self.out.pop_front() {
            self.monitor_frame(Direction::Tx, &frame.encode(), frame.modulus());
            return Some(frame);
        }
        let keys: Vec<Key> = match self.last_served {
            Some(last) => {
                let after = self.links.range((
                    core::ops::Bound::Excluded(last),
                    core::ops::Bound::Unbounded,
                ));
                let upto = self.links.range(..=last);
                after.chain(upto).map(|(k, _)| *k).collect()
            }
            None => self.links.keys().copied().collect(),
        };
        for k in keys {
            let Some(entry) = self.links.get_mut(&k) else {
                continue;
            };
            if let Some(frame) = entry.link.poll_transmit(now) {
                self.last_served = Some(k);
                self.collect(k, Some(now));
                self.monitor_frame(Direction::Tx, &frame.encode(), frame.modulus());
                return Some(frame);
            }
            self.collect(k, Some(now));
        }
        let ended = &mut self.ended;
        self.links.retain(|_, e| {
            let keep = e.link.state() != State::Disconnected;
            if !keep {
                ended.add(e.link.stats());
            }
            keep
        });
        None
    }

    /// When [`Station::handle_timeout`] must next be called: a link's
    /// timer, or the report of bad input counted.
    fn poll_timeout(&self) -> Option<Instant> {
        self.links
            .values()
            .filter_map(|e| e.link.poll_timeout())
            .chain(self.limiter.poll_timeout())
            .min()
    }

    /// Runs the timers of every link due at `now`, and reports the bad
    /// input counted if its interval is over.
    fn handle_timeout(&mut self, now: Instant) {
        if let Some(count) = self.limiter.handle_timeout(now) {
            self.events.push_back(StationEvent::BadInputCount(count));
        }
        let due: Vec<Key> = self
            .links
            .iter()
            .filter(|(_, e)| e.link.poll_timeout().is_some_and(|t| t <= now))
            .map(|(k, _)| *k)
            .collect();
        for k in due {
            if let Some(entry) = self.links.get_mut(&k) {
                entry.link.handle_timeout(now);
            }
            self.collect(k, Some(now));
        }
    }
}

/// A link state as a user reads it (AX.25 v2.2 C4.3 state names).
fn state_words(state: State) -> &'static str {
    match state {
        State::Disconnected => "disconnected",
        State::AwaitingConnection | State::AwaitingConnection2_2 => {
            "being set up (SABM/SABME sent, awaiting UA)"
        }
        State::AwaitingRelease => "being released (DISC sent, awaiting UA)",
        State::Connected => "connected",
        State::TimerRecovery => "connected (timer recovery: awaiting an answer to a poll)",
    }
}

/// The address with C/H clear and the reserved bits as [`Address::new`]
/// sets them.
fn plain(address: &Address) -> Address {
    Address::new(address.callsign(), address.ssid()).unwrap_or(*address)
}

/// The control field at the start of `rest` as far as it is there: one
/// octet, two for an I or S frame of a modulo-128 link (AX.25 v2.2 4.2).
fn control_octets(rest: &[u8], modulus: Modulus) -> &[u8] {
    let numbered = rest.first().is_some_and(|first| first & 0x03 != 0x03);
    let len = if numbered { modulus.numbered_len() } else { 1 };
    rest.get(..len).unwrap_or(rest)
}
