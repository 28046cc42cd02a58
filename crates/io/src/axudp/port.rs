//! The tokio side of an AXUDP port: a UDP socket and a task that turns
//! the KISS byte stream of a driver into datagrams and back, through an
//! [`AxudpRouter`].

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use linklab_wire::kiss::{self, Command, Decoder, Frame, Port};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, DuplexStream, ReadBuf};
use tokio::net::UdpSocket;
use tokio::sync::oneshot;

use super::config::AxudpConfig;
use super::router::{AxudpCounters, AxudpRouter};

/// The largest frame taken from the KISS side: the largest UDP payload
/// over IPv4 (65,507 octets) less the FCS.
pub const MAX_FRAME: usize = 65_507 - linklab_wire::axudp::FCS_LEN;

/// Octets buffered each way between the driver and the port's task.
const PIPE: usize = 64 * 1024;

/// A byte stream that speaks KISS, as a TNC's serial line does, over an
/// AXUDP port: data frames written to it go out as datagrams to the
/// routed peers; each good datagram received comes out of it as a KISS
/// data frame, on the port nibble of the last data frame written (0
/// until one is). Other KISS commands (TXDELAY, P, SLOTTIME, TXTAIL,
/// FULLDUP, SETHARDWARE, RETURN) mean nothing without a radio and are
/// dropped. An ACKMODE frame (G8BPQ) is sent as a data frame and
/// acknowledged at once, as a TNC does once its frame is on the air.
///
/// The socket and the task live as long as the stream: dropping it
/// closes the port.
pub struct AxudpStream {
    pipe: DuplexStream,
    local_addr: SocketAddr,
    router: Arc<Mutex<AxudpRouter>>,
    /// Dropped with the stream, which tells the task to end.
    _closed: oneshot::Sender<()>,
}

impl AxudpStream {
    /// Binds `config.bind` and starts the port's task (on the current
    /// tokio runtime).
    pub async fn open(config: &AxudpConfig) -> io::Result<AxudpStream> {
        let socket = UdpSocket::bind(config.bind).await?;
        let local_addr = socket.local_addr()?;
        let router = Arc::new(Mutex::new(AxudpRouter::new(config.clone())));
        let (pipe, inner) = tokio::io::duplex(PIPE);
        let (closed_tx, closed_rx) = oneshot::channel();
        tokio::spawn(run(socket, inner, router.clone(), closed_rx));
        Ok(AxudpStream {
            pipe,
            local_addr,
            router,
            _closed: closed_tx,
        })
    }

    /// The address the socket is bound to (its port chosen by the system
    /// if the configuration said 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The counts so far.
    pub fn counters(&self) -> AxudpCounters {
        lock(&self.router).counters()
    }

    /// A handle on the counts that outlives the stream.
    pub fn counters_handle(&self) -> AxudpCountersHandle {
        AxudpCountersHandle(self.router.clone())
    }
}

/// The counts of an [`AxudpStream`], readable while a driver owns the
/// stream.
#[derive(Clone)]
pub struct AxudpCountersHandle(Arc<Mutex<AxudpRouter>>);

impl AxudpCountersHandle {
    /// The counts so far.
    pub fn get(&self) -> AxudpCounters {
        lock(&self.0).counters()
    }
}

fn lock(router: &Mutex<AxudpRouter>) -> std::sync::MutexGuard<'_, AxudpRouter> {
    // The router's methods cannot panic half-way; a poisoned lock still
    // holds whole counts.
    router.lock().unwrap_or_else(PoisonError::into_inner)
}

impl AsyncRead for AxudpStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.pipe).poll_read(cx, buf)
    }
}

impl AsyncWrite for AxudpStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.pipe).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.pipe).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.pipe).poll_shutdown(cx)
    }
}

/// The port's task: KISS from the driver to datagrams, datagrams to KISS
/// for the driver, until the stream is dropped or the driver stops
/// reading.
async fn run(
    socket: UdpSocket,
    pipe: DuplexStream,
    router: Arc<Mutex<AxudpRouter>>,
    mut closed: oneshot::Receiver<()>,
) {
    let (mut from_driver, mut to_driver) = tokio::io::split(pipe);
    let mut decoder = Decoder::new(MAX_FRAME);
    let mut chunk = vec![0u8; PIPE];
    let mut datagram = vec![0u8; 65_536];
    let mut driver_writes = true;
    let mut port = Port::ZERO;
    loop {
        tokio::select! {
            _ = &mut closed => return,
            read = from_driver.read(&mut chunk), if driver_writes => {
                let n = match read {
                    Ok(0) | Err(_) => {
                        driver_writes = false;
                        continue;
                    }
                    Ok(n) => n,
                };
                decoder.push(chunk.get(..n).unwrap_or_default());
                // Garbage and bad KISS frames are dropped by the decoder
                // (and counted in its stats), as a TNC would.
                let frames: Vec<Frame> = decoder.by_ref().filter_map(Result::ok).collect();
                for frame in frames {
                    let (data, ack) = match frame.command {
                        Command::Data(data) => (data, None),
                        Command::AckMode { seq, data } => (data, Some(seq)),
                        _ => continue,
                    };
                    port = frame.port;
                    send(&socket, &router, &data).await;
                    if let Some(seq) = ack {
                        let ack = Frame { port, command: Command::AckMode { seq, data: Vec::new() } };
                        if to_driver.write_all(&kiss::encode(&ack)).await.is_err() {
                            return;
                        }
                    }
                }
            }
            received = socket.recv_from(&mut datagram) => {
                // A receive error (an ICMP error reported on the socket)
                // concerns one datagram, not the port.
                let Ok((n, _from)) = received else { continue };
                let octets = datagram.get(..n).unwrap_or_default();
                let Ok(frame) = lock(&router).receive(octets).map(<[u8]>::to_vec) else {
                    continue;
                };
                let frame = Frame { port, command: Command::Data(frame) };
                if to_driver.write_all(&kiss::encode(&frame)).await.is_err() {
                    return;
                }
            }
        }
    }
}

/// Routes `frame` and sends it to its peers, counting what fails.
async fn send(socket: &UdpSocket, router: &Mutex<AxudpRouter>, frame: &[u8]) {
    let Ok(outgoing) = lock(router).route(frame) else {
        return;
    };
    for peer in outgoing.peers {
        if socket.send_to(&outgoing.datagram, peer).await.is_err() {
            lock(router).send_failed();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use linklab_wire::ax25::{AddressField, CommandResponse};
    use linklab_wire::axudp;

    fn frame(dest: &str, info: &[u8]) -> Vec<u8> {
        let field = AddressField::new(
            dest.parse().unwrap(),
            "N0CALL-1".parse().unwrap(),
            &[],
            CommandResponse::Command,
        )
        .unwrap();
        let mut out = Vec::new();
        field.encode_into(&mut out);
        out.extend_from_slice(&[0x03, 0xF0]);
        out.extend_from_slice(info);
        out
    }

    /// Reads KISS frames from `stream` until one decodes.
    async fn next_frame(stream: &mut AxudpStream, decoder: &mut Decoder) -> Frame {
        let mut buf = [0u8; 1024];
        loop {
            if let Some(item) = decoder.next() {
                return item.unwrap();
            }
            let n = stream.read(&mut buf).await.unwrap();
            assert!(n > 0, "stream ended");
            decoder.push(&buf[..n]);
        }
    }

    #[tokio::test]
    async fn frames_cross_a_socket_both_ways() {
        let peer = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let config: AxudpConfig = format!("127.0.0.1:0@{}", peer.local_addr().unwrap())
            .parse()
            .unwrap();
        let mut stream = AxudpStream::open(&config).await.unwrap();
        let local = stream.local_addr();
        let counters = stream.counters_handle();

        // Parameters are dropped; the data frame (port 3) goes out.
        let out = frame("N0CALL-2", b"to the peer");
        let mut kiss_out = kiss::encode(&Frame {
            port: Port::new(3).unwrap(),
            command: Command::TxDelay(30),
        });
        kiss_out.extend(kiss::encode(&Frame {
            port: Port::new(3).unwrap(),
            command: Command::Data(out.clone()),
        }));
        stream.write_all(&kiss_out).await.unwrap();
        let mut buf = [0u8; 2048];
        let (n, from) = peer.recv_from(&mut buf).await.unwrap();
        assert_eq!(from, local);
        assert_eq!(axudp::decode(&buf[..n]), Ok(out.as_slice()));

        // A bad datagram, a short one, then a good one: only the good one
        // comes out, on the writer's port.
        let back = frame("N0CALL-1", b"from the peer");
        let mut bad = axudp::encode(&back);
        bad[5] ^= 0x04;
        peer.send_to(&bad, local).await.unwrap();
        peer.send_to(&[0xC0, 0xDB], local).await.unwrap();
        peer.send_to(&axudp::encode(&back), local).await.unwrap();
        let mut decoder = Decoder::new(MAX_FRAME);
        let got = next_frame(&mut stream, &mut decoder).await;
        assert_eq!(got.port.get(), 3);
        assert_eq!(got.command, Command::Data(back));
        let c = counters.get();
        assert_eq!((c.datagrams_in, c.bad_fcs, c.too_short), (3, 1, 1));
        assert_eq!((c.datagrams_out, c.unroutable), (1, 0));

        // ACKMODE: sent, and acknowledged with its sequence octets.
        stream
            .write_all(&kiss::encode(&Frame {
                port: Port::ZERO,
                command: Command::AckMode {
                    seq: 0x1234,
                    data: out.clone(),
                },
            }))
            .await
            .unwrap();
        let ack = next_frame(&mut stream, &mut decoder).await;
        assert_eq!(
            ack.command,
            Command::AckMode {
                seq: 0x1234,
                data: Vec::new()
            }
        );
        let (n, _) = peer.recv_from(&mut buf).await.unwrap();
        assert_eq!(axudp::decode(&buf[..n]), Ok(out.as_slice()));
    }

    #[tokio::test]
    async fn dropping_the_stream_frees_the_socket() {
        let config: AxudpConfig = "127.0.0.1:0@127.0.0.1:9".parse().unwrap();
        let stream = AxudpStream::open(&config).await.unwrap();
        let local = stream.local_addr();
        drop(stream);
        // The task ends when it next runs; bind the same port once it has.
        let again = AxudpConfig {
            bind: local,
            ..config
        };
        let mut tries = 0;
        loop {
            match AxudpStream::open(&again).await {
                Ok(_) => break,
                Err(e) if e.kind() == io::ErrorKind::AddrInUse && tries < 1000 => {
                    tries += 1;
                    tokio::task::yield_now().await;
                }
                Err(e) => panic!("{e}"),
            }
        }
    }
}
