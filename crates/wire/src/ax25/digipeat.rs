//! The Layer 2 repeater (digipeater): which received frames a station
//! repeats, and the frame it sends again (AX.25 v2.2 3.12.5, 6.1).
//!
//! A frame goes through the repeaters of its address field in the order
//! they are listed. Each repeater subfield has the H (has-been-repeated)
//! bit, bit 7 of its SSID octet: 0 on the way to that repeater, set to 1
//! by the repeater when it retransmits the frame (3.12.5). So the next hop
//! is the first repeater whose H bit is still 0, and a station repeats a
//! frame only if that next hop is its own address; it changes nothing
//! else, and keeps no link state (6.1: a link is between the destination
//! and the source; the repeaters only relay it). A station that has
//! already repeated the frame (its address with the H bit set) does not
//! repeat it again, even if the path names it once more: TNC firmware and
//! the Layer 2 digipeater rules of ax25.net do the same, so that no frame
//! is sent twice by one station and a path cannot make it loop.

use super::address::{same_station, Address, AddressField, ADDRESS_LEN};

/// The H bit in the SSID octet of a repeater subfield (3.12.5).
const H_BIT: u8 = 0x80;

/// The frame `mycall` transmits again when it receives `frame` as a
/// digipeater, or `None` if it does not repeat it.
///
/// `frame` is an AX.25 frame without flags and FCS, as KISS carries it
/// (and as it was received intact). It is repeated if the first repeater
/// address whose H bit is 0 is `mycall` (callsign and SSID; the reserved
/// bits do not matter): the frame returned is the same octets with that
/// H bit set (AX.25 v2.2 3.12.5). Not repeated: a frame whose address
/// field does not decode or that has no control field, a frame with no
/// repeater path, one every repeater has already repeated, one `mycall`
/// has already repeated (an earlier repeater address with the H bit set
/// is `mycall`), and one whose next repeater is another station.
pub fn digipeat(frame: &[u8], mycall: &Address) -> Option<Vec<u8>> {
    let (field, used) = AddressField::decode(frame).ok()?;
    // A frame is the address field, then at least a control field (3).
    if frame.len() <= used {
        return None;
    }
    let is_mine = |d: &Address| same_station(d, mycall);
    let next = field.digipeaters().iter().position(|d| !d.c_or_h())?;
    let (repeated_by, rest) = field.digipeaters().split_at(next);
    if !rest.first().is_some_and(is_mine) || repeated_by.iter().any(is_mine) {
        return None;
    }
    // Destination and source come first, then the repeaters; the H bit is
    // in the last (SSID) octet of the subfield.
    let ssid_octet = (2 + next) * ADDRESS_LEN + ADDRESS_LEN - 1;
    let mut repeated = frame.to_vec();
    *repeated.get_mut(ssid_octet)? |= H_BIT;
    Some(repeated)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ax25::{CommandResponse, Frame, Pid};
    use crate::control::{Control, Modulus, Supervisory};

    fn a(text: &str) -> Address {
        text.parse().unwrap()
    }

    /// `via` as "CALL" (H = 0) or "CALL*" (H = 1).
    fn path(via: &[&str]) -> Vec<Address> {
        via.iter()
            .map(|v| {
                let mut d = a(v.trim_end_matches('*'));
                d.set_c_or_h(v.ends_with('*'));
                d
            })
            .collect()
    }

    fn ui(via: &[&str]) -> Vec<u8> {
        Frame::ui(
            a("N0C"),
            a("N0A"),
            &path(via),
            Pid::NoLayer3,
            b"hi".to_vec(),
        )
        .unwrap()
        .encode()
    }

    fn hops(frame: &[u8]) -> Vec<bool> {
        Frame::decode(frame, Modulus::Mod8)
            .unwrap()
            .digipeaters()
            .iter()
            .map(Address::c_or_h)
            .collect()
    }

    #[test]
    fn the_next_hop_repeats_with_its_h_bit_set_and_nothing_else_changed() {
        let frame = ui(&["DIGI-1"]);
        let repeated = digipeat(&frame, &a("DIGI-1")).unwrap();
        assert_eq!(hops(&repeated), [true]);
        let mut expected = frame.clone();
        expected[3 * ADDRESS_LEN - 1] |= H_BIT;
        assert_eq!(repeated, expected);
        // The repeated frame is not repeated again by the same station.
        assert_eq!(digipeat(&repeated, &a("DIGI-1")), None);
    }

    #[test]
    fn the_second_repeater_waits_for_the_first() {
        let frame = ui(&["DIGI-1", "RELAY"]);
        assert_eq!(digipeat(&frame, &a("RELAY")), None, "not yet its turn");
        let once = digipeat(&frame, &a("DIGI-1")).unwrap();
        let twice = digipeat(&once, &a("RELAY")).unwrap();
        assert_eq!(hops(&twice), [true, true]);
        assert_eq!(digipeat(&twice, &a("DIGI-1")), None);
        assert_eq!(digipeat(&twice, &a("RELAY")), None);
    }

    #[test]
    fn frames_not_for_this_repeater_are_left_alone() {
        assert_eq!(digipeat(&ui(&[]), &a("N0C")), None, "no path");
        assert_eq!(digipeat(&ui(&["DIGI-1"]), &a("DIGI-2")), None, "SSID");
        assert_eq!(digipeat(&ui(&["DIGI-1"]), &a("DIGI")), None, "SSID 0");
        assert_eq!(digipeat(&ui(&["OTHER"]), &a("DIGI")), None);
        assert_eq!(digipeat(&ui(&["DIGI*"]), &a("DIGI")), None, "repeated");
        let frame = ui(&["DIGI"]);
        let twice = digipeat(&ui(&["DIGI", "DIGI"]), &a("DIGI")).unwrap();
        assert_eq!(hops(&twice), [true, false]);
        assert_eq!(digipeat(&twice, &a("DIGI")), None, "repeated by us");
        let header = &frame[..3 * ADDRESS_LEN];
        assert_eq!(digipeat(header, &a("DIGI")), None, "no control field");
        assert_eq!(digipeat(&frame[..10], &a("DIGI")), None, "truncated");
        assert_eq!(digipeat(&[], &a("DIGI")), None);
    }

    #[test]
    fn any_frame_type_and_modulus_is_repeated_octet_for_octet() {
        // An RR response of a modulo-128 link: the repeater need not know
        // the link's modulus, since only the address field is read.
        let field = AddressField::new(
            a("N0C"),
            a("N0A"),
            &path(&["W1AW*", "DIGI-3"]),
            CommandResponse::Response,
        )
        .unwrap();
        let rr = Frame::s(field, Modulus::Mod128, Supervisory::Rr, 100, true)
            .unwrap()
            .encode();
        let mut repeated = digipeat(&rr, &a("DIGI-3")).unwrap();
        let decoded = Frame::decode(&repeated, Modulus::Mod128).unwrap();
        assert!(decoded.digipeaters()[1].c_or_h());
        assert!(decoded.is_response());
        assert!(matches!(decoded.control(), Control::S { nr: 100, .. }));
        repeated[4 * ADDRESS_LEN - 1] &= !H_BIT;
        assert_eq!(repeated, rr);
    }
}
