//! The probe's fit recovers the hidden values of a link it measured:
//! here a virtual one (the same replica the fit uses, with values the
//! fit is not told); `tests/cli_probe.rs` does it over `linklab channel`
//! in real time.

use core::time::Duration;

use linklab_advise::probe::replica::{run, Replica};
use linklab_advise::probe::{fit, local_station, plan, Known, ProbeConfig};
use linklab_channel::TncConfig;
use linklab_core::Streams;

fn known() -> Known {
    let station = local_station(Duration::from_millis(10));
    Known {
        bit_rate: 9600,
        serial_bps: 9600,
        local: station,
        peer: station,
        per_octet: Duration::ZERO,
        buffer_octets: 8192,
        carrier_hold: Duration::ZERO,
        peer_latency: Duration::ZERO,
        peer_window: 4,
    }
}

fn config(repeat: usize) -> ProbeConfig {
    ProbeConfig {
        local: "N0CALL-1".parse().unwrap(),
        remote: "N0CALL-2".parse().unwrap(),
        via: Vec::new(),
        plan: plan(256, repeat, 0),
        response_time: Duration::from_secs(5),
        tries: 5,
        pause: Duration::from_millis(500),
    }
}

fn hidden(txdelay_ms: u64, per_frame_ms: u64, ber: f64) -> Replica {
    let k = known();
    let d = Duration::from_millis(txdelay_ms);
    Replica {
        bit_rate: k.bit_rate,
        local: linklab_channel::StationConfig {
            txdelay: d,
            ..k.local
        },
        peer: linklab_channel::StationConfig {
            txdelay: d,
            ..k.peer
        },
        tnc: TncConfig {
            serial_rate: k.serial_bps,
            per_frame: Duration::from_millis(per_frame_ms),
            per_octet: Duration::ZERO,
            tx_buffer_octets: 8192,
        },
        carrier_hold: Duration::ZERO,
        peer_latency: Duration::ZERO,
        peer_t2: Duration::from_millis(1500),
        peer_window: 4,
        ber,
    }
}

fn within(what: &str, got: f64, want: f64, share: f64) {
    assert!(
        (got - want).abs() <= share * want,
        "{what}: fitted {got}, hidden {want}"
    );
}

#[test]
fn a_clean_link_s_txdelay_and_tnc_time_are_recovered() {
    let samples = run(&hidden(200, 60, 0.0), &config(3), &Streams::new(9)).unwrap();
    let f = fit(&known(), &config(3), &samples).unwrap();
    within("TXDELAY", f.txdelay_ms, 200.0, 0.1);
    within("TNC per frame", f.tnc_per_frame_ms, 60.0, 0.1);
    assert!(f.per_frame_resolved);
    assert_eq!(f.ber, 0.0);
    assert!(f.ber_high > 0.0 && f.ber_high < 1e-4, "{f:?}");
    within("peer's T2", f.peer_ack_delay_ms.unwrap(), 1500.0, 0.1);
}

#[test]
fn loss_is_recovered_from_the_windows_that_did_not_get_through() {
    // 60 rounds: 900 I frames, 104 of them found lost.
    let samples = run(&hidden(150, 40, 2e-4), &config(60), &Streams::new(3)).unwrap();
    let f = fit(&known(), &config(60), &samples).unwrap();
    within("BER", f.ber, 2e-4, 0.1);
    assert!(f.ber_low < 2e-4 && 2e-4 < f.ber_high, "{f:?}");
    within("TXDELAY", f.txdelay_ms, 150.0, 0.1);
    assert!(f.frames_lost > 0);
}
