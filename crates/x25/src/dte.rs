//! The DTE packet layer (X.25 (10/96) clauses 3 and 4, time-limits of
//! Annex D): restart (3.3 and 4.5 of ISO 8208), virtual call set-up and
//! clearing (4.1), data transfer (4.3, in `channel.rs`), reset (4.4.3)
//! and interrupts (4.3.2), with the error handling of 3.4 and Annex C.
//!
//! Channel states follow Annex B: r1 packet layer ready, r2 DTE restart
//! request; p1 ready (no [`Channel`] entry), p2 DTE waiting, p3 DCE
//! waiting (an incoming call offered to the user), p4 data transfer, p6
//! DTE clear request; d1 flow control ready, d2 DTE reset request.

use linklab_core::{Engine, Instant};
use std::collections::{BTreeMap, VecDeque};

use linklab_wire::control::Modulus;
use thiserror::Error;

use crate::channel::DataTransfer;
use crate::config::{valid_packet_size, valid_window, Config, ConfigError, Role};
use crate::event::{CallParams, Event};
use crate::packet::cause::{self, diagnostic};
use crate::packet::{
    AddressBlock, AddressFormat, Body, CallFields, DteAddress, Facility, Lci, Packet,
};
use crate::timer::{ChannelTimer, ChannelTimers, LayerTimer, LayerTimers};

/// The state of the packet layer as a whole (Annex B, figure B-1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LayerState {
    /// Not started: waiting for [`Dte::start`] or the peer's restart.
    Down,
    /// r2: RESTART REQUEST sent, T20 running.
    Restarting,
    /// r1: packet layer ready; calls can be made.
    Ready,
}

/// The state of a logical channel (Annex B, figures B-2 and B-3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChannelState {
    /// p1: ready, no call.
    Ready,
    /// p2: CALL REQUEST sent, T21 running.
    Calling,
    /// p3: INCOMING CALL offered to the user.
    Called,
    /// p4 with d1: data transfer, flow control ready.
    DataTransfer,
    /// p4 with d2: RESET REQUEST sent, T22 running.
    Resetting,
    /// p6: CLEAR REQUEST sent, T23 running.
    Clearing,
}

impl ChannelState {
    /// The Annex E "packet type invalid for state" diagnostic (17-29).
    fn invalid_packet_diagnostic(self) -> u8 {
        diagnostic::PACKET_TYPE_INVALID
            + match self {
                ChannelState::Ready => 4,
                ChannelState::Calling => 5,
                ChannelState::Called => 6,
                ChannelState::DataTransfer => 11,
                ChannelState::Resetting => 12,
                ChannelState::Clearing => 10,
            }
    }
}

/// The flow control parameters asked for in a call (6.12): P and W in
/// each direction, from the calling DTE's point of view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Flow {
    from_calling_size: usize,
    from_called_size: usize,
    from_calling_window: u8,
    from_called_window: u8,
}

#[derive(Debug, Clone)]
enum Phase {
    Calling { requested: Flow, d: bool },
    Called { requested: Flow, d: bool },
    Data(Box<DataTransfer>),
    Clearing { cause: u8, diagnostic: Option<u8> },
}

#[derive(Debug, Clone)]
struct Channel {
    modulus: Modulus,
    phase: Phase,
    /// d2: our RESET REQUEST awaits confirmation.
    resetting: bool,
    /// T21, T22 or T23, whichever the phase runs (Annex D).
    timers: ChannelTimers,
    /// Retransmissions so far of the packet the timer guards.
    tries: u8,
}

impl Channel {
    fn state(&self) -> ChannelState {
        match &self.phase {
            Phase::Calling { .. } => ChannelState::Calling,
            Phase::Called { .. } => ChannelState::Called,
            Phase::Data(_) if self.resetting => ChannelState::Resetting,
            Phase::Data(_) => ChannelState::DataTransfer,
            Phase::Clearing { .. } => ChannelState::Clearing,
        }
    }
}

/// What a user wants of an outgoing call.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CallOptions {
    /// The called DTE address.
    pub called: DteAddress,
    /// P asked for, both directions; `None` or the default sends no
    /// packet size facility (6.12).
    pub packet_size: Option<usize>,
    /// W asked for, both directions; `None` or the default sends no
    /// window size facility.
    pub window: Option<u8>,
    /// Ask for the D-bit procedure (4.3.4).
    pub d_bit: bool,
    /// Other facilities, sent as given after the negotiated ones.
    pub facilities: Vec<Facility>,
    /// Call user data, at most 16 octets (e.g. `[0xCC]` for IP, RFC 1356).
    pub user_data: Vec<u8>,
}

/// Why a user request was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RequestError {
    /// Calls need a restarted packet layer (3.3).
    #[error("the packet layer is {0:?}, not ready (restart first)")]
    NotReady(LayerState),
    /// Every logical channel in the range has a call.
    #[error("no free logical channel in {lowest}..={highest}")]
    NoFreeChannel {
        /// Lowest of the range.
        lowest: Lci,
        /// Highest of the range.
        highest: Lci,
    },
    /// The request does not fit the channel's state.
    #[error("{lci} is {state:?}; the request needs {needed}")]
    WrongState {
        /// The channel.
        lci: Lci,
        /// Its state.
        state: ChannelState,
        /// What the request needs.
        needed: &'static str,
    },
    /// A requested packet size or window is not allowed (7.2, 4.4.1.1).
    #[error("facility value not allowed: {0}")]
    Facility(&'static str),
    /// Call user data is at most 16 octets without fast select (5.2.3.1).
    #[error("{0} octets of call user data; at most 16 without fast select")]
    UserDataTooLong(usize),
    /// D = 1 needs the D-bit procedure agreed at call set-up (4.3.4).
    #[error("the D-bit procedure was not agreed on {0}")]
    DBitNotAgreed(Lci),
    /// Interrupt user data is 1 to 32 octets (5.3.2).
    #[error("{0} octets of interrupt user data; 1 to 32 allowed")]
    InterruptLength(usize),
    /// One interrupt at a time (4.3.2).
    #[error("an interrupt on {0} is still unconfirmed")]
    InterruptOutstanding(Lci),
}

/// The packet layer of a DTE: the restart procedure and the virtual calls
/// on its logical channels. See the crate documentation for the poll API.
#[derive(Debug, Clone)]
pub struct Dte {
    config: Config,
    layer: LayerState,
    /// T20 (Annex D).
    timers: LayerTimers,
    restart_tries: u8,
    channels: BTreeMap<Lci, Channel>,
    out: VecDeque<Packet>,
    events: VecDeque<Event>,
}

impl Dte {
    /// A packet layer that is down until [`Dte::start`] or a restart
    /// from the peer.
    pub fn new(config: Config) -> Result<Dte, ConfigError> {
        config.validate()?;
        Ok(Dte {
            config,
            layer: LayerState::Down,
            timers: LayerTimers::default(),
            restart_tries: 0,
            channels: BTreeMap::new(),
            out: VecDeque::new(),
            events: VecDeque::new(),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The packet layer's state.
    pub fn layer_state(&self) -> LayerState {
        self.layer
    }

    /// The state of logical channel `lci`.
    pub fn channel_state(&self, lci: Lci) -> ChannelState {
        self.channels
            .get(&lci)
            .map_or(ChannelState::Ready, Channel::state)
    }

    /// The parameters of the call on `lci`, once in data transfer.
    pub fn call_params(&self, lci: Lci) -> Option<CallParams> {
        match &self.channels.get(&lci)?.phase {
            Phase::Data(dt) => Some(dt.params),
            _ => None,
        }
    }

    /// Data packets sent on `lci` and not yet acknowledged by a P(R).
    pub fn unacknowledged(&self, lci: Lci) -> usize {
        self.data(lci).map_or(0, |dt| dt.unacknowledged())
    }

    /// Data packets queued on `lci` and not yet sent.
    pub fn queued(&self, lci: Lci) -> usize {
        self.data(lci).map_or(0, |dt| dt.queued())
    }

    /// True while an RNR from the peer holds our data on `lci`.
    pub fn peer_busy(&self, lci: Lci) -> bool {
        self.data(lci).is_some_and(|dt| dt.peer_busy())
    }

    fn data(&self, lci: Lci) -> Option<&DataTransfer> {
        match &self.channels.get(&lci)?.phase {
            Phase::Data(dt) => Some(dt),
            _ => None,
        }
    }

    /// Starts the packet layer, as when the link layer comes up: clears
    /// every call and sends RESTART REQUEST (3.3; ISO 8208 does so on
    /// start-up), cause "DTE originated".
    pub fn start(&mut self, now: Instant) {
        self.restart(
            now,
            cause::DTE_ORIGINATED,
            Some(diagnostic::NO_ADDITIONAL_INFORMATION),
        );
    }

    /// The restart procedure (3.3): clears every call (each reported
    /// [`Event::Cleared`]), sends RESTART REQUEST and waits T20.
    pub fn restart(&mut self, now: Instant, cause: u8, diagnostic: Option<u8>) {
        self.clear_all(cause, diagnostic, false);
        self.layer = LayerState::Restarting;
        self.restart_tries = 0;
        self.timers.start(LayerTimer::T20, now, self.config.t20);
        self.out.push_back(restart_request(cause, diagnostic));
    }

    fn clear_all(&mut self, cause: u8, diagnostic: Option<u8>, by_peer: bool) {
        for lci in core::mem::take(&mut self.channels).into_keys() {
            self.events.push_back(Event::Cleared {
                lci,
                cause,
                diagnostic,
                by_peer,
            });
        }
        self.out.retain(|p| p.lci == Lci::ZERO);
    }

    /// Makes a call (4.1.2): CALL REQUEST on the highest free logical
    /// channel (the lowest when playing the DCE), T21 started. Returns
    /// the channel; [`Event::Connected`] or [`Event::Cleared`] follows.
    pub fn call(&mut self, now: Instant, options: CallOptions) -> Result<Lci, RequestError> {
        if self.layer != LayerState::Ready {
            return Err(RequestError::NotReady(self.layer));
        }
        if options.user_data.len() > 16 {
            return Err(RequestError::UserDataTooLong(options.user_data.len()));
        }
        let modulus = self.config.modulus;
        let size = options.packet_size.unwrap_or(self.config.packet_size);
        let window = options.window.unwrap_or(self.config.window);
        if !valid_packet_size(size) {
            return Err(RequestError::Facility(
                "packet size must be 16, 32, ..., 4096",
            ));
        }
        if !valid_window(window, modulus) {
            return Err(RequestError::Facility("window must be below the modulus"));
        }
        let (low, high) = (
            self.config.lowest_channel.value(),
            self.config.highest_channel.value(),
        );
        let free = |v: &u16| !self.channels.contains_key(&Lci::new(*v));
        let lci = match self.config.role {
            Role::Dte => (low..=high).rev().find(free),
            Role::Dce => (low..=high).find(free),
        }
        .map(Lci::new)
        .ok_or(RequestError::NoFreeChannel {
            lowest: self.config.lowest_channel,
            highest: self.config.highest_channel,
        })?;
        let mut facilities = Vec::new();
        if size != self.config.packet_size {
            let log = log2(size);
            facilities.push(Facility::PacketSize {
                from_called: log,
                from_calling: log,
            });
        }
        if window != self.config.window {
            facilities.push(Facility::WindowSize {
                from_called: window,
                from_calling: window,
            });
        }
        facilities.extend(options.facilities);
        self.out.push_back(Packet {
            modulus,
            lci,
            body: Body::CallRequest {
                d: options.d_bit,
                fields: CallFields {
                    address: AddressBlock {
                        format: AddressFormat::Basic,
                        called: options.called,
                        calling: self.config.address.clone(),
                    },
                    facilities,
                    user_data: options.user_data,
                },
            },
        });
        let mut timers = ChannelTimers::default();
        timers.start(ChannelTimer::T21, now, self.config.t21);
        self.channels.insert(
            lci,
            Channel {
                modulus,
                phase: Phase::Calling {
                    requested: Flow {
                        from_calling_size: size,
                        from_called_size: size,
                        from_calling_window: window,
                        from_called_window: window,
                    },
                    d: options.d_bit,
                },
                resetting: false,
                timers,
                tries: 0,
            },
        );
        Ok(lci)
    }

    /// Accepts the incoming call on `lci` (4.1.4): CALL ACCEPTED with the
    /// negotiated packet and window sizes (6.12: each the requested value
    /// if it is at most the default, else the lesser of it and this
    /// DTE's maximum).
    pub fn accept(&mut self, lci: Lci) -> Result<(), RequestError> {
        let config = &self.config;
        let channel = self
            .channels
            .get_mut(&lci)
            .ok_or(RequestError::WrongState {
                lci,
                state: ChannelState::Ready,
                needed: "an incoming call",
            })?;
        let Phase::Called { requested, d } = channel.phase else {
            return Err(RequestError::WrongState {
                lci,
                state: channel.state(),
                needed: "an incoming call",
            });
        };
        let max_window = match channel.modulus {
            Modulus::Mod8 => config.max_window.min(7),
            Modulus::Mod128 => config.max_window,
        };
        let size = |r: usize| {
            if r <= config.packet_size {
                r
            } else {
                r.min(config.max_packet_size)
            }
        };
        let window = |r: u8| {
            if r <= config.window {
                r
            } else {
                r.min(max_window)
            }
        };
        let agreed = Flow {
            from_calling_size: size(requested.from_calling_size),
            from_called_size: size(requested.from_called_size),
            from_calling_window: window(requested.from_calling_window),
            from_called_window: window(requested.from_called_window),
        };
        let mut facilities = Vec::new();
        if requested.from_calling_size != config.packet_size
            || requested.from_called_size != config.packet_size
        {
            facilities.push(Facility::PacketSize {
                from_called: log2(agreed.from_called_size),
                from_calling: log2(agreed.from_calling_size),
            });
        }
        if requested.from_calling_window != config.window
            || requested.from_called_window != config.window
        {
            facilities.push(Facility::WindowSize {
                from_called: agreed.from_called_window,
                from_calling: agreed.from_calling_window,
            });
        }
        let params = CallParams {
            modulus: channel.modulus,
            tx_packet_size: agreed.from_called_size,
            rx_packet_size: agreed.from_calling_size,
            tx_window: agreed.from_called_window,
            rx_window: agreed.from_calling_window,
            d_bit: d,
        };
        let fields = (!facilities.is_empty()).then(|| CallFields {
            address: AddressBlock::default(),
            facilities,
            user_data: Vec::new(),
        });
        channel.phase = Phase::Data(Box::new(DataTransfer::new(params)));
        self.out.push_back(Packet {
            modulus: channel.modulus,
            lci,
            body: Body::CallAccepted { d, fields },
        });
        self.events.push_back(Event::Connected { lci, params });
        Ok(())
    }

    /// Clears the call on `lci`, or refuses its incoming call (4.1.7):
    /// CLEAR REQUEST with `cause` (0 or 0x80-0xFF from a DTE) and
    /// `diagnostic`, T23 started. [`Event::Cleared`] follows.
    pub fn clear(
        &mut self,
        now: Instant,
        lci: Lci,
        cause: u8,
        diagnostic: Option<u8>,
    ) -> Result<(), RequestError> {
        match self.channel_state(lci) {
            ChannelState::Ready | ChannelState::Clearing => Err(RequestError::WrongState {
                lci,
                state: self.channel_state(lci),
                needed: "a call",
            }),
            _ => {
                self.send_clear(now, lci, cause, diagnostic);
                Ok(())
            }
        }
    }

    fn send_clear(&mut self, now: Instant, lci: Lci, cause: u8, diagnostic: Option<u8>) {
        let modulus = self.modulus_of(lci);
        self.out.retain(|p| p.lci != lci);
        let mut timers = ChannelTimers::default();
        timers.start(ChannelTimer::T23, now, self.config.t23);
        self.channels.insert(
            lci,
            Channel {
                modulus,
                phase: Phase::Clearing { cause, diagnostic },
                resetting: false,
                timers,
                tries: 0,
            },
        );
        self.out
            .push_back(clear_request(modulus, lci, cause, diagnostic));
    }

    fn modulus_of(&self, lci: Lci) -> Modulus {
        self.channels
            .get(&lci)
            .map_or(self.config.modulus, |c| c.modulus)
    }

    /// Queues a message on `lci` (4.3): sent as a complete packet
    /// sequence of packets of at most P octets (4.3.5), all with the Q
    /// bit `q`, the last with the D bit `d`.
    pub fn send(&mut self, lci: Lci, data: &[u8], q: bool, d: bool) -> Result<(), RequestError> {
        let dt = self.data_transfer(lci, "data transfer")?;
        if d && !dt.params.d_bit {
            return Err(RequestError::DBitNotAgreed(lci));
        }
        dt.queue_message(q, d, data);
        Ok(())
    }

    /// Our receiver on `lci` becomes busy (RNR sent) or ready again (RR
    /// sent) (4.4.1.3).
    pub fn set_receiver_busy(&mut self, lci: Lci, busy: bool) -> Result<(), RequestError> {
        self.data_transfer(lci, "data transfer")?.set_own_busy(busy);
        Ok(())
    }

    /// Sends an INTERRUPT with 1-32 octets (4.3.2).
    pub fn interrupt(&mut self, lci: Lci, data: &[u8]) -> Result<(), RequestError> {
        if !(1..=32).contains(&data.len()) {
            return Err(RequestError::InterruptLength(data.len()));
        }
        let modulus = self.modulus_of(lci);
        let dt = self.data_transfer(lci, "data transfer")?;
        if dt.interrupt_outstanding {
            return Err(RequestError::InterruptOutstanding(lci));
        }
        dt.interrupt_outstanding = true;
        self.out.push_back(Packet {
            modulus,
            lci,
            body: Body::Interrupt {
                user_data: data.to_vec(),
            },
        });
        Ok(())
    }

    /// Resets the call on `lci` (4.4.3): RESET REQUEST, T22 started;
    /// queued and unacknowledged data are discarded.
    pub fn reset(
        &mut self,
        now: Instant,
        lci: Lci,
        cause: u8,
        diagnostic: Option<u8>,
    ) -> Result<(), RequestError> {
        self.data_transfer(lci, "data transfer")?;
        self.send_reset(now, lci, cause, diagnostic);
        Ok(())
    }

    fn data_transfer(
        &mut self,
        lci: Lci,
        needed: &'static str,
    ) -> Result<&mut DataTransfer, RequestError> {
        let state = self.channel_state(lci);
        match self.channels.get_mut(&lci).map(|c| &mut c.phase) {
            Some(Phase::Data(dt)) if state == ChannelState::DataTransfer => Ok(dt),
            _ => Err(RequestError::WrongState { lci, state, needed }),
        }
    }

    fn send_reset(&mut self, now: Instant, lci: Lci, cause: u8, diagnostic: Option<u8>) {
        let t22 = self.config.t22;
        let Some(channel) = self.channels.get_mut(&lci) else {
            return;
        };
        let Phase::Data(dt) = &mut channel.phase else {
            return;
        };
        dt.reset();
        channel.resetting = true;
        channel.timers.start(ChannelTimer::T22, now, t22);
        channel.tries = 0;
        let modulus = channel.modulus;
        self.out.retain(|p| p.lci != lci);
        self.out.push_back(Packet {
            modulus,
            lci,
            body: Body::ResetRequest { cause, diagnostic },
        });
        self.events.push_back(Event::Reset {
            lci,
            cause,
            diagnostic,
            by_peer: false,
        });
    }

    /// The next event for the user.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// The expiry of `timer` on `lci` (Annex D).
    fn channel_timeout(&mut self, now: Instant, lci: Lci, timer: ChannelTimer) {
        let Some(channel) = self.channels.get_mut(&lci) else {
            return;
        };
        let modulus = channel.modulus;
        match timer {
            ChannelTimer::T21 => self.send_clear(
                now,
                lci,
                cause::DTE_ORIGINATED,
                Some(diagnostic::TIMER_EXPIRED_CALL),
            ),
            ChannelTimer::T22 if channel.tries < self.config.r22 => {
                channel.tries += 1;
                channel
                    .timers
                    .start(ChannelTimer::T22, now, self.config.t22);
                self.out.push_back(Packet {
                    modulus,
                    lci,
                    body: Body::ResetRequest {
                        cause: cause::DTE_ORIGINATED,
                        diagnostic: Some(diagnostic::TIMER_EXPIRED_RESET),
                    },
                });
            }
            ChannelTimer::T22 => self.send_clear(
                now,
                lci,
                cause::DTE_ORIGINATED,
                Some(diagnostic::TIMER_EXPIRED_RESET),
            ),
            ChannelTimer::T23 => {
                // T23 runs in p6 only.
                let Phase::Clearing { cause, diagnostic } = channel.phase else {
                    return;
                };
                if channel.tries < self.config.r23 {
                    channel.tries += 1;
                    channel
                        .timers
                        .start(ChannelTimer::T23, now, self.config.t23);
                    self.out
                        .push_back(clear_request(modulus, lci, cause, diagnostic));
                } else {
                    self.channels.remove(&lci);
                    self.events.push_back(Event::Cleared {
                        lci,
                        cause,
                        diagnostic: Some(diagnostic::TIMER_EXPIRED_CLEAR),
                        by_peer: false,
                    });
                }
            }
        }
    }

    /// Processes received octets (the information field of an I frame).
    /// A packet that does not decode is reported with
    /// [`Event::Undecodable`]; if it names a call in data transfer, that
    /// call is reset, and a call being set up is cleared, with the
    /// error's diagnostic (3.4).
    pub fn handle_octets(&mut self, now: Instant, octets: &[u8]) {
        match Packet::decode(octets) {
            Ok(packet) => self.handle_packet(now, packet),
            Err(error) => {
                if let [first, second, ..] = octets {
                    let lci = Lci::from_parts(first & 0x0F, *second);
                    let code = error.diagnostic();
                    match self.channel_state(lci) {
                        ChannelState::DataTransfer => {
                            self.send_reset(now, lci, cause::DTE_ORIGINATED, Some(code))
                        }
                        ChannelState::Calling | ChannelState::Called => {
                            self.send_clear(now, lci, cause::DTE_ORIGINATED, Some(code))
                        }
                        _ => {}
                    }
                }
                self.events.push_back(Event::Undecodable(error));
            }
        }
    }

    /// Processes a received packet.
    pub fn handle_packet(&mut self, now: Instant, packet: Packet) {
        let lci = packet.lci;
        match packet.body {
            Body::RestartRequest { cause, diagnostic } => {
                return self.on_restart(now, cause, diagnostic)
            }
            Body::RestartConfirmation => {
                if self.layer == LayerState::Restarting {
                    self.layer = LayerState::Ready;
                    self.timers.stop(LayerTimer::T20, now);
                    self.events.push_back(Event::Restarted {
                        cause: cause::DTE_ORIGINATED,
                        diagnostic: Some(diagnostic::NO_ADDITIONAL_INFORMATION),
                        by_peer: false,
                    });
                }
                return;
            }
            Body::Diagnostic { code, explanation } => {
                self.events
                    .push_back(Event::Diagnostic { code, explanation });
                return;
            }
            _ => {}
        }
        if self.layer != LayerState::Ready {
            return;
        }
        let state = self.channel_state(lci);
        if state != ChannelState::Ready
            && self.modulus_of(lci) != packet.modulus
            && state != ChannelState::Clearing
        {
            return self.protocol_error(now, lci, diagnostic::INVALID_GFI);
        }
        match (state, packet.body) {
            (ChannelState::Ready, Body::CallRequest { d, fields }) => {
                self.on_incoming_call(now, lci, packet.modulus, d, fields)
            }
            (ChannelState::Calling, Body::CallRequest { d, fields }) => match self.config.role {
                // Call collision (4.1.5): the DTE's call proceeds; as the
                // DCE we cancel ours and take the incoming one.
                Role::Dte => {}
                Role::Dce => {
                    self.channels.remove(&lci);
                    self.out.retain(|p| p.lci != lci);
                    self.events.push_back(Event::Cleared {
                        lci,
                        cause: cause::DTE_ORIGINATED,
                        diagnostic: Some(diagnostic::CALL_COLLISION),
                        by_peer: false,
                    });
                    self.on_incoming_call(now, lci, packet.modulus, d, fields);
                }
            },
            (ChannelState::Calling, Body::CallAccepted { d, fields }) => {
                self.on_call_connected(now, lci, d, fields)
            }
            (
                ChannelState::Clearing,
                Body::ClearRequest { .. } | Body::ClearConfirmation { .. },
            ) => {
                // Confirmation, or a clear collision (4.1.7).
                if let Some(Channel {
                    phase: Phase::Clearing { cause, diagnostic },
                    ..
                }) = self.channels.remove(&lci)
                {
                    self.events.push_back(Event::Cleared {
                        lci,
                        cause,
                        diagnostic,
                        by_peer: false,
                    });
                }
            }
            (ChannelState::Clearing, _) => {}
            (
                _,
                Body::ClearRequest {
                    cause, diagnostic, ..
                },
            ) => {
                let modulus = self.modulus_of(lci);
                self.out.retain(|p| p.lci != lci);
                self.out.push_back(Packet {
                    modulus,
                    lci,
                    body: Body::ClearConfirmation { fields: None },
                });
                if self.channels.remove(&lci).is_some() {
                    self.events.push_back(Event::Cleared {
                        lci,
                        cause,
                        diagnostic,
                        by_peer: true,
                    });
                }
            }
            (ChannelState::Ready, Body::ClearConfirmation { .. }) => {}
            (ChannelState::DataTransfer | ChannelState::Resetting, body) => {
                self.on_data_phase(now, lci, state, body)
            }
            (state, _) => self.protocol_error(now, lci, state.invalid_packet_diagnostic()),
        }
    }

    /// A packet not allowed in the channel's state: reset a call in data
    /// transfer, clear any other (Annex C, as ISO 8208 has the DTE do).
    fn protocol_error(&mut self, now: Instant, lci: Lci, code: u8) {
        match self.channel_state(lci) {
            ChannelState::DataTransfer => {
                self.send_reset(now, lci, cause::DTE_ORIGINATED, Some(code))
            }
            ChannelState::Ready => {
                // No call to report: answer with CLEAR REQUEST only.
                self.send_clear(now, lci, cause::DTE_ORIGINATED, Some(code));
            }
            ChannelState::Clearing => {}
            _ => self.send_clear(now, lci, cause::DTE_ORIGINATED, Some(code)),
        }
    }

    fn on_restart(&mut self, now: Instant, cause: u8, diagnostic: Option<u8>) {
        match self.layer {
            // Restart collision: the restart is complete, no confirmation.
            LayerState::Restarting => {
                self.layer = LayerState::Ready;
                self.timers.stop(LayerTimer::T20, now);
                self.events.push_back(Event::Restarted {
                    cause,
                    diagnostic,
                    by_peer: false,
                });
            }
            LayerState::Ready | LayerState::Down => {
                self.clear_all(cause, diagnostic, true);
                self.layer = LayerState::Ready;
                self.out.push_back(Packet {
                    modulus: Modulus::Mod8,
                    lci: Lci::ZERO,
                    body: Body::RestartConfirmation,
                });
                self.events.push_back(Event::Restarted {
                    cause,
                    diagnostic,
                    by_peer: true,
                });
            }
        }
    }

    fn on_incoming_call(
        &mut self,
        now: Instant,
        lci: Lci,
        modulus: Modulus,
        d: bool,
        fields: CallFields,
    ) {
        let (low, high) = (self.config.lowest_channel, self.config.highest_channel);
        if lci < low || lci > high {
            return self.send_clear(
                now,
                lci,
                cause::DTE_ORIGINATED,
                Some(diagnostic::UNASSIGNED_LOGICAL_CHANNEL),
            );
        }
        let requested = match self.requested_flow(modulus, &fields.facilities) {
            Ok(flow) => flow,
            Err(code) => {
                // Not offered to the user: the channel goes to p1 on the
                // peer's confirmation, with no call to report.
                return self.send_clear(now, lci, cause::DTE_ORIGINATED, Some(code));
            }
        };
        self.channels.insert(
            lci,
            Channel {
                modulus,
                phase: Phase::Called { requested, d },
                resetting: false,
                timers: ChannelTimers::default(),
                tries: 0,
            },
        );
        self.events.push_back(Event::IncomingCall {
            lci,
            calling: fields.address.calling,
            called: fields.address.called,
            facilities: fields.facilities,
            user_data: fields.user_data,
            modulus,
        });
    }

    /// The flow control parameters a call's facilities ask for, defaults
    /// where absent; `Err` is the diagnostic for a value not allowed.
    fn requested_flow(&self, modulus: Modulus, facilities: &[Facility]) -> Result<Flow, u8> {
        let mut flow = Flow {
            from_calling_size: self.config.packet_size,
            from_called_size: self.config.packet_size,
            from_calling_window: self.config.window,
            from_called_window: self.config.window,
        };
        for facility in facilities {
            match *facility {
                Facility::PacketSize {
                    from_called,
                    from_calling,
                } => {
                    flow.from_called_size = packet_size(from_called)?;
                    flow.from_calling_size = packet_size(from_calling)?;
                }
                Facility::WindowSize {
                    from_called,
                    from_calling,
                } => {
                    for w in [from_called, from_calling] {
                        if !valid_window(w, modulus) {
                            return Err(diagnostic::FACILITY_PARAMETER_NOT_ALLOWED);
                        }
                    }
                    flow.from_called_window = from_called;
                    flow.from_calling_window = from_calling;
                }
                _ => {}
            }
        }
        Ok(flow)
    }

    fn on_call_connected(&mut self, now: Instant, lci: Lci, d: bool, fields: Option<CallFields>) {
        let Some(channel) = self.channels.get(&lci) else {
            return;
        };
        let Phase::Calling {
            requested,
            d: d_requested,
        } = channel.phase
        else {
            return;
        };
        let modulus = channel.modulus;
        let facilities = fields.map(|f| f.facilities).unwrap_or_default();
        // Values absent from CALL CONNECTED are those requested (6.12).
        let agreed = self.requested_flow(modulus, &facilities).map(|f| Flow {
            from_calling_size: pick(
                f.from_calling_size,
                requested.from_calling_size,
                &facilities,
                true,
            ),
            from_called_size: pick(
                f.from_called_size,
                requested.from_called_size,
                &facilities,
                true,
            ),
            from_calling_window: pick(
                f.from_calling_window,
                requested.from_calling_window,
                &facilities,
                false,
            ),
            from_called_window: pick(
                f.from_called_window,
                requested.from_called_window,
                &facilities,
                false,
            ),
        });
        // Each agreed value must lie between the default and the value
        // requested (6.12).
        let default_size = self.config.packet_size;
        let default_window = self.config.window;
        let within = |v: usize, r: usize, d: usize| v >= r.min(d) && v <= r.max(d);
        let agreed = agreed.and_then(|a| {
            let ok = within(
                a.from_calling_size,
                requested.from_calling_size,
                default_size,
            ) && within(a.from_called_size, requested.from_called_size, default_size)
                && within(
                    a.from_calling_window.into(),
                    requested.from_calling_window.into(),
                    default_window.into(),
                )
                && within(
                    a.from_called_window.into(),
                    requested.from_called_window.into(),
                    default_window.into(),
                );
            if ok {
                Ok(a)
            } else {
                Err(diagnostic::FACILITY_PARAMETER_NOT_ALLOWED)
            }
        });
        match agreed {
            Ok(a) => {
                let params = CallParams {
                    modulus,
                    tx_packet_size: a.from_calling_size,
                    rx_packet_size: a.from_called_size,
                    tx_window: a.from_calling_window,
                    rx_window: a.from_called_window,
                    d_bit: d && d_requested,
                };
                if let Some(channel) = self.channels.get_mut(&lci) {
                    channel.phase = Phase::Data(Box::new(DataTransfer::new(params)));
                    channel.timers.stop(ChannelTimer::T21, now);
                }
                self.events.push_back(Event::Connected { lci, params });
            }
            Err(code) => self.send_clear(now, lci, cause::DTE_ORIGINATED, Some(code)),
        }
    }

    fn on_data_phase(&mut self, now: Instant, lci: Lci, state: ChannelState, body: Body) {
        let resetting = state == ChannelState::Resetting;
        let modulus = self.modulus_of(lci);
        let Some(Channel {
            phase: Phase::Data(dt),
            ..
        }) = self.channels.get_mut(&lci)
        else {
            return;
        };
        let outcome: Result<(), u8> = match body {
            Body::ResetRequest { cause, diagnostic } => {
                dt.reset();
                if resetting {
                    // Reset collision (4.4.3): complete, no confirmation.
                    self.reset_done(now, lci);
                } else {
                    self.out.retain(|p| p.lci != lci);
                    self.out.push_back(Packet {
                        modulus,
                        lci,
                        body: Body::ResetConfirmation,
                    });
                    self.events.push_back(Event::Reset {
                        lci,
                        cause,
                        diagnostic,
                        by_peer: true,
                    });
                }
                Ok(())
            }
            Body::ResetConfirmation if resetting => {
                self.reset_done(now, lci);
                Ok(())
            }
            // d2: everything else is discarded until the reset completes.
            _ if resetting => Ok(()),
            Body::Data(data) => dt.receive_data(data).map(|received| {
                for _ in 0..received.confirmed {
                    self.events.push_back(Event::Confirmed { lci });
                }
                if let Some(m) = received.message {
                    self.events.push_back(Event::Data {
                        lci,
                        q: m.q,
                        d: m.d,
                        data: m.data,
                    });
                }
            }),
            Body::ReceiveReady { pr } | Body::ReceiveNotReady { pr } => {
                let busy = matches!(body, Body::ReceiveNotReady { .. });
                dt.receive_flow(pr, busy).map(|confirmed| {
                    for _ in 0..confirmed {
                        self.events.push_back(Event::Confirmed { lci });
                    }
                })
            }
            // REJ is an optional facility this DTE does not subscribe to.
            Body::Reject { .. } => Err(37),
            Body::Interrupt { user_data } => {
                self.out.push_back(Packet {
                    modulus,
                    lci,
                    body: Body::InterruptConfirmation,
                });
                self.events.push_back(Event::Interrupt {
                    lci,
                    data: user_data,
                });
                Ok(())
            }
            Body::InterruptConfirmation if dt.interrupt_outstanding => {
                dt.interrupt_outstanding = false;
                self.events.push_back(Event::InterruptConfirmed { lci });
                Ok(())
            }
            Body::InterruptConfirmation => Err(diagnostic::UNAUTHORIZED_INTERRUPT_CONFIRMATION),
            Body::ResetConfirmation => Err(state.invalid_packet_diagnostic()),
            Body::CallRequest { .. }
            | Body::CallAccepted { .. }
            | Body::ClearConfirmation { .. } => {
                // Call set-up packets in p4: packet type invalid for state p4.
                return self.send_clear(
                    now,
                    lci,
                    cause::DTE_ORIGINATED,
                    Some(diagnostic::PACKET_TYPE_INVALID + 7),
                );
            }
            _ => Err(state.invalid_packet_diagnostic()),
        };
        if let Err(code) = outcome {
            self.send_reset(now, lci, cause::DTE_ORIGINATED, Some(code));
        }
    }

    fn reset_done(&mut self, now: Instant, lci: Lci) {
        if let Some(channel) = self.channels.get_mut(&lci) {
            channel.resetting = false;
            channel.timers.stop(ChannelTimer::T22, now);
        }
    }
}

impl Engine for Dte {
    type Transmit = Packet;

    /// The next packet to send, if any: control packets first, then data
    /// packets each window allows, then due RR/RNR. Call after every
    /// input until it returns `None`.
    fn poll_transmit(&mut self, _now: Instant) -> Option<Self::Transmit> {
        if let Some(packet) = self.out.pop_front() {
            return Some(packet);
        }
        for (&lci, channel) in &mut self.channels {
            if channel.resetting {
                continue;
            }
            if let Phase::Data(dt) = &mut channel.phase {
                if let Some(data) = dt.next_data() {
                    return Some(Packet {
                        modulus: channel.modulus,
                        lci,
                        body: Body::Data(data),
                    });
                }
            }
        }
        for (&lci, channel) in &mut self.channels {
            if channel.resetting {
                continue;
            }
            if let Phase::Data(dt) = &mut channel.phase {
                if let Some((busy, pr)) = dt.next_ack() {
                    let body = if busy {
                        Body::ReceiveNotReady { pr }
                    } else {
                        Body::ReceiveReady { pr }
                    };
                    return Some(Packet {
                        modulus: channel.modulus,
                        lci,
                        body,
                    });
                }
            }
        }
        None
    }

    /// When [`Dte::handle_timeout`] must next be called.
    fn poll_timeout(&self) -> Option<Instant> {
        self.channels
            .values()
            .filter_map(|c| c.timers.next_deadline())
            .chain(self.timers.next_deadline())
            .min()
    }

    /// Runs the expiry of every time-limit due at `now` (Annex D): T20
    /// repeats RESTART REQUEST R20 times, T21 clears the call, T22
    /// repeats RESET REQUEST R22 times and then clears, T23 repeats
    /// CLEAR REQUEST R23 times and then frees the channel. T20 goes
    /// first, then each channel's in channel order, each at most once.
    fn handle_timeout(&mut self, now: Instant) {
        if let Some(LayerTimer::T20) = self.timers.take_expired(now) {
            if self.restart_tries < self.config.r20 {
                self.restart_tries += 1;
                self.timers.start(LayerTimer::T20, now, self.config.t20);
                self.out.push_back(restart_request(
                    cause::DTE_ORIGINATED,
                    Some(diagnostic::NO_ADDITIONAL_INFORMATION),
                ));
            } else {
                self.layer = LayerState::Down;
                self.out.clear();
                self.events.push_back(Event::RestartFailed);
            }
        }
        let due: Vec<(Lci, ChannelTimer)> = self
            .channels
            .iter_mut()
            .filter_map(|(&lci, c)| c.timers.take_expired(now).map(|t| (lci, t)))
            .collect();
        for (lci, timer) in due {
            self.channel_timeout(now, lci, timer);
        }
    }
}

/// For [`Dte::on_call_connected`]: the value CALL CONNECTED gives if its
/// facilities include the one concerned, else the one requested.
fn pick<T: Copy>(given: T, requested: T, facilities: &[Facility], size: bool) -> T {
    let present = facilities.iter().any(|f| {
        if size {
            matches!(f, Facility::PacketSize { .. })
        } else {
            matches!(f, Facility::WindowSize { .. })
        }
    });
    if present {
        given
    } else {
        requested
    }
}

/// The packet size for a facility's logarithm (7.2), or the diagnostic.
fn packet_size(log: u8) -> Result<usize, u8> {
    if (4..=12).contains(&log) {
        Ok(1 << log)
    } else {
        Err(diagnostic::FACILITY_PARAMETER_NOT_ALLOWED)
    }
}

/// Base-2 logarithm of a valid packet size (16..=4096).
fn log2(size: usize) -> u8 {
    // At most 12 for the sizes allowed.
    size.trailing_zeros() as u8
}

fn restart_request(cause: u8, diagnostic: Option<u8>) -> Packet {
    Packet {
        modulus: Modulus::Mod8,
        lci: Lci::ZERO,
        body: Body::RestartRequest { cause, diagnostic },
    }
}

fn clear_request(modulus: Modulus, lci: Lci, cause: u8, diagnostic: Option<u8>) -> Packet {
    Packet {
        modulus,
        lci,
        body: Body::ClearRequest {
            cause,
            diagnostic,
            fields: None,
        },
    }
}
