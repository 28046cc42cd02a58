//! AXUDP: one AX.25 frame per UDP datagram, as ax25ipd and LinBPQ's AXIP
//! port exchange them (RFC 1226, "Internet Protocol Encapsulation of AX.25
//! Frames", carried in UDP instead of IP protocol 93).
//!
//! A datagram is the frame from the address field onward (no flags, no
//! bit stuffing) followed by its FCS-16, low octet first:
//!
//! ```text
//! | Address 14-70 | Control 1-2 | PID 0-1 | Information 0-N | FCS 2 |
//! ```
//!
//! RFC 1226 keeps the FCS so that a frame damaged between gateways is not
//! put on the air. The FCS is the HDLC one of [`crate::fcs`] (ISO/IEC 13239
//! clause 4; AX.25 v2.2 section 3.8), the same register preset, polynomial
//! and complement; ax25ipd computes it with the table of RFC 1171 appendix
//! B (ax25ipd/crc.c, `compute_crc`) and writes it least significant octet
//! first (ax25ipd/process.c, `add_crc`), and checks a received datagram by
//! the receiver's residue 0xF0B8 over frame and FCS (crc.c, `ok_crc`).
//!
//! ax25ipd refuses a received datagram whose FCS is wrong, then one whose
//! frame (FCS removed) is shorter than 15 octets, two addresses and a
//! control field (process.c, `from_ip`). [`decode`] refuses the same
//! datagrams, testing the length first: a datagram too short to hold an
//! address field is [`AxudpError::TooShort`] whatever its last two octets.
//!
//! [`next_hop`] is the station a gateway routes a frame to: the first
//! digipeater that has not repeated it, else the destination
//! (ax25ipd/process.c, `next_addr`).

use thiserror::Error;

use crate::ax25::{Address, AddressError, AddressField};
use crate::fcs;

/// Octets of the FCS-16 at the end of a datagram.
pub const FCS_LEN: usize = 2;

/// The shortest AX.25 frame a gateway passes on: destination and source
/// addresses (7 octets each) and a one-octet control field (AX.25 v2.2
/// section 3.12 and 4.2; ax25ipd's `l < 15` test in process.c).
pub const MIN_FRAME_LEN: usize = 15;

/// The shortest datagram [`decode`] accepts: [`MIN_FRAME_LEN`] plus the
/// FCS.
pub const MIN_DATAGRAM_LEN: usize = MIN_FRAME_LEN + FCS_LEN;

/// Why a datagram is not an AXUDP frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum AxudpError {
    /// Fewer octets than two addresses, a control field and the FCS.
    #[error(
        "AXUDP datagram of {len} octets is too short: at least {MIN_DATAGRAM_LEN} expected (two addresses, control, FCS)"
    )]
    TooShort {
        /// The datagram's length.
        len: usize,
    },
    /// The FCS-16 at the end does not match the frame before it.
    #[error(
        "AXUDP datagram of {len} octets has a bad FCS: it carries 0x{received:04X}, the frame's is 0x{computed:04X}"
    )]
    BadFcs {
        /// The datagram's length.
        len: usize,
        /// The FCS carried (its last two octets read low octet first).
        received: u16,
        /// The FCS of the frame before it.
        computed: u16,
    },
}

/// The datagram carrying `frame` (address field onward, without FCS):
/// the frame, then its FCS-16 low octet first.
///
/// ```
/// use linklab_wire::axudp;
/// let frame = b"\x9c\x60\x86\x82\x98\x98\xe4\x9c\x60\x86\x82\x98\x98\x63\x3f";
/// let datagram = axudp::encode(frame);
/// assert_eq!(axudp::decode(&datagram), Ok(&frame[..]));
/// ```
pub fn encode(frame: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(frame.len().saturating_add(FCS_LEN));
    encode_into(frame, &mut out);
    out
}

/// Appends the datagram carrying `frame` to `out`.
pub fn encode_into(frame: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(frame);
    out.extend_from_slice(&fcs::fcs16(frame).to_le_bytes());
}

/// The frame a datagram carries, FCS removed, if the datagram holds at
/// least [`MIN_DATAGRAM_LEN`] octets and its FCS is right. The frame's
/// contents are not checked further: that is the data link's job.
pub fn decode(datagram: &[u8]) -> Result<&[u8], AxudpError> {
    let len = datagram.len();
    if len < MIN_DATAGRAM_LEN {
        return Err(AxudpError::TooShort { len });
    }
    let (frame, carried) = datagram
        .split_last_chunk::<FCS_LEN>()
        .ok_or(AxudpError::TooShort { len })?;
    if fcs::check(datagram) {
        Ok(frame)
    } else {
        Err(AxudpError::BadFcs {
            len,
            received: u16::from_le_bytes(*carried),
            computed: fcs::fcs16(frame),
        })
    }
}

/// The station that should get `frame` next (a frame without FCS): the
/// first digipeater whose H bit is clear, or the destination when there
/// are none or all have repeated it (AX.25 v2.2 section 3.12.3, 6.6;
/// ax25ipd/process.c, `next_addr`). The address comes with its C/H bit
/// and reserved bits as carried.
pub fn next_hop(frame: &[u8]) -> Result<Address, AddressError> {
    let (field, _) = AddressField::decode(frame)?;
    Ok(field
        .digipeaters()
        .iter()
        .find(|digi| !digi.c_or_h())
        .copied()
        .unwrap_or(*field.dest()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ax25::CommandResponse;

    fn address(text: &str) -> Address {
        text.parse().unwrap()
    }

    /// A UI frame with PID 0xF0 and `info` from N0CALL-1 to `dest` via
    /// `via` (H bits as given).
    fn ui(dest: &str, via: &[Address], info: &[u8]) -> Vec<u8> {
        let field = AddressField::new(
            address(dest),
            address("N0CALL-1"),
            via,
            CommandResponse::Command,
        )
        .unwrap();
        let mut frame = Vec::new();
        field.encode_into(&mut frame);
        frame.extend_from_slice(&[0x03, 0xF0]);
        frame.extend_from_slice(info);
        frame
    }

    #[test]
    fn fcs_goes_low_octet_first() {
        // The check value of CRC-16/X.25 over "123456789" is 0x906E;
        // ax25ipd's add_crc writes 0x6E then 0x90.
        let datagram = encode(b"123456789");
        assert_eq!(datagram.get(9..), Some(&[0x6E, 0x90][..]));
    }

    #[test]
    fn round_trip() {
        let frame = ui("QST", &[], b"hello");
        let datagram = encode(&frame);
        assert_eq!(datagram.len(), frame.len() + FCS_LEN);
        assert_eq!(decode(&datagram), Ok(frame.as_slice()));
        let mut appended = vec![0xAA];
        encode_into(&frame, &mut appended);
        assert_eq!(appended.get(1..), Some(datagram.as_slice()));
    }

    #[test]
    fn the_shortest_frame_passes() {
        let frame = [0x40u8; MIN_FRAME_LEN];
        assert_eq!(decode(&encode(&frame)), Ok(&frame[..]));
    }

    #[test]
    fn short_datagrams_are_refused() {
        for len in 0..MIN_DATAGRAM_LEN {
            let frame = vec![0x40u8; len.saturating_sub(FCS_LEN)];
            let mut datagram = encode(&frame);
            datagram.truncate(len);
            assert_eq!(decode(&datagram), Err(AxudpError::TooShort { len }));
        }
        assert_eq!(
            AxudpError::TooShort { len: 3 }.to_string(),
            "AXUDP datagram of 3 octets is too short: at least 17 expected (two addresses, control, FCS)"
        );
    }

    #[test]
    fn a_bad_fcs_is_refused_and_named() {
        let frame = ui("N0CALL-2", &[], b"x");
        let mut datagram = encode(&frame);
        let computed = fcs::fcs16(&frame);
        let last = datagram.len() - 1;
        datagram[last] ^= 0x01;
        let received = computed ^ 0x0100;
        let err = decode(&datagram).unwrap_err();
        assert_eq!(
            err,
            AxudpError::BadFcs {
                len: datagram.len(),
                received,
                computed
            }
        );
        assert_eq!(
            err.to_string(),
            format!(
                "AXUDP datagram of {} octets has a bad FCS: it carries 0x{received:04X}, the frame's is 0x{computed:04X}",
                datagram.len()
            )
        );
        // A damaged frame octet is caught too.
        let mut damaged = encode(&frame);
        damaged[3] ^= 0x20;
        assert!(matches!(decode(&damaged), Err(AxudpError::BadFcs { .. })));
    }

    #[test]
    fn next_hop_is_the_first_unrepeated_digipeater_else_the_destination() {
        let mut relay = address("RELAY");
        let wide = address("WIDE2-2");
        // The destination comes with its C bit (set: a command).
        let hop = next_hop(&ui("N0CALL-2", &[], b"")).unwrap();
        assert_eq!((hop.to_string().as_str(), hop.c_or_h()), ("N0CALL-2", true));
        let hop = next_hop(&ui("N0CALL-2", &[relay, wide], b"")).unwrap();
        assert_eq!(hop, relay);
        relay.set_c_or_h(true);
        assert_eq!(next_hop(&ui("N0CALL-2", &[relay, wide], b"")), Ok(wide));
        let mut both = wide;
        both.set_c_or_h(true);
        let hop = next_hop(&ui("N0CALL-2", &[relay, both], b"")).unwrap();
        assert_eq!(hop.to_string(), "N0CALL-2");
        assert!(next_hop(&[0x40; 7]).is_err());
    }
}
