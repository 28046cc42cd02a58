//! Where an AXUDP port listens and where it sends: the bind address, the
//! routes to peers by callsign, and the broadcast calls; and their text
//! form, the part of a `KissAddress` after `axudp:`.

use core::fmt;
use core::str::FromStr;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use linklab_wire::ax25::{Address, AddressError};
use thiserror::Error;

/// The syntax, repeated in every parse error.
const SYNTAX: &str = "axudp:BIND@[CALL=]IP:PORT[/b][,...][;broadcast=CALL[,CALL...]]";

/// One route of an AXUDP port: where frames whose next hop is `call` go
/// (a `route` line of ax25ipd.conf).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AxudpPeer {
    /// The next-hop station this route serves. SSID 0 serves every SSID
    /// of the callsign, as in ax25ipd ("ssid of 0 routes all ssid's",
    /// ax25ipd.conf(5); `addrmatch` in ax25ipd/process.c). `None`: the
    /// default route, for next hops no other route serves (ax25ipd's `d`
    /// flag).
    pub call: Option<Address>,
    /// The peer's UDP address.
    pub address: SocketAddr,
    /// Whether frames for a broadcast call ([`AxudpConfig::broadcast`])
    /// also go to this peer (ax25ipd's `b` flag).
    pub broadcast: bool,
}

/// An AXUDP port: the UDP address it binds, its routes, and the calls
/// whose frames go to every broadcast route.
///
/// Its text form is `BIND@PEER[,PEER...][;broadcast=CALL[,CALL...]]`
/// with `BIND` an `IP:PORT` (or a bare `PORT`, on 0.0.0.0) and each
/// `PEER` written `[CALL=]IP:PORT[/b]`: no `CALL=` makes it the default
/// route, `/b` a broadcast route. IPv6 addresses go in brackets
/// (`[::1]:10093`); host names are not resolved.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AxudpConfig {
    /// The local UDP address (port 10093 is ax25ipd's default).
    pub bind: SocketAddr,
    /// The routes, in the order they are tried.
    pub peers: Vec<AxudpPeer>,
    /// Next-hop calls whose frames also go to every peer flagged
    /// [`AxudpPeer::broadcast`] (ax25ipd's `broadcast` line, e.g. QST,
    /// NODES); SSID 0 matches every SSID.
    pub broadcast: Vec<Address>,
}

/// Why text is not an [`AxudpConfig`].
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum AxudpConfigError {
    /// No `@` between the bind address and the peers.
    #[error(
        "AXUDP address {text:?} names no peer: write {SYNTAX}, e.g. axudp:10093@192.0.2.1:10093"
    )]
    NoPeers {
        /// The text given.
        text: String,
    },
    /// The bind address is neither `IP:PORT` nor `PORT`.
    #[error("AXUDP bind address {value:?} is not IP:PORT or PORT (e.g. 0.0.0.0:10093 or 10093; {SYNTAX})")]
    Bind {
        /// The bind text.
        value: String,
    },
    /// A peer's address is not `IP:PORT` with a port in 1-65535.
    #[error("AXUDP peer {value:?} is not [CALL=]IP:PORT[/b] with a port in 1-65535 (e.g. N0CALL=192.0.2.1:10093/b; host names are not resolved)")]
    Peer {
        /// The peer's text.
        value: String,
    },
    /// A peer carries a flag other than `b`.
    #[error("AXUDP peer {value:?} has the unknown flag {flag:?}: the one flag is /b (broadcasts go to this peer)")]
    Flag {
        /// The peer's text.
        value: String,
        /// The flag text.
        flag: String,
    },
    /// A callsign (of a route or in the broadcast list) is not valid.
    #[error("callsign {value:?} in AXUDP address: {source}")]
    Call {
        /// The callsign text.
        value: String,
        /// Why it is not an address.
        source: AddressError,
    },
    /// An option after `;` other than `broadcast=CALL[,CALL...]`.
    #[error("AXUDP option {value:?} is unknown: the one option is ;broadcast=CALL[,CALL...]")]
    Option {
        /// The option's text.
        value: String,
    },
    /// A peer of the other IP version than the bind address.
    #[error("AXUDP peer {peer} cannot be reached from the bind address {bind}: both must be IPv4 or both IPv6")]
    Family {
        /// The peer's address.
        peer: SocketAddr,
        /// The bind address.
        bind: SocketAddr,
    },
    /// Broadcast calls are listed but no peer takes broadcasts, or the
    /// reverse.
    #[error("AXUDP address {text:?} {what}: broadcast calls (;broadcast=QST,NODES) go to the peers flagged /b, so give both or neither")]
    Broadcast {
        /// The text given.
        text: String,
        /// What is missing.
        what: &'static str,
    },
}

impl FromStr for AxudpConfig {
    type Err = AxudpConfigError;

    /// Parses the part of a KISS address after `axudp:`.
    fn from_str(text: &str) -> Result<AxudpConfig, AxudpConfigError> {
        let (main, options) = match text.split_once(';') {
            Some((main, options)) => (main, Some(options)),
            None => (text, None),
        };
        let (bind, peers) = main
            .split_once('@')
            .ok_or_else(|| AxudpConfigError::NoPeers {
                text: text.to_string(),
            })?;
        let bind = parse_bind(bind)?;
        let peers = peers
            .split(',')
            .map(|peer| parse_peer(peer, bind))
            .collect::<Result<Vec<_>, _>>()?;
        let mut broadcast = Vec::new();
        for option in options.into_iter().flat_map(|o| o.split(';')) {
            let calls =
                option
                    .strip_prefix("broadcast=")
                    .ok_or_else(|| AxudpConfigError::Option {
                        value: option.to_string(),
                    })?;
            for call in calls.split(',') {
                broadcast.push(parse_call(call)?);
            }
        }
        let flagged = peers.iter().any(|p| p.broadcast);
        let missing = match (flagged, broadcast.is_empty()) {
            (true, true) => Some("flags a peer /b but lists no broadcast call"),
            (false, false) => Some("lists broadcast calls but flags no peer /b"),
            _ => None,
        };
        if let Some(what) = missing {
            return Err(AxudpConfigError::Broadcast {
                text: text.to_string(),
                what,
            });
        }
        Ok(AxudpConfig {
            bind,
            peers,
            broadcast,
        })
    }
}

fn parse_bind(value: &str) -> Result<SocketAddr, AxudpConfigError> {
    value
        .parse::<SocketAddr>()
        .ok()
        .or_else(|| {
            let port = value.parse::<u16>().ok()?;
            Some(SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), port))
        })
        .ok_or_else(|| AxudpConfigError::Bind {
            value: value.to_string(),
        })
}

fn parse_peer(value: &str, bind: SocketAddr) -> Result<AxudpPeer, AxudpConfigError> {
    let (route, flag) = match value.split_once('/') {
        Some((route, flag)) => (route, Some(flag)),
        None => (value, None),
    };
    let broadcast = match flag {
        None => false,
        Some("b") => true,
        Some(flag) => {
            return Err(AxudpConfigError::Flag {
                value: value.to_string(),
                flag: flag.to_string(),
            })
        }
    };
    let (call, address) = match route.split_once('=') {
        Some((call, address)) => (Some(parse_call(call)?), address),
        None => (None, route),
    };
    let address = address
        .parse::<SocketAddr>()
        .ok()
        .filter(|a| a.port() != 0)
        .ok_or_else(|| AxudpConfigError::Peer {
            value: value.to_string(),
        })?;
    if address.is_ipv4() != bind.is_ipv4() {
        return Err(AxudpConfigError::Family {
            peer: address,
            bind,
        });
    }
    Ok(AxudpPeer {
        call,
        address,
        broadcast,
    })
}

fn parse_call(value: &str) -> Result<Address, AxudpConfigError> {
    value
        .parse::<Address>()
        .map_err(|source| AxudpConfigError::Call {
            value: value.to_string(),
            source,
        })
}

impl fmt::Display for AxudpPeer {
    /// `[CALL=]IP:PORT[/b]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(call) = &self.call {
            write!(f, "{call}=")?;
        }
        write!(f, "{}", self.address)?;
        if self.broadcast {
            f.write_str("/b")?;
        }
        Ok(())
    }
}

impl fmt::Display for AxudpConfig {
    /// The form [`FromStr`] reads: `BIND@PEER[,...][;broadcast=CALL[,...]]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@", self.bind)?;
        for (i, peer) in self.peers.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{peer}")?;
        }
        for (i, call) in self.broadcast.iter().enumerate() {
            f.write_str(if i == 0 { ";broadcast=" } else { "," })?;
            write!(f, "{call}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> AxudpConfig {
        text.parse().unwrap()
    }

    #[test]
    fn one_default_peer() {
        let config = parse("10093@127.0.0.1:10094");
        assert_eq!(config.bind, "0.0.0.0:10093".parse().unwrap());
        assert_eq!(
            config.peers,
            vec![AxudpPeer {
                call: None,
                address: "127.0.0.1:10094".parse().unwrap(),
                broadcast: false
            }]
        );
        assert!(config.broadcast.is_empty());
        assert_eq!(config.to_string(), "0.0.0.0:10093@127.0.0.1:10094");
    }

    #[test]
    fn routes_flags_and_broadcast_calls_round_trip() {
        let text = "127.0.0.1:10093@N0CALL=192.0.2.1:10093/b,N0CALL-7=192.0.2.2:93,192.0.2.3:10093;broadcast=QST,NODES";
        let config = parse(text);
        assert_eq!(config.peers.len(), 3);
        assert_eq!(config.peers[0].call, Some("N0CALL".parse().unwrap()));
        assert!(config.peers[0].broadcast);
        assert_eq!(config.peers[1].call, Some("N0CALL-7".parse().unwrap()));
        assert!(!config.peers[1].broadcast);
        assert_eq!(config.peers[2].call, None);
        assert_eq!(config.broadcast.len(), 2);
        assert_eq!(config.to_string(), text);
        assert_eq!(parse(&config.to_string()), config);
        let v6 = parse("[::]:10093@[::1]:10094");
        assert_eq!(v6.to_string(), "[::]:10093@[::1]:10094");
        assert_eq!(parse(&v6.to_string()), v6);
    }

    #[test]
    fn errors_say_what_to_write() {
        let err = |text: &str| text.parse::<AxudpConfig>().unwrap_err().to_string();
        assert_eq!(
            err("10093"),
            format!("AXUDP address \"10093\" names no peer: write {SYNTAX}, e.g. axudp:10093@192.0.2.1:10093")
        );
        assert_eq!(
            err("host:1@127.0.0.1:2"),
            format!("AXUDP bind address \"host:1\" is not IP:PORT or PORT (e.g. 0.0.0.0:10093 or 10093; {SYNTAX})")
        );
        assert_eq!(
            err("1@localhost:2"),
            "AXUDP peer \"localhost:2\" is not [CALL=]IP:PORT[/b] with a port in 1-65535 (e.g. N0CALL=192.0.2.1:10093/b; host names are not resolved)"
        );
        assert!(err("1@127.0.0.1:0").starts_with("AXUDP peer \"127.0.0.1:0\" is not"));
        assert!(err("1@127.0.0.1:2,").starts_with("AXUDP peer \"\" is not"));
        assert_eq!(
            err("1@127.0.0.1:2/d"),
            "AXUDP peer \"127.0.0.1:2/d\" has the unknown flag \"d\": the one flag is /b (broadcasts go to this peer)"
        );
        assert!(err("1@N0-CALL=127.0.0.1:2").starts_with("callsign \"N0-CALL\" in AXUDP address: "));
        assert_eq!(
            err("1@127.0.0.1:2/b;bcast=QST"),
            "AXUDP option \"bcast=QST\" is unknown: the one option is ;broadcast=CALL[,CALL...]"
        );
        assert_eq!(
            err("1@[::1]:2"),
            "AXUDP peer [::1]:2 cannot be reached from the bind address 0.0.0.0:1: both must be IPv4 or both IPv6"
        );
        assert_eq!(
            err("1@127.0.0.1:2/b"),
            "AXUDP address \"1@127.0.0.1:2/b\" flags a peer /b but lists no broadcast call: broadcast calls (;broadcast=QST,NODES) go to the peers flagged /b, so give both or neither"
        );
        assert!(err("1@127.0.0.1:2;broadcast=QST")
            .contains("lists broadcast calls but flags no peer /b"));
    }
}
