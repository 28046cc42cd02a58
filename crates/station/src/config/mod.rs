//! The station's configuration file (TOML), read into a [`StationConfig`]
//! with every value checked before anything starts. An error names the
//! file, the line and column, and the key it is about.
//!
//! ```toml
//! [station]
//! callsign = "N0CALL"                  # the station's own call (beacons' default source)
//! control = "/run/linklab/station.sock" # where `linklab status` asks
//!
//! [agw]
//! listen = "127.0.0.1:8000"            # AGWPE clients
//!
//! [kiss-server]
//! listen = "127.0.0.1:8100"            # KISS programs: KISS port N is radio port N+1
//!
//! [status]
//! listen = "127.0.0.1:8080"            # the status page and /metrics (off when absent)
//!
//! [[port]]
//! name = "vhf"
//! kiss = "tcp:127.0.0.1:8001"          # or serial:/dev/ttyUSB0:9600
//! callsigns = ["N0CALL-1"]
//! aliases = ["RELAY"]
//! digipeat = true
//! txdelay-ms = 300
//! window = 4
//!
//! [[service]]
//! callsign = "N0CALL-2"
//! program = ["/usr/local/bin/bbs", "%u"]
//!
//! [[beacon]]
//! port = "vhf"
//! to = "ID"
//! via = ["WIDE1-1"]
//! text = "N0CALL packet station"
//! every-s = 600
//! ```
//!
//! The link and KISS settings of a port have the names of the one-shot
//! commands' options (`t1-ms`, `window`, `txdelay-ms`, ...; docs/cli.md),
//! with the same defaults and checks ([`LinkSettings`]).

use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;

use linklab_agw::PortConfig;
use linklab_core::Position;
use linklab_dtnnode::NodeConfig;
use linklab_io::{AckMode, KissAddress, KissParams, KissTime, LinkSettings};
use linklab_ip::Ax25Config;
use linklab_link::AckPolicy;
use linklab_wire::ax25::{
    same_station, Address, Callsign, DigipeatRules, NnAlias, MAX_DIGIPEATERS,
};
use linklab_wire::control::Modulus;
use linklab_wire::kiss::Port;
use serde::Deserialize;

use crate::digipeater::Repeats;

mod dtn;
mod netrom;
mod tun;

use dtn::DtnFile;
use netrom::NetromFile;
use thiserror::Error;
use tun::TunFile;

/// Links one local callsign keeps on a port unless `max-links` says.
pub const DEFAULT_MAX_LINKS: usize = 64;

/// The shortest beacon interval accepted. A beacon more often than once
/// a minute takes a shared channel from everyone else; ten seconds is
/// allowed for tests on an emulated channel.
pub const MIN_BEACON_INTERVAL: Duration = Duration::from_secs(10);

/// The longest beacon text: the AX.25 default N1 (v2.2 6.7.2.3).
pub const MAX_BEACON_TEXT: usize = 256;

/// The radio ports the AGWPE numbering can carry.
pub const MAX_PORTS: usize = 255;

/// A configuration that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub struct ConfigError {
    /// The file.
    pub file: PathBuf,
    /// Where in it, when known.
    pub at: Option<Position>,
    /// The key, as a path (`port[1].window`), when known.
    pub key: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(at) = self.at {
            write!(f, ":{}:{}", at.line, at.column)?;
        }
        if let Some(key) = &self.key {
            write!(f, ": {key}")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// A radio port as configured.
#[derive(Debug, Clone, PartialEq)]
pub struct PortSpec {
    /// Its name, used by beacons and shown in the status.
    pub name: String,
    /// Where its TNC is.
    pub kiss: KissAddress,
    /// The engine's settings for it.
    pub agw: PortConfig,
    /// The callsigns the station answers for on it.
    pub callsigns: Vec<Address>,
    /// Other names it digipeats for (MYALIAS).
    pub aliases: Vec<Address>,
    /// Whether it digipeats frames whose next hop is one of its callsigns
    /// or aliases.
    pub digipeat: bool,
    /// What it repeats when it digipeats.
    pub repeats: Repeats,
}

/// How a service's program or socket sees line ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineEnds {
    /// CR from the link becomes LF for the program, LF from the program
    /// becomes CR on the link (packet terminals end lines with CR, Unix
    /// programs with LF).
    Convert,
    /// Octets pass unchanged both ways.
    Raw,
}

/// What answers an inbound connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// A program run with the link as its standard input and output; `%u`
    /// in an argument is the caller with SSID, `%U` without, `%c` the
    /// called callsign, `%d` the port's name, `%%` a percent sign.
    Program {
        /// The program and its arguments.
        argv: Vec<String>,
    },
    /// A TCP service the link is joined to (a BBS's telnet port).
    Tcp {
        /// `HOST:PORT`.
        address: String,
    },
    /// A text sent on connection, then the link is released.
    Greeting {
        /// The text (`%u`, `%c` and `%d` as for a program).
        text: String,
    },
    /// Everything received is sent back.
    Echo,
    /// What the caller sends is stored as a file in `directory`,
    /// `NAME.partial` until the caller releases the link with DISC.
    Drop {
        /// The directory.
        directory: PathBuf,
    },
}

impl Answer {
    /// One word for logs and the status.
    pub fn kind(&self) -> &'static str {
        match self {
            Answer::Program { .. } => "program",
            Answer::Tcp { .. } => "tcp",
            Answer::Greeting { .. } => "greeting",
            Answer::Echo => "echo",
            Answer::Drop { .. } => "drop",
        }
    }
}

/// An inbound-connection service (as a line of ax25d.conf).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceSpec {
    /// The callsign and SSID it answers, on every port.
    pub callsign: Address,
    /// What answers.
    pub answer: Answer,
    /// Line-end handling between the link and the answer (`line-ends`;
    /// [`LineEnds::Convert`] for a program or TCP service,
    /// [`LineEnds::Raw`] for the builtins unless the file says).
    pub line_ends: LineEnds,
    /// Most connections served at once; a caller beyond them is released
    /// after a line saying so.
    pub max_sessions: usize,
}

/// A beacon.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BeaconSpec {
    /// The port, by index.
    pub port: usize,
    /// Its source.
    pub from: Address,
    /// Its destination.
    pub to: Address,
    /// Its digipeater path.
    pub via: Vec<Address>,
    /// Its text.
    pub text: String,
    /// How often.
    pub every: Duration,
}

/// IP over AX.25 on a TUN device, as the kernel's `ax0` interface with
/// `axparms --route/--ipmode` was.
#[derive(Debug, Clone, PartialEq)]
pub struct TunSpec {
    /// The port, by index.
    pub port: usize,
    /// The device's name, e.g. `ax0`.
    pub name: String,
    /// Its addresses, each with its prefix length.
    pub addresses: Vec<(IpAddr, u8)>,
    /// The AX.25 interface: callsign, mode, MTU, link settings, ARP,
    /// static neighbours and per-neighbour modes.
    pub ax25: Ax25Config,
}

/// The DTN node on a port: a bundle agent with the AX.25 convergence
/// layer (what `linklab dtn node --kiss` runs), reaching the port through
/// the station.
#[derive(Debug, Clone)]
pub struct DtnSpec {
    /// The port, by index (at most 15: the node is a KISS client of the
    /// station, on that KISS port).
    pub port: usize,
    /// The node's settings; its AX.25 options' KISS address is filled in
    /// by the driver (the station's own loopback KISS listener).
    pub node: NodeConfig,
}

impl PartialEq for DtnSpec {
    fn eq(&self, other: &DtnSpec) -> bool {
        // NodeConfig has no PartialEq: compare what the file said.
        self.port == other.port && format!("{:?}", self.node) == format!("{:?}", other.node)
    }
}

/// The whole station.
#[derive(Debug, Clone, PartialEq)]
pub struct StationConfig {
    /// The station's own callsign, if given.
    pub callsign: Option<Address>,
    /// Where the control socket listens (`linklab status`).
    pub control: Option<PathBuf>,
    /// Log every frame sent and received.
    pub log_frames: bool,
    /// Where AGWPE clients connect, if anywhere.
    pub agw: Option<SocketAddr>,
    /// Where KISS clients connect, if anywhere.
    pub kiss_server: Option<SocketAddr>,
    /// Where the status page and the metrics are served, if anywhere.
    pub status: Option<SocketAddr>,
    /// The radio ports, in order (AGWPE Port1, Port2, ...).
    pub ports: Vec<PortSpec>,
    /// The inbound-connection services.
    pub services: Vec<ServiceSpec>,
    /// The beacons.
    pub beacons: Vec<BeaconSpec>,
    /// The TUN devices.
    pub tuns: Vec<TunSpec>,
    /// The DTN node, if any.
    pub dtn: Option<DtnSpec>,
    /// The NET/ROM node, if any.
    pub netrom: Option<NetromSpec>,
}

/// The station's NET/ROM node (`[netrom]`).
#[derive(Debug, Clone, PartialEq)]
pub struct NetromSpec {
    /// Callsign, alias, interval, routing and transport parameters; its
    /// broadcast ports are the `[[netrom.port]]`s not marked
    /// `broadcast = false`.
    pub node: linklab_netrom::NodeConfig,
    /// The ports it runs on, by index, with the quality of the
    /// neighbours heard there (`nrbroadcast`'s default quality).
    pub ports: Vec<(usize, u8)>,
    /// Neighbours with their own quality, and whether each is locked.
    pub neighbours: Vec<(linklab_netrom::routing::NeighbourKey, u8, bool)>,
    /// Locked routes: destination, alias, neighbour, quality.
    pub routes: Vec<(
        Address,
        linklab_netrom::wire::Alias,
        linklab_netrom::routing::NeighbourKey,
        u8,
    )>,
    /// The service that answers circuits to the node; without one,
    /// connect requests are refused.
    pub service: Option<Address>,
}

type Spanned<T> = toml::Spanned<T>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    station: Option<StationFile>,
    agw: Option<ListenFile>,
    #[serde(rename = "kiss-server")]
    kiss_server: Option<ListenFile>,
    status: Option<StatusFile>,
    #[serde(default)]
    port: Vec<PortFile>,
    #[serde(default)]
    service: Vec<ServiceFile>,
    #[serde(default)]
    beacon: Vec<BeaconFile>,
    #[serde(default)]
    tun: Vec<TunFile>,
    dtn: Option<DtnFile>,
    netrom: Option<NetromFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct StationFile {
    callsign: Option<Spanned<String>>,
    control: Option<Spanned<PathBuf>>,
    #[serde(default)]
    log_frames: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListenFile {
    listen: Spanned<String>,
}

/// `[status]`: a listener anyone who reaches it may read, so an address
/// other than loopback needs `public = true` as well.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StatusFile {
    listen: Spanned<String>,
    #[serde(default)]
    public: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct PortFile {
    name: Spanned<String>,
    kiss: Spanned<String>,
    description: Option<String>,
    bitrate: Option<Spanned<u32>>,
    ackmode: Option<Spanned<String>>,
    kiss_port: Option<Spanned<u8>>,
    txdelay_ms: Option<Spanned<u64>>,
    persist: Option<Spanned<u8>>,
    slot_ms: Option<Spanned<u64>>,
    txtail_ms: Option<Spanned<u64>>,
    #[serde(default)]
    mod128: bool,
    t1_ms: Option<Spanned<u64>>,
    t2_ms: Option<Spanned<u64>>,
    t3_ms: Option<Spanned<u64>>,
    n2: Option<Spanned<u8>>,
    window: Option<Spanned<u8>>,
    n1: Option<Spanned<usize>>,
    #[serde(default)]
    srej: bool,
    poll_last: Option<bool>,
    ack_policy: Option<Spanned<String>>,
    #[serde(default)]
    callsigns: Vec<Spanned<String>>,
    #[serde(default)]
    aliases: Vec<Spanned<String>>,
    digipeat: Option<Spanned<bool>>,
    #[serde(default)]
    nn_aliases: Vec<Spanned<String>>,
    nn_trace: Option<bool>,
    max_hops: Option<Spanned<u8>>,
    max_links: Option<Spanned<usize>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct ServiceFile {
    callsign: Spanned<String>,
    program: Option<Spanned<Vec<String>>>,
    tcp: Option<Spanned<String>>,
    builtin: Option<Spanned<String>>,
    text: Option<Spanned<String>>,
    directory: Option<Spanned<PathBuf>>,
    line_ends: Option<Spanned<String>>,
    max_sessions: Option<Spanned<usize>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct BeaconFile {
    port: Spanned<String>,
    from: Option<Spanned<String>>,
    to: Option<Spanned<String>>,
    via: Option<Spanned<Vec<Spanned<String>>>>,
    text: Spanned<String>,
    every_s: Spanned<u64>,
}

/// Sessions one service serves at once unless `max-sessions` says.
pub const DEFAULT_MAX_SESSIONS: usize = 16;

/// Reads and checks the configuration file at `path`.
pub fn load(path: &Path) -> Result<StationConfig, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
        file: path.to_path_buf(),
        at: None,
        key: None,
        message: format!("cannot read it: {e}"),
    })?;
    parse(path, &text)
}

/// Checks `text`, the contents of the file `path`.
pub fn parse(path: &Path, text: &str) -> Result<StationConfig, ConfigError> {
    let reader = Reader { path, text };
    let file: File = toml::from_str(text).map_err(|e| reader.toml_error(&e))?;
    reader.check(file)
}

struct Reader<'a> {
    path: &'a Path,
    text: &'a str,
}

impl Reader<'_> {
    fn error(&self, span: Option<Range<usize>>, key: &str, message: String) -> ConfigError {
        ConfigError {
            file: self.path.to_path_buf(),
            at: span.map(|s| Position::of(self.text, s.start)),
            key: Some(key.to_string()),
            message,
        }
    }

    fn toml_error(&self, e: &toml::de::Error) -> ConfigError {
        // The toml reader's error has the place but not the key path the
        // station's own checks give (`port[2].window`): find it there.
        // One line: a syntax error's message has two ("invalid array",
        // "expected `]`").
        let lines: Vec<&str> = e.message().lines().map(str::trim).collect();
        let message = plain_words(&lines.join(": "));
        let mut key = e
            .span()
            .and_then(|s| crate::keypath::key_at(self.text, s.start));
        if let (Some(k), Some(field)) = (&mut key, missing_field(&message)) {
            // Its place is the table's header; the key is the one missing.
            k.push('.');
            k.push_str(field);
        }
        let message = match key.as_deref() {
            Some(k @ ("port" | "service" | "beacon")) if message.contains("expected a list") => {
                format!("{message}: write [[{k}]], one such table for each")
            }
            _ => message,
        };
        ConfigError {
            file: self.path.to_path_buf(),
            at: e.span().map(|s| Position::of(self.text, s.start)),
            key,
            message,
        }
    }

    fn callsign(&self, value: &Spanned<String>, key: &str) -> Result<Address, ConfigError> {
        value.get_ref().parse::<Address>().map_err(|e| {
            self.error(
                Some(value.span()),
                key,
                format!("{:?}: {e}", value.get_ref()),
            )
        })
    }

    fn socket(&self, value: &Spanned<String>, key: &str) -> Result<SocketAddr, ConfigError> {
        value.get_ref().parse::<SocketAddr>().map_err(|_| {
            self.error(
                Some(value.span()),
                key,
                format!(
                    "{:?} is not an address and port such as 127.0.0.1:8000",
                    value.get_ref()
                ),
            )
        })
    }

    fn check(&self, file: File) -> Result<StationConfig, ConfigError> {
        let (callsign, control, log_frames) = match &file.station {
            Some(s) => (
                s.callsign
                    .as_ref()
                    .map(|c| self.callsign(c, "station.callsign"))
                    .transpose()?,
                s.control.as_ref().map(|c| c.get_ref().clone()),
                s.log_frames,
            ),
            None => (None, None, false),
        };
        let agw = file
            .agw
            .as_ref()
            .map(|a| self.socket(&a.listen, "agw.listen"))
            .transpose()?;
        let kiss_server = file
            .kiss_server
            .as_ref()
            .map(|a| self.socket(&a.listen, "kiss-server.listen"))
            .transpose()?;
        if let (Some(a), Some(k), Some(f)) = (agw, kiss_server, &file.kiss_server) {
            // Port 0 is any free port: two of them are two ports.
            // 0.0.0.0:8000 takes 8000 on every address, 127.0.0.1 too.
            let overlap = a.ip() == k.ip() || a.ip().is_unspecified() || k.ip().is_unspecified();
            if a.port() == k.port() && a.port() != 0 && overlap {
                return Err(self.error(
                    Some(f.listen.span()),
                    "kiss-server.listen",
                    if a == k {
                        format!("{k} is the AGWPE server's address too")
                    } else {
                        format!("{k} and the AGWPE server's {a} take the same port")
                    },
                ));
            }
        }
        let status = match &file.status {
            Some(s) => Some(self.status(s, [("AGWPE", agw), ("KISS", kiss_server)])?),
            None => None,
        };
        if file.port.is_empty() {
            return Err(ConfigError {
                file: self.path.to_path_buf(),
                at: None,
                key: Some("port".into()),
                message: "no radio port: add a [[port]] table with a name and a kiss address"
                    .into(),
            });
        }
        if file.port.len() > MAX_PORTS {
            return Err(self.error(
                Some(file.port[MAX_PORTS].name.span()),
                "port",
                format!(
                    "{} ports given; AGWPE numbers at most {MAX_PORTS}",
                    file.port.len()
                ),
            ));
        }
        let mut ports: Vec<PortSpec> = Vec::new();
        for (i, port) in file.port.iter().enumerate() {
            let spec = self.port(i, port)?;
            if ports.iter().any(|p| p.name == spec.name) {
                return Err(self.error(
                    Some(port.name.span()),
                    &format!("port[{}].name", i + 1),
                    format!("a port named {:?} is given above already", spec.name),
                ));
            }
            if let Some(other) = ports.iter().find(|p| same_tnc(p, &spec)) {
                return Err(self.error(
                    Some(port.kiss.span()),
                    &format!("port[{}].kiss", i + 1),
                    match &spec.kiss {
                        KissAddress::Serial { device, .. } => format!(
                            "{device} is port {:?}'s serial line already; a serial TNC serves one port here",
                            other.name
                        ),
                        _ => format!(
                            "{} KISS port {} is port {:?}'s already; two ports on one TNC need different kiss-port values",
                            spec.kiss,
                            spec.agw.kiss.port.get(),
                            other.name
                        ),
                    },
                ));
            }
            ports.push(spec);
        }
        let mut services: Vec<ServiceSpec> = Vec::new();
        for (i, service) in file.service.iter().enumerate() {
            let spec = self.service(i, service)?;
            if services
                .iter()
                .any(|s| same_station(&s.callsign, &spec.callsign))
            {
                return Err(self.error(
                    Some(service.callsign.span()),
                    &format!("service[{}].callsign", i + 1),
                    format!("{} is answered by a service above already", spec.callsign),
                ));
            }
            if let Some(p) = ports
                .iter()
                .find(|p| p.aliases.iter().any(|a| same_station(a, &spec.callsign)))
            {
                return Err(self.error(
                    Some(service.callsign.span()),
                    &format!("service[{}].callsign", i + 1),
                    format!(
                        "{} is a digipeater alias of port {:?}; a service needs a callsign of its own",
                        spec.callsign, p.name
                    ),
                ));
            }
            services.push(spec);
        }
        let mut beacons = Vec::new();
        for (i, beacon) in file.beacon.iter().enumerate() {
            beacons.push(self.beacon(i, beacon, &ports, callsign)?);
        }
        let mut tuns: Vec<TunSpec> = Vec::new();
        for (i, tun) in file.tun.iter().enumerate() {
            let spec = self.tun(i, tun, &ports, &file.port, &services, &tuns)?;
            tuns.push(spec);
        }
        let dtn = match &file.dtn {
            Some(d) => Some(self.dtn(d, &ports, &services, &tuns)?),
            None => None,
        };
        let netrom = match &file.netrom {
            Some(n) => Some(self.netrom(n, &ports, &services, &tuns)?),
            None => None,
        };
        Ok(StationConfig {
            callsign,
            control,
            log_frames,
            agw,
            kiss_server,
            status,
            ports,
            services,
            beacons,
            tuns,
            dtn,
            netrom,
        })
    }

    /// `[status]`: an address and port; one not on loopback only with
    /// `public = true`, and not one the AGWPE or KISS server takes.
    fn status(
        &self,
        file: &StatusFile,
        others: [(&str, Option<SocketAddr>); 2],
    ) -> Result<SocketAddr, ConfigError> {
        let address = self.socket(&file.listen, "status.listen")?;
        for (what, other) in others {
            let Some(other) = other else { continue };
            let overlap = address.ip() == other.ip()
                || address.ip().is_unspecified()
                || other.ip().is_unspecified();
            if address.port() == other.port() && address.port() != 0 && overlap {
                return Err(self.error(
                    Some(file.listen.span()),
                    "status.listen",
                    format!("{address} takes the port of the {what} server's {other}"),
                ));
            }
        }
        if !address.ip().is_loopback() && !file.public {
            return Err(self.error(
                Some(file.listen.span()),
                "status.listen",
                format!(
                    "{address} is not a loopback address: the status page and metrics would be open to every host that reaches it; add public = true to [status] if that is meant"
                ),
            ));
        }
        Ok(address)
    }

    fn port(&self, i: usize, port: &PortFile) -> Result<PortSpec, ConfigError> {
        let at = |key: &str| format!("port[{}].{key}", i + 1);
        let name = port.name.get_ref().clone();
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(self.error(
                Some(port.name.span()),
                &at("name"),
                format!("{name:?}: a port name is letters, digits, '-' and '_'"),
            ));
        }
        let kiss: KissAddress = port
            .kiss
            .get_ref()
            .parse()
            .map_err(|e| self.error(Some(port.kiss.span()), &at("kiss"), format!("{e}")))?;
        let kiss_port = match &port.kiss_port {
            Some(p) => Port::new(*p.get_ref()).map_err(|_| {
                self.error(
                    Some(p.span()),
                    &at("kiss-port"),
                    format!("{} is not a KISS port (0-15)", p.get_ref()),
                )
            })?,
            None => Port::default(),
        };
        let millis =
            |v: &Option<Spanned<u64>>| v.as_ref().map(|v| Duration::from_millis(*v.get_ref()));
        let params = KissParams {
            port: kiss_port,
            txdelay: millis(&port.txdelay_ms),
            persistence: port.persist.as_ref().map(|p| *p.get_ref()),
            slot_time: millis(&port.slot_ms),
            txtail: millis(&port.txtail_ms),
        };
        if let Err(e) = params.validate() {
            let (key, span) = match e.param {
                KissTime::TxDelay => ("txdelay-ms", port.txdelay_ms.as_ref().map(Spanned::span)),
                KissTime::SlotTime => ("slot-ms", port.slot_ms.as_ref().map(Spanned::span)),
                KissTime::TxTail => ("txtail-ms", port.txtail_ms.as_ref().map(Spanned::span)),
            };
            return Err(self.error(span, &at(key), e.to_string()));
        }
        let ack_policy = match &port.ack_policy {
            None => AckPolicy::WindowOrT2,
            Some(p) => match p.get_ref().as_str() {
                "window" => AckPolicy::WindowOrT2,
                "t2" => AckPolicy::AfterT2,
                "immediate" => AckPolicy::Immediately,
                other => {
                    return Err(self.error(
                        Some(p.span()),
                        &at("ack-policy"),
                        format!("{other:?}: write \"window\", \"t2\" or \"immediate\""),
                    ))
                }
            },
        };
        let value = |v: &Option<Spanned<u64>>| v.as_ref().map(|v| *v.get_ref());
        let settings = LinkSettings {
            t1_ms: value(&port.t1_ms),
            t2_ms: value(&port.t2_ms),
            t3_ms: value(&port.t3_ms),
            n2: port.n2.as_ref().map(|v| *v.get_ref()),
            window: port.window.as_ref().map(|v| *v.get_ref()),
            n1: port.n1.as_ref().map(|v| *v.get_ref()),
            srej: port.srej,
            poll_last: port.poll_last.unwrap_or(true),
            ack_policy,
        };
        let modulus = if port.mod128 {
            Modulus::Mod128
        } else {
            Modulus::Mod8
        };
        let bit_rate = port.bitrate.as_ref().map(|b| *b.get_ref());
        let link = settings.config_at(modulus, bit_rate).map_err(|e| {
            let key = LinkSettings::setting_of(&e);
            let span = match key {
                "window" => port.window.as_ref().map(Spanned::span),
                "n1" => port.n1.as_ref().map(Spanned::span),
                "n2" => port.n2.as_ref().map(Spanned::span),
                "t1-ms" => port.t1_ms.as_ref().map(Spanned::span),
                "t2-ms" => port.t2_ms.as_ref().map(Spanned::span),
                "t3-ms" => port.t3_ms.as_ref().map(Spanned::span),
                _ => None,
            }
            .or(Some(port.name.span()));
            self.error(span, &at(key), e.to_string())
        })?;
        let callsigns = self.calls(&port.callsigns, &at("callsigns"))?;
        let aliases = self.calls(&port.aliases, &at("aliases"))?;
        for (a, spanned) in aliases.iter().zip(&port.aliases) {
            if callsigns.iter().any(|c| same_station(a, c)) {
                return Err(self.error(
                    Some(spanned.span()),
                    &at("aliases"),
                    format!("{a} is one of the port's callsigns too"),
                ));
            }
        }
        let digipeat = port.digipeat.as_ref().is_some_and(|d| *d.get_ref());
        if digipeat && callsigns.is_empty() && aliases.is_empty() {
            return Err(self.error(
                port.digipeat.as_ref().map(Spanned::span),
                &at("digipeat"),
                "a digipeater needs a callsign or an alias on the port to repeat for".into(),
            ));
        }
        let mut nn = Vec::new();
        for prefix in &port.nn_aliases {
            let text = prefix.get_ref();
            let ok = (1..=5).contains(&text.len()) && text.chars().all(|c| c.is_ascii_alphabetic());
            let parsed = text
                .to_ascii_uppercase()
                .parse::<Callsign>()
                .ok()
                .filter(|_| ok);
            match parsed {
                Some(prefix) => nn.push(NnAlias {
                    prefix,
                    trace: port.nn_trace.unwrap_or(true),
                }),
                None => {
                    return Err(self.error(
                        Some(prefix.span()),
                        &at("nn-aliases"),
                        format!("{text:?}: an n-N alias family is 1 to 5 letters, e.g. \"WIDE\""),
                    ))
                }
            }
        }
        let max_hops = match &port.max_hops {
            Some(h) if !(1..=7).contains(h.get_ref()) => {
                return Err(self.error(
                    Some(h.span()),
                    &at("max-hops"),
                    format!("{}: n-N hops are 1 to 7", h.get_ref()),
                ))
            }
            Some(h) => *h.get_ref(),
            None => 2,
        };
        if (!nn.is_empty() || !aliases.is_empty()) && digipeat && callsigns.is_empty() {
            return Err(self.error(
                port.digipeat.as_ref().map(Spanned::span),
                &at("digipeat"),
                "repeating for an alias puts the port's callsign in the path: give the port a callsign".into(),
            ));
        }
        let repeats = Repeats {
            callsigns: callsigns.clone(),
            rules: callsigns.first().map(|mycall| DigipeatRules {
                mycall: *mycall,
                aliases: aliases.clone(),
                nn,
                max_hops,
            }),
        };
        let max_links = match &port.max_links {
            Some(m) if *m.get_ref() == 0 => {
                return Err(self.error(
                    Some(m.span()),
                    &at("max-links"),
                    "0 links: the port could never connect".into(),
                ))
            }
            Some(m) => *m.get_ref(),
            None => DEFAULT_MAX_LINKS,
        };
        let bit_rate = match &port.bitrate {
            Some(b) if *b.get_ref() == 0 => {
                return Err(self.error(
                    Some(b.span()),
                    &at("bitrate"),
                    "0 bit/s: give the radio's bit rate, e.g. 1200".into(),
                ))
            }
            Some(b) => Some(*b.get_ref()),
            None => None,
        };
        let ackmode = match &port.ackmode {
            None => AckMode::Auto,
            Some(a) => a
                .get_ref()
                .parse()
                .map_err(|e| self.error(Some(a.span()), &at("ackmode"), e))?,
        };
        let description = port
            .description
            .clone()
            .unwrap_or_else(|| format!("{name}: linklab AX.25 on {kiss}"));
        Ok(PortSpec {
            name,
            agw: PortConfig {
                description,
                kiss: params,
                link,
                answer_for: callsigns.clone(),
                max_links,
                bit_rate,
                ackmode,
            },
            kiss,
            callsigns,
            aliases,
            digipeat,
            repeats,
        })
    }

    /// A list of distinct callsigns.
    fn calls(&self, list: &[Spanned<String>], key: &str) -> Result<Vec<Address>, ConfigError> {
        let mut out: Vec<Address> = Vec::new();
        for value in list {
            let call = self.callsign(value, key)?;
            if out.iter().any(|c| same_station(c, &call)) {
                return Err(self.error(Some(value.span()), key, format!("{call} is listed twice")));
            }
            out.push(call);
        }
        Ok(out)
    }

    fn service(&self, i: usize, service: &ServiceFile) -> Result<ServiceSpec, ConfigError> {
        let at = |key: &str| format!("service[{}].{key}", i + 1);
        let callsign = self.callsign(&service.callsign, &at("callsign"))?;
        let text_only_for = |what: &str, key: &str, span: Option<Range<usize>>| {
            self.error(span, &at(key), format!("`{key}` is for {what} only"))
        };
        let answer = match (&service.program, &service.tcp, &service.builtin) {
            (Some(program), None, None) => self.program(program, &at("program"))?,
            (None, Some(tcp), None) => self.tcp(tcp, &at("tcp"))?,
            (None, None, Some(builtin)) => self.builtin(builtin, service, &at)?,
            (program, tcp, builtin) => {
                let mut given: Vec<(&str, Range<usize>)> = [
                    ("program", program.as_ref().map(Spanned::span)),
                    ("tcp", tcp.as_ref().map(Spanned::span)),
                    ("builtin", builtin.as_ref().map(Spanned::span)),
                ]
                .into_iter()
                .filter_map(|(key, span)| Some((key, span?)))
                .collect();
                // Two given: the error is at the second in the file; none:
                // at the service's callsign.
                given.sort_by_key(|(_, span)| span.start);
                let (key, span) = match given.get(1) {
                    Some((key, span)) => (*key, span.clone()),
                    None => ("callsign", service.callsign.span()),
                };
                let given: Vec<&str> = given.iter().map(|(key, _)| *key).collect();
                return Err(self.error(
                    Some(span),
                    &at(key),
                    format!(
                        "a service needs exactly one of `program`, `tcp` or `builtin`; {} given",
                        if given.is_empty() {
                            "none".to_string()
                        } else {
                            given.join(" and ")
                        }
                    ),
                ));
            }
        };
        if let Some(text) = &service.text {
            if !matches!(answer, Answer::Greeting { .. }) {
                return Err(text_only_for("a greeting", "text", Some(text.span())));
            }
        }
        if let Some(dir) = &service.directory {
            if !matches!(answer, Answer::Drop { .. }) {
                return Err(text_only_for("a file drop", "directory", Some(dir.span())));
            }
        }
        let line_ends = match &service.line_ends {
            // A program or a TCP service speaks Unix lines; a file drop
            // and an echo keep the caller's octets as they are.
            None => match answer {
                Answer::Program { .. } | Answer::Tcp { .. } => LineEnds::Convert,
                Answer::Greeting { .. } | Answer::Echo | Answer::Drop { .. } => LineEnds::Raw,
            },
            Some(v) => match v.get_ref().as_str() {
                "convert" => LineEnds::Convert,
                "raw" => LineEnds::Raw,
                other => {
                    return Err(self.error(
                        Some(v.span()),
                        &at("line-ends"),
                        format!("{other:?}: write \"convert\" (CR on the link, LF for the program) or \"raw\""),
                    ))
                }
            },
        };
        let max_sessions = match &service.max_sessions {
            Some(m) if *m.get_ref() == 0 => {
                return Err(self.error(
                    Some(m.span()),
                    &at("max-sessions"),
                    "0 sessions: the service could never answer".into(),
                ))
            }
            Some(m) => *m.get_ref(),
            None => DEFAULT_MAX_SESSIONS,
        };
        Ok(ServiceSpec {
            callsign,
            answer,
            line_ends,
            max_sessions,
        })
    }

    fn program(&self, program: &Spanned<Vec<String>>, key: &str) -> Result<Answer, ConfigError> {
        let argv = program.get_ref().clone();
        let Some(first) = argv.first() else {
            return Err(self.error(
                Some(program.span()),
                key,
                "an empty list: give the program and its arguments".into(),
            ));
        };
        if find_program(first).is_none() {
            return Err(self.error(
                Some(program.span()),
                key,
                if first.contains('/') {
                    format!("{first:?} is not an executable file")
                } else {
                    format!("{first:?} is not an executable file in PATH")
                },
            ));
        }
        Ok(Answer::Program { argv })
    }

    fn tcp(&self, tcp: &Spanned<String>, key: &str) -> Result<Answer, ConfigError> {
        let address = tcp.get_ref().clone();
        let port_ok = address.rsplit_once(':').is_some_and(|(host, port)| {
            !host.is_empty() && port.parse::<u16>().is_ok_and(|p| p > 0)
        });
        if !port_ok {
            return Err(self.error(
                Some(tcp.span()),
                key,
                format!("{address:?} is not HOST:PORT, e.g. 127.0.0.1:6300"),
            ));
        }
        Ok(Answer::Tcp { address })
    }

    fn builtin(
        &self,
        builtin: &Spanned<String>,
        service: &ServiceFile,
        at: &dyn Fn(&str) -> String,
    ) -> Result<Answer, ConfigError> {
        let span = builtin.span();
        match builtin.get_ref().as_str() {
            "greeting" => match &service.text {
                Some(text) => Ok(Answer::Greeting {
                    text: text.get_ref().clone(),
                }),
                None => Err(self.error(
                    Some(span),
                    &at("text"),
                    "a greeting needs its `text`".into(),
                )),
            },
            "echo" => Ok(Answer::Echo),
            "drop" => match &service.directory {
                Some(dir) if dir.get_ref().is_dir() => Ok(Answer::Drop {
                    directory: dir.get_ref().clone(),
                }),
                Some(dir) => Err(self.error(
                    Some(dir.span()),
                    &at("directory"),
                    format!("{} is not a directory", dir.get_ref().display()),
                )),
                None => Err(self.error(
                    Some(span),
                    &at("directory"),
                    "a file drop needs its `directory`".into(),
                )),
            },
            other => Err(self.error(
                Some(span),
                &at("builtin"),
                format!("{other:?}: write \"greeting\", \"echo\" or \"drop\""),
            )),
        }
    }

    /// The index of the port `name` names.
    fn port_named(
        &self,
        name: &Spanned<String>,
        ports: &[PortSpec],
        key: &str,
    ) -> Result<usize, ConfigError> {
        ports
            .iter()
            .position(|p| &p.name == name.get_ref())
            .ok_or_else(|| {
                let names: Vec<String> = ports.iter().map(|p| format!("{:?}", p.name)).collect();
                self.error(
                    Some(name.span()),
                    key,
                    format!(
                        "no port named {:?} (ports: {})",
                        name.get_ref(),
                        names.join(", ")
                    ),
                )
            })
    }

    fn beacon(
        &self,
        i: usize,
        beacon: &BeaconFile,
        ports: &[PortSpec],
        station: Option<Address>,
    ) -> Result<BeaconSpec, ConfigError> {
        let at = |key: &str| format!("beacon[{}].{key}", i + 1);
        let port = self.port_named(&beacon.port, ports, &at("port"))?;
        let from = match &beacon.from {
            Some(f) => self.callsign(f, &at("from"))?,
            None => match station.or_else(|| ports[port].callsigns.first().copied()) {
                Some(c) => c,
                None => {
                    return Err(self.error(
                        Some(beacon.port.span()),
                        &at("from"),
                        "no source: give `from`, [station] callsign or the port's callsigns".into(),
                    ))
                }
            },
        };
        let to = match &beacon.to {
            Some(t) => self.callsign(t, &at("to"))?,
            None => "ID"
                .parse()
                .map_err(|e| self.error(None, &at("to"), format!("{e}")))?,
        };
        let mut via = Vec::new();
        if let Some(list) = &beacon.via {
            if list.get_ref().len() > MAX_DIGIPEATERS {
                return Err(self.error(
                    Some(list.span()),
                    &at("via"),
                    format!(
                        "{} digipeaters; AX.25 allows at most {MAX_DIGIPEATERS} (v2.2 3.12.5)",
                        list.get_ref().len()
                    ),
                ));
            }
            for call in list.get_ref() {
                via.push(self.callsign(call, &at("via"))?);
            }
        }
        let text = beacon.text.get_ref().clone();
        if text.is_empty() || text.len() > MAX_BEACON_TEXT {
            return Err(self.error(
                Some(beacon.text.span()),
                &at("text"),
                format!(
                    "{} octets; a beacon's text is 1 to {MAX_BEACON_TEXT}",
                    text.len()
                ),
            ));
        }
        let every = Duration::from_secs(*beacon.every_s.get_ref());
        if every < MIN_BEACON_INTERVAL {
            return Err(self.error(
                Some(beacon.every_s.span()),
                &at("every-s"),
                format!(
                    "{} s: at least {} s between beacons",
                    every.as_secs(),
                    MIN_BEACON_INTERVAL.as_secs()
                ),
            ));
        }
        Ok(BeaconSpec {
            port,
            from,
            to,
            via,
            text,
            every,
        })
    }
}

/// serde's words for the types it expected (`u8`, `sequence`) in the
/// words of the file (a whole number from 0 to 255, a list).
fn plain_words(message: &str) -> String {
    const WORDS: [(&str, &str); 9] = [
        ("expected u8", "expected a whole number from 0 to 255"),
        ("expected u16", "expected a whole number from 0 to 65535"),
        (
            "expected u32",
            "expected a whole number from 0 to 4294967295",
        ),
        ("expected u64", "expected a whole number, 0 or more"),
        ("expected usize", "expected a whole number, 0 or more"),
        ("expected a sequence", "expected a list"),
        ("expected path string", "expected a path (a string)"),
        ("invalid type: map", "invalid type: table"),
        ("invalid type: sequence", "invalid type: list"),
    ];
    WORDS
        .iter()
        .fold(message.to_string(), |m, (from, to)| m.replace(from, to))
}

/// The field a "missing field `NAME`" message is about.
fn missing_field(message: &str) -> Option<&str> {
    message
        .strip_prefix("missing field `")
        .and_then(|rest| rest.strip_suffix('`'))
}

/// `program`, if it names an executable file (directly, or in PATH).
pub fn find_program(program: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let executable = |p: &Path| {
        p.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        let path = PathBuf::from(program);
        return executable(&path).then_some(path);
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(program))
            .find(|p| executable(p))
    })
}

/// Whether two ports would open the same TNC: one serial device (the
/// station opens it once for each port, and a serial line is opened by
/// one program at a time), or one TCP address and KISS port (each would
/// take the other's frames).
fn same_tnc(a: &PortSpec, b: &PortSpec) -> bool {
    match (&a.kiss, &b.kiss) {
        (KissAddress::Serial { device: x, .. }, KissAddress::Serial { device: y, .. }) => x == y,
        (x, y) => x == y && a.agw.kiss.port == b.agw.kiss.port,
    }
}
