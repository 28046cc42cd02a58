//! Drives a 4.2BSD TCP sender (`linklab_scenario::korb::bsd42`) with arbitrary
//! segments and time: no input may panic, and everything it sends must be
//! a well-formed IPv4 datagram with a TCP segment of at most one MSS whose
//! sequence numbers stay within the connection's (the SYN, the data, the
//! FIN).
//!
//! The input is a list of records. A record's first octet chooses what
//! comes: `0xff` a raw datagram (its length in the next octet, then the
//! octets); otherwise a segment from the peer built with valid checksums,
//! bits 0-2 choosing the control (none, SYN, FIN, RST, PSH), bit 3 whether
//! it acknowledges, bits 4-7 the time that passes before it (in 0.5 s
//! steps); two octets of acknowledgement offset from the initial sequence
//! number, two of window and one of payload length follow.
#![no_main]

use linklab_core::{Engine, Instant};
use core::time::Duration;

use libfuzzer_sys::fuzz_target;
use linklab_scenario::korb::bsd42::{Bsd42Config, Bsd42Endpoint, Bsd42Sender};
use smoltcp::phy::ChecksumCapabilities;
use smoltcp::wire::{
    IpAddress, IpProtocol, Ipv4Address, Ipv4Packet, Ipv4Repr, TcpControl, TcpPacket, TcpRepr,
    TcpSeqNumber,
};

const ISS: u32 = 0xffff_fc00;
const DATA: usize = 3000;
const LOCAL: Bsd42Endpoint = Bsd42Endpoint {
    addr: Ipv4Address::new(10, 0, 0, 1),
    port: 1024,
};
const REMOTE: Bsd42Endpoint = Bsd42Endpoint {
    addr: Ipv4Address::new(10, 0, 0, 2),
    port: 20,
};

/// A segment from the peer, with valid checksums.
fn peer_segment(control: TcpControl, ack: Option<u16>, window: u16, payload: &[u8]) -> Vec<u8> {
    let tcp = TcpRepr {
        src_port: REMOTE.port,
        dst_port: LOCAL.port,
        control,
        seq_number: TcpSeqNumber(1000),
        ack_number: ack.map(|a| TcpSeqNumber(ISS.wrapping_add(u32::from(a)) as i32)),
        window_len: window,
        window_scale: None,
        max_seg_size: None,
        sack_permitted: false,
        sack_ranges: [None; 3],
        timestamp: None,
        payload,
    };
    let ip = Ipv4Repr {
        src_addr: REMOTE.addr,
        dst_addr: LOCAL.addr,
        next_header: IpProtocol::Tcp,
        payload_len: tcp.buffer_len(),
        hop_limit: 64,
    };
    let caps = ChecksumCapabilities::default();
    let mut octets = vec![0; ip.buffer_len() + tcp.buffer_len()];
    let mut packet = Ipv4Packet::new_unchecked(&mut octets[..]);
    ip.emit(&mut packet, &caps);
    let mut segment = TcpPacket::new_unchecked(packet.payload_mut());
    let (src, dst) = (IpAddress::Ipv4(REMOTE.addr), IpAddress::Ipv4(LOCAL.addr));
    tcp.emit(&mut segment, &src, &dst, &caps);
    octets
}

/// Checks one datagram the sender sent.
fn check_sent(datagram: &[u8]) {
    let caps = ChecksumCapabilities::default();
    let packet = Ipv4Packet::new_checked(datagram).expect("IPv4 datagram");
    let ip = Ipv4Repr::parse(&packet, &caps).expect("valid IPv4 header");
    assert_eq!((ip.src_addr, ip.dst_addr), (LOCAL.addr, REMOTE.addr));
    let segment = TcpPacket::new_checked(packet.payload()).expect("TCP segment");
    let (src, dst) = (IpAddress::Ipv4(LOCAL.addr), IpAddress::Ipv4(REMOTE.addr));
    let tcp = TcpRepr::parse(&segment, &src, &dst, &caps).expect("valid TCP segment");
    assert!(tcp.payload.len() <= 512);
    let start = u64::from((tcp.seq_number.0 as u32).wrapping_sub(ISS));
    let end = start + tcp.payload.len() as u64;
    assert!(end <= 1 + DATA as u64 + 1, "beyond the FIN: {start}..{end}");
}

fuzz_target!(|data: &[u8]| {
    let file: Vec<u8> = (0..DATA).map(|i| i as u8).collect();
    let mut now = Instant::ZERO;
    let mut sender = Bsd42Sender::connect(Bsd42Config::bsd42(), LOCAL, REMOTE, ISS, file, now);
    let mut rest = data;
    loop {
        while let Some(d) = sender.poll_transmit(now) {
            check_sent(&d);
        }
        let Some((&kind, tail)) = rest.split_first() else {
            break;
        };
        let datagram = if kind == 0xff {
            let Some((&len, tail)) = tail.split_first() else {
                break;
            };
            let len = usize::from(len).min(tail.len());
            rest = &tail[len..];
            tail[..len].to_vec()
        } else {
            let Some(fields) = tail.get(..5) else {
                break;
            };
            rest = &tail[5..];
            now = now + Duration::from_millis(500 * u64::from(kind >> 4));
            if sender.poll_timeout().is_some_and(|t| t <= now) {
                sender.handle_timeout(now);
            }
            let control = match kind & 7 {
                1 => TcpControl::Syn,
                2 => TcpControl::Fin,
                3 => TcpControl::Rst,
                4 => TcpControl::Psh,
                _ => TcpControl::None,
            };
            let ack = (kind & 8 != 0).then(|| u16::from_be_bytes([fields[0], fields[1]]));
            let window = u16::from_be_bytes([fields[2], fields[3]]);
            let payload = vec![0x5a; usize::from(fields[4] % 64)];
            peer_segment(control, ack, window, &payload)
        };
        sender.handle_datagram(now, &datagram);
    }
});
