//! The ports' TNCs: connected, or being connected again and again until
//! they answer, and the tasks that read and write their byte streams.

use std::collections::BTreeMap;
use std::time::Duration;

use linklab_io::KissAddress;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::Input;
use crate::core::Core;

/// Batches of octets queued for a TNC before more are dropped.
const TNC_QUEUE: usize = 256;

/// How long a stop waits for the last octets (the DISCs) to reach a TNC.
const FLUSH_GRACE: Duration = Duration::from_secs(2);

/// A connected TNC: the queue of octets for it and its tasks.
pub(super) struct Tnc {
    writer: mpsc::Sender<Vec<u8>>,
    read: JoinHandle<()>,
    write: JoinHandle<()>,
}

/// The ports' TNCs: connected, or being connected.
#[derive(Default)]
pub(super) struct Tncs {
    up: BTreeMap<usize, Tnc>,
    connecting: BTreeMap<usize, JoinHandle<()>>,
    drops: u64,
}

impl Tncs {
    /// Connects port `port` to `address` after `delay`, and again every
    /// `delay` (at least a second) until it answers.
    pub(super) fn start(
        &mut self,
        port: usize,
        address: KissAddress,
        delay: Duration,
        input: &mpsc::Sender<Input>,
    ) {
        if let Some(old) = self.connecting.remove(&port) {
            old.abort();
        }
        let input = input.clone();
        let every = delay.max(Duration::from_secs(1));
        self.connecting.insert(
            port,
            tokio::spawn(async move {
                tokio::time::sleep(delay).await;
                loop {
                    match address.connect().await {
                        Ok(stream) => {
                            let tnc = spawn_tnc(port, stream, input.clone());
                            input.send(Input::TncUp(port, tnc)).await.ok();
                            return;
                        }
                        Err(e) => {
                            input.send(Input::TncGone(port, e.to_string())).await.ok();
                            tokio::time::sleep(every).await;
                        }
                    }
                }
            }),
        );
    }

    pub(super) fn up(&mut self, port: usize, tnc: Tnc) {
        self.connecting.remove(&port);
        if let Some(old) = self.up.insert(port, tnc) {
            old.read.abort();
            old.write.abort();
        }
    }

    /// Port `port`'s TNC is gone; whether it had been up.
    pub(super) fn down(&mut self, port: usize) -> bool {
        match self.up.remove(&port) {
            Some(tnc) => {
                tnc.read.abort();
                tnc.write.abort();
                true
            }
            None => false,
        }
    }

    pub(super) fn stop_connecting(&mut self) {
        for (_, task) in std::mem::take(&mut self.connecting) {
            task.abort();
        }
    }

    pub(super) fn flush(&mut self, core: &mut Core, log: &impl Fn(&str)) {
        for (port, tnc) in &self.up {
            let octets = core.server().take_tx(*port);
            let len = octets.len();
            if len > 0 {
                if let Err(mpsc::error::TrySendError::Full(_)) = tnc.writer.try_send(octets) {
                    self.drops += 1;
                    if self.drops <= 10 || self.drops.is_multiple_of(100) {
                        log(&format!("port {}: the TNC does not take octets as fast as they come: {len} dropped ({} times so far)", port + 1, self.drops));
                    }
                }
            }
        }
    }

    /// Lets the writers send what is queued (the DISCs), then stops.
    pub(super) async fn finish(mut self) {
        self.stop_connecting();
        for (_, tnc) in std::mem::take(&mut self.up) {
            drop(tnc.writer);
            tokio::time::timeout(FLUSH_GRACE, tnc.write).await.ok();
            tnc.read.abort();
        }
    }
}

pub(super) fn spawn_tnc(
    port: usize,
    stream: Box<dyn linklab_io::KissStream>,
    input: mpsc::Sender<Input>,
) -> Tnc {
    let (mut reader, mut writer) = tokio::io::split(stream);
    let (writer_tx, mut writer_rx) = mpsc::channel::<Vec<u8>>(TNC_QUEUE);
    let read = tokio::spawn(async move {
        let mut buf = vec![0u8; 4096];
        loop {
            let why = match reader.read(&mut buf).await {
                Ok(0) => "the KISS TNC closed the connection".to_string(),
                Ok(n) => {
                    let bytes = buf.get(..n).unwrap_or_default().to_vec();
                    if input.send(Input::TncBytes(port, bytes)).await.is_err() {
                        return;
                    }
                    continue;
                }
                Err(e) => format!("cannot read from the KISS TNC: {e}"),
            };
            input.send(Input::TncGone(port, why)).await.ok();
            return;
        }
    });
    let write = tokio::spawn(async move {
        while let Some(octets) = writer_rx.recv().await {
            if writer.write_all(&octets).await.is_err() {
                return;
            }
        }
        writer.shutdown().await.ok();
    });
    Tnc {
        writer: writer_tx,
        read,
        write,
    }
}
