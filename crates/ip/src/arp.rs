//! ARP over AX.25 (RFC 826 with hardware type 3, AX.25), carried in UI
//! frames with PID 0xCD.
//!
//! The packet is RFC 826's with 7-octet hardware addresses (the AX.25
//! address subfield of v2.2 3.12, callsign shifted left one bit, then the
//! SSID octet) and, as the Linux AX.25 stack sends it, the AX.25 PID of IP
//! (0xCC) as the protocol type instead of the Ethernet type 0x0800:
//!
//! ```text
//! | hrd 2 = 3 | pro 2 = 0x00CC | hln 1 = 7 | pln 1 = 4 | op 2 |
//! | sender hw 7 | sender IP 4 | target hw 7 | target IP 4 |
//! ```
//!
//! Requests go to the broadcast address `QST-0`; the target hardware
//! address of a request is all zero octets (RFC 826: "does not care").

use core::net::Ipv4Addr;

use linklab_wire::ax25::{Address, ADDRESS_LEN};
use thiserror::Error;

/// ARP hardware type of AX.25 (RFC 826 `ar$hrd`; IANA hardware type 3).
pub const HARDWARE_AX25: u16 = 3;
/// ARP protocol type of IPv4 on AX.25: the AX.25 PID of IP, 0xCC.
pub const PROTOCOL_IP: u16 = 0x00CC;
/// Octets of an ARP packet for IPv4 over AX.25.
pub const PACKET_LEN: usize = 8 + 2 * (ADDRESS_LEN + 4);

/// RFC 826 `ar$op`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    /// 1, `ares_op$REQUEST`.
    Request,
    /// 2, `ares_op$REPLY`.
    Reply,
}

/// One ARP packet for IPv4 over AX.25.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ArpPacket {
    /// Request or reply.
    pub operation: Operation,
    /// The sender's AX.25 address.
    pub sender_hardware: Address,
    /// The sender's IPv4 address.
    pub sender_ip: Ipv4Addr,
    /// The target's AX.25 address; `None` in a request (sent as zeros).
    pub target_hardware: Option<Address>,
    /// The IPv4 address asked for (request) or answered to (reply).
    pub target_ip: Ipv4Addr,
}

/// Why octets are not an ARP packet for IPv4 over AX.25.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ArpError {
    /// Fewer octets than an AX.25 ARP packet.
    #[error("ARP packet of {len} octets is shorter than the {PACKET_LEN} of IPv4 over AX.25")]
    Truncated {
        /// Octets received.
        len: usize,
    },
    /// Hardware type, protocol type or address lengths are not AX.25 and
    /// IPv4.
    #[error("ARP packet for hardware type {hrd}, protocol 0x{pro:04X}, lengths {hln}/{pln}: not AX.25 (3, 0x00CC, 7/4)")]
    NotAx25Ip {
        /// `ar$hrd`.
        hrd: u16,
        /// `ar$pro`.
        pro: u16,
        /// `ar$hln`.
        hln: u8,
        /// `ar$pln`.
        pln: u8,
    },
    /// An operation other than request (1) or reply (2).
    #[error("ARP operation {0} is neither request (1) nor reply (2)")]
    Operation(u16),
    /// A hardware address field is not a valid AX.25 address.
    #[error("ARP {which} hardware address is not an AX.25 address: {reason}")]
    Address {
        /// "sender" or "target".
        which: &'static str,
        /// The address decoder's message.
        reason: String,
    },
}

impl ArpPacket {
    /// Encodes the packet (RFC 826 field order, network byte order).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(PACKET_LEN);
        out.extend_from_slice(&HARDWARE_AX25.to_be_bytes());
        out.extend_from_slice(&PROTOCOL_IP.to_be_bytes());
        out.push(ADDRESS_LEN as u8);
        out.push(4);
        let op: u16 = match self.operation {
            Operation::Request => 1,
            Operation::Reply => 2,
        };
        out.extend_from_slice(&op.to_be_bytes());
        out.extend_from_slice(&plain(self.sender_hardware).encode(false));
        out.extend_from_slice(&self.sender_ip.octets());
        match self.target_hardware {
            Some(target) => out.extend_from_slice(&plain(target).encode(false)),
            None => out.extend_from_slice(&[0; ADDRESS_LEN]),
        }
        out.extend_from_slice(&self.target_ip.octets());
        out
    }

    /// Decodes a packet; extra octets after it are ignored (RFC 826 puts
    /// nothing after the target protocol address).
    pub fn decode(octets: &[u8]) -> Result<ArpPacket, ArpError> {
        let Some(p) = octets.get(..PACKET_LEN) else {
            return Err(ArpError::Truncated { len: octets.len() });
        };
        let hrd = u16::from_be_bytes([p[0], p[1]]);
        let pro = u16::from_be_bytes([p[2], p[3]]);
        let (hln, pln) = (p[4], p[5]);
        if hrd != HARDWARE_AX25 || pro != PROTOCOL_IP || usize::from(hln) != ADDRESS_LEN || pln != 4
        {
            return Err(ArpError::NotAx25Ip { hrd, pro, hln, pln });
        }
        let operation = match u16::from_be_bytes([p[6], p[7]]) {
            1 => Operation::Request,
            2 => Operation::Reply,
            other => return Err(ArpError::Operation(other)),
        };
        let ip = |at: usize| Ipv4Addr::new(p[at], p[at + 1], p[at + 2], p[at + 3]);
        let hw = |at: usize, which: &'static str| -> Result<Option<Address>, ArpError> {
            let mut field = [0u8; ADDRESS_LEN];
            field.copy_from_slice(&p[at..at + ADDRESS_LEN]);
            if field == [0; ADDRESS_LEN] {
                return Ok(None);
            }
            Address::decode(&field)
                .map(|(a, _)| Some(plain(a)))
                .map_err(|e| ArpError::Address {
                    which,
                    reason: e.to_string(),
                })
        };
        let sender_hardware = hw(8, "sender")?.ok_or_else(|| ArpError::Address {
            which: "sender",
            reason: "all zero".into(),
        })?;
        Ok(ArpPacket {
            operation,
            sender_hardware,
            sender_ip: ip(15),
            target_hardware: hw(19, "target")?,
            target_ip: ip(26),
        })
    }
}

/// `address` with only callsign and SSID: C/H bit clear, reserved bits
/// set (v2.2 3.12.2), so that the same station always compares equal
/// whatever bits a frame carried.
pub fn plain(address: Address) -> Address {
    Address::new(address.callsign(), address.ssid()).unwrap_or(address)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> ArpPacket {
        ArpPacket {
            operation: Operation::Request,
            sender_hardware: "N0CALL-1".parse().unwrap(),
            sender_ip: Ipv4Addr::new(44, 1, 2, 3),
            target_hardware: None,
            target_ip: Ipv4Addr::new(44, 1, 2, 4),
        }
    }

    #[test]
    fn a_request_encodes_as_rfc_826_with_ax25_fields() {
        let octets = request().encode();
        assert_eq!(octets.len(), PACKET_LEN);
        assert_eq!(&octets[..8], &[0, 3, 0, 0xCC, 7, 4, 0, 1]);
        // "N0CALL" shifted left one bit, then SSID 1 with reserved bits set.
        assert_eq!(
            &octets[8..15],
            &[
                b'N' << 1,
                b'0' << 1,
                b'C' << 1,
                b'A' << 1,
                b'L' << 1,
                b'L' << 1,
                0x62
            ]
        );
        assert_eq!(&octets[15..19], &[44, 1, 2, 3]);
        assert_eq!(&octets[19..26], &[0; 7]);
        assert_eq!(&octets[26..], &[44, 1, 2, 4]);
        assert_eq!(ArpPacket::decode(&octets), Ok(request()));
    }

    #[test]
    fn a_reply_round_trips() {
        let reply = ArpPacket {
            operation: Operation::Reply,
            target_hardware: Some("N0CALL-1".parse().unwrap()),
            sender_hardware: "N0ANS".parse().unwrap(),
            ..request()
        };
        assert_eq!(ArpPacket::decode(&reply.encode()), Ok(reply));
    }

    #[test]
    fn ethernet_arp_and_short_packets_are_refused_with_reasons() {
        let mut octets = request().encode();
        assert_eq!(
            ArpPacket::decode(&octets[..20]),
            Err(ArpError::Truncated { len: 20 })
        );
        octets[1] = 1;
        octets[3] = 0;
        octets[2] = 8;
        let err = ArpPacket::decode(&octets).unwrap_err();
        assert!(err.to_string().contains("hardware type 1"), "{err}");
        let mut op = request().encode();
        op[7] = 9;
        assert_eq!(ArpPacket::decode(&op), Err(ArpError::Operation(9)));
    }
}
