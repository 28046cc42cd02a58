//! `linklab listen`, `linklab send` and `linklab connect`: AX.25 connected
//! mode over a real KISS TNC (TCP or serial), in real time, driven by
//! [`linklab_io`].

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{anyhow, Context};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use linklab_io::{
    driver, Direction, DriverHandle, DriverOptions, KissAddress, KissParams, Notice, Request,
    Station, StationEvent,
};
use linklab_link::{Config, DisconnectReason, Event, FailureReason, RecoveryMode, Version};
use linklab_wire::ax25::Address;
use linklab_wire::control::Modulus;
use linklab_wire::kiss::Port;
use linklab_wire::monitor;
use tokio::io::{AsyncBufReadExt, AsyncWrite, AsyncWriteExt};

/// Information octets shown per monitored frame.
const MONITOR_OPTIONS: monitor::MonitorOptions = monitor::MonitorOptions { max_info: Some(32) };

/// Options shared by the three commands and `linklab ip`.
#[derive(Args)]
pub struct CommonArgs {
    /// The KISS TNC: tcp:HOST:PORT (e.g. tcp:127.0.0.1:8001, Dire Wolf) or
    /// serial:DEVICE:BAUD (e.g. serial:/dev/ttyUSB0:9600).
    #[arg(long, value_name = "ADDRESS")]
    pub(crate) kiss: KissAddress,
    /// This station's callsign and SSID, e.g. N0CALL-2.
    #[arg(long, value_name = "CALL")]
    pub(crate) mycall: Address,
    /// Initial T1 (FRACK) in milliseconds [default: 3000].
    #[arg(long, value_name = "MS")]
    t1_ms: Option<u64>,
    /// T2, the delayed-acknowledgement timer, in milliseconds [default: 1000].
    #[arg(long, value_name = "MS")]
    t2_ms: Option<u64>,
    /// N2, the most tries of a frame [default: 10].
    #[arg(long, value_name = "N")]
    n2: Option<u8>,
    /// Window k (1-7 modulo 8, 1-127 modulo 128) [default: 7 or 32].
    #[arg(long, value_name = "K")]
    window: Option<u8>,
    /// N1, the largest information field in octets (1-2048) [default: 256].
    #[arg(long, value_name = "N")]
    pub(crate) n1: Option<usize>,
    /// Ask for lost frames with selective reject (SREJ) on modulo-128
    /// links instead of REJ; XID also offers multi-SREJ (several lost
    /// frames in one SREJ), used if the peer agrees.
    #[arg(long)]
    srej: bool,
    /// Set P on the last I frame of a window (checkpointing), so the peer
    /// answers at once instead of after T2.
    #[arg(long)]
    poll_last: bool,
    /// The TNC's KISS port (0-15).
    #[arg(long, value_name = "N", default_value_t = 0,
          value_parser = clap::value_parser!(u8).range(0..=15))]
    kiss_port: u8,
    /// Send TXDELAY (keyup delay) to the TNC, in milliseconds (10 ms units).
    #[arg(long, value_name = "MS")]
    txdelay_ms: Option<u64>,
    /// Send the persistence P (0-255, p = (P+1)/256) to the TNC.
    #[arg(long, value_name = "P")]
    persist: Option<u8>,
    /// Send SLOTTIME to the TNC, in milliseconds (10 ms units).
    #[arg(long, value_name = "MS")]
    slot_ms: Option<u64>,
    /// Send TXTAIL to the TNC, in milliseconds (10 ms units).
    #[arg(long, value_name = "MS")]
    txtail_ms: Option<u64>,
    /// Print every frame sent (TX) and received (RX) on standard error.
    #[arg(long)]
    pub(crate) monitor: bool,
}

#[derive(Args)]
pub struct ListenArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// Write received data to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Exit after the first connection is released.
    #[arg(long)]
    once: bool,
}

#[derive(Args)]
pub struct SendArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// The station to send to.
    #[arg(long, value_name = "CALL")]
    to: Address,
    /// Digipeaters to go through, in order (comma separated).
    #[arg(long, value_name = "DIGI,...", value_delimiter = ',')]
    via: Vec<Address>,
    /// Connect with SABME (AX.25 v2.2, modulo 128) instead of SABM.
    #[arg(long)]
    mod128: bool,
    /// The file to send.
    file: PathBuf,
}

#[derive(Args)]
pub struct ConnectArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// Digipeaters to go through, in order (comma separated).
    #[arg(long, value_name = "DIGI,...", value_delimiter = ',')]
    via: Vec<Address>,
    /// Connect with SABME (AX.25 v2.2, modulo 128) instead of SABM.
    #[arg(long)]
    mod128: bool,
    /// The station to connect to.
    dest: Address,
}

impl CommonArgs {
    /// The link configuration: AX.25 v2.2 defaults, REJ unless --srej
    /// (SREJ, multi-SREJ if XID agrees), with the options given.
    pub(crate) fn config(&self, modulus: Modulus) -> anyhow::Result<Config> {
        let mut config = Config {
            modulus,
            recovery: if self.srej {
                RecoveryMode::MultiSrej
            } else {
                RecoveryMode::Rej
            },
            poll_on_last_i_frame: self.poll_last,
            ..Config::default()
        };
        if let Some(ms) = self.t1_ms {
            config.t1 = Duration::from_millis(ms);
            config.t1_min = config.t1_min.min(config.t1);
        }
        if let Some(ms) = self.t2_ms {
            config.t2 = Duration::from_millis(ms);
        }
        if let Some(n2) = self.n2 {
            config.n2 = n2;
        }
        if let Some(n1) = self.n1 {
            config.n1 = n1;
        }
        if let Some(k) = self.window {
            config.window_mod128 = k;
            if k <= 7 || modulus == Modulus::Mod8 {
                config.window_mod8 = k;
            }
        }
        config.validate().context("invalid link parameters")?;
        Ok(config)
    }

    pub(crate) fn params(&self) -> KissParams {
        KissParams {
            port: Port::new(self.kiss_port).unwrap_or_default(),
            txdelay: self.txdelay_ms.map(Duration::from_millis),
            persistence: self.persist,
            slot_time: self.slot_ms.map(Duration::from_millis),
            txtail: self.txtail_ms.map(Duration::from_millis),
        }
    }

    /// Connects to the TNC and starts the driver.
    async fn start(&self, config: Config, listening: bool) -> anyhow::Result<DriverHandle> {
        let grace = (config.t1 * (u32::from(config.n2) + 1)).min(Duration::from_secs(15));
        let mut station = Station::new(self.mycall, config).context("invalid link parameters")?;
        station.set_listening(listening);
        station.set_monitor(self.monitor);
        let stream = self.kiss.connect().await?;
        Ok(driver::spawn(
            stream,
            station,
            self.params(),
            DriverOptions {
                shutdown_grace: grace,
            },
        ))
    }
}

/// Runs `future` on a single-threaded runtime. The runtime is dropped
/// without waiting for a blocked standard-input read.
pub(crate) fn block_on<F: std::future::Future<Output = anyhow::Result<()>>>(
    future: F,
) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the tokio runtime")?;
    let result = runtime.block_on(future);
    runtime.shutdown_background();
    result
}

/// Standard-error output that stays clear of the progress bar.
struct Log {
    monitor: bool,
    bar: Option<ProgressBar>,
}

impl Log {
    fn line(&self, text: &str) {
        match &self.bar {
            Some(bar) => bar.suspend(|| eprintln!("{text}")),
            None => eprintln!("{text}"),
        }
    }

    /// Logs what every command shows the same way; returns the link event
    /// (with its remote) for the command to act on.
    fn notice(&self, at: Duration, notice: Notice) -> anyhow::Result<Option<(Address, Event)>> {
        match notice {
            Notice::Rejected(error) => Err(anyhow!(error)),
            Notice::Station(StationEvent::Monitor {
                direction,
                bytes,
                modulus,
            }) => {
                if self.monitor {
                    let dir = match direction {
                        Direction::Tx => "TX",
                        Direction::Rx => "RX",
                    };
                    let line = monitor::format_raw_with(&bytes, modulus, MONITOR_OPTIONS);
                    self.line(&format!("{dir} {:>9.3} {line}", at.as_secs_f64()));
                }
                Ok(None)
            }
            Notice::Station(StationEvent::BadInput(error)) => {
                self.line(&format!("linklab: bad input ignored: {error}"));
                Ok(None)
            }
            Notice::Station(StationEvent::Outstanding { .. }) => Ok(None),
            Notice::Station(StationEvent::Link { remote, event }) => {
                match &event {
                    Event::Connected { version, incoming } => {
                        let (dir, modulo) = (
                            if *incoming { "from" } else { "to" },
                            match version {
                                Version::V2_0 => "AX.25 v2.0, modulo 8",
                                Version::V2_2 => "AX.25 v2.2, modulo 128",
                            },
                        );
                        self.line(&format!("linklab: connected {dir} {remote} ({modulo})"));
                    }
                    Event::Disconnected { reason } => self.line(&format!(
                        "linklab: disconnected from {remote}: {}",
                        disconnect_reason(*reason)
                    )),
                    Event::LinkFailure { reason } => self.line(&format!(
                        "linklab: link with {remote} failed: {}",
                        failure_reason(*reason)
                    )),
                    Event::Error(error) => self.line(&format!(
                        "linklab: protocol error on link with {remote}: {error}"
                    )),
                    Event::Negotiated { outcome, params } => self.line(&format!(
                        "linklab: parameters with {remote} ({outcome:?}): N1 {} out/{} in, \
                         k {} out, {:?}, T1 {} ms, N2 {}",
                        params.n1_tx,
                        params.n1_rx,
                        params.k_tx,
                        params.recovery,
                        params.t1.as_millis(),
                        params.n2
                    )),
                    Event::Data { .. } | Event::UnitData { .. } => {}
                }
                Ok(Some((remote, event)))
            }
        }
    }
}

fn disconnect_reason(reason: DisconnectReason) -> &'static str {
    match reason {
        DisconnectReason::LocalRequest => "released at our request",
        DisconnectReason::ReleaseTimeout => "no answer to our DISC; released anyway",
        DisconnectReason::RemoteRequest => "released by the peer (DISC)",
        DisconnectReason::RemoteDm => "the peer sent DM",
        DisconnectReason::Refused => "connection refused (DM)",
        DisconnectReason::Abandoned => "connection attempt abandoned",
    }
}

fn failure_reason(reason: FailureReason) -> &'static str {
    match reason {
        FailureReason::ConnectTimeout => "no answer to N2 connection requests",
        FailureReason::UnacknowledgedData => "data unacknowledged after N2 tries",
        FailureReason::NoResponseToEnquiry => "no answer to N2 polls",
        FailureReason::PeerBusy => "the peer stayed busy for N2 polls",
    }
}

/// Asks the driver to release every link and stop, logs what comes until
/// it has, and returns its error if it failed.
async fn finish(handle: &mut DriverHandle, log: &Log) -> anyhow::Result<()> {
    handle.requests.send(Request::Shutdown).ok();
    while let Some((at, notice)) = handle.notices.recv().await {
        // Errors of late requests no longer matter.
        let _ = log.notice(at, notice);
    }
    driver_end(handle).await
}

/// The driver's result once its notice channel has closed.
async fn driver_end(handle: &mut DriverHandle) -> anyhow::Result<()> {
    match (&mut handle.task).await {
        Ok(result) => result.map_err(Into::into),
        Err(e) => Err(anyhow!("the KISS driver stopped: {e}")),
    }
}

pub fn listen(args: ListenArgs) -> anyhow::Result<()> {
    block_on(listen_async(args))
}

async fn listen_async(args: ListenArgs) -> anyhow::Result<()> {
    let mut out: Box<dyn AsyncWrite + Unpin + Send> = match &args.out {
        Some(path) => Box::new(
            tokio::fs::File::create(path)
                .await
                .with_context(|| format!("cannot create {}", path.display()))?,
        ),
        None => Box::new(tokio::io::stdout()),
    };
    let config = args.common.config(Modulus::Mod128)?;
    let mut handle = args.common.start(config, true).await?;
    let log = Log {
        monitor: args.common.monitor,
        bar: None,
    };
    log.line(&format!(
        "linklab: {} listening on {}",
        args.common.mycall, args.common.kiss
    ));
    let mut connected: Vec<Address> = Vec::new();
    let interrupted = loop {
        let (at, notice) = tokio::select! {
            notice = handle.notices.recv() => match notice {
                Some(n) => n,
                None => return driver_end(&mut handle).await,
            },
            _ = tokio::signal::ctrl_c() => break true,
        };
        let event = match log.notice(at, notice) {
            Ok(Some(event)) => event,
            Ok(None) => continue,
            Err(e) => {
                log.line(&format!("linklab: {e:#}"));
                continue;
            }
        };
        match event {
            (remote, Event::Connected { .. }) if !connected.contains(&remote) => {
                connected.push(remote);
            }
            (_, Event::Data { data, .. }) => {
                out.write_all(&data)
                    .await
                    .context("cannot write received data")?;
                out.flush().await.context("cannot write received data")?;
            }
            (remote, Event::Disconnected { .. } | Event::LinkFailure { .. })
                if args.once && connected.contains(&remote) =>
            {
                break false;
            }
            _ => {}
        }
    };
    out.flush().await.context("cannot write received data")?;
    if interrupted {
        log.line("linklab: interrupted; releasing links");
    }
    finish(&mut handle, &log).await
}

pub fn send(args: SendArgs) -> anyhow::Result<()> {
    block_on(send_async(args))
}

async fn send_async(args: SendArgs) -> anyhow::Result<()> {
    let data = tokio::fs::read(&args.file)
        .await
        .with_context(|| format!("cannot read {}", args.file.display()))?;
    let modulus = crate::modulus(args.mod128);
    let config = args.common.config(modulus)?;
    // Data are queued once the link's N1 for sending is known: at once on a
    // v2.0 link, after the XID exchange on a v2.2 one (6.3.2), since the
    // peer may accept shorter I frames than ours.
    let xid = config.xid;
    let mut n1 = config.n1;
    let remote = args.to;
    let started = std::time::Instant::now();
    let mut handle = args.common.start(config, false).await?;
    let bar = ProgressBar::with_draw_target(Some(data.len() as u64), ProgressDrawTarget::hidden());
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut log = Log {
        monitor: args.common.monitor,
        bar: None,
    };
    handle
        .requests
        .send(Request::Connect {
            remote,
            via: args.via.clone(),
        })
        .ok();
    // Connected at, data queued, all acknowledged at.
    let mut connected_at: Option<std::time::Instant> = None;
    let mut queued = false;
    let mut acked_at: Option<std::time::Instant> = None;
    let outcome: anyhow::Result<()> = loop {
        let (at, notice) = tokio::select! {
            notice = handle.notices.recv() => match notice {
                Some(n) => n,
                None => {
                    driver_end(&mut handle).await?;
                    break Err(anyhow!("the KISS driver stopped"));
                }
            },
            _ = tokio::signal::ctrl_c() => break Err(anyhow!("interrupted")),
        };
        if let Notice::Station(StationEvent::Outstanding { frames, .. }) = &notice {
            if queued {
                let done = data
                    .len()
                    .saturating_sub(frames.saturating_mul(n1))
                    .min(data.len());
                bar.set_position(done as u64);
                if log.bar.is_none() && started.elapsed() > Duration::from_secs(1) {
                    bar.set_draw_target(ProgressDrawTarget::stderr());
                    log.bar = Some(bar.clone());
                }
                if *frames == 0 {
                    acked_at = Some(std::time::Instant::now());
                }
            }
        }
        let event = match log.notice(at, notice) {
            Ok(Some((from, event))) if from == remote => event,
            Ok(_) => continue,
            Err(e) => break Err(e),
        };
        match event {
            Event::Connected { .. } if connected_at.is_some() => {
                break Err(anyhow!(
                    "the link with {remote} was reset; data may have been lost"
                ));
            }
            Event::Connected { version, .. } => {
                connected_at = Some(std::time::Instant::now());
                if version == Version::V2_0 || !xid {
                    queue_file(&handle, remote, &data, n1);
                    queued = true;
                }
                if data.is_empty() {
                    acked_at = connected_at;
                }
            }
            Event::Negotiated { params, .. } if !queued => {
                n1 = params.n1_tx;
                queue_file(&handle, remote, &data, n1);
                queued = true;
            }
            Event::Disconnected {
                reason: DisconnectReason::LocalRequest | DisconnectReason::ReleaseTimeout,
            } => break Ok(()),
            Event::Disconnected {
                reason: DisconnectReason::Refused,
            } => break Err(anyhow!("{remote} refused the connection (DM)")),
            Event::Disconnected { reason } => {
                break Err(anyhow!(
                    "the link with {remote} was released before all data was acknowledged: {}",
                    disconnect_reason(reason)
                ))
            }
            Event::LinkFailure { reason } => {
                break Err(anyhow!(
                    "the link with {remote} failed: {}",
                    failure_reason(reason)
                ))
            }
            _ => {}
        }
    };
    bar.finish_and_clear();
    log.bar = None;
    let stopped = finish(&mut handle, &log).await;
    outcome?;
    stopped?;
    if let (Some(from), Some(to)) = (connected_at, acked_at) {
        let span = to.duration_since(from).as_secs_f64();
        let rate = if span > 0.0 {
            data.len() as f64 / span
        } else {
            f64::INFINITY
        };
        println!(
            "sent {} bytes to {remote} in {span:.3} s: {rate:.0} bytes/s (elapsed {:.3} s with connection set-up and release)",
            data.len(),
            started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

/// Queues `data` as I frames of at most `n1` octets, then asks the station
/// to release the link once everything is acknowledged.
fn queue_file(handle: &DriverHandle, remote: Address, data: &[u8], n1: usize) {
    for chunk in data.chunks(n1.max(1)) {
        handle
            .requests
            .send(Request::Send {
                remote,
                data: chunk.to_vec(),
            })
            .ok();
    }
    handle.requests.send(Request::Release { remote }).ok();
}

pub fn connect(args: ConnectArgs) -> anyhow::Result<()> {
    block_on(connect_async(args))
}

async fn connect_async(args: ConnectArgs) -> anyhow::Result<()> {
    let modulus = crate::modulus(args.mod128);
    let config = args.common.config(modulus)?;
    let mut n1 = config.n1;
    let remote = args.dest;
    let mut handle = args.common.start(config, false).await?;
    let log = Log {
        monitor: args.common.monitor,
        bar: None,
    };
    handle
        .requests
        .send(Request::Connect {
            remote,
            via: args.via.clone(),
        })
        .ok();
    log.line(&format!("linklab: connecting to {remote}..."));
    let mut stdin = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    let mut stdout = tokio::io::stdout();
    let mut connected = false;
    let mut stdin_open = true;
    let outcome: anyhow::Result<()> = loop {
        tokio::select! {
            notice = handle.notices.recv() => {
                let Some((at, notice)) = notice else {
                    driver_end(&mut handle).await?;
                    break Err(anyhow!("the KISS driver stopped"));
                };
                let event = match log.notice(at, notice) {
                    Ok(Some((from, event))) if from == remote => event,
                    Ok(_) => continue,
                    Err(e) => break Err(e),
                };
                match event {
                    Event::Connected { .. } => connected = true,
                    Event::Negotiated { params, .. } => n1 = params.n1_tx,
                    Event::Data { data, .. } => {
                        let text: Vec<u8> =
                            data.iter().map(|&b| if b == b'\r' { b'\n' } else { b }).collect();
                        stdout.write_all(&text).await.context("cannot write to standard output")?;
                        stdout.flush().await.context("cannot write to standard output")?;
                    }
                    Event::Disconnected { reason: DisconnectReason::LocalRequest | DisconnectReason::ReleaseTimeout | DisconnectReason::RemoteRequest } => break Ok(()),
                    Event::Disconnected { reason: DisconnectReason::Refused } => {
                        break Err(anyhow!("{remote} refused the connection (DM)"))
                    }
                    Event::Disconnected { reason } => {
                        break Err(anyhow!("the link with {remote} was released: {}", disconnect_reason(reason)))
                    }
                    Event::LinkFailure { reason } => {
                        break Err(anyhow!("the link with {remote} failed: {}", failure_reason(reason)))
                    }
                    _ => {}
                }
            }
            line = stdin.next_line(), if connected && stdin_open => {
                match line.context("cannot read standard input")? {
                    Some(line) => {
                        let mut bytes = line.into_bytes();
                        bytes.push(b'\r');
                        for chunk in bytes.chunks(n1) {
                            handle.requests.send(Request::Send { remote, data: chunk.to_vec() }).ok();
                        }
                    }
                    None => {
                        // Released once everything typed is acknowledged.
                        stdin_open = false;
                        handle.requests.send(Request::Release { remote }).ok();
                    }
                }
            }
            _ = tokio::signal::ctrl_c() => {
                log.line("linklab: interrupted; releasing the link");
                break Ok(());
            }
        }
    };
    let stopped = finish(&mut handle, &log).await;
    outcome?;
    stopped
}
