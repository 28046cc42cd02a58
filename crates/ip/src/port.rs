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
    /// The interface's queue is full ([`PORT_QUEUE`]; the link is slower
    /// than the host): dropped, as a full `txqueuelen` drops, and counted.
    #[error("the transmit queue is full; datagram dropped")]
    QueueFull,
    /// Not an IPv4 or IPv6 datagram.
    #[error("not an IPv4 or IPv6 datagram ({len} octets); dropped")]
    NotIp {
        /// Its length.
        len: usize,
    },
}

/// Most frames and datagrams the AX.25 side holds for the host before the
/// port drops the host's datagrams ([`PortError::QueueFull`]): the
/// `txqueuelen` of the link, so that a host sending faster than the radio
/// (a UDP flood) is bounded in memory and TCP sees the drops it adapts
/// to.
pub const PORT_QUEUE: usize = 256;

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
        if self.ax25.pending() >= PORT_QUEUE || !self.ax25.device_mut().push_transmit(datagram) {
            self.drops.queue_full += 1;
            return Err(PortError::QueueFull);
        }
        self.ax25.serve(now);
        Ok(())
    }

    /// The next datagram for the host: one received, or an ICMP
    /// "Destination Host Unreachable" (RFC 792, type 3 code 1) from this
    /// interface's address for a datagram whose destination never
    /// answered ARP, as the kernel's own neighbour code would send it.
    pub fn receive(&mut self) -> Option<Vec<u8>> {
        if let Some(d) = self.ax25.device_mut().pop_received() {
            return Some(d);
        }
        let own = self.ax25.config().arp_ipv4?;
        while let Some(dropped) = self.ax25.take_unreachable() {
            if let Some(icmp) = host_unreachable(own, &dropped) {
                return Some(icmp);
            }
        }
        None
    }

    /// When [`Engine::handle_timeout`] is next due.
    pub fn poll_at(&self) -> Option<Instant> {
        self.ax25.poll_timeout()
    }
}

/// ICMPv4 Destination Unreachable, Host Unreachable, from `own` to the
/// source of `dropped`, quoting its header and first 8 octets of data
/// (RFC 792); `None` if `dropped` is not a sound IPv4 datagram.
fn host_unreachable(own: std::net::Ipv4Addr, dropped: &[u8]) -> Option<Vec<u8>> {
    use smoltcp::phy::ChecksumCapabilities;
    use smoltcp::wire::{
        Icmpv4DstUnreachable, Icmpv4Packet, Icmpv4Repr, IpProtocol, Ipv4Packet, Ipv4Repr,
    };
    let packet = Ipv4Packet::new_checked(dropped).ok()?;
    let checksums = ChecksumCapabilities::default();
    let header = Ipv4Repr::parse(&packet, &checksums).ok()?;
    let payload = packet.payload();
    let data = &payload[..payload.len().min(8)];
    let icmp = Icmpv4Repr::DstUnreachable {
        reason: Icmpv4DstUnreachable::HostUnreachable,
        header,
        data,
    };
    let ip = Ipv4Repr {
        src_addr: own,
        dst_addr: header.src_addr,
        next_header: IpProtocol::Icmp,
        payload_len: icmp.buffer_len(),
        hop_limit: 64,
    };
    let mut out = vec![0u8; ip.buffer_len() + icmp.buffer_len()];
    let mut packet = Ipv4Packet::new_unchecked(&mut out[..]);
    ip.emit(&mut packet, &checksums);
    icmp.emit(
        &mut Icmpv4Packet::new_unchecked(packet.payload_mut()),
        &checksums,
    );
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::iface::{Ax25Config, Encapsulation};
    use linklab_link::Config as LinkConfig;
    use linklab_wire::ax25::Address;

    fn addr(text: &str) -> Address {
        text.parse().unwrap()
    }

    /// A datagram-mode port for `local` with IPv4 neighbour `peer`.
    fn port(local: &str, peer: (&str, [u8; 4])) -> DatagramPort {
        let mut config = Ax25Config::new(addr(local), 256, LinkConfig::default());
        config.encapsulation = Encapsulation::Datagram;
        config.neighbours.push((IpAddr::from(peer.1), addr(peer.0)));
        DatagramPort::new(Ax25Interface::new(config).unwrap())
    }

    /// An IPv4 datagram of `len` octets to `dest` (the interface reads
    /// only the version and the destination).
    fn ipv4(dest: [u8; 4], len: usize) -> Vec<u8> {
        let mut d = vec![0u8; len];
        d[0] = 0x45;
        d[16..20].copy_from_slice(&dest);
        d
    }

    use std::net::IpAddr;

    #[test]
    fn a_destination_that_never_answers_arp_is_reported_host_unreachable() {
        use smoltcp::wire::{Icmpv4DstUnreachable, Icmpv4Packet, Ipv4Packet};
        let mut config = Ax25Config::new(addr("N0A"), 256, LinkConfig::default());
        config.encapsulation = Encapsulation::Datagram;
        config.arp_ipv4 = Some([44, 0, 0, 1].into());
        let mut a = DatagramPort::new(Ax25Interface::new(config).unwrap());
        // A well-formed ICMP echo request from 44.0.0.1 to 44.0.0.9 (no one).
        let echo = ping_datagram([44, 0, 0, 1], [44, 0, 0, 9]);
        for second in 0..5u64 {
            a.send(Instant::from_micros(second * 1_100_000), echo.clone())
                .unwrap();
            while a.ax25_mut().poll_transmit(Instant::ZERO).is_some() {}
        }
        let report = a.receive().expect("an ICMP error for the kernel");
        let ip = Ipv4Packet::new_checked(&report[..]).unwrap();
        assert!(ip.verify_checksum());
        assert_eq!(ip.src_addr(), std::net::Ipv4Addr::new(44, 0, 0, 1));
        assert_eq!(ip.dst_addr(), std::net::Ipv4Addr::new(44, 0, 0, 1));
        let icmp = Icmpv4Packet::new_checked(ip.payload()).unwrap();
        assert!(icmp.verify_checksum());
        assert_eq!(u8::from(icmp.msg_type()), 3, "destination unreachable");
        assert_eq!(
            icmp.msg_code(),
            u8::from(Icmpv4DstUnreachable::HostUnreachable)
        );
        // The quoted header of the dropped datagram, then 8 octets of it.
        let quoted = icmp.data();
        assert_eq!(quoted.len(), 20 + 8);
        assert_eq!(&quoted[16..20], &[44, 0, 0, 9]);
        assert_eq!(&quoted[20..], &echo[20..28]);
    }

    /// An ICMP echo request from `src` to `dst`, checksums right.
    fn ping_datagram(src: [u8; 4], dst: [u8; 4]) -> Vec<u8> {
        use smoltcp::phy::ChecksumCapabilities;
        use smoltcp::wire::{Icmpv4Packet, Icmpv4Repr, IpProtocol, Ipv4Packet, Ipv4Repr};
        let icmp = Icmpv4Repr::EchoRequest {
            ident: 1,
            seq_no: 1,
            data: &[0u8; 56],
        };
        let ip = Ipv4Repr {
            src_addr: src.into(),
            dst_addr: dst.into(),
            next_header: IpProtocol::Icmp,
            payload_len: icmp.buffer_len(),
            hop_limit: 64,
        };
        let checks = ChecksumCapabilities::default();
        let mut out = vec![0u8; ip.buffer_len() + icmp.buffer_len()];
        let mut packet = Ipv4Packet::new_unchecked(&mut out[..]);
        ip.emit(&mut packet, &checks);
        icmp.emit(
            &mut Icmpv4Packet::new_unchecked(packet.payload_mut()),
            &checks,
        );
        out
    }

    #[test]
    fn datagrams_cross_between_two_ports_and_bad_ones_are_counted() {
        let now = Instant::ZERO;
        let mut a = port("N0A", ("N0B", [44, 0, 0, 2]));
        let mut b = port("N0B", ("N0A", [44, 0, 0, 1]));
        let datagram = ipv4([44, 0, 0, 2], 100);
        a.send(now, datagram.clone()).unwrap();
        let frame = a.ax25_mut().poll_transmit(now).expect("a UI frame");
        b.ax25_mut().handle_frame(now, &frame);
        assert_eq!(b.receive(), Some(datagram));
        assert_eq!(b.receive(), None);

        assert_eq!(
            a.send(now, ipv4([44, 0, 0, 2], 257)),
            Err(PortError::Oversize { len: 257, mtu: 256 })
        );
        assert_eq!(
            a.send(now, vec![0x20; 40]),
            Err(PortError::NotIp { len: 40 })
        );
        for _ in 0..PORT_QUEUE {
            a.send(now, ipv4([44, 0, 0, 2], 100)).unwrap();
        }
        assert_eq!(
            a.send(now, ipv4([44, 0, 0, 2], 100)),
            Err(PortError::QueueFull)
        );
        assert_eq!(
            a.drops(),
            PortDrops {
                oversize: 1,
                queue_full: 1,
                not_ip: 1
            }
        );
        // The queue drains as frames leave.
        assert!(a.ax25_mut().poll_transmit(now).is_some());
        a.send(now, ipv4([44, 0, 0, 2], 100)).unwrap();
    }
}
