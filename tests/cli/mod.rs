//! What the command-line tests that run `linklab` over a KISS hub share:
//! the hub, a KISS reflector on 127.0.0.1 that relays every chunk of
//! bytes from one client to all the others, as a shared radio channel
//! with perfect reception would; and running `linklab` bounded in time.

// Each test crate that includes this module uses a different part of it.
#![allow(dead_code)]

pub mod agw;
pub mod caller;
pub mod channel;
pub mod live;
pub mod station;
pub mod web;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use linklab_wire::ax25::Frame;
use linklab_wire::control::Modulus;
use linklab_wire::kiss;

pub const LIMIT: Duration = Duration::from_secs(60);

/// The next modulo-8 AX.25 frame among what `decoder` holds: KISS frames
/// of other kinds, and data that does not decode as AX.25, are passed
/// over.
pub fn next_ax25_frame(decoder: &mut kiss::Decoder) -> Option<Frame> {
    decoder.find_map(|item| match item {
        Ok(kiss::Frame {
            command: kiss::Command::Data(octets),
            ..
        }) => Frame::decode(&octets, Modulus::Mod8).ok(),
        _ => None,
    })
}

/// A KISS reflector on an ephemeral port.
pub struct Hub {
    pub port: u16,
    clients: Arc<Mutex<Vec<TcpStream>>>,
}

impl Hub {
    pub fn start() -> Hub {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let clients: Arc<Mutex<Vec<TcpStream>>> = Arc::default();
        let all = clients.clone();
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let Ok(peer) = stream.peer_addr() else {
                    continue;
                };
                all.lock().unwrap().push(stream.try_clone().unwrap());
                let all = all.clone();
                thread::spawn(move || {
                    let mut buf = [0u8; 4096];
                    while let Ok(n) = stream.read(&mut buf) {
                        if n == 0 {
                            break;
                        }
                        let mut clients = all.lock().unwrap();
                        for other in clients.iter_mut() {
                            if other.peer_addr().ok() != Some(peer) {
                                other.write_all(&buf[..n]).ok();
                            }
                        }
                    }
                    all.lock()
                        .unwrap()
                        .retain(|c| c.peer_addr().ok() != Some(peer));
                });
            }
        });
        Hub { port, clients }
    }

    pub fn address(&self) -> String {
        format!("tcp:127.0.0.1:{}", self.port)
    }

    /// Waits until `n` clients are attached.
    pub fn wait_for_clients(&self, n: usize) {
        let end = Instant::now() + LIMIT;
        while self.clients.lock().unwrap().len() < n {
            assert!(Instant::now() < end, "hub: {n} clients never attached");
            thread::sleep(Duration::from_millis(20));
        }
    }
}

/// A running `linklab` whose output is read as it comes, so that a full
/// pipe never blocks it.
pub struct Running {
    pub child: Child,
    pub stdout: thread::JoinHandle<Vec<u8>>,
    pub stderr: thread::JoinHandle<Vec<u8>>,
}

pub fn linklab(args: &[&str]) -> Running {
    linklab_with_input(args, None)
}

/// `linklab listen --kiss KISS --mycall N0CALL-2 --once --out OUT`: the
/// station most tests send to, taking one connection into `out`.
pub fn listen_once(kiss: &str, out: &std::path::Path) -> Running {
    linklab(&[
        "listen",
        "--kiss",
        kiss,
        "--mycall",
        "N0CALL-2",
        "--once",
        "--out",
        out.to_str().unwrap(),
    ])
}

/// `linklab` with `input` on its standard input (then closed), or none.
pub fn linklab_with_input(args: &[&str], input: Option<&'static [u8]>) -> Running {
    spawn(
        Command::new(env!("CARGO_BIN_EXE_linklab")).args(args),
        input.map(<[u8]>::to_vec),
    )
}

/// `linklab` run in directory `dir`, as a user typing there would.
pub fn linklab_in(dir: &std::path::Path, args: &[&str], input: Option<Vec<u8>>) -> Running {
    spawn(
        Command::new(env!("CARGO_BIN_EXE_linklab"))
            .args(args)
            .current_dir(dir),
        input,
    )
}

fn spawn(command: &mut Command, input: Option<Vec<u8>>) -> Running {
    let mut child = command
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let (Some(bytes), Some(mut stdin)) = (input, child.stdin.take()) {
        thread::spawn(move || stdin.write_all(&bytes));
    }
    let out = child.stdout.take().unwrap();
    let err = child.stderr.take().unwrap();
    let read_all = |mut pipe: Box<dyn Read + Send>| {
        thread::spawn(move || {
            let mut bytes = Vec::new();
            pipe.read_to_end(&mut bytes).ok();
            bytes
        })
    };
    let stdout = read_all(Box::new(out));
    let stderr = read_all(Box::new(err));
    Running {
        child,
        stdout,
        stderr,
    }
}

/// Sends SIGINT to a running `linklab`.
pub fn interrupt(run: &Running) {
    let status = Command::new("kill")
        .args(["-INT", &run.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Waits for a run, killing it and failing if it takes over the limit.
pub fn finish(run: Running, what: &str) -> Output {
    finish_within(run, what, LIMIT)
}

/// [`finish`] with another limit, for the few runs that take longer.
pub fn finish_within(mut run: Running, what: &str, limit: Duration) -> Output {
    let end = Instant::now() + limit;
    let status = loop {
        if let Some(status) = run.child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > end {
            run.child.kill().ok();
            run.child.wait().ok();
            let stderr = run.stderr.join().unwrap();
            panic!(
                "{what} still running after {limit:?}; killed.\nstderr:\n{}",
                tail(&stderr)
            );
        }
        thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: run.stdout.join().unwrap(),
        stderr: run.stderr.join().unwrap(),
    }
}

/// Both ends of a transfer exited 0; otherwise the failure shows the
/// last lines of each log.
pub fn assert_both_succeeded(sender: &Output, listener: &Output) {
    assert!(
        sender.status.success(),
        "send failed:\n{}\nlisten:\n{}",
        tail(&sender.stderr),
        tail(&listener.stderr)
    );
    assert!(
        listener.status.success(),
        "listen failed:\n{}",
        tail(&listener.stderr)
    );
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The last lines of a log, for failure messages.
pub fn tail(bytes: &[u8]) -> String {
    let text = text(bytes);
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(40)..].join("\n")
}
