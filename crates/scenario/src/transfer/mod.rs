//! One message over a half-duplex radio link: two AX.25 [`DataLink`]
//! engines as stations on a [`RadioChannel`], driven in virtual time by
//! [`linklab_sim::drive`] from the wake-ups in an [`EventQueue`] (Ronan,
//! Long and Walsh, section III.B, Table I and section IV).
//!
//! # The set-up
//! Station 0 (the sender) connects to station 1 (the receiver) with SABM
//! (AX.25 v2.0, modulo 8, window k, N1 = 255, no XID). Once the link is up
//! and the channel has been quiet for a second, the message is offered to
//! the sender at once, cut into information fields of N1 octets (7182
//! octets: 28 full fields and one of 42).
//!
//! # Two ways to attach an engine to the radio
//! - **Directly** ([`TransferConfig::path`] `None`): the engine is the
//!   TNC, as the model of section III.B idealises it. Frames go straight to
//!   the channel; `ChannelBusy` drives `set_channel_busy` (T1 pauses while
//!   the channel is busy) and `TransmitterKeyed` drives `transmitter_keyed`
//!   (a pending acknowledgement rides in the transmission).
//! - **Host and KISS TNC** ([`KissPath`]), as in the experiment of section
//!   IV: the engine runs in the host (the Linux AX.25 stack), every frame
//!   it emits waits [`HostConfig::latency`] in the host, crosses the serial
//!   link and the TNC's processor ([`Tnc`]) and only then reaches the
//!   channel; a received frame takes the reverse path and the host latency
//!   again before the engine sees it. KISS carries no carrier-detect or
//!   key-up indication to the host, so the engine gets neither hint.
//!
//! # Above the engines
//! An application offers the message and consumes what arrives: by
//! default ([`run_transfer`]) the message cut into information fields of
//! N1 octets, the sender done when its engine has every I frame
//! acknowledged; for the measured tables of Ronan et al. the real bundle
//! agent over the AX.25 convergence layer (`ronan::measured`), the sender
//! done when its CL has the bundle acknowledged.
//!
//! # Acknowledgement
//! The sender sets P on the last I frame of a window
//! (`poll_on_last_i_frame`, AX.25 v2.2 6.4.11), and the receiver answers
//! P = 1 at once with RR F = 1 (6.4.2.1). Unpolled I frames are
//! acknowledged as [`StackConfig::ack_policy`] says: never on their own in
//! the model's set-up ([`AckPolicy::OnPollImmediately`]), after T2 in the
//! Linux stack ([`StackConfig::linux`]).
//!
//! # Through a digipeater
//! With [`TransferConfig::digipeater`] the two stations do not hear each
//! other; a third station between them, N0DIGI, repeats every frame
//! addressed through it (`linklab_wire::ax25::digipeat`, AX.25 v2.2
//! 3.12.5), as a TNC with DIGIPEAT ON does, from its own transmit queue
//! on the same channel. Both ends address their frames via N0DIGI and
//! take a frame only once it has been repeated, so every frame is on the
//! air twice. The span then ends with the digipeater's transmission that
//! carried the last acknowledgement.
//!
//! # A link drop
//! [`TransferConfig::link_drop`] takes the two stations out of each
//! other's range in the middle of the message ([`LinkDrop`]): nothing
//! either sends reaches the other until the sender's engine has given
//! the link up (N2 T1 expiries, AX.25 v2.2 C4.3 error I or T); a while
//! later they are in range again and the sender sets the link up anew,
//! as a DTN node with the contact back dials its neighbour. What the
//! application does with the data the failed link held is its own: the
//! bundle agent over the AX.25 CL resumes the bundle from what its peer
//! acknowledged (reactive fragmentation).
//!
//! # What is timed: the paper's `T_message`
//! The span runs from the moment the whole message is offered to the
//! sender's engine to the moment the receiver's transmitter drops after
//! the transmission carrying the frame that acknowledged the last I frame
//! (end of its TXTAIL): the model charges each window
//! `T_txdelay + frames + T_txtail + p T_slot` for the data and
//! `T_ack = T_txdelay + RR + T_txtail + p T_slot` for its acknowledgement.
//! Within the span the idle channel time divided by the number of key-ups
//! is the mean wait per transmission ([`TransferOutcome::mean_access_wait`];
//! with a TNC it includes the host and TNC turnaround).
//!
//! # Where it is written
//! - `config`: what a transfer is set up with ([`TransferConfig`] and
//!   the types it holds);
//! - `testbed`: the loop that moves the frames between engines, hosts,
//!   TNCs and the channel;
//! - `measure`: what is counted and timed, and the [`TransferOutcome`]
//!   made of it;
//! - [`HostAndTnc`]: one station's host and KISS TNC, also used by the IP
//!   hosts of [`crate::ronan::tcpip`] and by `linklab_advise`'s probe;
//! - `app`: what runs above the engines.
//!
//! [`DataLink`]: linklab_link::DataLink
//! [`RadioChannel`]: linklab_channel::RadioChannel
//! [`EventQueue`]: linklab_sim::EventQueue
//! [`Tnc`]: linklab_channel::Tnc
//! [`AckPolicy::OnPollImmediately`]: linklab_link::AckPolicy::OnPollImmediately

mod app;
mod config;
mod error;
mod host;
mod measure;
mod testbed;
#[cfg(test)]
mod tests;

use linklab_core::Streams;

pub(crate) use app::Application;
use app::RawMessage;
pub use config::{Background, Clock, HostConfig, KissPath, LinkDrop, StackConfig, TransferConfig};
pub use error::TransferError;
pub use host::{HostAndTnc, Tagged};
pub use measure::{Relayed, TransferOutcome};
pub use testbed::replication_stations;
use testbed::Testbed;

/// The sender's station number, on the channel and among the engines.
pub(crate) const SENDER: usize = 0;
/// The receiver's station number.
pub(crate) const RECEIVER: usize = 1;

/// Simulates one transfer with the random streams `streams` (payload
/// octets, slot-clock phases, persistence draws). Deterministic for given
/// streams.
pub fn run_transfer(
    config: &TransferConfig,
    streams: &Streams,
) -> Result<TransferOutcome, TransferError> {
    let mut app = RawMessage::new(message(config, streams), config.n1);
    run_transfer_with(config, streams, &mut app)
}

/// The message of `config`: its octets drawn from the stream `payload`.
pub(crate) fn message(config: &TransferConfig, streams: &Streams) -> Vec<u8> {
    let mut payload = streams.stream("payload");
    (0..config.message_octets)
        .map(|_| payload.below(256) as u8)
        .collect()
}

/// [`run_transfer`] with `app` above the engines instead of the message
/// cut into information fields.
pub(crate) fn run_transfer_with(
    config: &TransferConfig,
    streams: &Streams,
    app: &mut dyn Application,
) -> Result<TransferOutcome, TransferError> {
    Testbed::new(config, streams, app)?.run()
}
