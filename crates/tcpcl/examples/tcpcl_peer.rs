//! Exchanges bundles with a running dtn7-rs `dtnd` over TCPCLv4: the
//! session engine of this crate, driven by a blocking TCP socket.
//!
//! ```sh
//! cargo run -p linklab-tcpcl --example tcpcl_peer -- \
//!     --tcpcl 127.0.0.1:4556 --http 127.0.0.1:3000 --dtnd-node dtn://node1/
//! ```
//!
//! dtnd must run with `-C tcp:port=4556 -e incoming -r epidemic
//! --generate-status-reports`. The peer opens a session as
//! `dtn://linklab/`, then:
//!
//! 1. sends a bundle (built with hardy-bpv7, delivery and reception
//!    reports requested, in segments of 1000 octets) to
//!    `dtn://node1/incoming`, and fetches it back from dtnd's HTTP API:
//!    the octets must be the same;
//! 2. waits for dtnd's status reports on it, which come back over the
//!    session;
//! 3. has dtnd create a bundle for `dtn://linklab/rx` (`POST /send`) and
//!    send one built here (`POST /insert`, with dtnd's registered endpoint
//!    as source, as dtnd requires): the first's payload and every block of
//!    the second must arrive unchanged, the second with dtnd's Previous
//!    Node block added;
//! 4. ends the session with SESS_TERM and expects dtnd's reply.
//!
//! It exits 0 when every check holds and prints what differs otherwise.

use linklab_core::{Engine, Instant};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hardy_bpv7::builder::Builder;
use hardy_bpv7::bundle::{Flags, Id, ParsedBundle};
use hardy_bpv7::creation_timestamp::CreationTimestamp;
use hardy_bpv7::dtn_time::DtnTime;
use hardy_bpv7::eid::Eid;
use hardy_bpv7::status_report::AdministrativeRecord;
use hardy_cbor::decode::FromCbor;
use linklab_tcpcl::{Config, Event, Role, SessTermReason, Session};

/// One TCPCL session on a blocking socket, with the session's timers.
struct Driver {
    stream: TcpStream,
    session: Session,
    origin: std::time::Instant,
    eof: bool,
}

impl Driver {
    fn now(&self) -> Instant {
        Instant::ZERO + self.origin.elapsed()
    }

    fn flush(&mut self) -> Result<(), String> {
        let now = self.now();
        while let Some(octets) = self.session.poll_transmit(now) {
            self.stream
                .write_all(&octets)
                .map_err(|e| format!("TCP write: {e}"))?;
        }
        Ok(())
    }

    /// Runs the session until it has an event or `wait` has passed.
    fn next_event(&mut self, wait: Duration) -> Result<Option<Event>, String> {
        let until = std::time::Instant::now() + wait;
        loop {
            self.flush()?;
            if let Some(event) = self.session.poll_event() {
                return Ok(Some(event));
            }
            let now = std::time::Instant::now();
            if now >= until || self.session.is_closed() || self.eof {
                return Ok(None);
            }
            let mut timeout = until - now;
            if let Some(at) = self.session.poll_timeout() {
                let due = at - self.now();
                timeout = timeout.min(due);
            }
            self.stream
                .set_read_timeout(Some(timeout.max(Duration::from_millis(1))))
                .map_err(|e| e.to_string())?;
            let mut buf = [0u8; 65536];
            match self.stream.read(&mut buf) {
                Ok(0) => {
                    self.eof = true;
                    let now = self.now();
                    self.session.handle_eof(now);
                }
                Ok(n) => {
                    let now = self.now();
                    self.session.handle_input(now, &buf[..n]);
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(e) => return Err(format!("TCP read: {e}")),
            }
            let now = self.now();
            self.session.handle_timeout(now);
        }
    }

    /// Runs the session for `wait`, keeping every event.
    fn pump(&mut self, wait: Duration, log: &mut Vec<Event>) -> Result<(), String> {
        let until = std::time::Instant::now() + wait;
        while let Some(left) = until.checked_duration_since(std::time::Instant::now()) {
            match self.next_event(left)? {
                Some(event) => {
                    println!("  event: {}", describe(&event));
                    log.push(event);
                }
                None => break,
            }
        }
        Ok(())
    }

    /// Runs the session until `find` picks an event out of the log.
    fn wait_for<T>(
        &mut self,
        what: &str,
        log: &mut Vec<Event>,
        mut find: impl FnMut(&[Event]) -> Option<T>,
    ) -> Result<T, String> {
        let until = std::time::Instant::now() + Duration::from_secs(15);
        loop {
            if let Some(found) = find(log) {
                return Ok(found);
            }
            if std::time::Instant::now() >= until || self.session.is_closed() {
                return Err(format!("timed out waiting for {what}"));
            }
            self.pump(Duration::from_millis(100), log)?;
        }
    }
}

fn describe(event: &Event) -> String {
    match event {
        Event::TransferReceived { id, data } => {
            format!("TransferReceived {{ id: {id}, {} octets }}", data.len())
        }
        Event::SessionTerminated(t) => format!("SessionTerminated: {t}"),
        other => format!("{other:?}"),
    }
}

/// A minimal HTTP/1.1 exchange with dtnd's web port; the body if 200.
fn http(addr: &str, method: &str, path: &str, body: &[u8]) -> Result<Vec<u8>, String> {
    let mut stream = TcpStream::connect(addr).map_err(|e| format!("HTTP {addr}: {e}"))?;
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .map_err(|e| e.to_string())?;
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Content-Type: application/octet-stream\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream
        .write_all(head.as_bytes())
        .and_then(|_| stream.write_all(body))
        .map_err(|e| format!("HTTP write: {e}"))?;
    let mut response = Vec::new();
    stream
        .read_to_end(&mut response)
        .map_err(|e| format!("HTTP read: {e}"))?;
    let split = response
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("HTTP response without a header end")?;
    let status = String::from_utf8_lossy(&response[..split]).to_string();
    if !status.starts_with("HTTP/1.1 200") {
        return Err(format!(
            "{method} {path}: {}",
            status.lines().next().unwrap_or("")
        ));
    }
    let body = response[split + 4..].to_vec();
    if status
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        return Ok(dechunk(&body));
    }
    Ok(body)
}

fn dechunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(eol) = body.windows(2).position(|w| w == b"\r\n") {
        let size =
            usize::from_str_radix(String::from_utf8_lossy(&body[..eol]).trim(), 16).unwrap_or(0);
        if size == 0 || body.len() < eol + 2 + size {
            break;
        }
        out.extend(&body[eol + 2..eol + 2 + size]);
        body = &body[eol + 4 + size..];
    }
    out
}

fn eid(text: &str) -> Eid {
    text.parse().expect("valid EID")
}

fn dtn_now() -> DtnTime {
    let unix_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .as_millis() as u64;
    DtnTime::new(unix_ms - 946_684_800_000)
}

/// A bundle with the given payload, as octets, and its ID.
fn bundle(source: &str, destination: &str, payload: &[u8], seq: u64) -> (Id, Vec<u8>) {
    let (bundle, octets) = Builder::new(eid(source), eid(destination))
        .with_report_to(eid("dtn://linklab/reports"))
        .with_flags(Flags {
            receipt_report_requested: true,
            delivery_report_requested: true,
            report_status_time: true,
            ..Flags::default()
        })
        .with_lifetime(Duration::from_secs(3600))
        .with_payload(payload.into())
        .build(CreationTimestamp::from_parts(Some(dtn_now()), seq))
        .expect("bundle builds");
    (bundle.id, octets.into())
}

/// The payload of a bundle's octets, with its parsed form.
fn parse(octets: &[u8]) -> Result<(hardy_bpv7::bundle::Bundle, Vec<u8>), String> {
    let parsed = ParsedBundle::parse(octets, hardy_bpv7::bpsec::no_keys)
        .map_err(|e| format!("not a BPv7 bundle: {e}"))?;
    let payload = parsed
        .bundle
        .block_data(1, octets, &hardy_bpv7::bpsec::key::KeySet::EMPTY)
        .map_err(|e| format!("no payload: {e}"))?
        .as_ref()
        .to_vec();
    Ok((parsed.bundle, payload))
}

fn pattern(len: usize, salt: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(7).wrapping_add(salt))
        .collect()
}

fn run(tcpcl: &str, web: &str, dtnd_node: &str) -> Result<(), String> {
    let stream = TcpStream::connect(tcpcl).map_err(|e| format!("connect {tcpcl}: {e}"))?;
    stream.set_nodelay(true).ok();
    let mut config = Config::new("dtn://linklab/");
    config.keepalive_interval = 30;
    config.max_segment = 1000;
    let session = Session::new(Role::Active, config, Instant::ZERO).map_err(|e| e.to_string())?;
    let mut driver = Driver {
        stream,
        session,
        origin: std::time::Instant::now(),
        eof: false,
    };
    let mut log = Vec::new();

    println!("--- session establishment");
    let params = driver.wait_for("SESS_INIT", &mut log, |log| {
        log.iter().find_map(|e| match e {
            Event::SessionEstablished(p) => Some(p.clone()),
            _ => None,
        })
    })?;
    if params.peer_node_id.trim_end_matches('/') != dtnd_node.trim_end_matches('/') {
        return Err(format!("dtnd calls itself {}", params.peer_node_id));
    }

    println!("--- linklab -> dtnd: one bundle in segments of 1000 octets");
    let destination = format!("{}/incoming", dtnd_node.trim_end_matches('/'));
    let (sent_id, sent) = bundle("dtn://linklab/tx", &destination, &pattern(2500, 1), 1);
    let transfer = driver
        .session
        .send_transfer(driver.now(), &sent)
        .map_err(|e| e.to_string())?;
    driver.wait_for("XFER_ACK of the whole bundle", &mut log, |log| {
        log.contains(&Event::TransferSucceeded { id: transfer })
            .then_some(())
    })?;
    let mut fetched = Vec::new();
    for _ in 0..50 {
        fetched = http(web, "GET", "/endpoint?incoming", &[])?;
        if fetched != b"Nothing to receive" {
            break;
        }
        driver.pump(Duration::from_millis(100), &mut log)?;
    }
    if fetched != sent {
        return Err(format!(
            "dtnd delivered {} octets, not the {} sent",
            fetched.len(),
            sent.len()
        ));
    }
    println!(
        "dtnd delivered the bundle byte-exact ({} octets)",
        sent.len()
    );

    println!("--- dtnd -> linklab: status reports on it");
    let reports = driver.wait_for("a delivery report", &mut log, |log| {
        let mut seen = Vec::new();
        for event in log {
            let Event::TransferReceived { data, .. } = event else {
                continue;
            };
            let Ok((bundle, payload)) = parse(data) else {
                continue;
            };
            if !bundle.flags.is_admin_record {
                continue;
            }
            if let Ok((AdministrativeRecord::BundleStatusReport(report), _, _)) =
                AdministrativeRecord::from_cbor(&payload)
            {
                if report.bundle_id == sent_id {
                    seen.push(report);
                }
            }
        }
        seen.iter().any(|r| r.delivered.is_some()).then_some(seen)
    })?;
    for report in &reports {
        println!(
            "status report from {}: received {} delivered {} forwarded {} (reason {:?})",
            report.bundle_id.source,
            report.received.is_some(),
            report.delivered.is_some(),
            report.forwarded.is_some(),
            report.reason
        );
    }

    println!("--- dtnd -> linklab: a bundle dtnd creates");
    let created_payload = pattern(1800, 9);
    http(
        web,
        "POST",
        "/send?dst=dtn://linklab/rx&lifetime=1h",
        &created_payload,
    )?;
    let got = driver.wait_for("dtnd's bundle", &mut log, |log| {
        log.iter().find_map(|e| match e {
            Event::TransferReceived { data, .. } => parse(data)
                .ok()
                .filter(|(b, _)| b.destination == eid("dtn://linklab/rx"))
                .map(|(b, p)| (b, p, data.len())),
            _ => None,
        })
    })?;
    if got.1 != created_payload {
        return Err("the payload of dtnd's bundle differs from what was posted".into());
    }
    println!(
        "received dtnd's bundle from {} ({} octets): payload byte-exact",
        got.0.id.source, got.2
    );

    println!("--- dtnd -> linklab: a bundle built here, put into dtnd through POST /insert");
    // dtnd takes in through /insert only bundles from one of its own
    // registered endpoints.
    let (_, forwarded) = bundle(&destination, "dtn://linklab/rx2", &pattern(3000, 3), 2);
    http(web, "POST", "/insert", &forwarded)?;
    let got = driver.wait_for("the inserted bundle", &mut log, |log| {
        log.iter().find_map(|e| match e {
            Event::TransferReceived { data, .. } => parse(data)
                .ok()
                .filter(|(b, _)| b.destination == eid("dtn://linklab/rx2"))
                .map(|(b, _)| (b, data.clone())),
            _ => None,
        })
    })?;
    // Forwarding adds a Previous Node block (RFC 9171 section 4.4.1);
    // every block built here must arrive octet for octet.
    let (ours, _) = parse(&forwarded)?;
    for (number, block) in &ours.blocks {
        let theirs = got
            .0
            .blocks
            .get(number)
            .ok_or(format!("dtnd dropped block {number}"))?;
        if forwarded[block.extent.clone()] != got.1[theirs.extent.clone()] {
            return Err(format!(
                "dtnd changed block {number} of the inserted bundle"
            ));
        }
    }
    let added: Vec<_> = got
        .0
        .blocks
        .iter()
        .filter(|(n, _)| !ours.blocks.contains_key(*n))
        .map(|(n, b)| format!("block {n} ({:?})", b.block_type))
        .collect();
    println!(
        "received the inserted bundle: its {} blocks byte-exact, dtnd added {} (previous node {:?})",
        ours.blocks.len(),
        added.join(", "),
        got.0.previous_node.as_ref().map(|e| e.to_string())
    );
    if got.0.previous_node != Some(eid(dtnd_node)) || added.len() != 1 {
        return Err(format!(
            "dtnd added {added:?} rather than one Previous Node block"
        ));
    }

    println!("--- SESS_TERM");
    driver
        .session
        .terminate(driver.now(), SessTermReason::Unknown);
    let termination = driver.wait_for("the end of the session", &mut log, |log| {
        log.iter().find_map(|e| match e {
            Event::SessionTerminated(t) => Some(t.clone()),
            _ => None,
        })
    });
    driver.flush()?;
    let termination = termination?;
    if termination.received.is_none() {
        return Err(format!("dtnd did not answer SESS_TERM: {termination}"));
    }
    println!("session ended: {termination}");
    Ok(())
}

fn main() -> ExitCode {
    let mut tcpcl = "127.0.0.1:4556".to_string();
    let mut web = "127.0.0.1:3000".to_string();
    let mut dtnd_node = "dtn://node1/".to_string();
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next();
        match (flag.as_str(), value) {
            ("--tcpcl", Some(v)) => tcpcl = v,
            ("--http", Some(v)) => web = v,
            ("--dtnd-node", Some(v)) => dtnd_node = v,
            _ => {
                eprintln!("usage: tcpcl_peer [--tcpcl ADDR] [--http ADDR] [--dtnd-node EID]");
                return ExitCode::from(2);
            }
        }
    }
    match run(&tcpcl, &web, &dtnd_node) {
        Ok(()) => {
            println!("PASS: bundles both ways over TCPCLv4 with dtnd");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("FAIL: {e}");
            ExitCode::FAILURE
        }
    }
}
