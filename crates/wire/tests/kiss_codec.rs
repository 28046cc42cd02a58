//! KISS encoding and decoding: golden vectors and round-trip properties.

use linklab_wire::kiss::{
    encode, encode_into, escape_into, unescape, Command, Decoder, Frame, KissError, Port, FEND,
    FESC, TFEND, TFESC,
};
use proptest::prelude::*;

mod kiss_strategy;
use kiss_strategy::{any_frame, payload};

fn port(n: u8) -> Port {
    Port::new(n).expect("port in range")
}

fn frame(n: u8, command: Command) -> Frame {
    Frame {
        port: port(n),
        command,
    }
}

/// Decodes a whole byte string, collecting every item.
fn decode_all(bytes: &[u8]) -> Vec<Result<Frame, KissError>> {
    let mut decoder = Decoder::new(1024);
    decoder.push(bytes);
    decoder.collect()
}

#[test]
fn golden_encodings() {
    let cases: Vec<(Frame, &[u8])> = vec![
        (
            Frame::data(b"TEST".to_vec()),
            &[0xC0, 0x00, 0x54, 0x45, 0x53, 0x54, 0xC0],
        ),
        // Transparency: FEND and FESC in data are transposed.
        (Frame::data(vec![0xC0]), &[0xC0, 0x00, 0xDB, 0xDC, 0xC0]),
        (Frame::data(vec![0xDB]), &[0xC0, 0x00, 0xDB, 0xDD, 0xC0]),
        (
            Frame::data(vec![0x41, 0xC0, 0xDB, 0xDC, 0xDD]),
            &[0xC0, 0x00, 0x41, 0xDB, 0xDC, 0xDB, 0xDD, 0xDC, 0xDD, 0xC0],
        ),
        (Frame::data(vec![]), &[0xC0, 0x00, 0xC0]),
        (frame(0, Command::TxDelay(50)), &[0xC0, 0x01, 0x32, 0xC0]),
        (
            frame(0, Command::Persistence(63)),
            &[0xC0, 0x02, 0x3F, 0xC0],
        ),
        (frame(0, Command::SlotTime(10)), &[0xC0, 0x03, 0x0A, 0xC0]),
        (frame(0, Command::TxTail(0)), &[0xC0, 0x04, 0x00, 0xC0]),
        (
            frame(0, Command::FullDuplex(true)),
            &[0xC0, 0x05, 0x01, 0xC0],
        ),
        (
            frame(0, Command::FullDuplex(false)),
            &[0xC0, 0x05, 0x00, 0xC0],
        ),
        (
            frame(1, Command::SetHardware(vec![1, 2])),
            &[0xC0, 0x16, 0x01, 0x02, 0xC0],
        ),
        (
            frame(2, Command::TxDelay(0xC0)),
            &[0xC0, 0x21, 0xDB, 0xDC, 0xC0],
        ),
        (
            frame(
                0,
                Command::AckMode {
                    seq: 0x1234,
                    data: vec![0xAA],
                },
            ),
            &[0xC0, 0x0C, 0x12, 0x34, 0xAA, 0xC0],
        ),
        (
            frame(
                3,
                Command::AckMode {
                    seq: 0xC0DB,
                    data: vec![],
                },
            ),
            &[0xC0, 0x3C, 0xDB, 0xDC, 0xDB, 0xDD, 0xC0],
        ),
        (frame(15, Command::Return), &[0xC0, 0xFF, 0xC0]),
        // The type octet is escaped too: data on port 12 is type 0xC0.
        (
            frame(12, Command::Data(vec![0x01])),
            &[0xC0, 0xDB, 0xDC, 0x01, 0xC0],
        ),
        // ACKMODE on port 13 is type 0xDC, which needs no escape.
        (
            frame(
                13,
                Command::AckMode {
                    seq: 1,
                    data: vec![],
                },
            ),
            &[0xC0, 0xDC, 0x00, 0x01, 0xC0],
        ),
    ];
    for (frame, bytes) in cases {
        assert_eq!(encode(&frame), bytes, "encoding {frame:?}");
        assert_eq!(
            decode_all(bytes),
            vec![Ok(frame.clone())],
            "decoding {bytes:02X?}"
        );
        let mut appended = vec![0x55];
        encode_into(&frame, &mut appended);
        assert_eq!(appended.get(1..), Some(bytes));
    }
}

#[test]
fn return_ignores_port() {
    assert_eq!(encode(&frame(3, Command::Return)), [FEND, 0xFF, FEND]);
    assert_eq!(Frame::parse(&[0xFF]), Ok(frame(15, Command::Return)));
}

#[test]
fn full_duplex_any_nonzero_is_true() {
    assert_eq!(
        Frame::parse(&[0x05, 0x07]),
        Ok(frame(0, Command::FullDuplex(true)))
    );
}

#[test]
fn golden_decoding_errors() {
    let cases: Vec<(&[u8], KissError)> = vec![
        (
            &[0xC0, 0x07, 0x41, 0xC0],
            KissError::UnknownCommand {
                port: 0,
                command: 7,
                type_octet: 0x07,
            },
        ),
        (
            &[0xC0, 0x2F, 0xC0],
            KissError::UnknownCommand {
                port: 2,
                command: 0xF,
                type_octet: 0x2F,
            },
        ),
        (
            &[0xC0, 0x01, 0xC0],
            KissError::BadLength {
                command: "TXDELAY",
                len: 0,
                expected: 1,
            },
        ),
        (
            &[0xC0, 0x02, 0x01, 0x02, 0xC0],
            KissError::BadLength {
                command: "P",
                len: 2,
                expected: 1,
            },
        ),
        (
            &[0xC0, 0xFF, 0x00, 0xC0],
            KissError::BadLength {
                command: "RETURN",
                len: 1,
                expected: 0,
            },
        ),
        (
            &[0xC0, 0x0C, 0x12, 0xC0],
            KissError::AckModeTooShort { len: 1 },
        ),
        (
            &[0xC0, 0x00, 0xDB, 0x41, 0x42, 0xC0],
            KissError::BadEscape { octet: 0x41 },
        ),
    ];
    for (bytes, error) in cases {
        assert_eq!(decode_all(bytes), vec![Err(error)], "decoding {bytes:02X?}");
    }
}

#[test]
fn error_messages_name_the_values() {
    let unknown = KissError::UnknownCommand {
        port: 1,
        command: 0xE,
        type_octet: 0x1E,
    };
    assert_eq!(
        unknown.to_string(),
        "unknown KISS command 0xE on port 1 (type octet 0x1E)"
    );
    let escape = KissError::BadEscape { octet: 0x41 };
    assert_eq!(
        escape.to_string(),
        "bad KISS escape: FESC (0xDB) followed by 0x41; only TFEND (0xDC) or TFESC (0xDD) may follow"
    );
    let length = KissError::BadLength {
        command: "TXDELAY",
        len: 3,
        expected: 1,
    };
    assert_eq!(
        length.to_string(),
        "KISS TXDELAY frame carries 3 octets after the type octet; exactly 1 expected"
    );
}

#[test]
fn unescape_errors() {
    assert_eq!(unescape(&[0x01, FESC]), Err(KissError::EscapeAtEnd));
    assert_eq!(
        unescape(&[0x01, FEND]),
        Err(KissError::FendInData { offset: 1 })
    );
    assert_eq!(
        unescape(&[FESC, 0x00]),
        Err(KissError::BadEscape { octet: 0x00 })
    );
    assert_eq!(unescape(&[FESC, TFEND, FESC, TFESC]), Ok(vec![FEND, FESC]));
    assert_eq!(Frame::parse(&[]), Err(KissError::Empty));
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 1000,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x4c494e4b),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn encode_decode_round_trip(frame in any_frame()) {
        let bytes = encode(&frame);
        // Only the delimiters are FENDs.
        prop_assert_eq!(bytes.iter().filter(|&&b| b == FEND).count(), 2);
        prop_assert_eq!(decode_all(&bytes), vec![Ok(frame.clone())]);

        let mut contents = Vec::new();
        frame.emit(&mut contents);
        prop_assert_eq!(contents.len(), frame.contents_len());
        prop_assert_eq!(Frame::parse(&contents), Ok(frame));
        let inner = bytes.get(1..bytes.len() - 1).unwrap_or(&[]);
        prop_assert_eq!(unescape(inner), Ok(contents));
    }

    #[test]
    fn escape_unescape_round_trip(data in payload()) {
        let mut escaped = Vec::new();
        escape_into(&data, &mut escaped);
        prop_assert!(!escaped.contains(&FEND));
        prop_assert_eq!(unescape(&escaped), Ok(data));
    }
}
