//! `linklab ip` end to end: two processes on the KISS reflector of the
//! `cli` test module (127.0.0.1 only), a ping and a 20 KB TCP transfer in
//! VC and datagram mode, byte-exact; and the errors a user can make.

mod cli;

use std::process::Output;

use cli::{finish, linklab, tail, text, Hub};

fn payload(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 37 + i / 253) as u8).collect()
}

/// `linklab ip` options of station `n` (N0CALL-n at 44.0.0.n) on `kiss`.
fn station(kiss: &str, n: u8, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = ["ip", "--kiss", kiss, "--mycall"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.push(format!("N0CALL-{n}"));
    args.push("--addr".into());
    args.push(format!("44.0.0.{n}/24"));
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

fn run(args: &[String], what: &str) -> Output {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    finish(linklab(&args), what)
}

/// Station 2 serves one transfer; station 1 pings it three times and
/// sends it 20 KB. Both use `extra`; `static_neighbours` gives each the
/// other's address instead of ARP.
fn ping_and_transfer(extra: &[&str], static_neighbours: bool) -> (Output, Output, Output) {
    let hub = Hub::start();
    let kiss = hub.address();
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("input.bin");
    let output = dir.path().join("output.bin");
    let data = payload(20 * 1024);
    std::fs::write(&input, &data).unwrap();
    let neighbour = |n: u8| -> Vec<&str> {
        match (static_neighbours, n) {
            (false, _) => vec!["--no-arp"][..0].to_vec(),
            (true, 1) => vec!["--no-arp", "--neighbour", "44.0.0.2=N0CALL-2"],
            (true, _) => vec!["--no-arp", "--neighbour", "44.0.0.1=N0CALL-1"],
        }
    };
    let mut server = station(&kiss, 2, extra);
    server.extend(neighbour(2).iter().map(|s| s.to_string()));
    server.extend(
        ["serve", "--port", "5001", "--count", "1", "--out"]
            .iter()
            .map(|s| s.to_string()),
    );
    server.push(output.to_str().unwrap().to_string());
    let server_args: Vec<&str> = server.iter().map(String::as_str).collect();
    let server = linklab(&server_args);
    hub.wait_for_clients(1);

    let mut client = station(&kiss, 1, extra);
    client.extend(neighbour(1).iter().map(|s| s.to_string()));
    let mut ping = client.clone();
    ping.extend(
        ["ping", "44.0.0.2", "-c", "3", "-i", "0.2"]
            .iter()
            .map(|s| s.to_string()),
    );
    let ping = run(&ping, "ping");
    let mut send = client;
    send.extend(["send".to_string(), input.to_str().unwrap().to_string()]);
    send.push("44.0.0.2:5001".into());
    let send = run(&send, "send");
    let server = finish(server, "serve");

    assert!(ping.status.success(), "ping: {}", tail(&ping.stderr));
    let report = text(&ping.stdout);
    assert!(
        report.contains("64 bytes from 44.0.0.2: icmp_seq=0 time="),
        "{report}"
    );
    assert!(
        report.contains("3 packets transmitted, 3 received, 0% packet loss"),
        "{report}"
    );
    assert!(report.contains("rtt min/avg/max/mdev = "), "{report}");
    assert!(
        send.status.success(),
        "send: {}\nserve: {}",
        tail(&send.stderr),
        tail(&server.stderr)
    );
    assert!(server.status.success(), "serve: {}", tail(&server.stderr));
    let report = text(&send.stdout);
    assert!(
        report.starts_with("sent 20480 bytes to 44.0.0.2:5001 in ")
            && report.contains(" bit/s; TCP: ")
            && report.contains(" retransmitted ("),
        "{report}"
    );
    let report = text(&server.stdout);
    assert!(
        report.starts_with("received 20480 bytes from 44.0.0.1:"),
        "{report}"
    );
    let received = std::fs::read(&output).unwrap();
    assert_eq!(received.len(), data.len());
    assert!(received == data, "the received file differs");
    (ping, send, server)
}

#[test]
fn ping_and_transfer_in_vc_mode_with_arp() {
    let (_, send, server) = ping_and_transfer(&["--mode", "vc", "--monitor"], false);
    let log = text(&send.stderr);
    // ARP over AX.25 (PID 0xCD) to QST, then the circuit (SABM, I frames
    // with PID 0xCC).
    assert!(log.contains("N0CALL-1>QST: <UI C> [CD]"), "{log}");
    assert!(log.contains("N0CALL-1>N0CALL-2: <SABM C P>"), "{log}");
    assert!(log.contains("N0CALL-1>N0CALL-2: <I C S"), "{log}");
    assert!(text(&server.stderr).contains("VC mode, MTU 256, MSS 216"));
}

#[test]
fn ping_and_transfer_in_datagram_mode_with_static_neighbours() {
    let (_, send, _) = ping_and_transfer(&["--mode", "datagram", "--monitor"], true);
    let log = text(&send.stderr);
    assert!(log.contains("N0CALL-1>N0CALL-2: <UI C> [CC]"), "{log}");
    assert!(
        !log.contains("[CD]"),
        "ARP was sent with static neighbours: {log}"
    );
    assert!(!log.contains("SABM"), "{log}");
}

#[test]
fn ping_and_transfer_with_datagrams_segmented_on_a_modulo_128_circuit() {
    let (_, send, _) = ping_and_transfer(
        &["--mod128", "--mtu", "1024", "--n1", "256", "--monitor"],
        true,
    );
    let log = text(&send.stderr);
    assert!(log.contains("N0CALL-1>N0CALL-2: <SABME C P>"), "{log}");
    assert!(log.contains("MTU 1024, MSS 984, N1 256"), "{log}");
}

/// Runs `linklab ip` (as station 1 on `kiss`) and expects it to fail with
/// exit status `code` and `message` on standard error.
fn fails(kiss: &str, extra: &[&str], code: i32, message: &str) {
    let out = run(&station(kiss, 1, extra), "linklab ip");
    let log = text(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{log}");
    assert!(log.contains(message), "{log}");
    assert!(!log.contains("panicked"), "{log}");
}

#[test]
fn vc_mtu_above_n1_without_mod128_names_the_flags() {
    fails(
        "tcp:127.0.0.1:9",
        &["--n1", "256", "--mtu", "1500", "ping", "44.0.0.2"],
        2,
        "--mtu 1500 is above --n1 256: in VC mode a longer datagram is segmented, which \
         needs a modulo-128 link; add --mod128",
    );
}

#[test]
fn t1_of_zero_is_said_in_milliseconds() {
    let out = run(
        &station("tcp:127.0.0.1:9", 1, &["--t1-ms", "0", "ping", "44.0.0.2"]),
        "linklab ip",
    );
    let log = text(&out.stderr);
    assert!(log.contains("T1 = 0 ms is invalid"), "{log}");
    assert!(!log.contains("0ns"), "{log}");
}

#[test]
fn user_errors_are_explained_before_the_tnc_is_touched() {
    let kiss = "tcp:127.0.0.1:9";
    fails(
        kiss,
        &["ping", "44.0.1.2"],
        2,
        "44.0.1.2 is not on the link (44.0.0.0/24)",
    );
    fails(kiss, &["ping", "44.0.0.1"], 2, "is this host's own address");
    fails(
        kiss,
        &["ping", "44.0.0.2", "-s", "300"],
        2,
        "exceeds the MTU of 256",
    );
    fails(
        kiss,
        &["--no-arp", "send", "Cargo.toml", "44.0.0.2:5001"],
        2,
        "44.0.0.2 has no --neighbour entry and ARP is off",
    );
    fails(
        kiss,
        &[
            "--mode", "datagram", "--n1", "256", "--mtu", "512", "ping", "44.0.0.2",
        ],
        2,
        "datagram mode needs MTU <= N1",
    );
    fails(
        kiss,
        &["--mod128", "--n1", "8", "--mtu", "2048", "ping", "44.0.0.2"],
        2,
        "128 segments carry at most",
    );
    fails(
        kiss,
        &["send", "/nonexistent/file", "44.0.0.2:5001"],
        2,
        "cannot read /nonexistent/file",
    );
    // Parsing errors come from the argument parser (status 2).
    let out = run(
        &[
            "ip",
            "--kiss",
            kiss,
            "--mycall",
            "N0CALL",
            "--addr",
            "44.0.0.300/24",
            "ping",
            "44.0.0.2",
        ]
        .map(String::from),
        "linklab ip",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("\"44.0.0.300\" is not an IPv4 or IPv6 address"));
    let out = run(
        &[
            "ip",
            "--kiss",
            kiss,
            "--mycall",
            "N0CALL",
            "--addr",
            "44.0.0.1/24",
            "--neighbour",
            "44.0.0.2",
            "ping",
            "44.0.0.2",
        ]
        .map(String::from),
        "linklab ip",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("is not IP=CALL"));
}

#[test]
fn an_unreachable_tnc_is_a_clear_error() {
    // A port nothing listens on: bind one, note it, close it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    fails(
        &format!("tcp:127.0.0.1:{port}"),
        &["ping", "44.0.0.2"],
        1,
        "cannot connect to the KISS TNC at tcp:127.0.0.1:",
    );
}

#[test]
fn refused_and_unanswered_connections_and_pings_fail_clearly() {
    let hub = Hub::start();
    let kiss = hub.address();
    let dir = tempfile::tempdir().unwrap();
    let server = station(
        &kiss,
        2,
        &["--mode", "datagram", "serve", "--port", "5001", "--out"],
    );
    let mut server: Vec<&str> = server.iter().map(String::as_str).collect();
    let out = dir.path().to_str().unwrap();
    server.push(out);
    let mut server = linklab(&server);
    hub.wait_for_clients(1);
    let input = dir.path().join("input.bin");
    std::fs::write(&input, b"hello").unwrap();
    let input = input.to_str().unwrap();
    // Nothing listens on port 5002: the server's stack answers with RST.
    fails(
        &kiss,
        &["--mode", "datagram", "send", input, "44.0.0.2:5002"],
        1,
        "sending to 44.0.0.2:5002 failed: connection refused",
    );
    // Nobody has 44.0.0.9: ARP goes unanswered.
    fails(
        &kiss,
        &[
            "--mode",
            "datagram",
            "--timeout",
            "2",
            "send",
            input,
            "44.0.0.9:5001",
        ],
        1,
        "no answer to the connection request within 2 s",
    );
    fails(
        &kiss,
        &[
            "--mode", "datagram", "ping", "44.0.0.9", "-c", "1", "-W", "1",
        ],
        1,
        "no reply from 44.0.0.9",
    );
    server.child.kill().ok();
    server.child.wait().ok();
}

#[test]
fn ip_options_may_follow_the_action() {
    let args = [
        "ip",
        "ping",
        "44.0.0.2",
        "-c",
        "1",
        "--kiss",
        "tcp:127.0.0.1:9",
        "--mycall",
        "N0CALL-1",
        "--addr",
        "44.0.0.1/24",
        "--mtu",
        "300",
    ]
    .map(String::from);
    let out = run(&args, "linklab ip");
    let log = text(&out.stderr);
    assert!(log.contains("MTU 300"), "{log}");
    assert!(log.contains("cannot connect to the KISS TNC"), "{log}");
    // A required option is still required, wherever it would go.
    let out = run(&args[..5], "linklab ip");
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("kiss"));
}

/// A TNC that must not be touched: a listener nobody should connect to.
fn untouched_tnc() -> (std::net::TcpListener, String) {
    let tnc = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    tnc.set_nonblocking(true).unwrap();
    let address = format!("tcp:{}", tnc.local_addr().unwrap());
    (tnc, address)
}

#[test]
fn tun_refusals_come_before_the_tnc_is_touched() {
    let (tnc, kiss) = untouched_tnc();
    // An interface of that name exists (every namespace has lo).
    fails(
        &kiss,
        &["tun", "lo"],
        2,
        "cannot create TUN device lo: an interface of that name exists",
    );
    fails(&kiss, &["tun", "ax/0"], 2, "not a valid interface name");
    fails(
        &kiss,
        &["tun", "llx0", "--add-addr", "fd44::1/64"],
        2,
        "--mtu 256: IPv6 needs an MTU of at least 1280",
    );
    // Without CAP_NET_ADMIN (as root, the capability dropped).
    let root = std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.starts_with(b"0\n"));
    let capsh = std::process::Command::new("sh")
        .args(["-c", "command -v capsh"])
        .output()
        .is_ok_and(|o| o.status.success());
    if root && capsh {
        let line = std::iter::once(env!("CARGO_BIN_EXE_linklab").to_string())
            .chain(station(&kiss, 1, &["tun", "llx0"]))
            .collect::<Vec<_>>()
            .join(" ");
        let out = std::process::Command::new("capsh")
            .args(["--drop=cap_net_admin", "--", "-c", &line])
            .output()
            .unwrap();
        let log = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{log}");
        assert!(
            log.contains("cannot create TUN device llx0: permission denied (needs CAP_NET_ADMIN"),
            "{log}"
        );
    } else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI runs as root with capsh"
        );
        eprintln!("skipping the CAP_NET_ADMIN case (needs root and capsh)");
    }
    assert!(tnc.accept().is_err(), "the TNC was touched");
}
