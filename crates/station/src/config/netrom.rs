//! The `[netrom]` table: the station's NET/ROM node, checked into a
//! [`NetromSpec`]. What the kernel spread over `nrports` (the node's
//! callsign and alias), `nrbroadcast` (the ports NODES go out on, their
//! quality and minimum obsolescence) and `netromd`'s options (the
//! interval) is one table here; docs/station.md maps each field.

use linklab_core::Duration;
use linklab_netrom::routing::NeighbourKey;
use linklab_netrom::wire::Alias;
use linklab_netrom::NodeConfig;
use linklab_wire::ax25::same_station;
use serde::Deserialize;

use super::{ConfigError, NetromSpec, PortSpec, Reader, ServiceSpec, Spanned, TunSpec};

/// A circuit that receives nothing this long is disconnected, unless the
/// file says otherwise (LinBPQ's IDLETIME default).
const IDLE_TIMEOUT_S: u64 = 900;

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(super) struct NetromFile {
    callsign: Spanned<String>,
    alias: Spanned<String>,
    #[serde(default)]
    port: Vec<PortFile>,
    service: Option<Spanned<String>>,
    nodes_interval_s: Option<Spanned<u64>>,
    minimum_quality: Option<Spanned<u8>>,
    obsolescence: Option<Spanned<u8>>,
    broadcast_minimum_obsolescence: Option<Spanned<u8>>,
    routing: Option<bool>,
    ttl: Option<Spanned<u8>>,
    window: Option<Spanned<u8>>,
    transport_timeout_s: Option<Spanned<u64>>,
    transport_tries: Option<Spanned<u8>>,
    idle_timeout_s: Option<Spanned<u64>>,
    #[serde(default)]
    neighbour: Vec<NeighbourFile>,
    #[serde(default)]
    route: Vec<RouteFile>,
}

/// `[[netrom.port]]`: one port the node runs on.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct PortFile {
    name: Spanned<String>,
    quality: Spanned<u8>,
    broadcast: Option<bool>,
}

/// `[[netrom.neighbour]]`: a neighbour with a quality of its own.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct NeighbourFile {
    port: Spanned<String>,
    callsign: Spanned<String>,
    quality: Spanned<u8>,
    #[serde(default)]
    locked: bool,
}

/// `[[netrom.route]]`: a locked route.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RouteFile {
    destination: Spanned<String>,
    alias: Option<Spanned<String>>,
    port: Spanned<String>,
    neighbour: Spanned<String>,
    quality: Spanned<u8>,
}

impl Reader<'_> {
    pub(super) fn netrom(
        &self,
        file: &NetromFile,
        ports: &[PortSpec],
        services: &[ServiceSpec],
        tuns: &[TunSpec],
    ) -> Result<NetromSpec, ConfigError> {
        let call = self.callsign(&file.callsign, "netrom.callsign")?;
        let taken = ports
            .iter()
            .flat_map(|p| p.callsigns.iter().chain(&p.aliases))
            .chain(services.iter().map(|s| &s.callsign))
            .chain(tuns.iter().map(|t| &t.ax25.local))
            .any(|c| same_station(c, &call));
        if taken {
            return Err(self.error(
                Some(file.callsign.span()),
                "netrom.callsign",
                format!("{call} is used by a port, a service or a TUN device; the node needs a callsign of its own (its neighbours link to it)"),
            ));
        }
        let alias = self.alias(&file.alias, "netrom.alias")?;
        if file.port.is_empty() {
            return Err(self.error(
                Some(file.callsign.span()),
                "netrom.port",
                "no port: add a [[netrom.port]] with the port's name and the quality of the neighbours heard on it, e.g. name = \"vhf\", quality = 192".into(),
            ));
        }
        let mut node_ports: Vec<(usize, u8)> = Vec::new();
        let mut broadcast_ports = Vec::new();
        for (i, p) in file.port.iter().enumerate() {
            let at = |key: &str| format!("netrom.port[{}].{key}", i + 1);
            let index = self.port_named(&p.name, ports, &at("name"))?;
            if node_ports.iter().any(|(q, _)| *q == index) {
                return Err(self.error(
                    Some(p.name.span()),
                    &at("name"),
                    format!("port {:?} is given above already", p.name.get_ref()),
                ));
            }
            node_ports.push((index, *p.quality.get_ref()));
            if p.broadcast.unwrap_or(true) {
                broadcast_ports.push(index);
            }
        }
        let node_port = |name: &Spanned<String>, key: &str| {
            let index = self.port_named(name, ports, key)?;
            if node_ports.iter().any(|(q, _)| *q == index) {
                Ok(index)
            } else {
                Err(self.error(
                    Some(name.span()),
                    key,
                    format!(
                        "the node does not run on port {:?}: add it as a [[netrom.port]]",
                        name.get_ref()
                    ),
                ))
            }
        };
        let mut neighbours = Vec::new();
        for (i, n) in file.neighbour.iter().enumerate() {
            let at = |key: &str| format!("netrom.neighbour[{}].{key}", i + 1);
            let key = NeighbourKey {
                port: node_port(&n.port, &at("port"))?,
                call: self.callsign(&n.callsign, &at("callsign"))?,
            };
            neighbours.push((key, *n.quality.get_ref(), n.locked));
        }
        let mut routes = Vec::new();
        for (i, r) in file.route.iter().enumerate() {
            let at = |key: &str| format!("netrom.route[{}].{key}", i + 1);
            let destination = self.callsign(&r.destination, &at("destination"))?;
            let alias = match &r.alias {
                Some(a) => self.alias(a, &at("alias"))?,
                None => Alias::BLANK,
            };
            let neighbour = NeighbourKey {
                port: node_port(&r.port, &at("port"))?,
                call: self.callsign(&r.neighbour, &at("neighbour"))?,
            };
            let quality = *r.quality.get_ref();
            if quality == 0 {
                return Err(self.error(
                    Some(r.quality.span()),
                    &at("quality"),
                    "a route of quality 0 is never used: give 1-255".into(),
                ));
            }
            routes.push((destination, alias, neighbour, quality));
        }
        let service = match &file.service {
            Some(s) => {
                let call = self.callsign(s, "netrom.service")?;
                if !services.iter().any(|x| same_station(&x.callsign, &call)) {
                    return Err(self.error(
                        Some(s.span()),
                        "netrom.service",
                        format!(
                            "no [[service]] answers {call}: name one of the services' callsigns"
                        ),
                    ));
                }
                Some(call)
            }
            None => None,
        };
        let mut node = NodeConfig::new(call, alias, broadcast_ports);
        node.routing_control = file.routing.unwrap_or(true);
        if let Some(s) = &file.nodes_interval_s {
            let secs = *s.get_ref();
            if secs < 60 {
                return Err(self.error(
                    Some(s.span()),
                    "netrom.nodes-interval-s",
                    format!("{secs} s: NODES broadcasts at most once a minute (the usual interval is 1800 to 3600 s)"),
                ));
            }
            node.nodes_interval = Duration::from_secs(secs);
        }
        let routing = &mut node.routing;
        if let Some(q) = &file.minimum_quality {
            routing.minimum_quality = (*q.get_ref()).max(1);
        }
        if let Some(o) = &file.obsolescence {
            routing.obsolescence_count_initialiser = self.at_least_one(o, "netrom.obsolescence")?;
        }
        if let Some(o) = &file.broadcast_minimum_obsolescence {
            routing.broadcast_minimum_obsolescence = *o.get_ref();
        }
        let transport = &mut node.transport;
        transport.accept_incoming = service.is_some();
        if let Some(t) = &file.ttl {
            transport.network_ttl_initialiser = self.at_least_one(t, "netrom.ttl")?;
        }
        if let Some(w) = &file.window {
            let window = *w.get_ref();
            if !(1..=127).contains(&window) {
                return Err(self.error(
                    Some(w.span()),
                    "netrom.window",
                    format!("{window}: a circuit's window is 1-127 (the usual is 4)"),
                ));
            }
            transport.transport_requested_window_size = window;
        }
        if let Some(t) = &file.transport_timeout_s {
            transport.transport_timeout = Duration::from_secs((*t.get_ref()).max(1));
        }
        if let Some(n) = &file.transport_tries {
            transport.transport_maximum_tries = self.at_least_one(n, "netrom.transport-tries")?;
        }
        // A circuit whose far end vanished (its disconnect request lost
        // with a node on the way) would hold its service's session for
        // ever: LinBPQ's IDLETIME, 900 s, unless the file says (0: none,
        // as the kernel).
        let idle = file
            .idle_timeout_s
            .as_ref()
            .map_or(IDLE_TIMEOUT_S, |t| *t.get_ref());
        transport.transport_no_activity_timeout = (idle > 0).then(|| Duration::from_secs(idle));
        Ok(NetromSpec {
            node,
            ports: node_ports,
            neighbours,
            routes,
            service,
        })
    }

    fn alias(&self, value: &Spanned<String>, key: &str) -> Result<Alias, ConfigError> {
        value
            .get_ref()
            .parse::<Alias>()
            .map_err(|e| self.error(Some(value.span()), key, e.to_string()))
    }

    fn at_least_one(&self, value: &Spanned<u8>, key: &str) -> Result<u8, ConfigError> {
        match *value.get_ref() {
            0 => Err(self.error(Some(value.span()), key, "0: give at least 1".into())),
            n => Ok(n),
        }
    }
}
