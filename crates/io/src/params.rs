//! The KISS parameters a host sends its TNC at start (KISS spec, "Frame
//! types": TXDELAY, P, SLOTTIME, TXTAIL).

use core::time::Duration;

use linklab_wire::kiss::{self, Command, Port};

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
    /// The parameter frames to send, in command order, durations rounded
    /// to the nearest 10 ms unit and capped at 2.55 s.
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
}
