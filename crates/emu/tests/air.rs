//! The channel's sans-IO core in virtual time: what reaches which client
//! and when, collisions, hidden stations, KISS commands and ACKMODE, bad
//! input, several channels, the TNC model, digipeaters. Every time
//! asserted is exact: TXDELAY plus the frame's stuffed HDLC length at the
//! bit rate.

use core::time::Duration;

use linklab_channel::{bits_duration, hdlc_bits, ErrorModel, Outcome, StationConfig, FLAG_BITS};
use linklab_core::Instant;
use linklab_emu::{Air, AirFrame, ClientId, Output, Plan};
use linklab_wire::ax25::{Address, Frame, Pid};
use linklab_wire::kiss::{self, Command, Port};

const RATE: u32 = 9600;
const TXDELAY: Duration = Duration::from_millis(10);

/// Radios that key at the first slot tick (P = 255, slot clock at phase
/// 0) after TXDELAY 10 ms, no tail.
fn eager() -> StationConfig {
    StationConfig {
        persistence: 255,
        slot_time: Duration::from_millis(10),
        txdelay: TXDELAY,
        txtail: Duration::ZERO,
        slot_phase: Duration::ZERO,
    }
}

fn plan(stations: usize) -> Plan {
    let mut plan = Plan::simple(stations, 0, RATE, eager(), ErrorModel::Perfect).unwrap();
    for s in &mut plan.stations {
        s.radios[0].slot_phase = Some(Duration::ZERO);
    }
    plan
}

/// An AX.25 UI frame from `from` with `text`.
fn ui(from: &str, text: &str) -> Vec<u8> {
    let src: Address = from.parse().unwrap();
    let dst: Address = "QST".parse().unwrap();
    Frame::ui(dst, src, &[], Pid::NoLayer3, text.as_bytes().to_vec())
        .unwrap()
        .encode()
}

fn kiss_data(port: u8, body: &[u8]) -> Vec<u8> {
    kiss::encode(&kiss::Frame {
        port: Port::new(port).unwrap(),
        command: Command::Data(body.to_vec()),
    })
}

/// When a lone frame sent at `t0` ends: TXDELAY, the opening flag, the
/// frame and its closing flag.
fn end_of_lone_frame(t0: Instant, body: &[u8]) -> Instant {
    t0 + TXDELAY + bits_duration(FLAG_BITS + hdlc_bits(body), RATE)
}

/// One client per station, numbered as the stations.
fn attach_all(air: &mut Air) {
    for s in 0..air.stations() {
        air.attach(ClientId(s as u64), s);
    }
}

/// Runs the model until nothing is left to do or `until`, collecting
/// every output.
fn run(air: &mut Air, until: Instant) -> Vec<Output> {
    let mut out = Vec::new();
    loop {
        while let Some(o) = air.poll_output() {
            out.push(o);
        }
        match air.poll_timeout() {
            Some(t) if t <= until => air.handle_timeout(t),
            _ => return out,
        }
    }
}

fn deliveries(out: &[Output]) -> Vec<(ClientId, kiss::Frame, Instant)> {
    out.iter()
        .filter_map(|o| match o {
            Output::ToClient {
                client,
                octets,
                due,
                ..
            } => {
                let mut d = kiss::Decoder::new(10_000);
                d.push(octets);
                Some((*client, d.next().unwrap().unwrap(), *due))
            }
            _ => None,
        })
        .collect()
}

fn on_air(out: &[Output]) -> Vec<&AirFrame> {
    out.iter()
        .filter_map(|o| match o {
            Output::OnAir(f) => Some(f),
            _ => None,
        })
        .collect()
}

const FOREVER: Instant = Instant::from_micros(60_000_000);

#[test]
fn a_frame_reaches_every_other_station_when_its_airtime_ends() {
    let mut air = Air::new(&plan(3));
    attach_all(&mut air);
    let body = ui("N0A", "hello");
    air.handle_input(Instant::ZERO, ClientId(0), &kiss_data(0, &body));
    let out = run(&mut air, FOREVER);
    let end = end_of_lone_frame(Instant::ZERO, &body);
    let got = deliveries(&out);
    assert_eq!(got.len(), 2, "{got:?}");
    for (i, (client, frame, due)) in got.into_iter().enumerate() {
        assert_eq!(client, ClientId(i as u64 + 1));
        assert_eq!(frame.command, Command::Data(body.clone()));
        assert_eq!(due, end);
    }
    let air_frames = on_air(&out);
    assert_eq!(air_frames.len(), 1);
    assert_eq!(air_frames[0].end, end);
    assert_eq!(
        air_frames[0].outcomes,
        [(1, Outcome::Intact), (2, Outcome::Intact)]
    );
    let report = air.report(end);
    assert_eq!(report.stations[0].frames_sent, 1);
    assert_eq!(report.stations[1].received, 1);
    assert_eq!(report.channels[0].collisions, 0);
}

#[test]
fn full_duplex_stations_key_at_once_and_their_frames_collide() {
    let mut air = Air::new(&plan(3));
    attach_all(&mut air);
    let fulldup = kiss::encode(&kiss::Frame {
        port: Port::ZERO,
        command: Command::FullDuplex(true),
    });
    let t = Instant::from_micros(3_000);
    for s in 0..2u64 {
        air.handle_input(t, ClientId(s), &fulldup);
        air.handle_input(t, ClientId(s), &kiss_data(0, &ui("N0A", "collide")));
    }
    let out = run(&mut air, FOREVER);
    assert!(deliveries(&out).is_empty(), "nothing survives");
    let frames = on_air(&out);
    assert_eq!(frames.len(), 2);
    assert_eq!(
        frames[0].end,
        end_of_lone_frame(t, &frames[0].body),
        "no slot wait"
    );
    for f in frames {
        for &(to, outcome) in &f.outcomes {
            let expected = if to == 2 {
                Outcome::Collision
            } else {
                Outcome::ReceiverKeyed
            };
            assert_eq!(outcome, expected, "frame from {} at {to}", f.from);
        }
    }
    let report = air.report(FOREVER);
    assert_eq!(report.channels[0].collisions, 1);
    assert_eq!(report.stations[2].lost_to_collisions, 2);
}

#[test]
fn hidden_stations_collide_at_the_station_between_them() {
    let text = r#"
seed = 3
[defaults]
txdelay_ms = 10
persistence = 255
slot_ms = 10
txtail_ms = 0
[[channel]]
name = "radio"
bitrate = 9600
hidden = [["a", "c"]]
[[station]]
name = "a"
slot_phase_ms = 0
[[station]]
name = "b"
slot_phase_ms = 0
[[station]]
name = "c"
slot_phase_ms = 0
"#;
    let mut air = Air::new(&Plan::from_toml(text).unwrap());
    attach_all(&mut air);
    // c starts 20 ms into a's transmission: it cannot hear a, so it keys.
    air.handle_input(
        Instant::ZERO,
        ClientId(0),
        &kiss_data(0, &ui("A", &"x".repeat(100))),
    );
    let mut out = run(&mut air, Instant::from_micros(20_000));
    air.handle_input(
        Instant::from_micros(20_000),
        ClientId(2),
        &kiss_data(0, &ui("C", "y")),
    );
    out.extend(run(&mut air, FOREVER));
    assert!(deliveries(&out).is_empty(), "{:?}", deliveries(&out));
    for f in on_air(&out) {
        assert_eq!(
            f.outcomes,
            [(1, Outcome::Collision)],
            "only b hears, and loses"
        );
    }
    // Without the hidden pair, c hears a and waits: both arrive.
    let mut air =
        Air::new(&Plan::from_toml(&text.replace("hidden = [[\"a\", \"c\"]]", "")).unwrap());
    attach_all(&mut air);
    air.handle_input(
        Instant::ZERO,
        ClientId(0),
        &kiss_data(0, &ui("A", &"x".repeat(100))),
    );
    let mut out = run(&mut air, Instant::from_micros(20_000));
    air.handle_input(
        Instant::from_micros(20_000),
        ClientId(2),
        &kiss_data(0, &ui("C", "y")),
    );
    out.extend(run(&mut air, FOREVER));
    assert_eq!(deliveries(&out).len(), 4);
}

#[test]
fn ackmode_is_answered_when_the_frame_has_left_the_air() {
    let mut air = Air::new(&plan(2));
    attach_all(&mut air);
    let body = ui("N0A", "ack me");
    let request = kiss::encode(&kiss::Frame {
        port: Port::ZERO,
        command: Command::AckMode {
            seq: 0x1234,
            data: body.clone(),
        },
    });
    air.handle_input(Instant::ZERO, ClientId(0), &request);
    let out = run(&mut air, FOREVER);
    let end = end_of_lone_frame(Instant::ZERO, &body);
    let got = deliveries(&out);
    assert!(got.contains(&(
        ClientId(0),
        kiss::Frame {
            port: Port::ZERO,
            command: Command::AckMode {
                seq: 0x1234,
                data: Vec::new()
            }
        },
        end
    )));
    assert!(got.contains(&(ClientId(1), kiss::Frame::data(body), end)));
}

#[test]
fn kiss_commands_set_the_senders_radio() {
    let mut air = Air::new(&plan(2));
    attach_all(&mut air);
    let txdelay = kiss::encode(&kiss::Frame {
        port: Port::ZERO,
        command: Command::TxDelay(50),
    });
    let body = ui("N0A", "slow start");
    air.handle_input(Instant::ZERO, ClientId(0), &txdelay);
    air.handle_input(Instant::ZERO, ClientId(0), &kiss_data(0, &body));
    let out = run(&mut air, FOREVER);
    let (_, _, due) = deliveries(&out)[0].clone();
    assert_eq!(
        due,
        end_of_lone_frame(Instant::ZERO, &body) + Duration::from_millis(490),
        "TXDELAY 50 units is 500 ms, 490 more than the default here"
    );
    assert_eq!(air.report(due).stations[0].kiss_commands, 1);
}

#[test]
fn bad_input_is_skipped_and_counted_without_losing_the_good_frames() {
    let mut air = Air::new(&plan(2));
    attach_all(&mut air);
    let body = ui("N0A", "still here");
    let mut input = b"garbage\r\n".to_vec();
    input.extend(kiss_data(0, &body));
    input.extend(kiss_data(5, &body)); // no radio on KISS port 5
    input.extend([0xC0, 0x00, 0xC0]); // an empty data frame
    input.extend([0xC0, 0x0E, 1, 0xC0]); // unknown command 0xE
    air.handle_input(Instant::ZERO, ClientId(0), &input);
    let out = run(&mut air, FOREVER);
    assert_eq!(deliveries(&out).len(), 1);
    let notices = out
        .iter()
        .filter(|o| matches!(o, Output::Notice { .. }))
        .count();
    assert_eq!(notices, 3);
    let s0 = &air.report(FOREVER).stations[0];
    assert_eq!(s0.garbage_octets, 9);
    assert_eq!(s0.unknown_port, 1);
    assert_eq!(s0.bad_frames, 2);
    assert_eq!(s0.frames_sent, 1);
}

#[test]
fn a_station_sends_on_the_channel_of_its_kiss_port() {
    let text = r#"
[defaults]
txdelay_ms = 10
persistence = 255
slot_ms = 10
txtail_ms = 0
[[channel]]
name = "vhf"
bitrate = 1200
[[channel]]
name = "uhf"
bitrate = 9600
[[station]]
name = "digi"
channels = ["vhf", "uhf"]
[[station]]
name = "v"
channels = ["vhf"]
[[station]]
name = "u"
channels = ["uhf"]
"#;
    let mut air = Air::new(&Plan::from_toml(text).unwrap());
    attach_all(&mut air);
    let body = ui("DIGI", "to uhf");
    air.handle_input(Instant::ZERO, ClientId(0), &kiss_data(1, &body));
    let body_v = ui("V", "from vhf");
    air.handle_input(Instant::ZERO, ClientId(1), &kiss_data(0, &body_v));
    let got = deliveries(&run(&mut air, FOREVER));
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(got
        .iter()
        .any(|(c, f, _)| *c == ClientId(2) && *f == kiss::Frame::data(body.clone())));
    // The digipeater hears the VHF station on its KISS port 0.
    assert!(got
        .iter()
        .any(|(c, f, _)| *c == ClientId(0) && *f == kiss::Frame::data(body_v.clone())));
}

#[test]
fn a_tnc_model_adds_its_serial_link_and_processing_both_ways() {
    let mut with_tnc = plan(2);
    for s in &mut with_tnc.stations {
        s.tnc = Some(linklab_emu::config::TncPlan {
            tnc: linklab_channel::TncConfig {
                serial_rate: 9600,
                per_frame: Duration::from_millis(5),
                per_octet: Duration::ZERO,
                tx_buffer_octets: 4096,
            },
            carrier_hold: Duration::ZERO,
        });
    }
    let body = ui("N0A", "through a TNC");
    let serial = with_tnc.stations[0].tnc.unwrap().tnc.serial_time(&body);
    let mut air = Air::new(&with_tnc);
    attach_all(&mut air);
    air.handle_input(Instant::ZERO, ClientId(0), &kiss_data(0, &body));
    let got = deliveries(&run(&mut air, FOREVER));
    // Serial and processing in the sender's TNC, then the slot tick after
    // (slots of 10 ms), TXDELAY and airtime, processing and serial in the
    // receiver's.
    let ready = serial + Duration::from_millis(5);
    let tick = Duration::from_millis(ready.as_millis().div_ceil(10) as u64 * 10);
    let expected =
        end_of_lone_frame(Instant::ZERO + tick, &body) + Duration::from_millis(5) + serial;
    assert_eq!(got[0].2, expected);
}

#[test]
fn frames_for_a_station_without_client_are_counted() {
    let mut air = Air::new(&plan(3));
    air.attach(ClientId(0), 0);
    air.attach(ClientId(1), 1);
    air.handle_input(
        Instant::ZERO,
        ClientId(0),
        &kiss_data(0, &ui("N0A", "anyone?")),
    );
    run(&mut air, FOREVER);
    air.detach(ClientId(1));
    air.handle_input(
        Instant::from_micros(1_000_000),
        ClientId(0),
        &kiss_data(0, &ui("N0A", "b?")),
    );
    run(&mut air, FOREVER);
    let r = air.report(FOREVER);
    assert_eq!(r.stations[1].delivered, 1);
    assert_eq!(r.stations[1].dropped_no_client, 1);
    assert_eq!(r.stations[2].dropped_no_client, 2);
}

#[test]
fn the_same_seed_gives_the_same_air_and_bit_errors_are_drawn_from_it() {
    let lossy = |seed| {
        let mut p = Plan::simple(
            3,
            0,
            RATE,
            StationConfig {
                persistence: 63,
                ..eager()
            },
            ErrorModel::Independent { ber: 2e-4 },
        )
        .unwrap();
        p.seed = seed;
        let mut air = Air::new(&p);
        attach_all(&mut air);
        for i in 0..60u64 {
            let t = Instant::from_micros(i * 25_000);
            air.handle_input(
                t,
                ClientId(i % 3),
                &kiss_data(0, &ui("N0A", &format!("frame {i} {}", "z".repeat(80)))),
            );
            run(&mut air, t);
        }
        let out = run(&mut air, FOREVER);
        (
            on_air(&out).into_iter().cloned().collect::<Vec<_>>(),
            air.report(FOREVER),
        )
    };
    let (a, ra) = lossy(11);
    let (b, rb) = lossy(11);
    assert_eq!(a, b);
    assert_eq!(ra, rb);
    let lost: u64 = ra.stations.iter().map(|s| s.lost_to_errors).sum();
    assert!(lost > 0 && lost < 60, "some, not all, frames hit: {lost}");
    let (c, _) = lossy(12);
    assert_ne!(a, c, "another seed, another run");
}

/// a and c do not hear each other; b, between them, digipeats for DIGI-1.
const DIGIPEATER: &str = r#"
[defaults]
txdelay_ms = 10
persistence = 255
slot_ms = 10
txtail_ms = 0
[[channel]]
name = "radio"
bitrate = 9600
hidden = [["a", "c"]]
[[station]]
name = "a"
slot_phase_ms = 0
[[station]]
name = "b"
slot_phase_ms = 0
digipeater = "DIGI-1"
[[station]]
name = "c"
slot_phase_ms = 0
"#;

/// A UI frame from N0A to N0C through `via` (H bits clear).
fn ui_via(via: &[&str], text: &str) -> Vec<u8> {
    let via: Vec<Address> = via.iter().map(|d| d.parse().unwrap()).collect();
    Frame::ui(
        "N0C".parse().unwrap(),
        "N0A".parse().unwrap(),
        &via,
        Pid::NoLayer3,
        text.as_bytes().to_vec(),
    )
    .unwrap()
    .encode()
}

/// `body` as the digipeater DIGI-1 sends it again: its H bit set.
fn repeated(body: &[u8]) -> Vec<u8> {
    let mut frame = Frame::decode(body, linklab_wire::control::Modulus::Mod8).unwrap();
    for d in frame.address_mut().digipeaters_mut() {
        if d.callsign().as_str() == "DIGI" && d.ssid() == 1 {
            d.set_c_or_h(true);
        }
    }
    frame.encode()
}

#[test]
fn a_digipeater_between_hidden_stations_repeats_the_frame_with_its_h_bit_set() {
    let mut air = Air::new(&Plan::from_toml(DIGIPEATER).unwrap());
    attach_all(&mut air);
    let body = ui_via(&["DIGI-1"], "via b");
    air.handle_input(Instant::ZERO, ClientId(0), &kiss_data(0, &body));
    let out = run(&mut air, FOREVER);
    let first = end_of_lone_frame(Instant::ZERO, &body);
    let again = repeated(&body);
    // b hears it at the end of a's frame, keys at its next slot tick
    // (slots of 10 ms from phase 0) and sends it after TXDELAY.
    let tick = Duration::from_millis(first.as_micros().div_ceil(10_000) * 10);
    let second = end_of_lone_frame(Instant::ZERO + tick, &again);
    let frames = on_air(&out);
    assert_eq!(frames.len(), 2, "{frames:?}");
    assert_eq!((frames[0].from, &frames[0].body), (0, &body));
    assert_eq!(
        frames[0].outcomes,
        [(1, Outcome::Intact)],
        "c cannot hear a"
    );
    assert_eq!((frames[1].from, &frames[1].body), (1, &again));
    assert_eq!(frames[1].end, second);
    assert_eq!(
        frames[1].outcomes,
        [(0, Outcome::Intact), (2, Outcome::Intact)]
    );
    // c gets it only through b, with b's H bit set; b's client sees the
    // frame as received; a hears the repeat (its own frame, repeated).
    let got = deliveries(&out);
    assert_eq!(
        got,
        [
            (ClientId(1), kiss::Frame::data(body.clone()), first),
            (ClientId(0), kiss::Frame::data(again.clone()), second),
            (ClientId(2), kiss::Frame::data(again.clone()), second),
        ]
    );
    let report = air.report(FOREVER);
    assert_eq!(report.channels[0].frames_sent, 2, "on the air twice");
    assert_eq!(report.stations[1].digipeated, 1);
    assert_eq!(report.stations[1].frames_sent, 1);
    assert!(report
        .to_string()
        .contains("b repeated 1 frames as a digipeater"));
}

#[test]
fn a_digipeater_repeats_only_frames_whose_next_hop_it_is() {
    let mut air = Air::new(&Plan::from_toml(DIGIPEATER).unwrap());
    attach_all(&mut air);
    // No path; another repeater next; DIGI-1 after another repeater that
    // has not repeated it yet; DIGI-1 already repeated; DIGI-1 as the
    // destination.
    let mut done = ui_via(&["DIGI-1"], "done");
    done = repeated(&done);
    let to_digi = Frame::ui(
        "DIGI-1".parse().unwrap(),
        "N0A".parse().unwrap(),
        &[],
        Pid::NoLayer3,
        b"to b".to_vec(),
    )
    .unwrap()
    .encode();
    let bodies = [
        ui_via(&[], "direct"),
        ui_via(&["OTHER"], "other"),
        ui_via(&["OTHER", "DIGI-1"], "second"),
        done,
        to_digi,
        ui_via(&["DIGI-2"], "ssid"),
    ];
    for (i, body) in bodies.iter().enumerate() {
        let t = Instant::from_micros(i as u64 * 200_000);
        air.handle_input(t, ClientId(0), &kiss_data(0, body));
        run(&mut air, t);
    }
    let out = run(&mut air, FOREVER);
    assert!(on_air(&out).iter().all(|f| f.from == 0), "b sent nothing");
    let report = air.report(FOREVER);
    assert_eq!(report.stations[1].digipeated, 0);
    assert_eq!(report.stations[1].delivered, bodies.len() as u64);
}

#[test]
fn a_digipeater_with_a_tnc_model_repeats_without_the_serial_link() {
    let mut plan = Plan::from_toml(DIGIPEATER).unwrap();
    let tnc = linklab_emu::config::TncPlan {
        tnc: linklab_channel::TncConfig {
            serial_rate: 1200,
            per_frame: Duration::from_millis(5),
            per_octet: Duration::ZERO,
            tx_buffer_octets: 4096,
        },
        carrier_hold: Duration::ZERO,
    };
    plan.stations[1].tnc = Some(tnc);
    let mut air = Air::new(&plan);
    attach_all(&mut air);
    // b's host writes a frame of its own while it repeats a's.
    let body = ui_via(&["DIGI-1"], "via b");
    let own = ui("N0B", "b's own");
    air.handle_input(Instant::ZERO, ClientId(0), &kiss_data(0, &body));
    air.handle_input(Instant::ZERO, ClientId(1), &kiss_data(0, &own));
    let out = run(&mut air, FOREVER);
    let frames = on_air(&out);
    let from_b: Vec<&Vec<u8>> = frames
        .iter()
        .filter(|f| f.from == 1)
        .map(|f| &f.body)
        .collect();
    // The repeat does not wait for b's own frame to cross the 1200 bit/s
    // serial link.
    assert_eq!(from_b, [&repeated(&body), &own]);
    assert!(frames.iter().any(|f| f.from == 0 && f.body == body));
    let got = deliveries(&out);
    assert!(got.contains(&(
        ClientId(2),
        kiss::Frame::data(repeated(&body)),
        frames[1].end
    )));
    // b's client still gets a's frame, through the TNC's serial link.
    assert!(got
        .iter()
        .any(|(c, f, _)| *c == ClientId(1) && *f == kiss::Frame::data(body.clone())));
    assert_eq!(air.report(FOREVER).stations[1].digipeated, 1);
}
