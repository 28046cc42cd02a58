//! IP over AX.25 for the kernel's own stack: a TUN device whose datagrams
//! an [`IpStation`] of a [`DatagramPort`] carries over a KISS TNC, in real
//! time. The kernel routes, fragments, runs TCP and every application; the
//! station runs AX.25 (VC or datagram mode, ARP over AX.25 for the kernel,
//! the segmenter on modulo-128 links).
//!
//! [`Tun::open`] makes the device and configures it over netlink (MTU,
//! addresses, up), before the TNC is touched: a missing CAP_NET_ADMIN or a
//! name in use is a [`TunError`] at once. The device is not persistent,
//! so the kernel removes it when the process's descriptor closes, however
//! the process ends. [`run`] then serves it until Ctrl-C or SIGTERM, and
//! releases the VC links before returning.

use core::time::Duration;
use std::net::IpAddr;

use futures::TryStreamExt;
use linklab_core::{earliest, Instant};
use linklab_ip::{DatagramPort, PortError};
use linklab_link::State;
use thiserror::Error;
use tokio::io::AsyncReadExt;
use tokio::signal::unix::{signal, SignalKind};
use tokio::time::sleep_until;

use crate::address::KissStream;
use crate::driver::{instant, DriverError};
use crate::ip_station::{IpEvent, IpStation};
use crate::kiss_writer::KissWriter;
use crate::params::KissParams;

/// Shortest sleep of the loop (see `ip_driver`).
const MIN_SLEEP: Duration = Duration::from_millis(1);

/// Longest wait for the VC links to be released at the end.
const RELEASE_WAIT: Duration = Duration::from_secs(10);

/// The device to make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TunConfig {
    /// Its name, e.g. `ax0`.
    pub name: String,
    /// Its addresses, each with its prefix length.
    pub addresses: Vec<(IpAddr, u8)>,
    /// Its MTU: the AX.25 interface's.
    pub mtu: u32,
}

/// Why the device could not be made or configured.
#[derive(Debug, Error)]
pub enum TunError {
    /// No CAP_NET_ADMIN.
    #[error("cannot create TUN device {name}: permission denied (needs CAP_NET_ADMIN: run as root, or `setcap cap_net_admin+ep` on linklab)")]
    Permission {
        /// The device name.
        name: String,
    },
    /// An interface of that name exists.
    #[error("cannot create TUN device {name}: an interface of that name exists")]
    NameTaken {
        /// The device name.
        name: String,
    },
    /// Not a usable interface name.
    #[error("cannot create TUN device {name}: not a valid interface name (1-15 characters, no '/', ':' or blanks)")]
    BadName {
        /// The device name.
        name: String,
    },
    /// Any other failure to make the device.
    #[error("cannot create TUN device {name}: {message}")]
    Create {
        /// The device name.
        name: String,
        /// Why.
        message: String,
    },
    /// Netlink refused a setting.
    #[error("cannot configure {name} ({what}): {message}")]
    Configure {
        /// The device name.
        name: String,
        /// The setting.
        what: String,
        /// Why.
        message: String,
    },
}

/// A configured TUN device.
pub struct Tun {
    device: tun::AsyncDevice,
    name: String,
}

impl std::fmt::Debug for Tun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tun").field("name", &self.name).finish()
    }
}

/// Whether `name` can name a Linux interface (IFNAMSIZ, `dev_valid_name`).
fn valid_name(name: &str) -> bool {
    (1..=15).contains(&name.len())
        && name != "."
        && name != ".."
        && !name
            .chars()
            .any(|c| c == '/' || c == ':' || c.is_whitespace())
}

impl Tun {
    /// Makes the device, gives it its MTU and addresses and sets it up.
    pub async fn open(config: &TunConfig) -> Result<Tun, TunError> {
        let name = config.name.clone();
        if !valid_name(&name) {
            return Err(TunError::BadName { name });
        }
        let configure = |what: &str, message: String| TunError::Configure {
            name: name.clone(),
            what: what.into(),
            message,
        };
        let (connection, handle, _) =
            rtnetlink::new_connection().map_err(|e| configure("netlink", e.to_string()))?;
        tokio::spawn(connection);
        let mut links = handle.clone();
        if index_of(&mut links, &name).await.is_some() {
            return Err(TunError::NameTaken { name });
        }
        let mut tun_config = tun::Configuration::default();
        tun_config
            .tun_name(&name)
            .layer(tun::Layer::L3)
            .mtu(u16::try_from(config.mtu).unwrap_or(u16::MAX))
            .platform_config(|p| {
                p.ensure_root_privileges(false);
            });
        let device = tun::create_as_async(&tun_config).map_err(|e| match e {
            tun::Error::Io(io) if io.kind() == std::io::ErrorKind::PermissionDenied => {
                TunError::Permission { name: name.clone() }
            }
            other => TunError::Create {
                name: name.clone(),
                message: other.to_string(),
            },
        })?;
        let index = index_of(&mut links, &name)
            .await
            .ok_or_else(|| configure("index", "the new device is not listed".into()))?;
        handle
            .link()
            .set(
                rtnetlink::LinkUnspec::new_with_index(index)
                    .mtu(config.mtu)
                    .build(),
            )
            .execute()
            .await
            .map_err(|e| configure(&format!("mtu {}", config.mtu), e.to_string()))?;
        for &(address, prefix) in &config.addresses {
            handle
                .address()
                .add(index, address, prefix)
                .execute()
                .await
                .map_err(|e| configure(&format!("address {address}/{prefix}"), e.to_string()))?;
        }
        // linklab answers for the kernel's neighbour code (ARP over AX.25):
        // its "Destination Host Unreachable" comes from the device's own
        // address, which the kernel drops as a martian unless the device
        // accepts local sources.
        let accept_local = format!("/proc/sys/net/ipv4/conf/{name}/accept_local");
        std::fs::write(&accept_local, "1")
            .map_err(|e| configure("accept_local", format!("{accept_local}: {e}")))?;
        handle
            .link()
            .set(rtnetlink::LinkUnspec::new_with_index(index).up().build())
            .execute()
            .await
            .map_err(|e| configure("up", e.to_string()))?;
        Ok(Tun { device, name })
    }

    /// The device's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Reads the next datagram the kernel routed to the device.
    pub async fn recv(&self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.device.recv(buf).await
    }

    /// Hands `datagram` to the kernel.
    pub async fn send(&self, datagram: &[u8]) -> std::io::Result<usize> {
        self.device.send(datagram).await
    }
}

/// The index of the interface `name`, if there is one.
async fn index_of(handle: &mut rtnetlink::Handle, name: &str) -> Option<u32> {
    let mut links = handle.link().get().match_name(name.into()).execute();
    links
        .try_next()
        .await
        .ok()
        .flatten()
        .map(|l| l.header.index)
}

/// What the TUN bridge reports besides the station's own events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TunEvent {
    /// A station event (monitor, bad input).
    Station(IpEvent),
    /// A datagram from the kernel was dropped.
    Dropped(PortError),
    /// A VC link reported an error or failed (its neighbour named).
    Link(String),
    /// The kernel refused a datagram written to the device.
    Kernel(String),
}

/// Counters of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TunSummary {
    /// Datagrams read from the device.
    pub from_kernel: u64,
    /// Datagrams written to it.
    pub to_kernel: u64,
}

/// Serves `tun` with `station` over `stream` until Ctrl-C or SIGTERM,
/// then releases the VC links (bounded by a few seconds) and returns.
/// It first sends the KISS parameters of `params`. `log` gets every event
/// with the time since the start.
pub async fn run(
    stream: Box<dyn KissStream>,
    station: &mut IpStation<DatagramPort>,
    tun: Tun,
    params: KissParams,
    mut log: impl FnMut(Duration, TunEvent),
) -> Result<TunSummary, DriverError> {
    let start = tokio::time::Instant::now();
    let (mut reader, writer) = tokio::io::split(stream);
    let mut writer = KissWriter::spawn(writer, &params);
    let mut terminate = signal(SignalKind::terminate()).map_err(DriverError::Read)?;
    let mut summary = TunSummary::default();
    let mut buf = vec![0u8; 4096];
    let mut datagram = vec![0u8; 65_536];
    let mut link_errors = 0;
    let mut release_until: Option<tokio::time::Instant> = None;
    let result = loop {
        let now = instant(start);
        station.poll(now);
        let mut out = Vec::new();
        while let Some(bytes) = station.poll_transmit(now) {
            out.extend_from_slice(&bytes);
        }
        writer.send(out);
        while let Some(d) = station.host_mut().receive() {
            summary.to_kernel += 1;
            if let Err(e) = tun.device.send(&d).await {
                log(start.elapsed(), TunEvent::Kernel(e.to_string()));
            }
        }
        let at = start.elapsed();
        while let Some(event) = station.poll_event() {
            log(at, TunEvent::Station(event));
        }
        let errors = station.host().ax25().link_errors();
        for e in errors.get(link_errors..).unwrap_or_default() {
            log(at, TunEvent::Link(e.clone()));
        }
        link_errors = errors.len();
        let wall = tokio::time::Instant::now();
        if let Some(until) = release_until {
            let released = station
                .host()
                .ax25()
                .links()
                .all(|(_, link)| link.state() == State::Disconnected);
            if released || wall >= until {
                break Ok(());
            }
        }
        let wake = earliest([station.poll_timeout(now)])
            .map(|t| start + (t - Instant::ZERO))
            .into_iter()
            .chain(release_until)
            .min()
            .map(|t| t.max(wall + MIN_SLEEP));
        let stop = tokio::select! {
            read = reader.read(&mut buf) => match read {
                Ok(0) => break Err(DriverError::TncClosed),
                Ok(n) => {
                    station.handle_kiss_bytes(instant(start), buf.get(..n).unwrap_or_default());
                    false
                }
                Err(e) => break Err(DriverError::Read(e)),
            },
            got = tun.device.recv(&mut datagram), if release_until.is_none() => match got {
                Ok(n) => {
                    summary.from_kernel += 1;
                    let d = datagram.get(..n).unwrap_or_default().to_vec();
                    if let Err(e) = station.host_mut().send(instant(start), d) {
                        log(start.elapsed(), TunEvent::Dropped(e));
                    }
                    false
                }
                Err(e) => break Err(DriverError::Read(e)),
            },
            _ = sleep_until(wake.unwrap_or(wall)), if wake.is_some() => {
                station.handle_timeout(instant(start));
                false
            },
            _ = tokio::signal::ctrl_c() => true,
            _ = terminate.recv() => true,
            written = &mut writer.task => break Err(KissWriter::failed(written)),
        };
        if stop {
            if release_until.is_some() {
                break Ok(());
            }
            station.host_mut().ax25_mut().disconnect_all(instant(start));
            release_until = Some(tokio::time::Instant::now() + RELEASE_WAIT);
        }
    };
    station.flush_bad_input();
    while let Some(event) = station.poll_event() {
        log(start.elapsed(), TunEvent::Station(event));
    }
    result?;
    writer.finish().await?;
    Ok(summary)
}
