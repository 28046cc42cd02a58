//! The station tells a sender feeding a link from a stream when to give
//! more: `Station::notify_unsent` asks for one `StationEvent::Unsent` at a
//! low-water mark, in virtual time on the test hub.

mod hub;

use std::time::Duration;

use hub::{addr, Hub};
use linklab_io::StationEvent;
use linklab_link::Config;

fn unsent_reports(hub: &Hub) -> Vec<usize> {
    hub.events[0]
        .iter()
        .filter_map(|e| match e {
            StationEvent::Unsent { octets, .. } => Some(*octets),
            _ => None,
        })
        .collect()
}

/// Ten 256-octet data units queued: the unsent octets are counted, the
/// mark is reported once when the queue falls to it (not before), a mark
/// already reached is reported at once, and `Outstanding` counts the
/// data units accepted.
#[test]
fn unsent_octets_are_reported_once_at_the_mark() {
    let config = Config {
        n1: 256,
        window_mod8: 2,
        window_mod128: 2,
        ..Config::default()
    };
    let mut hub = Hub::new(&[
        ("N0CALL-1", config.clone(), false),
        ("N0CALL-2", config, true),
    ]);
    let b = addr("N0CALL-2");
    hub.connect(0, &b);
    for _ in 0..10 {
        hub.stations[0].send(&b, vec![0x55; 256]).unwrap();
    }
    assert_eq!(hub.stations[0].unsent_octets(&b), Some(2560));
    assert_eq!(hub.stations[0].unsent_octets(&addr("N0CALL-9")), None);
    hub.stations[0].notify_unsent(&b, 1024).unwrap();
    hub.drain();
    // The first window (2 frames) has gone: 2048 octets left, over the mark.
    assert_eq!(unsent_reports(&hub), Vec::<usize>::new(), "{}", hub.dump());
    let reported = hub.run_until(Duration::from_secs(60), |h| !unsent_reports(h).is_empty());
    assert!(reported, "no report at the mark:\n{}", hub.dump());
    assert_eq!(unsent_reports(&hub), vec![1024], "{}", hub.dump());
    // Once only: the queue drains further without another report.
    let drained = hub.run_until(Duration::from_secs(60), |h| h.idle_connected(0, &b));
    assert!(drained, "not all acknowledged:\n{}", hub.dump());
    assert_eq!(unsent_reports(&hub), vec![1024]);
    // A mark already reached is reported at once.
    hub.stations[0].notify_unsent(&b, 0).unwrap();
    hub.drain();
    assert_eq!(unsent_reports(&hub), vec![1024, 0]);
    let last = hub.events[0].iter().rev().find_map(|e| match e {
        StationEvent::Outstanding {
            frames, accepted, ..
        } => Some((*frames, *accepted)),
        _ => None,
    });
    assert_eq!(last, Some((0, 10)));
}
