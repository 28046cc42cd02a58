//! The router in virtual time, on stores in memory: sessions, transfers
//! and the stop as calls, their commands drained from the router.

use std::time::Duration;

use linklab_core::Instant;
use linklab_dtn::{Agent, Config, Delivery, LinkId, MemoryStore, SendRequest, TransmitId};

use super::{ClientId, Received, Router, SessionUp, FINISH_GRACE, SHUTDOWN_GRACE};
use crate::app::Message;
use crate::cl::{LinkCommand, SessionId};

/// When the tests' calls happen, unless one says otherwise.
const NOW: Instant = Instant::ZERO;

/// A node's router on a store in memory, bundles retried after `retry`.
fn router(node: &str, retry: Duration) -> Router<MemoryStore> {
    let mut config = Config::new(node.parse().unwrap());
    config.retry_after = retry;
    Router::new(Agent::open(config, MemoryStore::default()).unwrap())
}

/// A session with `peer` comes up on `router`.
fn up(router: &mut Router<MemoryStore>, peer: &str, configured: Option<LinkId>) -> SessionId {
    let session = SessionId::next();
    let up = SessionUp {
        peer: peer.into(),
        remote: "test".into(),
        configured,
        mtu: None,
    };
    router.handle_session_up(NOW, session, up).unwrap();
    session
}

/// The router's next command, which must be a Send on `session`.
fn next_send(router: &mut Router<MemoryStore>, session: SessionId) -> (TransmitId, Vec<u8>) {
    match router.poll_link_command() {
        Some((to, LinkCommand::Send { transmit, octets })) if to == session => (transmit, octets),
        other => panic!("expected a Send on {session:?}, got {other:?}"),
    }
}

/// An application on `router`'s node (`ipn:1.0`) sends `payload` to
/// `ipn:2.1`.
fn send(router: &mut Router<MemoryStore>, payload: &[u8]) {
    let request = SendRequest::new(
        "ipn:1.1".parse().unwrap(),
        "ipn:2.1".parse().unwrap(),
        payload.to_vec(),
    );
    router.agent.send(NOW, &request).unwrap();
    router.settle(NOW).unwrap();
}

#[test]
fn a_broken_transfer_resends_only_the_rest_and_the_receiver_delivers_it_whole_once() {
    let mut a = router("ipn:1.0", Duration::ZERO);
    let mut b = router("ipn:2.0", Duration::ZERO);
    b.agent.register("ipn:2.1".parse().unwrap()).unwrap();
    let payload: Vec<u8> = (0..5000u32).map(|i| (i * 7 + i / 256) as u8).collect();

    let a_session = up(&mut a, "ipn:2.0", None);
    let b_session = up(&mut b, "ipn:1.0", None);
    send(&mut a, &payload);
    let (transmit, whole) = next_send(&mut a, a_session);

    // The link drops: b got 3000 octets, a saw 2500 acknowledged.
    let prefix = Received::Prefix(&whole[..3000]);
    b.handle_received(NOW, b_session, prefix)
        .expect("answered once stored");
    a.handle_interrupted(NOW, transmit, 2500).unwrap();
    // Until its Down, the session still carries the link: with no wait
    // before a retry, the rest goes on it at once and is lost with it.
    while a.poll_link_command().is_some() {}
    for (router, session) in [(&mut a, a_session), (&mut b, b_session)] {
        let why = "the link went down".to_string();
        router.handle_session_down(NOW, session, why).unwrap();
    }
    assert!(b.unconfirmed.is_empty(), "a fragment is not delivered");

    // The next contact carries only the rest.
    let a_session = up(&mut a, "ipn:2.0", None);
    let b_session = up(&mut b, "ipn:1.0", None);
    let (transmit, rest) = next_send(&mut a, a_session);
    assert!(rest.len() < whole.len() - 2000, "{} octets", rest.len());
    b.handle_received(NOW, b_session, Received::Bundle(&rest))
        .unwrap();
    a.handle_sent(NOW, transmit, Ok(())).unwrap();
    let deliveries: Vec<&Delivery> = b.unconfirmed.values().map(|(d, _)| d).collect();
    assert_eq!(deliveries.len(), 1);
    assert_eq!(deliveries[0].payload, payload);
    assert_eq!(a.agent.stored(), 0, "the sender keeps nothing");
}

#[test]
fn the_rest_of_a_broken_transfer_asks_for_a_connection_and_goes_when_it_is_up() {
    // A retry after a break would take an hour.
    let mut a = router("ipn:1.0", Duration::from_secs(3600));
    let link = a.add_dialled_link("ipn:2.*".parse().unwrap());
    send(&mut a, &[9; 4000]);
    assert_eq!(a.poll_dial(), Some(link));
    let session = up(&mut a, "ipn:2.0", Some(link));
    let (transmit, whole) = next_send(&mut a, session);

    a.handle_interrupted(NOW, transmit, 2000).unwrap();
    let why = "T1 ran out N2 times".to_string();
    a.handle_session_down(NOW, session, why).unwrap();
    assert_eq!(a.poll_dial(), Some(link), "asked again at once");
    let session = up(&mut a, "ipn:2.0", Some(link));
    let (_, rest) = next_send(&mut a, session);
    assert!(rest.len() < whole.len() - 1000, "{} octets", rest.len());
}

#[test]
fn a_failed_transfer_goes_again_when_a_new_session_comes_up() {
    let mut a = router("ipn:1.0", Duration::from_secs(3600));
    let session = up(&mut a, "ipn:2.0", None);
    send(&mut a, b"again");
    let (transmit, first) = next_send(&mut a, session);
    a.handle_sent(NOW, transmit, Err("refused".into())).unwrap();
    assert!(a.poll_link_command().is_none(), "not on the same session");
    let why = "closed".to_string();
    a.handle_session_down(NOW, session, why).unwrap();
    let session = up(&mut a, "ipn:2.0", None);
    let (_, again) = next_send(&mut a, session);
    // The same bundle (its age block has grown).
    let [first, again] = [first, again].map(|octets| {
        let bundle = linklab_dtn::bundle::decode(&octets).unwrap();
        let payload = linklab_dtn::bundle::payload(&bundle, &octets).to_vec();
        (bundle.id, payload)
    });
    assert_eq!(again, first);
}

#[test]
fn a_stop_waits_for_the_bundles_on_the_wire_keeps_the_unacknowledged_and_dials_no_one() {
    let mut a = router("ipn:1.0", Duration::ZERO);
    let link = a.add_dialled_link("ipn:2.*".parse().unwrap());
    let session = up(&mut a, "ipn:2.0", Some(link));
    send(&mut a, b"acknowledged");
    send(&mut a, b"cut off");
    let (first, _) = next_send(&mut a, session);
    let (second, _) = next_send(&mut a, session);

    a.begin_stop(NOW).unwrap();
    // The driver tells the convergence layers what `is_stopping` says.
    assert!(a.is_stopping(), "the convergence layers are told");
    send(&mut a, b"after the stop");
    assert!(
        a.poll_link_command().is_none(),
        "no Close, no Send: bundles on the wire"
    );
    a.handle_sent(NOW, first, Ok(())).unwrap();
    assert!(
        a.poll_link_command().is_none(),
        "one bundle is still on the wire"
    );

    // The time to finish is up.
    let late = NOW + FINISH_GRACE;
    assert!(a.poll_timeout().is_some_and(|at| at <= late));
    a.handle_timeout(late).unwrap();
    assert!(matches!(
        a.poll_link_command(),
        Some((to, LinkCommand::Close)) if to == session
    ));
    let why = "the AX.25 session ended".to_string();
    a.handle_sent(late, second, Err(why)).unwrap();
    let why = "LocalShutdown".to_string();
    a.handle_session_down(late, session, why).unwrap();
    assert!(a.poll_dial().is_none(), "no connection asked for");
    assert!(a.waiting.is_empty());
    assert_eq!(a.agent.stored(), 2, "kept for the next start");
}

#[test]
fn a_bundle_for_an_idle_ax25_peer_goes_when_the_session_is_up() {
    // A retry after a failure would take an hour.
    let mut a = router("ipn:1.0", Duration::from_secs(3600));
    let link = a.add_dialled_link("ipn:2.*".parse().unwrap());

    send(&mut a, b"hello");
    assert_eq!(a.poll_dial(), Some(link), "a connection is asked for");
    let session = up(&mut a, "ipn:2.0", Some(link));
    let (_, octets) = next_send(&mut a, session);
    assert!(octets.ends_with(&[0xFF]), "a whole encoded bundle");
    assert!(a.waiting.is_empty());
}

#[test]
fn a_session_that_does_not_end_at_a_stop_is_left_after_the_grace_and_the_log_says_so() {
    let mut a = router("ipn:1.0", Duration::ZERO);
    let session = up(&mut a, "ipn:2.0", None);
    send(&mut a, b"never acknowledged");
    next_send(&mut a, session);

    a.begin_stop(NOW).unwrap();
    assert!(a.poll_link_command().is_none(), "a bundle is on the wire");
    a.handle_timeout(NOW + FINISH_GRACE).unwrap();
    assert!(matches!(
        a.poll_link_command(),
        Some((to, LinkCommand::Close)) if to == session
    ));
    assert!(!a.is_finished(), "the session has not ended");
    assert_eq!(a.poll_timeout(), Some(NOW + SHUTDOWN_GRACE));
    a.handle_timeout(NOW + SHUTDOWN_GRACE).unwrap();
    assert!(a.is_finished());
    let log: Vec<String> = std::iter::from_fn(|| a.poll_notice())
        .map(|notice| notice.to_string())
        .collect();
    assert_eq!(
        log.last().map(String::as_str),
        Some("the session with ipn:2.0 (test) did not end within 3s: leaving it"),
        "{log:?}"
    );
}

/// `client`'s next message on `router`, which must be one.
fn next_message(router: &mut Router<MemoryStore>, client: ClientId) -> Message {
    match router.poll_client_message() {
        Some((to, message)) if to == client => message,
        other => panic!("expected a message for {client:?}, got {other:?}"),
    }
}

#[test]
fn an_application_s_bundle_is_delivered_to_the_one_registered_and_confirmed_once() {
    let mut a = router("ipn:1.0", Duration::ZERO);
    let mut b = router("ipn:2.0", Duration::ZERO);
    let (sender, receiver, other) = (ClientId(1), ClientId(2), ClientId(3));
    a.handle_client_opened(NOW, sender).unwrap();
    for client in [receiver, other] {
        b.handle_client_opened(NOW, client).unwrap();
    }
    let register = Message::new("REGISTER").with("endpoint", "ipn:2.1");
    b.handle_client_request(NOW, receiver, &register).unwrap();
    assert_eq!(next_message(&mut b, receiver).verb, "OK");
    b.handle_client_request(NOW, other, &register).unwrap();
    let refused = next_message(&mut b, other);
    assert_eq!(refused.verb, "ERROR", "{refused:?}");

    let a_session = up(&mut a, "ipn:2.0", None);
    let b_session = up(&mut b, "ipn:1.0", None);
    let request = Message::new("SEND")
        .with("dest", "ipn:2.1")
        .with_body(b"hello".to_vec());
    a.handle_client_request(NOW, sender, &request).unwrap();
    assert_eq!(next_message(&mut a, sender).verb, "SENT");
    let (transmit, octets) = next_send(&mut a, a_session);
    b.handle_received(NOW, b_session, Received::Bundle(&octets))
        .unwrap();
    a.handle_sent(NOW, transmit, Ok(())).unwrap();
    assert_eq!(a.watch().forwarded, 1);

    let bundle = next_message(&mut b, receiver);
    assert_eq!(bundle.verb, "BUNDLE", "{bundle:?}");
    assert_eq!(bundle.body, b"hello");
    let delivery = bundle.get("delivery").unwrap().to_string();
    let done = Message::new("DONE").with("delivery", &delivery);
    b.handle_client_request(NOW, other, &done).unwrap();
    assert_eq!(
        next_message(&mut b, other).verb,
        "ERROR",
        "not its delivery"
    );
    b.handle_client_request(NOW, receiver, &done).unwrap();
    assert!(b.poll_client_message().is_none(), "DONE has no answer");
    b.handle_client_request(NOW, receiver, &done).unwrap();
    assert_eq!(next_message(&mut b, receiver).verb, "ERROR", "only once");
    assert_eq!(b.watch().delivered, 1);
}

#[test]
fn a_bundle_waiting_for_its_retry_with_no_link_up_still_ends_with_its_lifetime() {
    let mut a = router("ipn:1.0", Duration::from_secs(10));
    let session = up(&mut a, "ipn:2.0", None);
    let mut request = SendRequest::new(
        "ipn:1.1".parse().unwrap(),
        "ipn:2.1".parse().unwrap(),
        b"short-lived".to_vec(),
    );
    request.lifetime = Duration::from_secs(60);
    a.agent.send(NOW, &request).unwrap();
    a.settle(NOW).unwrap();
    let (transmit, _) = next_send(&mut a, session);
    a.handle_sent(NOW, transmit, Err("refused".into())).unwrap();
    a.handle_session_down(NOW, session, "closed".into())
        .unwrap();

    // Woken as the router asks, as the driver does.
    let end = NOW + Duration::from_secs(61);
    while let Some(at) = a.poll_timeout().filter(|at| *at <= end) {
        a.handle_timeout(at).unwrap();
    }
    assert_eq!(a.stored(), 0, "deleted when its lifetime ended");
}
