//! tshark's X.25 dissector as an independent oracle: every packet of a
//! session between two DTEs (restart, call with facilities and IP call
//! user data, data with Q/D/M, RR, RNR, interrupt, reset, clear) is
//! written to a pcap inside an AX.25 UI frame with PID 0x01 (which
//! tshark hands to its X.25 dissector) and tshark's fields must agree
//! with the packet, with nothing malformed.
//!
//! Without tshark the test says so and passes, except under CI (`CI`
//! set), where a missing tshark is a failure.

mod support;

use std::time::Duration;

use linklab_testkit::tshark;
use linklab_wire::pcap::{LinkType, PcapWriter};
use linklab_x25::{Body, CallOptions, DteAddress, Packet, Role};
use support::{config, Pipe, PipeExt};

/// An AX.25 UI frame, DEST <- SRC, PID 0x01 (X.25 PLP), carrying `packet`.
fn ui_frame(packet: &[u8]) -> Vec<u8> {
    let mut frame = Vec::new();
    for (call, last) in [("DEST", false), ("SRC", true)] {
        frame.extend(format!("{call:6}").bytes().map(|c| c << 1));
        frame.push(0x60 | u8::from(last));
    }
    frame.extend([0x03, 0x01]);
    frame.extend_from_slice(packet);
    frame
}

/// A session's transcript.
fn transcript() -> Vec<Packet> {
    let mut pipe = Pipe::restarted(config(Role::Dte, "23421"), config(Role::Dce, "5550123"));
    let lci = pipe.connect(CallOptions {
        called: DteAddress::new("5550123").unwrap(),
        packet_size: Some(256),
        window: Some(3),
        d_bit: true,
        user_data: vec![0xCC],
        ..CallOptions::default()
    });
    pipe.engines[0]
        .dte
        .send(lci, &[0x45; 700], false, true)
        .unwrap();
    pipe.engines[1]
        .dte
        .send(lci, &[1, 2, 3], true, false)
        .unwrap();
    pipe.settle();
    pipe.engines[1].dte.set_receiver_busy(lci, true).unwrap();
    pipe.settle();
    pipe.engines[1].dte.set_receiver_busy(lci, false).unwrap();
    pipe.engines[0].dte.interrupt(lci, &[0x7F]).unwrap();
    pipe.settle();
    pipe.engines[0]
        .dte
        .reset(pipe.now, lci, 0, Some(0))
        .unwrap();
    pipe.settle();
    pipe.engines[1]
        .dte
        .clear(pipe.now, lci, 0x80, Some(0))
        .unwrap();
    pipe.settle();
    pipe.log.into_iter().map(|(_, _, p)| p).collect()
}

/// What tshark must show for `packet`, in the order of `FIELDS`.
fn expected(packet: &Packet) -> Vec<String> {
    let lcn = match packet.lci.value() {
        0 if matches!(
            packet.body,
            Body::RestartRequest { .. } | Body::RestartConfirmation
        ) =>
        {
            String::new()
        }
        v => v.to_string(),
    };
    let octets = packet.encode().unwrap();
    let kind = match packet.body {
        Body::Data(_) => 0,
        Body::ReceiveReady { .. } => 0x01,
        Body::ReceiveNotReady { .. } => 0x05,
        _ => octets[2],
    };
    let mut fields = vec![lcn, format!("0x{kind:02x}")];
    let flag = |b: bool| u8::from(b).to_string();
    let (ps, pr, m, q) = match &packet.body {
        Body::Data(d) => (d.ps.to_string(), d.pr.to_string(), flag(d.m), flag(d.q)),
        Body::ReceiveReady { pr } | Body::ReceiveNotReady { pr } => {
            (String::new(), pr.to_string(), String::new(), String::new())
        }
        _ => Default::default(),
    };
    let (called, calling) = match &packet.body {
        Body::CallRequest { fields, .. } => (
            fields.address.called.to_string(),
            fields.address.calling.to_string(),
        ),
        _ => Default::default(),
    };
    let (reset, clear, diagnostic) = match &packet.body {
        Body::ResetRequest { cause, diagnostic } => (
            format!("0x{cause:02x}"),
            String::new(),
            diagnostic.map(|d| d.to_string()).unwrap_or_default(),
        ),
        Body::ClearRequest {
            cause, diagnostic, ..
        } => (
            String::new(),
            format!("0x{cause:02x}"),
            diagnostic.map(|d| d.to_string()).unwrap_or_default(),
        ),
        Body::RestartRequest { diagnostic, .. } => (
            String::new(),
            String::new(),
            diagnostic.map(|d| d.to_string()).unwrap_or_default(),
        ),
        _ => Default::default(),
    };
    fields.extend([ps, pr, m, q, called, calling, reset, clear, diagnostic]);
    fields
}

const FIELDS: [&str; 11] = [
    "x25.lcn",
    "x25.type",
    "x25.p_s",
    "x25.p_r",
    "x25.m",
    "x25.q",
    "x25.called_address",
    "x25.calling_address",
    "x25.reset_cause",
    "x25.clear_cause",
    "x25.diagnostic",
];

#[test]
fn tshark_agrees_with_every_packet_of_a_session() {
    if !tshark::available("X.25") {
        return;
    }
    let packets = transcript();
    let dir = tshark::pcap_dir("x25");
    let path = dir.join("x25.pcap");
    let mut writer =
        PcapWriter::new(std::fs::File::create(&path).unwrap(), LinkType::Ax25).unwrap();
    for (i, packet) in packets.iter().enumerate() {
        let frame = ui_frame(&packet.encode().unwrap());
        writer
            .write_packet(Duration::from_millis(i as u64), &frame)
            .unwrap();
    }
    drop(writer);
    let rows = tshark::fields(&path, &[], &[&FIELDS[..], &["_ws.malformed"]].concat());
    assert_eq!(rows.len(), packets.len());
    for (got, packet) in rows.iter().zip(&packets) {
        assert_eq!(
            got[..FIELDS.len()],
            expected(packet),
            "{} {packet:?}",
            packet.body.name()
        );
        // Expert notes are not checked: tshark reassembles the complete
        // packet sequence and, told by the 0xCC call user data that it is
        // IP, complains about the test's made-up datagram.
        assert_eq!(got[FIELDS.len()..], [""], "{packet:?}: malformed");
    }
    std::fs::remove_dir_all(&dir).ok();
}
