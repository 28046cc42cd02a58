//! The receiving side of a KISS port: a decoder over the TNC's byte
//! stream that yields the data frames of one port and reports, in order,
//! the input it had to drop (octets between frames, damaged frames).

use std::collections::VecDeque;

use linklab_wire::kiss::{self, Command, KissError, Port};

use crate::station::{InputError, KISS_MAX_FRAME};

/// KISS decoding for one port (KISS spec, "Asynchronous framing").
#[derive(Debug, Clone)]
pub(crate) struct KissInput {
    decoder: kiss::Decoder,
    /// The decoder's garbage count already reported.
    garbage_reported: u64,
    /// Items decoded but not yet taken.
    ready: VecDeque<Result<KissItem, InputError>>,
}

/// What a KISS port's input carries for the station.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum KissItem {
    /// An AX.25 frame (a data frame's contents).
    Frame(Vec<u8>),
    /// The TNC's ACKMODE answer: the frame sent with this sequence has
    /// been transmitted.
    Transmitted(u16),
}

impl KissInput {
    /// A decoder hunting for the first FEND.
    pub(crate) fn new() -> KissInput {
        KissInput {
            decoder: kiss::Decoder::new(KISS_MAX_FRAME),
            garbage_reported: 0,
            ready: VecDeque::new(),
        }
    }

    /// The decoder's counters.
    pub(crate) fn stats(&self) -> kiss::DecoderStats {
        self.decoder.stats()
    }

    /// Queues octets from the TNC.
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        self.decoder.push(bytes);
    }

    /// The next AX.25 frame carried in a data frame on `port`, ACKMODE
    /// answer on `port`, or input dropped ([`InputError::Garbage`],
    /// [`InputError::Kiss`]); parameter frames and other ports' frames are
    /// skipped.
    pub(crate) fn next(&mut self, port: Port) -> Option<Result<KissItem, InputError>> {
        while self.ready.is_empty() {
            let item = self.decoder.next()?;
            // Octets skipped before this item; the decoder counts the octet
            // that made a frame too long as skipped too.
            let counted = self.decoder.stats().garbage_bytes;
            let own = u64::from(matches!(item, Err(KissError::FrameTooLong { .. })));
            let before = counted.saturating_sub(own);
            if before > self.garbage_reported {
                let octets = before - self.garbage_reported;
                self.ready.push_back(Err(InputError::Garbage { octets }));
            }
            self.garbage_reported = counted;
            match item {
                Ok(kiss::Frame {
                    port: p,
                    command: Command::Data(data),
                }) if p == port => self.ready.push_back(Ok(KissItem::Frame(data))),
                // A TNC's answer carries no frame; a frame with ACKMODE
                // is another host's, reflected by a KISS hub: received.
                Ok(kiss::Frame {
                    port: p,
                    command: Command::AckMode { seq, data },
                }) if p == port => self.ready.push_back(Ok(if data.is_empty() {
                    KissItem::Transmitted(seq)
                } else {
                    KissItem::Frame(data)
                })),
                Ok(_) => {}
                Err(error) => self.ready.push_back(Err(InputError::Kiss(error))),
            }
        }
        self.ready.pop_front()
    }
}
