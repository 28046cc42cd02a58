//! The node: the bundle agent, fed by convergence layer sessions
//! ([`crate::cl`]), application connections ([`crate::app`]) and the
//! clock, until SIGINT or SIGTERM.
//!
//! Two threads. The reactor (a single-threaded tokio runtime on the
//! calling thread) does all socket I/O: it runs every session, listener
//! and application connection, and takes the signals. The agent thread
//! owns the [`Agent`] and its store, with its own single-threaded runtime
//! for its channels and timers. The agent is sans-IO and commits to its
//! [`Store`] synchronously inside its calls (a redb commit with immediate
//! durability, which waits for the disk); on the reactor, one slow write
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

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use linklab_core::Instant;
use linklab_dtn::{
    Agent, Config, Delivery, DeliveryId, Eid, EidPattern, Event, LinkId, ReceiveError, Reception,
    RedbStore, SendRequest, Store, StoreError, TransmitId,
};
use thiserror::Error;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, UnixListener};
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::{mpsc, oneshot, watch};

use crate::app::{self, Message};
use crate::cl::{ax25, norm, tcpcl, LinkCommand, LinkEvent, SessionId};
use crate::options::{AppAddress, Ax25Options, NormOptions, PeerSpec, RouteSpec};
use crate::report;
use crate::watch::{NodeWatch, SharedWatch};

/// DTN time (RFC 9171 4.2.6) at the Unix epoch's 2000-01-01.
const DTN_EPOCH_UNIX_MS: u64 = 946_684_800_000;

/// How long sessions get to end cleanly at shutdown.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(3);

/// How long, within [`SHUTDOWN_GRACE`], a session with a bundle on the
/// wire is left to have it acknowledged before it is asked to end.
const FINISH_GRACE: Duration = Duration::from_secs(1);

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

/// Starts `core` on the agent thread: it serves `links` and `clients`
/// until `stop` fires (or its sender is dropped) and its sessions have
/// ended. Its result comes on the returned channel.
fn spawn_agent<S: Store + Send + 'static>(
    core: Core<S>,
    links: mpsc::UnboundedReceiver<LinkEvent>,
    clients: mpsc::UnboundedReceiver<ClientEvent>,
    stop: oneshot::Receiver<()>,
) -> Result<oneshot::Receiver<Result<(), NodeError>>, NodeError> {
    let (done, result) = oneshot::channel();
    std::thread::Builder::new()
        .name("dtn-agent".into())
        .spawn(move || {
            let outcome = runtime().and_then(|rt| rt.block_on(core.run(links, clients, stop)));
            let _ = done.send(outcome);
        })
        .map_err(io_error("cannot start the agent thread"))?;
    Ok(result)
}

async fn run_async(config: NodeConfig, watch: Option<SharedWatch>) -> Result<(), NodeError> {
    // Checked before anything is opened.
    let ax25_link = match &config.ax25 {
        Some(options) => {
            options
                .link
                .validate()
                .map_err(|e| NodeError::Config(format!("ax25: {e}")))?;
            Some(options.link.clone())
        }
        None => None,
    };
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
    let result = serve(&config, ax25_link, &mut started, &mut app_bound, watch).await;
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
    ax25_link: Option<linklab_link::Config>,
    started: &mut bool,
    app_bound: &mut bool,
    watch: Option<SharedWatch>,
) -> Result<(), NodeError> {
    std::fs::create_dir_all(&config.store).map_err(io_error(format!(
        "cannot create the store directory {}",
        config.store.display()
    )))?;
    let store = RedbStore::open(&config.store.join("bundles.redb"))?;
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
    let mut core = Core::new(agent);
    core.watch = watch;
    core.keep_spooled(&config.store)?;
    for route in &config.routes {
        let link = core.neighbour_link(&route.next_hop.to_string());
        core.agent.add_route(route.pattern.clone(), link);
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
        core.agent.stored(),
        app_listener.describe()
    );
    for peer in &config.peers {
        let link = core.new_link();
        if let Some(pattern) = &peer.pattern {
            core.agent.add_route(pattern.clone(), link);
        }
        tasks.push(tokio::spawn(tcpcl::dial(
            peer.address.clone(),
            session_config.clone(),
            link,
            config.store.clone(),
            link_tx.clone(),
        )));
    }
    if let (Some(options), Some(link)) = (&config.ax25, ax25_link) {
        tasks.push(tokio::spawn(start_ax25(
            options,
            link,
            &config.store,
            &node_text,
            &mut core,
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
    let mut agent = spawn_agent(core, link_rx, client_rx, stop_rx)?;
    let mut interrupt = signal(SignalKind::interrupt()).map_err(io_error("SIGINT handler"))?;
    let mut terminate = signal(SignalKind::terminate()).map_err(io_error("SIGTERM handler"))?;
    *started = true;
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

/// Sets up the AX.25 convergence layer: a link with a route for each
/// configured peer, dialled on the node's demand.
fn start_ax25(
    options: &Ax25Options,
    link: linklab_link::Config,
    store: &std::path::Path,
    node: &str,
    core: &mut Core<RedbStore>,
    events: &mpsc::UnboundedSender<LinkEvent>,
) -> Result<impl std::future::Future<Output = ()>, NodeError> {
    let mut cl = linklab_ax25cl::Config::new(node)
        .fit_frame(link.n1)
        .map_err(|e| NodeError::Config(format!("ax25: {e}")))?;
    cl.ack_window = options.ack_window;
    cl.validate()
        .map_err(|e| NodeError::Config(format!("ax25: {e}")))?;
    let (demand, demand_rx) = mpsc::unbounded_channel();
    let mut peers = Vec::new();
    for peer in &options.peers {
        let id = core.new_link();
        core.agent.add_route(peer.pattern.clone(), id);
        // Up for the agent while no session carries it, so that bundles
        // routed there come out and ask for a connection.
        core.agent.link_up(id, None);
        core.dialers.insert(id, demand.clone());
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
        kiss: options.kiss.clone(),
        params: options.params,
        air: options.air,
        monitor: options.monitor,
        mycall: options.mycall,
        link,
        cl,
        spool_dir: store.to_path_buf(),
    };
    Ok(ax25::run(
        setup,
        peers,
        demand_rx,
        core.stopping(),
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

/// The listening socket of the application interface.
enum AppListener {
    Unix(UnixListener, PathBuf),
    Tcp(TcpListener),
}

impl AppListener {
    async fn bind(address: &AppAddress) -> Result<AppListener, NodeError> {
        match address {
            AppAddress::Tcp(address) => TcpListener::bind(address)
                .await
                .map(AppListener::Tcp)
                .map_err(io_error(format!(
                    "cannot listen for applications on {address}"
                ))),
            AppAddress::Unix(path) => {
                // A socket file left by a node that died is taken over; one
                // a running node answers on is not, and anything else there
                // (a user's file, a directory) is never removed.
                if let Ok(meta) = std::fs::symlink_metadata(path) {
                    use std::os::unix::fs::FileTypeExt;
                    if !meta.file_type().is_socket() {
                        return Err(NodeError::Config(format!(
                            "--app-socket {}: that path exists and is not a socket; \
                             name a path that does not exist (a stale socket is replaced)",
                            path.display()
                        )));
                    }
                    if tokio::net::UnixStream::connect(path).await.is_ok() {
                        return Err(NodeError::Config(format!(
                            "--app-socket {}: another node answers on it",
                            path.display()
                        )));
                    }
                    std::fs::remove_file(path).map_err(io_error(format!(
                        "cannot remove the stale socket {}",
                        path.display()
                    )))?;
                }
                UnixListener::bind(path)
                    .map(|l| AppListener::Unix(l, path.clone()))
                    .map_err(io_error(format!(
                        "cannot listen for applications on {}",
                        path.display()
                    )))
            }
        }
    }

    fn describe(&self) -> String {
        match self {
            AppListener::Unix(_, path) => path.display().to_string(),
            AppListener::Tcp(listener) => listener
                .local_addr()
                .map_or_else(|e| e.to_string(), |a| a.to_string()),
        }
    }

    async fn serve(self, clients: mpsc::UnboundedSender<ClientEvent>, node: String) {
        loop {
            let accepted = match &self {
                AppListener::Unix(listener, _) => listener.accept().await.map(|(s, _)| {
                    let (r, w) = s.into_split();
                    spawn_client(r, w, clients.clone(), node.clone())
                }),
                AppListener::Tcp(listener) => listener.accept().await.map(|(s, _)| {
                    let (r, w) = s.into_split();
                    spawn_client(r, w, clients.clone(), node.clone())
                }),
            };
            if let Err(e) = accepted {
                eprintln!("linklab dtn node: application socket: accept: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

/// An application connection within the node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct ClientId(u64);

enum ClientEvent {
    Opened(ClientId, mpsc::UnboundedSender<Message>),
    Request(ClientId, Message),
    Closed(ClientId, Option<String>),
}

fn spawn_client(
    reader: impl AsyncRead + Unpin + Send + 'static,
    mut writer: impl AsyncWrite + Unpin + Send + 'static,
    events: mpsc::UnboundedSender<ClientEvent>,
    node: String,
) {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let id = ClientId(NEXT.fetch_add(1, Ordering::Relaxed));
    let (tx, mut rx) = mpsc::unbounded_channel::<Message>();
    let _ = tx.send(Message::new("NODE").with("id", node));
    let _ = events.send(ClientEvent::Opened(id, tx));
    tokio::spawn(async move {
        while let Some(message) = rx.recv().await {
            if writer.write_all(&message.encode()).await.is_err() {
                break;
            }
        }
    });
    tokio::spawn(async move {
        let mut reader = BufReader::new(reader);
        let why = loop {
            match app::read_message(&mut reader).await {
                Ok(Some(message)) => {
                    let _ = events.send(ClientEvent::Request(id, message));
                }
                Ok(None) => break None,
                Err(e) => break Some(e.to_string()),
            }
        };
        let _ = events.send(ClientEvent::Closed(id, why));
    });
}

/// A convergence-layer session the node knows.
struct Neighbour {
    peer: String,
    remote: String,
    commands: mpsc::UnboundedSender<LinkCommand>,
    links: Vec<LinkId>,
}

/// An orderly stop: no bundle is handed to a session any more and no
/// convergence layer dials; each session ends once the bundles on it are
/// acknowledged, or at `finish_by`; the node exits when all have ended, or
/// at `exit_by`. A bundle not acknowledged stays in the store for the next
/// start.
struct Stop {
    finish_by: tokio::time::Instant,
    exit_by: tokio::time::Instant,
    /// The sessions asked to end.
    closed: BTreeSet<SessionId>,
}

/// An application connection.
struct Client {
    tx: mpsc::UnboundedSender<Message>,
    endpoints: BTreeSet<Eid>,
}

/// The agent and everything around it.
struct Core<S: Store> {
    agent: Agent<S>,
    origin: tokio::time::Instant,
    next_link: u32,
    /// Links named by a neighbour's node ID (with the route to its
    /// endpoints).
    by_node: BTreeMap<String, LinkId>,
    /// The sessions carrying each link that is up.
    carriers: BTreeMap<LinkId, Vec<SessionId>>,
    sessions: BTreeMap<SessionId, Neighbour>,
    /// Links whose convergence layer connects when told it is wanted: the
    /// agent sees them up, and a transmission on one with no session asks
    /// for a connection at once and waits in `waiting`.
    dialers: BTreeMap<LinkId, mpsc::UnboundedSender<LinkId>>,
    /// Transmissions on a dialer's link while no session carries it, in
    /// the order the agent gave them: handed to the first session up.
    waiting: BTreeMap<LinkId, Vec<(TransmitId, Vec<u8>)>>,
    /// Transmissions handed to a session: its link and the bundle's length.
    flights: BTreeMap<TransmitId, (SessionId, LinkId, usize)>,
    clients: BTreeMap<ClientId, Client>,
    registrations: BTreeMap<Eid, ClientId>,
    /// Deliveries handed out and not yet confirmed, with the connection
    /// holding each (none while its endpoint has no receiver).
    unconfirmed: BTreeMap<DeliveryId, (Delivery, Option<ClientId>)>,
    /// When `handle_timeout` last ran, so a deadline already passed (a
    /// retry waiting for a link) does not spin.
    last_timeout: Option<Instant>,
    /// What the program running the node sees of it, if it looks.
    watch: Option<SharedWatch>,
    /// The orderly stop under way, once SIGINT or SIGTERM came.
    stop: Option<Stop>,
    /// Set at the stop, for the convergence layers that make links of
    /// their own accord ([`Core::stopping`]).
    stopping: watch::Sender<bool>,
    forwarded: u64,
    delivered: u64,
}

impl<S: Store> Core<S> {
    fn new(agent: Agent<S>) -> Core<S> {
        Core {
            agent,
            origin: tokio::time::Instant::now(),
            next_link: 1,
            by_node: BTreeMap::new(),
            carriers: BTreeMap::new(),
            sessions: BTreeMap::new(),
            dialers: BTreeMap::new(),
            waiting: BTreeMap::new(),
            flights: BTreeMap::new(),
            clients: BTreeMap::new(),
            registrations: BTreeMap::new(),
            unconfirmed: BTreeMap::new(),
            last_timeout: None,
            watch: None,
            stop: None,
            stopping: watch::Sender::new(false),
            forwarded: 0,
            delivered: 0,
        }
    }

    /// Writes the node's state for the program watching it.
    fn publish(&self) {
        let Some(watch) = &self.watch else {
            return;
        };
        if let Ok(mut w) = watch.lock() {
            *w = NodeWatch {
                stored: self.agent.stored(),
                contacts: self.sessions.values().map(|n| n.peer.clone()).collect(),
                forwarded: self.forwarded,
                delivered: self.delivered,
            };
        }
    }

    fn now(&self) -> Instant {
        Instant::from_micros(self.origin.elapsed().as_micros() as u64)
    }

    fn new_link(&mut self) -> LinkId {
        let link = LinkId(self.next_link);
        self.next_link += 1;
        link
    }

    /// The link to the neighbour with node ID `node`, made on first use
    /// with a route to every endpoint of that node.
    fn neighbour_link(&mut self, node: &str) -> LinkId {
        let key = canonical(node);
        if let Some(link) = self.by_node.get(&key) {
            return *link;
        }
        let link = self.new_link();
        if let Ok(eid) = key.parse::<Eid>() {
            if let Ok(node_id) = eid.to_node_id() {
                self.agent.add_route(EidPattern::Node(node_id), link);
            }
        }
        self.by_node.insert(key, link);
        link
    }

    async fn run(
        mut self,
        mut links: mpsc::UnboundedReceiver<LinkEvent>,
        mut clients: mpsc::UnboundedReceiver<ClientEvent>,
        mut stop: oneshot::Receiver<()>,
    ) -> Result<(), NodeError> {
        loop {
            self.pump()?;
            self.close_finished();
            self.publish();
            if self.stop.is_some() && self.sessions.is_empty() {
                return Ok(());
            }
            let wake = self.wake_at();
            let finish_by = self
                .stop
                .as_ref()
                .filter(|stop| self.sessions.keys().any(|s| !stop.closed.contains(s)))
                .map(|stop| stop.finish_by);
            let exit_by = self.stop.as_ref().map(|stop| stop.exit_by);
            tokio::select! {
                Some(event) = links.recv() => self.on_link(event)?,
                Some(event) = clients.recv() => self.on_client(event)?,
                _ = sleep_until(wake) => {
                    let now = self.now();
                    self.agent.handle_timeout(now)?;
                    self.last_timeout = Some(now);
                }
                _ = &mut stop, if self.stop.is_none() => self.begin_stop(),
                _ = sleep_until(finish_by), if finish_by.is_some() => {}
                _ = sleep_until(exit_by), if exit_by.is_some() => {
                    for neighbour in self.sessions.values() {
                        eprintln!(
                            "linklab dtn node: the session with {} ({}) did not end within {SHUTDOWN_GRACE:?}: leaving it",
                            neighbour.peer, neighbour.remote
                        );
                    }
                    return Ok(());
                }
            }
        }
    }

    /// Becomes true when the node stops: a convergence layer then makes
    /// and accepts no new link.
    fn stopping(&self) -> watch::Receiver<bool> {
        self.stopping.subscribe()
    }

    /// Starts an orderly stop ([`Stop`]), telling the convergence layers
    /// ([`Core::stopping`]).
    fn begin_stop(&mut self) {
        eprintln!("linklab dtn node: stopping");
        let now = tokio::time::Instant::now();
        self.stopping.send_replace(true);
        self.stop = Some(Stop {
            finish_by: now + FINISH_GRACE,
            exit_by: now + SHUTDOWN_GRACE,
            closed: BTreeSet::new(),
        });
    }

    /// During a stop, asks each session to end once no bundle handed to it
    /// waits for the peer's acknowledgement, or when the time to finish
    /// them is up.
    fn close_finished(&mut self) {
        let Some(stop) = &mut self.stop else {
            return;
        };
        let late = tokio::time::Instant::now() >= stop.finish_by;
        for (id, neighbour) in &self.sessions {
            let busy = self.flights.values().any(|(session, _, _)| session == id);
            if (late || !busy) && stop.closed.insert(*id) {
                let _ = neighbour.commands.send(LinkCommand::Close);
            }
        }
    }

    fn wake_at(&self) -> Option<tokio::time::Instant> {
        let at = self.agent.poll_timeout()?;
        let now = self.now();
        // A deadline already handled at or after it (a bundle waiting to
        // be retried when no link is up) is looked at again once a second.
        let at = match self.last_timeout {
            Some(last) if at <= last => now.max(last) + Duration::from_secs(1),
            _ => at,
        };
        Some(self.origin + Duration::from_micros(at.as_micros()))
    }

    /// Hands the agent's transmissions to sessions (none during a stop:
    /// they stay in the store), its deliveries to applications, and
    /// reports its events.
    fn pump(&mut self) -> Result<(), NodeError> {
        let now = self.now();
        while self.stop.is_none() {
            let Some(transmit) = self.agent.poll_transmit(now)? else {
                break;
            };
            let carrier = self
                .carriers
                .get(&transmit.link)
                .and_then(|sessions| sessions.first())
                .copied();
            match (carrier, self.dialers.get(&transmit.link)) {
                (Some(session), _) => {
                    self.hand_over(now, session, transmit.link, transmit.id, transmit.octets)
                }
                (None, Some(dialer)) => {
                    // The convergence layer connects at once; the bundle
                    // goes as soon as the session is up.
                    let _ = dialer.send(transmit.link);
                    self.waiting
                        .entry(transmit.link)
                        .or_default()
                        .push((transmit.id, transmit.octets));
                }
                (None, None) => self.agent.transfer_failed(now, transmit.id),
            }
        }
        while let Some(delivery) = self.agent.poll_delivery() {
            let owner = self.registrations.get(&delivery.destination).copied();
            if let Some(client) = owner {
                self.offer(client, &delivery);
            }
            self.unconfirmed.insert(delivery.id, (delivery, owner));
        }
        while let Some(event) = self.agent.poll_event() {
            self.on_agent_event(event);
        }
        Ok(())
    }

    /// Keeps as fragments the first octets of bundles that AX.25 links and
    /// TCPCL sessions were bringing in when the node stopped, which their
    /// senders were told they need not send again ([`crate::cl::spooled`]).
    fn keep_spooled(&mut self, dir: &std::path::Path) -> Result<(), NodeError> {
        let spooled = crate::cl::spooled(dir).map_err(io_error(format!(
            "cannot read the spools in {}",
            dir.display()
        )))?;
        for (path, octets) in spooled {
            let now = self.now();
            let length = octets.len();
            match self.agent.handle_partial_bundle(now, &octets) {
                Ok(Some(Reception::Accepted(id))) => eprintln!(
                    "linklab dtn node: kept the first {length} octets of a bundle cut off when the node stopped as {id}"
                ),
                Ok(_) => {}
                Err(ReceiveError::Store(e)) => return Err(e.into()),
                Err(e) => eprintln!(
                    "linklab dtn node: the first {length} octets of a bundle cut off when the node stopped are refused: {e}"
                ),
            }
            std::fs::remove_file(&path)
                .map_err(io_error(format!("cannot remove {}", path.display())))?;
        }
        Ok(())
    }

    /// Gives transmission `transmit` on `link` to `session`.
    fn hand_over(
        &mut self,
        now: Instant,
        session: SessionId,
        link: LinkId,
        transmit: TransmitId,
        octets: Vec<u8>,
    ) {
        let length = octets.len();
        let sent = self.sessions[&session]
            .commands
            .send(LinkCommand::Send { transmit, octets })
            .is_ok();
        if sent {
            self.flights.insert(transmit, (session, link, length));
        } else {
            self.agent.transfer_failed(now, transmit);
        }
    }

    fn offer(&self, client: ClientId, delivery: &Delivery) {
        let id = report::BundleRef::of(&delivery.bundle);
        let message = id
            .fields(Message::new("BUNDLE").with("delivery", delivery.id.0))
            .with("dest", &delivery.destination)
            .with_body(delivery.payload.clone());
        if let Some(c) = self.clients.get(&client) {
            let _ = c.tx.send(message);
        }
    }

    fn on_agent_event(&mut self, event: Event) {
        match event {
            Event::StatusReport { to, from, report } => {
                let message = report::encode(&to, &from, &report);
                match self.registrations.get(&to).and_then(|c| self.clients.get(c)) {
                    Some(client) => {
                        let _ = client.tx.send(message);
                    }
                    None => eprintln!(
                        "linklab dtn node: status report from {from} for {to}, which no application has registered: dropped"
                    ),
                }
            }
            Event::Forwarded { bundle, link } => {
                eprintln!("linklab dtn node: forwarded {bundle} on {link}")
            }
            Event::Fragmented { bundle, fragments } => {
                eprintln!("linklab dtn node: split {bundle} into {fragments} fragments")
            }
            Event::TooLarge { bundle, link, size } => eprintln!(
                "linklab dtn node: {bundle} ({size} octets) is too large for {link} and may not be fragmented"
            ),
            Event::Deleted { bundle, reason } => {
                eprintln!("linklab dtn node: deleted {bundle} ({reason:?})")
            }
        }
    }

    fn on_link(&mut self, event: LinkEvent) -> Result<(), NodeError> {
        let now = self.now();
        let stopping = self.stop.is_some();
        match event {
            LinkEvent::Up {
                session,
                peer,
                remote,
                configured,
                mtu,
                commands,
            } => {
                if let Some(stop) = &mut self.stop {
                    let _ = commands.send(LinkCommand::Close);
                    stop.closed.insert(session);
                }
                let mut links = vec![self.neighbour_link(&peer)];
                links.extend(configured);
                for link in &links {
                    let carriers = self.carriers.entry(*link).or_default();
                    if carriers.is_empty() {
                        self.agent.link_up(*link, mtu);
                    }
                    carriers.push(session);
                    // Bundles whose transfer failed or broke off go now,
                    // not when their retry wait runs out.
                    self.agent.retry_now(*link);
                }
                eprintln!("linklab dtn node: session with {peer} ({remote}) up");
                let waiting: Vec<(LinkId, TransmitId, Vec<u8>)> = links
                    .iter()
                    .flat_map(|link| {
                        let queued = self.waiting.remove(link).unwrap_or_default();
                        queued.into_iter().map(|(t, o)| (*link, t, o))
                    })
                    .collect();
                self.sessions.insert(
                    session,
                    Neighbour {
                        peer,
                        remote,
                        commands,
                        links,
                    },
                );
                for (link, transmit, octets) in waiting {
                    self.hand_over(now, session, link, transmit, octets);
                }
            }
            LinkEvent::Received {
                session,
                octets,
                stored,
            } => {
                let from = self
                    .sessions
                    .get(&session)
                    .map_or_else(|| "a peer".to_string(), |n| n.peer.clone());
                match self.agent.handle_bundle(now, &octets) {
                    Ok(Reception::Accepted(_) | Reception::Duplicate(_)) => {}
                    Ok(Reception::Discarded { bundle, reason }) => {
                        eprintln!("linklab dtn node: {bundle} from {from} discarded ({reason:?})")
                    }
                    Err(ReceiveError::Store(e)) => return Err(e.into()),
                    Err(e) => eprintln!("linklab dtn node: a bundle from {from} is refused: {e}"),
                }
                let _ = stored.send(());
            }
            LinkEvent::PartialReceived {
                session,
                octets,
                stored,
            } => {
                let from = self
                    .sessions
                    .get(&session)
                    .map_or_else(|| "a peer".to_string(), |n| n.peer.clone());
                let length = octets.len();
                match self.agent.handle_partial_bundle(now, &octets) {
                    Ok(Some(Reception::Accepted(id))) => eprintln!(
                        "linklab dtn node: kept the first {length} octets of an interrupted bundle from {from} as {id}"
                    ),
                    Ok(Some(Reception::Duplicate(id))) => {
                        eprintln!("linklab dtn node: {id} from {from} was here already")
                    }
                    Ok(Some(Reception::Discarded { bundle, reason })) => {
                        eprintln!("linklab dtn node: {bundle} from {from} discarded ({reason:?})")
                    }
                    Ok(None) => eprintln!(
                        "linklab dtn node: the first {length} octets of an interrupted bundle from {from} are too few to keep"
                    ),
                    Err(ReceiveError::Store(e)) => return Err(e.into()),
                    Err(e) => eprintln!(
                        "linklab dtn node: the first {length} octets of an interrupted bundle from {from} are refused: {e}"
                    ),
                }
                let _ = stored.send(());
            }
            LinkEvent::Interrupted {
                transmit,
                acknowledged,
                ..
            } => {
                if let Some((session, _, length)) = self.flights.remove(&transmit) {
                    let to = self
                        .sessions
                        .get(&session)
                        .map_or_else(|| "a peer".to_string(), |n| n.peer.clone());
                    eprintln!(
                        "linklab dtn node: a transfer to {to} broke off after {acknowledged} of {length} octets acknowledged"
                    );
                    // The rest goes again as a fragment (or the whole
                    // bundle, if nothing of its payload got through).
                    self.agent.transfer_partial(now, transmit, acknowledged)?;
                }
            }
            LinkEvent::Sent {
                transmit, outcome, ..
            } => {
                if self.flights.remove(&transmit).is_some() {
                    match outcome {
                        Ok(()) => {
                            self.forwarded += 1;
                            self.agent.transfer_succeeded(now, transmit)?
                        }
                        Err(why) if stopping => {
                            eprintln!(
                                "linklab dtn node: a transfer ended with the stop ({why}): the bundle stays in the store for the next start"
                            );
                            self.agent.transfer_failed(now, transmit);
                        }
                        Err(why) => {
                            eprintln!("linklab dtn node: a transfer failed: {why}");
                            self.agent.transfer_failed(now, transmit);
                        }
                    }
                }
            }
            LinkEvent::Down { session, why } => {
                let Some(neighbour) = self.sessions.remove(&session) else {
                    return Ok(());
                };
                eprintln!(
                    "linklab dtn node: session with {} ({}) down: {why}",
                    neighbour.peer, neighbour.remote
                );
                let lost: Vec<(TransmitId, LinkId)> = self
                    .flights
                    .iter()
                    .filter(|(_, (s, _, _))| *s == session)
                    .map(|(t, (_, l, _))| (*t, *l))
                    .collect();
                for link in &neighbour.links {
                    if let Some(carriers) = self.carriers.get_mut(link) {
                        carriers.retain(|s| *s != session);
                        if carriers.is_empty() {
                            self.carriers.remove(link);
                            // Its transfers go again on the next contact.
                            self.agent.link_down(*link);
                            if self.dialers.contains_key(link) && !stopping {
                                // The convergence layer connects on
                                // demand, pacing its attempts: the rest
                                // of a broken transfer asks at once.
                                self.agent.link_up(*link, None);
                                self.agent.retry_now(*link);
                            }
                        }
                    }
                }
                for (transmit, link) in lost {
                    self.flights.remove(&transmit);
                    if self.carriers.contains_key(&link) {
                        self.agent.transfer_failed(now, transmit);
                    }
                }
            }
        }
        Ok(())
    }

    fn on_client(&mut self, event: ClientEvent) -> Result<(), NodeError> {
        match event {
            ClientEvent::Opened(id, tx) => {
                self.clients.insert(
                    id,
                    Client {
                        tx,
                        endpoints: BTreeSet::new(),
                    },
                );
            }
            ClientEvent::Request(id, message) => {
                let answer = match self.on_request(id, &message) {
                    Ok(answer) => answer,
                    Err(RequestError::Refused(text)) => Some(Message::error(text)),
                    Err(RequestError::Node(e)) => return Err(e),
                };
                if let (Some(answer), Some(client)) = (answer, self.clients.get(&id)) {
                    let _ = client.tx.send(answer);
                }
            }
            ClientEvent::Closed(id, why) => {
                if let Some(why) = why {
                    eprintln!("linklab dtn node: an application connection failed: {why}");
                }
                if let Some(client) = self.clients.remove(&id) {
                    for endpoint in client.endpoints {
                        self.registrations.remove(&endpoint);
                        self.agent.unregister(&endpoint);
                    }
                }
                for (_, owner) in self.unconfirmed.values_mut() {
                    if *owner == Some(id) {
                        *owner = None;
                    }
                }
            }
        }
        Ok(())
    }

    fn on_request(
        &mut self,
        id: ClientId,
        message: &Message,
    ) -> Result<Option<Message>, RequestError> {
        let now = self.now();
        match message.verb.as_str() {
            "REGISTER" => {
                let endpoint: Eid = message.parsed("endpoint")?;
                if let Some(holder) = self.registrations.get(&endpoint) {
                    if *holder != id {
                        return Err(RequestError::Refused(format!(
                            "{endpoint} is registered by another application"
                        )));
                    }
                }
                self.agent
                    .register(endpoint.clone())
                    .map_err(|e| RequestError::Refused(e.to_string()))?;
                self.registrations.insert(endpoint.clone(), id);
                if let Some(client) = self.clients.get_mut(&id) {
                    client.endpoints.insert(endpoint.clone());
                }
                // Deliveries that waited for a receiver.
                let waiting: Vec<DeliveryId> = self
                    .unconfirmed
                    .iter()
                    .filter(|(_, (d, owner))| owner.is_none() && d.destination == endpoint)
                    .map(|(k, _)| *k)
                    .collect();
                let _ = self.clients[&id].tx.send(Message::new("OK"));
                for delivery in waiting {
                    let entry = self.unconfirmed.get_mut(&delivery).expect("listed");
                    entry.1 = Some(id);
                    let delivery = entry.0.clone();
                    self.offer(id, &delivery);
                }
                Ok(None)
            }
            "SEND" => {
                let destination: Eid = message.parsed("dest")?;
                let source: Eid = match message.get("source") {
                    Some(_) => message.parsed("source")?,
                    None => self.agent.config().node.clone(),
                };
                let mut request = SendRequest::new(source, destination, message.body.clone());
                if message.get("lifetime").is_some() {
                    let seconds: u64 = message.parsed("lifetime")?;
                    request.lifetime = Duration::from_secs(seconds);
                }
                if let Some(kinds) = message.get("reports").filter(|k| !k.is_empty()) {
                    for kind in kinds.split(',') {
                        request
                            .reports
                            .push(report::parse_kind(kind).ok_or_else(|| {
                                RequestError::Refused(format!(
                                "unknown report {kind:?} (received, forwarded, delivered, deleted)"
                            ))
                            })?);
                    }
                    request.report_status_time = true;
                }
                match self.agent.send(now, &request) {
                    Ok(bundle) => Ok(Some(
                        report::BundleRef::of(&bundle).fields(Message::new("SENT")),
                    )),
                    Err(linklab_dtn::SendError::Store(e)) => Err(RequestError::Node(e.into())),
                    Err(e) => Err(RequestError::Refused(e.to_string())),
                }
            }
            "DONE" => {
                let delivery = DeliveryId(message.parsed("delivery")?);
                match self.unconfirmed.get(&delivery) {
                    Some((_, Some(owner))) if *owner == id => {
                        self.agent
                            .delivery_done(now, delivery)
                            .map_err(|e| match e {
                                linklab_dtn::AgentError::Store(e) => RequestError::Node(e.into()),
                                other => RequestError::Refused(other.to_string()),
                            })?;
                        self.unconfirmed.remove(&delivery);
                        self.delivered += 1;
                        Ok(None)
                    }
                    _ => Err(RequestError::Refused(format!(
                        "no delivery {} is waiting for this application",
                        delivery.0
                    ))),
                }
            }
            other => Err(RequestError::Refused(format!(
                "unknown request {other} (REGISTER, SEND, DONE)"
            ))),
        }
    }
}

enum RequestError {
    /// The request is refused; the node goes on.
    Refused(String),
    /// The node cannot go on.
    Node(NodeError),
}

impl From<app::ProtocolError> for RequestError {
    fn from(e: app::ProtocolError) -> RequestError {
        RequestError::Refused(e.0)
    }
}

/// A node ID as the node keys its neighbours: parsed and printed again if
/// it is an endpoint ID (so `dtn://a` and `dtn://a/` are one node).
fn canonical(node: &str) -> String {
    node.parse::<Eid>()
        .ok()
        .and_then(|eid| eid.to_node_id().ok().map(|n| Eid::from(n).to_string()))
        .unwrap_or_else(|| node.to_string())
}

/// Sleeps until `deadline`, or for ever without one.
async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use linklab_core::Engine;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::Arc;

    use linklab_tcpcl::{
        Config as TcpclConfig, Event as TcpclEvent, Role as TcpclRole, Session, State as TcpclState,
    };
    use tokio::io::AsyncReadExt;
    use tokio::net::TcpStream;

    /// A node's core on a store in `dir`, bundles retried after `retry`.
    fn core(dir: &std::path::Path, node: &str, retry: Duration) -> Core<RedbStore> {
        let store = RedbStore::open(&dir.join(format!("{node}.redb"))).unwrap();
        let mut config = Config::new(node.parse().unwrap());
        config.retry_after = retry;
        Core::new(Agent::open(config, store).unwrap())
    }

    /// A session with `peer` comes up on `core`; its command receiver.
    fn up(
        core: &mut Core<RedbStore>,
        peer: &str,
        configured: Option<LinkId>,
    ) -> (SessionId, mpsc::UnboundedReceiver<LinkCommand>) {
        let (commands, rx) = mpsc::unbounded_channel();
        let session = SessionId::next();
        let event = LinkEvent::Up {
            session,
            peer: peer.into(),
            remote: "test".into(),
            configured,
            mtu: None,
            commands,
        };
        core.on_link(event).unwrap();
        (session, rx)
    }

    fn next_send(rx: &mut mpsc::UnboundedReceiver<LinkCommand>) -> (TransmitId, Vec<u8>) {
        match rx.try_recv() {
            Ok(LinkCommand::Send { transmit, octets }) => (transmit, octets),
            other => panic!("expected a Send, got {other:?}"),
        }
    }

    fn send(core: &mut Core<RedbStore>, payload: &[u8]) {
        let request = SendRequest::new(
            "ipn:1.1".parse().unwrap(),
            "ipn:2.1".parse().unwrap(),
            payload.to_vec(),
        );
        let now = core.now();
        core.agent.send(now, &request).unwrap();
        core.pump().unwrap();
    }

    #[test]
    fn a_broken_transfer_resends_only_the_rest_and_the_receiver_delivers_it_whole_once() {
        let dir = tempfile::tempdir().unwrap();
        let mut a = core(dir.path(), "ipn:1.0", Duration::ZERO);
        let mut b = core(dir.path(), "ipn:2.0", Duration::ZERO);
        b.agent.register("ipn:2.1".parse().unwrap()).unwrap();
        let payload: Vec<u8> = (0..5000u32).map(|i| (i * 7 + i / 256) as u8).collect();

        let (a_session, mut a_rx) = up(&mut a, "ipn:2.0", None);
        let (b_session, _b_rx) = up(&mut b, "ipn:1.0", None);
        send(&mut a, &payload);
        let (transmit, whole) = next_send(&mut a_rx);

        // The link drops: b got 3000 octets, a saw 2500 acknowledged.
        let (stored, kept) = oneshot::channel();
        let partial = LinkEvent::PartialReceived {
            session: b_session,
            octets: whole[..3000].to_vec(),
            stored,
        };
        b.on_link(partial).unwrap();
        kept.blocking_recv().expect("answered once stored");
        let interrupted = LinkEvent::Interrupted {
            session: a_session,
            transmit,
            acknowledged: 2500,
        };
        a.on_link(interrupted).unwrap();
        for (core, session) in [(&mut a, a_session), (&mut b, b_session)] {
            let why = "the link went down".to_string();
            core.on_link(LinkEvent::Down { session, why }).unwrap();
        }
        b.pump().unwrap();
        assert!(b.unconfirmed.is_empty(), "a fragment is not delivered");

        // The next contact carries only the rest.
        let (a_session, mut a_rx) = up(&mut a, "ipn:2.0", None);
        let (b_session, _b_rx) = up(&mut b, "ipn:1.0", None);
        a.pump().unwrap();
        let (transmit, rest) = next_send(&mut a_rx);
        assert!(rest.len() < whole.len() - 2000, "{} octets", rest.len());
        let (stored, _kept) = oneshot::channel();
        let received = LinkEvent::Received {
            session: b_session,
            octets: rest,
            stored,
        };
        b.on_link(received).unwrap();
        let sent = LinkEvent::Sent {
            session: a_session,
            transmit,
            outcome: Ok(()),
        };
        a.on_link(sent).unwrap();
        b.pump().unwrap();
        let deliveries: Vec<&Delivery> = b.unconfirmed.values().map(|(d, _)| d).collect();
        assert_eq!(deliveries.len(), 1);
        assert_eq!(deliveries[0].payload, payload);
        assert_eq!(a.agent.stored(), 0, "the sender keeps nothing");
    }

    #[test]
    fn the_rest_of_a_broken_transfer_asks_for_a_connection_and_goes_when_it_is_up() {
        let dir = tempfile::tempdir().unwrap();
        // A retry after a break would take an hour.
        let mut a = core(dir.path(), "ipn:1.0", Duration::from_secs(3600));
        let link = a.new_link();
        a.agent.add_route("ipn:2.*".parse().unwrap(), link);
        a.agent.link_up(link, None);
        let (demand, mut wanted) = mpsc::unbounded_channel();
        a.dialers.insert(link, demand);
        send(&mut a, &[9; 4000]);
        assert_eq!(wanted.try_recv().ok(), Some(link));
        let (session, mut rx) = up(&mut a, "ipn:2.0", Some(link));
        let (transmit, whole) = next_send(&mut rx);

        let interrupted = LinkEvent::Interrupted {
            session,
            transmit,
            acknowledged: 2000,
        };
        a.on_link(interrupted).unwrap();
        let why = "T1 ran out N2 times".to_string();
        a.on_link(LinkEvent::Down { session, why }).unwrap();
        a.pump().unwrap();
        assert_eq!(wanted.try_recv().ok(), Some(link), "asked again at once");
        let (_, mut rx) = up(&mut a, "ipn:2.0", Some(link));
        let (_, rest) = next_send(&mut rx);
        assert!(rest.len() < whole.len() - 1000, "{} octets", rest.len());
    }

    #[test]
    fn a_failed_transfer_goes_again_when_a_new_session_comes_up() {
        let dir = tempfile::tempdir().unwrap();
        let mut a = core(dir.path(), "ipn:1.0", Duration::from_secs(3600));
        let (session, mut rx) = up(&mut a, "ipn:2.0", None);
        send(&mut a, b"again");
        let (transmit, first) = next_send(&mut rx);
        let sent = LinkEvent::Sent {
            session,
            transmit,
            outcome: Err("refused".into()),
        };
        a.on_link(sent).unwrap();
        a.pump().unwrap();
        assert!(rx.try_recv().is_err(), "not on the same session");
        let why = "closed".to_string();
        a.on_link(LinkEvent::Down { session, why }).unwrap();
        let (_, mut rx) = up(&mut a, "ipn:2.0", None);
        a.pump().unwrap();
        let (_, again) = next_send(&mut rx);
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
        let dir = tempfile::tempdir().unwrap();
        let mut a = core(dir.path(), "ipn:1.0", Duration::ZERO);
        let link = a.new_link();
        a.agent.add_route("ipn:2.*".parse().unwrap(), link);
        a.agent.link_up(link, None);
        let (demand, mut wanted) = mpsc::unbounded_channel();
        a.dialers.insert(link, demand);
        let stopping = a.stopping();
        let (session, mut rx) = up(&mut a, "ipn:2.0", Some(link));
        send(&mut a, b"acknowledged");
        send(&mut a, b"cut off");
        let (first, _) = next_send(&mut rx);
        let (second, _) = next_send(&mut rx);

        a.begin_stop();
        assert!(*stopping.borrow(), "the convergence layers are told");
        send(&mut a, b"after the stop");
        a.close_finished();
        assert!(
            rx.try_recv().is_err(),
            "no Close, no Send: bundles on the wire"
        );
        let sent = LinkEvent::Sent {
            session,
            transmit: first,
            outcome: Ok(()),
        };
        a.on_link(sent).unwrap();
        a.close_finished();
        assert!(rx.try_recv().is_err(), "one bundle is still on the wire");

        // The time to finish is up.
        a.stop.as_mut().unwrap().finish_by = tokio::time::Instant::now();
        a.close_finished();
        assert!(matches!(rx.try_recv(), Ok(LinkCommand::Close)));
        let cut = LinkEvent::Sent {
            session,
            transmit: second,
            outcome: Err("the AX.25 session ended".into()),
        };
        a.on_link(cut).unwrap();
        let why = "LocalShutdown".to_string();
        a.on_link(LinkEvent::Down { session, why }).unwrap();
        a.pump().unwrap();
        assert!(wanted.try_recv().is_err(), "no connection asked for");
        assert!(a.waiting.is_empty());
        assert_eq!(a.agent.stored(), 2, "kept for the next start");
    }

    #[test]
    fn a_spooled_prefix_left_at_a_stop_is_kept_as_a_fragment_at_start() {
        let dir = tempfile::tempdir().unwrap();
        let mut a = core(dir.path(), "ipn:1.0", Duration::ZERO);
        let (_, mut rx) = up(&mut a, "ipn:2.0", None);
        send(&mut a, &[7; 4000]);
        let (_, whole) = next_send(&mut rx);
        let spools = dir.path().join("b");
        std::fs::create_dir(&spools).unwrap();
        let spool = spools.join("ax25-partial-N0DTN-1.bin");
        std::fs::write(&spool, &whole[..2500]).unwrap();

        let mut b = core(dir.path(), "ipn:2.0", Duration::ZERO);
        b.keep_spooled(&spools).unwrap();
        assert_eq!(b.agent.stored(), 1, "the prefix, as a fragment");
        assert!(!spool.exists(), "the spool is gone once stored");
    }

    #[test]
    fn a_bundle_for_an_idle_ax25_peer_goes_when_the_session_is_up() {
        let dir = tempfile::tempdir().unwrap();
        // A retry after a failure would take an hour.
        let mut a = core(dir.path(), "ipn:1.0", Duration::from_secs(3600));
        let link = a.new_link();
        a.agent.add_route("ipn:2.*".parse().unwrap(), link);
        a.agent.link_up(link, None);
        let (demand, mut wanted) = mpsc::unbounded_channel();
        a.dialers.insert(link, demand);

        send(&mut a, b"hello");
        assert_eq!(
            wanted.try_recv().ok(),
            Some(link),
            "a connection is asked for"
        );
        let (_, mut rx) = up(&mut a, "ipn:2.0", Some(link));
        let (_, octets) = next_send(&mut rx);
        assert!(octets.ends_with(&[0xFF]), "a whole encoded bundle");
        assert!(a.waiting.is_empty());
    }

    /// A redb store whose commits take `delay` each while `slow` is set;
    /// `begun` counts those slow commits.
    struct SlowStore {
        inner: RedbStore,
        delay: Duration,
        slow: Arc<AtomicBool>,
        begun: Arc<AtomicUsize>,
    }

    impl Store for SlowStore {
        fn load(&mut self) -> Result<linklab_dtn::store::Snapshot, StoreError> {
            self.inner.load()
        }

        fn commit(&mut self, batch: &linklab_dtn::Batch) -> Result<(), StoreError> {
            if self.slow.load(Ordering::SeqCst) {
                self.begun.fetch_add(1, Ordering::SeqCst);
                std::thread::sleep(self.delay);
            }
            self.inner.commit(batch)
        }
    }

    /// A TCPCL peer driven by the test over loopback.
    struct Peer {
        session: Session,
        stream: TcpStream,
        origin: tokio::time::Instant,
        events: Vec<TcpclEvent>,
    }

    impl Peer {
        async fn connect(address: std::net::SocketAddr, keepalive: u16) -> Peer {
            let mut config = TcpclConfig::new("ipn:2.0");
            config.keepalive_interval = keepalive;
            let session = Session::new(TcpclRole::Active, config, Instant::ZERO).unwrap();
            Peer {
                session,
                stream: TcpStream::connect(address).await.unwrap(),
                origin: tokio::time::Instant::now(),
                events: Vec::new(),
            }
        }

        fn now(&self) -> Instant {
            Instant::from_micros(self.origin.elapsed().as_micros() as u64)
        }

        /// Writes out what the session has to send.
        async fn flush(&mut self) {
            let now = self.now();
            while let Some(octets) = self.session.poll_transmit(now) {
                self.stream.write_all(&octets).await.unwrap();
            }
            while let Some(event) = self.session.poll_event() {
                self.events.push(event);
            }
        }

        /// Waits for input or the session's next timer (cancel-safe).
        async fn wait(&mut self) {
            let deadline = self
                .session
                .poll_timeout()
                .map(|at| self.origin + Duration::from_micros(at.as_micros()));
            let mut buffer = [0u8; 4096];
            tokio::select! {
                read = self.stream.read(&mut buffer) => match read {
                    Ok(0) | Err(_) => self.session.handle_eof(self.now()),
                    Ok(n) => self.session.handle_input(self.now(), &buffer[..n]),
                },
                _ = sleep_until(deadline) => self.session.handle_timeout(self.now()),
            }
        }

        /// Runs the session until `done` holds of it.
        async fn run_until(&mut self, done: impl Fn(&Session) -> bool) {
            loop {
                self.flush().await;
                if done(&self.session) {
                    return;
                }
                self.wait().await;
            }
        }
    }

    /// The peer of the slow-store tests offers a 1 s Session Keepalive and
    /// so ends the session after 2 s without a message from the node (RFC
    /// 9174 5.1.1).
    const KEEPALIVE: u16 = 1;

    /// Node `ipn:1.0` on a [`SlowStore`] in `dir` whose slow writes take
    /// 3 s; the flag that makes them slow and their count.
    fn slow_core(dir: &std::path::Path) -> (Core<SlowStore>, Arc<AtomicBool>, Arc<AtomicUsize>) {
        let slow = Arc::new(AtomicBool::new(false));
        let begun = Arc::new(AtomicUsize::new(0));
        let store = SlowStore {
            inner: RedbStore::open(&dir.join("node.redb")).unwrap(),
            delay: Duration::from_secs(3),
            slow: slow.clone(),
            begun: begun.clone(),
        };
        let config = Config::new("ipn:1.0".parse().unwrap());
        (Core::new(Agent::open(config, store).unwrap()), slow, begun)
    }

    /// A node on loopback taking TCPCL sessions, with its spool in
    /// `spool_dir`, and a [`Peer`] whose session with it is up.
    struct NodeWithPeer {
        peer: Peer,
        clients: mpsc::UnboundedSender<ClientEvent>,
        stop: oneshot::Sender<()>,
        agent: oneshot::Receiver<Result<(), NodeError>>,
        listening: tokio::task::JoinHandle<()>,
    }

    impl NodeWithPeer {
        async fn start(core: Core<SlowStore>, spool_dir: PathBuf) -> NodeWithPeer {
            let (link_tx, link_rx) = mpsc::unbounded_channel();
            let (clients, client_rx) = mpsc::unbounded_channel();
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let address = listener.local_addr().unwrap();
            let session_config = tcpcl::session_config("ipn:1.0");
            let listening =
                tokio::spawn(tcpcl::listen(listener, session_config, spool_dir, link_tx));
            let (stop, stop_rx) = oneshot::channel();
            let agent = spawn_agent(core, link_rx, client_rx, stop_rx).unwrap();
            let mut peer = Peer::connect(address, KEEPALIVE).await;
            peer.run_until(|s| s.state() == TcpclState::Established)
                .await;
            NodeWithPeer {
                peer,
                clients,
                stop,
                agent,
                listening,
            }
        }

        /// Stops the node: its session with the peer ends cleanly.
        async fn stop(mut self) {
            self.stop.send(()).unwrap();
            self.peer.run_until(Session::is_closed).await;
            self.agent.await.unwrap().unwrap();
            self.listening.abort();
        }
    }

    #[test]
    fn a_slow_store_commit_of_a_received_bundle_holds_only_its_last_ack() {
        const BOUND: Duration = Duration::from_secs(15);
        let dir = tempfile::tempdir().unwrap();
        // The bundle the peer sends, made by an agent of its own.
        let bundle = {
            let mut sender = core(dir.path(), "ipn:2.0", Duration::ZERO);
            let (_, mut rx) = up(&mut sender, "ipn:1.0", None);
            let request = SendRequest::new(
                "ipn:2.1".parse().unwrap(),
                "ipn:1.1".parse().unwrap(),
                b"slow to store".to_vec(),
            );
            let now = sender.now();
            sender.agent.send(now, &request).unwrap();
            sender.pump().unwrap();
            next_send(&mut rx).1
        };
        let (core, slow, begun) = slow_core(dir.path());
        let spool_dir = dir.path().to_path_buf();
        let test = async move {
            let mut node = NodeWithPeer::start(core, spool_dir).await;
            let peer = &mut node.peer;

            // The node stores the bundle slowly; its last XFER_ACK waits
            // for that, and the node's KEEPALIVEs go on meanwhile.
            slow.store(true, Ordering::SeqCst);
            let transfer = peer.session.send_transfer(peer.now(), &bundle).unwrap();
            let done = |events: &[TcpclEvent]| {
                events.iter().any(|e| {
                    matches!(e, TcpclEvent::TransferSucceeded { id } if *id == transfer)
                        || matches!(e, TcpclEvent::SessionTerminated(_))
                })
            };
            while !done(&peer.events) {
                peer.flush().await;
                if !done(&peer.events) {
                    peer.wait().await;
                }
            }
            slow.store(false, Ordering::SeqCst);
            assert!(begun.load(Ordering::SeqCst) >= 1, "the commit was slow");
            assert_eq!(
                peer.session.state(),
                TcpclState::Established,
                "{:?}",
                peer.events
            );
            node.stop().await;
        };
        runtime()
            .unwrap()
            .block_on(async { tokio::time::timeout(BOUND, test).await })
            .expect("the test ran within its bound");
        assert!(
            crate::cl::spooled(dir.path()).unwrap().is_empty(),
            "the spool goes once the bundle is stored"
        );
    }

    #[test]
    fn a_slow_store_write_does_not_let_a_peers_keepalive_expire() {
        // One store write takes 3 s.
        const BOUND: Duration = Duration::from_secs(15);
        let dir = tempfile::tempdir().unwrap();
        let (core, slow, begun) = slow_core(dir.path());
        let spool_dir = dir.path().to_path_buf();
        let test = async move {
            let mut node = NodeWithPeer::start(core, spool_dir).await;
            let (peer, client_tx) = (&mut node.peer, &node.clients);
            assert_eq!(peer.session.params().unwrap().keepalive_interval, 1);

            // An application's bundle: the agent stores it, slowly.
            let client = ClientId(1);
            let (answers_tx, mut answers) = mpsc::unbounded_channel();
            client_tx
                .send(ClientEvent::Opened(client, answers_tx))
                .unwrap();
            slow.store(true, Ordering::SeqCst);
            let request = Message::new("SEND")
                .with("dest", "ipn:3.1")
                .with_body(b"slow".to_vec());
            client_tx
                .send(ClientEvent::Request(client, request))
                .unwrap();
            let answer = loop {
                peer.flush().await;
                tokio::select! {
                    answer = answers.recv() => break answer.unwrap(),
                    _ = peer.wait() => {}
                }
            };
            slow.store(false, Ordering::SeqCst);
            assert_eq!(answer.verb, "SENT", "{answer:?}");
            assert!(begun.load(Ordering::SeqCst) >= 1, "the write was slow");
            // The session lived through the write: the node's KEEPALIVEs
            // kept coming.
            peer.flush().await;
            assert_eq!(
                peer.session.state(),
                TcpclState::Established,
                "{:?}",
                peer.events
            );
            node.stop().await;
        };
        runtime()
            .unwrap()
            .block_on(async { tokio::time::timeout(BOUND, test).await })
            .expect("the test ran within its bound");
    }
}
