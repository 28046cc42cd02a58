//! `linklab ip`: TCP/IP over a real KISS TNC in real time. A smoltcp host
//! ([`linklab_ip::Host`]) on an AX.25 interface in VC or datagram mode,
//! run by [`linklab_io::ip_driver`], with one action: ping a neighbour,
//! serve TCP file transfers, or send a file.

use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::anyhow;
use clap::{Args, Subcommand, ValueEnum};
use linklab_core::Instant;
use linklab_io::tun_driver::{self, Tun, TunConfig, TunError, TunEvent};
use linklab_io::{ip_driver, Application, IpDriverOptions, IpEvent, IpStation};
use linklab_ip::apps::{FileSender, Ping, PingConfig};
use linklab_ip::server::{FileServer, Received};
use linklab_ip::{
    Ax25Config, Ax25Interface, CongestionControl, DatagramPort, Encapsulation, Host, TcpConfig,
};
use linklab_wire::ax25::Address;
use linklab_wire::monitor;
use smoltcp::wire::{IpAddress, IpCidr, IpEndpoint};

use crate::options::CommonArgs;
use crate::runtime::block_on;
use crate::usage::usage;

/// Options of every `linklab ip` action, before or after the action's
/// name (see [`anywhere`]).
#[derive(Args)]
#[command(mut_args(anywhere))]
pub struct IpArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// This host's IP address and prefix length, e.g. 44.0.0.1/24 or
    /// fd44::1/64 (without a prefix: /24 for IPv4, /64 for IPv6).
    #[arg(long, value_name = "ADDR/LEN", value_parser = parse_cidr)]
    addr: IpCidr,
    /// A static neighbour: its IP address and AX.25 address, e.g.
    /// 44.0.0.2=N0CALL-2 (repeat for more). IPv4 neighbours without an
    /// entry are found with ARP.
    #[arg(long = "neighbour", value_name = "IP=CALL", value_parser = parse_neighbour)]
    neighbours: Vec<(IpAddr, Address)>,
    /// Neither answer nor send ARP requests (static neighbours only).
    #[arg(long)]
    no_arp: bool,
    /// How datagrams travel: in I frames of a connected-mode link per
    /// neighbour (vc, as `axparms --route add ... --ipmode V`) or in UI frames (datagram).
    #[arg(long, value_enum, default_value_t = Mode::Vc)]
    mode: Mode,
    /// The mode for one neighbour, CALL=vc or CALL=datagram (repeat),
    /// as `axparms --route add ax0 CALL --ipmode V|D` sets it per route.
    #[arg(long = "ipmode", value_name = "CALL=MODE", value_parser = parse_ipmode)]
    ipmodes: Vec<(Address, Mode)>,
    /// VC links with SABME (AX.25 v2.2, modulo 128) instead of SABM; needed
    /// for an MTU above N1 (segmentation).
    #[arg(long)]
    mod128: bool,
    /// IP MTU in octets (at least 68; at most N1 in datagram mode).
    #[arg(long, value_name = "OCTETS", default_value_t = 256)]
    mtu: usize,
    /// TCP receive window (receive buffer) in octets.
    #[arg(long, value_name = "OCTETS", default_value_t = 2048)]
    tcp_window: usize,
    /// TCP send buffer in octets.
    #[arg(long, value_name = "OCTETS", default_value_t = 8192)]
    tcp_send_buffer: usize,
    /// TCP congestion control.
    #[arg(long, value_enum, default_value_t = Congestion::Reno)]
    congestion: Congestion,
    /// Abort a TCP connection after this many seconds without an answer
    /// (connection request unanswered, or data unacknowledged).
    #[arg(long, value_name = "S", default_value_t = 120)]
    timeout: u64,
    #[command(subcommand)]
    action: Action,
}

/// `arg` made global, so that it may also follow the action's name. clap
/// refuses a global argument that is required, so a required one is left
/// to the derived parsing, which still refuses its absence (status 2).
fn anywhere(arg: clap::Arg) -> clap::Arg {
    arg.global(true).required(false)
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Mode {
    Vc,
    Datagram,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Congestion {
    None,
    Reno,
    Cubic,
}

#[derive(Subcommand)]
enum Action {
    /// Send ICMP echo requests to a neighbour and time the replies.
    Ping(PingArgs),
    /// Accept TCP connections and write what each one carries to a file.
    Serve(ServeArgs),
    /// Send a file over one TCP connection.
    Send(SendArgs),
    /// Carry the kernel's own IP datagrams: a TUN device with --addr and
    /// --mtu whose traffic to the neighbours goes over AX.25, so that
    /// every program (ping, nc, ssh, iperf3, a web server) runs over the
    /// link. Needs CAP_NET_ADMIN. Routes beyond the link are the kernel's
    /// (`ip route add ... dev NAME`). Runs until Ctrl-C or SIGTERM, then
    /// releases the links; the device goes with the process. The --tcp-*,
    /// --congestion and --timeout options are for the in-process stack
    /// and do not apply.
    Tun(TunArgs),
}

#[derive(Args)]
struct TunArgs {
    /// The device's name, e.g. ax0 (1-15 characters).
    name: String,
    /// A further address of the device, e.g. an IPv6 one beside an IPv4
    /// --addr (repeat for more); IPv6 neighbours need --neighbour.
    #[arg(long = "add-addr", value_name = "ADDR/LEN", value_parser = parse_cidr)]
    more: Vec<IpCidr>,
}

#[derive(Args)]
struct PingArgs {
    /// The IPv4 address to ping.
    target: IpAddr,
    /// Echo requests to send.
    #[arg(short = 'c', value_name = "COUNT", default_value_t = 4,
          value_parser = clap::value_parser!(u16).range(1..))]
    count: u16,
    /// Octets of data in each request.
    #[arg(short = 's', value_name = "SIZE", default_value_t = 56)]
    size: usize,
    /// Seconds between requests.
    #[arg(short = 'i', value_name = "S", default_value_t = 1.0, value_parser = parse_seconds)]
    interval: f64,
    /// Seconds to wait for replies after the last request.
    #[arg(short = 'W', value_name = "S", default_value_t = 10.0, value_parser = parse_seconds)]
    wait: f64,
}

#[derive(Args)]
struct ServeArgs {
    /// The TCP port to listen on.
    #[arg(long, value_name = "PORT",
          value_parser = clap::value_parser!(u16).range(1..))]
    port: u16,
    /// Where to write: an existing directory (one file per transfer,
    /// transfer-N-ADDR-PORT) or a new file (the first transfer; later ones
    /// to FILE.2, FILE.3, ...). No file is overwritten: a name taken gets
    /// a suffix .1, .2, ...
    #[arg(long, value_name = "FILE|DIR")]
    out: PathBuf,
    /// Exit after this many transfers (otherwise run until Ctrl-C).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    count: Option<u64>,
}

#[derive(Args)]
struct SendArgs {
    /// The file to send; `-` for standard input.
    file: PathBuf,
    /// The receiver, ADDR:PORT (IPv6: [ADDR]:PORT).
    dest: SocketAddr,
}

fn parse_cidr(text: &str) -> Result<IpCidr, String> {
    let (ip, len) = match text.split_once('/') {
        Some((ip, len)) => (ip, Some(len)),
        None => (text, None),
    };
    let ip: IpAddr = ip
        .parse()
        .map_err(|_| format!("{ip:?} is not an IPv4 or IPv6 address"))?;
    let max = if ip.is_ipv4() { 32 } else { 128 };
    let len = match len {
        None if ip.is_ipv4() => 24,
        None => 64,
        Some(len) => len
            .parse::<u8>()
            .ok()
            .filter(|&l| l <= max)
            .ok_or_else(|| format!("prefix length {len:?} is not a number in 0-{max}"))?,
    };
    if ip.is_unspecified() || ip.is_multicast() {
        return Err(format!("{ip} cannot be a host's address"));
    }
    Ok(IpCidr::new(IpAddress::from(ip), len))
}

fn parse_neighbour(text: &str) -> Result<(IpAddr, Address), String> {
    let (ip, call) = text
        .split_once('=')
        .ok_or_else(|| format!("{text:?} is not IP=CALL (e.g. 44.0.0.2=N0CALL-2)"))?;
    let ip: IpAddr = ip
        .parse()
        .map_err(|_| format!("{ip:?} is not an IPv4 or IPv6 address"))?;
    let call: Address = call
        .parse()
        .map_err(|e| format!("{call:?} is not an AX.25 address: {e}"))?;
    Ok((ip, call))
}

fn parse_ipmode(text: &str) -> Result<(Address, Mode), String> {
    let (call, mode) = text
        .split_once('=')
        .ok_or_else(|| format!("{text:?} is not CALL=MODE (e.g. N0CALL-2=datagram)"))?;
    let call: Address = call
        .parse()
        .map_err(|e| format!("{call:?} is not an AX.25 address: {e}"))?;
    let mode = match mode {
        "vc" | "V" => Mode::Vc,
        "datagram" | "D" => Mode::Datagram,
        _ => return Err(format!("{mode:?} is not a mode: vc or datagram (V or D)")),
    };
    Ok((call, mode))
}

fn parse_seconds(text: &str) -> Result<f64, String> {
    text.parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && (0.0..=3600.0).contains(s))
        .ok_or_else(|| format!("{text:?} is not a number of seconds in 0-3600"))
}

impl IpArgs {
    /// The host: smoltcp over an AX.25 interface as the options say.
    fn host(&self) -> anyhow::Result<Host> {
        let config = self.ax25_config(&[])?;
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
            ^ u64::from(std::process::id()).rotate_left(32);
        Host::new(config, &[self.addr], seed, Instant::ZERO).map_err(|e| usage(e.to_string()))
    }

    /// The AX.25 interface of a host with --addr and `more` addresses, as
    /// the options say.
    fn ax25_config(&self, more: &[IpCidr]) -> anyhow::Result<Ax25Config> {
        let modulus = crate::modulus(self.mod128);
        let mut link = self.common.link.config(modulus, self.common.tnc.bitrate)?;
        if self.common.link.n1.is_none() {
            // Linux's ax25 interface: one datagram per frame (paclen = MTU).
            link.n1 = self.mtu.clamp(1, 2048);
        }
        if self.mode == Mode::Vc && self.mtu > link.n1 && !self.mod128 {
            return Err(usage(format!(
                "--mtu {} is above --n1 {}: in VC mode a longer datagram is segmented, which \
                 needs a modulo-128 link; add --mod128, or lower --mtu to {}, or leave out --n1",
                self.mtu, link.n1, link.n1
            )));
        }
        let local = self.common.mycall;
        let own: Vec<IpAddr> = std::iter::once(&self.addr)
            .chain(more)
            .map(|c| IpAddr::from(c.address()))
            .collect();
        let mut config = Ax25Config::new(local, self.mtu, link);
        let encapsulation = |mode| match mode {
            Mode::Vc => Encapsulation::VirtualCircuit,
            Mode::Datagram => Encapsulation::Datagram,
        };
        config.encapsulation = encapsulation(self.mode);
        config.modes = self
            .ipmodes
            .iter()
            .map(|&(call, mode)| (call, encapsulation(mode)))
            .collect();
        config.arp_ipv4 = own.iter().find_map(|ip| match ip {
            IpAddr::V4(v4) if !self.no_arp => Some(*v4),
            _ => None,
        });
        for &(ip, call) in &self.neighbours {
            if !own.iter().any(|o| o.is_ipv4() == ip.is_ipv4()) {
                return Err(usage(format!(
                    "neighbour {ip} is not of the same IP version as --addr {}",
                    own[0]
                )));
            }
            config.neighbours.push((ip, call));
        }
        Ok(config)
    }

    fn tcp(&self) -> TcpConfig {
        TcpConfig {
            window_octets: self.tcp_window.max(1),
            send_buffer_octets: self.tcp_send_buffer.max(1),
            congestion: match self.congestion {
                Congestion::None => CongestionControl::None,
                Congestion::Reno => CongestionControl::Reno,
                Congestion::Cubic => CongestionControl::Cubic,
            },
            nagle: true,
            ack_delay_ms: Some(10),
            timeout: Some(Duration::from_secs(self.timeout.max(1))),
        }
    }

    /// Refuses a destination this host cannot reach: off the link (no
    /// routing), its own address, or with no way to find its AX.25
    /// address.
    fn check_destination(&self, dest: IpAddr) -> anyhow::Result<()> {
        let own = IpAddr::from(self.addr.address());
        if dest == own {
            return Err(usage(format!("{dest} is this host's own address")));
        }
        if dest.is_ipv4() != own.is_ipv4() {
            return Err(usage(format!(
                "{dest} is not of the same IP version as --addr {own}"
            )));
        }
        if !self.addr.contains_addr(&IpAddress::from(dest)) {
            return Err(usage(format!(
                "{dest} is not on the link ({}): linklab ip reaches only neighbours on the \
                 link, it has no routes or gateways",
                match self.addr {
                    IpCidr::Ipv4(c) => c.network().to_string(),
                    IpCidr::Ipv6(c) => c.to_string(),
                }
            )));
        }
        let known = self.neighbours.iter().any(|(ip, _)| *ip == dest);
        if !known && (own.is_ipv6() || self.no_arp) {
            return Err(usage(format!(
                "{dest} has no --neighbour entry{}",
                if own.is_ipv6() {
                    " (ARP is for IPv4 only)"
                } else {
                    " and ARP is off (--no-arp)"
                }
            )));
        }
        Ok(())
    }

    /// Says what the host is, on standard error.
    fn announce(&self, host: &Host) {
        let link = &host.ax25().config().link;
        eprintln!(
            "linklab: {} ({}) on {}: {} mode, MTU {}, MSS {}, N1 {}, {}",
            self.addr,
            self.common.mycall,
            self.common.kiss,
            match self.mode {
                Mode::Vc => "VC",
                Mode::Datagram => "datagram",
            },
            self.mtu,
            self.mtu.saturating_sub(match self.addr {
                IpCidr::Ipv4(_) => 40,
                IpCidr::Ipv6(_) => 60,
            }),
            link.n1,
            if self.no_arp || matches!(self.addr, IpCidr::Ipv6(_)) {
                "static neighbours"
            } else {
                "ARP on"
            }
        );
    }

    /// Connects to the TNC and runs `app` on `host` until it is done.
    fn run<A: Application>(&self, host: Host, app: &mut A) -> anyhow::Result<IpStation> {
        let params = self.common.tnc.params()?;
        let mut station = IpStation::new(host, params.port);
        station.set_air(self.common.tnc.air()?);
        station.set_monitor(self.common.tnc.monitor);
        let kiss = self.common.kiss.clone();
        let link = &station.host().ax25().config().link;
        let linger = (link.t1 * (u32::from(link.n2) + 1)).min(Duration::from_secs(15));
        block_on(async {
            let stream = kiss.connect().await?;
            ip_driver::run(
                stream,
                &mut station,
                params,
                app,
                IpDriverOptions { linger },
            )
            .await?;
            Ok(())
        })?;
        Ok(station)
    }
}

/// Standard-error output of the station's events.
fn log_event(monitor_on: bool, at: Duration, event: IpEvent) {
    match event {
        IpEvent::Monitor {
            direction,
            bytes,
            modulus,
        } if monitor_on => {
            let dir = match direction {
                linklab_io::Direction::Tx => "TX",
                linklab_io::Direction::Rx => "RX",
            };
            let line = monitor::format_raw_with(
                &bytes,
                modulus,
                monitor::MonitorOptions { max_info: Some(32) },
            );
            eprintln!("{dir} {:>9.3} {line}", at.as_secs_f64());
        }
        IpEvent::Monitor { .. } => {}
        IpEvent::BadInput(error) => eprintln!("linklab: bad input ignored: {error}"),
        IpEvent::BadInputCount(count) => eprintln!("linklab: {count}"),
    }
}

pub fn run(args: IpArgs) -> anyhow::Result<()> {
    match &args.action {
        Action::Ping(a) => ping(&args, a),
        Action::Serve(a) => serve(&args, a),
        Action::Send(a) => send(&args, a),
        Action::Tun(a) => tun(&args, a),
    }
}

/// The smallest MTU IPv6 allows (RFC 8200 section 5).
const IPV6_MIN_MTU: usize = 1280;

/// `tun`: the kernel's datagrams over AX.25 until Ctrl-C or SIGTERM.
fn tun(args: &IpArgs, a: &TunArgs) -> anyhow::Result<()> {
    let ipv6 = std::iter::once(&args.addr)
        .chain(&a.more)
        .any(|c| matches!(c, IpCidr::Ipv6(_)));
    if ipv6 && args.mtu < IPV6_MIN_MTU {
        return Err(usage(format!(
            "--mtu {}: IPv6 needs an MTU of at least {IPV6_MIN_MTU} (RFC 8200 section 5; the \
             kernel refuses IPv6 addresses below it); with --mod128, datagrams above N1 are \
             segmented (e.g. --mod128 --mtu 1280 --n1 256)",
            args.mtu
        )));
    }
    let config = args.ax25_config(&a.more)?;
    let mtu = config.mtu;
    let iface = Ax25Interface::new(config).map_err(|e| usage(e.to_string()))?;
    let params = args.common.tnc.params()?;
    let mut station = IpStation::new(DatagramPort::new(iface), params.port);
    station.set_air(args.common.tnc.air()?);
    let monitor = args.common.tnc.monitor;
    station.set_monitor(monitor);
    let addresses: Vec<(IpAddr, u8)> = std::iter::once(&args.addr)
        .chain(&a.more)
        .map(|c| (IpAddr::from(c.address()), c.prefix_len()))
        .collect();
    let tun_config = TunConfig {
        name: a.name.clone(),
        addresses,
        mtu: u32::try_from(mtu).unwrap_or(u32::MAX),
    };
    let kiss = args.common.kiss.clone();
    let summary = block_on(async {
        // The device first: without the right to make it, or with its
        // name taken, nothing else is touched.
        let device = Tun::open(&tun_config).await.map_err(|e| match e {
            TunError::Configure { .. } => anyhow!(e),
            _ => usage(e.to_string()),
        })?;
        let stream = kiss.connect().await?;
        let names: Vec<String> = tun_config
            .addresses
            .iter()
            .map(|(ip, len)| format!("{ip}/{len}"))
            .collect();
        eprintln!(
            "linklab: {} up: {} ({}) over {kiss}, MTU {mtu}, {} mode; Ctrl-C removes it",
            device.name(),
            names.join(", "),
            args.common.mycall,
            match args.mode {
                Mode::Vc => "VC",
                Mode::Datagram => "datagram",
            },
        );
        let summary = tun_driver::run(
            stream,
            &mut station,
            device,
            params,
            |at, event| match event {
                TunEvent::Station(e) => log_event(monitor, at, e),
                TunEvent::Dropped(e) => eprintln!("linklab: {e}"),
                TunEvent::Link(text) => eprintln!("linklab: {text}"),
                TunEvent::Kernel(text) => {
                    eprintln!("linklab: the kernel refused a datagram: {text}")
                }
            },
        )
        .await?;
        anyhow::Ok(summary)
    })?;
    let drops = station.host().drops();
    eprintln!(
        "linklab: {} removed: {} datagrams from the kernel, {} to it; dropped: {} over the MTU, \
         {} with the queue full, {} not IP",
        a.name,
        summary.from_kernel,
        summary.to_kernel,
        drops.oversize,
        drops.queue_full,
        drops.not_ip
    );
    Ok(())
}

/// `ping`: ICMP echo with per-reply lines and `ping`'s summary.
struct PingApp {
    ping: Ping,
    target: IpAddr,
    printed: Vec<bool>,
    monitor: bool,
    interrupted: bool,
}

impl Application for PingApp {
    fn step(&mut self, host: &mut Host, now: Instant) {
        self.ping.step_host(host, now);
        for (seq, rtt) in self.ping.rtts().iter().enumerate() {
            if let (Some(rtt), Some(printed)) = (rtt, self.printed.get_mut(seq)) {
                if !*printed {
                    *printed = true;
                    println!(
                        "{} bytes from {}: icmp_seq={seq} time={:.1} ms",
                        self.ping_octets(),
                        self.target,
                        rtt.as_secs_f64() * 1e3
                    );
                }
            }
        }
    }

    fn poll_at(&self) -> Option<Instant> {
        self.ping.next_wakeup()
    }

    fn done(&self) -> bool {
        self.interrupted || self.ping.finished()
    }

    fn event(&mut self, at: Duration, event: IpEvent) {
        log_event(self.monitor, at, event);
    }

    fn interrupt(&mut self, _now: Instant) {
        self.interrupted = true;
    }
}

impl PingApp {
    /// Octets of an echo message (ICMP header and data).
    fn ping_octets(&self) -> usize {
        self.ping.payload_octets() + 8
    }
}

fn ping(args: &IpArgs, a: &PingArgs) -> anyhow::Result<()> {
    let IpAddr::V4(target) = a.target else {
        return Err(usage(format!(
            "ping {}: linklab ip pings IPv4 addresses only (ICMP, not ICMPv6)",
            a.target
        )));
    };
    args.check_destination(a.target)?;
    if a.size + 28 > args.mtu {
        return Err(usage(format!(
            "ping -s {}: a request of {} octets (data, 8 of ICMP, 20 of IPv4) exceeds the MTU \
             of {}; linklab ip does not fragment",
            a.size,
            a.size + 28,
            args.mtu
        )));
    }
    let mut host = args.host()?;
    args.announce(&host);
    let config = PingConfig {
        target,
        ident: (std::process::id() & 0xFFFF) as u16,
        count: a.count,
        payload_octets: a.size,
        interval: Duration::from_secs_f64(a.interval),
        wait: Duration::from_secs_f64(a.wait),
    };
    let ping = Ping::open(&mut host, &config, Instant::ZERO).map_err(|e| anyhow!(e))?;
    println!(
        "PING {} {}({}) bytes of data.",
        a.target,
        a.size,
        a.size + 28
    );
    let mut app = PingApp {
        ping,
        target: a.target,
        printed: vec![false; usize::from(a.count)],
        monitor: args.common.tnc.monitor,
        interrupted: false,
    };
    let started = std::time::Instant::now();
    args.run(host, &mut app)?;
    let report = app.ping.report();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let lost = u32::from(report.transmitted) - u32::from(report.received);
    println!("--- {} ping statistics ---", a.target);
    println!(
        "{} packets transmitted, {} received, {:.0}% packet loss, time {:.0} ms",
        report.transmitted,
        report.received,
        if report.transmitted > 0 {
            100.0 * f64::from(lost) / f64::from(report.transmitted)
        } else {
            0.0
        },
        ms(started.elapsed())
    );
    if report.received == 0 {
        return Err(anyhow!("no reply from {}", a.target));
    }
    println!(
        "rtt min/avg/max/mdev = {:.3}/{:.3}/{:.3}/{:.3} ms",
        ms(report.min),
        ms(report.avg),
        ms(report.max),
        ms(report.mdev)
    );
    Ok(())
}

/// `send`: one file over one TCP connection.
struct SendApp {
    sender: FileSender,
    monitor: bool,
    interrupted: bool,
}

impl Application for SendApp {
    fn step(&mut self, host: &mut Host, now: Instant) {
        self.sender.step(host, now);
    }

    fn poll_at(&self) -> Option<Instant> {
        None
    }

    fn done(&self) -> bool {
        self.interrupted || self.sender.outcome().is_some()
    }

    fn event(&mut self, at: Duration, event: IpEvent) {
        log_event(self.monitor, at, event);
    }

    fn interrupt(&mut self, _now: Instant) {
        self.interrupted = true;
    }
}

fn send(args: &IpArgs, a: &SendArgs) -> anyhow::Result<()> {
    args.check_destination(a.dest.ip())?;
    let data = crate::input::read(&a.file).map_err(crate::usage::input_file)?;
    let octets = data.len();
    let mut host = args.host()?;
    args.announce(&host);
    eprintln!(
        "linklab: connecting to {} over the link: waiting up to {} s for an answer (--timeout)",
        a.dest,
        args.timeout.max(1)
    );
    let remote = IpEndpoint::new(IpAddress::from(a.dest.ip()), a.dest.port());
    let local_port = 49152 + (std::process::id() % 16384) as u16;
    let sender = FileSender::connect(
        &mut host,
        &args.tcp(),
        remote,
        local_port,
        data,
        Instant::ZERO,
    )
    .map_err(|e| anyhow!(e))?;
    let mut app = SendApp {
        sender,
        monitor: args.common.tnc.monitor,
        interrupted: false,
    };
    let station = args.run(host, &mut app)?;
    let outcome = app.sender.outcome().cloned();
    let ax25 = station.host().ax25();
    let tcp = ax25.device().tx_sniffer().counters();
    let stats = ax25.stats();
    let (retx, retx_octets) = (tcp.repeated_segments, tcp.repeated_octets);
    let counts = format!(
        "TCP: {} segments sent, {retx} retransmitted ({retx_octets} octets); \
         IP: {} datagrams sent, {} received",
        tcp.segments, stats.datagrams_sent, stats.datagrams_received
    );
    match outcome {
        Some(Ok(at)) => {
            let secs = (at - app.sender.started()).as_secs_f64();
            let goodput = if secs > 0.0 {
                octets as f64 * 8.0 / secs
            } else {
                0.0
            };
            println!(
                "sent {octets} bytes to {} in {secs:.3} s: goodput {goodput:.0} bit/s; {counts}",
                a.dest
            );
            Ok(())
        }
        Some(Err(why)) => Err(anyhow!("sending to {} failed: {why} ({counts})", a.dest)),
        None => Err(anyhow!(
            "interrupted after {} of {octets} bytes were handed to TCP ({counts})",
            app.sender.queued()
        )),
    }
}

/// `serve`: receives transfers and writes each to a file.
struct ServeApp {
    server: FileServer,
    out: PathBuf,
    out_is_dir: bool,
    count: Option<u64>,
    transfers: u64,
    failures: u64,
    error: Option<anyhow::Error>,
    monitor: bool,
    interrupted: bool,
}

impl ServeApp {
    /// Where transfer number `n` (from 1) goes.
    fn path(&self, n: u64, remote: Option<IpEndpoint>) -> PathBuf {
        if self.out_is_dir {
            let from = remote.map_or_else(
                || "unknown".to_string(),
                |r| format!("{}-{}", r.addr, r.port),
            );
            self.out.join(format!("transfer-{n}-{from}"))
        } else if n == 1 {
            self.out.clone()
        } else {
            let mut name = self.out.clone().into_os_string();
            name.push(format!(".{n}"));
            PathBuf::from(name)
        }
    }

    fn finished(&mut self, received: Received) -> anyhow::Result<()> {
        self.transfers += 1;
        let from = received
            .remote
            .map_or_else(|| "an unknown peer".to_string(), |r| r.to_string());
        let secs = (received.at - received.accepted).as_secs_f64();
        match received.outcome {
            Ok(()) => {
                let path = crate::new_file::write_new(
                    &self.path(self.transfers, received.remote),
                    &received.data,
                )?;
                let goodput = if secs > 0.0 {
                    received.data.len() as f64 * 8.0 / secs
                } else {
                    0.0
                };
                println!(
                    "received {} bytes from {from} in {secs:.3} s ({goodput:.0} bit/s) -> {}",
                    received.data.len(),
                    path.display()
                );
            }
            Err(why) => {
                self.failures += 1;
                eprintln!(
                    "linklab: transfer from {from} failed: {why}; {} bytes not written",
                    received.data.len()
                );
            }
        }
        Ok(())
    }
}

impl Application for ServeApp {
    fn step(&mut self, host: &mut Host, now: Instant) {
        if self.error.is_some() {
            return;
        }
        if let Err(e) = self.server.step(host, now) {
            self.error = Some(anyhow!(e));
            return;
        }
        while let Some(received) = self.server.poll_received() {
            if let Err(e) = self.finished(received) {
                self.error = Some(e);
                return;
            }
        }
    }

    fn poll_at(&self) -> Option<Instant> {
        None
    }

    fn done(&self) -> bool {
        let enough = self
            .count
            .is_some_and(|n| self.transfers >= n && self.server.active() == 0);
        self.error.is_some() || self.interrupted || enough
    }

    fn event(&mut self, at: Duration, event: IpEvent) {
        log_event(self.monitor, at, event);
    }

    fn interrupt(&mut self, _now: Instant) {
        eprintln!("linklab: interrupted; stopping");
        self.interrupted = true;
    }
}

fn serve(args: &IpArgs, a: &ServeArgs) -> anyhow::Result<()> {
    let out_is_dir = a.out.is_dir();
    if !out_is_dir {
        check_writable(&a.out)?;
        crate::new_file::refuse_existing("--out", &a.out)?;
    }
    let mut host = args.host()?;
    args.announce(&host);
    let server = FileServer::listen(&mut host, &args.tcp(), a.port).map_err(|e| anyhow!(e))?;
    eprintln!(
        "linklab: serving TCP port {} (answering ping); writing to {}",
        a.port,
        a.out.display()
    );
    let mut app = ServeApp {
        server,
        out: a.out.clone(),
        out_is_dir,
        count: a.count,
        transfers: 0,
        failures: 0,
        error: None,
        monitor: args.common.tnc.monitor,
        interrupted: false,
    };
    args.run(host, &mut app)?;
    if let Some(e) = app.error {
        return Err(e);
    }
    if app.failures > 0 {
        return Err(anyhow!(
            "{} of {} transfers failed",
            app.failures,
            app.transfers
        ));
    }
    Ok(())
}

/// Fails early, before the TNC is touched, if `path` cannot be created.
fn check_writable(path: &Path) -> anyhow::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(usage(format!(
            "--out {}: {} is not a directory",
            path.display(),
            dir.display()
        )));
    }
    Ok(())
}
