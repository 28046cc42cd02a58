//! The station in real time: runs a [`Core`] on the TNCs' byte streams,
//! the AGWPE and KISS listening sockets, the services' programs and TCP
//! connections, and the control socket, reading the clock for it and
//! sleeping until its next timer.
//!
//! - A TNC that cannot be reached, at the start or later, is tried again
//!   every [`Options::reconnect_every`]; every other port serves on.
//! - A client has a reader task, paused while the engine does not take
//!   its input, and a writer behind a bounded queue: one that does not
//!   read what it is sent is disconnected, never left to grow memory.
//! - A program answering a call has its standard output and error read
//!   while its link takes data (a program that floods waits in its
//!   write), and its standard input fed through a bounded queue (one that
//!   never reads is ended). When its link ends it gets SIGTERM, and
//!   SIGKILL [`PROGRAM_GRACE`] later if it is still there.
//! - SIGHUP reads the file again: a good one takes effect
//!   ([`Core::reload`]), a bad one is refused and named, and the running
//!   configuration kept. SIGTERM and SIGINT release every link (DISC),
//!   wait for that at most [`Options::shutdown_grace`], and end the
//!   programs.
//! - With `[status] listen`, the status page and metrics are served by
//!   their own tasks ([`crate::web`]) from a report published every
//!   [`web::PUBLISH_EVERY`]; their clients never reach the loop.
//! - Under systemd (`Type=notify`) the station says READY=1 once it
//!   serves, RELOADING=1 and READY=1 around a reload, STOPPING=1, and
//!   pets the watchdog at half its interval.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use linklab_agw::ClientId;
use linklab_core::Instant;
use linklab_io::tun_driver::{Tun, TunConfig, TunError};
use linklab_io::KissAddress;
use thiserror::Error;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream, UnixListener, UnixStream};
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio::time::sleep_until;

use crate::config::{self, StationConfig};
use crate::core::{Core, Output, SessionId};
use crate::web;

mod answer;
mod tnc;

pub use answer::PROGRAM_GRACE;
use answer::{answer, feed, Answerer};
use tnc::{spawn_tnc, Tnc, Tncs};

/// Settings of the driver itself.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    /// How long after losing a TNC (or failing to reach it) the driver
    /// tries again.
    pub reconnect_every: Duration,
    /// AGWPE and KISS clients served at once.
    pub max_clients: usize,
    /// Messages batched for one client before it counts as too slow.
    pub client_queue: usize,
    /// How long a stop waits for links to be released.
    pub shutdown_grace: Duration,
    /// Refuse to start when a TNC cannot be reached at once (the one-shot
    /// `linklab agw`); a station instead serves its other ports and tries
    /// again.
    pub connect_at_start: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            reconnect_every: Duration::from_secs(5),
            max_clients: 256,
            client_queue: 1024,
            shutdown_grace: Duration::from_secs(10),
            connect_at_start: false,
        }
    }
}

/// Where the station listens, once it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bound {
    /// The AGWPE server.
    pub agw: Option<SocketAddr>,
    /// The KISS server.
    pub kiss: Option<SocketAddr>,
    /// The status page and metrics.
    pub status: Option<SocketAddr>,
}

/// Why the station could not start.
#[derive(Debug, Error)]
pub enum StartError {
    /// A listening socket could not be opened.
    #[error("cannot listen on {address} for {what}: {error}")]
    Listen {
        /// What for.
        what: &'static str,
        /// Where.
        address: String,
        /// Why.
        error: std::io::Error,
    },
    /// A TNC could not be reached at start ([`Options::connect_at_start`]).
    #[error("port {port}: {error}")]
    Connect {
        /// The port, counted from 1.
        port: usize,
        /// Why.
        error: linklab_io::ConnectError,
    },
    /// A TUN device could not be made.
    #[error(transparent)]
    Tun(#[from] TunError),
    /// The control socket's path is taken.
    #[error("control socket {path}: {why}")]
    Control {
        /// The path.
        path: PathBuf,
        /// Why.
        why: String,
    },
}

/// What the tasks tell the loop.
enum Input {
    ClientBytes(ClientId, Vec<u8>),
    ClientGone(ClientId, String),
    TncUp(usize, Tnc),
    TncBytes(usize, Vec<u8>),
    TncGone(usize, String),
    AnswerBytes(SessionId, Vec<u8>),
    AnswerDone(SessionId, String),
    Datagram(usize, Vec<u8>),
    Status(UnixStream),
}

/// Runs the station of `config` (read from `path`, which SIGHUP reads
/// again; `None` for a station made from a command line) until SIGTERM
/// or SIGINT. `ready` is told where it listens once it serves; `log`
/// takes each log line.
pub async fn run(
    path: Option<PathBuf>,
    config: StationConfig,
    options: Options,
    ready: impl FnOnce(Bound),
    log: impl Fn(&str),
) -> Result<(), StartError> {
    let agw = match config.agw {
        Some(address) => Some(listen(address, "AGWPE clients").await?),
        None => None,
    };
    let kiss = match config.kiss_server {
        Some(address) => Some(listen(address, "KISS clients").await?),
        None => None,
    };
    let status = match config.status {
        Some(address) => Some(listen(address, "the status page").await?),
        None => None,
    };
    let control = match &config.control {
        Some(path) => Some(ControlSocket::bind(path).await?),
        None => None,
    };
    // The TUN devices first: without the right to make them, or with a
    // name taken, nothing else is touched.
    let mut devices = Vec::new();
    for spec in &config.tuns {
        let device = Tun::open(&TunConfig {
            name: spec.name.clone(),
            addresses: spec.addresses.clone(),
            mtu: u32::try_from(spec.ax25.mtu).unwrap_or(u32::MAX),
        })
        .await?;
        devices.push(Arc::new(device));
    }
    // The DTN node reaches its port as a KISS client of the station, on
    // a listener of its own on loopback.
    let dtn_listener = match &config.dtn {
        Some(_) => Some(listen(SocketAddr::from(([127, 0, 0, 1], 0)), "the DTN node").await?),
        None => None,
    };
    let mut hup = signal(SignalKind::hangup()).ok();
    let mut term = signal(SignalKind::terminate()).ok();
    let mut int = signal(SignalKind::interrupt()).ok();
    let (input_tx, mut input) = mpsc::channel::<Input>(256);
    let start = tokio::time::Instant::now();
    let now = || Instant::ZERO + start.elapsed();
    let mut core = Core::new(config.clone(), SystemTime::now());
    let tuns: Vec<TunTasks> = devices
        .iter()
        .enumerate()
        .map(|(i, device)| TunTasks::spawn(i, device.clone(), &input_tx))
        .collect();
    for (spec, device) in config.tuns.iter().zip(&devices) {
        let names: Vec<String> = spec
            .addresses
            .iter()
            .map(|(a, l)| format!("{a}/{l}"))
            .collect();
        log(&format!(
            "{} up on port {}: {} ({}), MTU {}",
            device.name(),
            spec.port + 1,
            names.join(", "),
            spec.ax25.local,
            spec.ax25.mtu
        ));
    }
    let mut tncs = Tncs::default();
    for (i, port) in config.ports.iter().enumerate() {
        log(&format!(
            "port {} {:?}: TNC {}",
            i + 1,
            port.name,
            port.kiss
        ));
        if options.connect_at_start {
            let stream = port
                .kiss
                .connect()
                .await
                .map_err(|error| StartError::Connect { port: i + 1, error })?;
            tncs.up(i, spawn_tnc(i, stream, input_tx.clone()));
            core.port_up(now(), i);
        } else {
            tncs.start(i, port.kiss.clone(), Duration::ZERO, &input_tx);
        }
    }
    if let Some(listener) = &agw {
        log(&format!("AGWPE server on {}", local_address(listener)));
    }
    if let Some(listener) = &kiss {
        log(&format!("KISS server on {}", local_address(listener)));
    }
    if let Some(control) = &control {
        log(&format!("control socket {}", control.path.display()));
    }
    let file = path
        .as_ref()
        .map_or_else(|| "(command line)".to_string(), |p| p.display().to_string());
    let (reports, reports_rx) = watch::channel(None);
    let status_address = status.as_ref().and_then(|l| l.local_addr().ok());
    let web = status.map(|listener| {
        log(&format!(
            "status page on http://{}/ (metrics at /metrics)",
            local_address(&listener)
        ));
        tokio::spawn(web::serve(listener, reports_rx, web::Limits::default()))
    });
    let mut next_report = tokio::time::Instant::now();
    for service in &config.services {
        log(&format!(
            "service {}: {}",
            service.callsign,
            service.answer.kind()
        ));
    }
    let dtn_watch = linklab_dtnnode::SharedWatch::default();
    let mut dtn = match (&config.dtn, &dtn_listener) {
        (Some(spec), Some(listener)) => {
            let mut node = spec.node.clone();
            let port = listener.local_addr().map_or(0, |a| a.port());
            if let Some(ax25) = node.ax25.as_mut() {
                ax25.kiss = KissAddress::Tcp {
                    host: "127.0.0.1".into(),
                    port,
                };
            }
            log(&format!(
                "DTN node {} on port {} as {}",
                node.node_id,
                spec.port + 1,
                node.ax25
                    .as_ref()
                    .map(|a| a.mycall.to_string())
                    .unwrap_or_default()
            ));
            core.set_dtn_running(true);
            let watch = dtn_watch.clone();
            Some(std::thread::spawn(move || {
                linklab_dtnnode::run_watched(node, watch).map_err(|e| e.to_string())
            }))
        }
        _ => None,
    };
    let _ = sd_notify::notify(false, &[sd_notify::NotifyState::Ready]);
    log("ready");
    ready(Bound {
        agw: agw.as_ref().and_then(|l| l.local_addr().ok()),
        kiss: kiss.as_ref().and_then(|l| l.local_addr().ok()),
        status: status_address,
    });
    let watchdog = watchdog_interval();
    let mut next_pet = watchdog.map(|w| tokio::time::Instant::now() + w);
    let mut clients: BTreeMap<ClientId, ClientTasks> = BTreeMap::new();
    let mut answers: BTreeMap<SessionId, Answerer> = BTreeMap::new();
    let mut shutdown_at: Option<tokio::time::Instant> = None;
    loop {
        // Orders for the services, after the log lines that led to them.
        while let Some(line) = core.poll_log() {
            log(&line);
        }
        while let Some(output) = core.poll_output() {
            match output {
                Output::Datagram { tun, data } => {
                    if let Some(t) = tuns.get(tun) {
                        t.send(data, &log);
                    }
                }
                output => answer(&mut core, &mut answers, output, now(), &input_tx, &log),
            }
        }
        // Output: KISS to the TNCs, messages to the clients.
        tncs.flush(&mut core, &log);
        let ids: Vec<ClientId> = clients.keys().copied().collect();
        for id in ids {
            let octets = core.server().take_output(id);
            let Some(tasks) = clients.get(&id) else {
                continue;
            };
            if !octets.is_empty() && tasks.writer.try_send(octets).is_err() {
                core.client_closed(now(), id);
                drop_client(&mut clients, id);
                log(&format!(
                    "{id} does not read what it is sent (or went away); disconnected, its links released"
                ));
                continue;
            }
            tasks.accepting.send_if_modified(|a| {
                let accepting = core.server().accepts_input(id);
                std::mem::replace(a, accepting) != accepting
            });
        }
        while let Some(id) = core.server().poll_close() {
            drop_client(&mut clients, id);
            core.client_closed(now(), id);
        }
        for (id, answerer) in &answers {
            answerer.pace(core.session_accepts(*id));
        }
        while let Some(line) = core.poll_log() {
            log(&line);
        }
        if dtn.as_ref().is_some_and(|t| t.is_finished()) {
            if let Some(Err(e) | Ok(Err(e))) = dtn
                .take()
                .map(|t| t.join().map_err(|_| "it panicked".to_string()))
            {
                log(&format!("the DTN node stopped: {e}"));
            }
            core.set_dtn_running(false);
        }
        // At a stop, the DTN node (which has SIGTERM too) sends its DISCs
        // through the station before the TNCs close.
        if shutdown_at.is_some() && core.link_count() == 0 && dtn.is_none() {
            break;
        }
        let timer = core.poll_timeout().map(|t| start + (t - Instant::ZERO));
        // While stopping, look now and then whether the DTN node is done.
        let dtn_check = (shutdown_at.is_some() && dtn.is_some())
            .then(|| tokio::time::Instant::now() + Duration::from_millis(100));
        if web.is_some() && next_report <= tokio::time::Instant::now() {
            let mut report = core.status(now(), &file);
            dtn_seen(&mut report, &dtn_watch);
            reports.send_replace(Some(Arc::new(report)));
            next_report = tokio::time::Instant::now() + web::PUBLISH_EVERY;
        }
        let report_due = web.is_some().then_some(next_report);
        let wake = [timer, shutdown_at, next_pet, dtn_check, report_due]
            .into_iter()
            .flatten()
            .min();
        tokio::select! {
            accepted = accept(agw.as_ref()), if shutdown_at.is_none() => match accepted {
                Ok((socket, peer)) if clients.len() < options.max_clients => {
                    let id = core.server().client_connected();
                    log(&format!("{id} connected from {peer}"));
                    clients.insert(id, spawn_client(id, socket, input_tx.clone(), options.client_queue));
                }
                Ok((_, peer)) => log(&format!("AGWPE client from {peer} refused: {} clients already", options.max_clients)),
                Err(e) => log(&format!("accepting an AGWPE client failed: {e}")),
            },
            accepted = accept(dtn_listener.as_ref()) => match accepted {
                Ok((socket, _)) => {
                    let id = core.server().kiss_client_connected();
                    log(&format!("{id} (KISS) is the DTN node"));
                    clients.insert(id, spawn_client(id, socket, input_tx.clone(), options.client_queue));
                }
                Err(e) => log(&format!("accepting the DTN node failed: {e}")),
            },
            accepted = accept(kiss.as_ref()), if shutdown_at.is_none() => match accepted {
                Ok((socket, peer)) if clients.len() < options.max_clients => {
                    let id = core.server().kiss_client_connected();
                    log(&format!("{id} (KISS) connected from {peer}"));
                    clients.insert(id, spawn_client(id, socket, input_tx.clone(), options.client_queue));
                }
                Ok((_, peer)) => log(&format!("KISS client from {peer} refused: {} clients already", options.max_clients)),
                Err(e) => log(&format!("accepting a KISS client failed: {e}")),
            },
            asked = accept_control(control.as_ref()) => {
                if let Ok(stream) = asked {
                    input_tx.try_send(Input::Status(stream)).ok();
                }
            },
            Some(item) = input.recv() => match item {
                Input::ClientBytes(id, bytes) => core.handle_client_bytes(now(), id, &bytes),
                Input::ClientGone(id, why) => {
                    if clients.contains_key(&id) {
                        log(&format!("{id} {why}"));
                        drop_client(&mut clients, id);
                        core.client_closed(now(), id);
                    }
                }
                Input::TncBytes(port, bytes) => core.handle_kiss_bytes(now(), port, &bytes),
                Input::TncUp(port, tnc) => {
                    let address = core.config().ports.get(port).map(|p| p.kiss.to_string()).unwrap_or_default();
                    log(&format!("port {}: TNC {address} connected", port + 1));
                    tncs.up(port, tnc);
                    core.port_up(now(), port);
                }
                Input::TncGone(port, why) => {
                    if tncs.down(port) {
                        core.port_down(now(), port, &why);
                    } else {
                        log(&format!("port {}: {why}; trying again in {} s", port + 1, options.reconnect_every.as_secs()));
                    }
                    if shutdown_at.is_none() {
                        if let Some(address) = core.config().ports.get(port).map(|p| p.kiss.clone()) {
                            tncs.start(port, address, options.reconnect_every, &input_tx);
                        }
                    }
                }
                Input::AnswerBytes(session, bytes) => core.session_send(now(), session, &bytes),
                Input::AnswerDone(session, why) => match answers.remove(&session) {
                    Some(answerer) => {
                        log(&format!("{session}: {why}; releasing its link"));
                        answerer.stop();
                        core.session_close(now(), session);
                    }
                    // Its link ended first, and it was told to stop.
                    None => log(&format!("{session}: {why}")),
                },
                Input::Datagram(tun, data) => core.tun_datagram(now(), tun, data),
                Input::Status(stream) => {
                    let mut report = core.status(now(), &file);
                    dtn_seen(&mut report, &dtn_watch);
                    tokio::spawn(reply_status(stream, report));
                }
            },
            _ = sleep_until(wake.unwrap_or_else(tokio::time::Instant::now)), if wake.is_some() => {
                let at = tokio::time::Instant::now();
                if shutdown_at.is_some_and(|s| s <= at) {
                    break;
                }
                if let (Some(pet), Some(every)) = (next_pet, watchdog) {
                    if pet <= at {
                        let _ = sd_notify::notify(false, &[sd_notify::NotifyState::Watchdog]);
                        next_pet = Some(at + every);
                    }
                }
                core.handle_timeout(now());
            },
            _ = recv(hup.as_mut()), if shutdown_at.is_none() => {
                let _ = sd_notify::notify(false, &[sd_notify::NotifyState::Reloading]);
                match &path {
                    Some(path) => reload(&mut core, path, now(), &mut tncs, &input_tx, &log),
                    None => log("SIGHUP: nothing to read again (started from the command line, not a station file)"),
                }
                let _ = sd_notify::notify(false, &[sd_notify::NotifyState::Ready]);
            },
            _ = stop(term.as_mut(), int.as_mut()), if shutdown_at.is_none() => {
                let _ = sd_notify::notify(false, &[sd_notify::NotifyState::Stopping]);
                log("stopping: releasing every link");
                core.release_all(now());
                tncs.stop_connecting();
                shutdown_at = Some(tokio::time::Instant::now() + options.shutdown_grace);
            },
        }
    }
    tncs.flush(&mut core, &log);
    tncs.finish().await;
    for (_, answerer) in std::mem::take(&mut answers) {
        answerer.stop();
    }
    for id in clients.keys().copied().collect::<Vec<_>>() {
        drop_client(&mut clients, id);
    }
    for t in tuns {
        t.stop();
    }
    if let Some(web) = web {
        web.abort();
    }
    // The devices go when their last descriptor closes.
    drop(devices);
    if let Some(control) = control {
        control.remove();
    }
    while let Some(line) = core.poll_log() {
        log(&line);
    }
    log("stopped");
    Ok(())
}

/// Reads the file again and hands it to the core.
fn reload(
    core: &mut Core,
    path: &Path,
    now: Instant,
    tncs: &mut Tncs,
    input: &mpsc::Sender<Input>,
    log: &impl Fn(&str),
) {
    let config = match config::load(path) {
        Ok(config) => config,
        Err(e) => {
            log(&format!(
                "reload refused, the running configuration is kept: {e}"
            ));
            return;
        }
    };
    match core.reload(now, config) {
        Ok(reload) => {
            for note in &reload.notes {
                log(&format!("reload: {note}"));
            }
            if reload.notes.is_empty() {
                log("reload: nothing changed");
            }
            for port in reload.reconnect.iter().chain(&reload.added) {
                let Some(address) = core.config().ports.get(*port).map(|p| p.kiss.clone()) else {
                    continue;
                };
                if tncs.down(*port) {
                    core.port_down(now, *port, "its TNC address changed");
                }
                tncs.start(*port, address, Duration::ZERO, input);
            }
        }
        Err(why) => log(&format!(
            "reload refused, the running configuration is kept: {why}"
        )),
    }
}

// ---- TUN devices ----

/// Datagrams queued for the kernel before more are dropped.
const TUN_QUEUE: usize = 256;

/// A TUN device's reader and writer.
struct TunTasks {
    writer: mpsc::Sender<Vec<u8>>,
    tasks: [JoinHandle<()>; 2],
    name: String,
}

impl TunTasks {
    fn spawn(index: usize, device: Arc<Tun>, input: &mpsc::Sender<Input>) -> TunTasks {
        let (writer, mut queue) = mpsc::channel::<Vec<u8>>(TUN_QUEUE);
        let name = device.name().to_string();
        let reader = {
            let device = device.clone();
            let input = input.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 65_536];
                while let Ok(n) = device.recv(&mut buf).await {
                    let data = buf.get(..n).unwrap_or_default().to_vec();
                    if input.send(Input::Datagram(index, data)).await.is_err() {
                        return;
                    }
                }
            })
        };
        let feeder = tokio::spawn(async move {
            while let Some(data) = queue.recv().await {
                // A datagram the kernel refuses is its business (it counts
                // it); the device goes on.
                let _ = device.send(&data).await;
            }
        });
        TunTasks {
            writer,
            tasks: [reader, feeder],
            name,
        }
    }

    fn send(&self, data: Vec<u8>, log: &impl Fn(&str)) {
        if self.writer.try_send(data).is_err() {
            log(&format!(
                "{}: the kernel does not take datagrams as fast as they come; one dropped",
                self.name
            ));
        }
    }

    fn stop(self) {
        for task in self.tasks {
            task.abort();
        }
    }
}

// ---- clients ----

struct ClientTasks {
    writer: mpsc::Sender<Vec<u8>>,
    accepting: watch::Sender<bool>,
    reader: JoinHandle<()>,
    writer_task: JoinHandle<()>,
}

fn drop_client(clients: &mut BTreeMap<ClientId, ClientTasks>, id: ClientId) {
    if let Some(tasks) = clients.remove(&id) {
        tasks.reader.abort();
        tasks.writer_task.abort();
    }
}

fn spawn_client(
    id: ClientId,
    socket: TcpStream,
    input: mpsc::Sender<Input>,
    queue: usize,
) -> ClientTasks {
    socket.set_nodelay(true).ok();
    let (mut reader, writer) = socket.into_split();
    let (accepting, mut accepting_rx) = watch::channel(true);
    let (writer_tx, writer_rx) = mpsc::channel::<Vec<u8>>(queue.max(1));
    let reader_task = tokio::spawn(async move {
        let mut buf = vec![0u8; 8192];
        loop {
            if accepting_rx.wait_for(|a| *a).await.is_err() {
                return;
            }
            let why = match reader.read(&mut buf).await {
                Ok(0) => "closed the connection".to_string(),
                Ok(n) => {
                    let bytes = buf.get(..n).unwrap_or_default().to_vec();
                    if input.send(Input::ClientBytes(id, bytes)).await.is_err() {
                        return;
                    }
                    continue;
                }
                Err(e) => format!("connection failed: {e}"),
            };
            input.send(Input::ClientGone(id, why)).await.ok();
            return;
        }
    });
    ClientTasks {
        writer: writer_tx,
        accepting,
        reader: reader_task,
        writer_task: tokio::spawn(feed(writer, writer_rx)),
    }
}

async fn listen(address: SocketAddr, what: &'static str) -> Result<TcpListener, StartError> {
    TcpListener::bind(address)
        .await
        .map_err(|error| StartError::Listen {
            what,
            address: address.to_string(),
            error,
        })
}

fn local_address(listener: &TcpListener) -> String {
    listener
        .local_addr()
        .map_or_else(|e| format!("(unknown: {e})"), |a| a.to_string())
}

async fn accept(listener: Option<&TcpListener>) -> std::io::Result<(TcpStream, SocketAddr)> {
    match listener {
        Some(listener) => listener.accept().await,
        None => std::future::pending().await,
    }
}

// ---- control socket ----

/// The Unix socket `linklab status` asks.
struct ControlSocket {
    listener: UnixListener,
    path: PathBuf,
}

impl ControlSocket {
    /// Binds `path`. A socket left by a station that is gone is replaced;
    /// one a running station answers on, or any other file, is refused
    /// (never deleted).
    async fn bind(path: &Path) -> Result<ControlSocket, StartError> {
        use std::os::unix::fs::FileTypeExt;
        let refuse = |why: String| StartError::Control {
            path: path.to_path_buf(),
            why,
        };
        if let Ok(meta) = std::fs::symlink_metadata(path) {
            if !meta.file_type().is_socket() {
                return Err(refuse(
                    "a file that is not a socket is there; remove it or choose another path".into(),
                ));
            }
            if UnixStream::connect(path).await.is_ok() {
                return Err(refuse("a running station answers on it".into()));
            }
            std::fs::remove_file(path)
                .map_err(|e| refuse(format!("cannot remove the stale socket: {e}")))?;
        }
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            if !parent.is_dir() {
                return Err(refuse(format!("{} is not a directory", parent.display())));
            }
        }
        let listener = UnixListener::bind(path).map_err(|e| refuse(e.to_string()))?;
        Ok(ControlSocket {
            listener,
            path: path.to_path_buf(),
        })
    }

    fn remove(self) {
        drop(self.listener);
        std::fs::remove_file(&self.path).ok();
    }
}

async fn accept_control(control: Option<&ControlSocket>) -> std::io::Result<UnixStream> {
    match control {
        Some(c) => c.listener.accept().await.map(|(s, _)| s),
        None => std::future::pending().await,
    }
}

/// The DTN node's store and contacts, as it last wrote them, into
/// `report`.
fn dtn_seen(report: &mut crate::status::StatusReport, watch: &linklab_dtnnode::SharedWatch) {
    if let (Some(dtn), Ok(seen)) = (report.dtn.as_mut(), watch.lock()) {
        dtn.stored = seen.stored;
        dtn.contacts = seen.contacts.clone();
        dtn.forwarded = seen.forwarded;
        dtn.delivered = seen.delivered;
    }
}

/// Writes the report as one JSON document and closes.
async fn reply_status(mut stream: UnixStream, report: crate::status::StatusReport) {
    if let Ok(text) = serde_json::to_vec(&report) {
        let _ = tokio::time::timeout(Duration::from_secs(5), stream.write_all(&text)).await;
    }
    stream.shutdown().await.ok();
}

// ---- signals ----

async fn recv(signal: Option<&mut tokio::signal::unix::Signal>) {
    match signal {
        Some(s) => {
            s.recv().await;
        }
        None => std::future::pending().await,
    }
}

async fn stop(
    term: Option<&mut tokio::signal::unix::Signal>,
    int: Option<&mut tokio::signal::unix::Signal>,
) {
    tokio::select! {
        () = recv(term) => {}
        () = recv(int) => {}
    }
}

/// Half the watchdog interval systemd asks for, if it asks.
fn watchdog_interval() -> Option<Duration> {
    let mut usec = 0;
    if sd_notify::watchdog_enabled(false, &mut usec) && usec > 0 {
        Some(Duration::from_micros(usec / 2))
    } else {
        None
    }
}
