//! Two IP hosts on a half-duplex AX.25 radio channel in virtual time: each
//! a smoltcp stack over an [`Ax25Interface`](linklab_ip::Ax25Interface) with
//! the real [`DataLink`](linklab_link::DataLink) engines, the channel
//! [`RadioChannel`] (p-persistent CSMA, TXDELAY, TXTAIL, collisions), and
//! optionally a seeded loss of whole frames at the receivers.
//!
//! The runner ([`linklab_sim::drive`]) advances time to the earliest of
//! the channel's, the hosts' (smoltcp's `poll_at`, the links' timers) and
//! the workload's wake-ups, and at each instant moves frames and datagrams
//! until all is quiet.
//! Deterministic for a given seed.

use core::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use core::time::Duration;
use linklab_core::{earliest, Engine, Instant, Stream, Streams};

use linklab_channel::{Medium, MediumEvent, RadioChannel, RadioConfig, StationConfig, StationId};
use linklab_link::Config as LinkConfig;
use linklab_sim::{drive, DriveError, World};
use linklab_wire::ax25::Address;
use linklab_wire::control::Modulus;
use smoltcp::wire::{IpAddress, IpCidr};
use thiserror::Error;

use linklab_ip::{Ax25Config, Ax25ConfigError, Encapsulation, Host};

use crate::workload::Workload;

/// The radio channel and the loss model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NetworkConfig {
    /// Radio bit rate, bit/s.
    pub bit_rate: u32,
    /// Both stations' KISS parameters (slot phases are drawn per run).
    pub station: StationConfig,
    /// Probability that a receiver loses an otherwise intact frame.
    pub frame_loss: f64,
    /// Master seed of the run's random streams.
    pub seed: u64,
}

impl NetworkConfig {
    /// Ronan et al. Table I's radio link at `bit_rate`: slot 20 ms,
    /// TXDELAY 150 ms, TXTAIL 20 ms, p = 0.25; no loss.
    pub fn ronan_table_1(bit_rate: u32, seed: u64) -> NetworkConfig {
        NetworkConfig {
            bit_rate,
            station: StationConfig::ronan_table_1(),
            frame_loss: 0.0,
            seed,
        }
    }
}

/// How each of the two hosts is set up.
#[derive(Debug, Clone, PartialEq)]
pub struct HostSetup {
    /// VC or datagram mode.
    pub encapsulation: Encapsulation,
    /// IP MTU, octets.
    pub mtu: usize,
    /// Data link parameters.
    pub link: LinkConfig,
    /// Give each host an IPv6 address too (static neighbour entries).
    pub ipv6: bool,
    /// Resolve IPv4 neighbours with ARP instead of static entries.
    pub arp: bool,
}

impl HostSetup {
    /// Ronan et al. Table IV for AX.25 window `k` (1-7): MTU 128 k + 40
    /// in VC mode over a modulo-8 (v2.0) link with window k and N1 equal
    /// to the MTU, so that each datagram is one I frame (the engine does
    /// not segment v2.0 links); T1 fixed at 10 s (Linux's default), T2 3 s
    /// as Linux, P on the last I frame; static neighbours.
    pub fn ronan_table_4(k: u8) -> HostSetup {
        let mtu = 128 * usize::from(k) + 40;
        HostSetup {
            encapsulation: Encapsulation::VirtualCircuit,
            mtu,
            link: LinkConfig {
                modulus: Modulus::Mod8,
                window_mod8: k,
                n1: mtu,
                xid: false,
                t1: Duration::from_secs(10),
                t1_adaptive: false,
                t2: Duration::from_secs(3),
                poll_on_last_i_frame: true,
                ..LinkConfig::default()
            },
            ipv6: false,
            arp: false,
        }
    }

    /// IPv6 in VC mode: MTU 1280 (RFC 8200 5) over a v2.2 link (SABME,
    /// modulo 128, XID) with N1 256 and window `k`, datagrams segmented
    /// into 6 I frames (PID 0x08, AX.25 6.6); static neighbours.
    pub fn ipv6_segmented(k: u8) -> HostSetup {
        HostSetup {
            encapsulation: Encapsulation::VirtualCircuit,
            mtu: 1280,
            link: LinkConfig {
                modulus: Modulus::Mod128,
                window_mod128: k,
                n1: 256,
                t1: Duration::from_secs(10),
                t1_adaptive: false,
                t2: Duration::from_secs(3),
                poll_on_last_i_frame: true,
                ..LinkConfig::default()
            },
            ipv6: true,
            arp: false,
        }
    }
}

/// Why a simulated run did not finish.
#[derive(Debug, Error)]
pub enum SimError {
    /// A host's configuration was refused.
    #[error("host configuration refused: {0}")]
    Host(#[from] Ax25ConfigError),
    /// The workload could not start.
    #[error("workload could not start: {0}")]
    Workload(String),
    /// Nothing was left to happen before the workload finished.
    #[error("the network went quiet at {at_s:.3} s before the workload finished")]
    Stalled {
        /// Virtual time, seconds.
        at_s: f64,
    },
    /// The horizon passed before the workload finished.
    #[error("the workload had not finished by the horizon of {horizon_s:.0} s")]
    Horizon {
        /// The horizon, seconds.
        horizon_s: f64,
    },
    /// Components kept asking to run at one instant.
    #[error("the hosts kept asking for attention at {at_s:.6} s without time passing")]
    Livelock {
        /// Virtual time, seconds.
        at_s: f64,
    },
}

/// The two stations' addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Addresses {
    /// AX.25 addresses.
    pub callsigns: [Address; 2],
    /// IPv4 addresses (in 44.0.0.0/24, the AMPRNet).
    pub ipv4: [Ipv4Addr; 2],
    /// IPv6 addresses (unique local, fd44::/64).
    pub ipv6: [Ipv6Addr; 2],
}

impl Addresses {
    /// N0SEND at 44.0.0.1 / fd44::1 and N0RECV at 44.0.0.2 / fd44::2.
    pub fn standard() -> Addresses {
        let call = |text: &str| text.parse().expect("a valid constant callsign");
        Addresses {
            callsigns: [call("N0SEND"), call("N0RECV")],
            ipv4: [Ipv4Addr::new(44, 0, 0, 1), Ipv4Addr::new(44, 0, 0, 2)],
            ipv6: [
                Ipv6Addr::new(0xfd44, 0, 0, 0, 0, 0, 0, 1),
                Ipv6Addr::new(0xfd44, 0, 0, 0, 0, 0, 0, 2),
            ],
        }
    }

    /// Host `i`'s IPv4 address for smoltcp.
    pub fn ipv4_address(&self, i: usize) -> IpAddress {
        IpAddress::Ipv4(self.ipv4[i])
    }

    /// Host `i`'s IPv6 address for smoltcp.
    pub fn ipv6_address(&self, i: usize) -> IpAddress {
        IpAddress::Ipv6(self.ipv6[i])
    }
}

/// Counters of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NetworkStats {
    /// Intact frames dropped by the loss model.
    pub frames_lost: u64,
    /// Frames put on the channel by each host.
    pub frames_sent: [u64; 2],
}

/// Two hosts on one radio channel.
#[derive(Debug)]
pub struct Network {
    hosts: [Host; 2],
    radio: RadioChannel,
    loss: Stream,
    frame_loss: f64,
    now: Instant,
    stats: NetworkStats,
}

impl Network {
    /// Two hosts set up as `setup` says, on the channel of `config`, with
    /// the [`Addresses::standard`] addresses.
    pub fn new(config: &NetworkConfig, setup: &HostSetup) -> Result<Network, SimError> {
        let streams = Streams::new(config.seed);
        let mut phases = streams.stream("slot-phase");
        let slot = u64::try_from(config.station.slot_time.as_micros().max(1)).unwrap_or(1);
        let mut station = || StationConfig {
            slot_phase: Duration::from_micros(phases.below(slot)),
            ..config.station
        };
        let stations = [station(), station()];
        let radio = RadioChannel::new(
            RadioConfig::new(config.bit_rate),
            &stations,
            &streams,
            "radio",
        );
        Ok(Network {
            hosts: hosts(setup, &streams)?,
            radio,
            loss: streams.stream("frame-loss"),
            frame_loss: config.frame_loss,
            now: Instant::ZERO,
            stats: NetworkStats::default(),
        })
    }

    /// The hosts (0 sends, 1 receives in the standard workloads).
    pub fn hosts(&self) -> &[Host; 2] {
        &self.hosts
    }

    /// The hosts, mutable (to start workloads).
    pub fn hosts_mut(&mut self) -> &mut [Host; 2] {
        &mut self.hosts
    }

    /// Virtual time now.
    pub fn now(&self) -> Instant {
        self.now
    }

    /// The run's counters.
    pub fn stats(&self) -> NetworkStats {
        self.stats
    }

    /// The channel (its own counters).
    pub fn radio(&self) -> &RadioChannel {
        &self.radio
    }

    /// Runs until `workload` is done, or fails after `horizon` of virtual
    /// time from now.
    pub fn run(&mut self, workload: &mut dyn Workload, horizon: Duration) -> Result<(), SimError> {
        let start = self.now;
        let mut run = Run {
            net: self,
            workload,
        };
        drive(&mut run, start, start + horizon)
            .map(|_| ())
            .map_err(|e| match e {
                DriveError::Stalled { at } => SimError::Stalled {
                    at_s: at.as_secs_f64(),
                },
                DriveError::Livelock { at } => SimError::Livelock {
                    at_s: at.as_secs_f64(),
                },
                DriveError::Horizon { .. } => SimError::Horizon {
                    horizon_s: horizon.as_secs_f64(),
                },
            })
    }

    /// Moves datagrams and frames at `now` until nothing moves.
    fn settle(&mut self, workload: &mut dyn Workload, now: Instant) {
        loop {
            let mut busy = false;
            for host in &mut self.hosts {
                host.poll(now);
            }
            workload.step(&mut self.hosts, now);
            for (i, host) in self.hosts.iter_mut().enumerate() {
                host.poll(now);
                while let Some(frame) = host.ax25_mut().poll_transmit(now) {
                    busy = true;
                    self.stats.frames_sent[i] += 1;
                    self.radio.transmit(now, StationId(i), frame);
                }
            }
            while let Some(event) = self.radio.poll_event() {
                busy = true;
                match event {
                    MediumEvent::ChannelBusy { station, busy, at } => {
                        if let Some(h) = self.hosts.get_mut(station.0) {
                            h.ax25_mut().set_channel_busy(at, busy);
                        }
                    }
                    MediumEvent::TransmitterKeyed { station, at } => {
                        if let Some(h) = self.hosts.get_mut(station.0) {
                            h.ax25_mut().transmitter_keyed(at);
                        }
                    }
                    _ => {}
                }
            }
            while let Some(delivery) = self.radio.poll_delivery() {
                busy = true;
                if !delivery.is_intact() {
                    continue;
                }
                if self.frame_loss > 0.0 && self.loss.uniform() < self.frame_loss {
                    self.stats.frames_lost += 1;
                    continue;
                }
                if let Some(h) = self.hosts.get_mut(delivery.to.0) {
                    h.ax25_mut().handle_frame(delivery.at, &delivery.frame);
                }
            }
            if !busy {
                break;
            }
        }
    }
}

/// A [`Network`] running a workload: what [`drive`] takes through time.
struct Run<'a> {
    net: &'a mut Network,
    workload: &'a mut dyn Workload,
}

impl World for Run<'_> {
    fn settle(&mut self, now: Instant) {
        self.net.settle(self.workload, now);
    }

    fn done(&self) -> bool {
        self.workload.done()
    }

    /// The earliest of the channel's, the workload's and the hosts'
    /// wake-ups.
    fn next_wake(&mut self, now: Instant) -> Option<Instant> {
        let net = &mut *self.net;
        earliest(
            [net.radio.poll_timeout(), self.workload.poll_at()]
                .into_iter()
                .chain(net.hosts.iter_mut().map(|h| h.poll_at(now))),
        )
    }

    fn advance(&mut self, to: Instant) {
        let net = &mut *self.net;
        net.now = to;
        if net.radio.poll_timeout().is_some_and(|t| t <= to) {
            net.radio.handle_timeout(to);
        }
        for host in &mut net.hosts {
            host.ax25_mut().handle_timeout(to);
        }
    }
}

/// The two hosts of a [`Network`] set up as `setup` says, with the
/// [`Addresses::standard`] addresses and smoltcp seeds drawn from
/// `streams`: for runners that put something else between the hosts and
/// the radio (a host and KISS TNC path, in the scenario crate).
pub fn hosts(setup: &HostSetup, streams: &Streams) -> Result<[Host; 2], SimError> {
    let addresses = Addresses::standard();
    let host = |i: usize| -> Result<Host, SimError> {
        let other = 1 - i;
        let mut ax25 = Ax25Config::new(addresses.callsigns[i], setup.mtu, setup.link.clone());
        ax25.encapsulation = setup.encapsulation;
        if setup.arp {
            ax25.arp_ipv4 = Some(addresses.ipv4[i]);
        } else {
            ax25.neighbours.push((
                IpAddr::V4(addresses.ipv4[other]),
                addresses.callsigns[other],
            ));
        }
        let mut cidrs = vec![IpCidr::new(addresses.ipv4_address(i), 24)];
        if setup.ipv6 {
            ax25.neighbours.push((
                IpAddr::V6(addresses.ipv6[other]),
                addresses.callsigns[other],
            ));
            cidrs.push(IpCidr::new(addresses.ipv6_address(i), 64));
        }
        let seed = streams.stream(&format!("host/{i}")).next_u64();
        Ok(Host::new(ax25, &cidrs, seed, Instant::ZERO)?)
    };
    Ok([host(0)?, host(1)?])
}
