//! The KISS parameters a host sends its TNC at start (KISS spec, "Frame
//! types": TXDELAY, P, SLOTTIME, TXTAIL).

use core::time::Duration;

use linklab_wire::kiss::{self, Command, Port};
use thiserror::Error;

/// The longest duration a KISS timing parameter carries: one octet of
/// 10 ms units (KISS spec, "Frame types").
pub const KISS_MAX_TIME: Duration = Duration::from_millis(2550);

/// A KISS timing parameter, sent in 10 ms units in one octet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KissTime {
    /// TXDELAY (command 1).
    TxDelay,
    /// SLOTTIME (command 3).
    SlotTime,
    /// TXTAIL (command 4).
    TxTail,
}

impl core::fmt::Display for KissTime {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            KissTime::TxDelay => "TXDELAY",
            KissTime::SlotTime => "SLOTTIME",
            KissTime::TxTail => "TXTAIL",
        })
    }
}

/// A timing parameter longer than KISS can carry ([`KISS_MAX_TIME`]):
/// refused rather than sent as a different value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[error("{} ms is more than KISS can send as {param}: at most 2550 ms (one octet of 10 ms units)", .given.as_millis())]
pub struct KissTimeTooLong {
    /// Which parameter.
    pub param: KissTime,
    /// The duration asked for.
    pub given: Duration,
}

/// Channel-access parameters for one KISS port; each one is sent only if
/// set, so the TNC keeps its own value otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct KissParams {
    /// The KISS port (the high nibble of the type octet) data frames and
    /// parameters go to, and the only one data frames are taken from.
    pub port: Port,
    /// TXDELAY, keyup delay (command 1, sent in 10 ms units).
    pub txdelay: Option<Duration>,
    /// Persistence P, 0-255, p = (P + 1) / 256 (command 2).
    pub persistence: Option<u8>,
    /// SLOTTIME (command 3, sent in 10 ms units).
    pub slot_time: Option<Duration>,
    /// TXTAIL (command 4, sent in 10 ms units).
    pub txtail: Option<Duration>,
}

impl KissParams {
    /// Refuses a duration longer than [`KISS_MAX_TIME`], which
    /// [`KissParams::frames`] could only cap.
    pub fn validate(&self) -> Result<(), KissTimeTooLong> {
        [
            (KissTime::TxDelay, self.txdelay),
            (KissTime::SlotTime, self.slot_time),
            (KissTime::TxTail, self.txtail),
        ]
        .into_iter()
        .find_map(|(param, given)| {
            given
                .filter(|d| *d > KISS_MAX_TIME)
                .map(|given| KissTimeTooLong { param, given })
        })
        .map_or(Ok(()), Err)
    }

    /// The parameter frames to send, in command order, durations rounded
    /// to the nearest 10 ms unit and capped at 2.55 s (refused by
    /// [`KissParams::validate`]).
    pub fn frames(&self) -> Vec<kiss::Frame> {
        let units = kiss::units_from_duration;
        [
            self.txdelay.map(|d| Command::TxDelay(units(d))),
            self.persistence.map(Command::Persistence),
            self.slot_time.map(|d| Command::SlotTime(units(d))),
            self.txtail.map(|d| Command::TxTail(units(d))),
        ]
        .into_iter()
        .flatten()
        .map(|command| kiss::Frame {
            port: self.port,
            command,
        })
        .collect()
    }

    /// The parameter frames as bytes for the serial line.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for frame in self.frames() {
            kiss::encode_into(&frame, &mut out);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_given_parameters_are_sent_on_the_port() {
        assert!(KissParams::default().encode().is_empty());
        let params = KissParams {
            port: Port::new(2).unwrap(),
            txdelay: Some(Duration::from_millis(300)),
            persistence: Some(63),
            slot_time: None,
            txtail: Some(Duration::from_millis(24)),
        };
        assert_eq!(
            params.encode(),
            [0xC0, 0x21, 30, 0xC0, 0xC0, 0x22, 63, 0xC0, 0xC0, 0x24, 2, 0xC0]
        );
    }

    #[test]
    fn durations_beyond_one_octet_of_10_ms_are_refused() {
        let ms = Duration::from_millis;
        let mut params = KissParams {
            txdelay: Some(ms(2550)),
            slot_time: Some(ms(2550)),
            txtail: Some(ms(2550)),
            ..KissParams::default()
        };
        assert_eq!(params.validate(), Ok(()));
        assert!(params.frames().iter().all(|f| matches!(
            f.command,
            Command::TxDelay(255) | Command::SlotTime(255) | Command::TxTail(255)
        )));
        params.slot_time = Some(ms(2551));
        let error = params.validate().unwrap_err();
        assert_eq!(
            error,
            KissTimeTooLong {
                param: KissTime::SlotTime,
                given: ms(2551)
            }
        );
        assert_eq!(
            error.to_string(),
            "2551 ms is more than KISS can send as SLOTTIME: at most 2550 ms \
             (one octet of 10 ms units)"
        );
        params.txtail = Some(ms(60_000));
        params.slot_time = None;
        assert_eq!(params.validate().unwrap_err().param, KissTime::TxTail);
    }
}
