//! Proptest strategies shared by the KISS tests.

use linklab_wire::kiss::{Command, Frame, Port, FEND, FESC, TFEND, TFESC};
use proptest::prelude::*;

/// Payload octets, with the special values FEND, FESC, TFEND and TFESC
/// made frequent.
pub fn payload() -> impl Strategy<Value = Vec<u8>> {
    // One octet in eight is FEND, FESC, TFEND or TFESC.
    prop::collection::vec(any::<u8>(), 0..300).prop_map(|octets| {
        octets
            .into_iter()
            .map(|octet| match octet % 32 {
                0 => FEND,
                1 => FESC,
                2 => TFEND,
                3 => TFESC,
                _ => octet,
            })
            .collect()
    })
}

/// Any command; RETURN only with port 15, as decoding reports it.
pub fn any_frame() -> impl Strategy<Value = Frame> {
    let command = prop_oneof![
        payload().prop_map(Command::Data),
        any::<u8>().prop_map(Command::TxDelay),
        any::<u8>().prop_map(Command::Persistence),
        any::<u8>().prop_map(Command::SlotTime),
        any::<u8>().prop_map(Command::TxTail),
        any::<bool>().prop_map(Command::FullDuplex),
        payload().prop_map(Command::SetHardware),
        (any::<u16>(), payload()).prop_map(|(seq, data)| Command::AckMode { seq, data }),
        Just(Command::Return),
    ];
    (0..16u8, command).prop_map(|(n, command)| {
        let n = if command == Command::Return { 15 } else { n };
        Frame {
            port: Port::new(n).expect("port in range"),
            command,
        }
    })
}
