//! `linklab listen`, `send` and `connect` with `--station`: the same
//! commands through an AGWPE server that owns the radio ports (`linklab
//! station`, `linklab agw`, Dire Wolf, AGWPE), spoken to with
//! [`linklab_agw::client`]. What they write and how they end matches the
//! KISS versions in [`crate::link_cmd`], whose file writing they share.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{anyhow, Context};
use linklab_agw::client::{ClientEvent, ClientOptions, Link};
use linklab_agw::connection::{Connection, ConnectionError};
use linklab_link::{Event, Version};
use linklab_wire::ax25::{same_station, Address, Pid};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

use crate::link_cmd::{Log, Receiver};
use crate::options::via_error;
use crate::runtime::{block_on, Signals, Stop as Signal, INTERRUPTED};
use crate::usage::usage;

/// How long a release waits for the server's 'd' before the command
/// gives up on it: the server's own T1 and N2 bound the release, and 15 s
/// is the KISS commands' longest wait too.
const RELEASE_GRACE: Duration = Duration::from_secs(15);

/// How long the server has to answer a registration.
const ANSWER_WITHIN: Duration = Duration::from_secs(10);

/// The AGWPE server and what the command does there.
pub(crate) struct StationArgs {
    /// HOST:PORT.
    pub(crate) address: String,
    /// The radio port, counted from 0 as in the AGWPE header.
    pub(crate) port: u8,
    pub(crate) mycall: Address,
}

/// SIGINT (Ctrl-C), SIGTERM or SIGHUP, as the KISS commands catch them
/// ([`crate::runtime::Signals`]), and which of them came.
pub(crate) struct Stop {
    signals: Option<Signals>,
    last: Option<Signal>,
}

impl Stop {
    /// Catches the three; call inside the runtime. If they cannot be
    /// caught, the default action (the process ends) stays.
    pub(crate) fn new() -> Stop {
        Stop {
            signals: Signals::new().ok(),
            last: None,
        }
    }

    /// Resolves at the next signal (cancel-safe, for `select!`).
    pub(crate) async fn wait(&mut self) {
        match self.signals.as_mut() {
            Some(signals) => self.last = Some(signals.recv().await),
            None => std::future::pending().await,
        }
    }

    /// The name of the signal that came, for the log.
    fn name(&self) -> &'static str {
        self.last.map_or("interrupted", Signal::name)
    }

    /// The exit status for the signal that came: 128 + its number.
    fn status(&self) -> i32 {
        self.last.map_or(INTERRUPTED, Signal::status)
    }
}

/// Connects to the server.
pub(crate) async fn open(address: &str) -> anyhow::Result<Connection> {
    Ok(Connection::open(address, ClientOptions::default()).await?)
}

/// A lost server as the commands say it.
fn lost(address: &str, error: ConnectionError) -> anyhow::Error {
    anyhow!("AGWPE server {address}: {error}")
}

/// Registers `call` ('X') and waits for the answer; refused, it is an
/// error naming the call.
async fn register(conn: &mut Connection, station: &StationArgs) -> anyhow::Result<()> {
    let call = station.mycall;
    conn.client().register(&call);
    let answer = tokio::time::timeout(ANSWER_WITHIN, async {
        loop {
            match conn.next_event().await? {
                ClientEvent::Registered { call: c, ok } if same_station(&c, &call) => {
                    return Ok::<bool, ConnectionError>(ok)
                }
                _ => {}
            }
        }
    })
    .await;
    match answer {
        Ok(Ok(true)) => Ok(()),
        Ok(Ok(false)) => Err(anyhow!(
            "{call} is registered by another program on that server ({})",
            station.address
        )),
        Ok(Err(e)) => Err(lost(&station.address, e)),
        Err(_) => Err(anyhow!(
            "AGWPE server {}: no answer to the registration of {call} within {} s",
            station.address,
            ANSWER_WITHIN.as_secs()
        )),
    }
}

/// Refuses a link to this station itself or a digipeater path that
/// cannot work, as the KISS commands do.
fn check_path(mycall: &Address, dest: &Address, via: &[Address]) -> anyhow::Result<()> {
    if same_station(dest, mycall) {
        return Err(usage(format!(
            "{dest} is this station's own callsign (--mycall): a station cannot connect to itself"
        )));
    }
    match via_error(mycall, dest, via) {
        Some(why) => Err(usage(format!("--via: {why}"))),
        None => Ok(()),
    }
}

/// Releases `links` ('d') and waits for the server to say each is down,
/// at most [`RELEASE_GRACE`]; a second Ctrl-C or SIGTERM quits at once.
/// Each event that comes meanwhile goes to `on_event`.
async fn release(
    conn: &mut Connection,
    log: &Log,
    stop: &mut Stop,
    links: &[Link],
    mut on_event: impl FnMut(ClientEvent) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    if links.is_empty() {
        return Ok(());
    }
    for link in links {
        conn.client().disconnect(*link);
    }
    let names: Vec<String> = links.iter().map(|l| l.remote.to_string()).collect();
    log.line(&format!(
        "linklab: releasing the link with {}: waiting up to {} s for the server; \
         Ctrl-C again to quit at once",
        names.join(", "),
        RELEASE_GRACE.as_secs()
    ));
    let mut open: Vec<Link> = links.to_vec();
    let deadline = tokio::time::Instant::now() + RELEASE_GRACE;
    while !open.is_empty() {
        tokio::select! {
            event = conn.next_event() => {
                let event = event?;
                if let ClientEvent::Disconnected { link, .. } = &event {
                    open.retain(|l| l != link);
                }
                on_event(event)?;
            }
            () = tokio::time::sleep_until(deadline) => {
                log.line("linklab: the server did not confirm the release in time");
                break;
            }
            () = stop.wait() => {
                eprintln!("linklab: {} again; quitting at once", stop.name());
                std::process::exit(stop.status());
            }
        }
    }
    Ok(())
}

pub(crate) fn listen(station: StationArgs, receiver: Receiver, once: bool) -> anyhow::Result<()> {
    block_on(listen_async(station, receiver, once))
}

async fn listen_async(
    station: StationArgs,
    mut receiver: Receiver,
    once: bool,
) -> anyhow::Result<()> {
    let mut stop = Stop::new();
    let mut conn = open(&station.address).await?;
    register(&mut conn, &station).await?;
    let log = Log::new(false);
    log.line(&format!(
        "linklab: {} listening on AGWPE server {} (every radio port)",
        station.mycall, station.address
    ));
    let mycall = station.mycall;
    let interrupted = loop {
        let event = tokio::select! {
            event = conn.next_event() => match event {
                Ok(event) => event,
                Err(e) => {
                    receiver.end_all(&log, "the AGWPE server went away")?;
                    return Err(lost(&station.address, e));
                }
            },
            () = stop.wait() => break true,
        };
        if on_listen_event(&log, &mut receiver, &mycall, event)? && once {
            break false;
        }
    };
    if interrupted {
        log.line(&format!("linklab: {}: releasing links", stop.name()));
    }
    let links: Vec<Link> = conn
        .client()
        .links()
        .into_iter()
        .filter(|l| same_station(&l.local, &mycall))
        .collect();
    let released = release(&mut conn, &log, &mut stop, &links, |event| {
        on_listen_event(&log, &mut receiver, &mycall, event).map(|_| ())
    })
    .await;
    receiver.end_all(&log, "linklab stopped")?;
    conn.client().unregister(&mycall);
    conn.close(Duration::from_secs(1)).await.ok();
    released.map_err(|e| anyhow!("AGWPE server {}: {e:#}", station.address))?;
    match receiver.cut {
        0 => Ok(()),
        1 => Err(anyhow!("a transfer was cut; its data is incomplete")),
        n => Err(anyhow!("{n} transfers were cut; their data is incomplete")),
    }
}

/// `listen`'s part of a server event; true if it ended a transfer.
fn on_listen_event(
    log: &Log,
    receiver: &mut Receiver,
    mycall: &Address,
    event: ClientEvent,
) -> anyhow::Result<bool> {
    match event {
        ClientEvent::Connected { link, .. } if same_station(&link.local, mycall) => {
            log.line(&format!(
                "linklab: connected from {} (port {})",
                link.remote,
                u16::from(link.port) + 1
            ));
            receiver.on_event(
                log,
                link.remote,
                Event::Connected {
                    version: Version::V2_0,
                    incoming: true,
                },
            )
        }
        ClientEvent::Data { link, pid, data } if same_station(&link.local, mycall) => receiver
            .on_event(
                log,
                link.remote,
                Event::Data {
                    pid: Pid::from(pid),
                    data,
                },
            ),
        ClientEvent::Disconnected {
            link,
            text,
            retry_out,
            ..
        } if same_station(&link.local, mycall) => {
            log.line(&format!("linklab: {}: {text}", link.remote));
            if retry_out {
                receiver.end(
                    log,
                    &link.remote,
                    Some("the server reports that the peer stopped answering"),
                )
            } else {
                receiver.end(log, &link.remote, None)
            }
        }
        ClientEvent::Unreadable(why) => {
            log.line(&format!("linklab: server message ignored: {why}"));
            Ok(false)
        }
        _ => Ok(false),
    }
}

pub(crate) fn send(
    station: StationArgs,
    to: Address,
    via: Vec<Address>,
    file: PathBuf,
) -> anyhow::Result<()> {
    check_path(&station.mycall, &to, &via)?;
    let data = crate::input::read(&file)?;
    block_on(send_async(station, to, via, data))
}

async fn send_async(
    station: StationArgs,
    to: Address,
    via: Vec<Address>,
    data: Vec<u8>,
) -> anyhow::Result<()> {
    let started = std::time::Instant::now();
    let mut stop = Stop::new();
    let mut conn = open(&station.address).await?;
    register(&mut conn, &station).await?;
    let log = Log::new(false);
    let link = Link {
        port: station.port,
        local: station.mycall,
        remote: to,
    };
    conn.client().connect(link, &via);
    let now = conn.now();
    conn.client().send(now, link, &data);
    log.line(&format!(
        "linklab: connecting to {to} through AGWPE server {} port {}...",
        station.address,
        u16::from(station.port) + 1
    ));
    let total = data.len();
    let mut connected_at: Option<std::time::Instant> = None;
    let mut acked_at: Option<std::time::Instant> = None;
    let mut releasing = false;
    let outcome: anyhow::Result<()> = loop {
        let event = tokio::select! {
            event = conn.next_event() => match event {
                Ok(event) => event,
                Err(e) => {
                    let acked = conn.client().acknowledged(&link);
                    break Err(anyhow!(
                        "{}; {to} acknowledged {acked} of {total} octets",
                        lost(&station.address, e)
                    ));
                }
            },
            () = stop.wait() => {
                let acked = conn.client().acknowledged(&link);
                log.line(&format!(
                    "linklab: {}: {to} acknowledged {acked} of {total} octets; releasing the link",
                    stop.name()
                ));
                let up = conn.client().links().contains(&link);
                let links: &[Link] = if up { &[link] } else { &[] };
                release(&mut conn, &log, &mut stop, links, |_| Ok(())).await.ok();
                conn.client().unregister(&station.mycall);
                conn.close(Duration::from_secs(1)).await.ok();
                std::process::exit(stop.status());
            }
        };
        match event {
            ClientEvent::Connected { link: l, .. } if l == link => {
                connected_at = Some(std::time::Instant::now());
                log.line(&format!("linklab: connected to {to}"));
            }
            ClientEvent::Outstanding { link: l, .. } if l == link => {}
            ClientEvent::Disconnected {
                link: l,
                text,
                acknowledged,
                ..
            } if l == link => {
                if releasing {
                    break Ok(());
                }
                if connected_at.is_none() {
                    break Err(anyhow!("no link with {to}: {text}"));
                }
                break Err(anyhow!(
                    "the link with {to} was cut after {acknowledged} of {total} octets were \
                     acknowledged ({text})"
                ));
            }
            ClientEvent::Unreadable(why) => {
                log.line(&format!("linklab: server message ignored: {why}"));
            }
            _ => {}
        }
        if !releasing && connected_at.is_some() && conn.client().all_acknowledged(&link) {
            acked_at = Some(std::time::Instant::now());
            releasing = true;
            conn.client().disconnect(link);
        }
    };
    conn.client().unregister(&station.mycall);
    conn.close(Duration::from_secs(1)).await.ok();
    outcome?;
    if let (Some(from), Some(to_at)) = (connected_at, acked_at) {
        let span = to_at.duration_since(from).as_secs_f64();
        let rate = if span > 0.0 {
            total as f64 * 8.0 / span
        } else {
            f64::INFINITY
        };
        println!(
            "sent {total} bytes to {to} in {span:.3} s: {rate:.0} bit/s (elapsed {:.3} s with connection set-up and release)",
            started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

pub(crate) fn connect(
    station: StationArgs,
    dest: Address,
    via: Vec<Address>,
) -> anyhow::Result<()> {
    check_path(&station.mycall, &dest, &via)?;
    block_on(connect_async(station, dest, via))
}

async fn connect_async(
    station: StationArgs,
    dest: Address,
    via: Vec<Address>,
) -> anyhow::Result<()> {
    let mut stop = Stop::new();
    let mut conn = open(&station.address).await?;
    register(&mut conn, &station).await?;
    let log = Log::new(false);
    let link = Link {
        port: station.port,
        local: station.mycall,
        remote: dest,
    };
    conn.client().connect(link, &via);
    log.line(&format!("linklab: connecting to {dest}..."));
    let mut stdin = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    let mut stdout = tokio::io::stdout();
    let mut connected = false;
    let mut stdin_open = true;
    let mut releasing = false;
    let outcome: anyhow::Result<()> = loop {
        tokio::select! {
            event = conn.next_event() => {
                let event = match event {
                    Ok(event) => event,
                    Err(e) => break Err(lost(&station.address, e)),
                };
                match event {
                    ClientEvent::Connected { link: l, .. } if l == link => {
                        connected = true;
                        log.line(&format!("linklab: connected to {dest}"));
                    }
                    ClientEvent::Data { link: l, data, .. } if l == link => {
                        let text: Vec<u8> =
                            data.iter().map(|&b| if b == b'\r' { b'\n' } else { b }).collect();
                        stdout.write_all(&text).await.context("cannot write to standard output")?;
                        stdout.flush().await.context("cannot write to standard output")?;
                    }
                    ClientEvent::Disconnected { link: l, text, retry_out, .. } if l == link => {
                        log.line(&format!("linklab: {text}"));
                        if !connected {
                            break Err(anyhow!("no link with {dest}: {text}"));
                        }
                        if retry_out && !releasing {
                            break Err(anyhow!("the link with {dest} failed: {text}"));
                        }
                        break Ok(());
                    }
                    ClientEvent::Unreadable(why) => {
                        log.line(&format!("linklab: server message ignored: {why}"));
                    }
                    _ => {}
                }
                // Standard input ended: released once all typed is acknowledged.
                if connected && !stdin_open && !releasing && conn.client().all_acknowledged(&link) {
                    releasing = true;
                    conn.client().disconnect(link);
                }
            }
            line = stdin.next_line(), if connected && stdin_open => {
                match line.context("cannot read standard input")? {
                    Some(line) => {
                        let mut bytes = line.into_bytes();
                        bytes.push(b'\r');
                        let now = conn.now();
                        conn.client().send(now, link, &bytes);
                    }
                    None => {
                        stdin_open = false;
                        if conn.client().all_acknowledged(&link) {
                            releasing = true;
                            conn.client().disconnect(link);
                        }
                    }
                }
            }
            () = stop.wait() => {
                log.line(&format!("linklab: {}: releasing the link", stop.name()));
                let up = conn.client().links().contains(&link);
                let links: &[Link] = if up { &[link] } else { &[] };
                let released = release(&mut conn, &log, &mut stop, links, |_| Ok(())).await;
                break released;
            }
        }
    };
    conn.client().unregister(&station.mycall);
    conn.close(Duration::from_secs(1)).await.ok();
    // As `connect --kiss`: a session ended by a signal exits with its
    // status once the link is released.
    if outcome.is_ok() && stop.last.is_some() {
        std::process::exit(stop.status());
    }
    outcome
}
