//! Every message type round-trips through its octets, and every decoded
//! octet string encodes back to itself.

use linklab_tcpcl::wire::{
    ContactHeader, Decoded, ExtensionItem, Limits, Message, MsgReject, SessInit, SessTerm, XferAck,
    XferRefuse, XferSegment, START,
};
use linklab_tcpcl::{RefuseReason, RejectReason, SessTermReason};
use proptest::prelude::*;

fn item() -> impl Strategy<Value = ExtensionItem> + Clone {
    (
        any::<u8>(),
        any::<u16>(),
        prop::collection::vec(any::<u8>(), 0..20),
    )
        .prop_map(|(flags, item_type, value)| ExtensionItem {
            flags,
            item_type,
            value,
        })
}

fn message() -> impl Strategy<Value = Message> {
    let items = prop::collection::vec(item(), 0..4);
    prop_oneof![
        (
            any::<u16>(),
            any::<u64>(),
            any::<u64>(),
            "[a-z]{1,8}:[ -~]{0,40}",
            items.clone()
        )
            .prop_map(
                |(k, s, t, node_id, extensions)| Message::SessInit(SessInit {
                    keepalive_interval: k,
                    segment_mru: s,
                    transfer_mru: t,
                    node_id,
                    extensions,
                })
            ),
        (any::<u8>(), any::<u8>()).prop_map(|(flags, r)| Message::SessTerm(SessTerm {
            flags,
            reason: SessTermReason::from_code(r)
        })),
        (
            any::<u8>(),
            any::<u64>(),
            items,
            prop::collection::vec(any::<u8>(), 0..100)
        )
            .prop_map(|(flags, id, extensions, data)| {
                let extensions = if flags & START != 0 {
                    extensions
                } else {
                    vec![]
                };
                Message::XferSegment(XferSegment {
                    flags,
                    transfer_id: id,
                    extensions,
                    data,
                })
            }),
        (any::<u8>(), any::<u64>(), any::<u64>()).prop_map(|(flags, id, len)| {
            Message::XferAck(XferAck {
                flags,
                transfer_id: id,
                acknowledged_length: len,
            })
        }),
        (any::<u8>(), any::<u64>()).prop_map(|(r, id)| Message::XferRefuse(XferRefuse {
            reason: RefuseReason::from_code(r),
            transfer_id: id
        })),
        Just(Message::Keepalive),
        (any::<u8>(), any::<u8>()).prop_map(|(r, h)| Message::MsgReject(MsgReject {
            reason: RejectReason::from_code(r),
            rejected_header: h
        })),
    ]
}

proptest! {
    #[test]
    fn every_message_round_trips(m in message(), trailing in prop::collection::vec(any::<u8>(), 0..8)) {
        let mut octets = m.to_vec().unwrap();
        let len = octets.len();
        octets.extend(trailing);
        prop_assert_eq!(
            Message::decode(&octets, &Limits::NONE),
            Ok(Decoded::Message { message: m, len })
        );
        // Any shorter prefix is incomplete, never an error or a message.
        for cut in 0..len {
            prop_assert_eq!(Message::decode(&octets[..cut], &Limits::NONE), Ok(Decoded::Incomplete));
        }
    }

    #[test]
    fn decoded_octets_encode_back(octets in prop::collection::vec(any::<u8>(), 0..200)) {
        if let Ok(Decoded::Message { message, len }) = Message::decode(&octets, &Limits::NONE) {
            prop_assert_eq!(message.to_vec().unwrap(), octets[..len].to_vec());
        }
        if let Ok(Some(header)) = ContactHeader::decode(&octets) {
            prop_assert_eq!(header.encode().to_vec(), octets[..6].to_vec());
        }
    }
}
