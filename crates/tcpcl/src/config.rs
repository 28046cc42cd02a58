//! What one entity brings to a session: its SESS_INIT parameters (RFC 9174
//! section 4.6) and its local policies (timeouts, limits).

use core::time::Duration;

use thiserror::Error;

/// Which end opened the TCP connection (RFC 9174 section 3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The entity that connected: it sends its contact header and its
    /// SESS_INIT first.
    Active,
    /// The entity that accepted the connection: it answers the active
    /// entity's contact header and SESS_INIT with its own.
    Passive,
}

/// A session's configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// This entity's Node ID, a URI such as `dtn://node/` or `ipn:1.0`
    /// (RFC 9174 section 4.6).
    pub node_id: String,
    /// Keepalive Interval offered in SESS_INIT, in seconds; 0 asks for no
    /// KEEPALIVEs. The session uses the smaller of both offers (4.7).
    pub keepalive_interval: u16,
    /// Segment MRU offered in SESS_INIT: the largest segment accepted.
    pub segment_mru: u64,
    /// Transfer MRU offered in SESS_INIT: the largest transfer accepted.
    pub transfer_mru: u64,
    /// The largest segment this entity sends, below the peer's Segment MRU
    /// (RFC 9174 section 4.7 leaves segment sizes to the sender).
    pub max_segment: u64,
    /// Whether the first segment of each transfer carries the Transfer
    /// Length extension (RFC 9174 section 5.2.5.1).
    pub send_transfer_length: bool,
    /// End an established session with SESS_TERM "Idle timeout" after this
    /// long without a message other than KEEPALIVE (RFC 9174 section 6.2);
    /// `None` keeps idle sessions.
    pub idle_timeout: Option<Duration>,
    /// Give up a session that has not exchanged contact headers and
    /// SESS_INITs within this time.
    pub establishment_timeout: Duration,
    /// Close the connection this long after sending SESS_TERM even if the
    /// peer has not answered or finished its transfer (RFC 9174 section
    /// 6.1).
    pub ending_timeout: Duration,
    /// The longest Session or Transfer Extension Items list accepted.
    pub max_extension_items: u32,
    /// Hold the XFER_ACK of each received transfer's END segment (RFC 9174
    /// 5.2.3) until the user calls
    /// [`Session::accept_transfer`](crate::Session::accept_transfer), so
    /// that the peer learns its transfer is complete only once the user
    /// has kept it (a bundle agent: stored it, RFC 9171 5.6) while the
    /// session goes on reading, acknowledging and sending KEEPALIVEs.
    pub hold_final_ack: bool,
}

impl Config {
    /// A configuration for `node_id` with the defaults: keepalive 60 s,
    /// Segment MRU 64 KiB, Transfer MRU 16 MiB, no idle timeout, 30 s to
    /// establish, 10 s to end, extension lists up to 64 KiB, every XFER_ACK
    /// sent at once.
    pub fn new(node_id: impl Into<String>) -> Self {
        Config {
            node_id: node_id.into(),
            keepalive_interval: 60,
            segment_mru: 64 * 1024,
            transfer_mru: 16 * 1024 * 1024,
            max_segment: u64::MAX,
            send_transfer_length: true,
            idle_timeout: None,
            establishment_timeout: Duration::from_secs(30),
            ending_timeout: Duration::from_secs(10),
            max_extension_items: 64 * 1024,
            hold_final_ack: false,
        }
    }

    /// Checks what SESS_INIT and the session need of the configuration.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !is_uri(&self.node_id) {
            return Err(ConfigError::NodeId(self.node_id.clone()));
        }
        if self.node_id.len() > usize::from(u16::MAX) {
            return Err(ConfigError::NodeIdTooLong(self.node_id.len()));
        }
        if self.segment_mru == 0 || self.transfer_mru == 0 || self.max_segment == 0 {
            return Err(ConfigError::ZeroSize);
        }
        if usize::try_from(self.segment_mru).is_err() || usize::try_from(self.transfer_mru).is_err()
        {
            return Err(ConfigError::Unaddressable);
        }
        Ok(())
    }
}

/// A configuration the session cannot run with.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ConfigError {
    /// The Node ID is not a URI (`scheme:rest`).
    #[error("node ID {0:?} is not a URI such as dtn://node/ or ipn:1.0")]
    NodeId(String),
    /// The Node ID does not fit SESS_INIT's 16-bit length.
    #[error("node ID of {0} octets is longer than SESS_INIT's 65535")]
    NodeIdTooLong(usize),
    /// A size limit is zero.
    #[error("segment MRU, transfer MRU and largest segment must be at least one octet")]
    ZeroSize,
    /// A receive limit is beyond this machine's address space.
    #[error("segment MRU and transfer MRU must fit this machine's memory")]
    Unaddressable,
}

/// Whether `text` has the shape of an absolute URI, `scheme:rest` with an
/// RFC 3986 scheme and a non-empty rest: enough to tell a Node ID from
/// garbage without knowing every scheme.
pub(crate) fn is_uri(text: &str) -> bool {
    let Some((scheme, rest)) = text.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        && !rest.is_empty()
        && !text.chars().any(char::is_control)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_ids() {
        assert!(is_uri("dtn://node1/"));
        assert!(is_uri("ipn:1.0"));
        assert!(!is_uri("node1"));
        assert!(!is_uri("1dtn://x"));
        assert!(!is_uri("dtn:"));
        assert!(!is_uri("dtn://a\n"));
        assert!(Config::new("dtn://a/").validate().is_ok());
        assert_eq!(
            Config::new("a").validate(),
            Err(ConfigError::NodeId("a".into()))
        );
        let mut config = Config::new("dtn://a/");
        config.segment_mru = 0;
        assert_eq!(config.validate(), Err(ConfigError::ZeroSize));
    }
}
