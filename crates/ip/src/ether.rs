//! IP over a bridged Ethernet segment (RFC 894 for IPv4, RFC 2464 for
//! IPv6): the link of the Icom ID-1 radios in D-STAR Digital Data mode,
//! which carry whole Ethernet frames from one radio's Ethernet port to the
//! other's.
//!
//! [`EthInterface`] wraps every datagram smoltcp sends in an Ethernet II
//! header (destination and source MAC, EtherType 0x0800 or 0x86DD) padded
//! to the 60-octet minimum frame (the 4-octet FCS is the medium's to
//! count), and unwraps received frames addressed to it. Neighbours are
//! static, as in the paper's network ("all routing was configured
//! statically"): the hosts' MAC addresses are known, so no ARP or
//! Neighbor Discovery traffic is sent. A pair of hosts needs one
//! neighbour ([`EthInterface::new`]); a host on a segment shared by more
//! ([`EthInterface::with_neighbours`]) looks the destination MAC address
//! up by the datagram's destination IP address in a static table, and a
//! datagram to an address the table lacks cannot be sent: with no
//! address resolution to ask, it is dropped and counted
//! ([`EthStats::datagrams_no_neighbour`]).

use core::net::IpAddr;
use linklab_core::{Engine, Instant};
use std::collections::{HashMap, VecDeque};

use crate::device::Ax25Device;
use crate::host::IpLink;
use crate::iface;

/// Octets of an Ethernet II header: destination, source, EtherType.
pub const ETHERNET_HEADER: usize = 14;
/// Smallest Ethernet frame without FCS (IEEE 802.3 clause 3.2.8).
pub const ETHERNET_MIN_FRAME: usize = 60;
/// EtherType of IPv4 (RFC 894).
pub const ETHERTYPE_IPV4: u16 = 0x0800;
/// EtherType of IPv6 (RFC 2464).
pub const ETHERTYPE_IPV6: u16 = 0x86DD;

/// A 48-bit MAC address.
pub type MacAddress = [u8; 6];

/// An Ethernet II frame carrying `payload`, padded to the minimum size.
pub fn encapsulate(
    destination: MacAddress,
    source: MacAddress,
    ethertype: u16,
    payload: &[u8],
) -> Vec<u8> {
    let mut frame = Vec::with_capacity((ETHERNET_HEADER + payload.len()).max(ETHERNET_MIN_FRAME));
    frame.extend_from_slice(&destination);
    frame.extend_from_slice(&source);
    frame.extend_from_slice(&ethertype.to_be_bytes());
    frame.extend_from_slice(payload);
    frame.resize(frame.len().max(ETHERNET_MIN_FRAME), 0);
    frame
}

/// The destination, EtherType and payload (with any padding) of a frame,
/// if it is long enough to have a header.
pub fn decapsulate(frame: &[u8]) -> Option<(MacAddress, u16, &[u8])> {
    if frame.len() < ETHERNET_HEADER {
        return None;
    }
    let destination: MacAddress = frame[..6].try_into().ok()?;
    let ethertype = u16::from_be_bytes([frame[12], frame[13]]);
    Some((destination, ethertype, &frame[ETHERNET_HEADER..]))
}

/// The length of the IP datagram at the start of `payload` (from its
/// header: padding after it is cut off), if it is IPv4 or IPv6.
fn ip_length(payload: &[u8]) -> Option<usize> {
    match payload.first()? >> 4 {
        4 => Some(usize::from(u16::from_be_bytes([
            *payload.get(2)?,
            *payload.get(3)?,
        ]))),
        6 => Some(40 + usize::from(u16::from_be_bytes([*payload.get(4)?, *payload.get(5)?]))),
        _ => None,
    }
}

/// Where the datagrams smoltcp sends go on the segment.
#[derive(Debug)]
enum Neighbours {
    /// Every datagram to the one other host.
    One(MacAddress),
    /// The MAC address of each destination IP address.
    Table(HashMap<IpAddr, MacAddress>),
}

impl Neighbours {
    /// The destination MAC address of `datagram`, if it has one.
    fn destination(&self, datagram: &[u8]) -> Option<MacAddress> {
        match self {
            Neighbours::One(mac) => Some(*mac),
            Neighbours::Table(table) => table.get(&iface::destination(datagram)?).copied(),
        }
    }
}

/// Counters of an [`EthInterface`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EthStats {
    /// Frames sent.
    pub frames_sent: u64,
    /// Frames received and handed to smoltcp.
    pub frames_received: u64,
    /// Frames dropped: another destination, unknown EtherType or a
    /// truncated datagram.
    pub frames_dropped: u64,
    /// Datagrams from smoltcp not sent: the neighbour table has no entry
    /// for their destination IP address.
    pub datagrams_no_neighbour: u64,
}

/// IP over Ethernet with static neighbours (see the module
/// documentation).
#[derive(Debug)]
pub struct EthInterface {
    mac: MacAddress,
    neighbours: Neighbours,
    device: Ax25Device,
    out: VecDeque<Vec<u8>>,
    stats: EthStats,
}

impl EthInterface {
    /// An interface with address `mac` whose frames go to `neighbour`,
    /// IP MTU `mtu` (1500 on Ethernet) and room for `tx_queue_len`
    /// datagrams from smoltcp.
    pub fn new(mac: MacAddress, neighbour: MacAddress, mtu: usize, tx_queue_len: usize) -> Self {
        EthInterface::from_parts(mac, Neighbours::One(neighbour), mtu, tx_queue_len)
    }

    /// An interface with address `mac` on a segment shared with several
    /// hosts: each datagram goes to the MAC address `neighbours` gives for
    /// its destination IP address (a later entry for an address replaces
    /// an earlier one). The table stands in for the address resolution
    /// RFC 894 (ARP) and RFC 2464 (Neighbor Discovery) rely on, so a
    /// datagram to an address not listed is dropped and counted
    /// ([`EthStats::datagrams_no_neighbour`]), broadcast and multicast
    /// addresses included. IP MTU and queue as for [`EthInterface::new`].
    pub fn with_neighbours(
        mac: MacAddress,
        neighbours: Vec<(IpAddr, MacAddress)>,
        mtu: usize,
        tx_queue_len: usize,
    ) -> Self {
        let table = Neighbours::Table(neighbours.into_iter().collect());
        EthInterface::from_parts(mac, table, mtu, tx_queue_len)
    }

    fn from_parts(
        mac: MacAddress,
        neighbours: Neighbours,
        mtu: usize,
        tx_queue_len: usize,
    ) -> Self {
        EthInterface {
            mac,
            neighbours,
            device: Ax25Device::new(mtu, tx_queue_len),
            out: VecDeque::new(),
            stats: EthStats::default(),
        }
    }

    /// Counters.
    pub fn stats(&self) -> EthStats {
        self.stats
    }

    /// A frame from the medium.
    pub fn handle_frame(&mut self, frame: &[u8]) {
        let datagram = decapsulate(frame).and_then(|(destination, ethertype, payload)| {
            let ours = destination == self.mac || destination == [0xFF; 6];
            let ip = matches!(ethertype, ETHERTYPE_IPV4 | ETHERTYPE_IPV6);
            let len = ip_length(payload)?;
            (ours && ip && len <= payload.len()).then(|| payload[..len].to_vec())
        });
        match datagram {
            Some(datagram) => {
                self.stats.frames_received += 1;
                self.device.push_received(datagram);
            }
            None => self.stats.frames_dropped += 1,
        }
    }
}

/// Ethernet framing has no timers; the radio below queues and keys.
impl Engine for EthInterface {
    type Transmit = Vec<u8>;

    /// The next frame for the medium.
    fn poll_transmit(&mut self, _now: Instant) -> Option<Self::Transmit> {
        let frame = self.out.pop_front()?;
        self.stats.frames_sent += 1;
        Some(frame)
    }

    fn poll_timeout(&self) -> Option<Instant> {
        None
    }

    fn handle_timeout(&mut self, _now: Instant) {}
}

impl IpLink for EthInterface {
    fn device(&self) -> &Ax25Device {
        &self.device
    }

    fn device_mut(&mut self) -> &mut Ax25Device {
        &mut self.device
    }

    fn serve(&mut self, _now: Instant) {
        while let Some(datagram) = self.device.pop_transmitted() {
            let Some(destination) = self.neighbours.destination(&datagram) else {
                self.stats.datagrams_no_neighbour += 1;
                continue;
            };
            let ethertype = if datagram.first().is_some_and(|b| b >> 4 == 6) {
                ETHERTYPE_IPV6
            } else {
                ETHERTYPE_IPV4
            };
            self.out
                .push_back(encapsulate(destination, self.mac, ethertype, &datagram));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::net::{Ipv4Addr, Ipv6Addr};

    #[test]
    fn short_datagrams_are_padded_and_the_padding_cut_on_receipt() {
        let mut ipv4 = vec![0u8; 28];
        ipv4[0] = 0x45;
        ipv4[3] = 28;
        let frame = encapsulate([2; 6], [1; 6], ETHERTYPE_IPV4, &ipv4);
        assert_eq!(frame.len(), ETHERNET_MIN_FRAME);
        let mut iface = EthInterface::new([2; 6], [1; 6], 1500, 10);
        iface.handle_frame(&frame);
        assert_eq!(iface.device.rx_pending(), 1);
        assert_eq!(iface.stats().frames_received, 1);
        iface.handle_frame(&encapsulate([3; 6], [1; 6], ETHERTYPE_IPV4, &[0x45; 40]));
        iface.handle_frame(&frame[..10]);
        assert_eq!(iface.stats().frames_dropped, 2);
    }

    /// A minimal IPv4 header to `destination`.
    fn ipv4_to(destination: [u8; 4]) -> Vec<u8> {
        let mut datagram = vec![0u8; 20];
        datagram[0] = 0x45;
        datagram[3] = 20;
        datagram[16..20].copy_from_slice(&destination);
        datagram
    }

    /// A minimal IPv6 header to `destination`.
    fn ipv6_to(destination: Ipv6Addr) -> Vec<u8> {
        let mut datagram = vec![0u8; 40];
        datagram[0] = 0x60;
        datagram[24..40].copy_from_slice(&destination.octets());
        datagram
    }

    /// Hands `datagrams` to `iface` as smoltcp would; returns the frames'
    /// destination MAC addresses and EtherTypes.
    fn send(iface: &mut EthInterface, datagrams: Vec<Vec<u8>>) -> Vec<(MacAddress, u16)> {
        for datagram in datagrams {
            assert!(iface.device_mut().push_transmit(datagram));
        }
        iface.serve(Instant::ZERO);
        std::iter::from_fn(|| iface.poll_transmit(Instant::ZERO))
            .map(|frame| {
                let (destination, ethertype, _) = decapsulate(&frame).expect("a header");
                (destination, ethertype)
            })
            .collect()
    }

    #[test]
    fn the_neighbour_table_picks_the_destination_mac() {
        let v6 = Ipv6Addr::new(0xfd00, 0, 0, 0, 0, 0, 0, 3);
        let table = vec![
            (IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)), [2; 6]),
            (IpAddr::V4(Ipv4Addr::new(10, 0, 0, 3)), [3; 6]),
            (IpAddr::V6(v6), [3; 6]),
        ];
        let mut iface = EthInterface::with_neighbours([1; 6], table, 1500, 10);
        let datagrams = vec![
            ipv4_to([10, 0, 0, 3]),
            ipv4_to([10, 0, 0, 9]),
            ipv6_to(v6),
            ipv4_to([10, 0, 0, 2]),
        ];
        let sent = send(&mut iface, datagrams);
        assert_eq!(
            sent,
            [
                ([3; 6], ETHERTYPE_IPV4),
                ([3; 6], ETHERTYPE_IPV6),
                ([2; 6], ETHERTYPE_IPV4),
            ]
        );
        let stats = iface.stats();
        assert_eq!((stats.frames_sent, stats.datagrams_no_neighbour), (3, 1));
    }

    #[test]
    fn one_neighbour_gets_every_datagram() {
        let mut iface = EthInterface::new([1; 6], [2; 6], 1500, 10);
        let sent = send(&mut iface, vec![ipv4_to([10, 0, 0, 9]), vec![0xFF; 3]]);
        assert_eq!(sent, [([2; 6], ETHERTYPE_IPV4), ([2; 6], ETHERTYPE_IPV4)]);
        assert_eq!(iface.stats().datagrams_no_neighbour, 0);
    }
}
