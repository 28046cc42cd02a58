//! The TNC's write side on a task of its own, so that a slow TNC never
//! stalls reading; shared by the AX.25 and the IP drivers.

use tokio::io::{AsyncWriteExt, WriteHalf};
use tokio::sync::mpsc;
use tokio::task::{JoinError, JoinHandle};

use crate::address::KissStream;
use crate::driver::DriverError;
use crate::params::KissParams;

/// Octets queued for the TNC, written in order by a task.
pub(crate) struct KissWriter {
    tx: mpsc::UnboundedSender<Vec<u8>>,
    /// The writing task: it ends early only on a write error, so a driver
    /// selects on it to notice that (see [`KissWriter::failed`]).
    pub(crate) task: JoinHandle<std::io::Result<()>>,
}

impl KissWriter {
    /// Starts the task on `writer` and queues the KISS parameter commands
    /// of `params` first.
    pub(crate) fn spawn(mut writer: WriteHalf<Box<dyn KissStream>>, params: &KissParams) -> Self {
        let (tx, mut rx) = mpsc::unbounded_channel::<Vec<u8>>();
        let task = tokio::spawn(async move {
            while let Some(bytes) = rx.recv().await {
                writer.write_all(&bytes).await?;
                writer.flush().await?;
            }
            writer.shutdown().await.ok();
            Ok::<(), std::io::Error>(())
        });
        let writer = KissWriter { tx, task };
        writer.send(params.encode());
        writer
    }

    /// Queues `bytes` (nothing if empty).
    pub(crate) fn send(&self, bytes: Vec<u8>) {
        if !bytes.is_empty() {
            self.tx.send(bytes).ok();
        }
    }

    /// The error of a writing task that ended while the driver ran.
    pub(crate) fn failed(joined: Result<std::io::Result<()>, JoinError>) -> DriverError {
        DriverError::Write(match joined {
            Ok(Err(e)) => e,
            _ => std::io::Error::other("writer stopped"),
        })
    }

    /// Lets the task write everything queued, then close the stream.
    pub(crate) async fn finish(self) -> Result<(), DriverError> {
        drop(self.tx);
        match self.task.await {
            Ok(Err(e)) => Err(DriverError::Write(e)),
            _ => Ok(()),
        }
    }
}
