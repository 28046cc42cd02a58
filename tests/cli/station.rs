//! A running `linklab station` for the tests: its file in a temporary
//! directory, its log lines as they come (so a test waits on a line, not
//! on a clock), its listening ports as it printed them, and signals.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// How long a test waits for a line of the station's log.
pub const LIMIT: Duration = Duration::from_secs(120);

type Lines = Arc<(Mutex<Vec<String>>, Condvar)>;

/// A running `linklab station`.
pub struct Station {
    child: Child,
    lines: Lines,
    /// Its configuration file.
    pub file: PathBuf,
    /// Its control socket.
    pub control: PathBuf,
    /// Its AGWPE port, if it has one.
    pub agw: Option<u16>,
    /// Its KISS server's port, if it has one.
    pub kiss: Option<u16>,
    /// Its status page's port, if it has one.
    pub status: Option<u16>,
}

impl Station {
    /// Writes `config` (which should listen on port 0 and put its control
    /// socket at `dir/station.sock`) to `dir/station.toml`, starts the
    /// station and waits until it is ready and port 1's TNC is up.
    pub fn start(dir: &Path, config: &str) -> Station {
        let file = dir.join("station.toml");
        std::fs::write(&file, config).unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_linklab"))
            .args(["station", "--config", file.to_str().unwrap()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let lines: Lines = Arc::new((Mutex::new(Vec::new()), Condvar::new()));
        let err = BufReader::new(child.stderr.take().unwrap());
        let sink = lines.clone();
        thread::spawn(move || {
            for line in err.lines().map_while(Result::ok) {
                let (list, ready) = &*sink;
                list.lock().unwrap().push(line);
                ready.notify_all();
            }
            // The end of the log, for waiters: an empty marker line.
            let (list, ready) = &*sink;
            list.lock().unwrap().push(String::new());
            ready.notify_all();
        });
        let mut station = Station {
            child,
            lines,
            file,
            control: dir.join("station.sock"),
            agw: None,
            kiss: None,
            status: None,
        };
        let port_of = |line: &str| -> u16 { line.rsplit(':').next().unwrap().parse().unwrap() };
        station.wait_for("ready", |l| l == "station: ready");
        let log = station.log();
        station.agw = log
            .lines()
            .find_map(|l| l.strip_prefix("station: AGWPE server on "))
            .map(port_of);
        station.kiss = log
            .lines()
            .find_map(|l| l.strip_prefix("station: KISS server on "))
            .map(port_of);
        station.status = log.lines().find_map(|l| {
            let rest = l.strip_prefix("station: status page on http://")?;
            rest.split('/').next()?.rsplit(':').next()?.parse().ok()
        });
        station.wait_for("port 1's TNC", |l| {
            l.starts_with("station: port 1: TNC ") && l.ends_with(" connected")
        });
        station
    }

    /// Waits (at most [`LIMIT`]) for a log line that `want` accepts, and
    /// returns it; fails with the log, saying `what` was awaited.
    pub fn wait_for(&self, what: &str, want: impl Fn(&str) -> bool) -> String {
        self.wait_for_from(0, what, want)
    }

    /// [`Station::wait_for`], looking only at lines from number `from`.
    pub fn wait_for_from(&self, from: usize, what: &str, want: impl Fn(&str) -> bool) -> String {
        let (list, ready) = &*self.lines;
        let end = Instant::now() + LIMIT;
        let mut lines = list.lock().unwrap();
        loop {
            if let Some(line) = lines.iter().skip(from).find(|l| want(l)) {
                return line.clone();
            }
            let now = Instant::now();
            let ended = lines.last().is_some_and(String::is_empty);
            if now >= end || ended {
                panic!(
                    "no log line for {what} ({}); the log:\n{}",
                    if ended {
                        "the station exited"
                    } else {
                        "timed out"
                    },
                    lines.join("\n")
                );
            }
            lines = ready.wait_timeout(lines, end - now).unwrap().0;
        }
    }

    /// Lines logged so far.
    pub fn line_count(&self) -> usize {
        self.lines.0.lock().unwrap().len()
    }

    /// The log so far.
    pub fn log(&self) -> String {
        self.lines.0.lock().unwrap().join("\n")
    }

    /// `tcp:127.0.0.1:PORT` of the AGWPE server.
    pub fn agw_address(&self) -> String {
        format!("127.0.0.1:{}", self.agw.expect("an [agw] section"))
    }

    /// Sends signal `name` (HUP, TERM, ...).
    pub fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .args([&format!("-{name}"), &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// SIGTERM, then its exit status and log once it has ended.
    pub fn stop(mut self) -> (ExitStatus, String) {
        self.signal("TERM");
        let end = Instant::now() + LIMIT;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(
                Instant::now() < end,
                "the station did not stop:\n{}",
                self.log()
            );
            thread::sleep(Duration::from_millis(20));
        };
        self.wait_for("the end of the log", str::is_empty);
        (status, self.log())
    }
}

impl Drop for Station {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `linklab status --json` of the station at `control`, parsed.
pub fn status(control: &Path) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_linklab"))
        .args(["status", "--json", "--control", control.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "linklab status failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}
