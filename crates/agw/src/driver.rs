//! The real-time driver: runs a [`Server`] on a listening socket and the
//! TNCs' byte streams with tokio, reading the clock for it and sleeping
//! until its next timer.
//!
//! Each client has a reader task, paused while the server does not take
//! its input ([`Server::accepts_input`]: the client then blocks in its
//! own socket write, which is AGWPE's only flow control besides 'Y'), and
//! a writer task behind a bounded queue: a client that does not read its
//! messages is disconnected when its queue is full, never left to grow
//! memory. A TNC that goes away is reported to the server (its links end)
//! and reconnected every [`DriverOptions::reconnect_every`].

use std::collections::BTreeMap;
use std::future::Future;
use std::time::Duration;

use linklab_core::Instant;
use linklab_io::{ConnectError, KissAddress};
use thiserror::Error;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio::time::sleep_until;

use crate::server::{ClientId, Server};

/// Settings of the driver itself.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DriverOptions {
    /// How long after losing a TNC the driver tries to connect again.
    pub reconnect_every: Duration,
    /// Clients served at once; one more is accepted and closed at once.
    pub max_clients: usize,
    /// Messages batched for one client before it counts as too slow.
    pub client_queue: usize,
    /// How long a stop waits for links to be released.
    pub shutdown_grace: Duration,
}

impl Default for DriverOptions {
    fn default() -> DriverOptions {
        DriverOptions {
            reconnect_every: Duration::from_secs(5),
            max_clients: 256,
            client_queue: 1024,
            shutdown_grace: Duration::from_secs(10),
        }
    }
}

/// Why the driver could not start.
#[derive(Debug, Error)]
pub enum DriverError {
    /// A TNC could not be reached at start.
    #[error("port {port}: {error}")]
    Connect {
        /// The port, counted from 1.
        port: usize,
        /// Why.
        error: ConnectError,
    },
}

/// Batches of octets queued for a TNC before more are dropped: a TNC on
/// a slow serial line that falls this far behind is losing frames anyway.
const TNC_QUEUE: usize = 256;

/// What the tasks tell the loop.
enum Input {
    ClientBytes(ClientId, Vec<u8>),
    ClientGone(ClientId, String),
    TncUp(usize, Tnc),
    TncBytes(usize, Vec<u8>),
    TncGone(usize, String),
}

struct ClientTasks {
    writer: mpsc::Sender<Vec<u8>>,
    accepting: watch::Sender<bool>,
    reader: JoinHandle<()>,
    writer_task: JoinHandle<()>,
}

/// Where the server meets the world.
#[derive(Debug)]
pub struct Endpoints {
    /// Where AGWPE clients connect.
    pub agw: TcpListener,
    /// Where clients of the shared KISS port connect, if anywhere.
    pub kiss: Option<TcpListener>,
    /// The ports' TNCs, in port order.
    pub tncs: Vec<KissAddress>,
}

/// Runs `server` until `stop` completes, then releases every link (for at
/// most the grace period) and returns. Every TNC of `endpoints` is
/// connected before any client is served, then `ready` is called. Log
/// lines go to `log`.
pub async fn run(
    mut server: Server,
    endpoints: Endpoints,
    options: DriverOptions,
    ready: impl FnOnce(),
    log: impl Fn(&str),
    stop: impl Future<Output = ()>,
) -> Result<(), DriverError> {
    let Endpoints {
        agw: listener,
        kiss: kiss_listener,
        tncs,
    } = endpoints;
    let start = tokio::time::Instant::now();
    let now =
        || Instant::from_micros(u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX));
    let (input_tx, mut input) = mpsc::channel::<Input>(256);
    let mut tnc_writers: BTreeMap<usize, Tnc> = BTreeMap::new();
    let mut tnc_drops: u64 = 0;
    let mut reconnecting: Vec<JoinHandle<()>> = Vec::new();
    for (port, address) in tncs.iter().enumerate() {
        let stream = address
            .connect()
            .await
            .map_err(|error| DriverError::Connect {
                port: port + 1,
                error,
            })?;
        tnc_writers.insert(port, spawn_tnc(port, stream, input_tx.clone()));
        server.port_up(now(), port);
    }
    ready();
    let mut clients: BTreeMap<ClientId, ClientTasks> = BTreeMap::new();
    let mut shutdown_at: Option<tokio::time::Instant> = None;
    tokio::pin!(stop);
    loop {
        // Output: KISS to the TNCs, messages to the clients, log lines.
        for (port, writer) in &tnc_writers {
            let octets = server.take_tx(*port);
            let len = octets.len();
            if len > 0 {
                if let Err(mpsc::error::TrySendError::Full(_)) = writer.try_send(octets) {
                    tnc_drops += 1;
                    if tnc_drops <= 10 || tnc_drops.is_multiple_of(100) {
                        log(&format!("port {}: the TNC does not take octets as fast as they come: {len} dropped ({tnc_drops} times so far)", port + 1));
                    }
                }
            }
        }
        let ids: Vec<ClientId> = clients.keys().copied().collect();
        for id in ids {
            let octets = server.take_output(id);
            let Some(tasks) = clients.get(&id) else {
                continue;
            };
            if !octets.is_empty() && tasks.writer.try_send(octets).is_err() {
                server.client_closed(now(), id);
                drop_client(&mut clients, id);
                log(&format!("{id} does not read what it is sent (or went away); disconnected, its links released"));
                continue;
            }
            tasks.accepting.send_if_modified(|a| {
                let now_accepting = server.accepts_input(id);
                std::mem::replace(a, now_accepting) != now_accepting
            });
        }
        while let Some(id) = server.poll_close() {
            drop_client(&mut clients, id);
            server.client_closed(now(), id);
        }
        while let Some(line) = server.poll_log() {
            log(&line);
        }
        if shutdown_at.is_some() && server.link_count() == 0 {
            break;
        }
        let timer = server
            .poll_timeout()
            .map(|t| start + Duration::from_micros(t.as_micros()));
        let wake = match (timer, shutdown_at) {
            (Some(t), Some(s)) => Some(t.min(s)),
            (t, s) => t.or(s),
        };
        tokio::select! {
            accepted = listener.accept(), if shutdown_at.is_none() => match accepted {
                Ok((socket, peer)) if clients.len() < options.max_clients => {
                    let id = server.client_connected();
                    log(&format!("{id} connected from {peer}"));
                    clients.insert(id, spawn_client(id, socket, input_tx.clone(), options.client_queue));
                }
                Ok((_, peer)) => log(&format!("client from {peer} refused: {} clients already", options.max_clients)),
                Err(e) => log(&format!("accepting a client failed: {e}")),
            },
            accepted = accept_optional(kiss_listener.as_ref()), if shutdown_at.is_none() => match accepted {
                Ok((socket, peer)) if clients.len() < options.max_clients => {
                    let id = server.kiss_client_connected();
                    log(&format!("{id} (KISS) connected from {peer}"));
                    clients.insert(id, spawn_client(id, socket, input_tx.clone(), options.client_queue));
                }
                Ok((_, peer)) => log(&format!("KISS client from {peer} refused: {} clients already", options.max_clients)),
                Err(e) => log(&format!("accepting a KISS client failed: {e}")),
            },
            Some(item) = input.recv() => match item {
                Input::ClientBytes(id, bytes) => server.handle_client_bytes(now(), id, &bytes),
                Input::ClientGone(id, why) => {
                    if clients.contains_key(&id) {
                        log(&format!("{id} {why}"));
                        drop_client(&mut clients, id);
                        server.client_closed(now(), id);
                    }
                }
                Input::TncBytes(port, bytes) => server.handle_kiss_bytes(now(), port, &bytes),
                Input::TncUp(port, writer) => {
                    tnc_writers.insert(port, writer);
                    log(&format!("port {}: TNC {} connected again", port + 1, tncs.get(port).map(ToString::to_string).unwrap_or_default()));
                    server.port_up(now(), port);
                }
                Input::TncGone(port, why) => {
                    tnc_writers.remove(&port);
                    server.port_down(now(), port, &why);
                    if let Some(address) = tncs.get(port).cloned() {
                        reconnecting.push(tokio::spawn(reconnect(port, address, options.reconnect_every, input_tx.clone())));
                    }
                }
            },
            _ = sleep_until(wake.unwrap_or_else(tokio::time::Instant::now)), if wake.is_some() => {
                if shutdown_at.is_some_and(|s| s <= tokio::time::Instant::now()) {
                    break;
                }
                server.handle_timeout(now());
            },
            () = &mut stop, if shutdown_at.is_none() => {
                log("stopping: releasing every link");
                server.release_all(now());
                shutdown_at = Some(tokio::time::Instant::now() + options.shutdown_grace);
            },
        }
    }
    // What is left for the TNCs goes out before the tasks end.
    for (port, writer) in &tnc_writers {
        let octets = server.take_tx(*port);
        if !octets.is_empty() {
            writer.try_send(octets).ok();
        }
    }
    for task in reconnecting {
        task.abort();
    }
    for tnc in tnc_writers.into_values() {
        tnc.finish().await;
    }
    for id in clients.keys().copied().collect::<Vec<_>>() {
        drop_client(&mut clients, id);
    }
    Ok(())
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
    let (mut reader, mut writer) = socket.into_split();
    let (accepting, mut accepting_rx) = watch::channel(true);
    let (writer_tx, mut writer_rx) = mpsc::channel::<Vec<u8>>(queue.max(1));
    let reader_task = tokio::spawn(async move {
        let mut buf = vec![0u8; 8192];
        loop {
            // Paused while the server does not take this client's input.
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
    let writer_task = tokio::spawn(async move {
        while let Some(octets) = writer_rx.recv().await {
            if writer.write_all(&octets).await.is_err() {
                return;
            }
        }
    });
    ClientTasks {
        writer: writer_tx,
        accepting,
        reader: reader_task,
        writer_task,
    }
}

/// A connected TNC: the queue of octets for it and the tasks that read
/// and write its byte stream.
struct Tnc {
    writer: mpsc::Sender<Vec<u8>>,
    read: JoinHandle<()>,
    write: JoinHandle<()>,
}

/// How long a stop waits for the last octets (the DISCs) to reach a TNC.
const FLUSH_GRACE: Duration = Duration::from_secs(2);

impl Tnc {
    /// Queues `octets`, unless the queue is full or the writer is gone.
    fn try_send(&self, octets: Vec<u8>) -> Result<(), mpsc::error::TrySendError<Vec<u8>>> {
        self.writer.try_send(octets)
    }

    /// Lets the writer send what is queued and close the stream (within
    /// [`FLUSH_GRACE`]), then stops the reader.
    async fn finish(self) {
        drop(self.writer);
        tokio::time::timeout(FLUSH_GRACE, self.write).await.ok();
        self.read.abort();
    }
}

/// Reader and writer tasks for a TNC's byte stream.
fn spawn_tnc(
    port: usize,
    stream: Box<dyn linklab_io::KissStream>,
    input: mpsc::Sender<Input>,
) -> Tnc {
    let (mut reader, mut writer) = tokio::io::split(stream);
    let (writer_tx, mut writer_rx) = mpsc::channel::<Vec<u8>>(TNC_QUEUE);
    let read = tokio::spawn(async move {
        let mut buf = vec![0u8; 4096];
        loop {
            let why = match reader.read(&mut buf).await {
                Ok(0) => "the KISS TNC closed the connection".to_string(),
                Ok(n) => {
                    let bytes = buf.get(..n).unwrap_or_default().to_vec();
                    if input.send(Input::TncBytes(port, bytes)).await.is_err() {
                        return;
                    }
                    continue;
                }
                Err(e) => format!("cannot read from the KISS TNC: {e}"),
            };
            input.send(Input::TncGone(port, why)).await.ok();
            return;
        }
    });
    let write = tokio::spawn(async move {
        while let Some(octets) = writer_rx.recv().await {
            if writer.write_all(&octets).await.is_err() {
                // The reader sees the connection fail too.
                return;
            }
        }
        writer.shutdown().await.ok();
    });
    Tnc {
        writer: writer_tx,
        read,
        write,
    }
}

/// Tries to reach a lost TNC every `every` until it answers.
async fn reconnect(port: usize, address: KissAddress, every: Duration, input: mpsc::Sender<Input>) {
    loop {
        tokio::time::sleep(every).await;
        if let Ok(stream) = address.connect().await {
            let tnc = spawn_tnc(port, stream, input.clone());
            input.send(Input::TncUp(port, tnc)).await.ok();
            return;
        }
    }
}

/// The next client of `listener`, or never without one.
async fn accept_optional(
    listener: Option<&TcpListener>,
) -> std::io::Result<(TcpStream, std::net::SocketAddr)> {
    match listener {
        Some(listener) => listener.accept().await,
        None => std::future::pending().await,
    }
}
