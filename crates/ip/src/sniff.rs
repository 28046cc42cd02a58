//! A TCP sniffer on the device: counts segments, retransmissions and
//! duplicates from the sequence numbers of the datagrams that pass
//! (RFC 9293 3.4), since smoltcp keeps no such counters.
//!
//! - On the transmit path, a segment is a **retransmission** when some of
//!   its sequence space (data, SYN or FIN) was sent before on the same
//!   connection.
//! - On the receive path, a segment is a **duplicate** when all of its
//!   sequence space had already arrived: the sender retransmitted data the
//!   receiver had (a spurious retransmission, as seen by the receiver).
//!
//! Sequence numbers are taken relative to the first one seen per
//! direction of a connection, so one connection may carry up to 4 GiB.

use std::collections::HashMap;

use smoltcp::wire::{IpAddress, IpProtocol, Ipv4Packet, Ipv6Packet, TcpPacket};

/// What the sniffer counted on one path.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TcpCounters {
    /// TCP segments seen.
    pub segments: u64,
    /// Segments carrying sequence space (data, SYN or FIN).
    pub data_segments: u64,
    /// Octets of payload seen.
    pub payload_octets: u64,
    /// Octets of the IP datagrams carrying the segments seen (IP and TCP
    /// headers included): less `payload_octets`, what TCP/IP adds.
    pub datagram_octets: u64,
    /// Transmit path: segments that re-sent sequence space already sent.
    /// Receive path: segments whose sequence space had all arrived before.
    pub repeated_segments: u64,
    /// Payload octets in those segments that had been seen before.
    pub repeated_octets: u64,
}

/// One direction of a TCP connection: (source, source port, destination,
/// destination port).
type Flow = (IpAddress, u16, IpAddress, u16);

/// Sequence space seen in one direction, relative to its first number.
#[derive(Debug, Clone, Default)]
struct SeenSpace {
    base: u32,
    /// Disjoint, sorted, merged ranges [start, end) of relative sequence
    /// numbers.
    ranges: Vec<(u64, u64)>,
}

impl SeenSpace {
    /// Octets of [start, end) already in the set.
    fn overlap(&self, start: u64, end: u64) -> u64 {
        self.ranges
            .iter()
            .map(|&(a, b)| end.min(b).saturating_sub(start.max(a)))
            .sum()
    }

    fn insert(&mut self, start: u64, end: u64) {
        self.ranges.push((start, end));
        self.ranges.sort_unstable();
        let mut merged: Vec<(u64, u64)> = Vec::with_capacity(self.ranges.len());
        for &(a, b) in &self.ranges {
            match merged.last_mut() {
                Some(last) if a <= last.1 => last.1 = last.1.max(b),
                _ => merged.push((a, b)),
            }
        }
        self.ranges = merged;
    }
}

/// Counts TCP segments and repeated sequence space on one path (transmit
/// or receive) of an interface.
#[derive(Debug, Clone, Default)]
pub struct TcpSniffer {
    flows: HashMap<Flow, SeenSpace>,
    counters: TcpCounters,
}

impl TcpSniffer {
    /// A sniffer that has seen nothing.
    pub fn new() -> TcpSniffer {
        TcpSniffer::default()
    }

    /// What was counted so far.
    pub fn counters(&self) -> TcpCounters {
        self.counters
    }

    /// Looks at one IP datagram (IPv4 or IPv6); anything that is not a
    /// well-formed TCP segment is ignored.
    pub fn observe(&mut self, datagram: &[u8]) {
        let Some((src, dst, segment)) = tcp_payload(datagram) else {
            return;
        };
        let Ok(tcp) = TcpPacket::new_checked(segment) else {
            return;
        };
        self.counters.segments += 1;
        self.counters.datagram_octets += datagram.len() as u64;
        let payload = tcp.payload().len() as u64;
        self.counters.payload_octets += payload;
        let syn = u64::from(tcp.syn());
        let len = payload + syn + u64::from(tcp.fin());
        let flow = (src, tcp.src_port(), dst, tcp.dst_port());
        let seq = tcp.seq_number().0 as u32;
        let space = self.flows.entry(flow).or_insert_with(|| SeenSpace {
            base: seq,
            ranges: Vec::new(),
        });
        if len == 0 {
            return;
        }
        self.counters.data_segments += 1;
        let start = u64::from(seq.wrapping_sub(space.base));
        let end = start + len;
        let seen = space.overlap(start, end);
        if seen > 0 {
            self.counters.repeated_segments += 1;
            // Sequence space of the payload only (a SYN occupies the first
            // number, a FIN the last).
            let data_seen = space.overlap(start + syn, start + syn + payload);
            self.counters.repeated_octets += data_seen;
        }
        space.insert(start, end);
    }
}

/// Source, destination and TCP segment of an IPv4 or IPv6 datagram
/// carrying TCP directly (no IPv6 extension headers).
fn tcp_payload(datagram: &[u8]) -> Option<(IpAddress, IpAddress, &[u8])> {
    match datagram.first()? >> 4 {
        4 => {
            let ip = Ipv4Packet::new_checked(datagram).ok()?;
            if ip.next_header() != IpProtocol::Tcp || ip.more_frags() || ip.frag_offset() != 0 {
                return None;
            }
            let header = usize::from(ip.header_len());
            let total = usize::from(ip.total_len());
            Some((
                IpAddress::Ipv4(ip.src_addr()),
                IpAddress::Ipv4(ip.dst_addr()),
                datagram.get(header..total)?,
            ))
        }
        6 => {
            let ip = Ipv6Packet::new_checked(datagram).ok()?;
            if ip.next_header() != IpProtocol::Tcp {
                return None;
            }
            let end = 40 + usize::from(ip.payload_len());
            Some((
                IpAddress::Ipv6(ip.src_addr()),
                IpAddress::Ipv6(ip.dst_addr()),
                datagram.get(40..end)?,
            ))
        }
        _ => None,
    }
}
