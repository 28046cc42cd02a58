//! `linklab listen` over a KISS TNC: every connection into a
//! [`Receiver`], or, with `--chat`, one caller in a keyboard session.

use std::io::IsTerminal;

use anyhow::{anyhow, Context};
use linklab_io::{Notice, Request, StationEvent};
use linklab_link::{DisconnectReason, Event};
use linklab_wire::ax25::{same_station, Address};
use linklab_wire::control::Modulus;
use tokio::io::AsyncBufReadExt;

use super::log::{disconnect_reason, failure_reason};
use super::session::{Session, Typed};
use super::{driver_end, finish, take_common, ListenArgs, Log, Receiver, Through};
use crate::options::{release_grace, CommonArgs};
use crate::runtime::{block_on, Signals};
use crate::usage::usage;

pub(super) async fn listen_async(
    common: CommonArgs,
    args: ListenArgs,
    mut receiver: Receiver,
) -> anyhow::Result<()> {
    let config = common.config(Modulus::Mod128)?;
    let mut signals = Signals::new()?;
    let grace = release_grace(&config);
    if args.chat {
        return chat(common, config, signals).await;
    }
    let mut handle = common.start(config, true).await?;
    let log = Log::new(common.tnc.monitor);
    log.line(&format!(
        "linklab: {} listening on {}",
        common.mycall, common.kiss
    ));
    let stopped_by = loop {
        let (at, notice) = tokio::select! {
            notice = handle.notices.recv() => match notice {
                Some(n) => n,
                None => {
                    receiver.end_all(&log, "the KISS TNC connection ended")?;
                    return driver_end(&mut handle).await;
                }
            },
            stop = signals.recv() => break Some(stop),
        };
        let (remote, event) = match log.notice(at, notice) {
            Ok(Some(event)) => event,
            Ok(None) => continue,
            Err(e) => {
                log.line(&format!("linklab: {e:#}"));
                continue;
            }
        };
        if receiver.on_event(&log, remote, event)? && args.once {
            break None;
        }
    };
    if let Some(stop) = stopped_by {
        log.line(&format!("linklab: {}: releasing links", stop.name()));
    }
    let mut failed = None;
    let stopped = finish(
        &mut handle,
        &log,
        &receiver.remotes(),
        grace,
        &mut signals,
        |remote, event| {
            if let Err(e) = receiver.on_event(&log, remote, event) {
                failed.get_or_insert(e);
            }
        },
    )
    .await;
    if let Some(e) = failed {
        return Err(e);
    }
    receiver.end_all(&log, "linklab stopped")?;
    stopped?;
    match receiver.cut {
        0 => Ok(()),
        1 => Err(anyhow!("a transfer was cut; its data is incomplete")),
        n => Err(anyhow!("{n} transfers were cut; their data is incomplete")),
    }
}

/// `listen --chat`: the first caller gets a keyboard session; others are
/// released at once while it lasts. Ends when that link ends.
async fn chat(
    common: CommonArgs,
    config: linklab_link::Config,
    mut signals: Signals,
) -> anyhow::Result<()> {
    let grace = release_grace(&config);
    let n1 = config.n1;
    let mut handle = common.start(config, true).await?;
    let log = Log::new(common.tnc.monitor);
    log.line(&format!(
        "linklab: {} waiting for a caller on {} (keyboard to keyboard; ~? for escapes)",
        common.mycall, common.kiss
    ));
    let mut stdin = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    let mut session: Option<(Address, Session)> = None;
    let mut stdin_open = true;
    let mut stopped_by = None;
    let outcome: anyhow::Result<()> = loop {
        tokio::select! {
            notice = handle.notices.recv() => {
                let Some((at, notice)) = notice else {
                    driver_end(&mut handle).await?;
                    break Err(anyhow!("the KISS driver stopped"));
                };
                if let Notice::Station(StationEvent::Unsent { .. }) = &notice {
                    continue;
                }
                let (remote, event) = match log.notice(at, notice) {
                    Ok(Some(event)) => event,
                    Ok(None) => continue,
                    Err(e) => break Err(e),
                };
                let ours = session.as_ref().is_some_and(|(r, _)| same_station(r, &remote));
                match event {
                    Event::Connected { .. } if session.is_none() => {
                        log.line(&format!("linklab: {remote} is on; type to talk"));
                        session = Some((remote, Session::new(remote, n1)));
                    }
                    Event::Connected { .. } if !ours => {
                        log.line(&format!("linklab: {remote} called too; releasing it (one caller at a time)"));
                        handle.requests.send(Request::Disconnect { remote }).ok();
                    }
                    Event::Negotiated { params, .. } if ours => {
                        if let Some((_, s)) = &mut session {
                            s.n1 = params.n1_tx;
                        }
                    }
                    Event::Data { data, .. } if ours => {
                        if let Some((_, s)) = &mut session {
                            if let Err(e) = s.on_data(&data).await {
                                break Err(e);
                            }
                        }
                    }
                    Event::Disconnected { reason: DisconnectReason::LocalRequest | DisconnectReason::ReleaseTimeout | DisconnectReason::RemoteRequest } if ours => break Ok(()),
                    Event::Disconnected { reason } if ours => {
                        break Err(anyhow!("the link with {remote} was released: {}", disconnect_reason(reason)))
                    }
                    Event::LinkFailure { reason } if ours => {
                        break Err(anyhow!("the link with {remote} failed: {}", failure_reason(reason)))
                    }
                    _ => {}
                }
            }
            line = stdin.next_line(), if session.is_some() && stdin_open => {
                let Some((remote, s)) = &mut session else { continue };
                let remote = *remote;
                match line.context("cannot read standard input")? {
                    Some(line) => {
                        if s.on_line(&handle, &log, &line)? == Typed::Quit {
                            log.line(&format!("linklab: ~.: releasing the link with {remote}"));
                            stdin_open = false;
                            handle.requests.send(Request::Release { remote }).ok();
                        }
                    }
                    None => {
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
    let (linked, ended) = match &mut session {
        Some((remote, s)) => (
            if stopped_by.is_some() {
                vec![*remote]
            } else {
                Vec::new()
            },
            s.end(
                &log,
                match (&outcome, stopped_by) {
                    (Err(_), _) => Some("the link failed"),
                    (Ok(()), Some(stop)) => Some(stop.name()),
                    (Ok(()), None) => None,
                },
            ),
        ),
        None => (Vec::new(), Ok(())),
    };
    let stopped = finish(&mut handle, &log, &linked, grace, &mut signals, |_, _| {}).await;
    outcome?;
    ended?;
    stopped?;
    if let Some(stop) = stopped_by {
        std::process::exit(stop.status());
    }
    Ok(())
}

/// `linklab listen`: where it writes is checked first, so that no caller
/// is answered by a listener that cannot keep what it sends.
pub fn listen(mut args: ListenArgs) -> anyhow::Result<()> {
    let through = take_common(&mut args.common).through(false)?;
    if args.force && args.out.is_none() {
        return Err(usage("--force applies to --out FILE".into()));
    }
    let text = args.chat || std::io::stdout().is_terminal();
    if args.chat && args.out.is_some() {
        return Err(usage(
            "--chat shows what the caller sends on the terminal; it takes no --out".into(),
        ));
    }
    let receiver = Receiver::new(args.out.take(), args.force, text)?;
    match through {
        Through::Kiss(common) => block_on(listen_async(*common, args, receiver)),
        Through::Station(_) if args.chat => Err(usage(
            "--chat works over --kiss only; with --station, `linklab connect` from the other end"
                .into(),
        )),
        Through::Station(station) => crate::agw_client::listen(station, receiver, args.once),
    }
}
