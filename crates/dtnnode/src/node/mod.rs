//! The node's driver: the [`Router`] (the node's logic, sans-IO), fed by
//! convergence layer sessions ([`crate::cl`]), application connections
//! ([`crate::app`]), the signals and the clock, until SIGINT or SIGTERM.
//!
//! Two threads. The reactor (a single-threaded tokio runtime on the
//! calling thread) does all socket I/O: it runs every session, listener
//! and application connection (`apps`), and takes the signals. The
//! agent thread (`agent`) owns the router, and so the [`Agent`] and its
//! store, with its own single-threaded runtime for its channels and
//! timers; it carries out the router's commands and prints its notices.
//! The agent commits to its [`Store`] synchronously inside its calls (a
//! redb commit with immediate
//! durability, which waits//! durability, which waits for the disk); on the reactor, one slow write
//! would stall every session until their peers' keepalives expired. On
//! its own thread, a slow write only delays the agent: sessions keep
//! reading, writing and sending KEEPALIVEs. Giving the agent's store
//! calls their own thread keeps the agent as it is, which a store with
//! asynchronous commits would not.
//!
//! The durability contract is the one of the channels in [`crate::cl`]:
//! a session acknowledges a received bundle (its last XFER_ACK, or the
//! AX.25 CL's) only once the agent thread answers that the bundle is
//! stored, which it does after the agent's commit returned. A TCPCL
//! session goes on meanwhile with only that XFER_ACK held.
//!
//! SIGINT or SIGTERM starts an orderly stop: no bundle is handed to a
//! session any more and no convergence layer makes or accepts a link;
//! each session is asked to end once the bundles on it are acknowledged
//! (or after 1 s), and the node exits once all have ended
//! (or after 3 s). A bundle not acknowledged stays in the
//! store for the next start.

use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use linklab_dtn::{Agent, Config, Eid, RedbStore, Store, StoreError};
use thiserror::Error;
use tokio::net::TcpListener;
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::{mpsc, oneshot};

use crate::cl::{ax25, norm, tcpcl, LinkEvent};
use crate::options::{AppAddress, Ax25Options, NormOptions, PeerSpec, RouteSpec};
use crate::router::Router;
use crate::watch::SharedWatch;

mod agent;
mod apps;

use agent::{spawn_agent, AgentDriver, Clock};
use apps::AppListener;

/// DTN time (RFC 9171 4.2.6) at the Unix epoch's 2000-01-01.
const DTN_EPOCH_UNIX_MS: u64 = 946_684_800_000;

/// How a node is set up.
#[derive(Debug, Clone)]
pub struct NodeConfig {
    /// The node ID: `ipn:N.0` or `dtn://name/`.
    pub node_id: Eid,
    /// The directory of the bundle store (`bundles.redb` in it).
    pub store: PathBuf,
    /// Where to accept TCPCL sessions.
    pub tcpcl_listen: Option<String>,
    /// Neighbours to connect to.
    pub peers: Vec<PeerSpec>,
    /// The AX.25 convergence layer over a KISS TNC.
    pub ax25: Option<Ax25Options>,
    /// The NORM convergence layer over UDP.
    pub norm: Option<NormOptions>,
    /// Static routes to neighbours by node ID.
    pub routes: Vec<RouteSpec>,
    /// Where applications connect.
    pub app: AppAddress,
    /// How long a bundle whose transfer failed waits before going again.
    pub retry_after: Duration,
}

/// Why the node could not start or had to stop.
#[derive(Debug, Error)]
pub enum NodeError {
    /// The configuration cannot work.
    #[error("{0}")]
    Config(String),
    /// A socket could not be opened.
    #[error("{what}")]
    Io {
        /// What was being done.
        what: String,
        /// The error.
        source: io::Error,
    },
    /// The bundle store failed (its message says so).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The agent's thread ended without a result: it panicked.
    #[error("the bundle agent's thread stopped unexpectedly")]
    AgentLost,
}

fn io_error(what: impl Into<String>) -> impl FnOnce(io::Error) -> NodeError {
    let what = what.into();
    move |source| NodeError::Io { what, source }
}

/// Runs a node until SIGINT or SIGTERM: socket I/O on this thread, the
/// agent and its store on another (see the module documentation).
pub fn run(config: NodeConfig) -> Result<(), NodeError> {
    runtime()?.block_on(run_async(config, None))
}

/// [`run`], keeping `watch` up to date while the node runs.
pub fn run_watched(config: NodeConfig, watch: SharedWatch) -> Result<(), NodeError> {
    runtime()?.block_on(run_async(config, Some(watch)))
}

/// A single-threaded tokio runtime.
fn runtime() -> Result<tokio::runtime::Runtime, NodeError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(io_error("cannot start the runtime"))
}

async fn run_async(config: NodeConfig, watch: Option<SharedWatch>) -> Result<(), NodeError> {
    // Checked before anything is opened.
    if let Some(options) = &config.ax25 {
        options
            .link
            .validate()
            .map_err(|e| NodeError::Config(format!("ax25: {e}")))?;
    }
    if config.store.exists() && !config.store.is_dir() {
        return Err(NodeError::Config(format!(
            "--store {} is not a directory: name a directory for the bundle store \
             (it is created if missing)",
            config.store.display()
        )));
    }
    // The directories this start creates, removed again if it fails.
    let created = config
        .store
        .ancestors()
        .take_while(|d| !d.as_os_str().is_empty() && !d.exists())
        .last();
    let mut started = false;
    let mut app_bound = false;
    let result = serve(&config, &mut started, &mut app_bound, watch).await;
    // Best effort: the start's own error is the one to report.
    if let (Err(_), false, Some(dir)) = (&result, started, created) {
        let _ = std::fs::remove_dir_all(dir);
    }
    // A start that failed after our socket was made leaves none behind.
    if let (Err(_), false, true, AppAddress::Unix(path)) =
        (&result, started, app_bound, &config.app)
    {
        let _ = std::fs::remove_file(path);
    }
    result
}

/// Opens the store and the sockets, sets `app_bound` once the
/// applications' socket is ours and `started` once they are all open, and
/// runs the node until it is stopped.
async fn serve(
    config: &NodeConfig,
    started: &mut bool,
    app_bound: &mut bool,
    watch: Option<SharedWatch>,
) -> Result<(), NodeError> {
    std::fs::create_dir_all(&config.store).map_err(io_error(format!(
        "cannot create the store directory {}",
        config.store.display()
    )))?;
    let store = RedbStore::open(&config.store.join("bundles.redb"))?;
    let clock = Clock::start();
    let unix_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let mut agent_config = Config::new(config.node_id.clone());
    agent_config.dtn_time_at_zero = unix_ms.saturating_sub(DTN_EPOCH_UNIX_MS);
    agent_config.retry_after = config.retry_after;
    let agent = Agent::open(agent_config, store).map_err(|e| match e {
        linklab_dtn::AgentError::Store(e) => NodeError::Store(e),
        other => NodeError::Config(other.to_string()),
    })?;
    let node_text = config.node_id.to_string();
    let session_config = tcpcl::session_config(&node_text);
    session_config
        .validate()
        .map_err(|e| NodeError::Config(e.to_string()))?;

    let (link_tx, link_rx) = mpsc::unbounded_channel();
    let (client_tx, client_rx) = mpsc::unbounded_channel();
    let mut driver = AgentDriver::new(Router::new(agent), clock);
    driver.watch = watch;
    keep_spooled(&mut driver, &config.store)?;
    for route in &config.routes {
        let next_hop = route.next_hop.to_string();
        driver.router.add_route(route.pattern.clone(), &next_hop);
    }

    let mut tasks = Vec::new();
    let mut listening = String::new();
    if let Some(address) = &config.tcpcl_listen {
        let listener = TcpListener::bind(address)
            .await
            .map_err(io_error(format!("cannot listen for TCPCL on {address}")))?;
        let local = listener.local_addr().map_err(io_error("TCPCL listener"))?;
        listening = format!(", tcpcl on {local}");
        tasks.push(tokio::spawn(tcpcl::listen(
            listener,
            session_config.clone(),
            config.store.clone(),
            link_tx.clone(),
        )));
    }
    let app_listener = AppListener::bind(&config.app).await?;
    *app_bound = true;
    eprintln!(
        "linklab dtn node {node_text}: store {} ({} bundles){listening}, applications on {}",
        config.store.display(),
        driver.router.stored(),
        app_listener.describe()
    );
    for peer in &config.peers {
        let link = driver.router.add_peer_link(peer.pattern.clone());
        tasks.push(tokio::spawn(tcpcl::dial(
            peer.address.clone(),
            session_config.clone(),
            link,
            config.store.clone(),
            link_tx.clone(),
        )));
    }
    if let Some(options) = &config.ax25 {
        tasks.push(tokio::spawn(start_ax25(
            options,
            &config.store,
            &node_text,
            &mut driver,
            &link_tx,
        )?));
    }
    if let Some(options) = &config.norm {
        tasks.push(tokio::spawn(
            start_norm(options, &node_text, &link_tx).await?,
        ));
    }
    tasks.push(tokio::spawn(app_listener.serve(client_tx, node_text)));
    drop(link_tx);

    let (stop, stop_rx) = oneshot::channel();
    let mut agent = spawn_agent(driver, link_rx, client_rx, stop_rx)?;
    let mut interrupt = signal(SignalKind::interrupt()).map_err(io_error("SIGINT handler"))?;
    let mut terminate = signal(SignalKind::terminate()).map_err(io_error("SIGTERM handler"))?;
    *started = true;
    // The agent thread's result is awaited in any case: a stop it no
    // longer hears (it has ended) changes nothing.
    let ended = tokio::select! {
        ended = &mut agent => ended,
        _ = interrupt.recv() => {
            let _ = stop.send(());
            agent.await
        }
        _ = terminate.recv() => {
            let _ = stop.send(());
            agent.await
        }
    };
    let result = ended.unwrap_or(Err(NodeError::AgentLost));
    for task in tasks {
        task.abort();
    }
    if let AppAddress::Unix(path) = &config.app {
        // Our socket only: never a file someone put there since.
        use std::os::unix::fs::FileTypeExt;
        if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_socket()) {
            let _ = std::fs::remove_file(path);
        }
    }
    result
}

/// Keeps as fragments the first octets of bundles that AX.25 links and
/// TCPCL sessions were bringing in when the node stopped, which their
/// senders were told they need not send again ([`crate::cl::spooled`]).
fn keep_spooled<S: Store>(driver: &mut AgentDriver<S>, dir: &Path) -> Result<(), NodeError> {
    let spooled = crate::cl::spooled(dir).map_err(io_error(format!(
        "cannot read the spools in {}",
        dir.display()
    )))?;
    for (path, octets) in spooled {
        driver.router.keep_spooled(driver.clock.now(), &octets)?;
        std::fs::remove_file(&path)
            .map_err(io_error(format!("cannot remove {}", path.display())))?;
    }
    while let Some(notice) = driver.router.poll_notice() {
        eprintln!("linklab dtn node: {notice}");
    }
    Ok(())
}

/// Sets up the AX.25 convergence layer: a link with a route for each
/// configured peer, dialled on the node's demand.
fn start_ax25(
    options: &Ax25Options,
    store: &Path,
    node: &str,
    driver: &mut AgentDriver<RedbStore>,
    events: &mpsc::UnboundedSender<LinkEvent>,
) -> Result<impl std::future::Future<Output = ()>, NodeError> {
    let mut cl = linklab_ax25cl::Config::new(node)
        .fit_frame(options.link.n1)
        .map_err(|e| NodeError::Config(format!("ax25: {e}")))?;
    cl.ack_window = options.ack_window;
    cl.validate()
        .map_err(|e| NodeError::Config(format!("ax25: {e}")))?;
    let (demand, demand_rx) = mpsc::unbounded_channel();
    driver.dial = Some(demand);
    let mut peers = Vec::new();
    for peer in &options.peers {
        let id = driver.router.add_dialled_link(peer.pattern.clone());
        peers.push(ax25::Ax25Peer {
            call: peer.call,
            via: peer.via.clone(),
            link: id,
        });
    }
    eprintln!(
        "linklab dtn node: ax25 as {} on {}",
        options.mycall, options.kiss
    );
    let setup = ax25::Ax25Setup {
        options: options.clone(),
        cl,
        spool_dir: store.to_path_buf(),
    };
    Ok(ax25::run(
        setup,
        peers,
        demand_rx,
        driver.stopping.subscribe(),
        events.clone(),
    ))
}

/// Sets up the NORM convergence layer: the UDP socket and a session for
/// each configured peer.
async fn start_norm(
    options: &NormOptions,
    node: &str,
    events: &mpsc::UnboundedSender<LinkEvent>,
) -> Result<impl std::future::Future<Output = ()>, NodeError> {
    let socket = tokio::net::UdpSocket::bind(options.bind)
        .await
        .map_err(io_error(format!("cannot bind NORM to {}", options.bind)))?;
    let local = socket.local_addr().map_err(io_error("NORM socket"))?;
    let mut sessions = Vec::new();
    for spec in &options.peers {
        let peer = norm::NormPeer {
            node: spec.node.to_string(),
            address: spec.address,
        };
        let config = norm::session_config(node, &peer, options.rate);
        config
            .validate()
            .map_err(|e| NodeError::Config(format!("norm: peer {}: {e}", peer.node)))?;
        sessions.push((peer, config));
    }
    let rate = match options.rate {
        linklab_normcl::Rate::Fixed { bits_per_second } => format!("at {bits_per_second} bit/s"),
        linklab_normcl::Rate::Cc {
            initial_bps,
            min_bps,
            max_bps,
        } => format!("with NORM-CC from {initial_bps} bit/s ({min_bps} to {max_bps})"),
    };
    eprintln!("linklab dtn node: norm on {local} {rate}");
    Ok(norm::run(socket, sessions, events.clone()))
}

#[cfg(test)]
mod tests {
    use linklab_core::Instant;
    use linklab_dtn::{EidPattern, LinkId, MemoryStore, SendRequest};

    use super::*;

    /// The encoded bundle that an agent of its own sends from `source` to
    /// `destination`, with `payload`.
    pub(super) fn encoded_bundle(source: &str, destination: &str, payload: &[u8]) -> Vec<u8> {
        let source: Eid = source.parse().unwrap();
        let destination: Eid = destination.parse().unwrap();
        let node = Eid::from(source.to_node_id().unwrap());
        let mut agent = Agent::open(Config::new(node), MemoryStore::default()).unwrap();
        let link = LinkId(1);
        let pattern = EidPattern::Node(destination.to_node_id().unwrap());
        agent.add_route(pattern, link);
        agent.link_up(link, None);
        let request = SendRequest::new(source, destination, payload.to_vec());
        agent.send(Instant::ZERO, &request).unwrap();
        let transmit = agent.poll_transmit(Instant::ZERO).unwrap();
        transmit.expect("a bundle for the link").octets
    }

    #[test]
    fn a_spooled_prefix_left_at_a_stop_is_kept_as_a_fragment_at_start() {
        let dir = tempfile::tempdir().unwrap();
        let whole = encoded_bundle("ipn:1.1", "ipn:2.1", &[7; 4000]);
        let spools = dir.path().join("b");
        std::fs::create_dir(&spools).unwrap();
        let spool = spools.join("ax25-partial-N0DTN-1.bin");
        std::fs::write(&spool, &whole[..2500]).unwrap();

        let config = Config::new("ipn:2.0".parse().unwrap());
        let agent = Agent::open(config, MemoryStore::default()).unwrap();
        let mut b = AgentDriver::new(Router::new(agent), Clock::start());
        keep_spooled(&mut b, &spools).unwrap();
        assert_eq!(b.router.stored(), 1, "the prefix, as a fragment");
        assert!(!spool.exists(), "the spool is gone once stored");
    }
}
