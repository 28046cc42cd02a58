//! IP over AX.25 for the kernel's own stack, on a station's port: what
//! the kernel's `ax0` interface did (`kissattach` with an address,
//! `axparms --route/--ipmode`). The AX.25 side is an
//! [`Ax25Interface`] (VC or datagram mode per neighbour, ARP over AX.25
//! answered for the kernel, segmentation on modulo-128 links) with its
//! own callsign, fed every frame heard on the port; the station reserves
//! that callsign so that neither its engine nor an AGWPE client answers
//! it too. The datagrams go to and from a TUN device, which the
//! [`driver`](crate::driver) owns.

use linklab_core::{Engine, Instant};
use linklab_ip::{Ax25Interface, DatagramPort, PortError};
use linklab_link::State;

use crate::config::TunSpec;

/// One TUN device's AX.25 side.
#[derive(Debug)]
pub(crate) struct IpService {
    pub spec: TunSpec,
    port: DatagramPort,
    /// Datagrams from the kernel sent on.
    pub from_kernel: u64,
    /// Datagrams handed to the kernel.
    pub to_kernel: u64,
    /// Datagrams from the kernel dropped, and the last reason.
    pub dropped: u64,
}

impl IpService {
    /// The AX.25 side of `spec` (checked with the file).
    pub fn new(spec: TunSpec) -> Result<IpService, String> {
        let iface = Ax25Interface::new(spec.ax25.clone()).map_err(|e| e.to_string())?;
        Ok(IpService {
            spec,
            port: DatagramPort::new(iface),
            from_kernel: 0,
            to_kernel: 0,
            dropped: 0,
        })
    }

    /// A frame heard on the port (every frame: the interface keeps those
    /// for its callsign and the ARP broadcasts).
    pub fn heard(&mut self, now: Instant, frame: &[u8]) {
        self.port.ax25_mut().handle_frame(now, frame);
    }

    /// A datagram from the kernel, to send on.
    pub fn send_datagram(&mut self, now: Instant, datagram: Vec<u8>) -> Result<(), PortError> {
        let sent = self.port.send(now, datagram);
        match sent {
            Ok(()) => self.from_kernel += 1,
            Err(_) => self.dropped += 1,
        }
        sent
    }

    /// Frames to send on the port, then datagrams for the kernel.
    pub fn poll(&mut self, now: Instant) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
        self.port.ax25_mut().serve(now);
        let mut frames = Vec::new();
        while let Some(frame) = self.port.ax25_mut().poll_transmit(now) {
            frames.push(frame);
        }
        let mut datagrams = Vec::new();
        while let Some(d) = self.port.receive() {
            datagrams.push(d);
        }
        self.to_kernel += datagrams.len() as u64;
        (frames, datagrams)
    }

    /// Frames of ours are still to leave the air, or have left it.
    pub fn set_channel_busy(&mut self, now: Instant, busy: bool) {
        self.port.ax25_mut().set_channel_busy(now, busy);
    }

    /// When the links' timers run next.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.port.poll_at()
    }

    /// Runs the links' timers due at `now`.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.poll_timeout().is_some_and(|t| t <= now) {
            self.port.ax25_mut().handle_timeout(now);
        }
    }

    /// VC links not yet disconnected.
    pub fn live_links(&self) -> usize {
        self.port
            .ax25()
            .links()
            .filter(|(_, l)| l.state() != State::Disconnected)
            .count()
    }

    /// Releases every VC link (DISC).
    pub fn release(&mut self, now: Instant) {
        self.port.ax25_mut().disconnect_all(now);
    }

    /// The errors the VC links reported so far.
    pub fn link_errors(&self) -> &[String] {
        self.port.ax25().link_errors()
    }
}
