//! What `linklab send` keeps queued on its link: the file is read as the
//! window opens, in I frames of N1 octets, so that the link's unsent queue
//! holds between two and three windows (k x N1 octets each) and never
//! more. A burst is then never cut short for want of data, the first I
//! frame leaves as soon as the link is up, and memory does not depend on
//! the file's size.
//!
//! The driver says when to give more: [`Request::NotifyUnsent`] asks for
//! one [`StationEvent::Unsent`](linklab_io::StationEvent::Unsent) once the
//! unsent octets fall to the low-water mark; the feed then tops the queue
//! up to the high-water mark and asks again, or releases the link at the
//! end of the file.

use linklab_io::{DriverHandle, Request};
use linklab_wire::ax25::Address;

use crate::input::ReadAhead;

/// Windows of data kept unsent at least (the low-water mark): one for the
/// burst the next acknowledgement opens, one for the time the feed takes
/// to answer.
const LOW_WINDOWS: usize = 2;

/// Windows of data kept unsent at most (the high-water mark).
const HIGH_WINDOWS: usize = 3;

/// The file being sent to one remote station.
pub(crate) struct Feed {
    source: ReadAhead,
    remote: Address,
    /// Read and not yet given to the link, from `pos` on.
    buf: Vec<u8>,
    pos: usize,
    /// The input has ended (all of it is in `buf` or given).
    ended: bool,
    /// N1 for sending and the marks; `None` until the link is up.
    sizes: Option<Sizes>,
    /// Octets still to give before asking for the next notice.
    wanted: usize,
    /// Octets and I frames given to the link so far.
    given: u64,
    frames: u64,
    /// The link was asked to release once all is acknowledged.
    released: bool,
}

#[derive(Clone, Copy)]
struct Sizes {
    n1: usize,
    low: usize,
    high: usize,
}

impl Feed {
    pub(crate) fn new(source: ReadAhead, remote: Address) -> Feed {
        Feed {
            source,
            remote,
            buf: Vec::new(),
            pos: 0,
            ended: false,
            sizes: None,
            wanted: 0,
            given: 0,
            frames: 0,
            released: false,
        }
    }

    /// The input's length if known (a regular file).
    pub(crate) fn len(&self) -> Option<u64> {
        self.source.len
    }

    /// Octets given to the link so far.
    pub(crate) fn given(&self) -> u64 {
        self.given
    }

    /// Whether feeding has started ([`Feed::start`]).
    pub(crate) fn started(&self) -> bool {
        self.sizes.is_some()
    }

    /// Whether the whole input is given and the release asked for.
    pub(crate) fn released(&self) -> bool {
        self.released
    }

    /// Starts feeding the link, whose N1 for sending is `n1` and window
    /// `k`: the notice that comes at once (the queue is empty) fills it.
    pub(crate) fn start(&mut self, handle: &DriverHandle, n1: usize, k: u8) {
        let window = usize::from(k.max(1)) * n1.max(1);
        let sizes = Sizes {
            n1: n1.max(1),
            low: LOW_WINDOWS * window,
            high: HIGH_WINDOWS * window,
        };
        self.sizes = Some(sizes);
        self.notify(handle, sizes);
    }

    /// Whether the feed waits for input: it has octets to give and less
    /// than an I frame's worth read.
    pub(crate) fn needs_input(&self) -> bool {
        self.sizes.is_some_and(|s| {
            self.wanted > 0 && !self.ended && !self.released && self.buf.len() - self.pos < s.n1
        })
    }

    /// The next block of input (for `select!`; cancel-safe).
    pub(crate) async fn next_block(&mut self) -> Option<anyhow::Result<Vec<u8>>> {
        self.source.blocks.recv().await
    }

    /// Takes a block from [`Feed::next_block`] (`None`: end of input) and
    /// gives what it can.
    pub(crate) fn on_block(
        &mut self,
        handle: &DriverHandle,
        block: Option<anyhow::Result<Vec<u8>>>,
    ) -> anyhow::Result<()> {
        match block {
            Some(block) => {
                self.buf.drain(..self.pos);
                self.pos = 0;
                self.buf.extend_from_slice(&block?);
            }
            None => self.ended = true,
        }
        self.give(handle);
        Ok(())
    }

    /// The link has `unsent` octets queued, at most the low-water mark:
    /// tops the queue up to the high-water mark.
    pub(crate) fn on_unsent(&mut self, handle: &DriverHandle, unsent: usize) {
        if let Some(sizes) = self.sizes {
            self.wanted = sizes.high.saturating_sub(unsent);
            self.give(handle);
        }
    }

    /// Octets acknowledged by the peer when `frames` of the first
    /// `accepted` I frames given were still queued or unacknowledged
    /// (`StationEvent::Outstanding`): every frame is N1 octets but the
    /// last of the input.
    pub(crate) fn acknowledged(&self, frames: usize, accepted: u64) -> u64 {
        let n1 = self.sizes.map_or(1, |s| s.n1) as u64;
        let done = accepted.saturating_sub(frames as u64);
        (done * n1).min(self.given)
    }

    /// Whether everything is given and acknowledged, by the same report.
    pub(crate) fn all_acknowledged(&self, frames: usize, accepted: u64) -> bool {
        self.released && frames == 0 && accepted == self.frames
    }

    /// Gives I frames of N1 octets while more is wanted and read; at the
    /// end of the input the rest and the release, else, once nothing more
    /// is wanted, asks for the next notice.
    fn give(&mut self, handle: &DriverHandle) {
        let Some(sizes) = self.sizes else { return };
        if self.released {
            return;
        }
        while self.wanted > 0 {
            let ready = self.buf.len() - self.pos;
            if ready == 0 && self.ended {
                handle
                    .requests
                    .send(Request::Release {
                        remote: self.remote,
                    })
                    .ok();
                self.released = true;
                return;
            }
            if ready < sizes.n1 && !self.ended {
                return;
            }
            let len = ready.min(sizes.n1);
            let data = self
                .buf
                .get(self.pos..self.pos + len)
                .unwrap_or_default()
                .to_vec();
            self.pos += len;
            handle
                .requests
                .send(Request::Send {
                    remote: self.remote,
                    data,
                })
                .ok();
            self.wanted = self.wanted.saturating_sub(len);
            self.given += len as u64;
            self.frames += 1;
        }
        self.notify(handle, sizes);
    }

    fn notify(&self, handle: &DriverHandle, sizes: Sizes) {
        handle
            .requests
            .send(Request::NotifyUnsent {
                remote: self.remote,
                octets: sizes.low,
            })
            .ok();
    }
}
