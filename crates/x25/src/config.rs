//! Configuration of a DTE's packet layer: its logical channels, the
//! default ("subscribed") flow control parameters and the limits for
//! negotiating them (X.25 (10/96) 6.9, 6.10, 6.12), and the DTE
//! time-limits and retransmission counts of Annex D (Table D-2).

use core::time::Duration;

use linklab_wire::control::Modulus;
use thiserror::Error;

use crate::packet::{DteAddress, Lci};

/// Which side of the interface this packet layer plays. In DTE/DTE
/// operation (ISO 8208) one DTE takes the DCE's part.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Role {
    /// The DTE: outgoing calls take the highest free logical channel
    /// (3.1, Annex A) and its call wins a call collision (4.1.5).
    #[default]
    Dte,
    /// The DCE's part: outgoing calls take the lowest free logical
    /// channel, and a colliding call of its own is cancelled in favour of
    /// the DTE's (4.1.5).
    Dce,
}

/// Configuration of a [`Dte`](crate::Dte).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Which part this side plays in channel choice and call collision.
    pub role: Role,
    /// This DTE's address, sent as the calling address.
    pub address: DteAddress,
    /// The lowest two-way logical channel for virtual calls (Annex A).
    pub lowest_channel: Lci,
    /// The highest two-way logical channel for virtual calls.
    pub highest_channel: Lci,
    /// Sequence numbering requested for outgoing calls (the GFI of CALL
    /// REQUEST, 5.1.1); incoming calls use the modulus they arrive with.
    pub modulus: Modulus,
    /// The default maximum user data field length P of data packets,
    /// both directions (6.9; X.25's standard default 128).
    pub packet_size: usize,
    /// The default window W, both directions (6.10; standard default 2),
    /// 1-7 whatever the modulus.
    pub window: u8,
    /// The largest P this DTE agrees to in negotiation (6.12), a power
    /// of two from 16 to 4096, at least [`Config::packet_size`].
    pub max_packet_size: usize,
    /// The largest W this DTE agrees to in negotiation, at least
    /// [`Config::window`] and below the modulus.
    pub max_window: u8,
    /// T20, restart request response time-limit (Annex D: 180 s).
    pub t20: Duration,
    /// T21, call request response time-limit (200 s).
    pub t21: Duration,
    /// T22, reset request response time-limit (180 s).
    pub t22: Duration,
    /// T23, clear request response time-limit (180 s).
    pub t23: Duration,
    /// R20, retransmissions of RESTART REQUEST after T20 (ISO 8208: 1).
    pub r20: u8,
    /// R22, retransmissions of RESET REQUEST after T22 (1).
    pub r22: u8,
    /// R23, retransmissions of CLEAR REQUEST after T23 (1).
    pub r23: u8,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            role: Role::Dte,
            address: DteAddress::empty(),
            lowest_channel: Lci::new(1),
            highest_channel: Lci::new(16),
            modulus: Modulus::Mod8,
            packet_size: 128,
            window: 2,
            max_packet_size: 1024,
            max_window: 7,
            t20: Duration::from_secs(180),
            t21: Duration::from_secs(200),
            t22: Duration::from_secs(180),
            t23: Duration::from_secs(180),
            r20: 1,
            r22: 1,
            r23: 1,
        }
    }
}

/// Why a [`Config`] is refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ConfigError {
    /// The channel range is empty or includes LCI 0.
    #[error(
        "logical channels {lowest}..={highest}: the range must be non-empty and exclude LCI 0"
    )]
    Channels {
        /// Lowest given.
        lowest: Lci,
        /// Highest given.
        highest: Lci,
    },
    /// A packet size is not a power of two in 16..=4096 (7.2).
    #[error("{name} = {value} octets: packet sizes are powers of two from 16 to 4096")]
    PacketSize {
        /// Which setting.
        name: &'static str,
        /// The value.
        value: usize,
    },
    /// A window is 0, or not below the modulus (4.4.1.1).
    #[error("{name} = {value}: windows run from 1 to 7 (modulo 8) or 127 (modulo 128)")]
    Window {
        /// Which setting.
        name: &'static str,
        /// The value.
        value: u8,
    },
    /// A maximum is below its default.
    #[error("{name} is below its default")]
    MaxBelowDefault {
        /// Which setting.
        name: &'static str,
    },
}

/// True for the packet sizes X.25 allows: 16, 32, ..., 4096 (7.2).
pub(crate) fn valid_packet_size(size: usize) -> bool {
    size.is_power_of_two() && (16..=4096).contains(&size)
}

/// True for windows allowed modulo `modulus`.
pub(crate) fn valid_window(window: u8, modulus: Modulus) -> bool {
    (1..modulus.value()).contains(&window)
}

impl Config {
    /// Checks the configuration.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.lowest_channel == Lci::ZERO || self.lowest_channel > self.highest_channel {
            return Err(ConfigError::Channels {
                lowest: self.lowest_channel,
                highest: self.highest_channel,
            });
        }
        for (name, value) in [
            ("packet_size", self.packet_size),
            ("max_packet_size", self.max_packet_size),
        ] {
            if !valid_packet_size(value) {
                return Err(ConfigError::PacketSize { name, value });
            }
        }
        // The default window applies to calls of either modulus, so it
        // must fit modulo 8; the maximum is clamped to 7 on modulo-8 calls.
        for (name, value, modulus) in [
            ("window", self.window, Modulus::Mod8),
            ("max_window", self.max_window, self.modulus),
        ] {
            if !valid_window(value, modulus) {
                return Err(ConfigError::Window { name, value });
            }
        }
        if self.max_packet_size < self.packet_size {
            return Err(ConfigError::MaxBelowDefault {
                name: "max_packet_size",
            });
        }
        if self.max_window < self.window {
            return Err(ConfigError::MaxBelowDefault { name: "max_window" });
        }
        Ok(())
    }
}
