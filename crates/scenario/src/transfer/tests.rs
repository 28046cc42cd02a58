//! The transfer testbed, end to end through [`run_transfer`].

use super::*;
use core::time::Duration;
use linklab_channel::{StationConfig, TncConfig};
use linklab_link::{AckPolicy, Config};

#[test]
fn a_transfer_is_repeatable_and_acknowledged_once_per_window() {
    let config = TransferConfig::ronan_table_1(9600, 4);
    let streams = Streams::new(7).replication(0);
    let a = run_transfer(&config, &streams).expect("transfer completes");
    let b = run_transfer(&config, &streams).expect("transfer completes");
    assert_eq!(a, b);
    assert_eq!(a.sender_frames, 29);
    assert_eq!(a.receiver_frames, 8);
    assert_eq!(a.transmissions, 16);
    assert_eq!(a.radio.collisions, 0);
    assert_eq!(a.t1_expiries, 0);
    assert!(a.keyed < a.transfer);
}

#[test]
fn through_a_digipeater_every_frame_is_on_the_air_twice() {
    let direct = TransferConfig::ronan_table_1(9600, 4);
    let via = TransferConfig {
        digipeater: Some(StationConfig::ronan_table_1()),
        ..direct
    };
    let streams = Streams::new(7).replication(0);
    let a = run_transfer(&direct, &streams).expect("transfer completes");
    let b = run_transfer(&via, &streams).expect("transfer completes");
    // The ends do not hear each other: nothing collides, nothing is
    // retransmitted, and the digipeater sends what they send.
    assert_eq!(b.radio.collisions, 0);
    assert_eq!(b.t1_expiries, 0);
    assert_eq!(
        (b.sender_frames, b.receiver_frames),
        (a.sender_frames, a.receiver_frames)
    );
    assert_eq!(b.radio.frames_sent, 2 * a.radio.frames_sent);
    assert_eq!(
        b.digipeater,
        Some(Relayed {
            repeated: a.radio.frames_sent,
            lost: 0
        })
    );
    // Each window and each acknowledgement crosses the channel twice,
    // with a TXDELAY more each time.
    let ratio = b.transfer.as_secs_f64() / a.transfer.as_secs_f64();
    assert!((1.8..2.2).contains(&ratio), "{ratio}");
}

#[test]
fn the_session_clock_adds_the_link_s_set_up_and_release() {
    let offer = TransferConfig::ronan_table_1(9600, 4);
    let session = TransferConfig {
        clock: Clock::Session,
        ..offer
    };
    let streams = Streams::new(7).replication(0);
    let a = run_transfer(&offer, &streams).expect("transfer completes");
    let b = run_transfer(&session, &streams).expect("transfer completes");
    // Four more transmissions, SABM, UA, DISC and UA, each a TXDELAY,
    // one frame of 15 octets and a TXTAIL, and a channel access.
    let one = Duration::from_millis(150 + 20) + Duration::from_micros(15 * 8 * 104);
    let extra = b.transfer.saturating_sub(a.transfer);
    assert!(
        extra > 4 * one && extra < 4 * one + 4 * Duration::from_millis(200),
        "{extra:?}"
    );
    // The message itself goes the same way.
    assert_eq!(b.sender_frames, a.sender_frames);
    assert_eq!(b.receiver_frames, a.receiver_frames);
}

#[test]
fn replication_stations_draw_the_slot_phases_from_the_replication_s_streams() {
    let config = TransferConfig::ronan_table_1(9600, 7);
    let master = Streams::new(0x4c49_4e4b);
    let streams = master.replication(3);
    let stations = replication_stations(&config, &streams);

    // Sender first, then receiver, from the stream `slot-phase`, below
    // the 20 ms slot; everything else is Table I.
    let mut phases = streams.stream("slot-phase");
    for station in stations {
        assert_eq!(
            station.slot_phase,
            Duration::from_micros(phases.below(20_000))
        );
        assert_eq!(
            StationConfig {
                slot_phase: Duration::ZERO,
                ..station
            },
            StationConfig::ronan_table_1()
        );
    }
    assert_ne!(stations[0].slot_phase, stations[1].slot_phase);

    // The same streams give the same stations (as Testbed::new draws
    // them); another replication or another master seed does not.
    assert_eq!(replication_stations(&config, &streams), stations);
    assert_eq!(
        replication_stations(&config, &Streams::new(streams.master_seed())),
        stations
    );
    assert_ne!(
        replication_stations(&config, &master.replication(4)),
        stations
    );
    assert_ne!(
        replication_stations(&config, &Streams::new(1).replication(3)),
        stations
    );
    // The window and bit rate do not enter the draw.
    assert_eq!(
        replication_stations(&TransferConfig::ronan_table_1(1200, 1), &streams),
        stations
    );
}

/// 16 KiB at 1200 bit/s, window 4, N1 256, Dire Wolf's TXDELAY and
/// TXTAIL and the KISS defaults P 63, SLOTTIME 100 ms; `stack` on the
/// radio directly, or behind a host and KISS TNC with `kiss`.
fn at_1200(stack: StackConfig, kiss: bool) -> TransferConfig {
    TransferConfig {
        bit_rate: 1200,
        station: StationConfig {
            persistence: 63,
            slot_time: Duration::from_millis(100),
            txdelay: Duration::from_millis(300),
            txtail: Duration::from_millis(100),
            slot_phase: Duration::ZERO,
        },
        window: 4,
        n1: 256,
        message_octets: 16_384,
        stack,
        path: kiss.then_some(KissPath {
            host: HostConfig {
                latency: Duration::from_millis(10),
            },
            tnc: TncConfig {
                serial_rate: 9600,
                per_frame: Duration::from_millis(10),
                per_octet: Duration::ZERO,
                tx_buffer_octets: 8192,
            },
            carrier_hold: Duration::from_millis(50),
        }),
        ..TransferConfig::ronan_table_1(1200, 4)
    }
}

#[test]
fn dire_wolf_s_engine_on_its_modem_keeps_frack_3_s_through_long_windows() {
    // Four 256-octet frames take 7.4 s on the air, FRACK is 3 s: T1
    // paused while the channel is busy never expires, and the
    // receiver, which has no T2, answers each window once, when it
    // gets the channel.
    let config = at_1200(StackConfig::direwolf(Duration::from_secs(3)), false);
    for r in 0..5 {
        let o =
            run_transfer(&config, &Streams::new(11).replication(r)).expect("transfer completes");
        eprintln!(
            "{r}: {:?} exp {} s {} r {} coll {}",
            o.transfer, o.t1_expiries, o.sender_frames, o.receiver_frames, o.radio.collisions
        );
        assert_eq!(o.t1_expiries, 0, "replication {r}");
        assert_eq!(o.sender_frames, 64, "replication {r}");
        assert_eq!(o.receiver_frames, 16, "replication {r}");
    }
}

#[test]
fn linklab_behind_a_kiss_tnc_holds_t1_until_its_frames_have_left_the_air() {
    // The same windows with an initial T1 of 3 s behind a KISS TNC:
    // linklab's stack (T1 held until its frames are sent) completes
    // every run; the Linux kernel's (T1 from the hand-over) times out
    // every window, or gives the link up.
    let linklab = |t2| {
        StackConfig::linklab(
            Duration::from_secs(3),
            Duration::from_secs(t2),
            AckPolicy::WindowOrT2,
            true,
        )
    };
    let linux = StackConfig {
        t1_adaptive: true,
        ..StackConfig::linux(Duration::from_secs(3))
    };
    let (mut linklab_expiries, mut slow_t2_expiries) = (0, 0);
    for r in 0..4 {
        let streams = Streams::new(11).replication(r);
        // send's T2, 1 s, is shorter than a 256-octet frame's 1.9 s on
        // the air: the receiver acknowledges every frame, and the RRs
        // of one transmission give T1 short samples.
        let o = run_transfer(&at_1200(linklab(1), true), &streams).expect("completes");
        linklab_expiries += o.t1_expiries;
        let o = run_transfer(&at_1200(linklab(2), true), &streams).expect("completes");
        assert_eq!(o.receiver_frames, 16 + o.t1_expiries, "{o:?}");
        slow_t2_expiries += o.t1_expiries;
        match run_transfer(&at_1200(linux, true), &streams) {
            Ok(o) => assert!(o.t1_expiries >= 16, "{o:?}"),
            Err(e) => assert!(matches!(e, TransferError::LinkFailed { .. }), "{e}"),
        }
    }
    assert!(slow_t2_expiries <= 2, "{slow_t2_expiries}");
    assert!(linklab_expiries < 16, "{linklab_expiries}");
}

#[test]
fn the_papers_stacks_keep_the_engine_s_defaults() {
    // Model and Linux stacks: only what they set differs from
    // Config::default(), as before the linklab and Dire Wolf knobs.
    let c = TransferConfig::ronan_table_1(1200, 4).link_config();
    let d = Config::default();
    assert_eq!(
        (
            c.t1_min,
            c.t1_max,
            c.srt_first_sample,
            c.poll_holds_new_frames,
            c.reject_again_after_go_back
        ),
        (
            d.t1_min,
            d.t1_max,
            d.srt_first_sample,
            d.poll_holds_new_frames,
            d.reject_again_after_go_back
        )
    );
}

#[test]
fn a_bad_window_is_refused_with_the_engine_s_message() {
    let config = TransferConfig {
        window: 8,
        ..TransferConfig::ronan_table_1(1200, 1)
    };
    let err = run_transfer(&config, &Streams::new(1)).unwrap_err();
    assert!(err.to_string().contains("window k = 8"), "{err}");
}
