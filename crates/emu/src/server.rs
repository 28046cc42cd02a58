//! The thin real-time driver of [`Air`]: the only part of the channel that
//! reads the clock or does I/O.
//!
//! One thread runs the model against the wall clock: it waits for the
//! next event from a client or the model's next timeout (a futex wait
//! with microsecond resolution, not a millisecond timer wheel), hands the
//! model the elapsed time, and passes what comes out to the clients, the
//! monitor and the capture file. A tokio runtime on a second thread
//! accepts and serves the KISS TCP connections; each pseudo-terminal has
//! a reading and a writing thread. Every client has a bounded queue: a
//! client that does not read loses frames (counted for its station), and
//! nobody else is held up.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener as StdListener};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration as StdDuration, Instant as WallInstant, SystemTime};

use linklab_core::Instant;
use linklab_wire::monitor::{self, LinkModuli, MonitorOptions};
use linklab_wire::pcap::{LinkType, PcapWriter};
use thiserror::Error;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc as tmpsc;

use crate::air::{Air, AirFrame, ClientId, Output};
use crate::config::{Plan, PtyPlan};
use crate::pty::Pty;
use crate::report::{Lateness, Report};

/// Most TCP clients connected at once, over all stations.
pub const MAX_CLIENTS: usize = 1024;

/// What the server does besides running the channel.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Print every frame on the air, in the monitor format, on standard
    /// output.
    pub monitor: bool,
    /// Write every frame on the air to this pcap file (link type AX.25),
    /// stamped with the time its last bit left the air.
    pub capture: Option<PathBuf>,
    /// Write the statistics as JSON here at exit.
    pub stats_json: Option<PathBuf>,
    /// Stop on SIGINT or SIGTERM and print the statistics on SIGUSR1.
    pub signals: bool,
}

/// Why the server could not start or had to stop.
#[derive(Debug, Error)]
pub enum ServerError {
    /// A station's port could not be bound.
    #[error("station {station}: cannot listen on {addr}: {source}")]
    Bind {
        /// The station.
        station: String,
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// A pseudo-terminal could not be made.
    #[error("station {station}: cannot open a pseudo-terminal: {source}")]
    Pty {
        /// The station.
        station: String,
        /// Why.
        source: std::io::Error,
    },
    /// The capture or statistics file could not be written.
    #[error("{path}: {source}")]
    File {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The I/O runtime could not start.
    #[error("cannot start the I/O runtime: {0}")]
    Runtime(std::io::Error),
}

/// Where a station can be reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The station's name.
    pub name: String,
    /// Its KISS TCP address.
    pub tcp: SocketAddr,
    /// Its pseudo-terminal, if it has one.
    pub pty: Option<PathBuf>,
}

/// A bound server, not yet running.
#[derive(Debug)]
pub struct Server {
    plan: Plan,
    listeners: Vec<StdListener>,
    ptys: Vec<Option<Pty>>,
    endpoints: Vec<Endpoint>,
}

/// What reaches the model thread.
enum Event {
    Connected {
        client: ClientId,
        station: usize,
        queue: tmpsc::Sender<Vec<u8>>,
    },
    Input {
        client: ClientId,
        octets: Vec<u8>,
    },
    Closed {
        client: ClientId,
    },
    Report,
    Stop,
}

/// Stops a running server from another thread.
#[derive(Debug, Clone)]
pub struct Stopper(mpsc::Sender<Event>);

impl Stopper {
    /// Asks the server to stop; it prints and writes its statistics, closes
    /// the capture file and returns from [`Server::run`].
    pub fn stop(&self) {
        let _ = self.0.send(Event::Stop);
    }
}

impl std::fmt::Debug for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Event")
    }
}

impl Server {
    /// Binds every station's KISS TCP port and opens its pseudo-terminal:
    /// a port in use or a pty that cannot be made is an error now, before
    /// anything runs.
    pub fn bind(plan: Plan) -> Result<Server, ServerError> {
        let mut listeners = Vec::new();
        let mut ptys = Vec::new();
        let mut endpoints = Vec::new();
        for s in &plan.stations {
            let addr = SocketAddr::new(plan.bind, s.port);
            let listener = StdListener::bind(addr).map_err(|source| ServerError::Bind {
                station: s.name.clone(),
                addr,
                source,
            })?;
            let tcp = listener.local_addr().unwrap_or(addr);
            let pty = match &s.pty {
                None => None,
                Some(p) => {
                    let link = match p {
                        PtyPlan::Anonymous => None,
                        PtyPlan::Link(path) => Some(path.as_path()),
                    };
                    Some(Pty::open(link).map_err(|source| ServerError::Pty {
                        station: s.name.clone(),
                        source,
                    })?)
                }
            };
            endpoints.push(Endpoint {
                name: s.name.clone(),
                tcp,
                pty: pty.as_ref().map(|p| match &s.pty {
                    Some(PtyPlan::Link(link)) => link.clone(),
                    _ => p.path.clone(),
                }),
            });
            listeners.push(listener);
            ptys.push(pty);
        }
        Ok(Server {
            plan,
            listeners,
            ptys,
            endpoints,
        })
    }

    /// Where each station is.
    pub fn endpoints(&self) -> &[Endpoint] {
        &self.endpoints
    }

    /// Runs until stopped (by [`Stopper::stop`], or a signal with
    /// [`Options::signals`]); returns the final statistics. `started`
    /// gets the stopper once the ports accept clients.
    pub fn run(
        self,
        options: &Options,
        started: impl FnOnce(Stopper),
    ) -> Result<Report, ServerError> {
        let (events, inbox) = mpsc::channel();
        let mut capture = match &options.capture {
            None => None,
            Some(path) => {
                let file = std::fs::File::create(path).map_err(|source| ServerError::File {
                    path: path.clone(),
                    source,
                })?;
                Some((
                    path.clone(),
                    PcapWriter::new(std::io::BufWriter::new(file), LinkType::Ax25).map_err(
                        |e| ServerError::File {
                            path: path.clone(),
                            source: std::io::Error::other(e.to_string()),
                        },
                    )?,
                ))
            }
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(ServerError::Runtime)?;
        let next_id = Arc::new(AtomicU64::new(0));
        let queue_frames = self.plan.client_queue_frames;
        let mut air = Air::new(&self.plan);
        // The pseudo-terminals are clients of their stations for good.
        let mut queues: BTreeMap<ClientId, (usize, tmpsc::Sender<Vec<u8>>)> = BTreeMap::new();
        for (station, pty) in self.ptys.iter().enumerate() {
            let Some(pty) = pty else { continue };
            let client = ClientId(next_id.fetch_add(1, Ordering::Relaxed));
            let (queue, rx) = tmpsc::channel(queue_frames);
            air.attach(client, station);
            queues.insert(client, (station, queue));
            spawn_pty(pty, client, events.clone(), rx)?;
        }
        let listeners = self.listeners;
        let io_events = events.clone();
        // Taken over before the ports are announced: a signal that comes
        // as soon as the ready line is read must find the handler there.
        let signals = if options.signals {
            let _context = runtime.enter();
            Signals::register()
        } else {
            None
        };
        // Dropped when this function returns, which ends the I/O thread
        // and closes every connection.
        let (_running, stopped) = tokio::sync::oneshot::channel::<()>();
        std::thread::Builder::new()
            .name("channel-io".into())
            .spawn(move || {
                runtime.block_on(async move {
                    tokio::select! {
                        () = serve(listeners, io_events, next_id, queue_frames, signals) => {}
                        _ = stopped => {}
                    }
                });
            })
            .map_err(ServerError::Runtime)?;
        started(Stopper(events.clone()));

        let origin = WallInstant::now();
        let wall_origin = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default();
        let model_now = || Instant::ZERO + origin.elapsed();
        let mut lateness: Vec<u32> = Vec::new();
        let mut moduli = LinkModuli::new();
        let wall_now_us = || origin.elapsed().as_micros() as u64;
        loop {
            let now = model_now();
            air.handle_timeout(now);
            while let Some(output) = air.poll_output() {
                match output {
                    Output::ToClient {
                        client,
                        octets,
                        due,
                        ..
                    } => {
                        let Some((_, queue)) = queues.get(&client) else {
                            continue;
                        };
                        match queue.try_send(octets) {
                            Ok(()) => {
                                let late = wall_now_us().saturating_sub(due.as_micros());
                                lateness.push(u32::try_from(late).unwrap_or(u32::MAX));
                            }
                            Err(tmpsc::error::TrySendError::Full(_)) => air.client_overflow(client),
                            Err(tmpsc::error::TrySendError::Closed(_)) => {}
                        }
                    }
                    Output::OnAir(frame) => {
                        if options.monitor {
                            println!("{}", monitor_line(&air, &frame, &mut moduli));
                        }
                        if let Some((path, writer)) = capture.as_mut() {
                            let at = wall_origin + (frame.end - Instant::ZERO);
                            writer
                                .write_packet(at, &frame.body)
                                .and_then(|()| writer.flush())
                                .map_err(|e| ServerError::File {
                                    path: path.clone(),
                                    source: std::io::Error::other(e.to_string()),
                                })?;
                        }
                    }
                    Output::Notice { station, text } => {
                        eprintln!(
                            "linklab channel: station {}: {text}",
                            air.station_name(station)
                        );
                    }
                }
            }
            let event = match air.poll_timeout() {
                None => inbox.recv().ok(),
                Some(at) => {
                    let wait = at.as_micros().saturating_sub(model_now().as_micros());
                    match inbox.recv_timeout(StdDuration::from_micros(wait)) {
                        Ok(e) => Some(e),
                        Err(mpsc::RecvTimeoutError::Timeout) => continue,
                        Err(mpsc::RecvTimeoutError::Disconnected) => None,
                    }
                }
            };
            let now = model_now();
            match event {
                None | Some(Event::Stop) => break,
                Some(Event::Connected {
                    client,
                    station,
                    queue,
                }) => {
                    air.attach(client, station);
                    queues.insert(client, (station, queue));
                }
                Some(Event::Input { client, octets }) => air.handle_input(now, client, &octets),
                Some(Event::Closed { client }) => {
                    air.detach(client);
                    queues.remove(&client);
                }
                Some(Event::Report) => {
                    print!("{}", with_lateness(air.report(now), &mut lateness));
                }
            }
        }
        let now = model_now();
        air.handle_timeout(now);
        let report = with_lateness(air.report(now), &mut lateness);
        if let Some((path, writer)) = capture.as_mut() {
            writer.flush().map_err(|e| ServerError::File {
                path: path.clone(),
                source: std::io::Error::other(e.to_string()),
            })?;
        }
        if let Some(path) = &options.stats_json {
            let json = serde_json::to_string_pretty(&report).unwrap_or_default();
            std::fs::write(path, json + "\n").map_err(|source| ServerError::File {
                path: path.clone(),
                source,
            })?;
        }
        Ok(report)
    }
}

/// The report with the lateness of the deliveries so far.
fn with_lateness(mut report: Report, samples: &mut [u32]) -> Report {
    if !samples.is_empty() {
        samples.sort_unstable();
        let at = |q: f64| {
            let i = ((samples.len() as f64 - 1.0) * q).round() as usize;
            u64::from(samples[i.min(samples.len() - 1)])
        };
        report.lateness = Some(Lateness {
            count: samples.len() as u64,
            p50_us: at(0.5),
            p99_us: at(0.99),
            max_us: at(1.0),
        });
    }
    report
}

/// One line of the air monitor: model time of the frame's end, channel,
/// sender, the frame (modulo 128 on links set up with SABME), and who did
/// not get it and why.
fn monitor_line(air: &Air, frame: &AirFrame, moduli: &mut LinkModuli) -> String {
    let text = monitor::format_raw_with(
        &frame.body,
        moduli.observe(&frame.body),
        MonitorOptions { max_info: Some(32) },
    );
    let lost: Vec<String> = frame
        .outcomes
        .iter()
        .filter(|(_, o)| *o != linklab_channel::Outcome::Intact)
        .map(|(s, o)| {
            let why = match o {
                linklab_channel::Outcome::Collision => "collision",
                linklab_channel::Outcome::BitErrors => "bit errors",
                linklab_channel::Outcome::ReceiverKeyed => "transmitting",
                linklab_channel::Outcome::Intact => "",
            };
            format!("{} ({why})", air.station_name(*s))
        })
        .collect();
    let mut line = format!(
        "{:>12.6} ch{} {}: {text}",
        frame.end.as_secs_f64(),
        frame.channel,
        air.station_name(frame.from)
    );
    if !lost.is_empty() {
        line.push_str(&format!(" [lost at {}]", lost.join(", ")));
    }
    line
}

/// Accepts and serves the TCP clients (and the signals) until the model
/// thread goes away.
async fn serve(
    listeners: Vec<StdListener>,
    events: mpsc::Sender<Event>,
    next_id: Arc<AtomicU64>,
    queue_frames: usize,
    signals: Option<Signals>,
) {
    let clients = Arc::new(AtomicU64::new(0));
    for (station, listener) in listeners.into_iter().enumerate() {
        let _ = listener.set_nonblocking(true);
        let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
            continue;
        };
        let events = events.clone();
        let next_id = next_id.clone();
        let clients = clients.clone();
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    // Out of descriptors or similar: wait and go on.
                    tokio::time::sleep(StdDuration::from_millis(50)).await;
                    continue;
                };
                if clients.load(Ordering::Relaxed) as usize >= MAX_CLIENTS {
                    continue;
                }
                clients.fetch_add(1, Ordering::Relaxed);
                let client = ClientId(next_id.fetch_add(1, Ordering::Relaxed));
                let events = events.clone();
                let clients = clients.clone();
                tokio::spawn(async move {
                    serve_client(stream, client, station, events, queue_frames).await;
                    clients.fetch_sub(1, Ordering::Relaxed);
                });
            }
        });
    }
    if let Some(signals) = signals {
        let events = events.clone();
        tokio::spawn(async move { signals.forward(events).await });
    }
    // Runs until the model thread returns (see `Server::run`).
    std::future::pending::<()>().await;
}

/// SIGINT and SIGTERM (stop) and SIGUSR1 (report), taken over from
/// their default actions.
struct Signals {
    int: tokio::signal::unix::Signal,
    term: tokio::signal::unix::Signal,
    usr1: tokio::signal::unix::Signal,
}

impl Signals {
    /// Takes the three signals over; inside a runtime's context.
    fn register() -> Option<Signals> {
        use tokio::signal::unix::{signal, SignalKind};
        Some(Signals {
            int: signal(SignalKind::interrupt()).ok()?,
            term: signal(SignalKind::terminate()).ok()?,
            usr1: signal(SignalKind::user_defined1()).ok()?,
        })
    }

    /// Turns each signal into its event for the model thread.
    async fn forward(mut self, events: mpsc::Sender<Event>) {
        loop {
            let event = tokio::select! {
                _ = self.int.recv() => Event::Stop,
                _ = self.term.recv() => Event::Stop,
                _ = self.usr1.recv() => Event::Report,
            };
            if events.send(event).is_err() {
                return;
            }
        }
    }
}

async fn serve_client(
    stream: tokio::net::TcpStream,
    client: ClientId,
    station: usize,
    events: mpsc::Sender<Event>,
    queue_frames: usize,
) {
    let _ = stream.set_nodelay(true);
    let (mut reader, mut writer) = stream.into_split();
    let (queue, mut rx) = tmpsc::channel::<Vec<u8>>(queue_frames);
    if events
        .send(Event::Connected {
            client,
            station,
            queue,
        })
        .is_err()
    {
        return;
    }
    let write = tokio::spawn(async move {
        while let Some(octets) = rx.recv().await {
            if writer.write_all(&octets).await.is_err() {
                break;
            }
        }
    });
    let mut buf = vec![0u8; 4096];
    loop {
        match reader.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let octets = buf[..n].to_vec();
                if events.send(Event::Input { client, octets }).is_err() {
                    break;
                }
            }
        }
    }
    let _ = events.send(Event::Closed { client });
    write.abort();
}

/// A reading and a writing thread for a station's pseudo-terminal.
fn spawn_pty(
    pty: &Pty,
    client: ClientId,
    events: mpsc::Sender<Event>,
    mut rx: tmpsc::Receiver<Vec<u8>>,
) -> Result<(), ServerError> {
    let pty_error = |source| ServerError::Pty {
        station: format!("{client:?}"),
        source,
    };
    let mut reader = pty.master.try_clone().map_err(pty_error)?;
    let mut writer = pty.master.try_clone().map_err(pty_error)?;
    std::thread::Builder::new()
        .name("pty-read".into())
        .spawn(move || {
            let mut buf = vec![0u8; 4096];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    // No program has the terminal open: poll again.
                    std::thread::sleep(StdDuration::from_millis(20));
                    continue;
                }
                let octets = buf[..n].to_vec();
                if events.send(Event::Input { client, octets }).is_err() {
                    break;
                }
            }
        })
        .map_err(pty_error)?;
    std::thread::Builder::new()
        .name("pty-write".into())
        .spawn(move || {
            while let Some(octets) = rx.blocking_recv() {
                if writer.write_all(&octets).is_err() {
                    break;
                }
            }
        })
        .map_err(pty_error)?;
    Ok(())
}
