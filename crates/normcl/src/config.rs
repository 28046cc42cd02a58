//! What a session is set up with.

use core::time::Duration;
use std::net::SocketAddr;

use linklab_norm::{NodeId, Rate};
use thiserror::Error;

/// A NORM CL session toward one peer.
#[derive(Debug, Clone)]
pub struct Config {
    /// This node's ID (`ipn:1.0`), sent in each bundle object's header.
    pub node_id: String,
    /// The peer's node ID, as configured: bundles whose header names
    /// another node are not taken.
    pub peer_node_id: String,
    /// The peer's UDP address: NORM_DATA and NORM_CMD go there.
    pub peer: SocketAddr,
    /// Fixed rate or NORM-CC.
    pub rate: Rate,
    /// Octets per NORM segment.
    pub segment_size: u16,
    /// Source symbols per block (k).
    pub block_len: u8,
    /// Parity symbols per block for repair.
    pub num_parity: u8,
    /// Parity symbols sent proactively with each block.
    pub auto_parity: u8,
    /// NORM's robust factor: FLUSH repetitions (RFC 5740 section 5.1.3)
    /// and the number of 2·GRTT rounds a bundle waits for its
    /// acknowledgement.
    pub robust_factor: u32,
    /// The shortest wait for an acknowledgement, whatever the GRTT (on a
    /// fast link robust factor × 2·GRTT can be shorter than the peer takes
    /// to store a bundle).
    pub min_ack_wait: Duration,
    /// Largest bundle taken, in octets.
    pub max_bundle_len: usize,
    /// Bundles handed to NORM and not yet acknowledged; more wait in the
    /// session's queue. Kept below the NORM sender's cache and the
    /// receiver's pending window so that no unacknowledged object is
    /// purged.
    pub window: usize,
    /// Acknowledgement requests the peer leaves unanswered in a row before
    /// the link is declared down.
    pub down_after: u32,
    /// How long a link stays down before the session tries again (unless
    /// the peer is heard before).
    pub retry_after: Duration,
    /// NORM `instance_id` (RFC 5740 section 4.2.1): new at each start, so
    /// the peer forgets the objects of the previous run.
    pub instance_id: u16,
    /// Seed of the NORM sender's and receiver's random streams.
    pub seed: u64,
}

impl Config {
    /// Defaults for a link at a fixed `bits_per_second`: 1024-octet
    /// segments, blocks of 64 with 16 parity for repair, robust factor 20
    /// (libnorm's), at least 2 s for an acknowledgement, bundles up to
    /// 16 MiB, 32 bundles in flight, down after 2 unanswered requests,
    /// retry after 30 s.
    pub fn new(
        node_id: &str,
        peer_node_id: &str,
        peer: SocketAddr,
        bits_per_second: f64,
    ) -> Config {
        Config::with_rate(node_id, peer_node_id, peer, Rate::Fixed { bits_per_second })
    }

    /// The same defaults at `rate`: a fixed rate or NORM-CC (RFC 5740
    /// section 5.5).
    pub fn with_rate(node_id: &str, peer_node_id: &str, peer: SocketAddr, rate: Rate) -> Config {
        Config {
            node_id: node_id.to_string(),
            peer_node_id: peer_node_id.to_string(),
            peer,
            rate,
            segment_size: 1024,
            block_len: 64,
            num_parity: 16,
            auto_parity: 0,
            robust_factor: 20,
            min_ack_wait: Duration::from_secs(2),
            max_bundle_len: 16 << 20,
            window: 32,
            down_after: 2,
            retry_after: Duration::from_secs(30),
            instance_id: 1,
            seed: 1,
        }
    }

    /// Checks what NORM does not check itself.
    pub fn validate(&self) -> Result<(), ConfigError> {
        for id in [&self.node_id, &self.peer_node_id] {
            if id.is_empty() || id.len() > usize::from(u16::MAX) {
                return Err(ConfigError::NodeId(id.clone()));
            }
        }
        if norm_node_id(&self.node_id) == norm_node_id(&self.peer_node_id) {
            return Err(ConfigError::SameNormNodeId);
        }
        if self.window == 0 || self.window > 128 || self.max_bundle_len == 0 || self.down_after == 0
        {
            return Err(ConfigError::Limits);
        }
        Ok(())
    }
}

/// Why a configuration is refused.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ConfigError {
    /// An empty node ID or one too long for the header.
    #[error("node ID {0:?} must be 1..=65535 octets")]
    NodeId(String),
    /// Both node IDs map to one NormNodeId.
    #[error("this node and the peer map to the same NormNodeId")]
    SameNormNodeId,
    /// A window of 0 or above 128, no bundle size, or `down_after` 0.
    #[error("window must be 1..=128, the largest bundle and down_after at least 1")]
    Limits,
    /// NORM refused its part.
    #[error("NORM: {0}")]
    Norm(#[from] linklab_norm::ConfigError),
}

/// The NormNodeId (RFC 5740 section 4.1) of a DTN node: FNV-1a (32 bits)
/// of its node ID text, avoiding 0 and NORM_NODE_ANY (0xffffffff). Both
/// ends compute it from the node ID, so none has to be configured.
pub fn norm_node_id(node_id: &str) -> NodeId {
    let mut h: u32 = 0x811c_9dc5;
    for b in node_id.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    match h {
        0 => 1,
        u32::MAX => u32::MAX - 1,
        h => h,
    }
}
