//! `linklab dtn`: a DTN node ([`linklab_dtnnode`]) and the two applications
//! that use it, `send` (a file as one bundle, with the delivery report
//! awaited and timed) and `recv` (bundles for an endpoint, to files).

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::anyhow;
use clap::{Args, Subcommand};
use linklab_dtn::{Eid, StatusKind};
use linklab_dtnnode::app::Message;
use linklab_dtnnode::{
    AppAddress, Ax25Options, Ax25PeerSpec, Ax25ViaSpec, BundleRef, Client, NodeConfig, NormOptions,
    NormPeerSpec, PeerSpec, ReportNotice, RouteSpec,
};
use linklab_io::KissAddress;
use linklab_wire::ax25::{same_station, Address};

use crate::options::{via_error, LinkArgs, TncArgs};
use crate::runtime::block_on;
use crate::usage::usage;

/// DTN time (RFC 9171 4.2.6) is counted from 2000-01-01 00:00 UTC.
const DTN_EPOCH_UNIX_MS: u64 = 946_684_800_000;

/// `linklab dtn` and its actions.
#[derive(Args)]
pub struct DtnArgs {
    #[command(subcommand)]
    action: Action,
}

#[derive(Subcommand)]
enum Action {
    /// Run a DTN node: a BPv7 bundle agent with a store on disk, TCPCLv4
    /// sessions to its neighbours and a socket for applications.
    Node(Box<NodeArgs>),
    /// Send a file as one bundle through a node.
    Send(SendArgs),
    /// Receive bundles for an endpoint of a node and write them to files.
    Recv(RecvArgs),
}

#[derive(Args)]
struct NodeArgs {
    /// This node's ID: ipn:N.0 or dtn://name/.
    #[arg(long, value_name = "EID")]
    eid: String,
    /// Directory of the bundle store (created if missing).
    #[arg(long, value_name = "DIR")]
    store: PathBuf,
    /// Accept TCPCLv4 sessions on this address (port 0: any free port,
    /// printed at start).
    #[arg(long, value_name = "ADDR:PORT")]
    tcpcl_listen: Option<String>,
    /// A neighbour to keep a TCPCLv4 session with (reconnecting with
    /// backoff), and optionally the destinations routed to it, e.g.
    /// tcpcl:127.0.0.1:4556=ipn:2.* (repeat for more). Endpoints of the
    /// neighbour's own node ID are routed to it anyway.
    #[arg(long = "peer", value_name = "tcpcl:HOST:PORT[=PATTERN]", value_parser = parse_peer)]
    peers: Vec<PeerSpec>,
    /// Run the AX.25 connected-mode convergence layer on this KISS TNC:
    /// tcp:HOST:PORT, serial:DEVICE:BAUD or axudp:BIND@PEER. Incoming AX.25 connections
    /// are accepted. The link and TNC options are those of `linklab send`
    /// and `listen`, with the same defaults.
    #[arg(long, value_name = "ADDRESS", requires = "mycall")]
    kiss: Option<KissAddress>,
    /// With --kiss: this node's callsign and SSID, e.g. N0CALL-2.
    #[arg(long, value_name = "CALL", requires = "kiss")]
    mycall: Option<Address>,
    /// With --kiss: a neighbour station, connected to when a bundle for a
    /// destination matching PATTERN is to go, e.g. N0CALL-3=ipn:3.*
    /// (repeat for more).
    #[arg(long = "ax25-peer", value_name = "CALL=PATTERN", requires = "kiss",
          value_parser = parse_ax25_peer)]
    ax25_peers: Vec<Ax25PeerSpec>,
    /// With --ax25-peer: connect to the neighbour CALL through these
    /// digipeaters, in order (comma separated, at most 8), e.g.
    /// N0CALL-3=DIGI-1,RELAY (repeat for more neighbours). Links a station
    /// opens through digipeaters are answered through the reversed path.
    #[arg(long = "via", value_name = "CALL=DIGI,...", requires = "ax25_peers",
          value_parser = parse_ax25_via)]
    via: Vec<Ax25ViaSpec>,
    /// With --kiss: the receiver acknowledges after every N segments (and
    /// at the end of each bundle).
    #[arg(long, value_name = "N", default_value_t = linklab_dtnnode::cl::ax25::DEFAULT_ACK_WINDOW,
          requires = "kiss", value_parser = clap::value_parser!(u32).range(1..))]
    ack_window: u32,
    /// With --kiss: set up links with SABME (AX.25 v2.2, modulo 128,
    /// falling back to SABM) instead of SABM. Modulo 8 is the default here
    /// as in `send` and `connect`; a link to a peer that asks for modulo
    /// 128 is accepted either way. For big bundles on a good channel,
    /// --mod128 --srej (k = 32 by default) fills the channel better than
    /// modulo 8's k = 4.
    #[arg(long, requires = "kiss")]
    mod128: bool,
    #[command(flatten)]
    link: LinkArgs,
    #[command(flatten)]
    tnc: TncArgs,
    /// Run the NORM convergence layer (RFC 5740 over UDP) on this address.
    #[arg(long, value_name = "ADDR:PORT")]
    norm_bind: Option<std::net::SocketAddr>,
    /// With --norm-bind: a neighbour over NORM, its node ID and UDP
    /// address, e.g. ipn:2.0=127.0.0.1:4560 (repeat for more).
    #[arg(long = "norm-peer", value_name = "NODE=ADDR:PORT", requires = "norm_bind",
          value_parser = parse_norm_peer)]
    norm_peers: Vec<NormPeerSpec>,
    /// With --norm-bind: the fixed NORM rate in bit/s, IP and UDP headers
    /// counted (the D-STAR data rate of 128 kbit/s by default), or cc for
    /// NORM-CC (RFC 5740 5.5) starting at 128 kbit/s.
    #[arg(long, value_name = "BIT/S|cc", default_value = "128000", requires = "norm_bind",
          value_parser = linklab_dtnnode::options::parse_norm_rate)]
    norm_rate: linklab_dtnnode::options::NormRate,
    /// A static route: destinations matching PATTERN (*, ipn:N.*,
    /// dtn://node/* or an endpoint ID) go to the neighbour with node ID
    /// NODE, over any session with it (repeat for more).
    #[arg(long = "route", value_name = "PATTERN=NODE", value_parser = parse_route)]
    routes: Vec<RouteSpec>,
    /// Where applications connect: a Unix socket path or a loopback
    /// ADDR:PORT.
    #[arg(long, value_name = "PATH|ADDR:PORT", value_parser = parse_app)]
    app_socket: AppAddress,
    /// Seconds a bundle whose transfer failed waits before it goes again,
    /// 1-86400.
    #[arg(long, value_name = "S", default_value_t = 30,
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    retry_after: u64,
}

#[derive(Args)]
struct SendArgs {
    /// The file to send (its whole content is the bundle's payload); `-`
    /// for standard input.
    file: PathBuf,
    /// The destination endpoint, e.g. ipn:2.1 or dtn://b/files.
    dest: String,
    /// The node's application socket (PATH or loopback ADDR:PORT).
    #[arg(long, value_name = "SOCKET", value_parser = parse_app)]
    node: AppAddress,
    /// Ask for the delivery status report, wait for it and print the
    /// round-trip time.
    #[arg(long)]
    report: bool,
    /// Bundle lifetime in seconds.
    #[arg(long, value_name = "S", default_value_t = 3600,
          value_parser = clap::value_parser!(u64).range(1..))]
    lifetime: u64,
    /// Source endpoint (an endpoint of the node); by default one of its
    /// own per process: ipn:N.PID or dtn://name/send-PID.
    #[arg(long, value_name = "EID")]
    source: Option<String>,
    /// With --report: seconds to wait for the report.
    #[arg(long, value_name = "S", default_value_t = 60)]
    wait: u64,
}

#[derive(Args)]
struct RecvArgs {
    /// The endpoint to receive for, an endpoint of the node.
    #[arg(long, value_name = "EID")]
    endpoint: String,
    /// Where to write: an existing directory (one file per bundle, named
    /// CREATED.SEQ-SOURCE) or a new file (the first bundle; later ones to
    /// FILE.2, FILE.3, ...). No file is overwritten: a name taken gets a
    /// suffix .1, .2, ...
    #[arg(long, value_name = "FILE|DIR")]
    out: PathBuf,
    /// Exit after this many bundles (otherwise run until the node stops or
    /// Ctrl-C).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    count: Option<u64>,
    /// The node's application socket (PATH or loopback ADDR:PORT).
    #[arg(long, value_name = "SOCKET", value_parser = parse_app)]
    node: AppAddress,
}

fn parse_peer(text: &str) -> Result<PeerSpec, String> {
    text.parse()
}

fn parse_ax25_peer(text: &str) -> Result<Ax25PeerSpec, String> {
    text.parse()
}

fn parse_ax25_via(text: &str) -> Result<Ax25ViaSpec, String> {
    text.parse()
}

fn parse_norm_peer(text: &str) -> Result<NormPeerSpec, String> {
    text.parse()
}

fn parse_route(text: &str) -> Result<RouteSpec, String> {
    text.parse()
}

fn parse_app(text: &str) -> Result<AppAddress, String> {
    text.parse()
}

/// `text` as an endpoint ID; a usage error naming `what` (the flag or
/// argument) and the two forms if it is not one. The parser's own error
/// says nothing more ("Parse error: ").
fn parse_eid(what: &str, text: &str) -> anyhow::Result<Eid> {
    text.parse::<Eid>().map_err(|_| {
        usage(format!(
            "{what} {text:?} is not an endpoint ID: write ipn:NODE.SERVICE (e.g. ipn:2.1) \
             or dtn://NODE/SERVICE (e.g. dtn://b/files)"
        ))
    })
}

/// Runs `linklab dtn ACTION`.
pub fn run(args: DtnArgs) -> anyhow::Result<()> {
    match args.action {
        Action::Node(a) => node(*a),
        Action::Send(a) => block_on(send(a)),
        Action::Recv(a) => block_on(recv(a)),
    }
}

fn node(a: NodeArgs) -> anyhow::Result<()> {
    if a.kiss.is_none() {
        let given = a
            .link
            .first_given()
            .or(a.tnc.first_given())
            .or(a.tnc.monitor.then_some("--monitor"));
        if let Some(option) = given {
            return Err(usage(format!(
                "{option} needs --kiss <ADDRESS>: it sets the AX.25 links made over a KISS TNC"
            )));
        }
    }
    let node_id = parse_eid("--eid", &a.eid)?;
    if !node_id.is_admin_endpoint() {
        return Err(usage(format!(
            "--eid {node_id} is not a node ID (use ipn:N.0 or dtn://name/)"
        )));
    }
    if a.tcpcl_listen.is_none() && a.peers.is_empty() && a.kiss.is_none() && a.norm_bind.is_none() {
        return Err(usage(
            "a node needs --tcpcl-listen, --kiss or at least one --peer (or --norm-bind) to reach other nodes"
                .into(),
        ));
    }
    let norm = a.norm_bind.map(|bind| NormOptions {
        bind,
        peers: a.norm_peers,
        rate: a.norm_rate,
    });
    let ax25 = match a.kiss.zip(a.mycall) {
        Some((kiss, mycall)) => {
            let link = a.link.config(crate::modulus(a.mod128), a.tnc.bitrate)?;
            let peers = ax25_paths(&mycall, a.ax25_peers, &a.via)?;
            linklab_ax25cl::Config::new("-")
                .fit_frame(link.n1)
                .map_err(|e| usage(format!("--n1: {e}")))?;
            Some(Ax25Options {
                kiss,
                params: a.tnc.params()?,
                air: a.tnc.air()?,
                monitor: a.tnc.monitor,
                mycall,
                link,
                peers,
                ack_window: a.ack_window,
            })
        }
        None => None,
    };
    let config = NodeConfig {
        node_id,
        store: a.store,
        tcpcl_listen: a.tcpcl_listen,
        peers: a.peers,
        ax25,
        norm,
        routes: a.routes,
        app: a.app_socket,
        retry_after: Duration::from_secs(a.retry_after),
    };
    linklab_dtnnode::run(config).map_err(|e| match e {
        linklab_dtnnode::NodeError::Config(text) => usage(text),
        other => anyhow!(other),
    })
}

/// The AX.25 neighbours with the digipeater paths of `--via`, checked as
/// `linklab connect --via` checks its path; a usage error naming the
/// `--via` option that cannot work.
fn ax25_paths(
    mycall: &Address,
    mut peers: Vec<Ax25PeerSpec>,
    paths: &[Ax25ViaSpec],
) -> anyhow::Result<Vec<Ax25PeerSpec>> {
    for path in paths {
        let option = format!(
            "--via {}={}",
            path.call,
            path.via
                .iter()
                .map(Address::to_string)
                .collect::<Vec<_>>()
                .join(",")
        );
        let Some(peer) = peers.iter_mut().find(|p| same_station(&p.call, &path.call)) else {
            return Err(usage(format!(
                "{option}: {} is not an --ax25-peer; a path is given for a neighbour the node connects to",
                path.call
            )));
        };
        if !peer.via.is_empty() {
            return Err(usage(format!(
                "{option}: a second path for {}; give one --via per neighbour",
                path.call
            )));
        }
        if let Some(why) = via_error(mycall, &peer.call, &path.via) {
            return Err(usage(format!("{option}: {why}")));
        }
        peer.via.clone_from(&path.via);
    }
    Ok(peers)
}

/// DTN time now, in milliseconds.
fn dtn_now() -> u64 {
    let unix_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    unix_ms.saturating_sub(DTN_EPOCH_UNIX_MS)
}

/// This process's own source endpoint on node `node`.
fn default_source(node: &str) -> anyhow::Result<String> {
    let pid = std::process::id();
    if let Some(number) = node.strip_prefix("ipn:").and_then(|n| n.strip_suffix(".0")) {
        return Ok(format!("ipn:{number}.{pid}"));
    }
    if node.starts_with("dtn://") {
        return Ok(format!("{}/send-{pid}", node.trim_end_matches('/')));
    }
    Err(anyhow!(
        "the node's ID {node} is neither ipn: nor dtn:; give --source"
    ))
}

async fn send(a: SendArgs) -> anyhow::Result<()> {
    let dest = parse_eid("destination", &a.dest)?;
    if let Some(source) = &a.source {
        parse_eid("--source", source)?;
    }
    let payload = crate::input::read(&a.file).map_err(crate::usage::input_file)?;
    let mut client = Client::connect(&a.node).await?;
    let source = match a.source {
        Some(source) => source,
        None => default_source(client.node_id())?,
    };
    if a.report {
        // The reports come to the source endpoint.
        client.register(&source).await?;
    }
    let mut request = Message::new("SEND")
        .with("dest", &dest)
        .with("source", &source)
        .with("lifetime", a.lifetime);
    if a.report {
        request = request.with("reports", "delivered,deleted");
    }
    let size = payload.len();
    let started = std::time::Instant::now();
    let bundle = client.send(&request.with_body(payload)).await?;
    println!("sent {size} bytes to {dest} as bundle {bundle}");
    if !a.report {
        return Ok(());
    }
    let wait = Duration::from_secs(a.wait);
    let outcome = tokio::time::timeout(wait, async {
        while let Some(message) = client.next().await? {
            if message.verb != "REPORT" {
                continue;
            }
            let report = ReportNotice::parse(&message)?;
            if report.subject != bundle {
                continue;
            }
            let elapsed = started.elapsed().as_secs_f64() * 1000.0;
            println!(
                "got {} byte report from [{}]: time={elapsed:.1} ms ({})",
                report.octets,
                report.from,
                describe(&report, &bundle)
            );
            for (kind, _) in &report.statuses {
                match kind {
                    StatusKind::Delivered => return Ok(()),
                    StatusKind::Deleted => {
                        return Err(anyhow!(
                            "{} deleted the bundle ({})",
                            report.from,
                            report.reason
                        ))
                    }
                    _ => {}
                }
            }
        }
        Err(anyhow!(
            "the node closed the connection before the report came"
        ))
    })
    .await;
    outcome.unwrap_or_else(|_| {
        Err(anyhow!(
            "no delivery report for bundle {bundle} within {} s",
            a.wait
        ))
    })
}

/// The statuses of a report, with their times relative to the bundle's
/// creation.
fn describe(report: &ReportNotice, bundle: &BundleRef) -> String {
    let parts: Vec<String> = report
        .statuses
        .iter()
        .map(|(kind, time)| {
            let name = linklab_dtnnode::report::kind_name(*kind);
            match time {
                Some(ms) if bundle.created != 0 => format!(
                    "{name} at DTN time {ms}, {} ms after creation",
                    ms.saturating_sub(bundle.created)
                ),
                Some(ms) => format!("{name} at DTN time {ms}"),
                None => name.to_string(),
            }
        })
        .collect();
    parts.join("; ")
}

/// Where `recv` writes.
enum Out {
    Dir(PathBuf),
    File(PathBuf),
}

impl Out {
    fn path(&self, n: u64, bundle: &BundleRef) -> PathBuf {
        match self {
            Out::Dir(dir) => {
                let source: String = bundle
                    .source
                    .chars()
                    .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                    .collect();
                dir.join(format!("{}.{}-{source}", bundle.created, bundle.seq))
            }
            Out::File(file) if n == 1 => file.clone(),
            Out::File(file) => {
                let mut name = file.as_os_str().to_owned();
                name.push(format!(".{n}"));
                PathBuf::from(name)
            }
        }
    }
}

fn check_out(path: &Path) -> anyhow::Result<Out> {
    if path.is_dir() {
        return Ok(Out::Dir(path.to_path_buf()));
    }
    crate::new_file::refuse_existing("--out", path)?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !parent.is_dir() {
        return Err(usage(format!(
            "--out {}: {} is not a directory",
            path.display(),
            parent.display()
        )));
    }
    Ok(Out::File(path.to_path_buf()))
}

async fn recv(a: RecvArgs) -> anyhow::Result<()> {
    let endpoint = parse_eid("--endpoint", &a.endpoint)?;
    let out = check_out(&a.out)?;
    let mut client = Client::connect(&a.node).await?;
    client.register(&endpoint.to_string()).await?;
    eprintln!("receiving for {endpoint} on {}", client.node_id());
    let mut received = 0;
    while a.count.is_none_or(|count| received < count) {
        let Some(message) = client.next().await? else {
            return Err(anyhow!("the node closed the connection"));
        };
        match message.verb.as_str() {
            "BUNDLE" => {
                let bundle = BundleRef::from_message(&message)?;
                let delivery: u64 = message.parsed("delivery")?;
                received += 1;
                let path = crate::new_file::write_new(&out.path(received, &bundle), &message.body)?;
                // Kept: only now may the node forget it.
                client.done(delivery).await?;
                let age = if bundle.created == 0 {
                    String::new()
                } else {
                    format!(
                        ", {} ms after creation",
                        dtn_now().saturating_sub(bundle.created)
                    )
                };
                println!(
                    "received {} bytes from {} (bundle {bundle}{age}) -> {}",
                    message.body.len(),
                    bundle.source,
                    path.display()
                );
            }
            "REPORT" => {
                let report = ReportNotice::parse(&message)?;
                println!(
                    "got {} byte report from [{}] on bundle {}: {}",
                    report.octets,
                    report.from,
                    report.subject,
                    describe(&report, &report.subject)
                );
            }
            _ => {}
        }
    }
    Ok(())
}
