//! A TCP file server on one [`Host`]: accepts any number of connections
//! on a port, one after another or at once, and hands over what each
//! carried once its sender closed (FIN received, RFC 9293 3.6).
//!
//! One socket always listens; when it takes a connection it becomes that
//! connection's and a new one listens in its place, after every other
//! socket ([`Host::add_socket_last`]): smoltcp gives a segment to the
//! first socket that accepts it, and a listener placed before a
//! connection would take that connection's retransmitted SYN as a new
//! one.

use std::collections::VecDeque;

use smoltcp::socket::tcp::State;
use smoltcp::wire::IpEndpoint;

use linklab_core::Instant;

use crate::apps::FileReceiver;
use crate::host::{Host, TcpConfig};

/// One transfer the server finished, successfully or not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Received {
    /// The sender's address and port.
    pub remote: Option<IpEndpoint>,
    /// The octets received (all of them if `outcome` is `Ok`).
    pub data: Vec<u8>,
    /// When the connection request arrived (first step that saw it).
    pub accepted: Instant,
    /// When the transfer ended.
    pub at: Instant,
    /// `Ok` if the sender closed the connection after its last octet;
    /// otherwise why the connection ended early.
    pub outcome: Result<(), String>,
}

/// A connection the server took.
#[derive(Debug)]
struct Connection {
    receiver: FileReceiver,
    remote: Option<IpEndpoint>,
    accepted: Instant,
    /// The handshake completed.
    established: bool,
    /// The transfer was handed over (the socket may still be closing).
    ended: bool,
}

/// A TCP server that receives files (see the module documentation).
#[derive(Debug)]
pub struct FileServer {
    port: u16,
    tcp: TcpConfig,
    listener: FileReceiver,
    connections: Vec<Connection>,
    received: VecDeque<Received>,
}

impl FileServer {
    /// Listens on `port` of `host` with sockets set up as `tcp` says.
    pub fn listen(host: &mut Host, tcp: &TcpConfig, port: u16) -> Result<FileServer, String> {
        Ok(FileServer {
            port,
            tcp: *tcp,
            listener: FileReceiver::listen(host, tcp, port)?,
            connections: Vec::new(),
            received: VecDeque::new(),
        })
    }

    /// The port listened on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Connections whose transfer has not ended yet.
    pub fn active(&self) -> usize {
        self.connections.iter().filter(|c| !c.ended).count()
    }

    /// The next finished transfer, oldest first.
    pub fn poll_received(&mut self) -> Option<Received> {
        self.received.pop_front()
    }

    /// Takes new connections, reads what arrived, closes the connections
    /// whose sender closed, and forgets those fully closed. A connection
    /// that ends before its handshake completes is no transfer and is
    /// forgotten silently.
    pub fn step(&mut self, host: &mut Host, now: Instant) -> Result<(), String> {
        if host.tcp(self.listener.socket()).state() != State::Listen {
            let fresh = FileReceiver::listen(host, &self.tcp, self.port)?;
            let receiver = core::mem::replace(&mut self.listener, fresh);
            let remote = host.tcp(receiver.socket()).remote_endpoint();
            self.connections.push(Connection {
                receiver,
                remote,
                accepted: now,
                established: false,
                ended: false,
            });
        }
        for c in &mut self.connections {
            if c.ended {
                continue;
            }
            c.receiver.step(host);
            let state = host.tcp(c.receiver.socket()).state();
            c.established |= !matches!(state, State::SynReceived | State::Listen | State::Closed);
            let outcome = if let Some(why) = c.receiver.failure() {
                host.tcp(c.receiver.socket()).abort();
                Err(why.to_string())
            } else if c.receiver.complete(host) {
                host.tcp(c.receiver.socket()).close();
                Ok(())
            } else if matches!(state, State::Closed | State::Listen) {
                Err(format!(
                    "the connection was reset or timed out after {} octets",
                    c.receiver.received().len()
                ))
            } else {
                continue;
            };
            c.ended = true;
            if c.established {
                self.received.push_back(Received {
                    remote: c.remote,
                    data: c.receiver.take(),
                    accepted: c.accepted,
                    at: now,
                    outcome,
                });
            }
        }
        let before = self.connections.len();
        self.connections.retain(|c| {
            let state = host.tcp(c.receiver.socket()).state();
            let gone = c.ended && matches!(state, State::Closed | State::TimeWait | State::Listen);
            if gone {
                host.remove_socket(c.receiver.socket());
            }
            !gone
        });
        if self.connections.is_empty() && before > 0 {
            // No connection left: the listener may take the lowest free
            // slot again, so that the socket set does not grow with every
            // connection ever accepted.
            host.remove_socket(self.listener.socket());
            self.listener = FileReceiver::listen(host, &self.tcp, self.port)?;
        }
        Ok(())
    }
}
