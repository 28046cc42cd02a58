//! What the status-page tests share: a station with `[status]` on a
//! lossy `linklab channel`, two transfers through it at once (a file
//! into its drop from the channel's station 1, a file from an AGWPE
//! program on the station to `linklab listen` on station 2), and a
//! small HTTP/1.1 client for loopback.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::channel::Channel;
use super::station::Station;
use super::{finish_within, linklab, Running};

/// The channel's and the port's bit rate.
pub const BIT_RATE: &str = "19200";

/// How long a test waits for the page or the metrics to show something.
pub const SHOW_LIMIT: Duration = Duration::from_secs(90);

/// Three stations at [`BIT_RATE`], short key-up times, and bit errors
/// at rate `ber` (seeded): at 6e-5 about one I frame in eight is lost,
/// and REJ, retries and T1 expiries happen in every transfer.
pub fn lossy_channel(ber: &str) -> Channel {
    Channel::start(&[
        "--stations",
        "3",
        "--base-port",
        "0",
        "--bitrate",
        BIT_RATE,
        "--txdelay-ms",
        "20",
        "--txtail-ms",
        "10",
        "--slot-ms",
        "10",
        "--ber",
        ber,
        "--seed",
        "34",
    ])
}

/// A station on the channel's station 0 with the status page and the
/// AGWPE server on free loopback ports and a file drop, N0CALL-5, into
/// `dir/drop`.
pub fn station(dir: &Path, ch: &Channel) -> Station {
    let drop_dir = dir.join("drop");
    std::fs::create_dir_all(&drop_dir).unwrap();
    let config = format!(
        r#"
[station]
callsign = "N0CALL"
control = "{sock}"

[status]
listen = "127.0.0.1:0"

[agw]
listen = "127.0.0.1:0"

[[port]]
name = "vhf"
kiss = "{kiss}"
callsigns = ["N0CALL-1"]
bitrate = {BIT_RATE}
txdelay-ms = 20
txtail-ms = 10
slot-ms = 10
t1-ms = 1500

[[service]]
callsign = "N0CALL-5"
builtin = "drop"
directory = "{drop}"
"#,
        sock = dir.join("station.sock").display(),
        kiss = ch.kiss(0),
        drop = drop_dir.display(),
    );
    Station::start(dir, &config)
}

/// How long a transfer may take.
pub const TRANSFER_LIMIT: Duration = Duration::from_secs(240);

/// The two transfers under way.
pub struct Transfers {
    inward: Running,
    outward: Running,
    listener: Running,
    dir: PathBuf,
    data: [Vec<u8>; 2],
}

impl Transfers {
    /// Starts both: `len` octets each way.
    pub fn start(dir: &Path, ch: &Channel, station: &Station, len: usize) -> Transfers {
        let data = [pattern(len, 1), pattern(len, 2)];
        let inward_file = dir.join("inward.bin");
        let outward_file = dir.join("outward.bin");
        std::fs::write(&inward_file, &data[0]).unwrap();
        std::fs::write(&outward_file, &data[1]).unwrap();
        let listener = linklab(&[
            "listen",
            "--kiss",
            &ch.kiss(2),
            "--mycall",
            "N0CALL-8",
            "--once",
            "--out",
            dir.join("got-outward.bin").to_str().unwrap(),
        ]);
        let inward = linklab(&[
            "send",
            "--kiss",
            &ch.kiss(1),
            "--mycall",
            "N0CALL-7",
            "--to",
            "N0CALL-5",
            "--t1-ms",
            "1500",
            inward_file.to_str().unwrap(),
        ]);
        let outward = linklab(&[
            "send",
            "--station",
            &station.agw_address(),
            "--mycall",
            "N0CALL-11",
            "--to",
            "N0CALL-8",
            outward_file.to_str().unwrap(),
        ]);
        Transfers {
            inward,
            outward,
            listener,
            dir: dir.to_path_buf(),
            data,
        }
    }

    /// Waits for both to end and checks that each file arrived whole.
    pub fn finish_byte_exact(self, station: &Station) {
        for (run, what) in [
            (self.inward, "send into the drop"),
            (self.outward, "send through AGWPE"),
            (self.listener, "listen"),
        ] {
            let out = finish_within(run, what, TRANSFER_LIMIT);
            assert!(
                out.status.success(),
                "{what}: {}\n{}\nthe station's log:\n{}",
                super::text(&out.stdout),
                super::text(&out.stderr),
                station.log()
            );
        }
        station.wait_for("the drop stored", |l| l.contains(": stored "));
        let stored: Vec<PathBuf> = std::fs::read_dir(self.dir.join("drop"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_none_or(|e| e != "partial"))
            .collect();
        assert_eq!(stored.len(), 1, "{stored:?}");
        assert!(
            std::fs::read(&stored[0]).unwrap() == self.data[0],
            "the drop's file differs"
        );
        let got = std::fs::read(self.dir.join("got-outward.bin")).unwrap();
        assert!(got == self.data[1], "the file through AGWPE differs");
    }
}

/// A byte pattern of `len` octets.
pub fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(29).wrapping_add(seed))
        .collect()
}

/// An HTTP answer: status code, headers (lower-case names), body.
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

/// Sends `request` (a whole HTTP/1.1 request) to 127.0.0.1:`port` and
/// reads the answer: its Content-Length octets of body if it gives one
/// (chromedriver keeps the connection), else until the server closes
/// (the request should say `Connection: close`).
pub fn exchange(port: u16, request: &[u8]) -> std::io::Result<Answer> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    stream.write_all(request)?;
    let mut raw = Vec::new();
    let mut buf = [0u8; 8192];
    let split = |raw: &[u8]| raw.windows(4).position(|w| w == b"\r\n\r\n");
    let head_end = loop {
        if let Some(at) = split(&raw) {
            break Some(at);
        }
        match stream.read(&mut buf)? {
            0 => break None,
            n => raw.extend_from_slice(&buf[..n]),
        }
    };
    let head = String::from_utf8_lossy(&raw[..head_end.unwrap_or(raw.len())]).into_owned();
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let mut body = head_end.map_or_else(Vec::new, |at| raw[at + 4..].to_vec());
    let length = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse::<usize>().ok());
    match length {
        Some(length) => {
            while body.len() < length {
                match stream.read(&mut buf)? {
                    0 => break,
                    n => body.extend_from_slice(&buf[..n]),
                }
            }
        }
        None if head_end.is_some() => {
            stream.read_to_end(&mut body)?;
        }
        None => {}
    }
    Ok(Answer {
        status,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}

/// GET `path`.
pub fn get(port: u16, path: &str) -> Answer {
    let request = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    exchange(port, request.as_bytes()).unwrap()
}

/// The station's status report as JSON, once it has one.
pub fn status_json(port: u16) -> serde_json::Value {
    let answer = get(port, "/status.json");
    assert_eq!(answer.status, 200, "{}", answer.body);
    serde_json::from_str(&answer.body).unwrap()
}

/// Asks for `/status.json` until `done` holds for it (the station
/// publishes a new report every second), at most [`SHOW_LIMIT`].
pub fn status_until(
    port: u16,
    what: &str,
    done: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    let end = Instant::now() + SHOW_LIMIT;
    loop {
        let answer = get(port, "/status.json");
        // 503 until the station's first report.
        if answer.status == 503 {
            assert!(Instant::now() < end, "no report yet: {}", answer.body);
            std::thread::sleep(Duration::from_millis(100));
            continue;
        }
        assert_eq!(answer.status, 200, "{}", answer.body);
        let report: serde_json::Value = serde_json::from_str(&answer.body).unwrap();
        if done(&report) {
            return report;
        }
        assert!(
            Instant::now() < end,
            "no report with {what}; the last:\n{report:#}"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// The value of the sample `name{labels}` (labels as written, e.g.
/// `port="1"`) in OpenMetrics text, if there.
pub fn sample(metrics: &str, name: &str, labels: &str) -> Option<f64> {
    let want = if labels.is_empty() {
        format!("{name} ")
    } else {
        format!("{name}{{{labels}}} ")
    };
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(&want))
        .and_then(|v| v.trim().parse().ok())
}
