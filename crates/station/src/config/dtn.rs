//! The `[dtn]` table: the DTN node a station runs on one of its ports,
//! checked into a [`DtnSpec`] (the node's own settings, as `linklab dtn
//! node` takes them on its command line).

use std::path::PathBuf;
use std::time::Duration;

use linklab_dtn::Eid;
use linklab_dtnnode::cl::ax25::DEFAULT_ACK_WINDOW;
use linklab_dtnnode::{AppAddress, Ax25Options, Ax25PeerSpec, NodeConfig, PeerSpec, RouteSpec};
use linklab_io::{AckMode, AirSettings, KissAddress, KissParams};
use linklab_wire::ax25::same_station;
use linklab_wire::kiss::Port;
use serde::Deserialize;

use super::{ConfigError, DtnSpec, PortSpec, Reader, ServiceSpec, Spanned, TunSpec};

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(super) struct DtnFile {
    port: Spanned<String>,
    eid: Spanned<String>,
    callsign: Spanned<String>,
    store: Spanned<PathBuf>,
    app_socket: Spanned<String>,
    #[serde(default)]
    ax25_peers: Vec<Spanned<String>>,
    tcpcl_listen: Option<Spanned<String>>,
    #[serde(default)]
    tcpcl_peers: Vec<Spanned<String>>,
    #[serde(default)]
    routes: Vec<Spanned<String>>,
    ack_window: Option<Spanned<u32>>,
    retry_after_s: Option<Spanned<u64>>,
}

impl Reader<'_> {
    pub(super) fn dtn(
        &self,
        d: &DtnFile,
        ports: &[PortSpec],
        services: &[ServiceSpec],
        tuns: &[TunSpec],
    ) -> Result<DtnSpec, ConfigError> {
        let port = self.port_named(&d.port, ports, "dtn.port")?;
        if port > 15 {
            return Err(self.error(
                Some(d.port.span()),
                "dtn.port",
                format!("port {} is beyond KISS port 15, the last the DTN node can reach through the station", port + 1),
            ));
        }
        let node_id: Eid = d.eid.get_ref().parse().map_err(|_| {
            self.error(
                Some(d.eid.span()),
                "dtn.eid",
                format!(
                    "{:?} is not a node ID: write ipn:N.0 or dtn://name/",
                    d.eid.get_ref()
                ),
            )
        })?;
        if !node_id.is_admin_endpoint() {
            return Err(self.error(
                Some(d.eid.span()),
                "dtn.eid",
                format!("{node_id} is not a node ID (use ipn:N.0 or dtn://name/)"),
            ));
        }
        if let Some(r) = d.retry_after_s.as_ref().filter(|r| *r.get_ref() == 0) {
            // A failed transfer offered again at once, with nothing to
            // wait for, could be offered to a session that has ended
            // faster than the session's end is heard.
            return Err(self.error(
                Some(r.span()),
                "dtn.retry-after-s",
                "0: a failed transfer waits at least 1 s before it goes again".into(),
            ));
        }
        let mycall = self.callsign(&d.callsign, "dtn.callsign")?;
        let spec = &ports[port];
        let taken = spec
            .callsigns
            .iter()
            .chain(&spec.aliases)
            .any(|c| same_station(c, &mycall))
            || services.iter().any(|s| same_station(&s.callsign, &mycall))
            || tuns.iter().any(|t| same_station(&t.ax25.local, &mycall));
        if taken {
            return Err(self.error(
                Some(d.callsign.span()),
                "dtn.callsign",
                format!("{mycall} is used by the port, a service or a TUN device; the DTN node needs a callsign of its own"),
            ));
        }
        let app: AppAddress = d
            .app_socket
            .get_ref()
            .parse()
            .map_err(|e: String| self.error(Some(d.app_socket.span()), "dtn.app-socket", e))?;
        let mut peers = Vec::new();
        for value in &d.ax25_peers {
            let key = "dtn.ax25-peers";
            let peer: Ax25PeerSpec = value
                .get_ref()
                .parse()
                .map_err(|e: String| self.error(Some(value.span()), key, e))?;
            if same_station(&peer.call, &mycall) {
                return Err(self.error(
                    Some(value.span()),
                    key,
                    format!("{} is the node's own callsign", peer.call),
                ));
            }
            peers.push(peer);
        }
        let mut tcpcl_peers = Vec::new();
        for value in &d.tcpcl_peers {
            tcpcl_peers.push(
                value
                    .get_ref()
                    .parse::<PeerSpec>()
                    .map_err(|e: String| self.error(Some(value.span()), "dtn.tcpcl-peers", e))?,
            );
        }
        let mut routes = Vec::new();
        for value in &d.routes {
            routes.push(
                value
                    .get_ref()
                    .parse::<RouteSpec>()
                    .map_err(|e: String| self.error(Some(value.span()), "dtn.routes", e))?,
            );
        }
        let ack_window = match &d.ack_window {
            Some(w) if *w.get_ref() == 0 => {
                return Err(self.error(
                    Some(w.span()),
                    "dtn.ack-window",
                    "0: an ACK_SEGMENT after every 1 or more segments".into(),
                ))
            }
            Some(w) => *w.get_ref(),
            None => DEFAULT_ACK_WINDOW,
        };
        let link = spec.agw.link.clone();
        linklab_ax25cl::Config::new("-")
            .fit_frame(link.n1)
            .map_err(|e| {
                self.error(
                    Some(d.port.span()),
                    "dtn.port",
                    format!("the port's n1: {e}"),
                )
            })?;
        let tcpcl_listen = match &d.tcpcl_listen {
            Some(l) => {
                self.socket(l, "dtn.tcpcl-listen")?;
                Some(l.get_ref().clone())
            }
            None => None,
        };
        let kiss_port = Port::new(u8::try_from(port).unwrap_or(15)).unwrap_or_default();
        Ok(DtnSpec {
            port,
            node: NodeConfig {
                node_id,
                store: d.store.get_ref().clone(),
                tcpcl_listen,
                peers: tcpcl_peers,
                ax25: Some(Ax25Options {
                    // Filled in by the driver.
                    kiss: KissAddress::Tcp {
                        host: "127.0.0.1".into(),
                        port: 0,
                    },
                    params: KissParams {
                        port: kiss_port,
                        txdelay: None,
                        persistence: None,
                        slot_time: None,
                        txtail: None,
                    },
                    // The station's KISS server passes frames on to the
                    // port without answering ACKMODE: the node estimates.
                    air: AirSettings {
                        ackmode: AckMode::Off,
                        ..AirSettings::default()
                    },
                    monitor: false,
                    mycall,
                    link,
                    peers,
                    ack_window,
                }),
                norm: None,
                routes,
                app,
                retry_after: Duration::from_secs(
                    d.retry_after_s.as_ref().map_or(30, |r| *r.get_ref()),
                ),
            },
        })
    }
}
