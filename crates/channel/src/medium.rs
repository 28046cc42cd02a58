//! What the simulator needs from a medium: the [`Medium`] trait and the
//! values it hands out.

use linklab_core::Instant;

/// A station attached to a medium, numbered from 0 in the order the
/// medium was built with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StationId(pub usize);

/// What became of one frame at one receiver.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// Received without error.
    Intact,
    /// At least one bit error: the FCS check fails at the receiver.
    BitErrors,
    /// Another transmission the receiver hears overlapped the frame.
    Collision,
    /// The receiver was itself transmitting (half duplex: it cannot hear).
    ReceiverKeyed,
}

/// One frame arriving at one receiver. A broadcast medium hands out one
/// delivery per receiver in range, each with its own [`Outcome`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// When the last bit (closing flag) arrived.
    pub at: Instant,
    /// The sending station.
    pub from: StationId,
    /// The receiving station.
    pub to: StationId,
    /// The frame body as given to [`Medium::transmit`].
    pub frame: Vec<u8>,
    /// Whether it arrived intact, and if not, why.
    pub outcome: Outcome,
}

impl Delivery {
    /// Whether the frame arrived without error (an engine should see only
    /// these; the rest fail the FCS check or are never decoded).
    pub fn is_intact(&self) -> bool {
        self.outcome == Outcome::Intact
    }
}

/// Things a medium reports besides deliveries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MediumEvent {
    /// The channel as `station` sees it turned busy or clear: carrier from
    /// another station (after the DCD detection delay) or its own
    /// transmitter keyed. Feed it to the station's engine
    /// (`set_channel_busy`).
    ChannelBusy {
        /// The station whose view changed.
        station: StationId,
        /// Busy (`true`) or clear.
        busy: bool,
        /// When.
        at: Instant,
    },
    /// `station` keyed its transmitter (start of TXDELAY).
    TransmitterKeyed {
        /// The station.
        station: StationId,
        /// When.
        at: Instant,
    },
    /// `station`'s first data bit went out (end of TXDELAY).
    TransmissionStarted {
        /// The station.
        station: StationId,
        /// When.
        at: Instant,
    },
    /// `station` finished sending one frame of `octets` body octets; the
    /// frame has left its transmit queue.
    FrameSent {
        /// The station.
        station: StationId,
        /// Body length of the frame.
        octets: usize,
        /// When its last bit went out.
        at: Instant,
    },
    /// `station` released its transmitter (end of TXTAIL).
    TransmissionEnded {
        /// The station.
        station: StationId,
        /// When.
        at: Instant,
    },
}

/// A sans-IO model of a transmission medium, driven by the simulator's
/// event loop exactly like a protocol engine (docs/architecture.md, "the one
/// rule"): inputs are calls that take `now`, outputs are drained by
/// polling, and the medium never reads a clock.
///
/// The loop: call [`handle_timeout`](Medium::handle_timeout) whenever
/// virtual time reaches [`poll_timeout`](Medium::poll_timeout), hand every
/// frame an engine emits to [`transmit`](Medium::transmit), and after each
/// call drain [`poll_delivery`](Medium::poll_delivery) and
/// [`poll_event`](Medium::poll_event).
///
/// Randomness (persistence draws, bit errors) comes from seeded streams
/// the medium takes from a `linklab_core::Streams` factory when it is built,
/// one stream per station and receiver, so a change in one station's
/// traffic never shifts the numbers another station draws (common random
/// numbers). That is why `handle_timeout` takes no generator.
pub trait Medium {
    /// Number of stations attached.
    fn stations(&self) -> usize;

    /// Queues `frame` (an HDLC frame body: address through information
    /// field, without flags or FCS) for sending by `from` at `now`. A
    /// station number out of range is ignored.
    fn transmit(&mut self, now: Instant, from: StationId, frame: Vec<u8>);

    /// Advances the model to `now`, handling everything due at or before
    /// it.
    fn handle_timeout(&mut self, now: Instant);

    /// When the medium next needs [`handle_timeout`](Medium::handle_timeout),
    /// if ever.
    fn poll_timeout(&self) -> Option<Instant>;

    /// The next frame arrival, in time order.
    fn poll_delivery(&mut self) -> Option<Delivery>;

    /// The next channel event, in time order.
    fn poll_event(&mut self) -> Option<MediumEvent>;
}
