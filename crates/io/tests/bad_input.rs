//! Bad input and protocol violations on a KISS port with two links up:
//! station S (N0CALL-2, listening) has a v2.2 link with A (N0CALL-1),
//! which sends it 8 KB, and a v2.0 link with C (N0CALL-3). Frames "from C"
//! that break the protocol, and damaged KISS input, are injected on S's
//! port while A's transfer runs. For each, S answers as the AX.25 v2.2 SDL
//! (Appendix C4) prescribes, reports it in a clear sentence, A's transfer
//! completes byte-exact without a single error, and C's link recovers.
//! Virtual time throughout.

mod hub;

use std::time::Duration;

use hub::{addr, payload, Hub};
use linklab_core::Instant;
use linklab_io::{InputError, StationEvent};
use linklab_link::{Config, Event, LinkError, State};
use linklab_wire::ax25::{AddressField, CommandResponse, Frame, FrmrInfo, Pid};
use linklab_wire::control::{Modulus, Supervisory, Unnumbered};
use linklab_wire::kiss::{self, KissError};

const S: usize = 0;
const A: usize = 1;
const C: usize = 2;

fn calls() -> [linklab_wire::ax25::Address; 3] {
    [addr("N0CALL-2"), addr("N0CALL-1"), addr("N0CALL-3")]
}

/// A v2.2 station (SABME, SREJ, XID) and a v2.0 one (SABM, REJ).
fn configs() -> (Config, Config) {
    let v22 = Config::default();
    let v20 = Config {
        modulus: Modulus::Mod8,
        ..Config::default()
    };
    (v22, v20)
}

/// The address field of a frame from C to S.
fn from_c(cr: CommandResponse) -> AddressField {
    let [s, _, c] = calls();
    AddressField::new(s, c, &[], cr).unwrap()
}

/// What a scenario leaves for the case to check.
struct Outcome {
    hub: Hub,
    /// S's first event at the violation.
    mark: usize,
    /// When the violation was injected.
    at: Instant,
}

impl Outcome {
    /// S's frames to C sent at the instant of the violation.
    fn response(&self) -> Vec<&str> {
        self.hub.sent[S]
            .iter()
            .filter(|(t, line)| *t == self.at && line.starts_with("N0CALL-2>N0CALL-3:"))
            .map(|(_, line)| line.as_str())
            .collect()
    }

    /// S's protocol errors on the link with C since the violation.
    fn errors(&self) -> Vec<&LinkError> {
        let c = calls()[2];
        let mut errors = Vec::new();
        for (n, event) in self.hub.link_events(S, &c) {
            if let (true, Event::Error(error)) = (n >= self.mark, event) {
                errors.push(error);
            }
        }
        errors
    }

    /// S's bad-input reports since the violation, as the user reads them.
    fn bad_input(&self) -> Vec<String> {
        self.hub
            .bad_input_since(S, self.mark)
            .iter()
            .map(|e| e.to_string())
            .collect()
    }

    fn bad_input_errors(&self) -> Vec<&InputError> {
        self.hub.bad_input_since(S, self.mark)
    }
}

/// Runs the scenario described at the top with `violate` injected once A's
/// first frames are acknowledged, and checks what every case shares.
fn scenario(violate: impl FnOnce(&mut Hub)) -> Outcome {
    let [s, a, c] = calls();
    let (v22, v20) = configs();
    let mut hub = Hub::new(&[
        ("N0CALL-2", v22.clone(), true),
        ("N0CALL-1", v22.clone(), false),
        ("N0CALL-3", v20, false),
    ]);
    hub.connect(A, &s);
    hub.connect(C, &s);
    let data = payload(8192, 1);
    for chunk in data.chunks(v22.n1) {
        hub.stations[A].send(&s, chunk.to_vec()).unwrap();
    }
    let now = hub.now;
    hub.stations[A].release(now, &s).unwrap();
    let total = data.len().div_ceil(v22.n1);
    let started = hub.run_until(Duration::from_secs(60), |h| {
        h.events[A].iter().any(
            |e| matches!(e, StationEvent::Outstanding { frames, .. } if *frames > 0 && *frames < total),
        )
    });
    assert!(started, "A's transfer did not start:\n{}", hub.dump());

    let mark = hub.events[S].len();
    let at = hub.now;
    violate(&mut hub);

    // C's link is up again (re-established by S if the SDL says so).
    let recovered = hub.run_until(Duration::from_secs(120), |h| {
        h.idle_connected(S, &c) && h.idle_connected(C, &s)
    });
    assert!(recovered, "C's link did not recover:\n{}", hub.dump());
    let after = payload(800, 3);
    for chunk in after.chunks(256) {
        hub.stations[C].send(&s, chunk.to_vec()).unwrap();
    }
    let done = hub.run_until(Duration::from_secs(600), |h| {
        h.released(A, &s) && h.received_since(S, &c, mark) == after
    });
    assert!(done, "transfers did not complete:\n{}", hub.dump());

    // A's transfer is untouched: every octet, in order, no error anywhere.
    assert_eq!(
        hub.received(S, &a),
        data,
        "A's data differ:\n{}",
        hub.dump()
    );
    let clean = |i: usize, remote| {
        let events: Vec<&Event> = hub.link_events(i, remote).map(|(_, e)| e).collect();
        let connected = events
            .iter()
            .filter(|e| matches!(e, Event::Connected { .. }))
            .count();
        connected == 1
            && !events
                .iter()
                .any(|e| matches!(e, Event::Error(_) | Event::LinkFailure { .. }))
    };
    assert!(clean(S, &a), "S's link with A disturbed:\n{}", hub.dump());
    assert!(clean(A, &s), "A's link with S disturbed:\n{}", hub.dump());
    assert!(
        hub.bad_input_since(A, 0).is_empty(),
        "A saw bad input:\n{}",
        hub.dump()
    );
    Outcome { hub, mark, at }
}

#[test]
fn garbage_between_frames() {
    let out = scenario(|hub| {
        // Noise that looks like a data frame on port 0, then a bad escape
        // followed by noise up to the next FEND.
        hub.inject(S, b"\xc0\x00line noise\xc0");
        hub.inject(S, b"\xc0\x00\xdb\x41more noise\xc0");
    });
    assert_eq!(out.response(), Vec::<&str>::new());
    assert_eq!(
        out.bad_input(),
        [
            "10-octet AX.25 frame dropped: its address field does not decode: destination \
             address: callsign octet 2 is 0x69, not an upper-case letter, digit or space shifted left \
             one bit [6c 69 6e 65 20 6e 6f 69 73 65]",
            "damaged KISS frame dropped: bad KISS escape: FESC (0xDB) followed by 0x41; \
             only TFEND (0xDC) or TFESC (0xDD) may follow",
            "10 octets on the KISS port discarded while looking for the start of a frame \
             (FEND, 0xC0)",
        ]
    );
    assert_eq!(out.errors(), Vec::<&LinkError>::new());
}

#[test]
fn truncated_kiss_frame() {
    // The TNC's stream breaks off inside a frame from C (no closing FEND);
    // the next frame's FEND ends it, and that next frame, an RR poll from
    // C, is not lost: S answers it at once.
    let i_frame = Frame::i(
        from_c(CommandResponse::Command),
        Modulus::Mod8,
        0,
        0,
        false,
        Pid::NoLayer3,
        b"cut off".to_vec(),
    )
    .unwrap();
    let mut partial = vec![0xC0, 0x00];
    partial.extend_from_slice(&i_frame.encode()[..10]);
    let poll = Frame::s(
        from_c(CommandResponse::Command),
        Modulus::Mod8,
        Supervisory::Rr,
        0,
        true,
    )
    .unwrap();
    // The stream goes on with the next frame, whose opening FEND ends the
    // cut one.
    let next = kiss::encode(&kiss::Frame::data(poll.encode()));
    let out = scenario(|hub| {
        hub.inject(S, &partial);
        hub.inject(S, &next);
    });
    assert_eq!(out.response(), ["N0CALL-2>N0CALL-3: <RR R F R0>"]);
    assert_eq!(
        out.bad_input(),
        [
            "10-octet AX.25 frame dropped: its address field does not decode: address field \
          truncated: source address needs 7 octets but only 3 remain \
          [9c 60 86 82 98 98 e4 9c 60 86]"
        ]
    );
    assert_eq!(out.errors(), Vec::<&LinkError>::new());
}

#[test]
fn ax25_frame_cut_short() {
    // Address field, then nothing: no control field.
    let mut bytes = Vec::new();
    from_c(CommandResponse::Command).encode_into(&mut bytes);
    let out = scenario(|hub| hub.inject_frame(S, &bytes));
    assert_eq!(out.response(), Vec::<&str>::new());
    assert_eq!(
        out.bad_input(),
        [
            "14-octet AX.25 frame from N0CALL-3 dropped: control field missing: the frame ends \
          where the control field should start (decoded as modulo 8) \
          [9c 60 86 82 98 98 e4 9c 60 86 82 98 98 67]"
        ]
    );
    assert!(matches!(
        out.bad_input_errors()[0],
        InputError::Frame { remote, len: 14, .. } if *remote == calls()[2]
    ));
}

/// An I frame from C with N(S) = V(R) and the given N(R) and information.
fn i_from_c(hub: &Hub, nr_ahead: u8, info: Vec<u8>, cr: CommandResponse) -> Vec<u8> {
    let (vs, _, vr) = hub.stations[S]
        .link(&calls()[2])
        .unwrap()
        .sequence_variables();
    Frame::i(
        from_c(cr),
        Modulus::Mod8,
        vr,
        (vs + nr_ahead) % 8,
        false,
        Pid::NoLayer3,
        info,
    )
    .unwrap()
    .encode()
}

#[test]
fn i_frame_with_nr_outside_the_window() {
    // S has sent C nothing: V(A) = V(S) = 0, so N(R) = 3 acknowledges
    // frames never sent. Error J, then "N(R) error recovery" (fig. C4.7a):
    // the link is re-established with SABM (v2.0), P = 1.
    let out = scenario(|hub| {
        let bytes = i_from_c(hub, 3, b"bad N(R)".to_vec(), CommandResponse::Command);
        hub.inject_frame(S, &bytes);
    });
    assert_eq!(out.response(), ["N0CALL-2>N0CALL-3: <SABM C P>"]);
    let errors = out.errors();
    assert_eq!(
        errors,
        [&LinkError::NrSequence {
            nr: 3,
            va: 0,
            vs: 0
        }]
    );
    assert_eq!(
        errors[0].to_string(),
        "J: N(R) = 3 is outside V(A) = 0 .. V(S) = 0"
    );
    // C's side sees the reset (error F) and answers UA.
    assert!(out
        .hub
        .link_events(C, &calls()[0])
        .any(|(_, e)| *e == Event::Error(LinkError::ResetByPeer)));
    assert!(out.hub.sent[C]
        .iter()
        .any(|(t, l)| *t > out.at && l == "N0CALL-3>N0CALL-2: <UA R F>"));
    // The information of the bad frame was not delivered.
    assert!(!out
        .hub
        .received_since(S, &calls()[2], out.mark)
        .starts_with(b"bad"));
}

#[test]
fn i_frame_longer_than_n1() {
    // N1 = 256: 300 octets is error O, then re-establishment.
    let out = scenario(|hub| {
        let bytes = i_from_c(hub, 0, vec![0x55; 300], CommandResponse::Command);
        hub.inject_frame(S, &bytes);
    });
    assert_eq!(out.response(), ["N0CALL-2>N0CALL-3: <SABM C P>"]);
    let errors = out.errors();
    assert_eq!(errors, [&LinkError::IFrameTooLong { len: 300, n1: 256 }]);
    assert_eq!(
        errors[0].to_string(),
        "O: I frame with 300 octets of information exceeds N1 = 256"
    );
}

#[test]
fn unknown_u_frame() {
    // 0xCB is no U frame of AX.25 v2.2 (4.3.3): error L, then, as for a
    // DL-CONNECT request, re-establishment with SABM (v2.0), P = 1 (fig.
    // C4.4a). The bad-input report stays: it names the frame.
    let mut bytes = Vec::new();
    from_c(CommandResponse::Command).encode_into(&mut bytes);
    bytes.push(0xCB);
    let out = scenario(|hub| hub.inject_frame(S, &bytes));
    assert_eq!(out.response(), ["N0CALL-2>N0CALL-3: <SABM C P>"]);
    assert_eq!(
        out.bad_input(),
        [
            "15-octet AX.25 frame from N0CALL-3 dropped: unknown U frame control field 0xCB \
          (modifier bits 11010) (decoded as modulo 8) \
          [9c 60 86 82 98 98 e4 9c 60 86 82 98 98 67 cb]"
        ]
    );
    let errors = out.errors();
    assert_eq!(
        errors,
        [&LinkError::ControlFieldInvalid {
            control: vec![0xCB]
        }]
    );
    assert_eq!(
        errors[0].to_string(),
        "L: control field 0xCB invalid or not implemented"
    );
    reset_reported(&out);
}

/// After errors L, M and N, S set the link up again as a DL-CONNECT
/// request does: C saw the reset (error F) and answered UA, and S's user
/// got a DL-CONNECT confirm, its sign that data may have been lost.
fn reset_reported(out: &Outcome) {
    let [s, _, c] = calls();
    assert!(out
        .hub
        .link_events(C, &s)
        .any(|(_, e)| *e == Event::Error(LinkError::ResetByPeer)));
    assert!(out.hub.sent[C]
        .iter()
        .any(|(t, l)| *t > out.at && l == "N0CALL-3>N0CALL-2: <UA R F>"));
    assert!(out.hub.link_events(S, &c).any(|(n, e)| n >= out.mark
        && *e
            == Event::Connected {
                version: linklab_link::Version::V2_0,
                incoming: false
            }));
}

#[test]
fn s_frame_with_information() {
    // An RR carrying two octets: error M, then re-establishment.
    let mut bytes = Frame::s(
        from_c(CommandResponse::Response),
        Modulus::Mod8,
        Supervisory::Rr,
        0,
        false,
    )
    .unwrap()
    .encode();
    bytes.extend_from_slice(b"hi");
    let out = scenario(|hub| hub.inject_frame(S, &bytes));
    assert_eq!(out.response(), ["N0CALL-2>N0CALL-3: <SABM C P>"]);
    assert_eq!(
        out.bad_input(),
        [
            "17-octet AX.25 frame from N0CALL-3 dropped: RR frame carries 2 octets of \
          information; only I, UI, XID, TEST and FRMR frames may (decoded as modulo 8) \
          [9c 60 86 82 98 98 64 9c 60 86 82 98 98 e7 01 68 69]"
        ]
    );
    let errors = out.errors();
    assert_eq!(
        errors,
        [&LinkError::InfoNotPermitted {
            control: vec![0x01]
        }]
    );
    assert_eq!(
        errors[0].to_string(),
        "M: information field received in a U or S frame that allows none (control field 0x01)"
    );
    reset_reported(&out);
}

#[test]
fn i_frame_without_pid() {
    // An I frame that ends after its control field: error N, then
    // re-establishment.
    let mut bytes = Vec::new();
    from_c(CommandResponse::Command).encode_into(&mut bytes);
    let out = scenario(|hub| {
        let (vs, _, vr) = hub.stations[S]
            .link(&calls()[2])
            .unwrap()
            .sequence_variables();
        bytes.push((vs << 5) | (vr << 1));
        hub.inject_frame(S, &bytes);
    });
    assert_eq!(out.response(), ["N0CALL-2>N0CALL-3: <SABM C P>"]);
    assert_eq!(
        out.bad_input(),
        [
            "15-octet AX.25 frame from N0CALL-3 dropped: I frame ends after the control field; \
          the PID octet is missing (decoded as modulo 8) \
          [9c 60 86 82 98 98 e4 9c 60 86 82 98 98 67 00]"
        ]
    );
    let errors = out.errors();
    assert_eq!(
        errors,
        [&LinkError::FrameLength {
            control: vec![0x00]
        }]
    );
    assert_eq!(
        errors[0].to_string(),
        "N: length of frame incorrect for frame type (control field 0x00)"
    );
    reset_reported(&out);
}

#[test]
fn frmr() {
    // FRMR while connected: error K and re-establishment (fig. C4.4b).
    let info = FrmrInfo {
        rejected_control: 0x11,
        w: true,
        ..FrmrInfo::default()
    };
    let frame = Frame::u(
        from_c(CommandResponse::Response),
        Modulus::Mod8,
        Unnumbered::Frmr,
        false,
        info.encode(Modulus::Mod8).unwrap(),
    )
    .unwrap();
    let out = scenario(|hub| hub.inject_frame(S, &frame.encode()));
    assert_eq!(out.response(), ["N0CALL-2>N0CALL-3: <SABM C P>"]);
    let errors = out.errors();
    assert_eq!(errors, [&LinkError::Frmr(Some(info))]);
    assert!(errors[0].to_string().starts_with("K: FRMR received"));
}

#[test]
fn ua_out_of_the_blue() {
    // UA while connected: error C, and nothing else (the SDL's
    // re-establishment, fig. C4.4b, turned every repeated UA into a
    // reset: `tests/hostile_peers.rs` of linklab-link).
    let frame = Frame::u(
        from_c(CommandResponse::Response),
        Modulus::Mod8,
        Unnumbered::Ua,
        true,
        Vec::new(),
    )
    .unwrap();
    let out = scenario(|hub| hub.inject_frame(S, &frame.encode()));
    assert!(out.response().is_empty(), "{:?}", out.response());
    let errors = out.errors();
    assert_eq!(errors, [&LinkError::UnexpectedUa]);
    assert_eq!(errors[0].to_string(), "C: unexpected UA");
}

#[test]
fn frames_with_command_and_response_bits_reversed() {
    let out = scenario(|hub| {
        // An I frame marked as a response: error S, discarded (fig. C4.4).
        let bytes = i_from_c(hub, 0, b"reversed".to_vec(), CommandResponse::Response);
        hub.inject_frame(S, &bytes);
        // DISC marked as a response is no DISC command: ignored.
        let disc = Frame::u(
            from_c(CommandResponse::Response),
            Modulus::Mod8,
            Unnumbered::Disc,
            true,
            Vec::new(),
        )
        .unwrap();
        hub.inject_frame(S, &disc.encode());
        // An RR "command" with P = 1 sent as a response with F = 1 while
        // no poll is outstanding: error A, nothing sent.
        let rr = Frame::s(
            from_c(CommandResponse::Response),
            Modulus::Mod8,
            Supervisory::Rr,
            0,
            true,
        )
        .unwrap();
        hub.inject_frame(S, &rr.encode());
    });
    assert_eq!(out.response(), Vec::<&str>::new());
    let errors = out.errors();
    assert_eq!(errors, [&LinkError::IResponse, &LinkError::UnexpectedFinal]);
    assert_eq!(errors[0].to_string(), "S: I frame received as a response");
    assert_eq!(
        out.hub.stations[S].link(&calls()[2]).unwrap().state(),
        State::Connected
    );
    assert!(!out
        .hub
        .received_since(S, &calls()[2], out.mark)
        .starts_with(b"reversed"));
}

/// A frame with a bad FCS never reaches the KISS host: the TNC drops it.
/// Frames lost that way, both ways, on both links, are recovered.
#[test]
fn frames_lost_to_bad_fcs_are_recovered() {
    let [s, a, c] = calls();
    let (v22, v20) = configs();
    let mut hub = Hub::new(&[
        ("N0CALL-2", v22.clone(), true),
        ("N0CALL-1", v22.clone(), false),
        ("N0CALL-3", v20, false),
    ]);
    hub.connect(A, &s);
    hub.connect(C, &s);
    // Lose A's 3rd and 4th I frames, C's 2nd, and S's first RR to each.
    let mut counts = [0usize; 3];
    let mut rr_lost = [false; 3];
    hub.loss = Some(Box::new(move |from, frame: &Frame| {
        let text = linklab_wire::monitor::format_raw(&frame.encode(), frame.modulus());
        if text.contains("<I ") {
            counts[from] += 1;
            return (from == A && (counts[from] == 3 || counts[from] == 4))
                || (from == C && counts[from] == 2);
        }
        if from == S && text.contains("<RR ") {
            let to = if frame.dest() == &a { A } else { C };
            return !std::mem::replace(&mut rr_lost[to], true);
        }
        false
    }));
    let data_a = payload(6000, 4);
    let data_c = payload(2000, 5);
    for chunk in data_a.chunks(v22.n1) {
        hub.stations[A].send(&s, chunk.to_vec()).unwrap();
    }
    for chunk in data_c.chunks(256) {
        hub.stations[C].send(&s, chunk.to_vec()).unwrap();
    }
    let now = hub.now;
    hub.stations[A].release(now, &s).unwrap();
    hub.stations[C].release(now, &s).unwrap();
    let done = hub.run_until(Duration::from_secs(600), |h| {
        h.released(A, &s) && h.released(C, &s)
    });
    assert!(done, "{}", hub.dump());
    assert_eq!(hub.lost.len(), 5, "{:?}", hub.lost);
    assert_eq!(hub.received(S, &a), data_a);
    assert_eq!(hub.received(S, &c), data_c);
    // Recovery by SREJ on the v2.2 link and REJ on the v2.0 one.
    assert!(hub.sent[S]
        .iter()
        .any(|(_, l)| l.starts_with("N0CALL-2>N0CALL-1: <SREJ")));
    assert!(hub.sent[S]
        .iter()
        .any(|(_, l)| l.starts_with("N0CALL-2>N0CALL-3: <REJ")));
    assert!(hub.stations.iter().all(|st| st.links().next().is_none()));
}

/// Garbage of every kind in one burst, as a sanity check that the
/// messages of [`InputError`] name what was wrong.
#[test]
fn kiss_errors_name_the_problem() {
    let mut hub = Hub::new(&[("N0CALL-2", Config::default(), true)]);
    hub.inject(S, b"ATZ\r\n");
    hub.inject(S, &[0xC0, 0x07, 0x01, 0xC0]);
    let mut long = vec![0xC0, 0x00];
    long.extend(std::iter::repeat_n(0x40, linklab_io::KISS_MAX_FRAME + 5));
    long.push(0xC0);
    hub.inject(S, &long);
    hub.inject(S, &[0xC0, 0x07, 0x01, 0xC0]);
    let errors: Vec<String> = hub
        .bad_input_since(S, 0)
        .iter()
        .map(|e| e.to_string())
        .collect();
    assert_eq!(
        errors,
        [
            "5 octets on the KISS port discarded while looking for the start of a frame \
             (FEND, 0xC0)",
            "damaged KISS frame dropped: unknown KISS command 0x7 on port 0 (type octet 0x07)",
            "damaged KISS frame dropped: KISS frame longer than 2123 octets after the type \
             octet; dropped up to the next FEND",
            "4 octets on the KISS port discarded while looking for the start of a frame \
             (FEND, 0xC0)",
            "damaged KISS frame dropped: unknown KISS command 0x7 on port 0 (type octet 0x07)",
        ]
    );
    assert!(matches!(
        hub.bad_input_since(S, 0)[2],
        InputError::Kiss(KissError::FrameTooLong { max: 2123 })
    ));
    assert_eq!(hub.stations[S].kiss_stats().errors, 3);
}

#[test]
fn late_finals_are_reported_once_then_counted_until_the_link_ends() {
    // Three answers with F = 1 and no poll outstanding (a peer answering
    // each of several polls late): the first is reported as error A, the
    // other two only counted, and the count reported as the link ends.
    let rr = Frame::s(
        from_c(CommandResponse::Response),
        Modulus::Mod8,
        Supervisory::Rr,
        0,
        true,
    )
    .unwrap();
    let out = scenario(|hub| {
        for _ in 0..3 {
            hub.inject_frame(S, &rr.encode());
        }
    });
    assert_eq!(out.errors(), [&LinkError::UnexpectedFinal]);
    let [s, _, c] = calls();
    let mut hub = out.hub;
    let late = |hub: &Hub| -> Vec<(usize, u32)> {
        hub.events[S]
            .iter()
            .enumerate()
            .filter_map(|(n, e)| match e {
                StationEvent::LateFinals { remote, count } if *remote == c => Some((n, *count)),
                _ => None,
            })
            .collect()
    };
    assert!(
        late(&hub).is_empty(),
        "counted before the end:\n{}",
        hub.dump()
    );
    let now = hub.now;
    hub.stations[C].disconnect(now, &s).unwrap();
    let ended = hub.run_until(Duration::from_secs(60), |h| {
        h.link_events(S, &c)
            .any(|(_, e)| matches!(e, Event::Disconnected { .. }))
    });
    assert!(ended, "{}", hub.dump());
    let late = late(&hub);
    assert_eq!(
        late.iter().map(|(_, count)| *count).collect::<Vec<_>>(),
        [2]
    );
    // Just before the end of the link.
    let (end, _) = hub
        .link_events(S, &c)
        .find(|(_, e)| matches!(e, Event::Disconnected { .. }))
        .unwrap();
    assert_eq!(late[0].0 + 1, end, "{}", hub.dump());
}
