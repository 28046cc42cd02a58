//! The status page in a real browser: Debian's chromium, headless,
//! driven through chromedriver's WebDriver HTTP API (W3C WebDriver) on
//! loopback, with two transfers through the station on `linklab
//! channel`. The page must show the links and their counters rising,
//! fill the heard list and the monitor, and plot points of busy share,
//! all by itself (no reload). With `LINKLAB_SCREENSHOT=FILE` the test
//! saves a PNG of the page there (docs/img/status-page.png is one).
//! Without chromium or chromedriver it says so and passes.

mod cli;

use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use cli::web::{exchange, lossy_channel, station, Transfers, SHOW_LIMIT};
use serde_json::{json, Value};

const LEN: usize = 30_000;

/// The flags the browser runs with: no network of its own beyond the
/// page, nothing kept.
const FLAGS: &[&str] = &[
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1100,1900",
];

/// chromedriver on a free loopback port, stopped when dropped.
struct Driver {
    child: Child,
    port: u16,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Driver {
    fn start() -> Driver {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let driver = Driver { child, port };
        let end = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(status) = driver.try_call("GET", "/status", None) {
                if status["value"]["ready"] == true {
                    return driver;
                }
            }
            assert!(Instant::now() < end, "chromedriver did not get ready");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn try_call(&self, method: &str, path: &str, body: Option<&Value>) -> std::io::Result<Value> {
        let body = body.map(Value::to_string).unwrap_or_default();
        let request = format!(
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let answer = exchange(self.port, request.as_bytes())?;
        serde_json::from_str(&answer.body)
            .map_err(|e| std::io::Error::other(format!("{e}: {}", answer.body)))
    }

    fn call(&self, method: &str, path: &str, body: Option<&Value>) -> Value {
        let answer = self
            .try_call(method, path, body)
            .unwrap_or_else(|e| panic!("WebDriver {method} {path}: {e}"));
        assert!(
            answer["value"].get("error").is_none(),
            "WebDriver {method} {path}: {answer:#}"
        );
        answer["value"].clone()
    }
}

/// A browser session, ended when dropped.
struct Session<'a> {
    driver: &'a Driver,
    id: String,
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        let _ = self
            .driver
            .try_call("DELETE", &format!("/session/{}", self.id), None);
    }
}

impl Session<'_> {
    fn new<'a>(driver: &'a Driver, profile: &Path) -> Session<'a> {
        let mut args: Vec<String> = FLAGS.iter().map(ToString::to_string).collect();
        args.push(format!("--user-data-dir={}", profile.display()));
        let value = driver.call(
            "POST",
            "/session",
            Some(&json!({"capabilities": {"alwaysMatch": {
                "browserName": "chrome",
                "goog:chromeOptions": {"binary": chromium(), "args": args}
            }}})),
        );
        Session {
            driver,
            id: value["sessionId"].as_str().unwrap().to_string(),
        }
    }

    fn call(&self, method: &str, path: &str, body: Option<&Value>) -> Value {
        self.driver
            .call(method, &format!("/session/{}{path}", self.id), body)
    }

    fn go(&self, url: &str) {
        self.call("POST", "/url", Some(&json!({ "url": url })));
    }

    /// What the page shows, read by a script in it.
    fn shown(&self) -> Value {
        self.call(
            "POST",
            "/execute/sync",
            Some(&json!({"script": SHOWN, "args": []})),
        )
    }

    fn screenshot(&self) -> Vec<u8> {
        let text = self.call("GET", "/screenshot", None);
        base64(text.as_str().unwrap())
    }
}

/// The script that reads the page: the links' rows, the heard lists,
/// the busy plot's points, the monitor's lines.
const SHOWN: &str = r#"
const rows = [...document.querySelectorAll('#links tbody tr')].map((tr) => {
  const cells = [...tr.children].map((td) => td.textContent);
  return { remote: cells[2], state: cells[3],
           sent: Number(tr.querySelector('.octets-sent').textContent),
           received: Number(tr.querySelector('.octets-received').textContent) };
});
return {
  links: rows,
  heard: [...document.querySelectorAll('#heard li')].map((li) => li.textContent),
  points: document.querySelectorAll('svg.busy circle.point').length,
  monitor: document.querySelectorAll('#monitor pre span').length,
  summary: document.getElementById('summary').textContent,
};
"#;

/// The chromium binary Debian installs.
fn chromium() -> &'static str {
    "/usr/bin/chromium"
}

fn have_browser() -> bool {
    let runs = |program: &str| {
        Command::new(program)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    Path::new(chromium()).exists() && runs("chromedriver")
}

/// Standard base64 (RFC 4648, section 4) to octets.
fn base64(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut bits, mut count) = (0u32, 0);
    for v in text.bytes().filter_map(value) {
        bits = (bits << 6) | u32::from(v);
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push((bits >> count) as u8);
        }
    }
    out
}

/// Reads the page until `done` holds, at most [`SHOW_LIMIT`].
fn shown_until(session: &Session, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    let end = Instant::now() + SHOW_LIMIT;
    loop {
        let shown = session.shown();
        if done(&shown) {
            return shown;
        }
        assert!(
            Instant::now() < end,
            "the page never showed {what}: {shown:#}"
        );
        std::thread::sleep(Duration::from_millis(300));
    }
}

fn link<'a>(shown: &'a Value, remote: &str) -> Option<&'a Value> {
    shown["links"]
        .as_array()?
        .iter()
        .find(|l| l["remote"] == remote)
}

fn octets(shown: &Value, remote: &str, way: &str) -> u64 {
    link(shown, remote).map_or(0, |l| l[way].as_u64().unwrap_or(0))
}

#[test]
fn the_page_shows_the_links_counters_heard_list_and_busy_plot_in_chromium() {
    if !have_browser() {
        println!(
            "SKIPPED: chromium or chromedriver missing (apt-get install chromium chromium-driver)"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Few losses: the page is the subject here, not recovery.
    let ch = lossy_channel("1e-5");
    let station = station(dir.path(), &ch);
    let port = station.status.expect("the station logs its status page");
    let driver = Driver::start();
    let session = Session::new(&driver, &dir.path().join("profile"));
    session.go(&format!("http://127.0.0.1:{port}/"));
    shown_until(&session, "the station's summary", |s| {
        s["summary"].as_str().is_some_and(|t| t.starts_with("up "))
    });

    let transfers = Transfers::start(dir.path(), &ch, &station, LEN);
    let first = shown_until(&session, "both links moving", |s| {
        octets(s, "N0CALL-7", "received") > 0 && octets(s, "N0CALL-8", "sent") > 0
    });
    assert_eq!(link(&first, "N0CALL-7").unwrap()["state"], "Connected");
    // The page refreshes itself: the counters rise with no reload.
    let later = shown_until(&session, "the counters rising", |s| {
        octets(s, "N0CALL-7", "received") > octets(&first, "N0CALL-7", "received")
            && octets(s, "N0CALL-8", "sent") > octets(&first, "N0CALL-8", "sent")
    });
    let full = shown_until(
        &session,
        "the heard list, the monitor and busy points",
        |s| {
            let heard: Vec<&str> = s["heard"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(Value::as_str)
                .collect();
            heard.contains(&"N0CALL-7")
                && heard.contains(&"N0CALL-8")
                && s["points"].as_u64() > Some(0)
                && s["monitor"].as_u64() > Some(0)
        },
    );
    println!("the page showed: {later:#}\n{full:#}");
    if let Some(path) = std::env::var_os("LINKLAB_SCREENSHOT") {
        let png = session.screenshot();
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
        std::fs::write(&path, png).unwrap();
        println!("screenshot in {}", Path::new(&path).display());
    }
    drop(session);
    transfers.finish_byte_exact(&station);
    let (code, log) = station.stop();
    assert!(code.success(), "{log}");
}
