//! `/metrics`: the status report in the OpenMetrics text format (which
//! Prometheus reads), written by the `prometheus-client` crate from a
//! registry filled afresh for each scrape. Names follow the Prometheus
//! conventions: the `linklab_` prefix, base units in the name
//! (`_bytes`, `_seconds`), `_total` on counters. The table of names is
//! in docs/station.md, "Status page and metrics".

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::{Registry, Unit};
use std::sync::atomic::AtomicU64;

use crate::status::{Stats, StatusReport};

/// The media type of the text [`render`] writes.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

type Labels = Vec<(String, String)>;

/// A link counter: its name (after `linklab_link_` or `linklab_links_`),
/// unit, help and value.
type LinkMetric = (&'static str, Option<Unit>, &'static str, fn(&Stats) -> u64);

const LINK_METRICS: [LinkMetric; 12] = [
    (
        "i_frames_sent",
        None,
        "I frames sent, those sent again included",
        |c| c.i_frames_sent,
    ),
    ("i_frames_received", None, "I frames received", |c| {
        c.i_frames_received
    }),
    (
        "sent",
        Some(Unit::Bytes),
        "information octets of the I frames sent",
        |c| c.i_octets_sent,
    ),
    (
        "received",
        Some(Unit::Bytes),
        "information octets of the I frames received",
        |c| c.i_octets_received,
    ),
    (
        "i_frames_resent",
        None,
        "I frames sent again (after REJ, SREJ or T1 recovery)",
        |c| c.i_frames_resent,
    ),
    (
        "rej_sent",
        None,
        "REJ frames sent (AX.25 v2.2 6.4.6)",
        |c| c.rej_sent,
    ),
    ("rej_received", None, "REJ frames received", |c| {
        c.rej_received
    }),
    (
        "srej_sent",
        None,
        "SREJ frames sent (AX.25 v2.2 6.4.7)",
        |c| c.srej_sent,
    ),
    ("srej_received", None, "SREJ frames received", |c| {
        c.srej_received
    }),
    (
        "t1_expiries",
        None,
        "expiries of T1, the acknowledgement timer",
        |c| c.t1_expiries,
    ),
    (
        "state_changes",
        None,
        "link state changes (AX.25 v2.2 C4.3)",
        |c| c.state_changes,
    ),
    (
        "late_frames",
        None,
        "frames dropped as late: overtaken on a path that reorders (modulo 128)",
        |c| c.late_frames,
    ),
];

/// `report` as OpenMetrics text.
pub fn render(report: &StatusReport) -> String {
    let mut registry = Registry::with_prefix("linklab");
    let port = |n: usize| vec![("port".to_string(), n.to_string())];

    gauge_f(
        &mut registry,
        "uptime",
        Some(Unit::Seconds),
        "seconds since the station started",
    )
    .get_or_create(&Vec::new())
    .set(report.uptime_s);
    gauge(
        &mut registry,
        "clients",
        None,
        "AGWPE and KISS clients connected",
    )
    .get_or_create(&Vec::new())
    .set(i64::try_from(report.clients).unwrap_or(i64::MAX));

    let up = gauge(
        &mut registry,
        "port_up",
        None,
        "1 if the port's TNC is connected",
    );
    let frames_sent = counter(
        &mut registry,
        "port_frames_sent",
        None,
        "frames sent on the port",
    );
    let frames_received = counter(
        &mut registry,
        "port_frames_received",
        None,
        "frames received on the port",
    );
    let sent = counter(
        &mut registry,
        "port_sent",
        Some(Unit::Bytes),
        "AX.25 octets sent on the port (no FCS)",
    );
    let received = counter(
        &mut registry,
        "port_received",
        Some(Unit::Bytes),
        "AX.25 octets received on the port (no FCS)",
    );
    let digipeated = counter(
        &mut registry,
        "port_digipeated_frames",
        None,
        "frames digipeated",
    );
    let busy = counter_f(
        &mut registry,
        "port_channel_busy",
        Some(Unit::Seconds),
        "estimated air time of the frames sent and heard (ports with a bitrate only)",
    );
    for p in &report.ports {
        let l = port(p.number);
        up.get_or_create(&l).set(i64::from(p.up));
        frames_sent.get_or_create(&l).inc_by(p.frames_sent);
        frames_received.get_or_create(&l).inc_by(p.frames_received);
        sent.get_or_create(&l).inc_by(p.octets_sent);
        received.get_or_create(&l).inc_by(p.octets_received);
        digipeated.get_or_create(&l).inc_by(p.digipeated);
        if p.air.bit_rate.is_some() {
            busy.get_or_create(&l).inc_by(p.air.busy_s);
        }
    }

    let links_up = gauge(
        &mut registry,
        "links",
        None,
        "links on the port, in any state",
    );
    for p in &report.ports {
        links_up.get_or_create(&port(p.number)).set(
            i64::try_from(report.links.iter().filter(|l| l.port == p.number).count()).unwrap_or(0),
        );
    }
    for (name, unit, help, value) in LINK_METRICS {
        let totals = counter(
            &mut registry,
            &format!("links_{name}"),
            unit.clone(),
            &format!("{help}, all links of the port, those gone included"),
        );
        for p in &report.ports {
            totals
                .get_or_create(&port(p.number))
                .inc_by(value(&p.air.links));
        }
        let each = counter(
            &mut registry,
            &format!("link_{name}"),
            unit,
            &format!("{help}, by link"),
        );
        for l in &report.links {
            let labels = vec![
                ("port".to_string(), l.port.to_string()),
                ("local".to_string(), l.local.clone()),
                ("remote".to_string(), l.remote.clone()),
            ];
            each.get_or_create(&labels).inc_by(value(&l.counters));
        }
    }

    let served = counter(
        &mut registry,
        "service_sessions_served",
        None,
        "connections served since the start",
    );
    let sessions = gauge(
        &mut registry,
        "service_sessions",
        None,
        "connections being served",
    );
    for s in &report.services {
        let l = vec![("service".to_string(), s.callsign.clone())];
        served.get_or_create(&l).inc_by(s.served);
        sessions
            .get_or_create(&l)
            .set(i64::try_from(s.sessions.len()).unwrap_or(i64::MAX));
    }

    let from_kernel = counter(
        &mut registry,
        "tun_datagrams_from_kernel",
        None,
        "datagrams from the kernel sent on",
    );
    let to_kernel = counter(
        &mut registry,
        "tun_datagrams_to_kernel",
        None,
        "datagrams handed to the kernel",
    );
    let dropped = counter(
        &mut registry,
        "tun_datagrams_dropped",
        None,
        "datagrams from the kernel dropped",
    );
    for t in &report.tuns {
        let l = vec![("device".to_string(), t.name.clone())];
        from_kernel.get_or_create(&l).inc_by(t.from_kernel);
        to_kernel.get_or_create(&l).inc_by(t.to_kernel);
        dropped.get_or_create(&l).inc_by(t.dropped);
    }
    let dtn_running = gauge(
        &mut registry,
        "dtn_running",
        None,
        "1 if the DTN node runs (no sample without [dtn])",
    );
    let stored = gauge(
        &mut registry,
        "dtn_stored_bundles",
        None,
        "bundles in the DTN node's store",
    );
    let contacts = gauge(
        &mut registry,
        "dtn_contacts",
        None,
        "neighbours with a session now",
    );
    let forwarded = counter(
        &mut registry,
        "dtn_bundles_forwarded",
        None,
        "bundles forwarded to a neighbour",
    );
    let delivered = counter(
        &mut registry,
        "dtn_bundles_delivered",
        None,
        "bundles delivered to local applications",
    );
    if let Some(dtn) = &report.dtn {
        let none = Vec::new();
        dtn_running.get_or_create(&none).set(i64::from(dtn.running));
        stored
            .get_or_create(&none)
            .set(i64::try_from(dtn.stored).unwrap_or(i64::MAX));
        contacts
            .get_or_create(&none)
            .set(i64::try_from(dtn.contacts.len()).unwrap_or(i64::MAX));
        forwarded.get_or_create(&none).inc_by(dtn.forwarded);
        delivered.get_or_create(&none).inc_by(dtn.delivered);
    }
    netrom(&mut registry, report);

    let mut text = String::new();
    // Writing to a String does not fail.
    let _ = encode(&mut text, &registry);
    text
}

/// The NET/ROM node's table sizes, circuits, and datagrams by what
/// became of them (no sample without `[netrom]`).
fn netrom(registry: &mut Registry, report: &StatusReport) {
    let destinations = gauge(
        registry,
        "netrom_destinations",
        None,
        "nodes in the NET/ROM node table with a route",
    );
    let neighbours = gauge(
        registry,
        "netrom_neighbours",
        None,
        "neighbours in the NET/ROM node table",
    );
    let circuits = gauge(registry, "netrom_circuits", None, "NET/ROM circuits open");
    let datagrams = counter(
        registry,
        "netrom_datagrams",
        None,
        "NET/ROM datagrams seen, by fate: delivered (to us), forwarded, ttl_expired, no_route, malformed",
    );
    let Some(n) = &report.netrom else {
        return;
    };
    let none = Vec::new();
    let count = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
    let routed = n.destinations.iter().filter(|d| !d.routes.is_empty());
    destinations.get_or_create(&none).set(count(routed.count()));
    neighbours
        .get_or_create(&none)
        .set(count(n.neighbours.len()));
    circuits.get_or_create(&none).set(count(n.circuits.len()));
    let d = n.datagrams;
    for (fate, value) in [
        ("delivered", d.delivered),
        ("forwarded", d.forwarded),
        ("ttl_expired", d.ttl_expired),
        ("no_route", d.no_route),
        ("malformed", d.malformed),
    ] {
        datagrams
            .get_or_create(&vec![("fate".to_string(), fate.to_string())])
            .inc_by(value);
    }
}

fn counter(
    registry: &mut Registry,
    name: &str,
    unit: Option<Unit>,
    help: &str,
) -> Family<Labels, Counter> {
    let family = Family::<Labels, Counter>::default();
    register(registry, name, unit, help, family.clone());
    family
}

fn counter_f(
    registry: &mut Registry,
    name: &str,
    unit: Option<Unit>,
    help: &str,
) -> Family<Labels, Counter<f64, AtomicU64>> {
    let family = Family::<Labels, Counter<f64, AtomicU64>>::default();
    register(registry, name, unit, help, family.clone());
    family
}

fn gauge(
    registry: &mut Registry,
    name: &str,
    unit: Option<Unit>,
    help: &str,
) -> Family<Labels, Gauge> {
    let family = Family::<Labels, Gauge>::default();
    register(registry, name, unit, help, family.clone());
    family
}

fn gauge_f(
    registry: &mut Registry,
    name: &str,
    unit: Option<Unit>,
    help: &str,
) -> Family<Labels, Gauge<f64, AtomicU64>> {
    let family = Family::<Labels, Gauge<f64, AtomicU64>>::default();
    register(registry, name, unit, help, family.clone());
    family
}

fn register(
    registry: &mut Registry,
    name: &str,
    unit: Option<Unit>,
    help: &str,
    metric: impl prometheus_client::registry::Metric,
) {
    match unit {
        Some(unit) => registry.register_with_unit(name, help, unit, metric),
        None => registry.register(name, help, metric),
    }
}
