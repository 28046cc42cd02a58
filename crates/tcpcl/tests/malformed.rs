//! A session fed hand-made and random octets: each violation gets the
//! answer RFC 9174 gives it (MSG_REJECT, XFER_REFUSE or SESS_TERM), and
//! nothing panics.

mod support;

use linklab_core::{Engine, Instant};
use linklab_tcpcl::wire::{
    ContactHeader, ExtensionItem, Message, MsgReject, SessInit, SessTerm, XferAck, XferRefuse,
    XferSegment, END, START,
};
use linklab_tcpcl::{
    Cause, Event, RefuseReason, RejectReason, Role, SessTermReason, Session, State,
};
use proptest::prelude::*;
use support::{config, drain_events, drain_messages, passive_established, peer_init};

const NOW: Instant = Instant::ZERO;

fn segment(flags: u8, id: u64, extensions: Vec<ExtensionItem>, data: &[u8]) -> Vec<u8> {
    Message::XferSegment(XferSegment {
        flags,
        transfer_id: id,
        extensions,
        data: data.to_vec(),
    })
    .to_vec()
    .unwrap()
}

fn reject(reason: RejectReason, header: u8) -> Message {
    Message::MsgReject(MsgReject {
        reason,
        rejected_header: header,
    })
}

fn refuse(reason: RefuseReason, id: u64) -> Message {
    Message::XferRefuse(XferRefuse {
        reason,
        transfer_id: id,
    })
}

fn sess_term(reason: SessTermReason) -> Message {
    Message::SessTerm(SessTerm { flags: 0, reason })
}

fn cause(session: &mut Session) -> Cause {
    match drain_events(session).pop() {
        Some(Event::SessionTerminated(t)) => t.cause,
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_wrong_magic_closes_without_a_word() {
    let mut s = Session::new(Role::Passive, config("b"), NOW).unwrap();
    s.handle_input(NOW, b"GET / HTTP/1.1\r\n");
    assert!(s.is_closed());
    assert_eq!(s.poll_transmit(NOW), None);
    assert_eq!(cause(&mut s), Cause::NotTcpcl(b"GET ".to_vec()));
}

#[test]
fn an_unknown_message_type_is_rejected_and_closes() {
    let mut s = passive_established(config("b"));
    s.handle_input(NOW, &[0x09, 1, 2, 3]);
    assert_eq!(
        drain_messages(&mut s, NOW),
        vec![reject(RejectReason::MessageTypeUnknown, 0x09)]
    );
    assert!(s.is_closed());
    assert!(cause(&mut s)
        .to_string()
        .contains("unknown message type code 0x09"));
}

#[test]
fn messages_out_of_place_are_unexpected() {
    let mut s = passive_established(config("b"));
    let mut input = peer_init("dtn://peer/").to_vec().unwrap(); // a second SESS_INIT
    input.extend(segment(0, 5, vec![], b"no start"));
    input.extend(
        Message::XferAck(XferAck {
            flags: END,
            transfer_id: 3,
            acknowledged_length: 1,
        })
        .to_vec()
        .unwrap(),
    );
    input.extend(refuse(RefuseReason::Unknown, 9).to_vec().unwrap());
    s.handle_input(NOW, &input);
    assert_eq!(
        drain_messages(&mut s, NOW),
        vec![
            reject(RejectReason::MessageUnexpected, 0x07),
            reject(RejectReason::MessageUnexpected, 0x01),
            reject(RejectReason::MessageUnexpected, 0x02),
            reject(RejectReason::MessageUnexpected, 0x03),
        ]
    );
    assert_eq!(s.state(), State::Established);
}

#[test]
fn a_transfer_before_sess_init_is_unexpected() {
    let mut s = Session::new(Role::Passive, config("b"), NOW).unwrap();
    s.handle_input(NOW, &ContactHeader::new(false).encode());
    s.handle_input(NOW, &segment(START | END, 0, vec![], b"x"));
    s.handle_input(NOW, &[0x04]);
    assert_eq!(
        drain_messages(&mut s, NOW),
        vec![
            reject(RejectReason::MessageUnexpected, 0x01),
            reject(RejectReason::MessageUnexpected, 0x04),
        ]
    );
    assert_eq!(s.state(), State::Negotiating);
}

#[test]
fn a_segment_over_the_mru_is_skipped_and_its_transfer_refused() {
    let mut c = config("b");
    c.segment_mru = 16;
    let mut s = passive_established(c);
    let mut input = segment(START, 1, vec![], &[7; 40]);
    input.extend(segment(END, 1, vec![], &[7; 4])); // rest of the refused transfer
    input.extend(segment(START | END, 2, vec![], b"fine"));
    // Cut mid-way through the oversized data: it is skipped as it comes.
    s.handle_input(NOW, &input[..30]);
    s.handle_input(NOW, &input[30..]);
    assert_eq!(
        drain_messages(&mut s, NOW),
        vec![
            reject(RejectReason::MessageUnsupported, 0x01),
            refuse(RefuseReason::NoResources, 1),
            Message::XferAck(XferAck {
                flags: START | END,
                transfer_id: 2,
                acknowledged_length: 4
            }),
        ]
    );
    let events = drain_events(&mut s);
    assert_eq!(
        events.last(),
        Some(&Event::TransferReceived {
            id: 2,
            data: b"fine".to_vec()
        })
    );
}

#[test]
fn transfer_refusals() {
    let mut c = config("b");
    c.transfer_mru = 10;
    let mut s = passive_established(c);
    let critical = ExtensionItem {
        flags: 0x01,
        item_type: 0x7777,
        value: vec![],
    };
    let ignored = ExtensionItem {
        flags: 0,
        item_type: 0x7777,
        value: vec![1],
    };
    let mut input = segment(START | END, 0, vec![critical], b"a");
    input.extend(segment(
        START,
        1,
        vec![ExtensionItem::transfer_length(11)],
        b"b",
    ));
    input.extend(segment(START, 2, vec![], &[0; 8]));
    input.extend(segment(END, 2, vec![], &[0; 3])); // 11 > 10 octets
    input.extend(segment(
        START,
        3,
        vec![ExtensionItem::transfer_length(3)],
        b"ab",
    ));
    input.extend(segment(END, 3, vec![], b"cd")); // more than declared
    input.extend(segment(START | END, 4, vec![ignored], b"ok"));
    s.handle_input(NOW, &input);
    let ack = |flags, id, len| {
        Message::XferAck(XferAck {
            flags,
            transfer_id: id,
            acknowledged_length: len,
        })
    };
    assert_eq!(
        drain_messages(&mut s, NOW),
        vec![
            refuse(RefuseReason::ExtensionFailure, 0),
            refuse(RefuseReason::NoResources, 1),
            ack(START, 2, 8),
            refuse(RefuseReason::NoResources, 2),
            ack(START, 3, 2),
            refuse(RefuseReason::NotAcceptable, 3),
            ack(START | END, 4, 2),
        ]
    );
    let received: Vec<_> = drain_events(&mut s)
        .into_iter()
        .filter(|e| matches!(e, Event::TransferReceived { .. }))
        .collect();
    assert_eq!(
        received,
        vec![Event::TransferReceived {
            id: 4,
            data: b"ok".to_vec()
        }]
    );
}

#[test]
fn a_transfer_during_ending_is_refused_session_terminating() {
    let mut s = passive_established(config("b"));
    s.terminate(NOW, SessTermReason::Busy);
    s.handle_input(NOW, &segment(START | END, 0, vec![], b"late"));
    assert_eq!(
        drain_messages(&mut s, NOW),
        vec![
            sess_term(SessTermReason::Busy),
            refuse(RefuseReason::SessionTerminating, 0)
        ]
    );
}

#[test]
fn unacceptable_sess_inits_end_with_contact_failure() {
    let bad = [
        SessInit {
            keepalive_interval: 0,
            segment_mru: 10,
            transfer_mru: 10,
            node_id: "no scheme".into(),
            extensions: vec![],
        },
        SessInit {
            keepalive_interval: 0,
            segment_mru: 0,
            transfer_mru: 10,
            node_id: "dtn://p/".into(),
            extensions: vec![],
        },
        SessInit {
            keepalive_interval: 0,
            segment_mru: 10,
            transfer_mru: 10,
            node_id: "dtn://p/".into(),
            extensions: vec![ExtensionItem {
                flags: 1,
                item_type: 0x0042,
                value: vec![],
            }],
        },
    ];
    for init in bad {
        let mut s = Session::new(Role::Passive, config("b"), NOW).unwrap();
        s.handle_input(NOW, &ContactHeader::new(false).encode());
        s.handle_input(NOW, &Message::SessInit(init).to_vec().unwrap());
        assert_eq!(
            drain_messages(&mut s, NOW),
            vec![sess_term(SessTermReason::ContactFailure)]
        );
        assert!(matches!(cause(&mut s), Cause::Unacceptable(_)));
    }
}

#[test]
fn inconsistent_lengths_end_the_session() {
    // A transfer extension list whose item overruns it.
    let mut s = passive_established(config("b"));
    let mut input = vec![0x01, START];
    input.extend(0u64.to_be_bytes());
    input.extend(6u32.to_be_bytes());
    input.extend([0, 0, 1, 0, 9, 0]);
    s.handle_input(NOW, &input);
    assert_eq!(
        drain_messages(&mut s, NOW),
        vec![sess_term(SessTermReason::Unknown)]
    );
    assert!(matches!(cause(&mut s), Cause::Malformed(_)));
    // A Node ID that is not UTF-8, before establishment.
    let mut s = Session::new(Role::Passive, config("b"), NOW).unwrap();
    s.handle_input(NOW, &ContactHeader::new(false).encode());
    let mut init = peer_init("dtn://x/").to_vec().unwrap();
    init[22] = 0xff;
    s.handle_input(NOW, &init);
    assert_eq!(
        drain_messages(&mut s, NOW),
        vec![sess_term(SessTermReason::ContactFailure)]
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Random octets after a valid opening, in random pieces: no panic,
    /// and whatever the session sends is well-formed TCPCL.
    #[test]
    fn random_input_never_panics(
        body in prop::collection::vec(any::<u8>(), 0..400),
        cuts in prop::collection::vec(1usize..50, 1..20),
        valid_opening in any::<bool>(),
    ) {
        let mut s = Session::new(Role::Passive, config("b"), NOW).unwrap();
        let mut input = Vec::new();
        if valid_opening {
            input.extend(ContactHeader::new(false).encode());
            input.extend(peer_init("dtn://p/").to_vec().unwrap());
        }
        input.extend(body);
        let mut rest = &input[..];
        for cut in cuts.iter().cycle() {
            if rest.is_empty() {
                break;
            }
            let n = (*cut).min(rest.len());
            s.handle_input(NOW, &rest[..n]);
            rest = &rest[n..];
        }
        let _ = drain_messages(&mut s, NOW);
        let _ = drain_events(&mut s);
        s.handle_eof(NOW);
        prop_assert!(s.is_closed());
    }
}
