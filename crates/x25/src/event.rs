//! What the packet layer tells its user.

use linklab_wire::control::Modulus;

use crate::packet::{DecodeError, DteAddress, Facility, Lci};

/// The flow control parameters in force on a virtual call, after
/// negotiation (X.25 (10/96) 6.12).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CallParams {
    /// Sequence numbering of the call.
    pub modulus: Modulus,
    /// P for data packets this DTE sends.
    pub tx_packet_size: usize,
    /// P for data packets this DTE receives.
    pub rx_packet_size: usize,
    /// W for data packets this DTE sends.
    pub tx_window: u8,
    /// W for data packets this DTE receives.
    pub rx_window: u8,
    /// Both DTEs agreed to the D-bit procedure (4.3.4).
    pub d_bit: bool,
}

/// An event for the user of a [`Dte`](crate::Dte).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The restart procedure completed (3.3): every virtual call is gone
    /// (each was reported with [`Event::Cleared`]) and calls may be made.
    Restarted {
        /// The restarting cause of the RESTART packet that began it.
        cause: u8,
        /// Its diagnostic code.
        diagnostic: Option<u8>,
        /// True if the peer began it (RESTART INDICATION received).
        by_peer: bool,
    },
    /// RESTART REQUEST went unanswered after R20 retransmissions (T20,
    /// Annex D): the packet layer is down until [`Dte::start`](crate::Dte::start).
    RestartFailed,
    /// An INCOMING CALL (4.1.3): answer with
    /// [`Dte::accept`](crate::Dte::accept) or
    /// [`Dte::clear`](crate::Dte::clear).
    IncomingCall {
        /// Its logical channel.
        lci: Lci,
        /// The calling DTE address.
        calling: DteAddress,
        /// The called DTE address.
        called: DteAddress,
        /// Its facilities.
        facilities: Vec<Facility>,
        /// Its call user data (e.g. 0xCC for IP, RFC 1356).
        user_data: Vec<u8>,
        /// Its modulus.
        modulus: Modulus,
    },
    /// The call is in the data transfer state (CALL CONNECTED received
    /// or CALL ACCEPTED sent, 4.1.4).
    Connected {
        /// Its logical channel.
        lci: Lci,
        /// Parameters in force.
        params: CallParams,
    },
    /// A whole message: one complete packet sequence reassembled (4.3.5).
    Data {
        /// Its logical channel.
        lci: Lci,
        /// The Q bit of its packets.
        q: bool,
        /// True if a packet of the sequence had D = 1 (its delivery is
        /// confirmed to the sender by the P(R) this DTE now sends).
        d: bool,
        /// The user data.
        data: Vec<u8>,
    },
    /// The P(R) from the remote DTE acknowledged the last packet of a
    /// message sent with D = 1: end-to-end confirmation (4.3.4). One
    /// event per such message, in order.
    Confirmed {
        /// Its logical channel.
        lci: Lci,
    },
    /// An INTERRUPT arrived (4.3.2); it was confirmed.
    Interrupt {
        /// Its logical channel.
        lci: Lci,
        /// Interrupt user data.
        data: Vec<u8>,
    },
    /// Our INTERRUPT was confirmed.
    InterruptConfirmed {
        /// Its logical channel.
        lci: Lci,
    },
    /// The virtual call is over and its logical channel free (4.1.7, or
    /// a restart).
    Cleared {
        /// Its logical channel.
        lci: Lci,
        /// The clearing cause (ours if we cleared).
        cause: u8,
        /// The diagnostic code.
        diagnostic: Option<u8>,
        /// True if the peer cleared.
        by_peer: bool,
    },
    /// The call was reset (4.4.3): data in transit and queued messages
    /// were discarded, sequence numbers restart at 0.
    Reset {
        /// Its logical channel.
        lci: Lci,
        /// The resetting cause.
        cause: u8,
        /// The diagnostic code (e.g. 1, invalid P(S)).
        diagnostic: Option<u8>,
        /// True if the peer reset.
        by_peer: bool,
    },
    /// A DIAGNOSTIC packet arrived (5.6).
    Diagnostic {
        /// Diagnostic code.
        code: u8,
        /// The start of the packet it concerns.
        explanation: Vec<u8>,
    },
    /// A received packet did not decode and was dropped (after resetting
    /// or clearing its call if it named one, 3.4).
    Undecodable(DecodeError),
}
