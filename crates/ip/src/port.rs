//! The AX.25 interface as a plain datagram port, for an IP host outside
//! this process: the kernel's own stack behind a TUN device (`linklab ip
//! tun`). The kernel routes, fragments and runs TCP; the port carries its
//! datagrams over AX.25 exactly as [`crate::Host`] carries smoltcp's (VC
//! or datagram mode, ARP over AX.25, the segmenter on modulo-128 links).

use linklab_core::{Engine, Instant};
use thiserror::Error;

use crate::iface::Ax25Interface;

/// Why a datagram from the host was not taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum PortError {
    /// Larger than the interface's MTU: the host should never send one
    /// (the MTU is the device's); dropped and counted.
    #[error("a datagram of {len} octets exceeds the MTU of {mtu}; dropped")]
    Oversize {
        /// Its length.
        len: usize,
        /// The MTU.
        mtu: usize,
    },
    /// The interface's transmit queue is full (the link is slower than
    /// the host): dropped, as a full `txqueuelen` drops, and counted.
    #[error("the transmit queue is full; datagram dropped")]
    QueueFull,
    /// Not an IPv4 or IPv6 datagram.
    #[error("not an IPv4 or IPv6 datagram ({len} octets); dropped")]
    NotIp {
        /// Its length.
        len: usize,
    },
}

/// Datagrams the port dropped, by reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PortDrops {
    /// Larger than the MTU.
    pub oversize: u64,
    /// The transmit queue was full.
    pub queue_full: u64,
    /// Not IP.
    pub not_ip: u64,
}

/// An [`Ax25Interface`] whose datagrams come from and go to the caller.
#[derive(Debug)]
pub struct DatagramPort {
    ax25: Ax25Interface,
    drops: PortDrops,
}

impl DatagramPort {
    /// A port over `ax25`.
    pub fn new(ax25: Ax25Interface) -> DatagramPort {
        DatagramPort {
            ax25,
            drops: PortDrops::default(),
        }
    }

    /// The AX.25 side.
    pub fn ax25(&self) -> &Ax25Interface {
        &self.ax25
    }

    /// The AX.25 side, mutable.
    pub fn ax25_mut(&mut self) -> &mut Ax25Interface {
        &mut self.ax25
    }

    /// Datagrams dropped so far.
    pub fn drops(&self) -> PortDrops {
        self.drops
    }

    /// A datagram from the host at `now`: routed to its neighbour (ARP
    /// asked first if needed, a VC link set up if needed).
    pub fn send(&mut self, now: Instant, datagram: Vec<u8>) -> Result<(), PortError> {
        let mtu = self.ax25.device().mtu();
        let len = datagram.len();
        if !matches!(datagram.first().map(|b| b >> 4), Some(4 | 6)) {
            self.drops.not_ip += 1;
            return Err(PortError::NotIp { len });
        }
        if len > mtu {
            self.drops.oversize += 1;
            return Err(PortError::Oversize { len, mtu });
        }
        if !self.ax25.device_mut().push_transmit(datagram) {
            self.drops.queue_full += 1;
            return Err(PortError::QueueFull);
        }
        self.ax25.serve(now);
        Ok(())
    }

    /// The next datagram received for the host.
    pub fn receive(&mut self) -> Option<Vec<u8>> {
        self.ax25.device_mut().pop_received()
    }

    /// When [`Engine::handle_timeout`] is next due.
    pub fn poll_at(&self) -> Option<Instant> {
        self.ax25.poll_timeout()
    }
}
