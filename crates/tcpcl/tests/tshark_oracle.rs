//! tshark's TCPCLv4 dissector as an independent oracle: a whole session
//! between two engines (establishment, transfers both ways in several
//! segments with the Transfer Length extension, a refusal, keepalives,
//! SESS_TERM and its reply) is written to a pcap as one TCP connection on
//! port 4556, and tshark must find the same messages in the same order,
//! with nothing malformed and no expert error.
//!
//! Without tshark the test says so and passes, except under CI (`CI`
//! set), where a missing tshark is a failure.

mod support;

use linklab_core::{Engine, Instant};
use std::time::Duration;

use linklab_tcpcl::wire::ContactHeader;
use linklab_tcpcl::{Event, RefuseReason, SessTermReason};
use linklab_testkit::tshark;
use linklab_wire::pcap::{LinkType, PcapWriter};
use support::{config, decode_stream, Chunk, Pair};

/// An IPv4 + TCP packet (LINKTYPE_RAW) from `from` (0: 10.0.0.1:40000,
/// 1: 10.0.0.2:4556); checksums are left zero (tshark does not check them).
fn packet(from: usize, seq: u32, ack: u32, flags: u8, payload: &[u8]) -> Vec<u8> {
    let (src, dst) = if from == 0 {
        ([10, 0, 0, 1], [10, 0, 0, 2])
    } else {
        ([10, 0, 0, 2], [10, 0, 0, 1])
    };
    let (sport, dport): (u16, u16) = if from == 0 {
        (40000, 4556)
    } else {
        (4556, 40000)
    };
    let total = (20 + 20 + payload.len()) as u16;
    let mut p = vec![0x45, 0];
    p.extend(total.to_be_bytes());
    p.extend([0, 0, 0x40, 0, 64, 6, 0, 0]);
    p.extend(src);
    p.extend(dst);
    p.extend(sport.to_be_bytes());
    p.extend(dport.to_be_bytes());
    p.extend(seq.to_be_bytes());
    p.extend(ack.to_be_bytes());
    p.extend([0x50, flags, 0xff, 0xff, 0, 0, 0, 0]);
    p.extend(payload);
    p
}

/// A session's transcript: each chunk sent, with time and sender.
fn transcript() -> Pair {
    let mut a = config("a");
    a.keepalive_interval = 5;
    a.max_segment = 700;
    let mut b = config("b");
    b.segment_mru = 1000;
    let mut pair = support::established(a, b, 21);
    pair.engines[0]
        .s
        .send_transfer(pair.now, &[0xa5; 2000])
        .unwrap();
    pair.engines[1]
        .s
        .send_transfer(pair.now, &[0x5a; 300])
        .unwrap();
    pair.settle();
    // Two keepalive periods of silence.
    pair.advance(Duration::from_secs(6));
    pair.advance(Duration::from_secs(6));
    // A transfer that b refuses after its first segment.
    pair.engines[0]
        .s
        .send_transfer(pair.now, &[1; 1500])
        .unwrap();
    let first = pair.engines[0].s.poll_transmit(pair.now).unwrap();
    pair.log.push((pair.now, 0, Chunk::Octets(first.clone())));
    pair.engines[0].sent.extend(&first);
    pair.engines[1].s.handle_input(pair.now, &first);
    assert!(pair.engines[1].s.poll_event().is_some());
    pair.engines[1]
        .s
        .refuse_transfer(pair.now, 1, RefuseReason::NoResources)
        .unwrap();
    pair.settle();
    pair.engines[0]
        .s
        .terminate(pair.now, SessTermReason::Unknown);
    pair.settle();
    assert!(pair.engines[0].s.is_closed() && pair.engines[1].s.is_closed());
    assert!(pair.engines[0]
        .events
        .iter()
        .any(|e| matches!(e, Event::TransferRefused { id: 1, .. })));
    pair
}

#[test]
fn tshark_agrees_with_every_message_of_a_session() {
    if !tshark::available("TCPCLv4") {
        return;
    }
    let pair = transcript();
    let dir = tshark::pcap_dir("tcpcl");
    let path = dir.join("tcpcl.pcap");
    let mut writer =
        PcapWriter::new(std::fs::File::create(&path).unwrap(), LinkType::Other(101)).unwrap();
    let mut seq = [1000u32, 5000u32];
    let write = |w: &mut PcapWriter<std::fs::File>,
                 t: Duration,
                 from: usize,
                 flags: u8,
                 data: &[u8],
                 seq: &mut [u32; 2]| {
        let ack = if flags == 0x02 { 0 } else { seq[1 - from] };
        let p = packet(from, seq[from], ack, flags, data);
        w.write_packet(t, &p).unwrap();
        seq[from] = seq[from].wrapping_add(data.len() as u32 + u32::from(flags & 0x02 != 0));
    };
    // The three-way handshake, then every chunk in pieces of at most 1400.
    write(&mut writer, Duration::ZERO, 0, 0x02, &[], &mut seq);
    write(&mut writer, Duration::ZERO, 1, 0x12, &[], &mut seq);
    write(&mut writer, Duration::ZERO, 0, 0x10, &[], &mut seq);
    let chunks = pair.log.iter().filter_map(|(at, from, chunk)| match chunk {
        Chunk::Octets(octets) => Some((at, from, octets)),
        Chunk::Eof => None,
    });
    for (i, (at, from, octets)) in chunks.enumerate() {
        let t = (*at - Instant::ZERO) + Duration::from_micros(i as u64);
        for piece in octets.chunks(1400) {
            write(&mut writer, t, *from, 0x18, piece, &mut seq);
        }
    }
    drop(writer);

    let rows = tshark::fields(
        &path,
        // Two passes, so that segments and their acknowledgements are
        // related whichever comes first in the file.
        &["-2", "-d", "tcp.port==4556,tcpcl"],
        &[
            "tcp.srcport",
            "tcpcl.v4.mhdr.type",
            "_ws.malformed",
            "_ws.expert.severity",
            "_ws.expert.message",
        ],
    );
    let mut seen: [Vec<u8>; 2] = [Vec::new(), Vec::new()];
    for fields in &rows {
        assert_eq!(fields[2], "", "malformed: {fields:?}");
        // Severity 0x00800000 is an error. Notes remain on the segments of
        // the refused transfer that went out before the refusal (no
        // XFER_ACK: rightly).
        for severity in fields[3].split(',').filter(|s| !s.is_empty()) {
            let value = match severity.strip_prefix("0x") {
                Some(hex) => u32::from_str_radix(hex, 16).unwrap(),
                None => severity.parse().unwrap(),
            };
            assert!(value < 0x0080_0000, "expert error: {fields:?}");
        }
        let from = usize::from(fields[0] == "4556");
        for code in fields[1].split(',').filter(|s| !s.is_empty()) {
            seen[from].push(u8::from_str_radix(code.trim_start_matches("0x"), 16).unwrap());
        }
    }
    for (i, (seen, sent)) in seen
        .iter()
        .zip(pair.engines.iter().map(|e| &e.sent))
        .enumerate()
    {
        let ours: Vec<u8> = decode_stream(&sent[ContactHeader::LEN..])
            .iter()
            .map(|m| m.message_type() as u8)
            .collect();
        assert_eq!(*seen, ours, "side {i}");
    }
    // Every message type but MSG_REJECT is in the session.
    let mut all: Vec<u8> = seen.concat();
    all.sort();
    all.dedup();
    assert_eq!(all, [1, 2, 3, 4, 5, 7]);
    std::fs::remove_dir_all(&dir).ok();
}
