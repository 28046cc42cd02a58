//! The application side of the interface ([`crate::app`]): what `linklab
//! dtn send` and `linklab dtn recv` use to talk to a node.

use std::collections::VecDeque;
use std::io;

use thiserror::Error;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::{TcpStream, UnixStream};

use crate::app::{self, Message, ProtocolError};
use crate::options::AppAddress;
use crate::report::BundleRef;

/// Why a request to the node failed.
#[derive(Debug, Error)]
pub enum ClientError {
    /// No node answers at the address.
    #[error("cannot connect to the node at {address}: {error}; is the node running (linklab dtn node --app-socket {address})?")]
    Connect {
        /// The node's application address.
        address: String,
        /// Why the connection failed; in the message, not a source, so
        /// that it is said once, before the hint.
        error: io::Error,
    },
    /// The connection failed.
    #[error("connection to the node at {address}")]
    Io {
        /// The node's application address.
        address: String,
        /// The error.
        source: io::Error,
    },
    /// The node closed the connection.
    #[error("the node at {0} closed the connection")]
    Closed(String),
    /// The node answered ERROR.
    #[error("the node refused: {0}")]
    Refused(String),
    /// The node said something this client cannot read.
    #[error("the node's answer is not understood: {0}")]
    Protocol(#[from] ProtocolError),
}

type Reader = BufReader<Box<dyn AsyncRead + Unpin + Send>>;
type Writer = Box<dyn AsyncWrite + Unpin + Send>;

/// A connection to a node's application interface.
pub struct Client {
    address: String,
    reader: Reader,
    writer: Writer,
    node_id: String,
    /// Bundles and reports that came while waiting for an answer.
    notices: VecDeque<Message>,
}

impl Client {
    /// Connects and reads the node's greeting.
    pub async fn connect(address: &AppAddress) -> Result<Client, ClientError> {
        let text = address.to_string();
        let io = |error| ClientError::Connect {
            address: text.clone(),
            error,
        };
        let (reader, writer): (Box<dyn AsyncRead + Unpin + Send>, Writer) = match address {
            AppAddress::Unix(path) => {
                let (r, w) = UnixStream::connect(path).await.map_err(io)?.into_split();
                (Box::new(r), Box::new(w))
            }
            AppAddress::Tcp(address) => {
                let (r, w) = TcpStream::connect(address).await.map_err(io)?.into_split();
                (Box::new(r), Box::new(w))
            }
        };
        let mut client = Client {
            address: text,
            reader: BufReader::new(reader),
            writer,
            node_id: String::new(),
            notices: VecDeque::new(),
        };
        let greeting = client.read().await?;
        if greeting.verb != "NODE" {
            return Err(ProtocolError(format!("expected NODE, got {}", greeting.verb)).into());
        }
        client.node_id = greeting.field("id")?.to_string();
        Ok(client)
    }

    /// The node's ID, from its greeting.
    pub fn node_id(&self) -> &str {
        &self.node_id
    }

    /// Registers `endpoint`: its bundles and status reports come to this
    /// connection.
    pub async fn register(&mut self, endpoint: &str) -> Result<(), ClientError> {
        self.write(&Message::new("REGISTER").with("endpoint", endpoint))
            .await?;
        self.answer("OK").await.map(drop)
    }

    /// Sends a bundle (`message` is a `SEND` with its body); its identity
    /// once the node has stored it.
    pub async fn send(&mut self, message: &Message) -> Result<BundleRef, ClientError> {
        self.write(message).await?;
        let sent = self.answer("SENT").await?;
        Ok(BundleRef::from_message(&sent)?)
    }

    /// The next `BUNDLE` or `REPORT`; `None` once the node closed.
    pub async fn next(&mut self) -> Result<Option<Message>, ClientError> {
        if let Some(notice) = self.notices.pop_front() {
            return Ok(Some(notice));
        }
        match self.read().await {
            Ok(message) if message.verb == "ERROR" => Err(ClientError::Refused(message.text)),
            Ok(message) => Ok(Some(message)),
            Err(ClientError::Closed(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Confirms a delivery: the application has kept the bundle.
    pub async fn done(&mut self, delivery: u64) -> Result<(), ClientError> {
        self.write(&Message::new("DONE").with("delivery", delivery))
            .await
    }

    async fn answer(&mut self, verb: &str) -> Result<Message, ClientError> {
        loop {
            let message = self.read().await?;
            match message.verb.as_str() {
                "BUNDLE" | "REPORT" => self.notices.push_back(message),
                "ERROR" => return Err(ClientError::Refused(message.text)),
                v if v == verb => return Ok(message),
                other => return Err(ProtocolError(format!("expected {verb}, got {other}")).into()),
            }
        }
    }

    async fn write(&mut self, message: &Message) -> Result<(), ClientError> {
        self.writer
            .write_all(&message.encode())
            .await
            .map_err(|source| ClientError::Io {
                address: self.address.clone(),
                source,
            })
    }

    async fn read(&mut self) -> Result<Message, ClientError> {
        match app::read_message(&mut self.reader).await {
            Ok(Some(message)) => Ok(message),
            Ok(None) => Err(ClientError::Closed(self.address.clone())),
            Err(e) if e.kind() == io::ErrorKind::InvalidData => {
                Err(ProtocolError(e.to_string()).into())
            }
            Err(source) => Err(ClientError::Io {
                address: self.address.clone(),
                source,
            }),
        }
    }
}
