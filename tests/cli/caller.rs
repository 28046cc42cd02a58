//! `linklab connect` driven line by line, for the tests of programs that
//! answer calls.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// How long a caller's exchange may take at most.
pub const TRANSFER_LIMIT: Duration = Duration::from_secs(180);

/// A `linklab connect` whose standard input the test writes, line by
/// line, and whose output it reads as it comes.
pub struct Caller {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Caller {
    /// `linklab connect --kiss KISS --mycall MYCALL DEST`.
    pub fn kiss(kiss: &str, mycall: &str, dest: &str) -> Caller {
        Caller::start(&["--kiss", kiss, "--mycall", mycall, dest])
    }

    /// `linklab connect ARGS`.
    pub fn start(args: &[&str]) -> Caller {
        let mut child = Command::new(env!("CARGO_BIN_EXE_linklab"))
            .arg("connect")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, lines) = mpsc::channel();
        for pipe in [
            Box::new(child.stdout.take().unwrap()) as Box<dyn Read + Send>,
            Box::new(child.stderr.take().unwrap()),
        ] {
            let tx = tx.clone();
            thread::spawn(move || {
                for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                    if tx.send(line).is_err() {
                        return;
                    }
                }
            });
        }
        Caller {
            stdin: child.stdin.take(),
            child,
            lines,
            seen: Vec::new(),
        }
    }

    pub fn say(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// Waits for an output line containing `want`.
    pub fn expect(&mut self, want: &str) {
        let end = Instant::now() + TRANSFER_LIMIT;
        while !self.seen.iter().any(|l| l.contains(want)) {
            let left = end.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => self.seen.push(line),
                Err(_) => panic!("no line with {want:?}; seen:\n{}", self.seen.join("\n")),
            }
        }
    }

    /// Closes its input and waits for it to end.
    pub fn finish(mut self) -> Vec<String> {
        drop(self.stdin.take());
        let end = Instant::now() + TRANSFER_LIMIT;
        loop {
            if self.child.try_wait().unwrap().is_some() {
                break;
            }
            assert!(Instant::now() < end, "connect did not end");
            thread::sleep(Duration::from_millis(20));
        }
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(2)) {
            self.seen.push(line);
        }
        std::mem::take(&mut self.seen)
    }
}

impl Drop for Caller {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
