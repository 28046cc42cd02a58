//! The sans-IO core of an AXUDP port: which peers an outgoing frame goes
//! to, which received datagrams become frames, and the counts of both.
//! No sockets and no clock here (docs/architecture.md, "the one rule"); the
//! tokio side is [`super::port`].

use std::net::SocketAddr;

use linklab_wire::ax25::{Address, AddressError};
use linklab_wire::axudp::{self, AxudpError, MIN_FRAME_LEN};
use thiserror::Error;

use super::config::AxudpConfig;

/// What an AXUDP port has counted since it opened.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AxudpCounters {
    /// Datagrams received, good or not.
    pub datagrams_in: u64,
    /// Datagrams sent: one per peer a frame went to.
    pub datagrams_out: u64,
    /// Received datagrams dropped as shorter than an AX.25 frame and its
    /// FCS.
    pub too_short: u64,
    /// Received datagrams dropped for a wrong FCS.
    pub bad_fcs: u64,
    /// Frames to send dropped: too short, no address field, or no route.
    pub unroutable: u64,
    /// Datagrams the socket would not send.
    pub send_errors: u64,
}

/// A frame ready to go: the datagram, and the peers to send it to, each
/// once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outgoing {
    /// The frame followed by its FCS ([`axudp::encode`]).
    pub datagram: Vec<u8>,
    /// The peers, in route order, without repeats.
    pub peers: Vec<SocketAddr>,
}

/// Why a frame cannot be sent.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RouteError {
    /// Shorter than two addresses and a control field.
    #[error("frame of {len} octets not sent by AXUDP: at least {MIN_FRAME_LEN} expected (two addresses, control)")]
    TooShort {
        /// The frame's length.
        len: usize,
    },
    /// The address field does not decode, so there is no next hop.
    #[error("frame not sent by AXUDP: {0}")]
    Address(#[from] AddressError),
    /// No route serves the next hop, it is no broadcast call, and there is
    /// no default route.
    #[error("frame for {next_hop} not sent by AXUDP: no peer serves that call and there is no default peer")]
    NoRoute {
        /// The station the frame was for next.
        next_hop: Address,
    },
}

/// Whether the route or broadcast call `route` serves the station `call`:
/// the same callsign, and the same SSID unless the route's is 0, which
/// serves them all (ax25ipd/process.c, `addrmatch`). C/H and reserved
/// bits play no part.
pub fn call_serves(route: &Address, call: &Address) -> bool {
    route.callsign() == call.callsign() && (route.ssid() == 0 || route.ssid() == call.ssid())
}

/// Routes frames out of an AXUDP port and checks datagrams into it, as
/// ax25ipd does in its `tnc` mode (ax25ipd/process.c, `from_kiss` and
/// `from_ip`):
///
/// - an outgoing frame goes to the first route whose call serves its next
///   hop ([`axudp::next_hop`]: the first digipeater not yet repeated,
///   else the destination), else to the default route; and when the next
///   hop is a broadcast call, also to every broadcast route (ax25ipd's
///   `send_broadcast`, routing.c). ax25ipd sends a frame twice to a
///   broadcast route that is also its route; this sends it once. ax25ipd
///   takes its last `d` route as the default; this takes the first
///   peer without a call.
/// - a received datagram is taken from any address, and becomes a frame
///   if [`axudp::decode`] accepts it. ax25ipd also learns from received
///   frames (routing.c, `route_process`): a route to 0.0.0.0 flagged `l`
///   takes the sender's address, and a source call it has no route for,
///   heard from a route's address, is sent there afterwards. This learns
///   nothing: every route is configured.
#[derive(Debug, Clone)]
pub struct AxudpRouter {
    config: AxudpConfig,
    counters: AxudpCounters,
}

impl AxudpRouter {
    /// A router for the port `config` describes, its counters at zero.
    pub fn new(config: AxudpConfig) -> AxudpRouter {
        AxudpRouter {
            config,
            counters: AxudpCounters::default(),
        }
    }

    /// The configuration it routes by.
    pub fn config(&self) -> &AxudpConfig {
        &self.config
    }

    /// The counts so far.
    pub fn counters(&self) -> AxudpCounters {
        self.counters
    }

    /// The datagram for `frame` (an AX.25 frame without FCS, as KISS
    /// carries it) and the peers it goes to; counted as sent to each, or
    /// as unroutable.
    pub fn route(&mut self, frame: &[u8]) -> Result<Outgoing, RouteError> {
        match self.peers_for(frame) {
            Ok(peers) => {
                let sent = u64::try_from(peers.len()).unwrap_or(u64::MAX);
                self.counters.datagrams_out = self.counters.datagrams_out.saturating_add(sent);
                Ok(Outgoing {
                    datagram: axudp::encode(frame),
                    peers,
                })
            }
            Err(e) => {
                self.counters.unroutable = self.counters.unroutable.saturating_add(1);
                Err(e)
            }
        }
    }

    fn peers_for(&self, frame: &[u8]) -> Result<Vec<SocketAddr>, RouteError> {
        if frame.len() < MIN_FRAME_LEN {
            return Err(RouteError::TooShort { len: frame.len() });
        }
        let next_hop = axudp::next_hop(frame)?;
        let peers = &self.config.peers;
        let routed = peers
            .iter()
            .find(|p| p.call.as_ref().is_some_and(|c| call_serves(c, &next_hop)))
            .or_else(|| peers.iter().find(|p| p.call.is_none()));
        let mut out: Vec<SocketAddr> = routed.map(|p| p.address).into_iter().collect();
        if self
            .config
            .broadcast
            .iter()
            .any(|b| call_serves(b, &next_hop))
        {
            for peer in peers.iter().filter(|p| p.broadcast) {
                if !out.contains(&peer.address) {
                    out.push(peer.address);
                }
            }
        }
        if out.is_empty() {
            Err(RouteError::NoRoute { next_hop })
        } else {
            Ok(out)
        }
    }

    /// The frame a received datagram carries, FCS removed; counted as
    /// received, and if refused as too short or with a bad FCS.
    pub fn receive<'a>(&mut self, datagram: &'a [u8]) -> Result<&'a [u8], AxudpError> {
        self.counters.datagrams_in = self.counters.datagrams_in.saturating_add(1);
        let decoded = axudp::decode(datagram);
        match decoded {
            Ok(_) => {}
            Err(AxudpError::TooShort { .. }) => {
                self.counters.too_short = self.counters.too_short.saturating_add(1)
            }
            Err(AxudpError::BadFcs { .. }) => {
                self.counters.bad_fcs = self.counters.bad_fcs.saturating_add(1)
            }
        }
        decoded
    }

    /// Counts a datagram the socket would not send.
    pub fn send_failed(&mut self) {
        self.counters.send_errors = self.counters.send_errors.saturating_add(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use linklab_wire::ax25::{AddressField, CommandResponse};

    fn address(text: &str) -> Address {
        text.parse().unwrap()
    }

    fn socket(text: &str) -> SocketAddr {
        text.parse().unwrap()
    }

    /// A UI frame from N0CALL-1 to `dest` via `via`; a `*` after a
    /// digipeater sets its H bit.
    fn frame(dest: &str, via: &[&str]) -> Vec<u8> {
        let via: Vec<Address> = via
            .iter()
            .map(|v| {
                let mut a = address(v.trim_end_matches('*'));
                a.set_c_or_h(v.ends_with('*'));
                a
            })
            .collect();
        let field = AddressField::new(
            address(dest),
            address("N0CALL-1"),
            &via,
            CommandResponse::Command,
        )
        .unwrap();
        let mut out = Vec::new();
        field.encode_into(&mut out);
        out.extend_from_slice(&[0x03, 0xF0, b'x']);
        out
    }

    fn router(text: &str) -> AxudpRouter {
        AxudpRouter::new(text.parse().unwrap())
    }

    fn peers(router: &mut AxudpRouter, dest: &str, via: &[&str]) -> Vec<SocketAddr> {
        router
            .route(&frame(dest, via))
            .map(|o| o.peers)
            .unwrap_or_default()
    }

    #[test]
    fn ssid_zero_serves_every_ssid() {
        let route = address("N0CALL");
        assert!(call_serves(&route, &address("N0CALL-7")));
        assert!(call_serves(&route, &address("N0CALL")));
        let seven = address("N0CALL-7");
        assert!(call_serves(&seven, &address("N0CALL-7")));
        assert!(!call_serves(&seven, &address("N0CALL-8")));
        assert!(!call_serves(&seven, &address("N0CALL")));
        assert!(!call_serves(&route, &address("N0CALM")));
    }

    #[test]
    fn routes_by_next_hop_then_default() {
        let mut r = router("1@N0CALL-2=10.0.0.2:1,RELAY=10.0.0.3:1,10.0.0.9:1");
        assert_eq!(peers(&mut r, "N0CALL-2", &[]), vec![socket("10.0.0.2:1")]);
        // The first digipeater not yet repeated is the next hop.
        assert_eq!(
            peers(&mut r, "N0CALL-2", &["RELAY-5"]),
            vec![socket("10.0.0.3:1")]
        );
        assert_eq!(
            peers(&mut r, "N0CALL-2", &["RELAY*"]),
            vec![socket("10.0.0.2:1")]
        );
        assert_eq!(
            peers(&mut r, "OTHER", &["RELAY*", "FAR"]),
            vec![socket("10.0.0.9:1")]
        );
        // An SSID other than the route's goes by default.
        assert_eq!(peers(&mut r, "N0CALL-3", &[]), vec![socket("10.0.0.9:1")]);
        assert_eq!(r.counters().datagrams_out, 5);
        assert_eq!(r.counters().unroutable, 0);
    }

    #[test]
    fn the_first_matching_route_wins() {
        let mut r = router("1@N0CALL=10.0.0.1:1,N0CALL-2=10.0.0.2:1");
        assert_eq!(peers(&mut r, "N0CALL-2", &[]), vec![socket("10.0.0.1:1")]);
    }

    #[test]
    fn broadcast_calls_go_to_every_broadcast_peer_once() {
        let mut r = router(
            "1@N0CALL-2=10.0.0.2:1/b,N0CALL-3=10.0.0.3:1,N0CALL-4=10.0.0.4:1/b;broadcast=QST,NODES",
        );
        assert_eq!(
            peers(&mut r, "QST", &[]),
            vec![socket("10.0.0.2:1"), socket("10.0.0.4:1")]
        );
        assert_eq!(
            peers(&mut r, "NODES-1", &[]),
            vec![socket("10.0.0.2:1"), socket("10.0.0.4:1")]
        );
        // Not a broadcast call, and no default: nowhere.
        assert_eq!(
            r.route(&frame("ID", &[])),
            Err(RouteError::NoRoute {
                next_hop: {
                    let mut a = address("ID");
                    a.set_c_or_h(true);
                    a
                }
            })
        );
        assert_eq!(r.counters().unroutable, 1);
        assert_eq!(r.counters().datagrams_out, 4);
        // A broadcast call with a route of its own goes there as well.
        let mut r = router("1@QST=10.0.0.7:1,10.0.0.2:1/b;broadcast=QST");
        assert_eq!(
            peers(&mut r, "QST", &[]),
            vec![socket("10.0.0.7:1"), socket("10.0.0.2:1")]
        );
        let mut r = router("1@10.0.0.2:1/b;broadcast=QST");
        assert_eq!(peers(&mut r, "QST", &[]), vec![socket("10.0.0.2:1")]);
    }

    #[test]
    fn bad_frames_are_unroutable() {
        let mut r = router("1@10.0.0.2:1");
        assert_eq!(r.route(&[0x40; 14]), Err(RouteError::TooShort { len: 14 }));
        assert!(matches!(r.route(&[0xFF; 20]), Err(RouteError::Address(_))));
        assert_eq!(r.counters().unroutable, 2);
        assert_eq!(
            RouteError::TooShort { len: 3 }.to_string(),
            "frame of 3 octets not sent by AXUDP: at least 15 expected (two addresses, control)"
        );
    }

    #[test]
    fn received_datagrams_are_checked_and_counted() {
        let mut r = router("1@10.0.0.2:1");
        let f = frame("N0CALL-2", &[]);
        let out = r.route(&f).unwrap();
        assert_eq!(out.datagram, axudp::encode(&f));
        assert_eq!(r.receive(&out.datagram), Ok(f.as_slice()));
        let mut bad = out.datagram.clone();
        bad[0] ^= 0x02;
        assert!(matches!(r.receive(&bad), Err(AxudpError::BadFcs { .. })));
        assert!(matches!(
            r.receive(&[1, 2, 3]),
            Err(AxudpError::TooShort { len: 3 })
        ));
        r.send_failed();
        assert_eq!(
            r.counters(),
            AxudpCounters {
                datagrams_in: 3,
                datagrams_out: 1,
                too_short: 1,
                bad_fcs: 1,
                unroutable: 0,
                send_errors: 1,
            }
        );
    }
}
