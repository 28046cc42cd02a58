//! Ronan et al.'s 7182-octet TCP transfer with the Table IV settings on
//! the bare radio channel (Table I, no host or TNC), windows 1-7 at 1200
//! and 9600 bit/s: transfer time, retransmitted segments (the sender's
//! sniffer) and spurious ones (segments the receiver already had), means
//! over ten seeds. `cargo run --release -p linklab-scenario --example
//! bare_radio` prints the table recorded in docs/reproduce.md (section
//! "Ronan et al., Tables V and VII, TCP/IP column").

use core::time::Duration;

use linklab_core::Streams;
use linklab_ip::TcpConfig;
use linklab_scenario::radio_ip::{Addresses, HostSetup, Network, NetworkConfig};
use linklab_scenario::workload::FileTransfer;

const SEEDS: u64 = 10;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("bit/s  k  transfer_s  retransmitted  spurious  segments");
    for rate in [1200, 9600] {
        for k in 1..=7u8 {
            let (mut time, mut retx, mut spurious, mut segments) = (0.0, 0.0, 0.0, 0.0);
            for seed in 0..SEEDS {
                let mut net = Network::new(
                    &NetworkConfig::ronan_table_1(rate, seed),
                    &HostSetup::ronan_table_4(k),
                )?;
                let mut stream = Streams::new(seed).stream("file");
                let data = (0..7182).map(|_| stream.below(256) as u8).collect();
                let server = Addresses::standard().ipv4_address(1);
                let now = net.now();
                let mut ft = FileTransfer::start(
                    net.hosts_mut(),
                    server,
                    &TcpConfig::ronan_table_4(k),
                    data,
                    now,
                )?;
                net.run(&mut ft, Duration::from_secs(7200))?;
                let report = ft.report();
                if !report.byte_exact {
                    return Err(format!("k = {k}, seed {seed}: {:?}", ft.failure()).into());
                }
                let tx = net.hosts()[0].ax25().device().tx_sniffer().counters();
                let rx = net.hosts()[1].ax25().device().rx_sniffer().counters();
                time += report.transfer_time.as_secs_f64();
                retx += tx.repeated_segments as f64;
                spurious += rx.repeated_segments as f64;
                segments += tx.segments as f64;
            }
            let n = SEEDS as f64;
            println!(
                "{rate:5}  {k}  {:10.2}  {:13.1}  {:8.1}  {:8.1}",
                time / n,
                retx / n,
                spurious / n,
                segments / n
            );
        }
    }
    Ok(())
}
