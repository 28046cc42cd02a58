//! The segmenter header at the start of the info field of a frame with
//! PID 0x08 (AX.25 v2.2 6.6, fig. 6.2; Appendix C6).
//!
//! ```text
//! first segment:      1XXXXXXX  original PID  data...
//! later segments:     0XXXXXXX  data...
//! ```
//!
//! X is the number of segments still to follow (0-127). Fig. 6.2 shows
//! only the `FXXXXXXX` octet; the original PID that follows it in the first
//! segment is how Dire Wolf (ax25_link.c) and the Linux kernel segment, and
//! what the reassembler needs to deliver the data unit with its PID.

use thiserror::Error;

use super::pid::Pid;

/// Most segments that can follow one segment (7-bit count).
pub const MAX_REMAINING: u8 = 127;

/// Why a segment header cannot be decoded or built.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SegmentError {
    /// The info field of a segment is empty.
    #[error("segment has no header octet")]
    Empty,
    /// The first segment has no original-PID octet.
    #[error("first segment ends after its header octet; the original PID is missing")]
    MissingPid,
    /// A remaining count above 127.
    #[error("{remaining} segments remaining is out of range; at most 127")]
    RemainingOutOfRange {
        /// The value given.
        remaining: u8,
    },
}

/// The header of one segment (AX.25 v2.2 6.6, fig. 6.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SegmentHeader {
    remaining: u8,
    original_pid: Option<Pid>,
}

impl SegmentHeader {
    /// The header of a first segment: `remaining` segments follow, the
    /// reassembled data unit has PID `original_pid`.
    pub fn first(remaining: u8, original_pid: Pid) -> Result<SegmentHeader, SegmentError> {
        Self::checked(remaining, Some(original_pid))
    }

    /// The header of a later segment with `remaining` segments to follow.
    pub fn subsequent(remaining: u8) -> Result<SegmentHeader, SegmentError> {
        Self::checked(remaining, None)
    }

    fn checked(remaining: u8, original_pid: Option<Pid>) -> Result<SegmentHeader, SegmentError> {
        if remaining > MAX_REMAINING {
            return Err(SegmentError::RemainingOutOfRange { remaining });
        }
        Ok(SegmentHeader {
            remaining,
            original_pid,
        })
    }

    /// True for the first segment of a data unit (the F bit).
    pub fn is_first(&self) -> bool {
        self.original_pid.is_some()
    }

    /// Number of segments still to follow this one.
    pub fn remaining(&self) -> u8 {
        self.remaining
    }

    /// The PID of the whole data unit, carried in the first segment only.
    pub fn original_pid(&self) -> Option<Pid> {
        self.original_pid
    }

    /// Length of the encoded header: 2 octets for a first segment, else 1.
    pub fn encoded_len(&self) -> usize {
        1 + usize::from(self.is_first())
    }

    /// Decodes the header at the start of a segment's info field; returns it
    /// and the segment data after it.
    pub fn decode(info: &[u8]) -> Result<(SegmentHeader, &[u8]), SegmentError> {
        let (&octet, rest) = info.split_first().ok_or(SegmentError::Empty)?;
        let remaining = octet & MAX_REMAINING;
        if octet & 0x80 == 0 {
            return Ok((
                SegmentHeader {
                    remaining,
                    original_pid: None,
                },
                rest,
            ));
        }
        let (&pid, data) = rest.split_first().ok_or(SegmentError::MissingPid)?;
        Ok((
            SegmentHeader {
                remaining,
                original_pid: Some(Pid::from(pid)),
            },
            data,
        ))
    }

    /// Appends the encoded header to `out`.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        match self.original_pid {
            Some(pid) => {
                out.push(0x80 | self.remaining);
                out.push(u8::from(pid));
            }
            None => out.push(self.remaining),
        }
    }
}
