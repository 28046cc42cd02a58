//! The command/response rules of the single-octet address field: the LAPB
//! address table of X.25 2.4.2 and the primary/secondary rule of NRM/ARM.

use linklab_wire::lapb::{
    lapb_address, lapb_command_response, unbalanced_command_response, Address, CommandResponse,
    LapbError, LinkProcedure, Role, Station,
};

use CommandResponse::{Command, Response};
use LinkProcedure::{Multilink, SingleLink};
use Role::{Dce, Dte};

/// X.25 2.4.2, written out row by row: (sender, frame, procedure, address).
const TABLE: [(Role, CommandResponse, LinkProcedure, u8); 8] = [
    (Dce, Command, SingleLink, 0x03),  // A
    (Dce, Response, SingleLink, 0x01), // B
    (Dte, Command, SingleLink, 0x01),  // B
    (Dte, Response, SingleLink, 0x03), // A
    (Dce, Command, Multilink, 0x0F),   // C
    (Dce, Response, Multilink, 0x07),  // D
    (Dte, Command, Multilink, 0x07),   // D
    (Dte, Response, Multilink, 0x0F),  // C
];

#[test]
fn sender_side_follows_the_x25_table() {
    for (sender, frame, procedure, octet) in TABLE {
        assert_eq!(
            lapb_address(sender, frame, procedure),
            Address(octet),
            "{sender} {frame:?} on a {procedure} link"
        );
    }
}

#[test]
fn receiver_side_follows_the_x25_table() {
    for (sender, frame, procedure, octet) in TABLE {
        let receiver = sender.peer();
        assert_eq!(
            lapb_command_response(receiver, Address(octet), procedure),
            Ok(frame),
            "{receiver} receiving {octet:#04x} on a {procedure} link"
        );
    }
}

#[test]
fn letters_have_the_x25_bit_patterns() {
    // X.25 writes addresses bit 1 first: A = 11000000, B = 10000000,
    // C = 11110000, D = 11100000.
    let from_x25 = |bits: &str| {
        bits.chars()
            .enumerate()
            .map(|(i, c)| u8::from(c == '1') << i)
            .sum::<u8>()
    };
    assert_eq!(Address::A, Address(from_x25("11000000")));
    assert_eq!(Address::B, Address(from_x25("10000000")));
    assert_eq!(Address::C, Address(from_x25("11110000")));
    assert_eq!(Address::D, Address(from_x25("11100000")));
    assert_eq!(SingleLink.station_address(Dte), Address::A);
    assert_eq!(SingleLink.station_address(Dce), Address::B);
    assert_eq!(Multilink.station_address(Dte), Address::C);
    assert_eq!(Multilink.station_address(Dce), Address::D);
}

#[test]
fn every_other_address_is_refused_by_both_roles() {
    for procedure in [SingleLink, Multilink] {
        let valid = [
            procedure.station_address(Dte),
            procedure.station_address(Dce),
        ];
        for octet in 0..=255u8 {
            for receiver in [Dte, Dce] {
                let result = lapb_command_response(receiver, Address(octet), procedure);
                assert_eq!(result.is_ok(), valid.contains(&Address(octet)));
            }
        }
    }
    // The multilink addresses are not valid on a single link, nor the reverse.
    assert!(lapb_command_response(Dte, Address::C, SingleLink).is_err());
    assert!(lapb_command_response(Dce, Address::A, Multilink).is_err());
}

#[test]
fn unexpected_address_error_names_what_was_expected() {
    let err = lapb_command_response(Dte, Address(0x05), SingleLink).unwrap_err();
    assert_eq!(
        err,
        LapbError::UnexpectedAddress {
            address: Address(0x05),
            receiver: Dte,
            procedure: SingleLink,
            own: Address::A,
            peer: Address::B,
        }
    );
    assert_eq!(
        err.to_string(),
        "address 0x05 is neither of the two used by single-link LAPB: a DTE receives \
         commands with address 0x03 (A) and responses with 0x01 (B)"
    );
}

#[test]
fn unbalanced_primary_sends_commands_secondary_responses() {
    assert_eq!(unbalanced_command_response(Station::Primary), Command);
    assert_eq!(unbalanced_command_response(Station::Secondary), Response);
    assert!(Command.is_command());
    assert!(!Response.is_command());
}

#[test]
fn special_addresses_and_display() {
    assert_eq!(Address::ALL_STATIONS.octet(), 0xFF);
    assert_eq!(Address::NO_STATION.octet(), 0x00);
    assert_eq!(Address::A.to_string(), "0x03 (A)");
    assert_eq!(Address(0xFF).to_string(), "0xFF");
    assert_eq!(Address::D.lapb_name(), Some("D"));
    assert_eq!(Address(0x05).lapb_name(), None);
    assert_eq!(u8::from(Address::from(0x42)), 0x42);
}
