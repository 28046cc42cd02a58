//! The testbed of Korb (1987, section 2): two 4.2BSD hosts, each a
//! smoltcp stack (with, if configured, 4.2BSD TCP senders beside it,
//! [`FtpSender::Bsd42`]) over IP over X.25 ([`X25Interface`]: RFC 877
//! circuits on the real X.25 packet layer and LAPB), on the two access
//! lines of the simulated ACCUNET ([`X25Network`]), in virtual time.
//!
//! Host 0 is Purdue, host 1 CSNET. The runner ([`linklab_sim::drive`])
//! advances time to the earliest of the network's, the hosts' (smoltcp's
//! `poll_at`, LAPB and packet-layer timers) and the workloads' wake-ups,
//! and at each instant moves frames and datagrams until all is quiet.
//! Deterministic for the streams it is given: the network draws from
//! `"net/..."`, smoltcp's initial sequence numbers from `"host/{i}"`.

use core::net::Ipv4Addr;
use core::time::Duration;
use linklab_core::{earliest, Engine, Instant, Streams};

use crate::korb::bsd42::{exchange, Bsd42Config, Bsd42Sender};
use linklab_channel::x25net::{X25NetConfig, X25NetError, X25Network};
use linklab_ip::apps::FileReceiver;

use crate::workload::Workload;
use linklab_ip::x25::{Encapsulation, IpConfig, Route};
use linklab_ip::{CongestionControl, Host, TcpConfig, X25IfConfig, X25IfError, X25Interface};
use linklab_link::Config as LinkConfig;
use linklab_sim::{drive, DriveError, World};
use linklab_x25::{Config as X25Config, DteAddress, Role};
use smoltcp::wire::{IpAddress, IpCidr};
use thiserror::Error;

/// The hosts' X.121 addresses (Purdue, CSNET).
pub const X121: [&str; 2] = ["31106170001", "31106170002"];

/// The hosts' IPv4 addresses (Purdue, CSNET).
pub const IPV4: [Ipv4Addr; 2] = [Ipv4Addr::new(128, 10, 0, 1), Ipv4Addr::new(192, 5, 58, 1)];

/// The IP MTU of an RFC 877 interface, octets.
pub const RFC877_MTU: usize = 576;

/// 4.2BSD's TCP segment size off the local network, octets.
pub const SEGMENT_OCTETS: usize = 512;

/// IPv4 and TCP headers without options, octets.
const TCP_IP_HEADERS: usize = 40;

/// How the two hosts and the network are set up.
#[derive(Debug, Clone, PartialEq)]
pub struct TestbedConfig {
    /// The network (access lines, transit delay, flow control, set-up).
    pub net: X25NetConfig,
    /// TCP on both hosts.
    pub tcp: TcpConfig,
    /// Most circuits a host opens to the other (Korb, Tables 3 and 4).
    pub max_circuits: usize,
    /// Queued datagrams per extra circuit (RFC 877 interface).
    pub open_threshold: usize,
    /// A circuit idle this long is cleared.
    pub idle_timeout: Duration,
    /// Datagrams the RFC 877 interface queues per destination; more are
    /// dropped.
    pub interface_queue: usize,
    /// TCP's segment size on both hosts, octets (4.2BSD: 512): the
    /// hosts' device MTU is 40 octets more, and the interface's MTU that
    /// or RFC 877's 576, whichever is larger (a larger one by agreement
    /// between the hosts, as RFC 877 allows).
    pub segment_octets: usize,
    /// The TCP that sends the FTP files.
    pub sender: FtpSender,
}

/// The TCP that sends a file (the receiver is always smoltcp).
#[derive(Debug, Clone, PartialEq)]
pub enum FtpSender {
    /// A smoltcp socket configured by [`TestbedConfig::tcp`] (RFC 6298
    /// retransmission timer).
    Smoltcp,
    /// [`Bsd42Sender`]: 4.2BSD's retransmission timer, go-back-N and no
    /// congestion window, with these timers.
    Bsd42(Bsd42Config),
}

impl TestbedConfig {
    /// Korb's apparatus: the calibrated ACCUNET model
    /// ([`X25NetConfig::korb1987`]), 4.2BSD TCP ([`tcp_4_2bsd`]), and
    /// the RFC 877 interface with at most `max_circuits` circuits, a new
    /// one per datagram waiting in its queue (the CSNET code opened
    /// circuits "as load increases"; its threshold is not published). One
    /// per datagram, not one per two: a datagram leaves the queue only for
    /// a circuit with nothing waiting behind its window, so one transfer's
    /// 2048-octet window (four segments) never queues more than two, and
    /// a threshold of two could never open a third circuit for it, while
    /// Table 3 has four circuits well ahead of two.
    pub fn korb1987(max_circuits: usize) -> TestbedConfig {
        TestbedConfig {
            net: X25NetConfig::korb1987(addresses()),
            tcp: tcp_4_2bsd(),
            max_circuits,
            open_threshold: 1,
            idle_timeout: Duration::from_secs(90),
            interface_queue: 64,
            segment_octets: SEGMENT_OCTETS,
            sender: FtpSender::Smoltcp,
        }
    }

    /// As [`TestbedConfig::korb1987`] with files sent by [`Bsd42Sender`]s
    /// (`timers`) and the interface queue of a 4.2BSD host: `IFQ_MAXLEN`,
    /// 50 datagrams (CSRG `net/if.h`), past which `IF_QFULL` drops.
    pub fn korb1987_bsd42(max_circuits: usize, timers: Bsd42Config) -> TestbedConfig {
        TestbedConfig {
            interface_queue: IFQ_MAXLEN,
            sender: FtpSender::Bsd42(timers),
            ..TestbedConfig::korb1987(max_circuits)
        }
    }
}

/// 4.2BSD's interface output queue limit (`IFQ_MAXLEN`).
pub const IFQ_MAXLEN: usize = 50;

/// TCP configured as 4.2BSD's as far as smoltcp allows:
///
/// - **window 2048 octets**: 4.2BSD's `tcp_sendspace` and `tcp_recvspace`
///   were 1024*2 (CSRG `tcp_usrreq.c` 6.1, the 4.2 distribution of July
///   1983); they became 1024*4 only in March 1985 (delta 6.5, "bigger TCP
///   send/recv buffers", shipped with 4.3BSD in 1986). Both VAXes ran
///   4.2BSD (section 2);
/// - **segments of 512 octets** ([`SEGMENT_OCTETS`]: a device MTU of 552);
/// - no congestion window (4.2BSD had no slow start: the receiver's
///   window alone limits the sender);
/// - Nagle's algorithm on (not in 4.2BSD, which sent small segments at
///   once, but FTP's full segments do not meet it);
/// - delayed ACK 200 ms (4.2BSD acknowledged from its 200 ms fast timer
///   or with the next segment sent).
///
/// The retransmission timer is smoltcp's RFC 6298 one (1 s floor); it
/// cannot be set, which is why the Korb experiments send their files with
/// [`FtpSender::Bsd42`] (see the `korb` module documentation). The
/// receivers use this configuration either way.
pub fn tcp_4_2bsd() -> TcpConfig {
    TcpConfig {
        window_octets: 2048,
        send_buffer_octets: 2048,
        congestion: CongestionControl::None,
        nagle: true,
        ack_delay_ms: Some(200),
        timeout: None,
    }
}

/// The two DTEs' X.121 addresses.
pub fn addresses() -> [DteAddress; 2] {
    X121.map(|a| DteAddress::new(a).expect("constant X.121 addresses are valid"))
}

/// Host `i`'s IPv4 address for smoltcp.
pub fn ip_address(i: usize) -> IpAddress {
    IpAddress::Ipv4(IPV4[i])
}

/// Why a testbed could not be built or a run did not finish.
#[derive(Debug, Error)]
pub enum TestbedError {
    /// The network's configuration was refused.
    #[error("X.25 network: {0}")]
    Network(#[from] X25NetError),
    /// A host's interface configuration was refused.
    #[error("host interface: {0}")]
    Host(#[from] X25IfError),
    /// A workload could not start.
    #[error("workload could not start: {0}")]
    Workload(String),
    /// Nothing was left to happen before the workloads finished.
    #[error("the network went quiet at {at_s:.3} s before the workloads finished")]
    Stalled {
        /// Virtual time, seconds.
        at_s: f64,
    },
    /// The horizon passed before the workloads finished.
    #[error("the workloads had not finished by the horizon of {horizon_s:.0} s")]
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

/// Two hosts on the X.25 network.
#[derive(Debug)]
pub struct Testbed {
    net: X25Network,
    hosts: [Host<X25Interface>; 2],
    now: Instant,
    device_drops: u64,
}

/// One file sent by a [`Bsd42Sender`] on one host to a smoltcp
/// [`FileReceiver`] on the other.
#[derive(Debug)]
pub struct Bsd42Flow {
    /// The sending TCP.
    pub sender: Bsd42Sender,
    /// The receiving socket.
    pub receiver: FileReceiver,
    /// When the receiver had every octet.
    pub finished: Option<Instant>,
    /// Why the transfer failed, if it did.
    pub failed: Option<String>,
}

impl Bsd42Flow {
    /// Takes what the receiver got (after the hosts polled) and notes the
    /// end.
    fn step(&mut self, host: &mut Host<X25Interface>, now: Instant) {
        if self.done() {
            return;
        }
        self.receiver.step(host);
        let (received, sent) = (self.receiver.received().len(), self.sender.data().len());
        if received >= sent {
            self.finished = Some(now);
        }
        if let Some(why) = self.receiver.failure() {
            self.failed = Some(format!("server: {why}"));
        }
        if let Some(Err(why)) = self.sender.outcome() {
            self.failed = Some(format!("client: {why}"));
        }
    }

    /// Finished or failed.
    pub fn done(&self) -> bool {
        self.finished.is_some() || self.failed.is_some()
    }
}

/// [`Bsd42Flow`]s from host `from` to the other host.
struct Flows<'a> {
    from: usize,
    flows: &'a mut [Bsd42Flow],
}

/// The interface of host `i`.
fn interface(config: &TestbedConfig, i: usize) -> Result<X25Interface, X25IfError> {
    let other = 1 - i;
    let dte = X25Config {
        role: Role::Dte,
        address: addresses()[i].clone(),
        ..config.net.packet_layer.clone()
    };
    let mut ip = IpConfig::new(
        dte,
        Encapsulation::Rfc877,
        vec![Route {
            ip: IPV4[other],
            address: addresses()[other].clone(),
        }],
    );
    ip.max_circuits = config.max_circuits;
    ip.mtu = RFC877_MTU.max(config.segment_octets + TCP_IP_HEADERS);
    ip.open_threshold = config.open_threshold;
    ip.idle_timeout = config.idle_timeout;
    ip.queue_limit = config.interface_queue;
    X25Interface::new(X25IfConfig {
        lapb: LinkConfig {
            xid: false,
            n1: 2048,
            window_mod8: 7,
            t1: Duration::from_secs(1),
            t1_adaptive: false,
            ..LinkConfig::default()
        },
        ip,
        device_mtu: config.segment_octets + TCP_IP_HEADERS,
        tx_queue_len: 64,
    })
}

impl Testbed {
    /// The hosts and the network, both LAPB links being set up from time
    /// zero (the packet layers restart once they are up).
    pub fn new(config: &TestbedConfig, streams: &Streams) -> Result<Testbed, TestbedError> {
        let net = X25Network::new(config.net.clone(), streams, "net")?;
        let host = |i: usize| -> Result<Host<X25Interface>, TestbedError> {
            let mut link = interface(config, i)?;
            link.start(Instant::ZERO);
            let seed = streams.stream(&format!("host/{i}")).next_u64();
            Ok(Host::on_link(
                link,
                &[IpCidr::new(ip_address(i), 24)],
                seed,
                Instant::ZERO,
            ))
        };
        Ok(Testbed {
            net,
            hosts: [host(0)?, host(1)?],
            now: Instant::ZERO,
            device_drops: 0,
        })
    }

    /// The hosts (0 Purdue, 1 CSNET).
    pub fn hosts(&self) -> &[Host<X25Interface>; 2] {
        &self.hosts
    }

    /// The hosts, mutable (to start workloads).
    pub fn hosts_mut(&mut self) -> &mut [Host<X25Interface>; 2] {
        &mut self.hosts
    }

    /// The network (its counters).
    pub fn net(&self) -> &X25Network {
        &self.net
    }

    /// Virtual time now.
    pub fn now(&self) -> Instant {
        self.now
    }

    /// Datagrams of [`Bsd42Sender`]s that found the device queue full.
    pub fn device_drops(&self) -> u64 {
        self.device_drops
    }

    /// Runs until every workload is done, or fails after `horizon` of
    /// virtual time from now.
    pub fn run(
        &mut self,
        workloads: &mut [&mut dyn Workload<X25Interface>],
        horizon: Duration,
    ) -> Result<(), TestbedError> {
        self.drive(
            workloads,
            Flows {
                from: 0,
                flows: &mut [],
            },
            horizon,
        )
    }

    /// Runs `flows` from host `from` until each has finished or failed,
    /// or fails after `horizon` of virtual time from now.
    pub fn run_bsd42(
        &mut self,
        from: usize,
        flows: &mut [Bsd42Flow],
        horizon: Duration,
    ) -> Result<(), TestbedError> {
        self.drive(&mut [], Flows { from, flows }, horizon)
    }

    fn drive(
        &mut self,
        workloads: &mut [&mut dyn Workload<X25Interface>],
        flows: Flows<'_>,
        horizon: Duration,
    ) -> Result<(), TestbedError> {
        let start = self.now;
        let mut run = Run {
            testbed: self,
            workloads,
            flows,
        };
        drive(&mut run, start, start + horizon)
            .map(|_| ())
            .map_err(|e| match e {
                DriveError::Stalled { at } => TestbedError::Stalled {
                    at_s: at.as_secs_f64(),
                },
                DriveError::Livelock { at } => TestbedError::Livelock {
                    at_s: at.as_secs_f64(),
                },
                DriveError::Horizon { .. } => TestbedError::Horizon {
                    horizon_s: horizon.as_secs_f64(),
                },
            })
    }

    /// Runs for `duration` of virtual time with no workload (circuits
    /// idle out, timers run).
    pub fn idle(&mut self, duration: Duration) -> Result<(), TestbedError> {
        let mut waiter = Until {
            at: self.now + duration,
            reached: false,
        };
        self.run(&mut [&mut waiter], duration + Duration::from_secs(1))
    }

    /// Moves datagrams and frames at `now` until nothing moves.
    fn settle(
        &mut self,
        workloads: &mut [&mut dyn Workload<X25Interface>],
        flows: &mut Flows<'_>,
        now: Instant,
    ) {
        loop {
            // The senders take their segments before the host's smoltcp
            // could answer them with resets.
            let mut busy = false;
            if !flows.flows.is_empty() {
                let host = &mut self.hosts[flows.from];
                let mut senders: Vec<_> = flows.flows.iter_mut().map(|f| &mut f.sender).collect();
                let (moved, dropped) = exchange(&mut senders, host.link_mut(), now);
                busy |= moved;
                self.device_drops += dropped;
            }
            for host in &mut self.hosts {
                host.poll(now);
            }
            for w in workloads.iter_mut() {
                if !w.done() {
                    w.step(&mut self.hosts, now);
                }
            }
            for flow in flows.flows.iter_mut() {
                flow.step(&mut self.hosts[1 - flows.from], now);
            }
            for (i, host) in self.hosts.iter_mut().enumerate() {
                host.poll(now);
                while let Some(frame) = host.link_mut().poll_transmit(now) {
                    busy = true;
                    self.net.transmit(now, i, frame);
                }
            }
            while let Some(delivery) = self.net.poll_delivery() {
                busy = true;
                if let (true, Some(host)) = (delivery.intact, self.hosts.get_mut(delivery.dte)) {
                    host.link_mut().handle_frame(delivery.at, &delivery.frame);
                }
            }
            if !busy {
                break;
            }
        }
    }
}

/// A [`Testbed`] running workloads: what [`drive`] takes through time.
struct Run<'a, 'w> {
    testbed: &'a mut Testbed,
    workloads: &'a mut [&'w mut dyn Workload<X25Interface>],
    flows: Flows<'a>,
}

impl World for Run<'_, '_> {
    fn settle(&mut self, now: Instant) {
        self.testbed.settle(self.workloads, &mut self.flows, now);
    }

    fn done(&self) -> bool {
        self.workloads.iter().all(|w| w.done()) && self.flows.flows.iter().all(Bsd42Flow::done)
    }

    /// The earliest of the workloads', the network's and the hosts'
    /// wake-ups.
    fn next_wake(&mut self, now: Instant) -> Option<Instant> {
        let testbed = &mut *self.testbed;
        earliest(
            self.workloads
                .iter()
                .map(|w| w.poll_at())
                .chain([testbed.net.poll_timeout()])
                .chain(self.flows.flows.iter().map(|f| f.sender.poll_timeout()))
                .chain(testbed.hosts.iter_mut().map(|h| h.poll_at(now))),
        )
    }

    fn advance(&mut self, to: Instant) {
        let testbed = &mut *self.testbed;
        testbed.now = to;
        if testbed.net.poll_timeout().is_some_and(|t| t <= to) {
            testbed.net.handle_timeout(to);
        }
        for host in &mut testbed.hosts {
            host.link_mut().handle_timeout(to);
        }
        for flow in self.flows.flows.iter_mut() {
            flow.sender.handle_timeout(to);
        }
    }
}

/// A workload that only waits until an instant.
#[derive(Debug)]
struct Until {
    at: Instant,
    reached: bool,
}

impl Workload<X25Interface> for Until {
    fn step(&mut self, _hosts: &mut [Host<X25Interface>; 2], now: Instant) {
        self.reached |= now >= self.at;
    }

    fn done(&self) -> bool {
        self.reached
    }

    fn poll_at(&self) -> Option<Instant> {
        Some(self.at)
    }
}
