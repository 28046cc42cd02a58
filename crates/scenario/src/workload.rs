//! What runs on the two hosts of a simulated IP testbed: the [`Workload`]
//! trait the benches step, a whole file transfer ([`FileTransfer`]: the
//! sender on host 0, the receiver on host 1) and ping from host 0.

use core::time::Duration;

use linklab_core::Instant;
use linklab_ip::apps::{FileReceiver, FileSender, Ping, FILE_PORT};
use linklab_ip::{Ax25Interface, Host, IpLink, TcpConfig};
use smoltcp::wire::{IpAddress, IpEndpoint};

/// A workload the runner steps, on hosts over links of type `L`.
pub trait Workload<L: IpLink = Ax25Interface> {
    /// Acts on the hosts' sockets at `now` (after they were polled).
    fn step(&mut self, hosts: &mut [Host<L>; 2], now: Instant);
    /// The workload has finished (successfully or not).
    fn done(&self) -> bool;
    /// When the workload next wants to act without any network event.
    fn poll_at(&self) -> Option<Instant> {
        None
    }
}

/// Sends `data` from host 0 to host 1 over one TCP connection; host 1
/// counts and keeps what arrives (an FTP data connection without the
/// control connection).
#[derive(Debug)]
pub struct FileTransfer {
    sender: FileSender,
    receiver: FileReceiver,
    finished: Option<Instant>,
    failed: Option<String>,
}

/// What a file transfer measured.
#[derive(Debug, Clone, PartialEq)]
pub struct TransferReport {
    /// Octets the server received.
    pub received_octets: usize,
    /// The server received exactly the octets sent.
    pub byte_exact: bool,
    /// From the client's connect to the server's last octet.
    pub transfer_time: Duration,
    /// File octets over the transfer time, bit/s.
    pub goodput_bps: f64,
}

impl FileTransfer {
    /// Opens a listening socket on host 1 and a connection from host 0 to
    /// `server_ip`, both with `tcp`, to carry `data`.
    pub fn start<L: IpLink>(
        hosts: &mut [Host<L>; 2],
        server_ip: IpAddress,
        tcp: &TcpConfig,
        data: Vec<u8>,
        now: Instant,
    ) -> Result<FileTransfer, String> {
        FileTransfer::start_on(hosts, server_ip, (49152, FILE_PORT), tcp, data, now)
    }

    /// As [`FileTransfer::start`], from client port `ports.0` to server
    /// port `ports.1` (for several transfers at once).
    pub fn start_on<L: IpLink>(
        hosts: &mut [Host<L>; 2],
        server_ip: IpAddress,
        ports: (u16, u16),
        tcp: &TcpConfig,
        data: Vec<u8>,
        now: Instant,
    ) -> Result<FileTransfer, String> {
        let (client_port, server_port) = ports;
        let [client_host, server_host] = hosts;
        let receiver = FileReceiver::listen(server_host, tcp, server_port)
            .map_err(|e| format!("server: {e}"))?;
        let remote = IpEndpoint::new(server_ip, server_port);
        let sender = FileSender::connect(client_host, tcp, remote, client_port, data, now)
            .map_err(|e| format!("client: {e}"))?;
        Ok(FileTransfer {
            sender,
            receiver,
            finished: None,
            failed: None,
        })
    }

    /// Why the transfer failed, if it did.
    pub fn failure(&self) -> Option<&str> {
        self.failed.as_deref()
    }

    /// The outcome, once the server has all octets (or the transfer
    /// stopped).
    pub fn report(&self) -> TransferReport {
        let end = self.finished.unwrap_or(Instant::ZERO);
        let transfer_time = end - self.sender.started();
        let secs = transfer_time.as_secs_f64();
        let received = self.receiver.received();
        TransferReport {
            received_octets: received.len(),
            byte_exact: received == self.sender.data(),
            transfer_time,
            goodput_bps: if secs > 0.0 {
                received.len() as f64 * 8.0 / secs
            } else {
                0.0
            },
        }
    }
}

impl<L: IpLink> Workload<L> for FileTransfer {
    fn step(&mut self, hosts: &mut [Host<L>; 2], now: Instant) {
        self.sender.step(&mut hosts[0], now);
        if let (None, Some(why)) = (self.finished, self.sender.failure()) {
            self.failed = Some(format!("client: {why}"));
        }
        self.receiver.step(&mut hosts[1]);
        if let Some(why) = self.receiver.failure() {
            self.failed = Some(format!("server: {why}"));
        }
        let (received, sent) = (self.receiver.received().len(), self.sender.data().len());
        if self.finished.is_none() && received >= sent {
            self.finished = Some(now);
        }
        if received > sent {
            self.failed = Some(format!(
                "the server received {received} octets, more than the {sent} sent"
            ));
        }
    }

    fn done(&self) -> bool {
        self.finished.is_some() || self.failed.is_some()
    }
}

impl<L: IpLink> Workload<L> for Ping {
    fn step(&mut self, hosts: &mut [Host<L>; 2], now: Instant) {
        self.step_host(&mut hosts[0], now);
    }

    fn done(&self) -> bool {
        self.finished()
    }

    fn poll_at(&self) -> Option<Instant> {
        self.next_wakeup()
    }
}
