//! The Protocol Identifier octet of I and UI frames (AX.25 v2.2 3.4, fig. 3.2).

use std::fmt;

/// A Protocol Identifier (AX.25 v2.2 3.4, fig. 3.2). Every octet value maps to
/// exactly one variant through `From<u8>` and back through `From<Pid>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pid {
    /// 0x01: ISO 8208 / CCITT X.25 packet layer protocol.
    X25Plp,
    /// 0x06: compressed TCP/IP packet, Van Jacobson (RFC 1144).
    VjCompressed,
    /// 0x07: uncompressed TCP/IP packet, Van Jacobson (RFC 1144).
    VjUncompressed,
    /// 0x08: segmentation fragment (6.6); the info field starts with a
    /// [`SegmentHeader`](super::SegmentHeader).
    Segmentation,
    /// 0xC3: TEXNET datagram protocol.
    Texnet,
    /// 0xC4: Link Quality Protocol.
    LinkQuality,
    /// 0xCA: AppleTalk.
    AppleTalk,
    /// 0xCB: AppleTalk ARP.
    AppleTalkArp,
    /// 0xCC: ARPA Internet Protocol.
    Ip,
    /// 0xCD: ARPA Address Resolution Protocol.
    Arp,
    /// 0xCE: FlexNet.
    FlexNet,
    /// 0xCF: NET/ROM.
    NetRom,
    /// 0xF0: no layer 3 protocol.
    NoLayer3,
    /// 0xFF: escape; the next octet (the first of the info field) carries
    /// more layer 3 protocol information.
    Escape,
    /// `yy01yyyy` or `yy10yyyy`: "AX.25 layer 3 implemented" (bits 5-4 are
    /// 01 or 10); the octet as received.
    Ax25Layer3(u8),
    /// Any other octet (reserved for future layer 3 protocols).
    Other(u8),
}

impl From<u8> for Pid {
    fn from(octet: u8) -> Pid {
        match octet {
            0x01 => Pid::X25Plp,
            0x06 => Pid::VjCompressed,
            0x07 => Pid::VjUncompressed,
            0x08 => Pid::Segmentation,
            0xC3 => Pid::Texnet,
            0xC4 => Pid::LinkQuality,
            0xCA => Pid::AppleTalk,
            0xCB => Pid::AppleTalkArp,
            0xCC => Pid::Ip,
            0xCD => Pid::Arp,
            0xCE => Pid::FlexNet,
            0xCF => Pid::NetRom,
            0xF0 => Pid::NoLayer3,
            0xFF => Pid::Escape,
            o if matches!(o & 0x30, 0x10 | 0x20) => Pid::Ax25Layer3(o),
            o => Pid::Other(o),
        }
    }
}

impl From<Pid> for u8 {
    fn from(pid: Pid) -> u8 {
        match pid {
            Pid::X25Plp => 0x01,
            Pid::VjCompressed => 0x06,
            Pid::VjUncompressed => 0x07,
            Pid::Segmentation => 0x08,
            Pid::Texnet => 0xC3,
            Pid::LinkQuality => 0xC4,
            Pid::AppleTalk => 0xCA,
            Pid::AppleTalkArp => 0xCB,
            Pid::Ip => 0xCC,
            Pid::Arp => 0xCD,
            Pid::FlexNet => 0xCE,
            Pid::NetRom => 0xCF,
            Pid::NoLayer3 => 0xF0,
            Pid::Escape => 0xFF,
            Pid::Ax25Layer3(o) | Pid::Other(o) => o,
        }
    }
}

impl fmt::Display for Pid {
    /// The octet and a short name, e.g. `0xF0 (no layer 3)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            Pid::X25Plp => "X.25 PLP",
            Pid::VjCompressed => "VJ compressed TCP/IP",
            Pid::VjUncompressed => "VJ uncompressed TCP/IP",
            Pid::Segmentation => "segment",
            Pid::Texnet => "TEXNET",
            Pid::LinkQuality => "LQP",
            Pid::AppleTalk => "AppleTalk",
            Pid::AppleTalkArp => "AppleTalk ARP",
            Pid::Ip => "IP",
            Pid::Arp => "ARP",
            Pid::FlexNet => "FlexNet",
            Pid::NetRom => "NET/ROM",
            Pid::NoLayer3 => "no layer 3",
            Pid::Escape => "escape",
            Pid::Ax25Layer3(_) => "AX.25 layer 3",
            Pid::Other(_) => "reserved",
        };
        write!(f, "0x{:02X} ({name})", u8::from(*self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_octet_round_trips() {
        for octet in 0..=255u8 {
            assert_eq!(u8::from(Pid::from(octet)), octet);
        }
        assert_eq!(Pid::from(0x10), Pid::Ax25Layer3(0x10));
        assert_eq!(Pid::from(0x00), Pid::Other(0x00));
        assert_eq!(Pid::NoLayer3.to_string(), "0xF0 (no layer 3)");
    }
}
