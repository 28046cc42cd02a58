//! The file server on one simulated host, senders on the other, on the
//! Ronan et al. radio channel (Table I) in virtual time.

use core::time::Duration;

use linklab_core::{Instant, Streams};
use linklab_ip::apps::FileSender;
use linklab_ip::server::{FileServer, Received};
use linklab_ip::{Host, TcpConfig};
use linklab_scenario::radio_ip::{Addresses, HostSetup, Network, NetworkConfig};
use linklab_scenario::workload::Workload;
use smoltcp::wire::IpEndpoint;

const PORT: u16 = 5001;

fn file(octets: usize, seed: u64) -> Vec<u8> {
    let mut stream = Streams::new(seed).stream("file");
    (0..octets).map(|_| stream.below(256) as u8).collect()
}

/// Senders on host 0 (each starting at its own time), the server on host 1.
struct Transfers {
    pending: Vec<(Instant, u16, Vec<u8>)>,
    senders: Vec<FileSender>,
    server: FileServer,
    received: Vec<Received>,
    tcp: TcpConfig,
    next: Option<Instant>,
}

impl Workload for Transfers {
    fn step(&mut self, hosts: &mut [Host; 2], now: Instant) {
        let server = IpEndpoint::new(Addresses::standard().ipv4_address(1), PORT);
        let (due, later): (Vec<_>, Vec<_>) = self.pending.drain(..).partition(|p| p.0 <= now);
        self.pending = later;
        self.next = self.pending.iter().map(|p| p.0).min();
        for (_, port, data) in due {
            let sender = FileSender::connect(&mut hosts[0], &self.tcp, server, port, data, now)
                .expect("the sender connects");
            self.senders.push(sender);
        }
        for sender in &mut self.senders {
            sender.step(&mut hosts[0], now);
        }
        self.server
            .step(&mut hosts[1], now)
            .expect("the server steps");
        while let Some(received) = self.server.poll_received() {
            self.received.push(received);
        }
    }

    fn done(&self) -> bool {
        self.pending.is_empty()
            && self.senders.iter().all(|s| s.outcome().is_some())
            && self.received.len() >= self.senders.len()
    }

    fn poll_at(&self) -> Option<Instant> {
        self.next
    }
}

/// Runs senders of `files` (start offset in seconds, octets) at 1200 bit/s
/// in VC mode, window 2; returns what the server received and the sent
/// files.
fn run(files: &[(u64, usize)]) -> (Vec<Received>, Vec<Vec<u8>>, Network) {
    let mut net = Network::new(
        &NetworkConfig::ronan_table_1(1200, 3),
        &HostSetup::ronan_table_4(2),
    )
    .expect("hosts set up");
    let tcp = TcpConfig {
        timeout: Some(Duration::from_secs(300)),
        ..TcpConfig::ronan_table_4(2)
    };
    let server = FileServer::listen(&mut net.hosts_mut()[1], &tcp, PORT).expect("listens");
    let sent: Vec<Vec<u8>> = files
        .iter()
        .enumerate()
        .map(|(i, &(_, n))| file(n, i as u64))
        .collect();
    let mut work = Transfers {
        pending: files
            .iter()
            .zip(&sent)
            .enumerate()
            .map(|(i, (&(at, _), data))| {
                let start = Instant::ZERO + Duration::from_secs(at);
                (start, 49152 + i as u16, data.clone())
            })
            .collect(),
        senders: Vec::new(),
        server,
        received: Vec::new(),
        tcp,
        next: Some(Instant::ZERO),
    };
    net.run(&mut work, Duration::from_secs(3600))
        .expect("the transfers finish");
    for sender in &work.senders {
        assert!(matches!(sender.outcome(), Some(Ok(_))), "{sender:?}");
    }
    (work.received, sent, net)
}

#[test]
fn a_retransmitted_syn_does_not_open_a_second_connection() {
    let (received, sent, net) = run(&[(0, 3000)]);
    // The SYN waits for the AX.25 link set-up and is sent again when the
    // 1 s initial RTO expires: the server must see one connection.
    let tx = net.hosts()[0].ax25().device().tx_sniffer().counters();
    assert!(tx.repeated_segments > 0, "no SYN was retransmitted: {tx:?}");
    assert_eq!(received.len(), 1, "{received:?}");
    assert_eq!(received[0].outcome, Ok(()));
    assert_eq!(received[0].data, sent[0]);
}

#[test]
fn transfers_one_after_another_and_at_once_each_arrive_whole() {
    // The third connects after the first has ended, while the second is
    // still sending: its listener must not take the second's or the
    // third's retransmitted SYN as a new connection.
    let (mut received, sent, _) = run(&[(0, 500), (0, 6000), (40, 500), (400, 1000)]);
    assert_eq!(received.len(), 4, "{received:?}");
    received.sort_by_key(|r| r.remote.map(|e| e.port));
    for (r, data) in received.iter().zip(&sent) {
        assert_eq!(r.outcome, Ok(()));
        assert_eq!(&r.data, data, "from {:?}", r.remote);
    }
}
