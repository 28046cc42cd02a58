//! What a data link tells its user (the DL primitives of AX.25 v2.2 C4.1).

use core::time::Duration;

use linklab_wire::ax25::{FrmrInfo, Pid, XidError};
use linklab_wire::control::Modulus;
use thiserror::Error;

use crate::config::RecoveryMode;

/// AX.25 version of an established link (6.3.1, 6.3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Version {
    /// Set up with SABM: modulo 8, REJ, no segmentation.
    V2_0,
    /// Set up with SABME: modulo 128, SREJ or REJ, segmentation.
    V2_2,
}

/// Why a link was released in an orderly way (DL-DISCONNECT, C4.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DisconnectReason {
    /// Our DISC was answered by UA (DL-DISCONNECT confirm).
    LocalRequest,
    /// We gave up waiting for the answer to our DISC after N2 tries (error H).
    ReleaseTimeout,
    /// The peer sent DISC.
    RemoteRequest,
    /// The peer sent DM while connected (error E) or refused a connection.
    RemoteDm,
    /// The peer answered our SABM/SABME with DM: connection refused.
    Refused,
    /// We abandoned a connection attempt at the user's request.
    Abandoned,
}

/// Why a link failed (DL-ERROR codes G, I, T, U, then DL-DISCONNECT).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FailureReason {
    /// G: no answer to N2 SABM/SABME.
    ConnectTimeout,
    /// I: N2 T1 expiries with sent data unacknowledged, or the oldest
    /// unacknowledged I frame sent again N2 times. Also an NRM or ARM
    /// secondary that heard nothing from its primary for T3 while it had
    /// data unacknowledged.
    UnacknowledgedData,
    /// T: N2 T1 expiries without an answer to the enquiry. Also an NRM or
    /// ARM secondary that heard nothing from its primary for T3.
    NoResponseToEnquiry,
    /// U: N2 T1 expiries while the peer stayed busy.
    PeerBusy,
}

/// A protocol error (DL-ERROR indication, C4.3 error codes). The link
/// keeps going as the SDL prescribes; these are for logs and tests.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LinkError {
    /// A: F = 1 received but no P = 1 outstanding.
    #[error("A: F=1 received but P=1 not outstanding")]
    UnexpectedFinal,
    /// C: UA received while connected or disconnected.
    #[error("C: unexpected UA")]
    UnexpectedUa,
    /// D: UA without F = 1 in answer to SABM(E) or DISC sent with P = 1.
    #[error("D: UA received without F=1 when SABM(E) or DISC was sent with P=1")]
    UaWithoutFinal,
    /// E: DM received while connected.
    #[error("E: DM received while connected")]
    DmWhileConnected,
    /// F: the peer reset the link with SABM(E).
    #[error("F: data link reset by the peer (SABM/SABME received while connected)")]
    ResetByPeer,
    /// J: N(R) outside V(A)..V(S).
    #[error("J: N(R) = {nr} is outside V(A) = {va} .. V(S) = {vs}")]
    NrSequence {
        /// N(R) received.
        nr: u8,
        /// V(A) at the time.
        va: u8,
        /// Highest V(S) at the time.
        vs: u8,
    },
    /// K: FRMR received; the link is re-established.
    #[error("K: FRMR received ({}); link re-established", frmr_text(.0))]
    Frmr(Option<FrmrInfo>),
    /// L: a frame whose control field is invalid or not implemented
    /// (fig. C4.4a); re-established while connected.
    #[error("L: control field {} invalid or not implemented", hex(.control))]
    ControlFieldInvalid {
        /// The control field as received (one or two octets).
        control: Vec<u8>,
    },
    /// M: an information field in an S or U frame that may carry none
    /// (fig. C4.4a); re-established while connected.
    #[error("M: information field received in a U or S frame that allows none (control field {})", hex(.control))]
    InfoNotPermitted {
        /// The control field as received (one or two octets).
        control: Vec<u8>,
    },
    /// N: a frame too short for its type (fig. C4.4a); re-established
    /// while connected.
    #[error("N: length of frame incorrect for frame type (control field {})", hex(.control))]
    FrameLength {
        /// The control field as received (one or two octets).
        control: Vec<u8>,
    },
    /// O: I frame longer than N1.
    #[error("O: I frame with {len} octets of information exceeds N1 = {n1}")]
    IFrameTooLong {
        /// Octets received.
        len: usize,
        /// N1 in force.
        n1: usize,
    },
    /// S: I frame received as a response.
    #[error("S: I frame received as a response")]
    IResponse,
    /// A segment arrived out of order or malformed (6.6, C6): the partly
    /// reassembled data unit is dropped.
    #[error("reassembly error: {0}")]
    Reassembly(&'static str),
    /// MDL error A: XID command without P = 1; not answered (fig. C5.1).
    #[error("MDL-A: XID command without P=1")]
    XidWithoutPoll,
    /// MDL error B: XID response while no XID command was outstanding
    /// (fig. C5.1).
    #[error("MDL-B: unexpected XID response")]
    UnexpectedXidResponse,
    /// MDL error D: XID response without F = 1 (fig. C5.2).
    #[error("MDL-D: XID response without F=1")]
    XidWithoutFinal,
    /// An XID information field that cannot be decoded (4.3.3.7): a
    /// command is not answered, a response ends the negotiation as if
    /// unanswered.
    #[error("XID information field not understood: {0}")]
    BadXid(XidError),
    /// A data unit queued before XID negotiation no longer fits: N1 became
    /// smaller or the peer refused segmentation (6.3.2). It was discarded.
    #[error("a queued data unit of {len} octets cannot be sent with N1 = {n1} and segmentation {segmenter}; discarded", segmenter = if *.segmenter { "on" } else { "off" })]
    DataDiscarded {
        /// Octets of the data unit.
        len: usize,
        /// N1 for sending at the time.
        n1: usize,
        /// Whether the segmenter was in use.
        segmenter: bool,
    },
}

/// The operating parameters of a link, as set up by the mode-setting
/// command and XID negotiation (AX.25 v2.2 6.3.2, 4.3.3.7 fig. 4.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LinkParams {
    /// REJ, SREJ or SREJ with the multiframe option (HDLC Optional
    /// Functions; "the lesser of the selection offered").
    pub recovery: RecoveryMode,
    /// Segmenter/reassembler agreed (HDLC Optional Functions bit 22):
    /// data units longer than N1 may be sent segmented (6.6).
    pub segmenter: bool,
    /// N1 for sending, in octets: at most the peer's I Field Length
    /// Receive ("a transmitting TNC may not exceed this size").
    pub n1_tx: usize,
    /// N1 for receiving, in octets: what this station notified
    /// ([`Config::n1`](crate::Config::n1)).
    pub n1_rx: usize,
    /// k for sending: at most the peer's Window Size Receive.
    pub k_tx: u8,
    /// k for receiving: what this station notified (its configured window).
    pub k_rx: u8,
    /// T1 agreed ("the greater of the values offered"), before scaling for
    /// digipeaters.
    pub t1: Duration,
    /// N2 agreed ("the greater of the values offered").
    pub n2: u8,
}

/// How an XID negotiation ended (Appendix C5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Negotiation {
    /// Our XID command was answered by an XID response (MDL-NEGOTIATE
    /// confirm, fig. C5.2).
    Agreed,
    /// We answered the peer's XID command (fig. C5.1).
    Answered,
    /// The peer answered our XID command with FRMR or DM: it does not
    /// negotiate, so the v2.0 defaults of 6.3.2 apply to what it accepts
    /// (REJ, no segmenter, N1 <= 256, k <= 7); the link stays up (fig.
    /// C5.2, MDL-ERROR E).
    Refused,
    /// N2 XID commands went unanswered (MDL-ERROR C, fig. C5.2) or the
    /// response was undecodable: the v2.2 defaults of 6.3.2 apply to what
    /// the peer accepts (N1 <= 256, k <= 32, no segmenter); the link stays up.
    NoAnswer,
}

/// Something the user of a [`DataLink`](crate::DataLink) must know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The link is up (DL-CONNECT confirm or indication). Also raised
    /// again after a link reset that discarded queued or unacknowledged
    /// data, so the user knows data may have been lost.
    Connected {
        /// v2.0 or v2.2.
        version: Version,
        /// True if the peer set the link up (indication), false if we did
        /// (confirm).
        incoming: bool,
    },
    /// A data unit received, reassembled if it was segmented (DL-DATA
    /// indication).
    Data {
        /// Its protocol identifier.
        pid: Pid,
        /// Its octets.
        data: Vec<u8>,
    },
    /// The link was released (DL-DISCONNECT).
    Disconnected {
        /// Why.
        reason: DisconnectReason,
    },
    /// The link failed and is now disconnected; queued data was discarded.
    LinkFailure {
        /// Why.
        reason: FailureReason,
    },
    /// A protocol error was seen (DL-ERROR indication).
    Error(LinkError),
    /// Parameters were negotiated with XID, or the attempt ended
    /// (MDL-NEGOTIATE confirm or MDL-ERROR indication, Appendix C5).
    Negotiated {
        /// How the exchange ended.
        outcome: Negotiation,
        /// The parameters now in force.
        params: LinkParams,
    },
    /// A UI frame from the remote station (DL-UNIT-DATA indication, C4.1,
    /// 4.3.3.6).
    UnitData {
        /// Its protocol identifier.
        pid: Pid,
        /// Its information field.
        data: Vec<u8>,
    },
}

/// The FRMR information field for an error message; the width of the
/// rejected control field shows whether it came from a modulo-128 link.
fn frmr_text(info: &Option<FrmrInfo>) -> String {
    match info {
        Some(frmr) if frmr.rejected_control > 0xFF => frmr.display(Modulus::Mod128).to_string(),
        Some(frmr) => frmr.display(Modulus::Mod8).to_string(),
        None => "information field missing or not understood".into(),
    }
}

/// Octets in hex as received, e.g. `0xCB` or `0x01 0x1F`.
fn hex(octets: &[u8]) -> String {
    let text: Vec<String> = octets.iter().map(|b| format!("0x{b:02X}")).collect();
    text.join(" ")
}
