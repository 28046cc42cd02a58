//! Two DTEs over a lossless packet pipe (DTE/DTE operation, ISO 8208):
//! call set-up and clearing, data transfer with windows and complete
//! packet sequences, flow control, D bit, interrupts, reset, restart,
//! collisions, time-limits and facility negotiation.

mod support;

use linklab_core::{Engine, Instant, Stream};
use std::time::Duration;

use linklab_testkit::random_octets;
use linklab_x25::packet::{cause, DataFields, Facility};
use linklab_x25::{
    Body, CallOptions, ChannelState, DteAddress, Event, LayerState, Lci, Modulus, Packet, Role,
};
use support::{config, messages, new_pipe, Pipe, PipeExt};

fn pair() -> Pipe {
    Pipe::restarted(config(Role::Dte, "1111"), config(Role::Dce, "2222"))
}

fn call_b() -> CallOptions {
    CallOptions {
        called: DteAddress::new("2222").unwrap(),
        user_data: vec![0xCC],
        ..CallOptions::default()
    }
}

#[test]
fn calls_take_the_highest_free_channel_and_the_dce_part_the_lowest() {
    let mut pipe = pair();
    let lci = pipe.engines[0].dte.call(pipe.now, call_b()).unwrap();
    assert_eq!(lci, Lci::new(16));
    pipe.settle();
    let events = pipe.take_events(1);
    let [Event::IncomingCall {
        lci: l,
        calling,
        called,
        user_data,
        modulus,
        ..
    }] = events.as_slice()
    else {
        panic!("{events:?}")
    };
    assert_eq!(*l, lci);
    assert_eq!(calling.to_string(), "1111");
    assert_eq!(called.to_string(), "2222");
    assert_eq!(user_data, &[0xCC]);
    assert_eq!(*modulus, Modulus::Mod8);
    pipe.engines[1].dte.accept(lci).unwrap();
    pipe.settle();
    let connected = pipe.take_events(0);
    let [Event::Connected { params, .. }] = connected.as_slice() else {
        panic!("{connected:?}")
    };
    assert_eq!((params.tx_packet_size, params.tx_window), (128, 2));
    let back = pipe.engines[1].dte.call(pipe.now, call_b()).unwrap();
    assert_eq!(back, Lci::new(1));
    let second = pipe.engines[0].dte.call(pipe.now, call_b()).unwrap();
    assert_eq!(second, Lci::new(15));
}

/// Sends `sizes` messages from `from` on `lci` and checks they arrive
/// whole, in order, with their Q and D bits.
fn transfer(pipe: &mut Pipe, from: usize, lci: Lci, sizes: &[usize], d: bool, seed: u64) {
    let mut rng = Stream::from_seed(seed);
    let sent: Vec<(bool, bool, Vec<u8>)> = sizes
        .iter()
        .enumerate()
        .map(|(i, &n)| (i % 3 == 1, d && i % 2 == 0, random_octets(&mut rng, n)))
        .collect();
    for (q, d, data) in &sent {
        pipe.engines[from].dte.send(lci, data, *q, *d).unwrap();
    }
    pipe.settle();
    let events = pipe.take_events(1 - from);
    assert_eq!(messages(&events), sent);
    let confirmed = pipe
        .take_events(from)
        .iter()
        .filter(|e| matches!(e, Event::Confirmed { .. }))
        .count();
    assert_eq!(confirmed, sent.iter().filter(|(_, d, _)| *d).count());
    assert_eq!(pipe.engines[from].dte.unacknowledged(lci), 0);
}

#[test]
fn messages_of_many_sizes_arrive_whole_as_complete_packet_sequences() {
    let mut pipe = pair();
    let lci = pipe.connect(call_b());
    let mut sizes = vec![0, 1, 127, 128, 129, 255, 256, 257, 1000, 4096, 5000];
    let mut rng = Stream::from_seed(7);
    sizes.extend((0..40).map(|_| (rng.next_u64() % 3000) as usize));
    let start = pipe.log.len();
    transfer(&mut pipe, 0, lci, &sizes, false, 1);
    transfer(&mut pipe, 1, lci, &sizes, false, 2);
    // Every packet but a sequence's last is full, with M = 1 (4.3.5).
    let data: Vec<&DataFields> = pipe.log[start..]
        .iter()
        .filter_map(|(_, _, p)| match &p.body {
            Body::Data(d) => Some(d),
            _ => None,
        })
        .collect();
    let total: usize = sizes.iter().map(|&n| n.div_ceil(128).max(1)).sum();
    assert_eq!(data.len(), 2 * total);
    assert!(data.iter().all(|d| !d.m || d.user_data.len() == 128));
    assert!(data.iter().all(|d| d.user_data.len() <= 128));
    // The window was used in full and never exceeded (the monitor
    // asserts on every packet).
    assert_eq!(pipe.max_outstanding(), [2, 2]);
}

#[test]
fn modulo_128_call_with_negotiated_window_and_d_bit() {
    let mut a = config(Role::Dte, "1111");
    a.modulus = Modulus::Mod128;
    a.max_window = 127;
    let mut b = config(Role::Dce, "2222");
    b.modulus = Modulus::Mod128;
    b.max_window = 100;
    let mut pipe = Pipe::restarted(a, b);
    let lci = pipe.connect(CallOptions {
        window: Some(100),
        d_bit: true,
        ..call_b()
    });
    let params = pipe.engines[0].dte.call_params(lci).unwrap();
    assert_eq!(
        (params.modulus, params.tx_window, params.d_bit),
        (Modulus::Mod128, 100, true)
    );
    let sizes: Vec<usize> = (0..30).map(|i| 128 * 9 + i).collect();
    transfer(&mut pipe, 0, lci, &sizes, true, 3);
    transfer(&mut pipe, 1, lci, &sizes, true, 4);
    assert_eq!(pipe.max_outstanding(), [100, 100]);
}

#[test]
fn called_dte_lowers_packet_and_window_size_within_limits() {
    let a = config(Role::Dte, "1111");
    let mut b = config(Role::Dce, "2222");
    b.max_packet_size = 256;
    b.max_window = 3;
    let mut pipe = Pipe::restarted(a, b);
    let lci = pipe.engines[0]
        .dte
        .call(
            pipe.now,
            CallOptions {
                packet_size: Some(1024),
                window: Some(6),
                ..call_b()
            },
        )
        .unwrap();
    pipe.settle();
    let incoming = pipe.take_events(1);
    let [Event::IncomingCall { facilities, .. }] = incoming.as_slice() else {
        panic!("{incoming:?}")
    };
    assert!(facilities.contains(&Facility::PacketSize {
        from_called: 10,
        from_calling: 10
    }));
    pipe.engines[1].dte.accept(lci).unwrap();
    pipe.settle();
    for side in 0..2 {
        let p = pipe.engines[side].dte.call_params(lci).unwrap();
        assert_eq!(
            (p.tx_packet_size, p.rx_packet_size, p.tx_window, p.rx_window),
            (256, 256, 3, 3)
        );
    }
    let accepted = pipe
        .log
        .iter()
        .find_map(|(_, _, p)| match &p.body {
            Body::CallAccepted { fields, .. } => fields.clone(),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        accepted.facilities,
        [
            Facility::PacketSize {
                from_called: 8,
                from_calling: 8
            },
            Facility::WindowSize {
                from_called: 3,
                from_calling: 3
            }
        ]
    );
    transfer(&mut pipe, 0, lci, &[2000, 10, 700], false, 5);
    assert_eq!(pipe.max_outstanding()[0], 3);
}

#[test]
fn call_connected_with_a_value_beyond_the_request_is_cleared() {
    let mut pipe = pair();
    let lci = pipe.engines[0].dte.call(pipe.now, call_b()).unwrap();
    pipe.settle();
    pipe.take_events(1);
    // CALL CONNECTED asking for W = 5 when W = 2 (the default) was asked.
    let bad = Packet {
        modulus: Modulus::Mod8,
        lci,
        body: Body::CallAccepted {
            d: false,
            fields: Some(linklab_x25::CallFields {
                facilities: vec![Facility::WindowSize {
                    from_called: 5,
                    from_calling: 5,
                }],
                ..Default::default()
            }),
        },
    };
    pipe.inject(0, &bad.encode().unwrap());
    let events = pipe.take_events(0);
    assert!(
        matches!(
            events.as_slice(),
            [Event::Cleared {
                diagnostic: Some(66),
                by_peer: false,
                ..
            }]
        ),
        "{events:?}"
    );
}

#[test]
fn rnr_stops_the_sender_and_rr_resumes_it() {
    let mut pipe = pair();
    let lci = pipe.connect(call_b());
    pipe.engines[1].dte.set_receiver_busy(lci, true).unwrap();
    pipe.settle();
    assert!(pipe.engines[0].dte.peer_busy(lci));
    let start = pipe.log.len();
    for i in 0..10u8 {
        pipe.engines[0]
            .dte
            .send(lci, &[i; 50], false, false)
            .unwrap();
    }
    pipe.settle();
    assert!(pipe.sent_names(0, start).is_empty());
    assert_eq!(pipe.engines[0].dte.queued(lci), 10);
    pipe.engines[1].dte.set_receiver_busy(lci, false).unwrap();
    pipe.settle();
    assert_eq!(pipe.sent_names(1, start).first(), Some(&"RR"));
    let got = messages(&pipe.take_events(1));
    assert_eq!(got.len(), 10);
    assert!(got
        .iter()
        .enumerate()
        .all(|(i, m)| m.2 == vec![i as u8; 50]));
}

#[test]
fn rnr_in_mid_window_holds_the_rest_of_the_sequence() {
    let mut pipe = pair();
    let lci = pipe.connect(call_b());
    pipe.to[1].hold = true;
    pipe.engines[0]
        .dte
        .send(lci, &[7; 600], false, false)
        .unwrap();
    pipe.settle();
    // Two packets in flight (W = 2); B turns busy before they arrive.
    assert_eq!(pipe.engines[0].dte.unacknowledged(lci), 2);
    pipe.engines[1].dte.set_receiver_busy(lci, true).unwrap();
    pipe.to[1].hold = false;
    pipe.settle();
    assert_eq!(pipe.engines[0].dte.unacknowledged(lci), 0);
    assert_eq!(pipe.engines[0].dte.queued(lci), 3);
    assert!(messages(&pipe.take_events(1)).is_empty());
    pipe.engines[1].dte.set_receiver_busy(lci, false).unwrap();
    pipe.settle();
    assert_eq!(
        messages(&pipe.take_events(1)),
        [(false, false, vec![7; 600])]
    );
}

fn data(lci: Lci, ps: u8, pr: u8, q: bool, m: bool, len: usize) -> Vec<u8> {
    Packet {
        modulus: Modulus::Mod8,
        lci,
        body: Body::Data(DataFields {
            q,
            d: false,
            m,
            ps,
            pr,
            user_data: vec![0x55; len],
        }),
    }
    .encode()
    .unwrap()
}

/// Injects `octets` into B and checks B resets the call with
/// `diagnostic`, A is told, and data flows again afterwards.
fn expect_reset(pipe: &mut Pipe, lci: Lci, octets: &[u8], diagnostic: u8) {
    let start = pipe.log.len();
    pipe.inject(1, octets);
    let reset = pipe.log[start..]
        .iter()
        .find(|(_, s, _)| *s == 1)
        .map(|(_, _, p)| p.body.clone());
    assert_eq!(
        reset,
        Some(Body::ResetRequest {
            cause: cause::DTE_ORIGINATED,
            diagnostic: Some(diagnostic)
        })
    );
    assert_eq!(pipe.sent_names(0, start), ["RESET CONFIRMATION"]);
    let a = pipe.take_events(0);
    assert!(
        matches!(a.as_slice(), [Event::Reset { by_peer: true, diagnostic: Some(d), .. }] if *d == diagnostic),
        "{a:?}"
    );
    let b = pipe.take_events(1);
    assert!(
        matches!(b.first(), Some(Event::Reset { by_peer: false, .. })),
        "{b:?}"
    );
    assert_eq!(
        pipe.engines[1].dte.channel_state(lci),
        ChannelState::DataTransfer
    );
    transfer(pipe, 0, lci, &[300], false, 9);
    // Back to sequence numbers 0 for the next case.
    pipe.engines[0]
        .dte
        .reset(pipe.now, lci, 0, Some(0))
        .unwrap();
    pipe.settle();
    pipe.take_events(0);
    pipe.take_events(1);
}

#[test]
fn errors_in_data_transfer_reset_the_call_with_their_diagnostic() {
    let mut pipe = pair();
    let lci = pipe.connect(call_b());
    // P(S) 3 when 0 is expected: invalid P(S).
    expect_reset(&mut pipe, lci, &data(lci, 3, 0, false, false, 10), 1);
    // P(R) 5 acknowledges packets B never sent: invalid P(R).
    let rr = Packet {
        modulus: Modulus::Mod8,
        lci,
        body: Body::ReceiveReady { pr: 5 },
    };
    expect_reset(&mut pipe, lci, &rr.encode().unwrap(), 2);
    // Longer than P = 128: packet too long.
    expect_reset(&mut pipe, lci, &data(lci, 0, 0, false, false, 129), 39);
    // Q changes inside a complete packet sequence.
    let first = data(lci, 0, 0, false, true, 128);
    pipe.engines[1].dte.handle_octets(pipe.now, &first);
    expect_reset(&mut pipe, lci, &data(lci, 1, 0, true, false, 5), 83);
    // A packet that does not decode: unidentifiable packet type.
    expect_reset(&mut pipe, lci, &[0x10, lci.channel(), 0x07], 33);
}

#[test]
fn reset_collision_completes_without_confirmation() {
    let mut pipe = pair();
    let lci = pipe.connect(call_b());
    let start = pipe.log.len();
    pipe.engines[0]
        .dte
        .reset(pipe.now, lci, 0, Some(0))
        .unwrap();
    pipe.engines[1]
        .dte
        .reset(pipe.now, lci, 0, Some(0))
        .unwrap();
    pipe.settle();
    assert_eq!(pipe.sent_names(0, start), ["RESET REQUEST"]);
    assert_eq!(pipe.sent_names(1, start), ["RESET REQUEST"]);
    for side in 0..2 {
        assert_eq!(
            pipe.engines[side].dte.channel_state(lci),
            ChannelState::DataTransfer
        );
        assert_eq!(pipe.engines[side].dte.poll_timeout(), None);
    }
    transfer(&mut pipe, 1, lci, &[10, 500], false, 11);
}

#[test]
fn clear_collision_completes_without_confirmation() {
    let mut pipe = pair();
    let lci = pipe.connect(call_b());
    let start = pipe.log.len();
    pipe.engines[0]
        .dte
        .clear(pipe.now, lci, 0, Some(0))
        .unwrap();
    pipe.engines[1]
        .dte
        .clear(pipe.now, lci, 0x80, Some(0))
        .unwrap();
    pipe.settle();
    assert_eq!(pipe.sent_names(0, start), ["CLEAR REQUEST"]);
    assert_eq!(pipe.sent_names(1, start), ["CLEAR REQUEST"]);
    for side in 0..2 {
        let events = pipe.take_events(side);
        assert!(
            matches!(events.as_slice(), [Event::Cleared { by_peer: false, .. }]),
            "{events:?}"
        );
        assert_eq!(
            pipe.engines[side].dte.channel_state(lci),
            ChannelState::Ready
        );
    }
}

#[test]
fn clearing_by_the_peer_is_confirmed_and_reported() {
    let mut pipe = pair();
    let lci = pipe.connect(call_b());
    let start = pipe.log.len();
    pipe.engines[1]
        .dte
        .clear(pipe.now, lci, 0x80, Some(0))
        .unwrap();
    pipe.settle();
    assert_eq!(pipe.sent_names(0, start), ["CLEAR CONFIRMATION"]);
    assert_eq!(
        pipe.take_events(0),
        [Event::Cleared {
            lci,
            cause: 0x80,
            diagnostic: Some(0),
            by_peer: true
        }]
    );
    assert_eq!(
        pipe.take_events(1),
        [Event::Cleared {
            lci,
            cause: 0x80,
            diagnostic: Some(0),
            by_peer: false
        }]
    );
}

#[test]
fn call_collision_cancels_the_dce_parts_call() {
    let mut a = config(Role::Dte, "1111");
    let mut b = config(Role::Dce, "2222");
    for c in [&mut a, &mut b] {
        c.lowest_channel = Lci::new(5);
        c.highest_channel = Lci::new(5);
    }
    let mut pipe = Pipe::restarted(a, b);
    let la = pipe.engines[0].dte.call(pipe.now, call_b()).unwrap();
    let lb = pipe.engines[1].dte.call(pipe.now, call_b()).unwrap();
    assert_eq!(la, lb);
    pipe.settle();
    let b_events = pipe.take_events(1);
    assert!(
        matches!(
            b_events.as_slice(),
            [
                Event::Cleared {
                    diagnostic: Some(72),
                    by_peer: false,
                    ..
                },
                Event::IncomingCall { .. }
            ]
        ),
        "{b_events:?}"
    );
    assert!(pipe.take_events(0).is_empty());
    pipe.engines[1].dte.accept(la).unwrap();
    pipe.settle();
    assert!(matches!(
        pipe.take_events(0).as_slice(),
        [Event::Connected { .. }]
    ));
    transfer(&mut pipe, 0, la, &[1, 2, 3], false, 12);
}

#[test]
fn restart_clears_every_call() {
    let mut pipe = pair();
    let first = pipe.connect(call_b());
    let second = pipe.connect(call_b());
    let start = pipe.log.len();
    pipe.engines[1].dte.restart(pipe.now, 0, Some(0));
    pipe.settle();
    assert_eq!(pipe.sent_names(0, start), ["RESTART CONFIRMATION"]);
    for side in 0..2 {
        let events = pipe.take_events(side);
        let cleared: Vec<Lci> = events
            .iter()
            .filter_map(|e| match e {
                Event::Cleared { lci, .. } => Some(*lci),
                _ => None,
            })
            .collect();
        assert_eq!(cleared, [second, first]);
        assert!(matches!(events.last(), Some(Event::Restarted { .. })));
        assert_eq!(pipe.engines[side].dte.layer_state(), LayerState::Ready);
        assert_eq!(
            pipe.engines[side].dte.channel_state(first),
            ChannelState::Ready
        );
    }
}

#[test]
fn restart_collision_completes_and_t20_retries_then_gives_up() {
    let mut pipe = new_pipe(config(Role::Dte, "1"), config(Role::Dce, "2"));
    pipe.engines[0].dte.start(pipe.now);
    pipe.engines[1].dte.start(pipe.now);
    pipe.settle();
    assert_eq!(pipe.sent_names(0, 0), ["RESTART REQUEST"]);
    assert_eq!(pipe.sent_names(1, 0), ["RESTART REQUEST"]);
    assert!(pipe
        .engines
        .iter()
        .all(|e| e.dte.layer_state() == LayerState::Ready));

    let mut pipe = new_pipe(config(Role::Dte, "1"), config(Role::Dce, "2"));
    pipe.to[1].hold = true;
    pipe.engines[0].dte.start(pipe.now);
    pipe.settle();
    while pipe.advance(Duration::from_secs(1000)) {}
    assert_eq!(pipe.now, Instant::from_micros(360_000_000));
    assert_eq!(pipe.sent_names(0, 0), ["RESTART REQUEST"; 2]);
    assert_eq!(pipe.take_events(0), [Event::RestartFailed]);
    assert_eq!(pipe.engines[0].dte.layer_state(), LayerState::Down);
}

#[test]
fn t21_clears_an_unanswered_call() {
    let mut pipe = pair();
    let lci = pipe.engines[0].dte.call(pipe.now, call_b()).unwrap();
    pipe.settle();
    assert!(pipe.advance(Duration::from_secs(200)));
    assert_eq!(pipe.now, Instant::from_micros(200_000_000));
    let events = pipe.take_events(0);
    assert_eq!(
        events,
        [Event::Cleared {
            lci,
            cause: 0,
            diagnostic: Some(49),
            by_peer: false
        }]
    );
}

#[test]
fn t22_repeats_reset_then_clears_and_t23_gives_up() {
    let mut pipe = pair();
    let lci = pipe.connect(call_b());
    pipe.to[1].hold = true;
    let start = pipe.log.len();
    pipe.engines[0]
        .dte
        .reset(pipe.now, lci, 0, Some(0))
        .unwrap();
    pipe.settle();
    while pipe.advance(Duration::from_secs(1000)) {}
    assert_eq!(
        pipe.sent_names(0, start),
        [
            "RESET REQUEST",
            "RESET REQUEST",
            "CLEAR REQUEST",
            "CLEAR REQUEST"
        ]
    );
    // T22 twice (180 s each), then T23 twice.
    assert_eq!(pipe.now, Instant::from_micros(720_000_000));
    let events = pipe.take_events(0);
    assert_eq!(
        events.last(),
        Some(&Event::Cleared {
            lci,
            cause: 0,
            diagnostic: Some(50),
            by_peer: false
        })
    );
    assert_eq!(pipe.engines[0].dte.channel_state(lci), ChannelState::Ready);
}

#[test]
fn interrupts_are_confirmed_one_at_a_time() {
    let mut pipe = pair();
    let lci = pipe.connect(call_b());
    pipe.engines[0].dte.interrupt(lci, &[0xAB]).unwrap();
    assert!(pipe.engines[0].dte.interrupt(lci, &[1]).is_err());
    pipe.settle();
    assert_eq!(
        pipe.take_events(1),
        [Event::Interrupt {
            lci,
            data: vec![0xAB]
        }]
    );
    assert_eq!(pipe.take_events(0), [Event::InterruptConfirmed { lci }]);
    pipe.engines[0].dte.interrupt(lci, &[2; 32]).unwrap();
    assert!(pipe.engines[0].dte.interrupt(lci, &[]).is_err());
}

#[test]
fn requests_out_of_state_are_refused_with_reasons() {
    let mut pipe = new_pipe(config(Role::Dte, "1"), config(Role::Dce, "2"));
    let err = pipe.engines[0].dte.call(pipe.now, call_b()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the packet layer is Down, not ready (restart first)"
    );
    let mut pipe = pair();
    let lci = pipe.connect(call_b());
    assert!(pipe.engines[0].dte.send(lci, &[1], false, true).is_err());
    assert!(pipe.engines[0]
        .dte
        .send(Lci::new(3), &[1], false, false)
        .is_err());
    assert!(pipe.engines[0].dte.accept(lci).is_err());
}
