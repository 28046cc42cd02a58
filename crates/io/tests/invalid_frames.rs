//! Every undecodable frame of up to three octets after the address field
//! that a connected peer can send: each control octet, followed by 0, 1
//! or 2 more octets, as command and as response, from C to S on a
//! connected link, modulo 8 and modulo 128. For each one that does not decode, S reports it once
//! as bad input, raises exactly the error (L, M or N) that
//! [`InvalidFrame::of`] names, answers with SABM(E) P = 1 alone, and the
//! link comes back up and carries data byte-exact (AX.25 v2.2 figs.
//! C4.4a, C4.3 error codes). Frames that decode are not this test's
//! business and are skipped.

mod hub;

use std::time::Duration;

use hub::{addr, payload, Hub};
use linklab_io::InputError;
use linklab_link::{Config, Event, InvalidFrame, LinkError};
use linklab_wire::ax25::{AddressField, CommandResponse, Frame};
use linklab_wire::control::Modulus;

const S: usize = 0;
const C: usize = 1;

/// A frame of the sweep from C to S: control octet `first`, then `extra`
/// octets (0x00, then 0x55).
fn frame(cr: CommandResponse, first: u8, extra: usize) -> Vec<u8> {
    let mut bytes = Vec::new();
    AddressField::new(addr("N0CALL-2"), addr("N0CALL-3"), &[], cr)
        .unwrap()
        .encode_into(&mut bytes);
    bytes.push(first);
    bytes.extend([0x00, 0x55].iter().take(extra));
    bytes
}

/// Runs the sweep for links of `modulus`; returns how many frames were
/// undecodable, per error code.
fn sweep(modulus: Modulus) -> [usize; 3] {
    let config = Config {
        modulus,
        ..Config::default()
    };
    let (s, c) = (addr("N0CALL-2"), addr("N0CALL-3"));
    let set_mode = match modulus {
        Modulus::Mod8 => "N0CALL-2>N0CALL-3: <SABM C P>",
        Modulus::Mod128 => "N0CALL-2>N0CALL-3: <SABME C P>",
    };
    let mut counts = [0; 3];
    for cr in [CommandResponse::Command, CommandResponse::Response] {
        for first in 0..=255u8 {
            for extra in 0..=2 {
                let bytes = frame(cr, first, extra);
                let Err(error) = Frame::decode(&bytes, modulus) else {
                    continue;
                };
                let Some(invalid) = InvalidFrame::of(&error) else {
                    panic!("{bytes:02x?} does not decode, yet is none of L, M, N: {error}");
                };
                let mut hub = Hub::new(&[
                    ("N0CALL-2", config.clone(), true),
                    ("N0CALL-3", config.clone(), false),
                ]);
                hub.connect(C, &s);
                let mark = hub.events[S].len();
                let at = hub.now;
                hub.inject_frame(S, &bytes);
                let case = format!("{modulus} {cr:?} {bytes:02x?}");

                let bad = hub.bad_input_since(S, mark);
                assert!(
                    matches!(bad[..], [InputError::Frame { error: ref e, .. }] if *e == error),
                    "{case}: {bad:?}"
                );
                let errors: Vec<&LinkError> = hub
                    .link_events(S, &c)
                    .filter(|(n, _)| *n >= mark)
                    .filter_map(|(_, e)| match e {
                        Event::Error(error) => Some(error),
                        _ => None,
                    })
                    .collect();
                let index = match (invalid, &errors[..]) {
                    (InvalidFrame::UnknownControl, [LinkError::ControlFieldInvalid { .. }]) => 0,
                    (InvalidFrame::InfoNotAllowed, [LinkError::InfoNotPermitted { .. }]) => 1,
                    (InvalidFrame::BadLength, [LinkError::FrameLength { .. }]) => 2,
                    _ => panic!("{case}: {invalid:?} but errors {errors:?}"),
                };
                counts[index] += 1;
                let response: Vec<&str> = hub.sent[S]
                    .iter()
                    .filter(|(t, _)| *t == at)
                    .map(|(_, line)| line.as_str())
                    .collect();
                assert_eq!(response, [set_mode], "{case}");

                let up = hub.run_until(Duration::from_secs(60), |h| {
                    h.idle_connected(S, &c)
                        && h.idle_connected(C, &s)
                        && !h.stations[S].link(&c).unwrap().negotiating()
                });
                assert!(up, "{case}: not re-established:\n{}", hub.dump());
                let data = payload(600, first);
                for chunk in data.chunks(200) {
                    hub.stations[C].send(&s, chunk.to_vec()).unwrap();
                }
                let done = hub.run_until(Duration::from_secs(120), |h| {
                    h.received_since(S, &c, mark) == data
                });
                assert!(done, "{case}: data not delivered:\n{}", hub.dump());
            }
        }
    }
    counts
}

#[test]
fn every_undecodable_frame_modulo_8() {
    // L: 40 unknown U octets (P/F either way); M: 64 S octets and 16
    // U octets of frames that carry no information, with 1 or 2 octets
    // more, less the 16 SREJ octets with the one octet 0x00, which reads
    // as a further N(R) of a multi-SREJ (AX.25 2.2 4.3.2.4, Dire Wolf's
    // layout) and so decodes; N: 128 I octets and the 2 UI ones without
    // PID; each as command and response.
    assert_eq!(sweep(Modulus::Mod8), [240, 288, 260]);
}

#[test]
fn every_undecodable_frame_modulo_128() {
    // Also S frames with reserved bits set (L) and I and S frames cut
    // after their first control octet (N).
    assert_eq!(sweep(Modulus::Mod128), [480, 72, 644]);
}
