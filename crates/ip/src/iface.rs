//! The AX.25 side of an IP interface: IP datagrams in I frames of a
//! connected-mode [`DataLink`] per neighbour (virtual-circuit mode, Linux
//! `axparms --route add ... --ipmode V`) or in UI frames (datagram mode), PID 0xCC
//! (AX.25 v2.2 3.4, fig. 3.2); ARP in UI frames, PID 0xCD.
//!
//! Sans-IO like the link engine: received frames come in through
//! [`Ax25Interface::handle_frame`], time through
//! [`Ax25Interface::handle_timeout`], frames to put on the channel are
//! drained with [`Ax25Interface::poll_transmit`]. smoltcp works on the
//! [`Ax25Device`] ([`Ax25Interface::device_mut`]); [`Ax25Interface::serve`]
//! moves datagrams between the device's queues and AX.25.
//!
//! # Next hop
//! Every destination is on the link (no gateways, no digipeaters): the
//! destination address of a datagram is looked up in the neighbour table,
//! first the static entries ([`Ax25Config::neighbours`]), then the entries
//! ARP learned (IPv4 only). A datagram to an IPv4 address not in the table
//! waits (at most [`ARP_PENDING`] per address) while an ARP request asks
//! for it; the request is repeated at most once a second, when a new
//! datagram for that address comes, up to [`ARP_TRIES`] times, and the
//! waiting datagrams are then dropped. IPv6 needs static entries.
//!
//! # MTU and segmentation
//! A UI frame carries at most N1 octets and cannot be segmented (6.6), so
//! datagram mode needs MTU ≤ N1. In VC mode an MTU above N1 is carried by
//! the segmenter (PID 0x08, 6.6) of a v2.2 link (SABME, modulo 128, XID
//! agreeing segmentation), as IPv6's 1280-octet minimum MTU (RFC 8200 5)
//! needs on a 256-octet N1.

use core::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use linklab_core::{Engine, Instant};
use std::collections::VecDeque;

use linklab_link::{Config as LinkConfig, DataLink, Event, NewLinkError, State};
use linklab_wire::ax25::{Address, AddressField, Frame, Pid, MAX_REMAINING};
use linklab_wire::control::{Control, Modulus, Unnumbered};
use thiserror::Error;

use crate::arp::{plain, ArpPacket, Operation};
use crate::device::Ax25Device;

/// Most datagrams kept per IPv4 address while ARP resolves it (as Linux's
/// `unres_qlen` default of 3 packets on old kernels).
pub const ARP_PENDING: usize = 3;
/// ARP requests sent for one address before its waiting datagrams are
/// dropped.
pub const ARP_TRIES: u32 = 3;
/// Shortest interval between two ARP requests for one address, µs.
const ARP_RETRY_US: u64 = 1_000_000;

/// How IP datagrams travel (Linux `axparms --route add ... --ipmode V|D`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Encapsulation {
    /// In I frames of a connected-mode link to the neighbour, set up on
    /// the first datagram: acknowledged and retransmitted by AX.25.
    VirtualCircuit,
    /// In UI frames: unacknowledged; losses are left to IP's users.
    Datagram,
}

/// Configuration of one AX.25 IP interface.
#[derive(Debug, Clone, PartialEq)]
pub struct Ax25Config {
    /// This station's AX.25 address.
    pub local: Address,
    /// VC or datagram mode.
    pub encapsulation: Encapsulation,
    /// IP MTU, octets (Ronan et al. Table IV: 168-936 for IPv4; at least
    /// 1280 for IPv6).
    pub mtu: usize,
    /// Datagrams smoltcp may queue before the AX.25 side takes them.
    pub tx_queue_len: usize,
    /// The data link parameters of the VC links; in datagram mode only
    /// N1 matters (the largest UI information field).
    pub link: LinkConfig,
    /// This interface's IPv4 address, answered in ARP; `None`: no ARP.
    pub arp_ipv4: Option<Ipv4Addr>,
    /// Static neighbour table: IP address → AX.25 address.
    pub neighbours: Vec<(IpAddr, Address)>,
    /// Neighbours reached in another mode than `encapsulation` (Linux
    /// `axparms --route add ... CALL --ipmode V|D`).
    pub modes: Vec<(Address, Encapsulation)>,
}

impl Ax25Config {
    /// A VC-mode interface for `local` with MTU `mtu` over `link`.
    pub fn new(local: Address, mtu: usize, link: LinkConfig) -> Ax25Config {
        Ax25Config {
            local,
            encapsulation: Encapsulation::VirtualCircuit,
            mtu,
            tx_queue_len: 32,
            link,
            arp_ipv4: None,
            neighbours: Vec::new(),
            modes: Vec::new(),
        }
    }

    /// How datagrams to the neighbour `hw` travel.
    pub fn mode_of(&self, hw: Address) -> Encapsulation {
        let hw = plain(hw);
        self.modes
            .iter()
            .find(|(a, _)| plain(*a) == hw)
            .map_or(self.encapsulation, |(_, m)| *m)
    }
}

/// Why an interface configuration was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Ax25ConfigError {
    /// The data link parameters are invalid.
    #[error("data link configuration refused: {0}")]
    Link(#[from] NewLinkError),
    /// MTU below IPv4's minimum of 68 octets (RFC 791).
    #[error("MTU {mtu} is below the 68 octets every IPv4 link must carry (RFC 791)")]
    MtuTooSmall {
        /// The MTU.
        mtu: usize,
    },
    /// A UI frame cannot carry an MTU-sized datagram.
    #[error("datagram mode needs MTU <= N1, but MTU {mtu} > N1 {n1} (UI frames cannot be segmented, AX.25 6.6)")]
    MtuAboveN1 {
        /// The MTU.
        mtu: usize,
        /// N1.
        n1: usize,
    },
    /// A modulo-8 VC link cannot carry a datagram longer than N1: the
    /// segmenter needs modulo 128.
    #[error(
        "VC mode with MTU {mtu} > N1 {n1} needs the segmenter, that is a modulo-128 (v2.2) link"
    )]
    MtuNeedsMod128 {
        /// The MTU.
        mtu: usize,
        /// N1.
        n1: usize,
    },
    /// A modulo-128 VC link cannot carry an MTU-sized datagram even
    /// segmented.
    #[error("VC mode with MTU {mtu} > N1 {n1} segments each datagram, and 128 segments carry at most {max} octets")]
    MtuNeedsSegmenter {
        /// The MTU.
        mtu: usize,
        /// N1.
        n1: usize,
        /// Largest segmented data unit (128 segments).
        max: usize,
    },
}

/// Counters of one interface.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Ax25Stats {
    /// IP datagrams handed to AX.25 (I or UI).
    pub datagrams_sent: u64,
    /// IP datagrams received and given to smoltcp.
    pub datagrams_received: u64,
    /// Datagrams dropped: no neighbour entry and no ARP answer.
    pub dropped_unresolved: u64,
    /// Datagrams dropped: the VC link failed or was refused.
    pub dropped_link_down: u64,
    /// ARP requests sent.
    pub arp_requests: u64,
    /// ARP replies sent.
    pub arp_replies: u64,
    /// Frames received that were not for this station.
    pub frames_ignored: u64,
    /// Frames for this station that did not decode.
    pub frames_undecodable: u64,
    /// VC link failures (N2 exhausted).
    pub link_failures: u64,
}

/// One neighbour's virtual circuit and the datagrams waiting for it.
#[derive(Debug)]
struct Circuit {
    link: DataLink,
    waiting: VecDeque<Vec<u8>>,
}

/// A datagram waiting for ARP.
#[derive(Debug)]
struct Unresolved {
    ip: Ipv4Addr,
    waiting: VecDeque<Vec<u8>>,
    last_request: Instant,
    tries: u32,
}

/// The AX.25 side of an IP interface (see the module documentation).
#[derive(Debug)]
pub struct Ax25Interface {
    config: Ax25Config,
    device: Ax25Device,
    circuits: Vec<(Address, Circuit)>,
    learned: Vec<(Ipv4Addr, Address)>,
    unresolved: Vec<Unresolved>,
    out: VecDeque<Frame>,
    stats: Ax25Stats,
    link_errors: Vec<String>,
    /// The latest datagrams dropped because ARP got no answer (at most
    /// [`ARP_PENDING`] × 4), for a host that reports them (the kernel's
    /// "Destination Host Unreachable", [`crate::DatagramPort`]).
    unreachable: VecDeque<Vec<u8>>,
    /// The channel-busy hint in force, for circuits made later.
    channel_busy: bool,
}

/// The broadcast address of AX.25 IP and ARP, `QST-0`.
pub fn broadcast() -> Address {
    "QST"
        .parse()
        .expect("QST-0 is a valid AX.25 address (six characters at most, A-Z)")
}

/// Largest data unit the segmenter carries with information fields of
/// `n1` octets (6.6: 128 segments; the first loses 2 octets to the
/// segment header and PID, the others 1).
fn max_segmented(n1: usize) -> usize {
    n1.saturating_sub(2) + usize::from(MAX_REMAINING) * n1.saturating_sub(1)
}

/// The destination address of an IPv4 or IPv6 datagram: octets 16 to 19
/// of an IPv4 header (RFC 791 section 3.1), 24 to 39 of an IPv6 header
/// (RFC 8200 section 3).
pub(crate) fn destination(datagram: &[u8]) -> Option<IpAddr> {
    match datagram.first()? >> 4 {
        4 => {
            let d: [u8; 4] = datagram.get(16..20)?.try_into().ok()?;
            Some(IpAddr::V4(Ipv4Addr::from(d)))
        }
        6 => {
            let d: [u8; 16] = datagram.get(24..40)?.try_into().ok()?;
            Some(IpAddr::V6(Ipv6Addr::from(d)))
        }
        _ => None,
    }
}

impl Ax25Interface {
    /// An interface with no links up yet.
    pub fn new(config: Ax25Config) -> Result<Ax25Interface, Ax25ConfigError> {
        config.link.validate().map_err(NewLinkError::from)?;
        let (mtu, n1) = (config.mtu, config.link.n1);
        if mtu < 68 {
            return Err(Ax25ConfigError::MtuTooSmall { mtu });
        }
        let datagram_anywhere = config.encapsulation == Encapsulation::Datagram
            || config
                .modes
                .iter()
                .any(|(_, m)| *m == Encapsulation::Datagram);
        let encapsulation = if datagram_anywhere {
            Encapsulation::Datagram
        } else {
            Encapsulation::VirtualCircuit
        };
        match encapsulation {
            Encapsulation::Datagram if mtu > n1 => {
                return Err(Ax25ConfigError::MtuAboveN1 { mtu, n1 })
            }
            Encapsulation::VirtualCircuit if mtu > n1 => {
                if config.link.modulus == Modulus::Mod8 {
                    return Err(Ax25ConfigError::MtuNeedsMod128 { mtu, n1 });
                }
                let max = max_segmented(n1);
                if mtu > max {
                    return Err(Ax25ConfigError::MtuNeedsSegmenter { mtu, n1, max });
                }
            }
            _ => {}
        }
        Ok(Ax25Interface {
            device: Ax25Device::new(mtu, config.tx_queue_len),
            config,
            circuits: Vec::new(),
            learned: Vec::new(),
            unresolved: Vec::new(),
            out: VecDeque::new(),
            stats: Ax25Stats::default(),
            link_errors: Vec::new(),
            unreachable: VecDeque::new(),
            channel_busy: false,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &Ax25Config {
        &self.config
    }

    /// The device smoltcp polls.
    pub fn device_mut(&mut self) -> &mut Ax25Device {
        &mut self.device
    }

    /// The device (for its counters).
    pub fn device(&self) -> &Ax25Device {
        &self.device
    }

    /// The counters.
    pub fn stats(&self) -> Ax25Stats {
        self.stats
    }

    /// Protocol errors the VC links reported (DL-ERROR indications), in
    /// order, as text.
    pub fn link_errors(&self) -> &[String] {
        &self.link_errors
    }

    /// The next datagram dropped because ARP got no answer for its
    /// destination, oldest first.
    pub fn take_unreachable(&mut self) -> Option<Vec<u8>> {
        self.unreachable.pop_front()
    }

    /// The VC link to `neighbour`, if one was set up.
    pub fn link(&self, neighbour: Address) -> Option<&DataLink> {
        let neighbour = plain(neighbour);
        self.circuits
            .iter()
            .find(|(a, _)| *a == neighbour)
            .map(|(_, c)| &c.link)
    }

    /// The AX.25 address of `ip`: a static entry, else one ARP learned.
    pub fn neighbour(&self, ip: IpAddr) -> Option<Address> {
        let fixed = self.config.neighbours.iter().find(|(a, _)| *a == ip);
        let learned = || match ip {
            IpAddr::V4(v4) => self.learned.iter().find(|(a, _)| *a == v4),
            IpAddr::V6(_) => None,
        };
        fixed
            .map(|(_, hw)| *hw)
            .or_else(|| learned().map(|(_, hw)| *hw))
    }

    /// The VC links set up so far, with their neighbours.
    pub fn links(&self) -> impl Iterator<Item = (Address, &DataLink)> {
        self.circuits.iter().map(|(a, c)| (*a, &c.link))
    }

    /// Frames and datagrams not yet delivered: frames waiting to go out,
    /// and on each VC link the I frames queued or unacknowledged and the
    /// datagrams waiting for the link to come up. Zero once everything
    /// sent has left (datagram mode) or been acknowledged (VC mode).
    pub fn pending(&self) -> usize {
        let links: usize = self
            .circuits
            .iter()
            .map(|(_, c)| c.link.queued() + c.link.unacked() + c.waiting.len())
            .sum();
        self.out.len() + self.device.tx_pending() + links
    }

    /// Releases every VC link (DL-DISCONNECT request: DISC, fig. C4.4a);
    /// queued data and datagrams still
    /// waiting for a link are dropped.
    pub fn disconnect_all(&mut self, now: Instant) {
        for (_, c) in &mut self.circuits {
            if c.link.state() != State::Disconnected {
                let _ = c.link.disconnect(now); // AX.25: combined, always honoured
            }
        }
    }

    /// The channel is busy or clear (carrier detect): passed to every VC
    /// link (T1 pauses while busy).
    pub fn set_channel_busy(&mut self, now: Instant, busy: bool) {
        self.channel_busy = busy;
        for (_, c) in &mut self.circuits {
            c.link.set_channel_busy(now, busy);
        }
    }

    /// This station's transmitter keyed up: pending acknowledgements may
    /// ride in the transmission.
    pub fn transmitter_keyed(&mut self, now: Instant) {
        for (_, c) in &mut self.circuits {
            c.link.transmitter_keyed(now);
        }
    }

    /// A frame received from the channel (no flags or FCS).
    pub fn handle_frame(&mut self, now: Instant, octets: &[u8]) {
        let Ok((address, _)) = AddressField::decode(octets) else {
            self.stats.frames_undecodable += 1;
            return;
        };
        let dest = plain(*address.dest());
        let source = plain(*address.source());
        let to_us = dest == plain(self.config.local);
        if !(to_us || dest == broadcast()) || !address.digipeaters().is_empty() {
            self.stats.frames_ignored += 1;
            return;
        }
        let modulus = self
            .circuits
            .iter()
            .find(|(a, _)| *a == source)
            .map_or(Modulus::Mod8, |(_, c)| c.link.modulus());
        let Ok(frame) = Frame::decode(octets, modulus) else {
            self.stats.frames_undecodable += 1;
            return;
        };
        if let Control::U {
            kind: Unnumbered::Ui,
            ..
        } = frame.control()
        {
            let pid = frame.pid().unwrap_or(Pid::NoLayer3);
            self.on_payload(now, pid, frame.into_info());
        } else if to_us {
            match self.circuit(source) {
                Ok(i) => self.circuits[i].1.link.handle_frame(now, &frame),
                Err(_) => self.stats.frames_ignored += 1,
            }
        } else {
            self.stats.frames_ignored += 1;
        }
        self.serve(now);
    }

    /// Moves datagrams between the device and AX.25 and handles the
    /// links' events; call after smoltcp polled the device.
    pub fn serve(&mut self, now: Instant) {
        loop {
            let mut busy = false;
            while let Some(datagram) = self.device.pop_transmitted() {
                busy = true;
                self.route(now, datagram);
            }
            for i in 0..self.circuits.len() {
                while let Some(event) = self.circuits[i].1.link.poll_event() {
                    busy = true;
                    self.on_link_event(now, i, event);
                }
            }
            if !busy {
                break;
            }
        }
    }

    /// Index of the circuit to `neighbour`, created if new.
    fn circuit(&mut self, neighbour: Address) -> Result<usize, NewLinkError> {
        if let Some(i) = self.circuits.iter().position(|(a, _)| *a == neighbour) {
            return Ok(i);
        }
        let mut link = DataLink::new(
            self.config.link.clone(),
            plain(self.config.local),
            neighbour,
            &[],
        )?;
        link.set_accept_incoming(true);
        // A new link runs no timer, so nothing is paused at any time: only
        // the hint is set, for the T1 it starts next.
        link.set_channel_busy(Instant::ZERO, self.channel_busy);
        self.circuits.push((
            neighbour,
            Circuit {
                link,
                waiting: VecDeque::new(),
            },
        ));
        Ok(self.circuits.len() - 1)
    }

    /// Sends one datagram from smoltcp towards its destination.
    fn route(&mut self, now: Instant, datagram: Vec<u8>) {
        let Some(dest) = destination(&datagram) else {
            self.stats.dropped_unresolved += 1;
            return;
        };
        match self.neighbour(dest) {
            Some(hw) => self.send_to(now, hw, datagram),
            None => match (dest, self.config.arp_ipv4) {
                (IpAddr::V4(ip), Some(own)) => self.resolve(now, own, ip, datagram),
                _ => self.stats.dropped_unresolved += 1,
            },
        }
    }

    /// Queues a datagram for ARP and asks for `ip` if due.
    fn resolve(&mut self, now: Instant, own: Ipv4Addr, ip: Ipv4Addr, datagram: Vec<u8>) {
        let i = match self.unresolved.iter().position(|u| u.ip == ip) {
            Some(i) => i,
            None => {
                self.unresolved.push(Unresolved {
                    ip,
                    waiting: VecDeque::new(),
                    last_request: now,
                    tries: 0,
                });
                self.unresolved.len() - 1
            }
        };
        let entry = &mut self.unresolved[i];
        if entry.waiting.len() == ARP_PENDING {
            entry.waiting.pop_front();
            self.stats.dropped_unresolved += 1;
        }
        entry.waiting.push_back(datagram);
        let due =
            entry.tries == 0 || (now - entry.last_request).as_micros() >= u128::from(ARP_RETRY_US);
        if !due {
            return;
        }
        if entry.tries == ARP_TRIES {
            self.stats.dropped_unresolved += entry.waiting.len() as u64;
            let entry = self.unresolved.swap_remove(i);
            self.unreachable.extend(entry.waiting);
            while self.unreachable.len() > 4 * ARP_PENDING {
                self.unreachable.pop_front();
            }
            return;
        }
        entry.tries += 1;
        entry.last_request = now;
        let request = ArpPacket {
            operation: Operation::Request,
            sender_hardware: plain(self.config.local),
            sender_ip: own,
            target_hardware: None,
            target_ip: ip,
        };
        self.stats.arp_requests += 1;
        self.send_ui(broadcast(), Pid::Arp, request.encode());
    }

    /// Sends a datagram to the neighbour `hw` in the configured way.
    fn send_to(&mut self, now: Instant, hw: Address, datagram: Vec<u8>) {
        match self.config.mode_of(hw) {
            Encapsulation::Datagram => {
                self.stats.datagrams_sent += 1;
                self.send_ui(hw, Pid::Ip, datagram);
            }
            Encapsulation::VirtualCircuit => {
                let Ok(i) = self.circuit(plain(hw)) else {
                    self.stats.dropped_link_down += 1;
                    return;
                };
                let circuit = &mut self.circuits[i].1;
                match circuit.link.state() {
                    State::Connected | State::TimerRecovery if circuit.waiting.is_empty() => {
                        match circuit.link.send_with_pid(Pid::Ip, datagram) {
                            Ok(()) => self.stats.datagrams_sent += 1,
                            Err(_) => self.stats.dropped_link_down += 1,
                        }
                    }
                    State::Disconnected => {
                        circuit.waiting.push_back(datagram);
                        let _ = circuit.link.connect(now); // AX.25: combined, always honoured
                    }
                    _ => circuit.waiting.push_back(datagram),
                }
            }
        }
    }

    /// Queues a UI command frame to `dest`.
    fn send_ui(&mut self, dest: Address, pid: Pid, info: Vec<u8>) {
        if let Ok(frame) = Frame::ui(dest, plain(self.config.local), &[], pid, info) {
            self.out.push_back(frame);
        }
    }

    /// An information field received in an I or UI frame.
    fn on_payload(&mut self, now: Instant, pid: Pid, info: Vec<u8>) {
        match pid {
            Pid::Ip => {
                self.stats.datagrams_received += 1;
                self.device.push_received(info);
            }
            Pid::Arp => self.on_arp(now, &info),
            _ => self.stats.frames_ignored += 1,
        }
    }

    /// An ARP packet (RFC 826 "packet reception").
    fn on_arp(&mut self, now: Instant, info: &[u8]) {
        let (Ok(packet), Some(own)) = (ArpPacket::decode(info), self.config.arp_ipv4) else {
            return;
        };
        let (ip, hw) = (packet.sender_ip, packet.sender_hardware);
        let known = self.learned.iter().position(|(a, _)| *a == ip);
        match known {
            Some(i) => self.learned[i].1 = hw,
            None if packet.target_ip == own => self.learned.push((ip, hw)),
            None => {}
        }
        if packet.target_ip == own && packet.operation == Operation::Request {
            let reply = ArpPacket {
                operation: Operation::Reply,
                sender_hardware: plain(self.config.local),
                sender_ip: own,
                target_hardware: Some(hw),
                target_ip: ip,
            };
            self.stats.arp_replies += 1;
            self.send_ui(hw, Pid::Arp, reply.encode());
        }
        if let Some(i) = self.unresolved.iter().position(|u| u.ip == ip) {
            let entry = self.unresolved.swap_remove(i);
            if self.neighbour(IpAddr::V4(ip)).is_some() {
                for datagram in entry.waiting {
                    self.send_to(now, hw, datagram);
                }
            }
        }
    }

    /// One event of circuit `i`'s link.
    fn on_link_event(&mut self, now: Instant, i: usize, event: Event) {
        let (neighbour, circuit) = &mut self.circuits[i];
        let neighbour = *neighbour;
        match event {
            Event::Connected { .. } => {
                while let Some(datagram) = circuit.waiting.pop_front() {
                    match circuit.link.send_with_pid(Pid::Ip, datagram) {
                        Ok(()) => self.stats.datagrams_sent += 1,
                        Err(_) => self.stats.dropped_link_down += 1,
                    }
                }
            }
            Event::Data { pid, data } | Event::UnitData { pid, data } => {
                self.on_payload(now, pid, data)
            }
            Event::Disconnected { .. } => {
                self.stats.dropped_link_down += circuit.waiting.len() as u64;
                circuit.waiting.clear();
            }
            Event::LinkFailure { reason } => {
                self.stats.link_failures += 1;
                self.stats.dropped_link_down += circuit.waiting.len() as u64;
                circuit.waiting.clear();
                self.link_errors
                    .push(format!("link with {neighbour} failed: {reason:?}"));
            }
            Event::Error(error) => self
                .link_errors
                .push(format!("link with {neighbour}: {error}")),
            Event::Negotiated { .. } => {}
        }
    }
}

impl Engine for Ax25Interface {
    type Transmit = Vec<u8>;

    /// The next frame to put on the channel (encoded, no flags or FCS).
    fn poll_transmit(&mut self, now: Instant) -> Option<Self::Transmit> {
        self.serve(now);
        if let Some(frame) = self.out.pop_front() {
            return Some(frame.encode());
        }
        self.circuits
            .iter_mut()
            .find_map(|(_, c)| c.link.poll_transmit(now))
            .map(|f| f.encode())
    }

    /// When [`Ax25Interface::handle_timeout`] must next be called.
    fn poll_timeout(&self) -> Option<Instant> {
        self.circuits
            .iter()
            .filter_map(|(_, c)| c.link.poll_timeout())
            .min()
    }

    /// Runs the links' timers due at `now`.
    fn handle_timeout(&mut self, now: Instant) {
        for (_, c) in &mut self.circuits {
            if c.link.poll_timeout().is_some_and(|t| t <= now) {
                c.link.handle_timeout(now);
            }
        }
        self.serve(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(mtu: usize, modulus: Modulus, encapsulation: Encapsulation) -> Ax25Config {
        let link = LinkConfig {
            modulus,
            n1: 256,
            ..LinkConfig::default()
        };
        Ax25Config {
            encapsulation,
            ..Ax25Config::new("N0CALL".parse().unwrap(), mtu, link)
        }
    }

    #[test]
    fn a_neighbour_may_have_its_own_mode() {
        let mut c = config(256, Modulus::Mod8, Encapsulation::VirtualCircuit);
        let (vc, dg): (Address, Address) = ("N0VC".parse().unwrap(), "N0DG-2".parse().unwrap());
        c.modes.push((dg, Encapsulation::Datagram));
        c.neighbours.push(("44.0.0.2".parse().unwrap(), vc));
        c.neighbours.push(("44.0.0.3".parse().unwrap(), dg));
        assert_eq!(c.mode_of(vc), Encapsulation::VirtualCircuit);
        assert_eq!(c.mode_of(dg), Encapsulation::Datagram);
        let mut iface = Ax25Interface::new(c.clone()).unwrap();
        let now = Instant::ZERO;
        for dest in [2u8, 3] {
            let mut d = vec![0u8; 60];
            d[0] = 0x45;
            d[16..20].copy_from_slice(&[44, 0, 0, dest]);
            assert!(iface.device_mut().push_transmit(d));
        }
        iface.serve(now);
        let frames: Vec<Frame> = std::iter::from_fn(|| iface.poll_transmit(now))
            .map(|f| Frame::decode(&f, Modulus::Mod8).unwrap())
            .collect();
        let kinds: Vec<String> = frames
            .iter()
            .map(|f| format!("{:?}", f.control()))
            .collect();
        assert!(
            kinds.iter().any(|k| k.contains("Sabm")),
            "a link is set up to N0VC: {kinds:?}"
        );
        assert!(
            frames.iter().any(|f| plain(*f.address().dest()) == dg
                && matches!(
                    f.control(),
                    Control::U {
                        kind: Unnumbered::Ui,
                        ..
                    }
                )),
            "a UI frame to N0DG-2: {kinds:?}"
        );
        // A datagram-mode neighbour bounds the MTU by N1 as datagram mode does.
        c.mtu = 1024;
        c.link.modulus = Modulus::Mod128;
        assert!(matches!(
            Ax25Interface::new(c),
            Err(Ax25ConfigError::MtuAboveN1 { .. })
        ));
    }

    #[test]
    fn an_mtu_the_encapsulation_cannot_carry_is_refused_with_the_reason() {
        let dg = Ax25Interface::new(config(296, Modulus::Mod8, Encapsulation::Datagram));
        assert_eq!(
            dg.unwrap_err(),
            Ax25ConfigError::MtuAboveN1 { mtu: 296, n1: 256 }
        );
        let vc8 = Ax25Interface::new(config(1280, Modulus::Mod8, Encapsulation::VirtualCircuit));
        assert_eq!(
            vc8.unwrap_err(),
            Ax25ConfigError::MtuNeedsMod128 { mtu: 1280, n1: 256 }
        );
        let vc128 = config(1280, Modulus::Mod128, Encapsulation::VirtualCircuit);
        assert!(Ax25Interface::new(vc128).is_ok());
        let huge = config(128 * 256, Modulus::Mod128, Encapsulation::VirtualCircuit);
        let err = Ax25Interface::new(huge).unwrap_err();
        assert!(matches!(err, Ax25ConfigError::MtuNeedsSegmenter { max, .. } if max > 0));
        let tiny = Ax25Interface::new(config(60, Modulus::Mod8, Encapsulation::Datagram));
        assert_eq!(tiny.unwrap_err(), Ax25ConfigError::MtuTooSmall { mtu: 60 });
    }

    #[test]
    fn ip_destinations_are_read_from_both_versions() {
        let mut v4 = vec![0x45; 20];
        v4[16..20].copy_from_slice(&[44, 0, 0, 2]);
        assert_eq!(
            destination(&v4),
            Some(IpAddr::V4(Ipv4Addr::new(44, 0, 0, 2)))
        );
        let mut v6 = vec![0x60; 40];
        v6[24..40].copy_from_slice(&Ipv6Addr::LOCALHOST.octets());
        assert_eq!(destination(&v6), Some(IpAddr::V6(Ipv6Addr::LOCALHOST)));
        assert_eq!(destination(&[0x45, 0, 0]), None);
    }
}
