//! The agent thread: it owns the [`Router`] (and so the agent and its
//! store) and is its driver. It feeds the router the events of sessions
//! and applications, the stop, and the clock, and carries out what the
//! router asks: commands to sessions, connections wanted, messages to
//! applications, lines for the log.

use std::collections::BTreeMap;

use linklab_core::Instant;
use linklab_dtn::{LinkId, Store};
use tokio::sync::{mpsc, oneshot, watch};

use super::apps::ClientEvent;
use super::{io_error, runtime, NodeError};
use crate::app::Message;
use crate::cl::{LinkCommand, LinkEvent, SessionId};
use crate::router::{ClientId, Received, Router, SessionUp};
use crate::watch::SharedWatch;

/// The node's clock: the router's [`Instant`]s count from `origin`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Clock {
    origin: tokio::time::Instant,
}

impl Clock {
    /// A clock whose [`Instant::ZERO`] is now.
    pub(super) fn start() -> Clock {
        Clock {
            origin: tokio::time::Instant::now(),
        }
    }

    /// The time since the clock started.
    pub(super) fn now(&self) -> Instant {
        Instant::ZERO + self.origin.elapsed()
    }

    /// When the clock reads `at`, for tokio's timers.
    fn deadline(&self, at: Instant) -> tokio::time::Instant {
        self.origin + (at - Instant::ZERO)
    }
}

/// What the agent thread runs: the router and the channels its
/// commands and messages leave by.
pub(super) struct AgentDriver<S: Store> {
    pub(super) router: Router<S>,
    pub(super) clock: Clock,
    /// Where the AX.25 convergence layer, the one that connects on
    /// demand, hears which link is wanted.
    pub(super) dial: Option<mpsc::UnboundedSender<LinkId>>,
    /// Set at the stop, for the convergence layers that make links of
    /// their own accord.
    pub(super) stopping: watch::Sender<bool>,
    /// What the program running the node sees of it, if it looks.
    pub(super) watch: Option<SharedWatch>,
    sessions: BTreeMap<SessionId, mpsc::UnboundedSender<LinkCommand>>,
    clients: BTreeMap<ClientId, mpsc::UnboundedSender<Message>>,
}

impl<S: Store> AgentDriver<S> {
    pub(super) fn new(router: Router<S>, clock: Clock) -> AgentDriver<S> {
        AgentDriver {
            router,
            clock,
            dial: None,
            stopping: watch::Sender::new(false),
            watch: None,
            sessions: BTreeMap::new(),
            clients: BTreeMap::new(),
        }
    }

    /// Serves `links` and `clients` until `stop` fires (or its sender is
    /// dropped) and the router is finished.
    async fn run(
        mut self,
        mut links: mpsc::UnboundedReceiver<LinkEvent>,
        mut clients: mpsc::UnboundedReceiver<ClientEvent>,
        mut stop: oneshot::Receiver<()>,
    ) -> Result<(), NodeError> {
        self.router.start(self.clock.now())?;
        loop {
            // The convergence layers hear of a stop before its Close
            // commands.
            if self.router.is_stopping() && !*self.stopping.borrow() {
                self.stopping.send_replace(true);
            }
            self.carry_out()?;
            self.publish();
            if self.router.is_finished() {
                return Ok(());
            }
            let wake = self.router.poll_timeout().map(|at| self.clock.deadline(at));
            tokio::select! {
                Some(event) = links.recv() => self.on_link(event)?,
                Some(event) = clients.recv() => self.on_client(event)?,
                _ = sleep_until(wake) => self.router.handle_timeout(self.clock.now())?,
                _ = &mut stop, if !self.router.is_stopping() => {
                    self.router.begin_stop(self.clock.now())?
                }
            }
        }
    }

    /// Passes a session's event to the router, and answers a received
    /// bundle's `stored` once the router has stored it.
    fn on_link(&mut self, event: LinkEvent) -> Result<(), NodeError> {
        let now = self.clock.now();
        match event {
            LinkEvent::Up {
                session,
                peer,
                remote,
                configured,
                mtu,
                commands,
            } => {
                self.sessions.insert(session, commands);
                let up = SessionUp {
                    peer,
                    remote,
                    configured,
                    mtu,
                };
                self.router.handle_session_up(now, session, up)?;
            }
            LinkEvent::Received {
                session,
                octets,
                stored,
            } => self.store(now, session, Received::Bundle(&octets), stored)?,
            LinkEvent::PartialReceived {
                session,
                octets,
                stored,
            } => self.store(now, session, Received::Prefix(&octets), stored)?,
            LinkEvent::Interrupted {
                transmit,
                acknowledged,
                ..
            } => self
                .router
                .handle_interrupted(now, transmit, acknowledged)?,
            LinkEvent::Sent {
                transmit, outcome, ..
            } => self.router.handle_sent(now, transmit, outcome)?,
            LinkEvent::Down { session, why } => {
                self.router.handle_session_down(now, session, why)?;
                self.sessions.remove(&session);
            }
        }
        Ok(())
    }

    /// Has the router store what arrived on `session`, then answers
    /// `stored`.
    fn store(
        &mut self,
        now: Instant,
        session: SessionId,
        received: Received<'_>,
        stored: oneshot::Sender<()>,
    ) -> Result<(), NodeError> {
        self.router.handle_received(now, session, received)?;
        // A session that ended meanwhile no longer waits: what it brought
        // is stored all the same.
        let _ = stored.send(());
        Ok(())
    }

    fn on_client(&mut self, event: ClientEvent) -> Result<(), NodeError> {
        let now = self.clock.now();
        match event {
            ClientEvent::Opened(client, tx) => {
                self.clients.insert(client, tx);
                self.router.handle_client_opened(now, client)?;
            }
            ClientEvent::Request(client, message) => {
                self.router.handle_client_request(now, client, &message)?
            }
            ClientEvent::Closed(client, why) => {
                self.router.handle_client_closed(now, client, why)?;
                self.clients.remove(&client);
            }
        }
        Ok(())
    }

    /// Carries out what the router asks, and prints its notices.
    fn carry_out(&mut self) -> Result<(), NodeError> {
        loop {
            if let Some((session, command)) = self.router.poll_link_command() {
                let undelivered = match self.sessions.get(&session) {
                    Some(commands) => commands.send(command).err().map(|e| e.0),
                    None => Some(command),
                };
                if let Some(command) = undelivered {
                    // The session's task has ended; its Down is on the way.
                    self.router
                        .handle_undelivered(self.clock.now(), session, command)?;
                }
            } else if let Some(link) = self.router.poll_dial() {
                // The AX.25 convergence layer runs as long as the node;
                // should it have ended, the bundle waits in the store.
                if let Some(dial) = &self.dial {
                    let _ = dial.send(link);
                }
            } else if let Some((client, message)) = self.router.poll_client_message() {
                // A connection whose writer has ended is closing: its
                // reader reports it, and the deliveries it held wait for
                // the next receiver (they are confirmed only by DONE).
                if let Some(tx) = self.clients.get(&client) {
                    let _ = tx.send(message);
                }
            } else if let Some(notice) = self.router.poll_notice() {
                eprintln!("linklab dtn node: {notice}");
            } else {
                return Ok(());
            }
        }
    }

    /// Writes the node's state for the program watching it.
    fn publish(&self) {
        let Some(watch) = &self.watch else {
            return;
        };
        if let Ok(mut w) = watch.lock() {
            *w = self.router.watch();
        }
    }
}

/// Starts `driver` on the agent thread: it serves `links` and `clients`
/// until `stop` fires (or its sender is dropped) and its sessions have
/// ended. Its result comes on the returned channel.
pub(super) fn spawn_agent<S: Store + Send + 'static>(
    driver: AgentDriver<S>,
    links: mpsc::UnboundedReceiver<LinkEvent>,
    clients: mpsc::UnboundedReceiver<ClientEvent>,
    stop: oneshot::Receiver<()>,
) -> Result<oneshot::Receiver<Result<(), NodeError>>, NodeError> {
    let (done, result) = oneshot::channel();
    std::thread::Builder::new()
        .name("dtn-agent".into())
        .spawn(move || {
            let outcome = runtime().and_then(|rt| rt.block_on(driver.run(links, clients, stop)));
            // The reactor waits for this unless it is already returning.
            let _ = done.send(outcome);
        })
        .map_err(io_error("cannot start the agent thread"))?;
    Ok(result)
}

/// Sleeps until `deadline`, or for ever without one.
async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    use linklab_core::Engine;
    use linklab_dtn::{Agent, Config, RedbStore, StoreError};
    use linklab_tcpcl::{
        Config as TcpclConfig, Event as TcpclEvent, Role as TcpclRole, Session, State as TcpclState,
    };
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};

    use super::*;
    use crate::cl::tcpcl;

    /// A redb store whose commits take `delay` each while `slow` is set;
    /// `begun` counts those slow commits.
    struct SlowStore {
        inner: RedbStore,
        delay: Duration,
        slow: Arc<AtomicBool>,
        begun: Arc<AtomicUsize>,
    }

    impl Store for SlowStore {
        fn load(&mut self) -> Result<linklab_dtn::store::Snapshot, StoreError> {
            self.inner.load()
        }

        fn commit(&mut self, batch: &linklab_dtn::Batch) -> Result<(), StoreError> {
            if self.slow.load(Ordering::SeqCst) {
                self.begun.fetch_add(1, Ordering::SeqCst);
                std::thread::sleep(self.delay);
            }
            self.inner.commit(batch)
        }
    }

    /// A TCPCL peer driven by the test over loopback.
    struct Peer {
        session: Session,
        stream: TcpStream,
        clock: Clock,
        events: Vec<TcpclEvent>,
    }

    impl Peer {
        async fn connect(address: std::net::SocketAddr, keepalive: u16) -> Peer {
            let mut config = TcpclConfig::new("ipn:2.0");
            config.keepalive_interval = keepalive;
            let session = Session::new(TcpclRole::Active, config, Instant::ZERO).unwrap();
            Peer {
                session,
                stream: TcpStream::connect(address).await.unwrap(),
                clock: Clock::start(),
                events: Vec::new(),
            }
        }

        fn now(&self) -> Instant {
            self.clock.now()
        }

        /// Writes out what the session has to send.
        async fn flush(&mut self) {
            let now = self.now();
            while let Some(octets) = self.session.poll_transmit(now) {
                self.stream.write_all(&octets).await.unwrap();
            }
            while let Some(event) = self.session.poll_event() {
                self.events.push(event);
            }
        }

        /// Waits for input or the session's next timer (cancel-safe).
        async fn wait(&mut self) {
            let deadline = self
                .session
                .poll_timeout()
                .map(|at| self.clock.deadline(at));
            let mut buffer = [0u8; 4096];
            tokio::select! {
                read = self.stream.read(&mut buffer) => match read {
                    Ok(0) | Err(_) => self.session.handle_eof(self.now()),
                    Ok(n) => self.session.handle_input(self.now(), &buffer[..n]),
                },
                _ = sleep_until(deadline) => self.session.handle_timeout(self.now()),
            }
        }

        /// Runs the session until `done` holds of it.
        async fn run_until(&mut self, done: impl Fn(&Session) -> bool) {
            loop {
                self.flush().await;
                if done(&self.session) {
                    return;
                }
                self.wait().await;
            }
        }
    }

    /// The peer of the slow-store tests offers a 1 s Session Keepalive and
    /// so ends the session after 2 s without a message from the node (RFC
    /// 9174 5.1.1).
    const KEEPALIVE: u16 = 1;

    /// Node `ipn:1.0` on a [`SlowStore`] in `dir` whose slow writes take
    /// 3 s; the flag that makes them slow and their count.
    fn slow_node(
        dir: &std::path::Path,
    ) -> (AgentDriver<SlowStore>, Arc<AtomicBool>, Arc<AtomicUsize>) {
        let slow = Arc::new(AtomicBool::new(false));
        let begun = Arc::new(AtomicUsize::new(0));
        let store = SlowStore {
            inner: RedbStore::open(&dir.join("node.redb")).unwrap(),
            delay: Duration::from_secs(3),
            slow: slow.clone(),
            begun: begun.clone(),
        };
        let config = Config::new("ipn:1.0".parse().unwrap());
        let router = Router::new(Agent::open(config, store).unwrap());
        (AgentDriver::new(router, Clock::start()), slow, begun)
    }

    /// A node on loopback taking TCPCL sessions, with its spool in
    /// `spool_dir`, and a [`Peer`] whose session with it is up.
    struct NodeWithPeer {
        peer: Peer,
        clients: mpsc::UnboundedSender<ClientEvent>,
        stop: oneshot::Sender<()>,
        agent: oneshot::Receiver<Result<(), NodeError>>,
        listening: tokio::task::JoinHandle<()>,
    }

    impl NodeWithPeer {
        async fn start(driver: AgentDriver<SlowStore>, spool_dir: PathBuf) -> NodeWithPeer {
            let (link_tx, link_rx) = mpsc::unbounded_channel();
            let (clients, client_rx) = mpsc::unbounded_channel();
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let address = listener.local_addr().unwrap();
            let session_config = tcpcl::session_config("ipn:1.0");
            let listening =
                tokio::spawn(tcpcl::listen(listener, session_config, spool_dir, link_tx));
            let (stop, stop_rx) = oneshot::channel();
            let agent = spawn_agent(driver, link_rx, client_rx, stop_rx).unwrap();
            let mut peer = Peer::connect(address, KEEPALIVE).await;
            peer.run_until(|s| s.state() == TcpclState::Established)
                .await;
            NodeWithPeer {
                peer,
                clients,
                stop,
                agent,
                listening,
            }
        }

        /// Stops the node, its session with the peer still up: the
        /// session ends cleanly.
        async fn stop(mut self) {
            assert_eq!(
                self.peer.session.state(),
                TcpclState::Established,
                "{:?}",
                self.peer.events
            );
            self.stop.send(()).unwrap();
            self.peer.run_until(Session::is_closed).await;
            self.agent.await.unwrap().unwrap();
            self.listening.abort();
        }
    }

    /// Runs `test` on a runtime of its own; it fails if it takes more
    /// than 15 s (a slow store write takes 3 s).
    fn within_bound(test: impl std::future::Future<Output = ()>) {
        const BOUND: Duration = Duration::from_secs(15);
        runtime()
            .unwrap()
            .block_on(async { tokio::time::timeout(BOUND, test).await })
            .expect("the test ran within its bound");
    }

    #[test]
    fn a_slow_store_commit_of_a_received_bundle_holds_only_its_last_ack() {
        let dir = tempfile::tempdir().unwrap();
        // The bundle the peer sends, made by an agent of its own.
        let bundle = super::super::tests::encoded_bundle("ipn:2.1", "ipn:1.1", b"slow to store");
        let (driver, slow, begun) = slow_node(dir.path());
        let spool_dir = dir.path().to_path_buf();
        let test = async move {
            let mut node = NodeWithPeer::start(driver, spool_dir).await;
            let peer = &mut node.peer;

            // The node stores the bundle slowly; its last XFER_ACK waits
            // for that, and the node's KEEPALIVEs go on meanwhile.
            slow.store(true, Ordering::SeqCst);
            let transfer = peer.session.send_transfer(peer.now(), &bundle).unwrap();
            let done = |events: &[TcpclEvent]| {
                events.iter().any(|e| {
                    matches!(e, TcpclEvent::TransferSucceeded { id } if *id == transfer)
                        || matches!(e, TcpclEvent::SessionTerminated(_))
                })
            };
            while !done(&peer.events) {
                peer.flush().await;
                if !done(&peer.events) {
                    peer.wait().await;
                }
            }
            slow.store(false, Ordering::SeqCst);
            assert!(begun.load(Ordering::SeqCst) >= 1, "the commit was slow");
            // The session is still up (checked by `stop`).
            node.stop().await;
        };
        within_bound(test);
        assert!(
            crate::cl::spooled(dir.path()).unwrap().is_empty(),
            "the spool goes once the bundle is stored"
        );
    }

    #[test]
    fn a_slow_store_write_does_not_let_a_peers_keepalive_expire() {
        let dir = tempfile::tempdir().unwrap();
        let (driver, slow, begun) = slow_node(dir.path());
        let spool_dir = dir.path().to_path_buf();
        let test = async move {
            let mut node = NodeWithPeer::start(driver, spool_dir).await;
            let (peer, client_tx) = (&mut node.peer, &node.clients);
            assert_eq!(peer.session.params().unwrap().keepalive_interval, 1);

            // An application's bundle: the agent stores it, slowly.
            let client = ClientId(1);
            let (answers_tx, mut answers) = mpsc::unbounded_channel();
            client_tx
                .send(ClientEvent::Opened(client, answers_tx))
                .unwrap();
            slow.store(true, Ordering::SeqCst);
            let request = Message::new("SEND")
                .with("dest", "ipn:3.1")
                .with_body(b"slow".to_vec());
            client_tx
                .send(ClientEvent::Request(client, request))
                .unwrap();
            let answer = loop {
                peer.flush().await;
                tokio::select! {
                    answer = answers.recv() => break answer.unwrap(),
                    _ = peer.wait() => {}
                }
            };
            slow.store(false, Ordering::SeqCst);
            assert_eq!(answer.verb, "SENT", "{answer:?}");
            assert!(begun.load(Ordering::SeqCst) >= 1, "the write was slow");
            // The session lived through the write: the node's KEEPALIVEs
            // kept coming (checked by `stop`).
            peer.flush().await;
            node.stop().await;
        };
        within_bound(test);
    }
}
