//! The application interface's side of the driver: the listening socket
//! and a reader and a writer task per connection, which pass requests to
//! the agent thread as [`ClientEvent`]s and write out its messages.

use std::path::PathBuf;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, UnixListener};
use tokio::sync::mpsc;

use super::{io_error, NodeError};
use crate::app::{self, Message};
use crate::options::AppAddress;
use crate::router::ClientId;

/// The listening socket of the application interface.
pub(super) enum AppListener {
    Unix(UnixListener, PathBuf),
    Tcp(TcpListener),
}

impl AppListener {
    pub(super) async fn bind(address: &AppAddress) -> Result<AppListener, NodeError> {
        match address {
            AppAddress::Tcp(address) => TcpListener::bind(address)
                .await
                .map(AppListener::Tcp)
                .map_err(io_error(format!(
                    "cannot listen for applications on {address}"
                ))),
            AppAddress::Unix(path) => {
                // A socket file left by a node that died is taken over; one
                // a running node answers on is not, and anything else there
                // (a user's file, a directory) is never removed.
                if let Ok(meta) = std::fs::symlink_metadata(path) {
                    use std::os::unix::fs::FileTypeExt;
                    if !meta.file_type().is_socket() {
                        return Err(NodeError::Config(format!(
                            "--app-socket {}: that path exists and is not a socket; \
                             name a path that does not exist (a stale socket is replaced)",
                            path.display()
                        )));
                    }
                    if tokio::net::UnixStream::connect(path).await.is_ok() {
                        return Err(NodeError::Config(format!(
                            "--app-socket {}: another node answers on it",
                            path.display()
                        )));
                    }
                    std::fs::remove_file(path).map_err(io_error(format!(
                        "cannot remove the stale socket {}",
                        path.display()
                    )))?;
                }
                UnixListener::bind(path)
                    .map(|l| AppListener::Unix(l, path.clone()))
                    .map_err(io_error(format!(
                        "cannot listen for applications on {}",
                        path.display()
                    )))
            }
        }
    }

    pub(super) fn describe(&self) -> String {
        match self {
            AppListener::Unix(_, path) => path.display().to_string(),
            AppListener::Tcp(listener) => listener
                .local_addr()
                .map_or_else(|e| e.to_string(), |a| a.to_string()),
        }
    }

    pub(super) async fn serve(self, clients: mpsc::UnboundedSender<ClientEvent>, node: String) {
        loop {
            let accepted = match &self {
                AppListener::Unix(listener, _) => listener.accept().await.map(|(s, _)| {
                    let (r, w) = s.into_split();
                    spawn_client(r, w, clients.clone(), node.clone())
                }),
                AppListener::Tcp(listener) => listener.accept().await.map(|(s, _)| {
                    let (r, w) = s.into_split();
                    spawn_client(r, w, clients.clone(), node.clone())
                }),
            };
            if let Err(e) = accepted {
                eprintln!("linklab dtn node: application socket: accept: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

/// What an application connection tells the agent thread.
pub(super) enum ClientEvent {
    /// A connection opened, with the sender its writer task reads.
    Opened(ClientId, mpsc::UnboundedSender<Message>),
    /// A request read from it.
    Request(ClientId, Message),
    /// It ended (on an error, if one is given).
    Closed(ClientId, Option<String>),
}

fn spawn_client(
    reader: impl AsyncRead + Unpin + Send + 'static,
    mut writer: impl AsyncWrite + Unpin + Send + 'static,
    events: mpsc::UnboundedSender<ClientEvent>,
    node: String,
) {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let id = ClientId(NEXT.fetch_add(1, Ordering::Relaxed));
    let (tx, mut rx) = mpsc::unbounded_channel::<Message>();
    // Cannot fail: `rx` is still here.
    tx.send(Message::new("NODE").with("id", node))
        .expect("the receiver is held");
    if events.send(ClientEvent::Opened(id, tx)).is_err() {
        // The agent thread has ended: the node is exiting, and the
        // connection closes with it.
        return;
    }
    tokio::spawn(async move {
        while let Some(message) = rx.recv().await {
            if writer.write_all(&message.encode()).await.is_err() {
                break;
            }
        }
    });
    tokio::spawn(async move {
        let mut reader = BufReader::new(reader);
        let why = loop {
            match app::read_message(&mut reader).await {
                Ok(Some(message)) => {
                    if events.send(ClientEvent::Request(id, message)).is_err() {
                        // The agent thread has ended: nobody would answer.
                        return;
                    }
                }
                Ok(None) => break None,
                Err(e) => break Some(e.to_string()),
            }
        };
        // Unheard only if the agent thread has ended, when the connection
        // is forgotten with everything else.
        let _ = events.send(ClientEvent::Closed(id, why));
    });
}
