//! One IP host: a smoltcp [`Interface`] and its sockets over an
//! [`IpLink`] (an [`Ax25Interface`] by default, or an
//! [`X25Interface`](crate::X25Interface)), stepped with time passed in.

use linklab_core::{earliest, Engine, Instant};
use smoltcp::iface::{Config as IfaceConfig, Interface, SocketHandle, SocketSet};
use smoltcp::socket::{icmp, tcp};
use smoltcp::time::{Duration as SmolDuration, Instant as SmolInstant};
use smoltcp::wire::{HardwareAddress, IpCidr};

use crate::device::Ax25Device;
use crate::iface::{Ax25Config, Ax25ConfigError, Ax25Interface};
use crate::timestamps;

/// smoltcp's time for a link-engine instant.
pub fn smol_instant(now: Instant) -> SmolInstant {
    SmolInstant::from_micros(i64::try_from(now.as_micros()).unwrap_or(i64::MAX))
}

/// The link-engine instant for a smoltcp time (negative times clamp to 0).
pub fn link_instant(at: SmolInstant) -> Instant {
    Instant::from_micros(u64::try_from(at.total_micros()).unwrap_or(0))
}

/// TCP congestion control of a socket (smoltcp
/// `TcpSocket::set_congestion_control`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum CongestionControl {
    /// No congestion window: only the receiver's window limits the
    /// sender.
    None,
    /// Reno (RFC 5681): slow start, congestion avoidance, fast
    /// retransmit and recovery.
    #[default]
    Reno,
    /// CUBIC (RFC 9438).
    Cubic,
}

impl CongestionControl {
    fn smoltcp(self) -> tcp::CongestionControl {
        match self {
            CongestionControl::None => tcp::CongestionControl::None,
            CongestionControl::Reno => tcp::CongestionControl::Reno,
            CongestionControl::Cubic => tcp::CongestionControl::Cubic,
        }
    }
}

/// TCP socket parameters of a workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpConfig {
    /// Receive buffer, which is the largest window advertised, octets
    /// (Ronan et al. Table IV: 256-1792).
    pub window_octets: usize,
    /// Send buffer, octets.
    pub send_buffer_octets: usize,
    /// Congestion control.
    pub congestion: CongestionControl,
    /// Nagle's algorithm (RFC 9293 3.7.4).
    pub nagle: bool,
    /// Delayed-ACK time, milliseconds (`None`: acknowledge at once).
    pub ack_delay_ms: Option<u64>,
    /// User timeout (RFC 9293 3.8.3): the connection is aborted when the
    /// peer sends nothing for this long while data waits, or does not
    /// answer a connection request (smoltcp `Socket::set_timeout`).
    pub timeout: Option<core::time::Duration>,
}

impl TcpConfig {
    /// Ronan et al. Table IV's TCP window for AX.25 window `k` (256 k
    /// octets), Reno, Nagle on, smoltcp's 10 ms delayed ACK.
    pub fn ronan_table_4(k: u8) -> TcpConfig {
        TcpConfig {
            window_octets: 256 * usize::from(k),
            send_buffer_octets: 8192,
            congestion: CongestionControl::Reno,
            nagle: true,
            ack_delay_ms: Some(10),
            timeout: None,
        }
    }

    /// A TCP socket with these parameters.
    pub fn socket(&self) -> tcp::Socket<'static> {
        let rx = tcp::SocketBuffer::new(vec![0; self.window_octets.max(1)]);
        let tx = tcp::SocketBuffer::new(vec![0; self.send_buffer_octets.max(1)]);
        let mut socket = tcp::Socket::new(rx, tx);
        socket.set_congestion_control(self.congestion.smoltcp());
        socket.set_nagle_enabled(self.nagle);
        socket.set_ack_delay(self.ack_delay_ms.map(SmolDuration::from_millis));
        socket.set_timeout(self.timeout.map(SmolDuration::from));
        socket
    }
}

/// The link side of a [`Host`]: it owns the queue device smoltcp polls
/// and moves datagrams between it and the link layer. Its timers and its
/// output to the layer below are those of an [`Engine`].
pub trait IpLink: Engine<Transmit = Vec<u8>> {
    /// The device (for its counters).
    fn device(&self) -> &Ax25Device;
    /// The device smoltcp polls.
    fn device_mut(&mut self) -> &mut Ax25Device;
    /// Moves datagrams between the device and the link layer; called after
    /// every smoltcp poll.
    fn serve(&mut self, now: Instant);
}

impl IpLink for Ax25Interface {
    fn device(&self) -> &Ax25Device {
        Ax25Interface::device(self)
    }

    fn device_mut(&mut self) -> &mut Ax25Device {
        Ax25Interface::device_mut(self)
    }

    fn serve(&mut self, now: Instant) {
        Ax25Interface::serve(self, now);
    }
}

/// One host: smoltcp over a link ([`Ax25Interface`] unless said).
pub struct Host<L: IpLink = Ax25Interface> {
    iface: Interface,
    sockets: SocketSet<'static>,
    link: L,
    /// TCP sockets use the timestamps option ([`Host::set_tcp_timestamps`]).
    tcp_timestamps: bool,
}

impl<L: IpLink + core::fmt::Debug> core::fmt::Debug for Host<L> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Host")
            .field("addresses", &self.iface.ip_addrs())
            .field("link", &self.link)
            .finish_non_exhaustive()
    }
}

impl Host {
    /// A host with IP `addresses` (at most smoltcp's 2 per interface) on
    /// an AX.25 interface; `seed` seeds smoltcp's initial sequence numbers
    /// and ports.
    pub fn new(
        ax25: Ax25Config,
        addresses: &[IpCidr],
        seed: u64,
        now: Instant,
    ) -> Result<Host, Ax25ConfigError> {
        Ok(Host::on_link(
            Ax25Interface::new(ax25)?,
            addresses,
            seed,
            now,
        ))
    }

    /// The AX.25 side.
    pub fn ax25(&self) -> &Ax25Interface {
        &self.link
    }

    /// The AX.25 side, mutable (frames, timeouts, channel hints).
    pub fn ax25_mut(&mut self) -> &mut Ax25Interface {
        &mut self.link
    }
}

impl<L: IpLink> Host<L> {
    /// A host with IP `addresses` (at most smoltcp's 2 per interface) on
    /// `link`; `seed` seeds smoltcp's initial sequence numbers and ports.
    pub fn on_link(mut link: L, addresses: &[IpCidr], seed: u64, now: Instant) -> Host<L> {
        let mut config = IfaceConfig::new(HardwareAddress::Ip);
        config.random_seed = seed;
        let mut iface = Interface::new(config, link.device_mut(), smol_instant(now));
        iface.update_ip_addrs(|addrs| {
            for cidr in addresses {
                // smoltcp holds a fixed number of addresses; extra ones
                // are left out.
                let _ = addrs.push(*cidr);
            }
        });
        Host {
            iface,
            sockets: SocketSet::new(Vec::new()),
            link,
            tcp_timestamps: false,
        }
    }

    /// The link side.
    pub fn link(&self) -> &L {
        &self.link
    }

    /// The link side, mutable (frames, timeouts).
    pub fn link_mut(&mut self) -> &mut L {
        &mut self.link
    }

    /// Adds a socket.
    pub fn add_socket(&mut self, socket: impl smoltcp::socket::AnySocket<'static>) -> SocketHandle {
        let handle = self.sockets.add(socket);
        self.stamp(handle);
        handle
    }

    /// Switches the TCP timestamps option (RFC 7323 section 3) on or off
    /// for every TCP socket of the host, present and future, as Linux's
    /// `net.ipv4.tcp_timestamps` does (on by default there, off by default
    /// here): a connection uses it when both ends offer it, and its
    /// segments then carry 12 octets of options and 12 octets less data.
    pub fn set_tcp_timestamps(&mut self, on: bool) {
        self.tcp_timestamps = on;
        for (_, socket) in self.sockets.iter_mut() {
            if let smoltcp::socket::Socket::Tcp(tcp) = socket {
                timestamps::apply(tcp, on);
            }
        }
    }

    /// Gives the socket at `handle` the host's timestamps setting.
    fn stamp(&mut self, handle: SocketHandle) {
        let on = self.tcp_timestamps;
        if let Some((_, smoltcp::socket::Socket::Tcp(tcp))) =
            self.sockets.iter_mut().find(|(h, _)| *h == handle)
        {
            timestamps::apply(tcp, on);
        }
    }

    /// Adds a socket after every socket in the set. smoltcp offers a
    /// segment to the sockets in the order of their slots and gives it to
    /// the first that accepts it, so a listening socket must come after the
    /// connections it may share a port with: otherwise it would take a
    /// retransmitted SYN of one of them as a new connection. Free slots
    /// below the last socket are held by placeholders while the socket is
    /// added, then freed.
    pub fn add_socket_last(
        &mut self,
        socket: impl smoltcp::socket::AnySocket<'static>,
    ) -> SocketHandle {
        let last = self.sockets.iter().map(|(h, _)| h).max();
        let mut placeholders = Vec::new();
        let top = loop {
            let empty = || tcp::SocketBuffer::new(Vec::new());
            let h = self.sockets.add(tcp::Socket::new(empty(), empty()));
            if last.is_none_or(|last| h > last) {
                break h;
            }
            placeholders.push(h);
        };
        self.sockets.remove(top);
        let handle = self.sockets.add(socket);
        for h in placeholders {
            self.sockets.remove(h);
        }
        self.stamp(handle);
        handle
    }

    /// Removes a socket (its handle may then be reused).
    pub fn remove_socket(&mut self, handle: SocketHandle) {
        self.sockets.remove(handle);
    }

    /// A TCP socket.
    pub fn tcp(&mut self, handle: SocketHandle) -> &mut tcp::Socket<'static> {
        self.sockets.get_mut::<tcp::Socket>(handle)
    }

    /// An ICMP socket.
    pub fn icmp(&mut self, handle: SocketHandle) -> &mut icmp::Socket<'static> {
        self.sockets.get_mut::<icmp::Socket>(handle)
    }

    /// Opens an active TCP connection from `local_port` on `socket` to
    /// `remote` (smoltcp `Socket::connect`).
    pub fn tcp_connect(
        &mut self,
        socket: SocketHandle,
        remote: smoltcp::wire::IpEndpoint,
        local_port: u16,
    ) -> Result<(), tcp::ConnectError> {
        let cx = self.iface.context();
        self.sockets
            .get_mut::<tcp::Socket>(socket)
            .connect(cx, remote, local_port)
    }

    /// Lets smoltcp process received datagrams and send what its sockets
    /// have, then hands the datagrams to the link.
    pub fn poll(&mut self, now: Instant) {
        timestamps::set_clock(now);
        self.iface
            .poll(smol_instant(now), self.link.device_mut(), &mut self.sockets);
        self.link.serve(now);
    }

    /// When [`Host::poll`] (smoltcp) or the link's timers need attention
    /// next.
    pub fn poll_at(&mut self, now: Instant) -> Option<Instant> {
        let smol = self
            .iface
            .poll_at(smol_instant(now), &self.sockets)
            .map(link_instant);
        let pending = (self.link.device().rx_pending() > 0).then_some(now);
        earliest([smol, self.link.poll_timeout(), pending])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use linklab_link::Config as LinkConfig;

    #[test]
    fn a_socket_added_last_comes_after_every_other_even_with_free_slots_below() {
        let ax25 = Ax25Config::new("N0CALL".parse().unwrap(), 256, LinkConfig::default());
        let mut host = Host::new(ax25, &[], 1, Instant::ZERO).unwrap();
        let tcp = TcpConfig::ronan_table_4(1);
        let a = host.add_socket(tcp.socket());
        let b = host.add_socket(tcp.socket());
        let c = host.add_socket(tcp.socket());
        host.remove_socket(a);
        host.remove_socket(b);
        let last = host.add_socket_last(tcp.socket());
        assert!(last > c, "{last:?} {c:?}");
        assert!(!host.tcp(last).timestamp_enabled());
        // The placeholders are gone: the free slots below are reused.
        assert_eq!(host.add_socket(tcp.socket()), a);
        assert_eq!(host.add_socket(tcp.socket()), b);
        assert_eq!(host.sockets.iter().count(), 4);
    }

    #[test]
    fn the_timestamps_switch_covers_every_tcp_socket_present_and_future() {
        let ax25 = Ax25Config::new("N0CALL".parse().unwrap(), 256, LinkConfig::default());
        let mut host = Host::new(ax25, &[], 1, Instant::ZERO).unwrap();
        let tcp = TcpConfig::ronan_table_4(1);
        let before = host.add_socket(tcp.socket());
        // An ICMP socket in the set is left alone.
        host.add_socket(icmp::Socket::new(
            icmp::PacketBuffer::new(Vec::new(), Vec::new()),
            icmp::PacketBuffer::new(Vec::new(), Vec::new()),
        ));
        host.set_tcp_timestamps(true);
        let after = host.add_socket(tcp.socket());
        let last = host.add_socket_last(tcp.socket());
        for handle in [before, after, last] {
            assert!(host.tcp(handle).timestamp_enabled(), "{handle:?}");
        }
        host.set_tcp_timestamps(false);
        let later = host.add_socket(tcp.socket());
        for handle in [before, later] {
            assert!(!host.tcp(handle).timestamp_enabled(), "{handle:?}");
        }
    }
}
