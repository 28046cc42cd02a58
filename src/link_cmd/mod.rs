//! `linklab listen`, `linklab send` and `linklab connect`: AX.25 connected
//! mode over a real KISS TNC (TCP, serial or AXUDP), in real time, driven
//! by [`linklab_io`], or through an AGWPE server ([`crate::agw_client`]).
//!
//! [`args`] holds each command's options and the way to the radio (the
//! options shared with `ip`, `dtn node` and `agw` are
//! [`crate::options`]); [`listen`], [`send`] and [`connect`] run the
//! commands; [`receiver`] is where `listen` puts what arrives, [`session`]
//! the keyboard session of `connect` and `listen --chat`, [`connecting`]
//! what is said while a SABM waits for its UA, and [`log`] the lines on
//! standard error.

mod args;
mod connect;
mod connecting;
mod listen;
mod log;
mod receiver;
mod send;
mod session;

pub use args::{ConnectArgs, ListenArgs, SendArgs};
use args::{Endpoint, LinkCommon, Through};
pub use connect::connect;
pub use listen::listen;
pub(crate) use log::Log;
pub(crate) use receiver::Receiver;
pub use send::send;

use std::time::Duration;

use anyhow::anyhow;
use linklab_io::{DriverHandle, Request};
use linklab_link::Event;
use linklab_wire::ax25::Address;

use crate::runtime::{quit_now, Signals};

/// Asks the driver to release every link and stop, logs what comes until
/// it has (handing each link event to `on_event`), and returns its error
/// if it failed. With links still up it says that it waits for their
/// release, and for how long; a signal meanwhile quits at once.
pub(crate) async fn finish(
    handle: &mut DriverHandle,
    log: &Log,
    linked: &[Address],
    grace: Duration,
    signals: &mut Signals,
    mut on_event: impl FnMut(Address, Event),
) -> anyhow::Result<()> {
    handle.requests.send(Request::Shutdown).ok();
    if !linked.is_empty() {
        let names: Vec<String> = linked.iter().map(ToString::to_string).collect();
        log.line(&format!(
            "linklab: releasing the link with {} (DISC): waiting up to {:.0} s for an answer; \
             Ctrl-C again to quit at once",
            names.join(", "),
            grace.as_secs_f64().ceil()
        ));
    }
    loop {
        tokio::select! {
            notice = handle.notices.recv() => match notice {
                // Errors of late requests no longer matter.
                Some((at, notice)) => {
                    if let Ok(Some((remote, event))) = log.notice(at, notice) {
                        on_event(remote, event);
                    }
                }
                None => break,
            },
            stop = signals.recv() => quit_now(stop),
        }
    }
    driver_end(handle).await
}

/// The driver's result once its notice channel has closed.
pub(crate) async fn driver_end(handle: &mut DriverHandle) -> anyhow::Result<()> {
    match (&mut handle.task).await {
        Ok(result) => result.map_err(Into::into),
        Err(e) => Err(anyhow!("the KISS driver stopped: {e}")),
    }
}

/// The options, leaving defaults behind (the caller's struct is then
/// used for its other fields only).
pub(crate) fn take_common(common: &mut LinkCommon) -> LinkCommon {
    LinkCommon {
        endpoint: Endpoint {
            kiss: common.endpoint.kiss.take(),
            station: common.endpoint.station.take(),
        },
        mycall: common.mycall,
        port: common.port,
        link: std::mem::take(&mut common.link),
        tnc: std::mem::take(&mut common.tnc),
    }
}
