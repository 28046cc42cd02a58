//! The status listener of `linklab station` (`[status]`) on `linklab
//! channel`, with two transfers through the station at once (a file
//! into its drop, a file from an AGWPE program on it) over a lossy
//! channel: `/status.json` and `/metrics` follow them, counters rise,
//! `/metrics` is read by prometheus-client's OpenMetrics parser from
//! PyPI (interop/metrics_check.sh) against docs/station.md's table, and
//! bad clients (unknown paths, other methods, a huge head, a slow head,
//! 1,000 connections) are answered or dropped while the transfers go on
//! and complete byte-exact. Loopback only; every wait is bounded.

mod cli;

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use cli::station::status;
use cli::web::{
    exchange, get, lossy_channel, sample, station, status_until, Transfers, SHOW_LIMIT,
    TRANSFER_LIMIT,
};
use serde_json::Value;

/// Octets each way.
const LEN: usize = 24_000;

/// Connections opened at once against the listener's cap of 64.
const FLOOD: usize = 1000;

/// Counter families that do not move in this run, and why: the links
/// are modulo 8 with REJ (no SREJ, and no late frames, which only a
/// modulo-128 link drops), the channel does not reorder, the station
/// has no TUN device and
/// no DTN node (tests/station.rs checks the node's figures in the
/// status report) and no NET/ROM node (tests/station_netrom.rs checks
/// its table), and its port does not digipeat.
const STILL: &[&str] = &[
    "linklab_netrom_datagrams_total",
    "linklab_dtn_bundles_forwarded_total",
    "linklab_dtn_bundles_delivered_total",
    "linklab_port_digipeated_frames_total",
    "linklab_links_srej_sent_total",
    "linklab_links_srej_received_total",
    "linklab_link_srej_sent_total",
    "linklab_link_srej_received_total",
    "linklab_links_late_frames_total",
    "linklab_link_late_frames_total",
    "linklab_tun_datagrams_from_kernel_total",
    "linklab_tun_datagrams_to_kernel_total",
    "linklab_tun_datagrams_dropped_total",
];

fn links(report: &Value) -> &Vec<Value> {
    report["links"].as_array().unwrap()
}

fn counter(link: &Value, name: &str) -> u64 {
    link["counters"][name].as_u64().unwrap()
}

/// Information octets through the station's two links: (received on
/// the drop's, sent on the AGWPE one).
fn octets(report: &Value) -> (u64, u64) {
    let find = |remote: &str, name: &str| {
        links(report)
            .iter()
            .find(|l| l["remote"] == remote)
            .map_or(0, |l| counter(l, name))
    };
    (
        find("N0CALL-7", "i_octets_received"),
        find("N0CALL-8", "i_octets_sent"),
    )
}

fn metrics(port: u16) -> String {
    let answer = get(port, "/metrics");
    assert_eq!(answer.status, 200, "{}", answer.body);
    let kind = header(&answer.headers, "content-type");
    assert!(kind.starts_with("application/openmetrics-text"), "{kind}");
    assert!(answer.body.ends_with("# EOF\n"), "{}", answer.body);
    answer.body
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> &'a str {
    headers
        .iter()
        .find(|(k, _)| k == name)
        .map_or("", |(_, v)| v.as_str())
}

fn port_sample(metrics: &str, name: &str) -> f64 {
    sample(metrics, name, "port=\"1\"").unwrap_or_else(|| panic!("no {name} in\n{metrics}"))
}

/// Whether the server closed `stream` (end of stream or reset) within
/// `limit`, without sending a byte.
fn closed_unanswered(stream: &mut TcpStream, limit: Duration) -> bool {
    stream.set_read_timeout(Some(limit)).unwrap();
    let mut buf = [0u8; 64];
    match stream.read(&mut buf) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => matches!(
            e.kind(),
            ErrorKind::ConnectionReset | ErrorKind::ConnectionAborted | ErrorKind::BrokenPipe
        ),
    }
}

/// Unknown paths, other methods, a head too large and one too slow.
fn bad_requests(port: u16) {
    let answer = get(port, "/nothing-here");
    assert_eq!(answer.status, 404, "{}", answer.body);
    let answer = get(port, "/../../etc/passwd");
    assert_eq!(answer.status, 404);
    let post = b"POST /status.json HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}";
    let answer = exchange(port, post).unwrap();
    assert_eq!(answer.status, 405);
    assert_eq!(header(&answer.headers, "allow"), "GET, HEAD");
    let answer = exchange(
        port,
        b"HEAD /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    )
    .unwrap();
    assert_eq!((answer.status, answer.body.as_str()), (200, ""));

    // 40 KiB of headers: 431 and the connection closed.
    let mut huge = String::from("GET / HTTP/1.1\r\nHost: x\r\n");
    for i in 0..400 {
        huge.push_str(&format!("X-Filler-{i}: {}\r\n", "a".repeat(90)));
    }
    huge.push_str("\r\n");
    match exchange(port, huge.as_bytes()) {
        Ok(answer) => assert_eq!(answer.status, 431, "{}", answer.body),
        // The server may close before taking it all.
        Err(e) => assert!(
            matches!(e.kind(), ErrorKind::ConnectionReset | ErrorKind::BrokenPipe),
            "{e}"
        ),
    }

    // Half a head, then nothing: dropped after the head timeout (5 s).
    let mut slow = TcpStream::connect(("127.0.0.1", port)).unwrap();
    slow.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n").unwrap();
    let mut rest = Vec::new();
    slow.set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    // hyper answers 408 to a head that timed out, or just closes.
    let read = slow.read_to_end(&mut rest);
    let text = String::from_utf8_lossy(&rest);
    assert!(
        read.is_err() || text.is_empty() || text.starts_with("HTTP/1.1 408"),
        "a slow head was answered: {text}"
    );
    assert!(
        !text.contains("linklab station"),
        "a slow head got the page"
    );
}

/// Opens [`FLOOD`] connections at once and sends nothing: past the cap
/// they are closed at once, and a request made while the flood holds the
/// cap is not served; then every one of them is closed by the server
/// (the head timeout) within a bound.
fn flood(port: u16) {
    let mut streams: Vec<TcpStream> = (0..FLOOD)
        .map(|_| TcpStream::connect(("127.0.0.1", port)).unwrap())
        .collect();
    // The cap is full for the head timeout (5 s) from now: a request
    // now is closed unanswered.
    let mut late = TcpStream::connect(("127.0.0.1", port)).unwrap();
    late.write_all(b"GET /status.json HTTP/1.1\r\nHost: x\r\n\r\n")
        .ok();
    assert!(
        closed_unanswered(&mut late, Duration::from_secs(30)),
        "a request past the cap was served"
    );
    let end = Instant::now() + Duration::from_secs(60);
    let mut closed = 0;
    for s in &mut streams {
        let left = end
            .saturating_duration_since(Instant::now())
            .max(Duration::from_millis(1));
        closed += usize::from(closed_unanswered(s, left));
    }
    assert_eq!(closed, FLOOD, "connections the server did not close");
}

/// interop/metrics_check.sh on the samples, if its virtualenv can be
/// made.
fn parse_with_prometheus_client(dir: &Path, samples: &[&str]) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for (i, text) in samples.iter().enumerate() {
        let file = dir.join(format!("metrics-{i}.txt"));
        std::fs::write(&file, text).unwrap();
        files.push(file);
    }
    let out = Command::new(root.join("interop/metrics_check.sh"))
        .arg(root.join("docs/station.md"))
        .arg(STILL.join(","))
        .args(&files)
        .output()
        .unwrap();
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    match out.status.code() {
        Some(0) => println!("{report}"),
        Some(2) => println!("SKIPPED the prometheus-client parse: {report}"),
        _ => panic!("/metrics against docs/station.md:\n{report}"),
    }
}

#[test]
fn status_and_metrics_follow_two_transfers_and_bad_clients_do_not_touch_them() {
    let dir = tempfile::tempdir().unwrap();
    let ch = lossy_channel("6e-5");
    let station = station(dir.path(), &ch);
    let port = station.status.expect("the station logs its status page");

    let page = get(port, "/");
    assert_eq!(page.status, 200);
    assert!(header(&page.headers, "content-type").starts_with("text/html"));
    assert!(page.body.contains("<title>linklab station</title>"));
    assert!(header(&page.headers, "content-security-policy").contains("default-src 'self'"));
    for path in ["/page.js", "/page.css"] {
        assert_eq!(get(port, path).status, 200, "{path}");
    }
    let before = status_until(port, "the port up", |r| r["ports"][0]["up"] == true);
    assert!(links(&before).is_empty());
    let m0 = metrics(port);

    let transfers = Transfers::start(dir.path(), &ch, &station, LEN);
    let during = status_until(port, "both links a quarter through", |r| {
        let (inward, outward) = octets(r);
        inward >= (LEN / 4) as u64 && outward >= (LEN / 4) as u64
    });
    let m1 = metrics(port);
    assert!(
        port_sample(&m1, "linklab_links_received_bytes_total")
            > port_sample(&m0, "linklab_links_received_bytes_total")
    );
    assert!(
        port_sample(&m1, "linklab_port_channel_busy_seconds_total")
            > port_sample(&m0, "linklab_port_channel_busy_seconds_total")
    );
    assert!(
        sample(
            &m1,
            "linklab_link_received_bytes_total",
            "port=\"1\",local=\"N0CALL-5\",remote=\"N0CALL-7\""
        )
        .is_some_and(|v| v > 0.0),
        "{m1}"
    );

    bad_requests(port);
    let (inward, outward) = octets(&status(&station.control));
    flood(port);
    // The links moved on through the flood (read from the control
    // socket, which the flood does not touch).
    let end = Instant::now() + SHOW_LIMIT;
    loop {
        let now = status(&station.control);
        let (i, o) = octets(&now);
        let done = links(&now).is_empty();
        if done || (i > inward && o > outward) {
            break;
        }
        assert!(
            Instant::now() < end,
            "the links stood still after the flood: {now:#}"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    // Served again once the flood has gone; then samples every half
    // second until both links have ended, so that each per-link counter
    // is seen as it last was.
    let m2 = metrics(port);
    let mut samples = vec![m0.clone(), m1.clone(), m2.clone()];
    let end = Instant::now() + TRANSFER_LIMIT;
    while !links(&status(&station.control)).is_empty() {
        assert!(Instant::now() < end, "the links did not end");
        samples.push(metrics(port));
        std::thread::sleep(Duration::from_millis(500));
    }
    transfers.finish_byte_exact(&station);
    // Both links have ended and been forgotten; the port's totals keep
    // what they did, their final state changes included (the inward
    // link: connected, disconnected; the outward: awaiting connection,
    // connected, awaiting release, disconnected).
    let after = status_until(port, "both transfers counted whole", |r| {
        let total = &r["ports"][0]["air"]["links"];
        links(r).is_empty()
            && total["i_octets_received"].as_u64() >= Some(LEN as u64)
            && total["i_octets_sent"].as_u64() >= Some(LEN as u64)
            && total["state_changes"].as_u64() >= Some(6)
    });
    let m3 = metrics(port);

    // What the page draws is in the report.
    let p = &after["ports"][0];
    let heard: Vec<&str> = p["heard"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        heard.contains(&"N0CALL-7") && heard.contains(&"N0CALL-8"),
        "{heard:?}"
    );
    let monitor = p["air"]["monitor"].as_array().unwrap();
    assert!(
        monitor.iter().any(|l| l["sent"] == true) && monitor.iter().any(|l| l["sent"] == false)
    );
    assert!(
        monitor
            .iter()
            .all(|l| l["text"].as_str().unwrap().contains(">N0CALL")),
        "{monitor:?}"
    );
    let shares = p["air"]["busy_share"].as_array().unwrap();
    assert!((1..=60).contains(&shares.len()), "{shares:?}");
    assert!(shares.iter().any(|s| s.as_f64().unwrap() > 0.0));
    assert_eq!(p["air"]["bit_rate"], 19200);
    // Losses on the channel: frames sent again, REJ sent on the inward
    // link; counted per link during the transfer.
    let link_during = links(&during)
        .iter()
        .find(|l| l["remote"] == "N0CALL-7")
        .unwrap();
    assert!(counter(link_during, "state_changes") >= 1);
    for (name, m) in [("m1", &m1), ("m2", &m2), ("m3", &m3)] {
        assert!(m.contains("linklab_port_up{port=\"1\"} 1"), "{name}: {m}");
    }
    let total = |m: &str, n: &str| port_sample(m, n);
    for n in [
        "linklab_port_frames_sent_total",
        "linklab_port_frames_received_total",
        "linklab_port_sent_bytes_total",
        "linklab_port_received_bytes_total",
        "linklab_links_i_frames_sent_total",
        "linklab_links_i_frames_received_total",
    ] {
        assert!(
            total(&m3, n) > total(&m1, n) && total(&m1, n) > total(&m0, n),
            "{n}"
        );
    }
    samples.push(m3);
    let samples: Vec<&str> = samples.iter().map(String::as_str).collect();
    parse_with_prometheus_client(dir.path(), &samples);
    let (code, log) = station.stop();
    assert!(code.success(), "{log}");
}
