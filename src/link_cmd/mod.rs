//! `linklab listen`, `linklab send` and `linklab connect`: AX.25 connected
//! mode over a real KISS TNC (TCP, serial or AXUDP), in real time, driven
//! by [`linklab_io`], or through an AGWPE server ([`crate::agw_client`]).
//!
//! [`args`] holds the options (shared with `ip`, `dtn node` and `agw`) and
//! refuses what cannot work before the TNC is touched; [`listen`],
//! [`send`] and [`connect`] run the commands; [`receiver`] is where
//! `listen` puts what arrives, [`session`] the keyboard session of
//! `connect` and `listen --chat`, [`connecting`] what is said while a
//! SABM waits for its UA, [`signals`] the signals that stop a command
//! after its links are released, and [`log`] the lines on standard error.

mod args;
mod connect;
mod connecting;
mod listen;
mod log;
mod receiver;
mod send;
mod session;
mod signals;

pub(crate) use args::{via_error, CommonArgs, Endpoint, LinkArgs, LinkCommon, Through, TncArgs};
pub use args::{ConnectArgs, ListenArgs, SendArgs};
use connect::connect_async;
use listen::listen_async;
pub(crate) use log::Log;
pub(crate) use receiver::Receiver;
use send::send_async;
pub(crate) use signals::{Signals, Stop};

use std::io::IsTerminal;
use std::time::Duration;

use anyhow::{anyhow, Context};
use linklab_io::{DriverHandle, Request};
use linklab_link::{Config, Event};
use linklab_wire::ax25::Address;

use crate::usage::usage;

/// How long a shutdown waits for the peers to answer DISC: N2 + 1 tries
/// of T1, at most 15 s.
pub(crate) fn release_grace(config: &Config) -> Duration {
    (config.t1 * (u32::from(config.n2) + 1)).min(Duration::from_secs(15))
}

/// Exit status of a command ended by SIGINT (128 + 2), as shells report.
pub(crate) const INTERRUPTED: i32 = 130;

/// Ends the process at once after a second signal, with its status.
pub(crate) fn quit_now(stop: Stop) -> ! {
    eprintln!(
        "linklab: interrupted again; quitting at once ({})",
        stop.name()
    );
    std::process::exit(stop.status())
}

/// Runs `future` on a single-threaded runtime. The runtime is dropped
/// without waiting for a blocked standard-input read.
pub(crate) fn block_on<T, F: std::future::Future<Output = anyhow::Result<T>>>(
    future: F,
) -> anyhow::Result<T> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the tokio runtime")?;
    let result = runtime.block_on(future);
    runtime.shutdown_background();
    result
}

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

pub fn send(mut args: SendArgs) -> anyhow::Result<()> {
    match take_common(&mut args.common).through(args.mod128)? {
        Through::Kiss(common) => block_on(send_async(*common, args)),
        Through::Station(station) => crate::agw_client::send(station, args.to, args.via, args.file),
    }
}

pub fn connect(mut args: ConnectArgs) -> anyhow::Result<()> {
    match take_common(&mut args.common).through(args.mod128)? {
        Through::Kiss(common) => block_on(connect_async(*common, args)),
        Through::Station(station) => crate::agw_client::connect(station, args.dest, args.via),
    }
}
