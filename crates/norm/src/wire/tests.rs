use super::*;
use proptest::prelude::*;

fn sender() -> SenderFields {
    SenderFields {
        instance_id: 0x1234,
        grtt: 140,
        backoff: 4,
        gsize: 0x0a,
    }
}

fn fti() -> Extension {
    Extension::Fti(Fti {
        object_size: 0x0102_0304_0506,
        segment_size: 1024,
        max_block_len: 64,
        num_parity: 16,
    })
}

fn round_trip(p: &Packet) -> Vec<u8> {
    let bytes = p.encode().unwrap();
    assert_eq!(bytes[1] as usize * 4 % 4, 0);
    assert_eq!(Packet::decode(&bytes).as_ref(), Ok(p));
    bytes
}

#[test]
fn data_layout_matches_rfc5740_4_2_1() {
    let p = Packet {
        sequence: 7,
        source_id: 0x0a0b_0c0d,
        message: Message::Data(Data {
            sender: sender(),
            flags: object_flags::REPAIR,
            object_id: 0xbeef,
            payload_id: PayloadId {
                sbn: 0x01_0203,
                esi: 9,
            },
            extensions: vec![fti()],
            payload: vec![0xaa; 3],
        }),
    };
    let b = round_trip(&p);
    assert_eq!(
        b,
        [
            0x12, 8, 0, 7, 0x0a, 0x0b, 0x0c, 0x0d, // common header, hdr_len 8 words
            0x12, 0x34, 140, 0x4a, 0x01, 5, 0xbe,
            0xef, // instance, grtt, backoff|gsize, flags, fec_id, object
            0x01, 0x02, 0x03, 9, // FEC Payload ID (RFC 5510 5.1)
            64, 3, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x04, 0x00, 64, 16, // EXT_FTI
            0xaa, 0xaa, 0xaa
        ]
    );
}

/// The first NORM_DATA Debian's libnorm 1.5.9 sent for a 50-octet data
/// object (captured on loopback): every field decodes, and re-encoding
/// gives the same octets.
#[test]
fn libnorm_data_message_decodes_and_re_encodes() {
    let hex = "12080001000000011a90944200050000000000004003000000000032001004020b30557a9fc4e90e33587da2c7ec1136";
    let bytes: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    let p = Packet::decode(&bytes).unwrap();
    let Message::Data(d) = &p.message else {
        panic!("not NORM_DATA: {p:?}");
    };
    assert_eq!((p.sequence, p.source_id), (1, 1));
    assert_eq!(d.sender.backoff, 4);
    assert_eq!(d.payload_id, PayloadId { sbn: 0, esi: 0 });
    assert_eq!(
        d.extensions,
        vec![Extension::Fti(Fti {
            object_size: 50,
            segment_size: 16,
            max_block_len: 4,
            num_parity: 2,
        })]
    );
    assert_eq!(d.payload.len(), 16);
    assert_eq!(p.encode().unwrap(), bytes);
}

#[test]
fn every_message_round_trips() {
    let item = |esi| RepairItem {
        object_id: 3,
        payload_id: PayloadId { sbn: 2, esi },
    };
    let requests = vec![
        RepairRequest {
            form: RepairForm::Items,
            flags: repair_flags::SEGMENT,
            items: vec![item(1), item(5)],
        },
        RepairRequest {
            form: RepairForm::Ranges,
            flags: repair_flags::SEGMENT | repair_flags::INFO,
            items: vec![item(7), item(12)],
        },
    ];
    let cmds = vec![
        Command::Flush {
            object_id: 1,
            payload_id: PayloadId { sbn: 4, esi: 3 },
            acking_nodes: vec![1, 2],
        },
        Command::Eot,
        Command::Squelch {
            object_id: 9,
            payload_id: PayloadId { sbn: 0, esi: 0 },
            invalid_objects: vec![1, 2, 3],
        },
        Command::Cc {
            cc_sequence: 77,
            send_time: Timestamp { sec: 5, usec: 6 },
            nodes: vec![CcNode {
                node_id: 2,
                flags: cc_flags::CLR | cc_flags::RTT,
                rtt: 100,
                rate: quantize_rate(16000.0),
            }],
        },
        Command::RepairAdv {
            flags: 0,
            requests: requests.clone(),
        },
        Command::AckReq {
            ack_type: 16,
            ack_id: 3,
            acking_nodes: vec![5],
        },
        Command::Application {
            content: b"hello".to_vec(),
        },
    ];
    for command in cmds {
        round_trip(&Packet {
            sequence: 1,
            source_id: 1,
            message: Message::Cmd(Cmd {
                sender: sender(),
                extensions: vec![Extension::Rate { send_rate: 0x1234 }],
                command,
            }),
        });
    }
    let cc = Extension::Cc(CcFeedback {
        cc_sequence: 77,
        flags: cc_flags::CLR,
        rtt: 90,
        loss: 1000,
        rate: 0x5556,
        loss_ex: 0,
    });
    let b = round_trip(&Packet {
        sequence: 2,
        source_id: 2,
        message: Message::Nack(Nack {
            server_id: 1,
            instance_id: 0x1234,
            grtt_response: Timestamp { sec: 1, usec: 2 },
            extensions: vec![cc.clone()],
            requests,
        }),
    });
    assert_eq!(b[1], 9, "NACK header 24 octets + EXT_CC 12");
    for content in [
        AckContent::Cc,
        AckContent::Flush {
            object_id: 4,
            payload_id: PayloadId { sbn: 1, esi: 2 },
        },
        AckContent::Other {
            ack_type: 16,
            payload: vec![1, 2, 3],
        },
    ] {
        round_trip(&Packet {
            sequence: 3,
            source_id: 2,
            message: Message::Ack(Ack {
                server_id: 1,
                instance_id: 9,
                ack_id: 4,
                grtt_response: Timestamp::default(),
                extensions: vec![cc.clone()],
                content,
            }),
        });
    }
    round_trip(&Packet {
        sequence: 4,
        source_id: 1,
        message: Message::Info(Info {
            sender: sender(),
            flags: object_flags::INFO,
            object_id: 2,
            extensions: vec![
                fti(),
                Extension::Other {
                    het: 200,
                    content: vec![1, 2, 3],
                },
            ],
            info: b"name".to_vec(),
        }),
    });
}

#[test]
fn strict_decoding_rejects_malformed_messages() {
    assert_eq!(Packet::decode(&[0x12, 5]), Err(DecodeError::Truncated(2)));
    let mut ok = Packet {
        sequence: 0,
        source_id: 0,
        message: Message::Cmd(Cmd {
            sender: sender(),
            extensions: vec![],
            command: Command::Eot,
        }),
    }
    .encode()
    .unwrap();
    assert!(Packet::decode(&ok).is_ok());
    ok[0] = 0x23;
    assert_eq!(Packet::decode(&ok), Err(DecodeError::BadVersion(2)));
    ok[0] = 0x13;
    ok[1] = 3;
    assert_eq!(Packet::decode(&ok), Err(DecodeError::BadHeaderLength(12)));
    ok[1] = 4;
    ok[12] = 9;
    assert_eq!(Packet::decode(&ok), Err(DecodeError::BadFlavor(9)));
    // A data message with another FEC scheme.
    let mut data = vec![
        0x12, 5, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 129, 0, 0, 0, 0, 0, 0,
    ];
    assert_eq!(
        Packet::decode(&data),
        Err(DecodeError::UnsupportedFecId(129))
    );
    // An extension with HEL 0 would loop forever: refused.
    data[13] = 5;
    data[1] = 6;
    data.extend_from_slice(&[10, 0, 0, 0]);
    assert_eq!(Packet::decode(&data), Err(DecodeError::BadExtension(10)));
    assert_eq!(
        PayloadId {
            sbn: 1 << 24,
            esi: 0
        }
        .encode(),
        Err(EncodeError::BlockNumberTooLarge(1 << 24))
    );
}

proptest! {
    #[test]
    fn decoding_never_panics_and_what_decodes_re_encodes(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        if let Ok(p) = Packet::decode(&bytes) {
            let again = p.encode().expect("a decoded packet encodes");
            prop_assert_eq!(Packet::decode(&again), Ok(p));
        }
    }

    #[test]
    fn data_round_trips(seq in any::<u16>(), src in any::<u32>(), obj in any::<u16>(),
                        sbn in 0..=PayloadId::MAX_SBN, esi in any::<u8>(),
                        payload in proptest::collection::vec(any::<u8>(), 0..64)) {
        let p = Packet { sequence: seq, source_id: src, message: Message::Data(Data {
            sender: sender(), flags: 0, object_id: obj, payload_id: PayloadId { sbn, esi },
            extensions: vec![fti()], payload,
        })};
        round_trip(&p);
    }
}
