//! A session fed bad input ends with a cause that names it, reports what
//! was in flight, and never panics.

use linklab_ax25cl::wire::{ContactHeader, DecodeError, Message, RefuseReason, END, START};
use linklab_ax25cl::{Cause, Config, Event, SendError, Session, State};
use proptest::prelude::*;

fn established(config: Config) -> Session {
    let mut session = Session::new(config).unwrap();
    session.link_up();
    let header = ContactHeader {
        flags: 0,
        keepalive_interval: 0,
        local_eid: "ipn:9.0".into(),
    };
    session.handle_input(&header.encode());
    assert_eq!(session.state(), State::Established);
    assert_eq!(
        session.poll_event(),
        Some(Event::Established {
            peer_eid: "ipn:9.0".into()
        })
    );
    while session.poll_transmit().is_some() {}
    session
}

fn events(session: &mut Session) -> Vec<Event> {
    std::iter::from_fn(|| session.poll_event()).collect()
}

fn segment(flags: u8, data: &[u8]) -> Vec<u8> {
    Message::DataSegment {
        flags,
        data: data.to_vec(),
    }
    .to_vec()
}

#[test]
fn a_bad_crc_ends_the_session_and_keeps_what_arrived() {
    let mut session = established(Config::new("ipn:1.0"));
    session.handle_input(&segment(START, b"first segment"));
    let mut bad = segment(0, b"second segment");
    bad[5] ^= 0x04;
    session.handle_input(&bad);
    session.handle_input(&segment(END, b"never read"));
    assert_eq!(session.state(), State::Closed);
    let ev = events(&mut session);
    assert_eq!(
        ev[0],
        Event::PartialReceived {
            data: b"first segment".to_vec()
        }
    );
    let Event::SessionEnded { cause } = &ev[1] else {
        panic!("{ev:?}")
    };
    assert!(matches!(
        cause,
        Cause::Malformed(DecodeError::BadCrc { .. })
    ));
    assert!(cause.release_link());
    // Once the link is released the session is down and quiet.
    session.link_down();
    assert_eq!(session.state(), State::Down);
    assert!(events(&mut session).is_empty());
}

#[test]
fn bad_contact_headers_are_refused() {
    for (input, want) in [
        (b"DTN!\x03".to_vec(), DecodeError::BadMagic),
        (b"dtn!\x04".to_vec(), DecodeError::BadVersion(4)),
    ] {
        let mut session = Session::new(Config::new("ipn:1.0")).unwrap();
        session.link_up();
        session.handle_input(&input);
        assert_eq!(
            events(&mut session),
            vec![Event::SessionEnded {
                cause: Cause::Malformed(want)
            }]
        );
    }
}

#[test]
fn protocol_violations_end_the_session() {
    let cases: [(Vec<u8>, Cause); 5] = [
        (vec![0x60], Cause::Malformed(DecodeError::UnknownType(0x60))),
        (
            segment(0, b"no start"),
            Cause::Protocol("DATA_SEGMENT without S"),
        ),
        (
            [segment(START, b"a"), segment(START, b"b")].concat(),
            Cause::Protocol("DATA_SEGMENT with S inside a bundle"),
        ),
        (
            Message::AckSegment {
                acknowledged_length: 1,
            }
            .to_vec(),
            Cause::Protocol("ACK_SEGMENT with no bundle outstanding"),
        ),
        (
            Message::RefuseBundle {
                reason: RefuseReason::Unknown,
            }
            .to_vec(),
            Cause::Protocol("REFUSE_BUNDLE with no bundle being sent"),
        ),
    ];
    for (input, cause) in cases {
        let mut session = established(Config::new("ipn:1.0"));
        session.handle_input(&input);
        assert_eq!(
            events(&mut session).last(),
            Some(&Event::SessionEnded { cause })
        );
    }
}

#[test]
fn an_ack_beyond_the_data_sent_is_a_protocol_error() {
    let mut session = established(Config::new("ipn:1.0"));
    session.send_bundle(7, vec![1; 600]).unwrap();
    let first = session.poll_transmit().unwrap();
    assert_eq!(first.len(), 256);
    session.handle_input(
        &Message::AckSegment {
            acknowledged_length: 300,
        }
        .to_vec(),
    );
    assert_eq!(
        events(&mut session),
        vec![
            Event::TransferInterrupted {
                id: 7,
                acknowledged: 0
            },
            Event::SessionEnded {
                cause: Cause::Protocol(
                    "ACK_SEGMENT length below an earlier one or beyond the data sent"
                )
            }
        ]
    );
}

#[test]
fn an_oversized_bundle_is_refused_and_skipped() {
    let mut config = Config::new("ipn:1.0");
    config.max_bundle_in = 10;
    let mut session = established(config);
    session.handle_input(&segment(START, b"0123456"));
    session.handle_input(&segment(0, b"789ab"));
    assert_eq!(
        Message::decode(&session.poll_transmit().unwrap(), u64::MAX),
        Ok(linklab_ax25cl::wire::Decoded::Message {
            message: Message::RefuseBundle {
                reason: RefuseReason::NoResources
            },
            len: 5
        })
    );
    session.handle_input(&segment(END, b"rest"));
    session.handle_input(&segment(START | END, b"small"));
    assert_eq!(
        events(&mut session),
        vec![Event::BundleReceived {
            data: b"small".to_vec()
        }]
    );
}

#[test]
fn refusal_shutdown_and_send_errors() {
    let mut session = Session::new(Config::new("ipn:1.0")).unwrap();
    assert_eq!(
        session.send_bundle(1, vec![1]),
        Err(SendError::NotEstablished)
    );
    let mut session = established(Config::new("ipn:1.0"));
    assert_eq!(session.send_bundle(1, vec![]), Err(SendError::Empty));
    session.send_bundle(1, vec![1; 10]).unwrap();
    session.send_bundle(2, vec![2; 10]).unwrap();
    session.poll_transmit().unwrap();
    session.handle_input(
        &Message::RefuseBundle {
            reason: RefuseReason::Completed,
        }
        .to_vec(),
    );
    session.handle_input(
        &Message::Shutdown {
            reason: None,
            reconnection_delay: Some(5),
        }
        .to_vec(),
    );
    assert_eq!(
        events(&mut session),
        vec![
            Event::BundleRefused {
                id: 1,
                reason: RefuseReason::Completed
            },
            Event::TransferInterrupted {
                id: 2,
                acknowledged: 0
            },
            Event::SessionEnded {
                cause: Cause::PeerShutdown { reason: None }
            }
        ]
    );
    assert!(session.poll_transmit().is_none());
}

proptest! {
    /// Any octets, cut anywhere, after a valid contact header or not: no
    /// panic, and a session that ended sends no more data.
    #[test]
    fn garbage_never_panics(
        contact in any::<bool>(),
        body in proptest::collection::vec(any::<u8>(), 0..400),
        cut in 1usize..40,
    ) {
        let mut session = Session::new(Config::new("ipn:1.0")).unwrap();
        session.link_up();
        if contact {
            let header = ContactHeader { flags: 3, keepalive_interval: 0, local_eid: "x".into() };
            session.handle_input(&header.encode());
            let _ = session.send_bundle(1, vec![5; 700]);
        }
        for piece in body.chunks(cut) {
            session.handle_input(piece);
            while session.poll_transmit().is_some() {}
        }
        while session.poll_event().is_some() {}
        if session.state() == State::Closed {
            prop_assert!(session.poll_transmit().is_none());
        }
    }
}
