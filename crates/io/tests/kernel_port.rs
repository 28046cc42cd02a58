//! Two IP stations whose host is "the kernel" (an [`IpStation`] of a
//! [`DatagramPort`], what `linklab ip ... tun` runs), joined by a KISS
//! wire in virtual time: the kernel's datagrams cross in VC mode; a megabyte
//! of garbage and non-IP frames from the TNC never reach the kernel; a VC
//! link that fails (its peer gone for N2 tries) is reported with its
//! neighbour, and the next datagram sets it up again.

use std::time::Duration;

use linklab_core::{Instant, Stream};
use linklab_io::{AckMode, AirSettings, IpEvent, IpStation};
use linklab_ip::{Ax25Config, Ax25Interface, DatagramPort};
use linklab_link::Config;
use linklab_wire::ax25::{Address, Frame, Pid};
use linklab_wire::kiss::{self, Port};

fn addr(text: &str) -> Address {
    text.parse().unwrap()
}

/// Station `local` at 44.0.0.`n`, its neighbour `peer` at 44.0.0.`m`
/// (static), VC mode, MTU 256, T1 1 s, N2 3.
fn station(local: &str, peer: (&str, u8)) -> IpStation<DatagramPort> {
    let link = Config {
        t1: Duration::from_secs(1),
        t1_min: Duration::from_secs(1),
        n2: 3,
        ..Config::default()
    };
    let mut config = Ax25Config::new(addr(local), 256, link);
    config
        .neighbours
        .push(([44, 0, 0, peer.1].into(), addr(peer.0)));
    let mut station = IpStation::new(
        DatagramPort::new(Ax25Interface::new(config).unwrap()),
        Port::ZERO,
    );
    // Wired KISS to KISS, no TNC: nobody answers ACKMODE, and the frames
    // are on the "air" as soon as they are handed over.
    station.set_air(AirSettings {
        ackmode: AckMode::Off,
        txdelay: Duration::ZERO,
        persistence: 255,
        bit_rate: u32::MAX,
        ..AirSettings::default()
    });
    station
}

/// An IPv4 datagram of `len` octets to 44.0.0.`to`, numbered `tag`.
fn datagram(to: u8, len: usize, tag: u8) -> Vec<u8> {
    let mut d = vec![tag; len];
    d[0] = 0x45;
    d[16..20].copy_from_slice(&[44, 0, 0, to]);
    d
}

/// Moves KISS octets between the two stations until both are quiet,
/// running their timers, up to `until`; frames from `a` are lost while
/// `cut`.
fn run(
    a: &mut IpStation<DatagramPort>,
    b: &mut IpStation<DatagramPort>,
    now: &mut Instant,
    until: Instant,
    cut: bool,
) {
    loop {
        let mut moved = false;
        a.poll(*now);
        b.poll(*now);
        while let Some(bytes) = a.poll_transmit(*now) {
            moved = true;
            if !cut {
                b.handle_kiss_bytes(*now, &bytes);
            }
        }
        while let Some(bytes) = b.poll_transmit(*now) {
            moved = true;
            a.handle_kiss_bytes(*now, &bytes);
        }
        if moved {
            continue;
        }
        let next = [a.poll_timeout(*now), b.poll_timeout(*now)]
            .into_iter()
            .flatten()
            .min();
        match next {
            Some(t) if t <= until => {
                *now = t.max(*now);
                a.handle_timeout(*now);
                b.handle_timeout(*now);
            }
            _ => return,
        }
    }
}

fn received(s: &mut IpStation<DatagramPort>) -> Vec<Vec<u8>> {
    std::iter::from_fn(|| s.host_mut().receive()).collect()
}

#[test]
fn the_kernels_datagrams_cross_and_nothing_else_reaches_it() {
    let mut a = station("N0A", ("N0B", 2));
    let mut b = station("N0B", ("N0A", 1));
    let mut now = Instant::ZERO;
    let sent: Vec<Vec<u8>> = (0..5).map(|i| datagram(2, 256, i)).collect();
    for d in &sent {
        a.host_mut().send(now, d.clone()).unwrap();
    }
    run(
        &mut a,
        &mut b,
        &mut now,
        Instant::from_micros(10_000_000),
        false,
    );
    assert_eq!(received(&mut b), sent);

    // Garbage from the TNC, then frames that carry no IP: a UI frame with
    // PID 0xF0, and an I-frame-sized mess. None of it is a datagram.
    let mut rng = Stream::from_seed(5);
    let garbage: Vec<u8> = (0..1 << 20).map(|_| rng.next_u64() as u8).collect();
    b.handle_kiss_bytes(now, &garbage);
    let text = Frame::ui(
        addr("N0B"),
        addr("N0X"),
        &[],
        Pid::NoLayer3,
        b"not IP".to_vec(),
    )
    .unwrap()
    .encode();
    b.handle_kiss_bytes(now, &kiss::encode(&kiss::Frame::data(text)));
    b.poll(now);
    assert!(received(&mut b).is_empty());
    let mut bad = false;
    while let Some(e) = b.poll_event() {
        bad |= matches!(e, IpEvent::BadInput(_) | IpEvent::BadInputCount(_));
    }
    assert!(bad, "the garbage was reported");
}

#[test]
fn a_failed_link_is_reported_and_the_next_datagram_sets_it_up_again() {
    let mut a = station("N0A", ("N0B", 2));
    let mut b = station("N0B", ("N0A", 1));
    let mut now = Instant::ZERO;
    a.host_mut().send(now, datagram(2, 100, 1)).unwrap();
    run(
        &mut a,
        &mut b,
        &mut now,
        Instant::from_micros(5_000_000),
        false,
    );
    assert_eq!(received(&mut b).len(), 1);
    // B hears nothing from A for a while: A's I frame goes unacknowledged
    // through N2 tries of T1, and the link fails.
    a.host_mut().send(now, datagram(2, 100, 2)).unwrap();
    let later = Instant::from_micros(now.as_micros() + 30_000_000);
    run(&mut a, &mut b, &mut now, later, true);
    let errors = a.host().ax25().link_errors();
    assert!(
        errors.iter().any(|e| e.starts_with("link with N0B failed")),
        "{errors:?}"
    );
    // The next datagram sets the link up again and gets through.
    a.host_mut().send(now, datagram(2, 100, 3)).unwrap();
    let later = Instant::from_micros(now.as_micros() + 10_000_000);
    run(&mut a, &mut b, &mut now, later, false);
    let got = received(&mut b);
    assert_eq!(
        got.last(),
        Some(&datagram(2, 100, 3)),
        "{} datagrams",
        got.len()
    );
}
