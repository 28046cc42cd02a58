//! A running `linklab` read line by line as it prints, so that a test
//! waits on what it says rather than on a clock.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use super::LIMIT;

/// A running `linklab` whose standard output and error are read line by
/// line as they come, so that a test can wait for a line; its standard
/// input stays open for typing.
pub struct Live {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    /// Every line so far (both streams), for failure messages.
    seen: Vec<String>,
}

impl Live {
    pub fn start(args: &[&str]) -> Live {
        Live::spawn(Command::new(env!("CARGO_BIN_EXE_linklab")).args(args))
    }

    pub fn spawn(command: &mut Command) -> Live {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, lines) = mpsc::channel();
        let pipes: [Box<dyn Read + Send>; 2] = [
            Box::new(child.stdout.take().unwrap()),
            Box::new(child.stderr.take().unwrap()),
        ];
        for pipe in pipes {
            let tx = tx.clone();
            thread::spawn(move || {
                let mut reader = BufReader::new(pipe);
                let mut line = Vec::new();
                while reader.read_until(b'\n', &mut line).unwrap_or(0) > 0 {
                    tx.send(String::from_utf8_lossy(&line).into_owned()).ok();
                    line.clear();
                }
            });
        }
        Live {
            stdin: child.stdin.take(),
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// Waits (bounded) for a line that contains `part`; returns it.
    pub fn wait_for(&mut self, part: &str) -> String {
        if let Some(line) = self.seen.iter().find(|l| l.contains(part)) {
            return line.clone();
        }
        let end = Instant::now() + LIMIT;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if line.contains(part) {
                        return line;
                    }
                }
                Err(_) => panic!("never saw {part:?}; output so far:\n{}", self.seen.concat()),
            }
        }
    }

    pub fn type_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(format!("{line}\n").as_bytes()).unwrap();
        stdin.flush().unwrap();
    }

    pub fn signal(&self, name: &str) {
        let pid = self.child.id().to_string();
        let status = Command::new("kill")
            .args([&format!("-{name}"), &pid])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Waits (bounded) for the exit; the status and everything printed.
    pub fn exit(self) -> (ExitStatus, String) {
        self.exit_within(LIMIT)
    }

    /// [`Live::exit`] with another bound.
    pub fn exit_within(mut self, limit: Duration) -> (ExitStatus, String) {
        let end = Instant::now() + limit;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > end {
                self.child.kill().ok();
                self.child.wait().ok();
                panic!("still running; killed. Output:\n{}", self.seen.concat());
            }
            thread::sleep(Duration::from_millis(20));
        };
        // The readers end with the pipes.
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(5)) {
            self.seen.push(line);
        }
        (status, self.seen.concat())
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        self.child.kill().ok();
        self.child.wait().ok();
    }
}
