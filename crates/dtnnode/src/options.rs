//! What the node is told on its command line: peers, routes and where
//! applications reach it, each read from text with a clear error.

use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::str::FromStr;

use linklab_dtn::{Eid, EidPattern};
use linklab_io::{AirSettings, KissAddress, KissParams};
/// How the NORM convergence layer chooses its rate.
pub use linklab_normcl::Rate as NormRate;
use linklab_wire::ax25::Address;

/// A neighbour the node connects to: `tcpcl:HOST:PORT`, optionally
/// `=PATTERN` for the destinations routed to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerSpec {
    /// `HOST:PORT` of its TCPCL listener.
    pub address: String,
    /// Bundles for these endpoints go to this peer.
    pub pattern: Option<EidPattern>,
}

impl FromStr for PeerSpec {
    type Err = String;

    fn from_str(text: &str) -> Result<PeerSpec, String> {
        let (address, pattern) = match text.split_once('=') {
            Some((address, pattern)) => (address, Some(pattern)),
            None => (text, None),
        };
        let Some(address) = address.strip_prefix("tcpcl:") else {
            return Err(format!(
                "peer {text:?}: use tcpcl:HOST:PORT or tcpcl:HOST:PORT=PATTERN"
            ));
        };
        match address.rsplit_once(':') {
            Some((host, port)) if !host.is_empty() && port.parse::<u16>().is_ok_and(|p| p > 0) => {}
            _ => return Err(format!("peer {text:?}: {address:?} is not HOST:PORT")),
        }
        let pattern = pattern
            .map(|p| {
                p.parse::<EidPattern>()
                    .map_err(|e| format!("peer {text:?}: {e}"))
            })
            .transpose()?;
        Ok(PeerSpec {
            address: address.to_string(),
            pattern,
        })
    }
}

/// The AX.25 convergence layer: a KISS TNC and what the node tells it,
/// the node's callsign, its AX.25 link parameters, the neighbours it
/// connects to and the receiver's `ack_window`.
#[derive(Debug, Clone)]
pub struct Ax25Options {
    /// The TNC.
    pub kiss: KissAddress,
    /// The KISS port and the parameters sent to the TNC at start.
    pub params: KissParams,
    /// The port's transmitter, for the clock that holds T1 until frames
    /// have left the air (ACKMODE, bit rate).
    pub air: AirSettings,
    /// Print every frame sent and received on standard error, as a TNC
    /// monitor shows it.
    pub monitor: bool,
    /// The node's callsign and SSID.
    pub mycall: Address,
    /// The AX.25 link parameters; N1 sizes the DATA_SEGMENTs.
    pub link: linklab_link::Config,
    /// Neighbours connected to when bundles are routed to them.
    pub peers: Vec<Ax25PeerSpec>,
    /// An ACK_SEGMENT after every this many DATA_SEGMENTs.
    pub ack_window: u32,
}

/// A neighbour over AX.25: `CALL=PATTERN`, bundles for endpoints matching
/// `PATTERN` go to the station `CALL`; reached directly, or through the
/// digipeaters of an [`Ax25ViaSpec`] for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ax25PeerSpec {
    /// Its callsign and SSID.
    pub call: Address,
    /// The destinations routed to it.
    pub pattern: EidPattern,
    /// The digipeaters the node connects through, in order (AX.25 v2.2
    /// 3.12.5); empty for a direct link.
    pub via: Vec<Address>,
}

impl FromStr for Ax25PeerSpec {
    type Err = String;

    fn from_str(text: &str) -> Result<Ax25PeerSpec, String> {
        let Some((call, pattern)) = text.split_once('=') else {
            return Err(format!(
                "AX.25 peer {text:?}: use CALL=PATTERN, e.g. N0CALL-2=ipn:2.*"
            ));
        };
        let call = call
            .parse()
            .map_err(|e| format!("AX.25 peer {text:?}: {e}"))?;
        let pattern = pattern
            .parse()
            .map_err(|e| format!("AX.25 peer {text:?}: {e}"))?;
        Ok(Ax25PeerSpec {
            call,
            pattern,
            via: Vec::new(),
        })
    }
}

/// The digipeater path to an AX.25 neighbour: `CALL=DIGI,...`, the
/// neighbour `CALL` (one of the [`Ax25PeerSpec`]s) is connected to through
/// the digipeaters `DIGI,...` in that order (AX.25 v2.2 3.12.5). Their
/// number and whether they can make a path (not the node, not the
/// neighbour) are checked where the node's call is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ax25ViaSpec {
    /// The neighbour.
    pub call: Address,
    /// Its digipeaters, in path order.
    pub via: Vec<Address>,
}

impl FromStr for Ax25ViaSpec {
    type Err = String;

    fn from_str(text: &str) -> Result<Ax25ViaSpec, String> {
        let Some((call, via)) = text.split_once('=') else {
            return Err(format!(
                "AX.25 path {text:?}: use CALL=DIGI,..., e.g. N0CALL-2=DIGI-1"
            ));
        };
        let call = call
            .parse()
            .map_err(|e| format!("AX.25 path {text:?}: {e}"))?;
        let via = via
            .split(',')
            .map(|digi| {
                digi.parse()
                    .map_err(|e| format!("AX.25 path {text:?}: digipeater {digi:?}: {e}"))
            })
            .collect::<Result<_, _>>()?;
        Ok(Ax25ViaSpec { call, via })
    }
}

/// The NORM convergence layer: the UDP address it binds, its neighbours
/// and the rate it sends at.
#[derive(Debug, Clone)]
pub struct NormOptions {
    /// Where the UDP socket is bound.
    pub bind: SocketAddr,
    /// The neighbours.
    pub peers: Vec<NormPeerSpec>,
    /// A fixed rate of NORM messages (IP and UDP headers counted) or
    /// NORM-CC.
    pub rate: NormRate,
}

/// NORM-CC's rate before the first feedback: the D-STAR data rate, the
/// fixed rate's default.
pub const NORM_CC_INITIAL_BPS: f64 = 128_000.0;

/// NORM-CC's lowest rate: one 1024-octet segment (with its headers) a
/// second, about.
pub const NORM_CC_MIN_BPS: f64 = 8_000.0;

/// NORM-CC's highest rate.
pub const NORM_CC_MAX_BPS: f64 = 100_000_000.0;

/// `--norm-rate`: `cc` for NORM-CC (RFC 5740 5.5: the rate follows the
/// peer's congestion feedback, from [`NORM_CC_INITIAL_BPS`] within
/// [`NORM_CC_MIN_BPS`]..=[`NORM_CC_MAX_BPS`]), or a fixed rate of at least
/// 1000 bit/s.
pub fn parse_norm_rate(text: &str) -> Result<NormRate, String> {
    if text == "cc" {
        return Ok(NormRate::Cc {
            initial_bps: NORM_CC_INITIAL_BPS,
            min_bps: NORM_CC_MIN_BPS,
            max_bps: NORM_CC_MAX_BPS,
        });
    }
    match text.parse::<f64>() {
        Ok(bits_per_second) if bits_per_second.is_finite() && bits_per_second >= 1000.0 => {
            Ok(NormRate::Fixed { bits_per_second })
        }
        _ => Err(format!(
            "{text:?} is neither cc (NORM-CC) nor a rate of at least 1000 bit/s"
        )),
    }
}

/// A neighbour over NORM: `NODE=ADDR:PORT`, its node ID and UDP address.
/// Endpoints of its node ID are routed to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NormPeerSpec {
    /// Its node ID.
    pub node: Eid,
    /// Its UDP address.
    pub address: SocketAddr,
}

impl FromStr for NormPeerSpec {
    type Err = String;

    fn from_str(text: &str) -> Result<NormPeerSpec, String> {
        let Some((node, address)) = text.rsplit_once('=') else {
            return Err(format!(
                "NORM peer {text:?}: use NODE=ADDR:PORT, e.g. ipn:2.0=127.0.0.1:4560"
            ));
        };
        let node: Eid = node
            .parse()
            .map_err(|e| format!("NORM peer {text:?}: {e}"))?;
        if !node.is_admin_endpoint() {
            return Err(format!(
                "NORM peer {text:?}: {node} is not a node ID (ipn:N.0 or dtn://name/)"
            ));
        }
        let address = address
            .parse()
            .map_err(|e| format!("NORM peer {text:?}: {address:?}: {e}"))?;
        Ok(NormPeerSpec { node, address })
    }
}

/// A static route: `PATTERN=NODE`, bundles for endpoints matching
/// `PATTERN` go to the neighbour whose node ID is `NODE`, over whichever
/// session with it is up (opened by either side).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteSpec {
    /// The destinations.
    pub pattern: EidPattern,
    /// The next hop's node ID.
    pub next_hop: Eid,
}

impl FromStr for RouteSpec {
    type Err = String;

    fn from_str(text: &str) -> Result<RouteSpec, String> {
        let Some((pattern, next_hop)) = text.rsplit_once('=') else {
            return Err(format!(
                "route {text:?}: use PATTERN=NODE, e.g. ipn:3.*=ipn:2.0"
            ));
        };
        let pattern = pattern
            .parse()
            .map_err(|e| format!("route {text:?}: {e}"))?;
        let next_hop: Eid = next_hop
            .parse()
            .map_err(|e| format!("route {text:?}: next hop {next_hop:?}: {e}"))?;
        if !next_hop.is_admin_endpoint() {
            return Err(format!(
                "route {text:?}: the next hop {next_hop} is not a node ID (ipn:N.0 or dtn://name/)"
            ));
        }
        Ok(RouteSpec { pattern, next_hop })
    }
}

/// Where applications reach the node: a Unix socket's path, or a loopback
/// TCP address (the interface has no authentication, so nothing else).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AppAddress {
    /// A Unix socket.
    Unix(PathBuf),
    /// A TCP address on the loopback interface.
    Tcp(SocketAddr),
}

impl FromStr for AppAddress {
    type Err = String;

    fn from_str(text: &str) -> Result<AppAddress, String> {
        if text.is_empty() {
            return Err("the application socket must be a path or a loopback ADDR:PORT".into());
        }
        match text.parse::<SocketAddr>() {
            Ok(address) if address.ip().is_loopback() => Ok(AppAddress::Tcp(address)),
            Ok(address) => Err(format!(
                "application address {address}: only loopback (127.0.0.1, [::1]); \
                 the interface has no authentication"
            )),
            Err(_) => Ok(AppAddress::Unix(PathBuf::from(text))),
        }
    }
}

impl fmt::Display for AppAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AppAddress::Unix(path) => write!(f, "{}", path.display()),
            AppAddress::Tcp(address) => write!(f, "{address}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn norm_rates_are_fixed_or_cc() {
        assert_eq!(
            parse_norm_rate("64000"),
            Ok(NormRate::Fixed {
                bits_per_second: 64_000.0
            })
        );
        assert!(matches!(
            parse_norm_rate("cc"),
            Ok(NormRate::Cc { initial_bps, .. }) if initial_bps == NORM_CC_INITIAL_BPS
        ));
        for bad in ["999", "CC", "nan", "fast", ""] {
            assert!(parse_norm_rate(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn peers_routes_and_addresses() {
        let peer: PeerSpec = "tcpcl:127.0.0.1:4556=ipn:2.*".parse().unwrap();
        assert_eq!(peer.address, "127.0.0.1:4556");
        assert_eq!(peer.pattern, Some("ipn:2.*".parse().unwrap()));
        let peer: PeerSpec = "tcpcl:localhost:4556".parse().unwrap();
        assert_eq!(peer.pattern, None);
        let peer: Ax25PeerSpec = "N0CALL-2=ipn:2.*".parse().unwrap();
        assert_eq!(peer.call.ssid(), 2);
        assert!(peer.via.is_empty());
        let path: Ax25ViaSpec = "n0call-2=digi-1,relay".parse().unwrap();
        assert_eq!(path.call, "N0CALL-2".parse().unwrap());
        assert_eq!(
            path.via,
            ["DIGI-1".parse().unwrap(), "RELAY".parse().unwrap()]
        );
        let peer: NormPeerSpec = "dtn://b/=127.0.0.1:4560".parse().unwrap();
        assert_eq!(peer.node, "dtn://b/".parse::<Eid>().unwrap());
        assert_eq!(peer.address, "127.0.0.1:4560".parse().unwrap());
        let route: RouteSpec = "dtn://far/*=dtn://near/".parse().unwrap();
        assert_eq!(route.next_hop, "dtn://near/".parse::<Eid>().unwrap());
        assert_eq!(
            "127.0.0.1:7000".parse::<AppAddress>().unwrap(),
            AppAddress::Tcp("127.0.0.1:7000".parse().unwrap())
        );
        assert_eq!(
            "/tmp/a.sock".parse::<AppAddress>().unwrap(),
            AppAddress::Unix("/tmp/a.sock".into())
        );
    }

    #[test]
    fn bad_specs_say_why() {
        for (bad, why) in [
            ("127.0.0.1:4556", "use tcpcl:HOST:PORT"),
            ("tcpcl:127.0.0.1", "is not HOST:PORT"),
            ("tcpcl:127.0.0.1:0", "is not HOST:PORT"),
            ("tcpcl:h:1=nonsense", "bad endpoint pattern"),
        ] {
            let e = bad.parse::<PeerSpec>().unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
        for (bad, why) in [
            ("ipn:2.*", "use PATTERN=NODE"),
            ("ipn:2.*=ipn:2.1", "not a node ID"),
        ] {
            let e = bad.parse::<RouteSpec>().unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
        for (bad, why) in [
            ("N0CALL-2", "use CALL=PATTERN"),
            ("N0CALL-99=ipn:2.*", "AX.25 peer"),
            ("N0CALL-2=nonsense", "bad endpoint pattern"),
        ] {
            let e = bad.parse::<Ax25PeerSpec>().unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
        for (bad, why) in [
            ("DIGI-1", "use CALL=DIGI,..."),
            ("N0CALL-2=", "digipeater \"\": callsign is empty"),
            ("N0CALL-2=DIGI,,RELAY", "digipeater \"\": callsign is empty"),
            (
                "N0CALL-2=DIGI_1",
                "digipeater \"DIGI_1\": callsign \"DIGI_1\" has '_'",
            ),
            ("N0CALL-2=DIGI-16", "SSID 16 is out of range"),
            ("N0CALL-99=DIGI", "AX.25 path \"N0CALL-99=DIGI\": SSID 99"),
        ] {
            let e = bad.parse::<Ax25ViaSpec>().unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
        for (bad, why) in [
            ("127.0.0.1:4560", "use NODE=ADDR:PORT"),
            ("ipn:2.1=127.0.0.1:4560", "not a node ID"),
            ("ipn:2.0=localhost", "NORM peer"),
        ] {
            let e = bad.parse::<NormPeerSpec>().unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
        let e = "10.1.2.3:7000".parse::<AppAddress>().unwrap_err();
        assert!(e.contains("only loopback"), "{e}");
    }
}
