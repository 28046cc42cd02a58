//! What the linklab workspace's tests share (a dev-dependency, never
//! published):
//!
//! - [`pair`]: one deterministic harness for two sans-IO engines
//!   ([`Pair`]), stepping virtual time from wake-up to wake-up;
//! - [`impair`]: the seeded impaired channel ([`Impaired`]) between them:
//!   loss, duplication, corruption, reordering, Gilbert-Elliott bursts;
//! - [`line`](mod@line): a full-duplex serial line ([`Line`]) that serialises HDLC
//!   frames at a bit rate over two impaired channels;
//! - [`tshark`]: Wireshark's command-line dissector as an independent
//!   oracle for the encoders of the protocol crates.
//!
//! It depends on `linklab-core` only, never on a protocol crate, so every
//! protocol crate can take it as a dev-dependency without a cycle.

pub mod impair;
pub mod line;
pub mod pair;
pub mod tshark;

pub use impair::{GilbertElliott, Impaired, Impairment};
pub use line::{random_octets, Line};
pub use pair::Pair;
