//! The X.25 side of an IP interface: IP datagrams over X.25 virtual
//! circuits ([`IpOverX25`], RFC 877/1356: calls with call user data 0xCC
//! opened on demand, more circuits as the queue grows, idle close), on the
//! packet layer of a DTE whose LAPB link (X.25 clause 2, DTE address)
//! runs on an access line to an X.25 network.
//!
//! Sans-IO like the AX.25 side: LAPB frames from the access line come in
//! through [`X25Interface::handle_frame`], time through
//! [`X25Interface::handle_timeout`], frames to send are drained with
//! [`X25Interface::poll_transmit`]. smoltcp works on the same queue
//! device as over AX.25 ([`Ax25Device`], `Medium::Ip`);
//! [`X25Interface::serve`] moves datagrams between its queues and
//! [`IpOverX25`], whose per-destination queue is the interface queue
//! (a datagram it refuses, e.g. with its queue full, is dropped and
//! counted, as a 4.2BSD interface drops on `IF_QFULL`).
//!
//! # MTU and TCP's segment size
//! smoltcp takes the MSS it announces from the device MTU (MTU − 40 for
//! IPv4), and has no setting for it. The device MTU
//! ([`X25IfConfig::device_mtu`]) may therefore be set below the X.25
//! interface's MTU ([`IpConfig::mtu`]): with 552 the hosts send TCP
//! segments of 512 octets, 4.2BSD's segment size for destinations off the
//! local network, over an RFC 877 interface of MTU 576.

use core::net::Ipv4Addr;
use linklab_core::{earliest, Engine, Instant};

use linklab_link::{
    Config as LinkConfig, Event as LinkEvent, HdlcAddressing, HdlcLink, NewLinkError,
};
use linklab_wire::lapb::{Frame, LinkProcedure, Role as LapbRole};
pub mod circuits;

pub use circuits::{
    Encapsulation, IpConfig, IpConfigError, IpEvent, IpOverX25, IpStats, Route, SendError,
    Spreading,
};
use thiserror::Error;

use crate::device::Ax25Device;
use crate::host::IpLink;

/// Configuration of one X.25 IP interface.
#[derive(Debug, Clone, PartialEq)]
pub struct X25IfConfig {
    /// The DTE's LAPB link on the access line (single link procedure).
    pub lapb: LinkConfig,
    /// IP over X.25: the packet layer, routes, circuits.
    pub ip: IpConfig,
    /// The MTU smoltcp is given, octets (at most `ip.mtu`; see the module
    /// documentation).
    pub device_mtu: usize,
    /// Datagrams smoltcp may queue before [`X25Interface::serve`] takes
    /// them.
    pub tx_queue_len: usize,
}

/// Why an X.25 interface configuration was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum X25IfError {
    /// The LAPB parameters are invalid.
    #[error("LAPB configuration refused: {0}")]
    Lapb(#[from] NewLinkError),
    /// The IP over X.25 parameters are invalid.
    #[error("IP over X.25 configuration refused: {0}")]
    Ip(#[from] IpConfigError),
    /// The device MTU is below IPv4's 68 or above the interface's MTU.
    #[error("device MTU {device} must be 68 to the interface MTU {mtu}")]
    DeviceMtu {
        /// The device MTU.
        device: usize,
        /// The interface MTU.
        mtu: usize,
    },
}

/// Counters of the interface beyond [`IpStats`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct X25IfStats {
    /// Datagrams from smoltcp that were not IPv4 (no X.121 route can
    /// name them).
    pub dropped_not_ipv4: u64,
    /// Datagrams [`IpOverX25`] refused (no route, too big, queue full).
    pub dropped_refused: u64,
    /// LAPB frames that did not decode.
    pub frames_undecodable: u64,
    /// The LAPB link came up (restarting the packet layer each time).
    pub link_ups: u64,
    /// The LAPB link went down (released or failed).
    pub link_downs: u64,
}

/// The X.25 side of an IP interface (see the module documentation).
#[derive(Debug)]
pub struct X25Interface {
    lapb: HdlcLink,
    ip: IpOverX25,
    device: Ax25Device,
    stats: X25IfStats,
    events: Vec<(Instant, IpEvent)>,
}

/// The IPv4 destination of a datagram.
fn ipv4_destination(datagram: &[u8]) -> Option<Ipv4Addr> {
    if datagram.first()? >> 4 != 4 {
        return None;
    }
    let d: [u8; 4] = datagram.get(16..20)?.try_into().ok()?;
    Some(Ipv4Addr::from(d))
}

impl X25Interface {
    /// An interface whose LAPB link is down until [`X25Interface::start`].
    pub fn new(config: X25IfConfig) -> Result<X25Interface, X25IfError> {
        let mtu = config.ip.mtu;
        if !(68..=mtu).contains(&config.device_mtu) {
            return Err(X25IfError::DeviceMtu {
                device: config.device_mtu,
                mtu,
            });
        }
        let lapb = HdlcLink::new(
            config.lapb,
            HdlcAddressing::Lapb {
                role: LapbRole::Dte,
                procedure: LinkProcedure::SingleLink,
            },
        )?;
        Ok(X25Interface {
            lapb,
            ip: IpOverX25::new(config.ip)?,
            device: Ax25Device::new(config.device_mtu, config.tx_queue_len),
            stats: X25IfStats::default(),
            events: Vec::new(),
        })
    }

    /// Sets the LAPB link up (SABM, X.25 2.4.4.1); the packet layer
    /// restarts once it is.
    pub fn start(&mut self, now: Instant) {
        let _ = self.lapb.connect(now); // LAPB: combined, always honoured
    }

    /// The device smoltcp polls.
    pub fn device_mut(&mut self) -> &mut Ax25Device {
        &mut self.device
    }

    /// The device (for its TCP sniffers).
    pub fn device(&self) -> &Ax25Device {
        &self.device
    }

    /// IP over X.25 (circuits, queues, its counters).
    pub fn ip(&self) -> &IpOverX25 {
        &self.ip
    }

    /// The LAPB link.
    pub fn lapb(&self) -> &HdlcLink {
        &self.lapb
    }

    /// The interface's own counters.
    pub fn stats(&self) -> X25IfStats {
        self.stats
    }

    /// IP over X.25's counters.
    pub fn ip_stats(&self) -> &IpStats {
        self.ip.stats()
    }

    /// What IP over X.25 reported (circuits opened and closed, failures),
    /// with the time, oldest first.
    pub fn events(&self) -> &[(Instant, IpEvent)] {
        &self.events
    }

    /// A LAPB frame from the access line (no flags or FCS).
    pub fn handle_frame(&mut self, now: Instant, octets: &[u8]) {
        match Frame::decode(octets, self.lapb.modulus()) {
            Ok(frame) => self.lapb.handle_frame(now, &frame),
            Err(_) => self.stats.frames_undecodable += 1,
        }
        self.serve(now);
    }

    /// Moves datagrams between the device, IP over X.25, the packet layer
    /// and LAPB until nothing moves; call after smoltcp polled the device.
    pub fn serve(&mut self, now: Instant) {
        loop {
            let mut busy = false;
            while let Some(datagram) = self.device.pop_transmitted() {
                busy = true;
                match ipv4_destination(&datagram) {
                    Some(to) => {
                        if self.ip.send_datagram(now, to, datagram).is_err() {
                            self.stats.dropped_refused += 1;
                        }
                    }
                    None => self.stats.dropped_not_ipv4 += 1,
                }
            }
            while let Some(event) = self.lapb.poll_event() {
                busy = true;
                match event {
                    LinkEvent::Connected { .. } => {
                        self.stats.link_ups += 1;
                        self.ip.start(now);
                    }
                    LinkEvent::Data { data, .. } => self.ip.handle_octets(now, &data),
                    LinkEvent::Disconnected { .. } | LinkEvent::LinkFailure { .. } => {
                        self.stats.link_downs += 1;
                    }
                    _ => {}
                }
            }
            while let Some(packet) = self.ip.poll_transmit(now) {
                busy = true;
                // A packet that does not encode or that LAPB refuses (link
                // down) is lost, as on a failed access line; the packet
                // layer's time-limits and TCP recover.
                if let Ok(octets) = packet.encode() {
                    let _ = self.lapb.send(octets);
                }
            }
            while let Some(datagram) = self.ip.poll_datagram() {
                busy = true;
                self.device.push_received(datagram.bytes);
            }
            while let Some(event) = self.ip.poll_event() {
                busy = true;
                self.events.push((now, event));
            }
            if !busy {
                break;
            }
        }
    }
}

impl Engine for X25Interface {
    type Transmit = Vec<u8>;

    /// The next LAPB frame for the access line (encoded, no flags or FCS).
    fn poll_transmit(&mut self, now: Instant) -> Option<Self::Transmit> {
        self.serve(now);
        self.lapb.poll_transmit(now).map(|f| f.encode())
    }

    /// When [`X25Interface::handle_timeout`] must next be called.
    fn poll_timeout(&self) -> Option<Instant> {
        earliest([self.lapb.poll_timeout(), self.ip.poll_timeout()])
    }

    /// Runs the timers due at `now` (LAPB T1, the packet layer's
    /// time-limits, idle circuits).
    fn handle_timeout(&mut self, now: Instant) {
        if self.lapb.poll_timeout().is_some_and(|t| t <= now) {
            self.lapb.handle_timeout(now);
        }
        if self.ip.poll_timeout().is_some_and(|t| t <= now) {
            self.ip.handle_timeout(now);
        }
        self.serve(now);
    }
}

impl IpLink for X25Interface {
    fn device(&self) -> &Ax25Device {
        X25Interface::device(self)
    }

    fn device_mut(&mut self) -> &mut Ax25Device {
        X25Interface::device_mut(self)
    }

    fn serve(&mut self, now: Instant) {
        X25Interface::serve(self, now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use linklab_x25::{Config as X25Config, DteAddress};
    use smoltcp::phy::{Device, TxToken};

    use crate::host::smol_instant;

    fn config(device_mtu: usize) -> X25IfConfig {
        let ip = IpConfig::new(
            X25Config {
                address: DteAddress::new("1111").unwrap(),
                ..X25Config::default()
            },
            Encapsulation::Rfc877,
            vec![Route {
                ip: Ipv4Addr::new(10, 0, 0, 2),
                address: DteAddress::new("2222").unwrap(),
            }],
        );
        X25IfConfig {
            lapb: LinkConfig {
                xid: false,
                ..LinkConfig::default()
            },
            ip,
            device_mtu,
            tx_queue_len: 8,
        }
    }

    #[test]
    fn a_device_mtu_above_the_interface_mtu_is_refused() {
        assert!(X25Interface::new(config(552)).is_ok());
        let error = X25Interface::new(config(577)).unwrap_err();
        assert_eq!(
            error,
            X25IfError::DeviceMtu {
                device: 577,
                mtu: 576
            }
        );
        assert!(error.to_string().contains("576"));
        assert!(X25Interface::new(config(67)).is_err());
    }

    #[test]
    fn datagrams_wait_for_a_circuit_and_others_are_counted() {
        let mut x = X25Interface::new(config(552)).unwrap();
        let now = Instant::ZERO;
        x.start(now);
        // An IPv4 datagram to the routed neighbour is queued for a call;
        // an IPv6 one and one to an unknown address are dropped.
        let mut v4 = vec![0u8; 40];
        v4[0] = 0x45;
        v4[16..20].copy_from_slice(&[10, 0, 0, 2]);
        let mut unrouted = v4.clone();
        unrouted[19] = 3;
        let mut v6 = vec![0u8; 48];
        v6[0] = 0x60;
        for d in [v4, unrouted, v6] {
            let token = x.device_mut().transmit(smol_instant(now)).unwrap();
            token.consume(d.len(), |buf| buf.copy_from_slice(&d));
        }
        x.serve(now);
        assert_eq!(x.ip().queued(Ipv4Addr::new(10, 0, 0, 2)), 1);
        assert_eq!(x.stats().dropped_refused, 1);
        assert_eq!(x.stats().dropped_not_ipv4, 1);
        // The LAPB link asks to be set up (SABM) first.
        assert!(x.poll_transmit(now).is_some());
    }
}
