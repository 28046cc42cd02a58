//! How an agent is set up and what applications ask of it.

use std::time::Duration;

use hardy_bpv7::crc::CrcType;
use hardy_bpv7::eid::Eid;

use crate::bundle::StatusKind;
#[cfg(doc)]
use linklab_core::Instant;

/// How an agent is set up.
#[derive(Debug, Clone)]
pub struct Config {
    /// This node's ID (RFC 9171 4.2.5.2): `ipn:N.0` or `dtn://name/`. It is
    /// the source of the status reports the agent sends.
    pub node: Eid,
    /// DTN time (milliseconds since 2000-01-01 UTC, 4.2.6) at
    /// [`Instant::ZERO`]: how the agent turns the `now` it is given into
    /// creation timestamps and lifetimes.
    pub dtn_time_at_zero: u64,
    /// CRC type of the blocks of bundles created here (4.2.1); CRC-32C by
    /// default.
    pub crc_type: CrcType,
    /// Hop limit of a Hop Count block (4.4.3) put into bundles created here;
    /// none by default.
    pub hop_limit: Option<u64>,
    /// How long a bundle whose transfer failed waits before it is offered
    /// to a link again.
    pub retry_after: Duration,
    /// Lifetime of the status reports this node sends.
    pub report_lifetime: Duration,
}

impl Config {
    /// Defaults for node `node`.
    pub fn new(node: Eid) -> Config {
        Config {
            node,
            dtn_time_at_zero: 0,
            crc_type: CrcType::CRC32_CASTAGNOLI,
            hop_limit: None,
            retry_after: Duration::from_secs(30),
            report_lifetime: Duration::from_secs(24 * 3600),
        }
    }
}

/// What an application asks the agent to send (RFC 9171 5.2).
#[derive(Debug, Clone)]
pub struct SendRequest {
    /// Source endpoint: one on this node.
    pub source: Eid,
    /// Destination endpoint.
    pub destination: Eid,
    /// The application data unit.
    pub payload: Vec<u8>,
    /// Lifetime (4.3.1).
    pub lifetime: Duration,
    /// Where status reports go; the source if `None`.
    pub report_to: Option<Eid>,
    /// Status reports asked for (4.2.3).
    pub reports: Vec<StatusKind>,
    /// Whether reports carry the time of the event.
    pub report_status_time: bool,
    /// Whether the bundle may be fragmented (the inverse of "bundle must
    /// not be fragmented", 4.2.3).
    pub may_fragment: bool,
}

impl SendRequest {
    /// A request with a one-day lifetime, no reports, fragmentation allowed.
    pub fn new(source: Eid, destination: Eid, payload: Vec<u8>) -> SendRequest {
        SendRequest {
            source,
            destination,
            payload,
            lifetime: Duration::from_secs(24 * 3600),
            report_to: None,
            reports: Vec::new(),
            report_status_time: false,
            may_fragment: true,
        }
    }
}
