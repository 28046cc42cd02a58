//! `linklab agw`: an AGWPE server ([`linklab_agw`]) on one or more KISS
//! TNCs, so packet applications that speak AGWPE (terminals, APRS and
//! Winlink clients) run on linklab's AX.25.

use std::net::SocketAddr;
use std::time::SystemTime;

use anyhow::Context;
use clap::Args;
use linklab_agw::{driver, PortConfig, Server};
use linklab_io::KissAddress;
use linklab_wire::ax25::Address;

use crate::link_cmd::{block_on, LinkArgs, TncArgs};
use crate::usage::usage;

/// Links a local callsign keeps on one port.
const MAX_LINKS: usize = 64;

#[derive(Args)]
pub struct AgwArgs {
    /// A KISS TNC, one AGWPE radio port each, in order (Port1, Port2,
    /// ...): tcp:HOST:PORT or serial:DEVICE:BAUD. Repeat for more ports.
    #[arg(long, value_name = "ADDRESS", required = true)]
    kiss: Vec<KissAddress>,
    /// Where AGWPE clients connect. The AGWPE protocol has no security
    /// worth the name: keep it on loopback unless the network is yours.
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:8000")]
    listen: SocketAddr,
    /// A callsign this station answers for on every port: a connection
    /// request to it while no client has registered it is refused with
    /// DM, as by a station whose application is not running. Frames to
    /// other unregistered callsigns are other stations' traffic and are
    /// left alone. Repeat for more.
    #[arg(long, value_name = "CALL")]
    mycall: Vec<Address>,
    /// Also share the TNCs with KISS clients (APRS programs, another
    /// stack) on this address: KISS port N is radio port N+1; frames from
    /// either side are seen by the other.
    #[arg(long, value_name = "ADDR:PORT")]
    kiss_server: Option<SocketAddr>,
    /// Connect out with SABME (AX.25 v2.2, modulo 128) instead of SABM;
    /// incoming links take whichever the caller asks for.
    #[arg(long)]
    mod128: bool,
    /// The radios' on-air bit rate, reported to clients that ask ('g').
    #[arg(long, value_name = "BIT/S")]
    bitrate: Option<u32>,
    #[command(flatten)]
    link: LinkArgs,
    #[command(flatten)]
    tnc: TncArgs,
}

pub fn run(args: AgwArgs) -> anyhow::Result<()> {
    let modulus = crate::modulus(args.mod128);
    let link = args.link.config(modulus)?;
    let kiss = args.tnc.params()?;
    let ports: Vec<PortConfig> = args
        .kiss
        .iter()
        .map(|address| PortConfig {
            description: format!("linklab AX.25 on KISS {address}"),
            kiss,
            link: link.clone(),
            answer_for: args.mycall.clone(),
            max_links: MAX_LINKS,
            bit_rate: args.bitrate,
        })
        .collect();
    if ports.len() > 255 {
        return Err(usage(format!(
            "--kiss given {} times; AGWPE numbers at most 255 ports",
            ports.len()
        )));
    }
    let monitor = args.tnc.monitor;
    block_on(async move {
        let listener = tokio::net::TcpListener::bind(args.listen)
            .await
            .with_context(|| format!("cannot listen on {} for AGWPE clients", args.listen))?;
        let kiss_listener = match args.kiss_server {
            Some(address) => Some(
                tokio::net::TcpListener::bind(address)
                    .await
                    .with_context(|| format!("cannot listen on {address} for KISS clients"))?,
            ),
            None => None,
        };
        let mut server = Server::new(ports, SystemTime::now());
        server.set_log_frames(monitor);
        for (i, address) in args.kiss.iter().enumerate() {
            println!("agw port {}: kiss {address}", i + 1);
        }
        let local = listener
            .local_addr()
            .context("the listening socket has no address")?;
        println!("agw listening on {local}");
        if let Some(kiss) = &kiss_listener {
            let kiss = kiss
                .local_addr()
                .context("the KISS socket has no address")?;
            println!("agw kiss server on {kiss}");
        }
        let tncs: Vec<KissAddress> = args.kiss.clone();
        let stop = async {
            let mut term =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = async { match term.as_mut() { Some(t) => { t.recv().await; } None => std::future::pending().await } } => {}
            }
        };
        let ready = || println!("agw ready (Ctrl-C stops it, releasing every link)");
        let log = |line: &str| eprintln!("agw: {line}");
        driver::run(
            server,
            driver::Endpoints {
                agw: listener,
                kiss: kiss_listener,
                tncs,
            },
            driver::DriverOptions::default(),
            ready,
            log,
            stop,
        )
        .await
        .context("cannot start the AGWPE server")?;
        Ok(())
    })
}
