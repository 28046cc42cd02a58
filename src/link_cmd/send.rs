//! `linklab send` over a KISS TNC: the file in I frames, as the window
//! opens ([`crate::send_feed`]), then DISC once all is acknowledged.

use std::time::Duration;

use anyhow::anyhow;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use linklab_io::{Notice, Request, StationEvent};
use linklab_link::{DisconnectReason, Event, Version};

use super::connecting::Connecting;
use super::log::{disconnect_reason, failure_reason};
use super::{driver_end, finish, take_common, Log, SendArgs, Through};
use crate::options::{release_grace, CommonArgs};
use crate::runtime::{block_on, Signals};
use crate::send_feed::Feed;

pub(super) async fn send_async(common: CommonArgs, args: SendArgs) -> anyhow::Result<()> {
    let modulus = crate::modulus(args.mod128);
    let config = common.config(modulus)?;
    common.check_path(&args.to, &args.via)?;
    let remote = args.to;
    let mut feed = Feed::new(crate::input::ReadAhead::open(&args.file)?, remote);
    let mut signals = Signals::new()?;
    let mut connecting = Connecting::new(remote, &config, modulus);
    let grace = release_grace(&config);
    // Data are given once the link's N1 for sending is known: at once on a
    // v2.0 link, after the XID exchange on a v2.2 one (6.3.2), since the
    // peer may accept shorter I frames than ours.
    let xid = config.xid;
    let (n1, windows) = (config.n1, (config.window_mod8, config.window_mod128));
    let started = std::time::Instant::now();
    let mut handle = common.start(config, false).await?;
    let bar = ProgressBar::with_draw_target(feed.len(), ProgressDrawTarget::hidden());
    let template = match feed.len() {
        Some(_) => "{bar:40} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
        None => "{spinner} {bytes} {bytes_per_sec}",
    };
    bar.set_style(
        ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut log = Log::new(common.tnc.monitor);
    handle
        .requests
        .send(Request::Connect {
            remote,
            via: args.via.clone(),
        })
        .ok();
    // Connected at, octets acknowledged, all acknowledged at.
    let mut connected_at: Option<std::time::Instant> = None;
    let mut acked = 0;
    let mut acked_at: Option<std::time::Instant> = None;
    let mut interrupted = None;
    let outcome: anyhow::Result<()> = loop {
        let (at, notice) = tokio::select! {
            notice = handle.notices.recv() => match notice {
                Some(n) => n,
                None => {
                    driver_end(&mut handle).await?;
                    break Err(anyhow!("the KISS driver stopped"));
                }
            },
            block = feed.next_block(), if feed.needs_input() => {
                if let Err(e) = feed.on_block(&handle, block) {
                    break Err(e);
                }
                if feed.released() && feed.given() == 0 {
                    // An empty input: nothing to acknowledge.
                    acked_at = connected_at;
                }
                continue;
            },
            () = connecting.tick(), if connected_at.is_none() => {
                connecting.waiting(&log);
                continue;
            }
            stop = signals.recv() => {
                interrupted = Some(stop);
                break Ok(());
            }
        };
        if connected_at.is_none() {
            connecting.on_notice(&log, &notice);
        }
        match &notice {
            Notice::Station(StationEvent::Outstanding {
                frames, accepted, ..
            }) if feed.started() => {
                acked = feed.acknowledged(*frames, *accepted);
                bar.set_position(acked);
                if log.bar.is_none() && started.elapsed() > Duration::from_secs(1) {
                    bar.set_draw_target(ProgressDrawTarget::stderr());
                    log.bar = Some(bar.clone());
                }
                if feed.all_acknowledged(*frames, *accepted) {
                    acked_at = Some(std::time::Instant::now());
                }
            }
            Notice::Station(StationEvent::Unsent { remote: to, octets }) if *to == remote => {
                feed.on_unsent(&handle, *octets);
            }
            _ => {}
        }
        let event = match log.notice(at, notice) {
            Ok(Some((from, event))) if from == remote => event,
            Ok(_) => continue,
            Err(e) => break Err(e),
        };
        match event {
            Event::Connected { .. } if connected_at.is_some() => {
                break Err(anyhow!(
                    "the link with {remote} was reset, so frames it had not acknowledged \
                     were lost; link ended with DM"
                ));
            }
            Event::Connected { version, .. } => {
                connected_at = Some(std::time::Instant::now());
                if version == Version::V2_0 || !xid {
                    let k = match version {
                        Version::V2_0 => windows.0,
                        Version::V2_2 => windows.1,
                    };
                    feed.start(&handle, n1, k);
                }
            }
            Event::Negotiated { params, .. } if !feed.started() => {
                feed.start(&handle, params.n1_tx, params.k_tx);
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
    if outcome.is_err() {
        // A transfer that failed (a reset, input that cannot be read) ends
        // with DM, not DISC: after the DISC that ends a transfer the peer
        // would take what it got for the whole file. A link already down
        // is left as it is.
        handle.requests.send(Request::Abort { remote }).ok();
    }
    if let Some(stop) = interrupted {
        // DM, not DISC: the peer must not take a cut transfer for a
        // finished one (see `Station::abort`).
        handle.requests.send(Request::Abort { remote }).ok();
        let of = match feed.len() {
            Some(len) => format!("{len} octets"),
            None => format!("the {} octets given to the link so far", feed.given()),
        };
        log.line(&format!(
            "linklab: interrupted: {remote} acknowledged {acked} of {of}; link ended with DM ({})",
            stop.name()
        ));
        finish(&mut handle, &log, &[], grace, &mut signals, |_, _| {}).await?;
        std::process::exit(stop.status());
    }
    let stopped = finish(&mut handle, &log, &[], grace, &mut signals, |_, _| {}).await;
    outcome?;
    stopped?;
    if let (Some(from), Some(to)) = (connected_at, acked_at) {
        let span = to.duration_since(from).as_secs_f64();
        let rate = if span > 0.0 {
            feed.given() as f64 * 8.0 / span
        } else {
            f64::INFINITY
        };
        println!(
            "sent {} bytes to {remote} in {span:.3} s: {rate:.0} bit/s (elapsed {:.3} s with connection set-up and release)",
            feed.given(),
            started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

/// `linklab send`: over the TNC, or through an AGWPE server.
pub fn send(mut args: SendArgs) -> anyhow::Result<()> {
    match take_common(&mut args.common).through(args.mod128)? {
        Through::Kiss(common) => block_on(send_async(*common, args)),
        Through::Station(station) => crate::agw_client::send(station, args.to, args.via, args.file),
    }
}
