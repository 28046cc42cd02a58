//! An IP host on a KISS port, sans-IO: an [`IpHost`] over AX.25 (VC or
//! datagram mode) fed from the TNC's byte stream, with its frames drained
//! as KISS data frames. The host is smoltcp in this process
//! ([`linklab_ip::Host`], `linklab ip ping/serve/send`) or the kernel's
//! stack behind a TUN device ([`linklab_ip::DatagramPort`], `linklab ip
//! tun`).
//!
//! Like [`Station`](crate::Station) it never does I/O and never reads a
//! clock: the [`ip_driver`](crate::ip_driver) runs it in real time, tests
//! in virtual time.

use linklab_core::{Engine, Instant};
use std::collections::VecDeque;

use linklab_ip::{Ax25Interface, DatagramPort, Host};
use linklab_wire::ax25::{Address, AddressField};
use linklab_wire::control::Modulus;
use linklab_wire::kiss::{self, Port};

use crate::air::{AirClock, AirSettings};
use crate::bad_input::{BadInputCount, BadInputLimiter};
use crate::kiss_input::{KissInput, KissItem};
use crate::station::{Direction, InputError};

/// What an [`IpStation`] reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IpEvent {
    /// A frame sent or received (only with
    /// [`IpStation::set_monitor`]), as in [`crate::StationEvent::Monitor`].
    Monitor {
        /// Sent or received.
        direction: Direction,
        /// The frame's octets (no flags, no FCS).
        bytes: Vec<u8>,
        /// The modulus of the link with the other station (modulo 8 when
        /// there is none).
        modulus: Modulus,
    },
    /// KISS input dropped ([`InputError::Garbage`] or
    /// [`InputError::Kiss`]); after a burst of them, they are counted
    /// instead ([`IpEvent::BadInputCount`]).
    BadInput(InputError),
    /// Bad input dropped without an [`IpEvent::BadInput`] of its own
    /// (see [`BadInputCount`]).
    BadInputCount(BadInputCount),
}

/// The IP host above the AX.25 interface of an [`IpStation`].
pub trait IpHost {
    /// The AX.25 side.
    fn ax25(&self) -> &Ax25Interface;
    /// The AX.25 side, mutable.
    fn ax25_mut(&mut self) -> &mut Ax25Interface;
    /// Lets the host process what came in and hand the AX.25 side what it
    /// has to send.
    fn poll(&mut self, now: Instant);
    /// When [`IpHost::poll`] or the AX.25 side's timers need attention
    /// next.
    fn poll_at(&mut self, now: Instant) -> Option<Instant>;
}

impl IpHost for Host {
    fn ax25(&self) -> &Ax25Interface {
        Host::ax25(self)
    }
    fn ax25_mut(&mut self) -> &mut Ax25Interface {
        Host::ax25_mut(self)
    }
    fn poll(&mut self, now: Instant) {
        Host::poll(self, now);
    }
    fn poll_at(&mut self, now: Instant) -> Option<Instant> {
        Host::poll_at(self, now)
    }
}

/// The kernel's stack: its datagrams come and go through the TUN driver,
/// so polling only serves the AX.25 side.
impl IpHost for DatagramPort {
    fn ax25(&self) -> &Ax25Interface {
        DatagramPort::ax25(self)
    }
    fn ax25_mut(&mut self) -> &mut Ax25Interface {
        DatagramPort::ax25_mut(self)
    }
    fn poll(&mut self, now: Instant) {
        self.ax25_mut().serve(now);
    }
    fn poll_at(&mut self, _now: Instant) -> Option<Instant> {
        DatagramPort::poll_at(self)
    }
}

/// One IP host on one KISS port.
#[derive(Debug)]
pub struct IpStation<H: IpHost = Host> {
    host: H,
    port: Port,
    input: KissInput,
    /// Which bad inputs are reported one by one.
    limiter: BadInputLimiter,
    monitor: bool,
    events: VecDeque<IpEvent>,
    /// When our frames leave the air; T1 is held while they have not.
    air: AirClock,
    /// The channel-busy hint given to the AX.25 side.
    busy: bool,
}

impl<H: IpHost> IpStation<H> {
    /// `host` on KISS port `port`.
    pub fn new(host: H, port: Port) -> IpStation<H> {
        IpStation {
            host,
            port,
            input: KissInput::new(),
            limiter: BadInputLimiter::default(),
            monitor: false,
            events: VecDeque::new(),
            air: AirClock::new(AirSettings::default(), port),
            busy: false,
        }
    }

    /// What the transmit clock knows of the port (ACKMODE, bit rate,
    /// TXDELAY): set before the first frame.
    pub fn set_air(&mut self, settings: AirSettings) {
        self.air = AirClock::new(settings, self.port);
    }

    /// The port's transmit clock.
    pub fn air(&self) -> &AirClock {
        &self.air
    }

    /// Report every frame sent and received as [`IpEvent::Monitor`].
    pub fn set_monitor(&mut self, monitor: bool) {
        self.monitor = monitor;
    }

    /// The KISS port in use.
    pub fn kiss_port(&self) -> Port {
        self.port
    }

    /// The host.
    pub fn host(&self) -> &H {
        &self.host
    }

    /// The host, mutable (its sockets, or the datagrams of a port).
    pub fn host_mut(&mut self) -> &mut H {
        &mut self.host
    }

    /// The KISS decoder's counters.
    pub fn kiss_stats(&self) -> kiss::DecoderStats {
        self.input.stats()
    }

    /// Octets from the TNC, in chunks of any size: data frames on our port
    /// go to the AX.25 interface, damaged input is reported and skipped.
    pub fn handle_kiss_bytes(&mut self, now: Instant, bytes: &[u8]) {
        self.input.push(bytes);
        while let Some(item) = self.input.next(self.port) {
            match item {
                Ok(KissItem::Transmitted(seq)) => {
                    self.air.answered(now, seq);
                    self.sync_busy(now);
                }
                Ok(KissItem::Frame(frame)) => {
                    self.air.heard(now, frame.len());
                    self.sync_busy(now);
                    if let Some(count) = self.limiter.resume() {
                        self.events.push_back(IpEvent::BadInputCount(count));
                    }
                    self.monitor_frame(Direction::Rx, &frame);
                    self.host.ax25_mut().handle_frame(now, &frame);
                }
                Err(error) => {
                    let (due, show) = self.limiter.bad(now, error.octets());
                    if let Some(count) = due {
                        self.events.push_back(IpEvent::BadInputCount(count));
                    }
                    if show {
                        self.events.push_back(IpEvent::BadInput(error));
                    }
                }
            }
        }
    }

    /// Lets smoltcp and the AX.25 side process what came in and send what
    /// they have (call before and after the application acts).
    pub fn poll(&mut self, now: Instant) {
        self.host.poll(now);
    }

    /// KISS octets for the TNC: the next frame to send (a data or ACKMODE
    /// frame, [`AirClock`]), or a frame the clock sends again.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Vec<u8>> {
        if let Some(frame) = self.host.ax25_mut().poll_transmit(now) {
            self.monitor_frame(Direction::Tx, &frame);
            self.air.transmit(now, frame);
        }
        self.sync_busy(now);
        let out = self.air.take_octets();
        (!out.is_empty()).then_some(out)
    }

    /// Gives the AX.25 side the clock's "frames not yet on the air".
    fn sync_busy(&mut self, now: Instant) {
        let busy = self.air.busy(now);
        if busy != self.busy {
            self.busy = busy;
            self.host.ax25_mut().set_channel_busy(now, busy);
        }
    }

    /// The next event.
    pub fn poll_event(&mut self) -> Option<IpEvent> {
        self.events.pop_front()
    }

    /// Reports the bad input counted and not yet reported, if any, as an
    /// [`IpEvent::BadInputCount`] (before the station is dropped).
    pub fn flush_bad_input(&mut self) {
        if let Some(count) = self.limiter.flush() {
            self.events.push_back(IpEvent::BadInputCount(count));
        }
    }

    /// When [`IpStation::poll`] or [`IpStation::handle_timeout`] must next
    /// be called (also when the bad input counted is to be reported).
    pub fn poll_timeout(&mut self, now: Instant) -> Option<Instant> {
        linklab_core::earliest([
            self.host.poll_at(now),
            self.limiter.poll_timeout(),
            self.air.poll_timeout(),
        ])
    }

    /// Runs the AX.25 timers due at `now`, and reports the bad input
    /// counted if its interval is over.
    pub fn handle_timeout(&mut self, now: Instant) {
        if let Some(count) = self.limiter.handle_timeout(now) {
            self.events.push_back(IpEvent::BadInputCount(count));
        }
        self.air.handle_timeout(now);
        self.sync_busy(now);
        self.host.ax25_mut().handle_timeout(now);
    }

    fn monitor_frame(&mut self, direction: Direction, bytes: &[u8]) {
        if !self.monitor {
            return;
        }
        let peer = AddressField::decode(bytes).ok().map(|(field, _)| {
            let a: Address = match direction {
                Direction::Tx => *field.dest(),
                Direction::Rx => *field.source(),
            };
            a
        });
        let modulus = peer
            .and_then(|a| self.host.ax25().link(a))
            .map_or(Modulus::Mod8, |l| l.modulus());
        self.events.push_back(IpEvent::Monitor {
            direction,
            bytes: bytes.to_vec(),
            modulus,
        });
    }
}
