//! NORM, the NACK-Oriented Reliable Multicast protocol (RFC 5740), as
//! sans-IO engines.
//!
//! - [`wire`]: the messages of RFC 5740 section 4 (NORM_DATA, NORM_INFO,
//!   NORM_CMD in all its flavors, NORM_NACK, NORM_ACK) and the header
//!   extensions EXT_FTI, EXT_CC and EXT_RATE, for FEC Encoding ID 5.
//! - [`fec`]: the Reed-Solomon erasure code of RFC 5510 (FEC Encoding ID
//!   5, GF(2^8)), which libnorm uses by default.
//! - [`Sender`] and [`Receiver`]: the protocol. A sender segments objects
//!   into source blocks (RFC 5740 section 5.1.1), sends them paced at a
//!   fixed rate or at the NORM-CC rate (section 5.5) with optional
//!   proactive parity, repairs from NACKs with parity or source symbols
//!   (sections 5.3-5.4), probes the group round-trip time with
//!   NORM_CMD(CC) (section 5.1.2), flushes at the end and can ask for
//!   positive acknowledgement of a watermark (section 5.1.3). A receiver
//!   synchronises on a sender, detects loss from the sender's progress and
//!   FLUSH, NACKs after a random backoff scaled by the sender's GRTT,
//!   backoff factor and group size (section 5.3), decodes blocks from any
//!   k symbols, answers CC probes with EXT_CC feedback (section 5.5.2)
//!   and delivers whole objects.
//!
//! Like the other linklab engines they never do I/O and never read a clock:
//! every call that can start a timer takes `now`, datagrams come in through
//! `handle_datagram(now, from, bytes)` and leave through
//! `poll_transmit(now) -> Option<Transmit>`; `poll_timeout` says when to
//! call `handle_timeout`, and `poll_event` drains what happened. Addresses
//! are [`std::net::SocketAddr`]s that the driver (a UDP socket, or a
//! simulated network) interprets.
//!
//! Interoperability with libnorm (checked by `interop/linklab-norm.sh`
//! against Debian's libnorm 1.5.9): data and file objects, FEC Encoding ID
//! 5 with libnorm's generator matrix, EXT_FTI in every NORM_DATA, unicast
//! NACKs. Two details follow libnorm rather than the letter of the RFCs:
//! the last octet of EXT_FTI carries the number of parity symbols per
//! block (RFC 5510 names the maximum number of encoding symbols), and the
//! parity of a block shorter than k is computed as if the missing source
//! symbols were zeros, with parity ESIs starting right after the block's
//! own source symbols. Not implemented: NORM streams, NORM_INFO content,
//! FEC schemes other than ID 5, and the multicast PLR (potential limiting
//! receiver) election beyond the CLR; NORM-CC keeps the essential loop —
//! receivers' TFRC rate from their loss event fraction and RTT, the CLR
//! chosen as the slowest receiver, slow start, and halving without
//! feedback.

pub mod cc;
pub mod fec;
mod layout;
mod receiver;
mod sender;
mod timer;
pub mod wire;

pub use layout::Layout;
pub use receiver::{
    AbortReason, Feedback, Receiver, ReceiverConfig, ReceiverEvent, ReceiverStats, SyncPolicy,
};
pub use sender::{
    ConfigError, EnqueueError, ObjectKind, Sender, SenderConfig, SenderEvent, SenderStats,
};
pub use wire::NodeId;

use std::net::SocketAddr;

/// A datagram to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transmit {
    /// Where it goes.
    pub destination: SocketAddr,
    /// The NORM message.
    pub payload: Vec<u8>,
}

/// How a sender chooses its rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rate {
    /// A fixed rate (the paper's NORM runs at 128 and 84 kbit/s).
    Fixed {
        /// Bits per second of NORM messages plus 44 octets of IP/UDP
        /// header each.
        bits_per_second: f64,
    },
    /// NORM-CC (RFC 5740 section 5.5), starting at `initial_bps` and kept
    /// within `min_bps`..=`max_bps`.
    Cc {
        /// Rate before the first feedback.
        initial_bps: f64,
        /// Lower bound.
        min_bps: f64,
        /// Upper bound.
        max_bps: f64,
    },
}

impl Rate {
    /// The starting rate in octets per second, if the rate is valid.
    fn initial_bytes_per_second(&self) -> Option<f64> {
        let ok = |x: f64| x.is_finite() && x > 0.0;
        match *self {
            Rate::Fixed { bits_per_second } => ok(bits_per_second).then_some(bits_per_second / 8.0),
            Rate::Cc {
                initial_bps,
                min_bps,
                max_bps,
            } => (ok(initial_bps) && ok(min_bps) && ok(max_bps) && min_bps <= max_bps)
                .then_some(initial_bps.clamp(min_bps, max_bps) / 8.0),
        }
    }
}
