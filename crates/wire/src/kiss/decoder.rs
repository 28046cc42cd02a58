//! A streaming, sans-IO decoder of KISS frames from a serial byte stream.

use super::{Frame, KissError, FEND, FESC, TFEND, TFESC};

/// Counters kept by a [`Decoder`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DecoderStats {
    /// Frames decoded without error.
    pub frames: u64,
    /// Octets discarded while hunting for a FEND: those before the first
    /// FEND, and the rest of a frame dropped for a bad escape or its length.
    pub garbage_bytes: u64,
    /// Error items yielded (one per dropped frame).
    pub errors: u64,
}

/// Where the decoder is in the byte stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Discarding octets up to the next FEND.
    Hunt,
    /// Inside a frame, after a FEND.
    Frame,
    /// Inside a frame, just after FESC.
    Escape,
}

/// Decodes KISS frames from a serial byte stream (KISS spec, "Asynchronous
/// framing").
///
/// Feed it octets with [`push`](Decoder::push) as they arrive, in chunks of
/// any size, then take items with [`next`](Iterator::next) until it returns
/// `None`; it returns `None` whenever the pushed input is used up, so it is
/// not a fused iterator — push more and iterate again.
///
/// The decoder resynchronises after anything: octets before the first FEND
/// are discarded (and counted); FENDs back to back are empty frames and are
/// skipped silently; a frame with a bad escape (FESC followed by anything
/// but TFEND or TFESC) or longer than `max_frame_len` yields one error, and
/// decoding resumes at the next FEND; a frame whose contents
/// [`Frame::parse`] rejects (unknown command, wrong parameter length)
/// yields that error. It never panics.
///
/// Memory: the decoder holds the input pushed but not yet decoded, plus one
/// frame's contents of at most `max_frame_len + 1` octets (`Vec` growth may
/// reserve up to twice that).
#[derive(Debug, Clone)]
pub struct Decoder {
    max_frame_len: usize,
    input: Vec<u8>,
    read: usize,
    state: State,
    contents: Vec<u8>,
    stats: DecoderStats,
}

impl Decoder {
    /// A decoder that drops frames with more than `max_frame_len` octets
    /// after the type octet (unescaped; for a data frame, the AX.25 frame's
    /// length). It starts hunting for a FEND.
    pub fn new(max_frame_len: usize) -> Decoder {
        Decoder {
            max_frame_len,
            input: Vec::new(),
            read: 0,
            state: State::Hunt,
            contents: Vec::new(),
            stats: DecoderStats::default(),
        }
    }

    /// The limit given to [`new`](Decoder::new).
    pub fn max_frame_len(&self) -> usize {
        self.max_frame_len
    }

    /// Queues octets received from the serial line for decoding.
    pub fn push(&mut self, bytes: &[u8]) {
        if self.read > 0 && self.read >= self.input.len() / 2 {
            self.input.drain(..self.read);
            self.read = 0;
        }
        self.input.extend_from_slice(bytes);
    }

    /// Octets held: input pushed but not yet decoded, plus the contents of
    /// the frame being collected.
    pub fn buffered(&self) -> usize {
        self.input
            .len()
            .saturating_sub(self.read)
            .saturating_add(self.contents.len())
    }

    /// The counters so far.
    pub fn stats(&self) -> DecoderStats {
        self.stats
    }

    /// Processes one octet; returns an item when a frame ends or is dropped.
    fn step(&mut self, octet: u8) -> Option<Result<Frame, KissError>> {
        match (self.state, octet) {
            (State::Hunt, FEND) => {
                self.state = State::Frame;
                None
            }
            (State::Hunt, _) => {
                self.stats.garbage_bytes = self.stats.garbage_bytes.saturating_add(1);
                None
            }
            (State::Frame, FEND) if self.contents.is_empty() => None,
            (State::Frame, FEND) => {
                let item = Frame::parse(&self.contents);
                self.contents.clear();
                Some(item)
            }
            (State::Frame, FESC) => {
                self.state = State::Escape;
                None
            }
            (State::Frame, _) => self.collect(octet),
            (State::Escape, TFEND) => {
                self.state = State::Frame;
                self.collect(FEND)
            }
            (State::Escape, TFESC) => {
                self.state = State::Frame;
                self.collect(FESC)
            }
            (State::Escape, _) => {
                self.contents.clear();
                // A FEND after FESC ends this frame and opens the next one.
                self.state = if octet == FEND {
                    State::Frame
                } else {
                    State::Hunt
                };
                Some(Err(KissError::BadEscape { octet }))
            }
        }
    }

    /// Appends an unescaped octet to the frame, or drops the frame if it
    /// would exceed the limit.
    fn collect(&mut self, octet: u8) -> Option<Result<Frame, KissError>> {
        if self.contents.len() > self.max_frame_len {
            self.contents.clear();
            self.state = State::Hunt;
            self.stats.garbage_bytes = self.stats.garbage_bytes.saturating_add(1);
            return Some(Err(KissError::FrameTooLong {
                max: self.max_frame_len,
            }));
        }
        self.contents.push(octet);
        None
    }
}

impl Iterator for Decoder {
    type Item = Result<Frame, KissError>;

    /// The next frame or error from the input pushed so far, or `None` when
    /// that input is used up.
    fn next(&mut self) -> Option<Self::Item> {
        while let Some(&octet) = self.input.get(self.read) {
            self.read = self.read.saturating_add(1);
            if let Some(item) = self.step(octet) {
                match &item {
                    Ok(_) => self.stats.frames = self.stats.frames.saturating_add(1),
                    Err(_) => self.stats.errors = self.stats.errors.saturating_add(1),
                }
                return Some(item);
            }
        }
        self.input.clear();
        self.read = 0;
        None
    }
}
