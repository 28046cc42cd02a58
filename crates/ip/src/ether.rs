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
//! statically"): the two hosts' MAC addresses are known, so no ARP or
//! Neighbor Discovery traffic is sent.

use linklab_core::{Engine, Instant};
use std::collections::VecDeque;

use crate::device::Ax25Device;
use crate::host::IpLink;

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
}

/// IP over Ethernet with one static neighbour (see the module
/// documentation).
#[derive(Debug)]
pub struct EthInterface {
    mac: MacAddress,
    neighbour: MacAddress,
    device: Ax25Device,
    out: VecDeque<Vec<u8>>,
    stats: EthStats,
}

impl EthInterface {
    /// An interface with address `mac` whose frames go to `neighbour`,
    /// IP MTU `mtu` (1500 on Ethernet) and room for `tx_queue_len`
    /// datagrams from smoltcp.
    pub fn new(mac: MacAddress, neighbour: MacAddress, mtu: usize, tx_queue_len: usize) -> Self {
        EthInterface {
            mac,
            neighbour,
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
            let ethertype = if datagram.first().is_some_and(|b| b >> 4 == 6) {
                ETHERTYPE_IPV6
            } else {
                ETHERTYPE_IPV4
            };
            self.out
                .push_back(encapsulate(self.neighbour, self.mac, ethertype, &datagram));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
