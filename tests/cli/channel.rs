//! A running `linklab channel` for the tests: its stations' ports and
//! pseudo-terminals as it printed them, SIGINT and its output.

use std::io::{BufRead, BufReader, Read};
use std::net::TcpStream;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a test waits for the channel or a frame.
pub const LIMIT: Duration = Duration::from_secs(30);

/// A running `linklab channel` and its stations' ports.
pub struct Channel {
    child: Child,
    stdout: BufReader<ChildStdout>,
    /// Each station's KISS TCP port.
    pub ports: Vec<u16>,
    /// Each station's pseudo-terminal, with `--pty`.
    pub ptys: Vec<String>,
}

impl Channel {
    /// Starts `linklab channel ARGS` and waits until it is ready.
    pub fn start(args: &[&str]) -> Channel {
        let mut child = Command::new(env!("CARGO_BIN_EXE_linklab"))
            .arg("channel")
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let (mut ports, mut ptys) = (Vec::new(), Vec::new());
        loop {
            let mut line = String::new();
            assert!(stdout.read_line(&mut line).unwrap() > 0, "channel exited");
            if line.starts_with("channel ready") {
                break;
            }
            // station s0: kiss tcp 127.0.0.1:8001[, pty /dev/pts/3]
            let rest = line.split("kiss tcp ").nth(1).unwrap().trim();
            let (addr, pty) = match rest.split_once(", pty ") {
                Some((a, p)) => (a, Some(p.to_string())),
                None => (rest, None),
            };
            ports.push(addr.rsplit(':').next().unwrap().parse().unwrap());
            ptys.extend(pty);
        }
        Channel {
            child,
            stdout,
            ports,
            ptys,
        }
    }

    /// A fast channel: `stations` stations at 38 400 bit/s with short
    /// key-up times (TXDELAY 20 ms, TXTAIL 10 ms, slot 10 ms), seeded.
    pub fn fast(stations: usize, seed: u64) -> Channel {
        Channel::fast_with(stations, seed, &[])
    }

    /// As [`Channel::fast`], with `extra` options (bit errors, a
    /// statistics file...).
    pub fn fast_with(stations: usize, seed: u64, extra: &[&str]) -> Channel {
        let (stations, seed) = (stations.to_string(), seed.to_string());
        let mut args = vec![
            "--stations",
            &stations,
            "--base-port",
            "0",
            "--bitrate",
            "38400",
            "--txdelay-ms",
            "20",
            "--txtail-ms",
            "10",
            "--slot-ms",
            "10",
            "--seed",
            &seed,
        ];
        args.extend_from_slice(extra);
        Channel::start(&args)
    }

    /// A client of `station`'s KISS port.
    pub fn connect(&self, station: usize) -> TcpStream {
        let s = TcpStream::connect(("127.0.0.1", self.ports[station])).unwrap();
        s.set_read_timeout(Some(LIMIT)).unwrap();
        s
    }

    /// SIGINT, then everything it printed to standard output.
    pub fn interrupt(mut self) -> (std::process::ExitStatus, String) {
        let pid = self.child.id().to_string();
        Command::new("kill").args(["-INT", &pid]).status().unwrap();
        let mut rest = String::new();
        self.stdout.read_to_string(&mut rest).unwrap();
        (wait_bounded(&mut self.child), rest)
    }
}

impl Drop for Channel {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn wait_bounded(child: &mut Child) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(start.elapsed() < LIMIT, "linklab channel did not exit");
        std::thread::sleep(Duration::from_millis(20));
    }
}

impl Channel {
    /// `tcp:127.0.0.1:PORT` of `station`, for `--kiss`.
    pub fn kiss(&self, station: usize) -> String {
        format!("tcp:127.0.0.1:{}", self.ports[station])
    }
}
