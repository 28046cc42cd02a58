//! Deterministic scenarios of the AX.25 v2.2 data link in virtual time.

mod support;

use std::time::Duration;

use linklab_link::{Config, Event, State, Version};
use linklab_wire::control::Modulus;
use support::{Pair, Side};

fn v20() -> Config {
    Config {
        modulus: Modulus::Mod8,
        ..Config::default()
    }
}

#[test]
fn connect_v2_2_transfer_and_disconnect() {
    let mut p = Pair::new(Config::default(), Config::default(), 1);
    p.connect();
    assert_eq!(
        p.events(Side::A),
        &[Event::Connected {
            version: Version::V2_2,
            incoming: false
        }]
    );
    assert_eq!(
        p.events(Side::B),
        &[Event::Connected {
            version: Version::V2_2,
            incoming: true
        }]
    );
    for i in 0..10u8 {
        p.a().send(vec![i; 100]).unwrap();
    }
    assert!(
        p.run_until(Duration::from_secs(60), |p| p.received(Side::B).len() == 10
            && p.links[0].unacked() == 0)
    );
    assert_eq!(
        p.received(Side::B),
        (0..10u8).map(|i| vec![i; 100]).collect::<Vec<_>>()
    );
    let now = p.now;
    p.a().disconnect(now);
    assert!(p.run_until(Duration::from_secs(60), |p| p
        .links
        .iter()
        .all(|l| l.state() == State::Disconnected)));
    println!("{}", p.dump());
}
