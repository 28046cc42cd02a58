//! `linklab connect` over a KISS TNC: a keyboard session like `call`'s
//! (see [`super::session`]).

use anyhow::{anyhow, Context};
use linklab_io::{Notice, Request, StationEvent};
use linklab_link::{DisconnectReason, Event, Version};
use linklab_wire::ax25::Address;
use tokio::io::AsyncBufReadExt;

use super::connecting::Connecting;
use super::log::{disconnect_reason, failure_reason};
use super::session::{Session, Typed};
use super::{driver_end, finish, take_common, ConnectArgs, Log, Through};
use crate::options::{release_grace, CommonArgs};
use crate::runtime::{block_on, Signals};

pub(super) async fn connect_async(common: CommonArgs, args: ConnectArgs) -> anyhow::Result<()> {
    let modulus = crate::modulus(args.mod128);
    let config = common.config(modulus)?;
    common.check_path(&args.dest, &args.via)?;
    let mut signals = Signals::new()?;
    let grace = release_grace(&config);
    let (windows, mut k) = (
        (config.window_mod8, config.window_mod128),
        config.window_mod8,
    );
    let remote = args.dest;
    let mut connecting = Connecting::new(remote, &config, modulus);
    let mut session = Session::new(remote, config.n1);
    let mut handle = common.start(config, false).await?;
    let log = Log::new(common.tnc.monitor);
    handle
        .requests
        .send(Request::Connect {
            remote,
            via: args.via.clone(),
        })
        .ok();
    let mut stdin = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    let mut connected = false;
    let mut stdin_open = true;
    let mut stopped_by = None;
    // A line is read only while the link has at most two windows unsent,
    // so that input piped in is read as the link takes it.
    let mut may_read = true;
    let outcome: anyhow::Result<()> = loop {
        tokio::select! {
            notice = handle.notices.recv() => {
                let Some((at, notice)) = notice else {
                    driver_end(&mut handle).await?;
                    break Err(anyhow!("the KISS driver stopped"));
                };
                if let Notice::Station(StationEvent::Unsent { remote: to, .. }) = &notice {
                    may_read |= *to == remote;
                }
                if !connected {
                    connecting.on_notice(&log, &notice);
                }
                let event = match log.notice(at, notice) {
                    Ok(Some((from, event))) if from == remote => event,
                    Ok(_) => continue,
                    Err(e) => break Err(e),
                };
                match event {
                    Event::Connected { version, .. } => {
                        connected = true;
                        if version == Version::V2_2 {
                            k = windows.1;
                        }
                    }
                    Event::Negotiated { params, .. } => (session.n1, k) = (params.n1_tx, params.k_tx),
                    Event::Data { data, .. } => {
                        if let Err(e) = session.on_data(&data).await {
                            break Err(e);
                        }
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
            () = connecting.tick(), if !connected => connecting.waiting(&log),
            line = stdin.next_line(), if connected && stdin_open && may_read => {
                match line.context("cannot read standard input")? {
                    Some(line) => match session.on_line(&handle, &log, &line)? {
                        Typed::Sent => {
                            let octets = 2 * usize::from(k) * session.n1;
                            handle.requests.send(Request::NotifyUnsent { remote, octets }).ok();
                            may_read = false;
                        }
                        Typed::Nothing => {}
                        Typed::Quit => {
                            log.line(&format!("linklab: ~.: releasing the link with {remote}"));
                            stdin_open = false;
                            handle.requests.send(Request::Release { remote }).ok();
                        }
                    },
                    None => {
                        // Released once everything typed is acknowledged.
                        stdin_open = false;
                        handle.requests.send(Request::Release { remote }).ok();
                    }
                }
            }
            stop = signals.recv() => {
                log.line(&format!("linklab: {}: releasing the link", stop.name()));
                stopped_by = Some(stop);
                break Ok(());
            }
        }
    };
    let cut = match (&outcome, stopped_by) {
        (Err(_), _) => Some("the link failed or was refused"),
        (Ok(()), Some(stop)) => Some(stop.name()),
        (Ok(()), None) => None,
    };
    let ended = session.end(&log, cut);
    let linked: &[Address] = if connected && stopped_by.is_some() {
        &[remote]
    } else {
        &[]
    };
    let stopped = finish(&mut handle, &log, linked, grace, &mut signals, |_, _| {}).await;
    outcome?;
    ended?;
    stopped?;
    if let Some(stop) = stopped_by {
        std::process::exit(stop.status());
    }
    Ok(())
}

/// `linklab connect`: over the TNC, or through an AGWPE server.
pub fn connect(mut args: ConnectArgs) -> anyhow::Result<()> {
    match take_common(&mut args.common).through(args.mod128)? {
        Through::Kiss(common) => block_on(connect_async(*common, args)),
        Through::Station(station) => crate::agw_client::connect(station, args.dest, args.via),
    }
}
