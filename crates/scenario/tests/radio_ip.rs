//! IP over AX.25 between two simulated hosts on the Ronan et al. radio
//! channel (Table I) in virtual time.

use core::time::Duration;

use linklab_core::Streams;
use linklab_ip::apps::{Ping, PingConfig, PingReport};
use linklab_ip::{Encapsulation, TcpConfig};
use linklab_scenario::radio_ip::{Addresses, HostSetup, Network, NetworkConfig};
use linklab_scenario::workload::{FileTransfer, TransferReport};

/// The 7182-octet test file of Ronan et al. section IV, seeded contents.
fn file(octets: usize, seed: u64) -> Vec<u8> {
    let mut stream = Streams::new(seed).stream("file");
    (0..octets).map(|_| stream.below(256) as u8).collect()
}

fn ping(setup: &HostSetup) -> PingReport {
    let config = NetworkConfig::ronan_table_1(1200, 1);
    let mut net = Network::new(&config, setup).expect("hosts set up");
    let target = Addresses::standard().ipv4[1];
    let now = net.now();
    let config = PingConfig {
        target,
        ident: 0x22,
        count: 4,
        payload_octets: 56,
        interval: Duration::from_secs(10),
        wait: Duration::from_secs(30),
    };
    let mut ping = Ping::start(net.hosts_mut(), &config, now).expect("ping starts");
    net.run(&mut ping, Duration::from_secs(600))
        .expect("ping runs");
    ping.report()
}

#[test]
fn ping_over_a_virtual_circuit_gets_every_reply() {
    let report = ping(&HostSetup::ronan_table_4(2));
    assert_eq!((report.transmitted, report.received), (4, 4), "{report:?}");
    // 84-octet datagram + 17 octets of AX.25 each way at 1200 bit/s with
    // TXDELAY 150 ms: well over half a second per round trip.
    assert!(report.min > Duration::from_millis(500), "{report:?}");
    assert!(report.min <= report.avg && report.avg <= report.max);
}

#[test]
fn ping_in_datagram_mode_with_arp_gets_every_reply() {
    let setup = HostSetup {
        encapsulation: Encapsulation::Datagram,
        arp: true,
        ..HostSetup::ronan_table_4(2)
    };
    let report = ping(&setup);
    assert_eq!((report.transmitted, report.received), (4, 4), "{report:?}");
}

/// Runs the file transfer and returns its report and the network.
fn transfer(
    config: &NetworkConfig,
    setup: &HostSetup,
    tcp: &TcpConfig,
    octets: usize,
    ipv6: bool,
) -> (TransferReport, Network) {
    let mut net = Network::new(config, setup).expect("hosts set up");
    let addresses = Addresses::standard();
    let server = if ipv6 {
        addresses.ipv6_address(1)
    } else {
        addresses.ipv4_address(1)
    };
    let now = net.now();
    let mut ft = FileTransfer::start(net.hosts_mut(), server, tcp, file(octets, 5), now)
        .expect("transfer starts");
    if let Err(e) = net.run(&mut ft, Duration::from_secs(3600)) {
        panic!("{e}; {:?}; {:?}", ft.report(), ft.failure());
    }
    assert_eq!(ft.failure(), None);
    (ft.report(), net)
}

#[test]
fn a_7182_octet_file_arrives_byte_exact_with_table_iv_settings_at_window_2() {
    let config = NetworkConfig::ronan_table_1(1200, 3);
    let (report, net) = transfer(
        &config,
        &HostSetup::ronan_table_4(2),
        &TcpConfig::ronan_table_4(2),
        7182,
        false,
    );
    assert!(report.byte_exact, "{report:?}");
    let tx = net.hosts()[0].ax25().device().tx_sniffer().counters();
    eprintln!(
        "{report:?} {tx:?} {:?} {:?}",
        net.stats(),
        net.hosts()[0].ax25().stats()
    );
}

#[test]
fn ipv6_tcp_crosses_the_segmenting_virtual_circuit() {
    let config = NetworkConfig::ronan_table_1(9600, 4);
    let tcp = TcpConfig {
        window_octets: 2560,
        ..TcpConfig::ronan_table_4(2)
    };
    let (report, net) = transfer(&config, &HostSetup::ipv6_segmented(7), &tcp, 7182, true);
    assert!(report.byte_exact, "{report:?}");
    // Full-sized IPv6 datagrams (1280 octets) need more than N1 = 256:
    // the link carried them in segments.
    let link = net.hosts()[0]
        .ax25()
        .link(Addresses::standard().callsigns[1])
        .expect("a VC link to the server");
    assert!(link.params().segmenter);
    let rx = net.hosts()[1].ax25().device().rx_sniffer().counters();
    assert!(rx.payload_octets >= 7182, "{rx:?}");
    assert!(net.stats().frames_sent[0] > 7182 / 256, "{:?}", net.stats());
}

#[test]
fn a_lossy_channel_still_delivers_the_file_byte_exact() {
    let config = NetworkConfig {
        frame_loss: 0.1,
        ..NetworkConfig::ronan_table_1(1200, 11)
    };
    let (report, net) = transfer(
        &config,
        &HostSetup::ronan_table_4(2),
        &TcpConfig::ronan_table_4(2),
        7182,
        false,
    );
    assert!(report.byte_exact, "{report:?}");
    assert!(net.stats().frames_lost > 0);
}

#[test]
fn tcp_over_ui_frames_recovers_lost_datagrams_itself() {
    let config = NetworkConfig {
        frame_loss: 0.1,
        ..NetworkConfig::ronan_table_1(1200, 12)
    };
    let setup = HostSetup {
        encapsulation: Encapsulation::Datagram,
        arp: true,
        ..HostSetup::ronan_table_4(2)
    };
    let (report, net) = transfer(&config, &setup, &TcpConfig::ronan_table_4(2), 7182, false);
    assert!(report.byte_exact, "{report:?}");
    let tx = net.hosts()[0].ax25().device().tx_sniffer().counters();
    // Datagram mode has no link-layer recovery: every lost data segment
    // is retransmitted by TCP.
    assert!(tx.repeated_segments > 0, "{tx:?}");
    assert!(net.hosts()[0].ax25().stats().arp_requests >= 1);
    assert!(net.hosts()[1].ax25().stats().arp_replies >= 1);
}

/// The 7182-octet transfer at Table IV window 1 in UI frames, the TCP
/// timestamps option switched on at the hosts `timestamps` says; the
/// sender's sniffer counters.
fn timestamped_transfer(timestamps: [bool; 2]) -> linklab_ip::TcpCounters {
    let config = NetworkConfig::ronan_table_1(9600, 21);
    let setup = HostSetup {
        encapsulation: Encapsulation::Datagram,
        ..HostSetup::ronan_table_4(1)
    };
    let mut net = Network::new(&config, &setup).expect("hosts set up");
    for (host, on) in net.hosts_mut().iter_mut().zip(timestamps) {
        host.set_tcp_timestamps(on);
    }
    let now = net.now();
    let server = Addresses::standard().ipv4_address(1);
    let tcp = TcpConfig::ronan_table_4(1);
    let mut ft = FileTransfer::start(net.hosts_mut(), server, &tcp, file(7182, 6), now)
        .expect("transfer starts");
    if let Err(e) = net.run(&mut ft, Duration::from_secs(3600)) {
        panic!("{e}; {:?}; {:?}", ft.report(), ft.failure());
    }
    assert!(ft.report().byte_exact, "{:?}", ft.report());
    net.hosts()[0].ax25().device().tx_sniffer().counters()
}

#[test]
fn with_timestamps_at_both_ends_each_segment_carries_12_octets_less_data() {
    // MTU 168: 128 octets of data a segment without the option, 116 with
    // it (RFC 7323 3.2, as Linux's tcp_current_mss), so 62 data segments
    // instead of 57 and at least 52 octets of IP and TCP header on each.
    let both = timestamped_transfer([true, true]);
    assert!(both.data_segments >= 7182_u64.div_ceil(116), "{both:?}");
    let headers = both.datagram_octets - both.payload_octets;
    assert!(headers >= 52 * both.segments, "{both:?}");
    // Offered by one end only, the option is not used (RFC 7323 3.2).
    let one = timestamped_transfer([true, false]);
    assert!(one.data_segments >= 7182_u64.div_ceil(128), "{one:?}");
    assert!(one.data_segments < 7182_u64.div_ceil(116), "{one:?}");
    let headers = one.datagram_octets - one.payload_octets;
    assert!(headers < 52 * one.segments, "{one:?}");
}
