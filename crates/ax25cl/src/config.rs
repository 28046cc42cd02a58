//! How a convergence-layer entity is set up.

use thiserror::Error;

use crate::wire::Message;

/// The default `ack_window`: an ACK_SEGMENT after every 8 DATA_SEGMENTs
/// (Ronan et al., section V.B: "e.g. 8, the default").
pub const DEFAULT_ACK_WINDOW: u32 = 8;

/// One entity's configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// This node's endpoint ID, sent in the contact header.
    pub local_eid: String,
    /// `ack_window`: the receiver acknowledges after every this many
    /// DATA_SEGMENTs of a bundle, and at once when the bundle is complete
    /// (Ronan et al., section V.B). It sets the granularity of reactive
    /// fragmentation: after a link loss the sender resumes from the last
    /// acknowledged octet.
    pub ack_window: u32,
    /// Largest data of a DATA_SEGMENT this entity sends; see
    /// [`Config::fit_frame`].
    pub segment_data: usize,
    /// Largest DATA_SEGMENT data accepted from the peer.
    pub max_segment_in: u64,
    /// Largest bundle accepted from the peer: one longer is refused with
    /// REFUSE_BUNDLE "no resources".
    pub max_bundle_in: u64,
    /// Largest EID accepted in the peer's contact header.
    pub max_eid: usize,
}

/// Why a configuration is refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ConfigError {
    /// `ack_window` must be at least 1.
    #[error("ack_window must be at least 1 segment")]
    AckWindow,
    /// `segment_data` must be at least 1.
    #[error("segment_data must be at least 1 octet")]
    SegmentData,
    /// The frame cannot hold a DATA_SEGMENT with any data.
    #[error("an information field of {n1} octets cannot hold a DATA_SEGMENT (at least 7 octets)")]
    FrameTooSmall {
        /// The information field length.
        n1: usize,
    },
    /// The local EID is empty or longer than 65535 octets.
    #[error("the local EID must be 1 to 65535 octets")]
    Eid,
}

impl Config {
    /// Defaults for node `local_eid`: `ack_window` 8, DATA_SEGMENTs that
    /// fill AX.25 information fields of N1 = 256 octets (the v2.2
    /// default), bundles up to 16 MiB accepted.
    pub fn new(local_eid: impl Into<String>) -> Config {
        let mut config = Config {
            local_eid: local_eid.into(),
            ack_window: DEFAULT_ACK_WINDOW,
            segment_data: 1,
            max_segment_in: 64 * 1024,
            max_bundle_in: 16 << 20,
            max_eid: 1024,
        };
        config.segment_data = segment_data_for(256).unwrap_or(1);
        config
    }

    /// Sizes DATA_SEGMENTs so that each one, CRC-32 included, fills one
    /// information field of `n1` octets: each message this entity sends
    /// then travels in one I frame, as each write on a Linux AX.25 socket
    /// does (N1 = 255: 248 octets of data, 7 of header and CRC).
    pub fn fit_frame(mut self, n1: usize) -> Result<Config, ConfigError> {
        self.segment_data = segment_data_for(n1).ok_or(ConfigError::FrameTooSmall { n1 })?;
        Ok(self)
    }

    /// Checks the configuration.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.ack_window == 0 {
            return Err(ConfigError::AckWindow);
        }
        if self.segment_data == 0 {
            return Err(ConfigError::SegmentData);
        }
        if self.local_eid.is_empty() || self.local_eid.len() > 65535 {
            return Err(ConfigError::Eid);
        }
        Ok(())
    }
}

/// The largest data for which a DATA_SEGMENT fits `n1` octets.
fn segment_data_for(n1: usize) -> Option<usize> {
    (1..=n1)
        .rev()
        .find(|&data| Message::data_segment_len(data) <= n1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_fill_frames() {
        let c = Config::new("ipn:1.0").fit_frame(255).unwrap();
        assert_eq!(c.segment_data, 248);
        assert_eq!(Config::new("x").segment_data, 249);
        // 128 data octets need a 2-octet SDNV: 127 + 1 + 1 + 4 = 133.
        assert_eq!(Config::new("x").fit_frame(133).unwrap().segment_data, 127);
        assert_eq!(
            Config::new("x").fit_frame(6),
            Err(ConfigError::FrameTooSmall { n1: 6 })
        );
        assert_eq!(Config::new("x").fit_frame(7).unwrap().segment_data, 1);
    }
}
