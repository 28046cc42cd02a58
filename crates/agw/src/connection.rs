//! The tokio wrapper of [`Client`]: one TCP connection to an AGWPE
//! server, the clock read for the client, its octets written by a task of
//! their own (so that waiting for an event can be cancelled at any point
//! without tearing a message).

use std::time::Duration;

use linklab_core::Instant;
use thiserror::Error;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::OwnedReadHalf;
use tokio::net::TcpStream;
use tokio::sync::mpsc;

use crate::client::{Client, ClientEvent, ClientOptions};
use crate::wire::StreamError;

/// Why the connection to the server ended or could not start.
#[derive(Debug, Error)]
pub enum ConnectionError {
    /// The server could not be reached.
    #[error("cannot reach the AGWPE server at {address}: {error}")]
    Connect {
        /// The address given.
        address: String,
        /// Why.
        error: std::io::Error,
    },
    /// The server closed the connection.
    #[error("the AGWPE server closed the connection")]
    Closed,
    /// Reading or writing failed.
    #[error("the connection to the AGWPE server failed: {0}")]
    Io(#[from] std::io::Error),
    /// The server's stream broke the framing.
    #[error("the AGWPE server's stream cannot be read: {0}")]
    Stream(#[from] StreamError),
}

/// A [`Client`] on a TCP connection.
pub struct Connection {
    client: Client,
    read: OwnedReadHalf,
    write: mpsc::UnboundedSender<Vec<u8>>,
    writer: tokio::task::JoinHandle<std::io::Result<()>>,
    epoch: std::time::Instant,
    closed: bool,
}

impl Connection {
    /// Connects to the AGWPE server at `address` (HOST:PORT).
    pub async fn open(
        address: &str,
        options: ClientOptions,
    ) -> Result<Connection, ConnectionError> {
        let stream =
            TcpStream::connect(address)
                .await
                .map_err(|error| ConnectionError::Connect {
                    address: address.to_string(),
                    error,
                })?;
        stream.set_nodelay(true).ok();
        let (read, mut write_half) = stream.into_split();
        let (write, mut queue) = mpsc::unbounded_channel::<Vec<u8>>();
        let writer = tokio::spawn(async move {
            while let Some(bytes) = queue.recv().await {
                write_half.write_all(&bytes).await?;
            }
            write_half.shutdown().await
        });
        Ok(Connection {
            client: Client::new(options),
            read,
            write,
            writer,
            epoch: std::time::Instant::now(),
            closed: false,
        })
    }

    /// The client, for requests; what they produce is written on the next
    /// [`Connection::flush`] or [`Connection::next_event`].
    pub fn client(&mut self) -> &mut Client {
        &mut self.client
    }

    /// The client's time now.
    pub fn now(&self) -> Instant {
        Instant::ZERO + self.epoch.elapsed()
    }

    /// Hands what the client has to write to the writer task.
    pub fn flush(&mut self) -> Result<(), ConnectionError> {
        while let Some(bytes) = self.client.poll_transmit() {
            self.write
                .send(bytes)
                .map_err(|_| ConnectionError::Closed)?;
        }
        Ok(())
    }

    /// The next event from the server; meanwhile the client's requests are
    /// written and its timers run. Cancel-safe.
    pub async fn next_event(&mut self) -> Result<ClientEvent, ConnectionError> {
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            self.flush()?;
            if let Some(event) = self.client.poll_event() {
                return Ok(event);
            }
            if self.closed {
                return Err(ConnectionError::Closed);
            }
            let wake = self.client.poll_timeout().map(|at| {
                let wait = at - self.now();
                tokio::time::Instant::now() + wait
            });
            tokio::select! {
                read = self.read.read(&mut buf) => {
                    let n = read?;
                    if n == 0 {
                        self.closed = true;
                        return Err(ConnectionError::Closed);
                    }
                    let now = self.now();
                    self.client.handle_bytes(now, &buf[..n])?;
                }
                () = async {
                    match wake {
                        Some(at) => tokio::time::sleep_until(at).await,
                        None => std::future::pending().await,
                    }
                } => {
                    let now = self.now();
                    self.client.handle_timeout(now);
                }
            }
        }
    }

    /// Writes what is left and closes the connection, waiting at most
    /// `grace` for the writes.
    pub async fn close(mut self, grace: Duration) -> Result<(), ConnectionError> {
        self.flush()?;
        drop(self.write);
        match tokio::time::timeout(grace, &mut self.writer).await {
            Ok(Ok(result)) => result.map_err(ConnectionError::Io),
            Ok(Err(_)) | Err(_) => Ok(()),
        }
    }
}
