//! A running `linklab agw` for the tests, and an AGWPE client that is a
//! plain socket speaking the protocol through `linklab_agw::wire`.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use linklab_agw::wire::{CallField, Decoder, Header, Message};

use super::text;

pub const LIMIT: Duration = Duration::from_secs(60);

/// A running `linklab agw`.
pub struct Agw {
    child: Child,
    pub port: u16,
    /// The shared KISS port, with --kiss-server.
    pub kiss_port: Option<u16>,
    stderr: thread::JoinHandle<Vec<u8>>,
}

impl Agw {
    pub fn start(kiss: &[String], extra: &[&str]) -> Agw {
        let mut args = vec!["agw".to_string(), "--listen".into(), "127.0.0.1:0".into()];
        for k in kiss {
            args.extend(["--kiss".to_string(), k.clone()]);
        }
        args.extend(extra.iter().map(ToString::to_string));
        let mut child = Command::new(env!("CARGO_BIN_EXE_linklab"))
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut err = child.stderr.take().unwrap();
        let stderr = thread::spawn(move || {
            let mut bytes = Vec::new();
            err.read_to_end(&mut bytes).ok();
            bytes
        });
        let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut port = 0;
        let mut kiss_port = None;
        loop {
            let mut line = String::new();
            assert!(
                std::io::BufRead::read_line(&mut out, &mut line).unwrap() > 0,
                "agw exited"
            );
            if let Some(addr) = line.strip_prefix("agw listening on ") {
                port = addr.trim().rsplit(':').next().unwrap().parse().unwrap();
            }
            if let Some(addr) = line.strip_prefix("agw kiss server on ") {
                kiss_port = Some(addr.trim().rsplit(':').next().unwrap().parse().unwrap());
            }
            if line.starts_with("agw ready") {
                break;
            }
        }
        thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
        Agw {
            child,
            port,
            kiss_port,
            stderr,
        }
    }

    pub fn client(&self) -> Client {
        let stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        Client {
            stream,
            decoder: Decoder::new(),
            seen: Vec::new(),
            cursor: 0,
        }
    }

    /// SIGINT; its log, once it has exited 0.
    pub fn stop(mut self) -> String {
        Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status()
            .unwrap();
        let end = Instant::now() + LIMIT;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(Instant::now() < end, "agw did not stop");
            thread::sleep(Duration::from_millis(20));
        };
        let log = text(
            &std::mem::replace(&mut self.stderr, thread::spawn(Vec::new))
                .join()
                .unwrap(),
        );
        assert!(
            status.success(),
            "agw exited with {status} after SIGINT:\n{log}"
        );
        log
    }
}

impl Drop for Agw {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub struct Client {
    pub stream: TcpStream,
    decoder: Decoder,
    /// Every message received, in order.
    pub seen: Vec<Message>,
    /// Messages before this one were looked at by [`Client::wait`].
    cursor: usize,
}

impl Client {
    pub fn send(&mut self, kind: u8, from: &str, to: &str, data: &[u8]) {
        let mut header = Header::new(0, kind);
        header.pid = if kind == b'D' { 0xF0 } else { 0 };
        header.call_from = CallField::from_text(from);
        header.call_to = CallField::from_text(to);
        let mut octets = Vec::new();
        Message::new(header, data.to_vec()).encode_into(&mut octets);
        self.stream.write_all(&octets).unwrap();
    }

    /// Reads until a message of `kind` arrives after the one the last
    /// call returned; `None` if the server closed the connection.
    pub fn wait(&mut self, kind: u8) -> Option<Message> {
        let end = Instant::now() + LIMIT;
        loop {
            if let Some(i) = self.seen[self.cursor..]
                .iter()
                .position(|m| m.header.kind == kind)
            {
                self.cursor += i + 1;
                return Some(self.seen[self.cursor - 1].clone());
            }
            assert!(
                Instant::now() < end,
                "no '{}' within {LIMIT:?}",
                char::from(kind)
            );
            let mut buf = [0u8; 8192];
            match self.stream.read(&mut buf) {
                Ok(0) => return None,
                Ok(n) => {
                    self.decoder.push(&buf[..n]);
                    while let Some(Ok(m)) = self.decoder.poll_message() {
                        self.seen.push(m);
                    }
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(_) => return None,
            }
        }
    }

    pub fn outstanding(&mut self, from: &str, to: &str) -> u32 {
        self.send(b'Y', from, to, &[]);
        let m = self.wait(b'Y').unwrap();
        u32::from_le_bytes(m.data[..4].try_into().unwrap())
    }
}
