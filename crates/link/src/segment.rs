//! The segmenter and reassembler (AX.25 v2.2 2.4, 6.6, Appendix C6): data
//! units longer than N1 travel as PID 0x08 I frames, each starting with a
//! [`SegmentHeader`].

use linklab_wire::ax25::{Pid, SegmentHeader, MAX_REMAINING};

use crate::event::LinkError;

/// Splits `data` (PID `pid`) into I-frame information fields of at most
/// `n1` octets each, with segment headers (6.6, fig. 6.2; the first
/// segment also carries the original PID). Returns `None` if it would need
/// more than 128 segments or `n1` is too small to carry any data.
pub(crate) fn segment(pid: Pid, data: &[u8], n1: usize) -> Option<Vec<Vec<u8>>> {
    let first_len = n1.checked_sub(2).filter(|&n| n > 0)?;
    let rest_len = n1 - 1;
    let (first, rest) = data.split_at(first_len.min(data.len()));
    let chunks: Vec<&[u8]> = core::iter::once(first)
        .chain(rest.chunks(rest_len))
        .collect();
    let remaining = u8::try_from(chunks.len() - 1)
        .ok()
        .filter(|&r| r <= MAX_REMAINING)?;
    let mut out = Vec::with_capacity(chunks.len());
    for (i, chunk) in chunks.into_iter().enumerate() {
        let left = remaining - u8::try_from(i).ok()?;
        let header = if i == 0 {
            SegmentHeader::first(left, pid)
        } else {
            SegmentHeader::subsequent(left)
        }
        .ok()?;
        let mut info = Vec::with_capacity(header.encoded_len() + chunk.len());
        header.encode_into(&mut info);
        info.extend_from_slice(chunk);
        out.push(info);
    }
    Some(out)
}

/// Largest data unit [`segment`] can carry with information fields of `n1`.
pub(crate) fn max_segmented_len(n1: usize) -> usize {
    match n1.checked_sub(2) {
        Some(first) if first > 0 => first + usize::from(MAX_REMAINING) * (n1 - 1),
        _ => 0,
    }
}

/// Number of information fields a data unit of `len` octets takes with
/// information fields of `n1`: 1 if it fits, else as [`segment`] splits it
/// (1 also if it cannot be segmented at all).
pub(crate) fn segment_count(len: usize, n1: usize) -> usize {
    match (n1.checked_sub(2), n1.checked_sub(1)) {
        (Some(first), Some(rest)) if len > n1 && first > 0 => 1 + (len - first).div_ceil(rest),
        _ => 1,
    }
}

/// Reassembles segments in arrival order (the data link delivers I frames
/// in sequence, C6.2).
#[derive(Debug, Clone, Default)]
pub(crate) struct Reassembler {
    /// PID of the unit being built, octets so far, segments still expected.
    partial: Option<(Pid, Vec<u8>, u8)>,
}

impl Reassembler {
    /// Drops any partly reassembled unit (after a link reset).
    pub(crate) fn reset(&mut self) {
        self.partial = None;
    }

    /// Takes one segment's information field; returns a finished data
    /// unit, or an error if the segment does not fit the one in progress.
    pub(crate) fn push(&mut self, info: &[u8]) -> Result<Option<(Pid, Vec<u8>)>, LinkError> {
        let (header, data) = SegmentHeader::decode(info)
            .map_err(|_| LinkError::Reassembly("malformed segment header"))?;
        let (pid, mut buf) = match (header.original_pid(), self.partial.take()) {
            (Some(pid), None) => (pid, Vec::new()),
            (Some(_), Some(_)) => {
                return Err(LinkError::Reassembly(
                    "first segment while another data unit was incomplete",
                ))
            }
            (None, Some((pid, buf, expected))) if expected == header.remaining() => (pid, buf),
            (None, Some(_)) => return Err(LinkError::Reassembly("segment out of order")),
            (None, None) => {
                return Err(LinkError::Reassembly(
                    "later segment without a first segment",
                ))
            }
        };
        buf.extend_from_slice(data);
        match header.remaining().checked_sub(1) {
            None => Ok(Some((pid, buf))),
            Some(next) => {
                self.partial = Some((pid, buf, next));
                Ok(None)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_reassemble() {
        let data: Vec<u8> = (0..5000u32).map(|i| (i % 251) as u8).collect();
        let segments = segment(Pid::Ip, &data, 256).unwrap();
        assert_eq!(segments.len(), 20);
        assert!(segments.iter().all(|s| s.len() <= 256));
        let mut r = Reassembler::default();
        let mut done = None;
        for s in &segments {
            done = r.push(s).unwrap();
        }
        assert_eq!(done, Some((Pid::Ip, data)));
        assert_eq!(max_segmented_len(256), 254 + 127 * 255);
        assert!(segment(Pid::Ip, &vec![0; max_segmented_len(16) + 1], 16).is_none());
        assert_eq!(
            segment(Pid::Ip, &vec![0; max_segmented_len(16)], 16)
                .unwrap()
                .len(),
            128
        );
        assert!(segment(Pid::Ip, &[1], 2).is_none());
        for (len, n1) in [
            (5000, 256),
            (256, 256),
            (257, 256),
            (40, 16),
            (1, 1),
            (700, 97),
        ] {
            let count = segment(Pid::Ip, &vec![0; len], n1).map_or(1, |s| s.len());
            let expected = if len <= n1 { 1 } else { count };
            assert_eq!(segment_count(len, n1), expected, "len {len} n1 {n1}");
        }
    }

    #[test]
    fn out_of_order_segments_are_errors() {
        let segments = segment(Pid::NoLayer3, &[7; 40], 16).unwrap();
        let mut r = Reassembler::default();
        assert!(r.push(&segments[1]).is_err());
        assert_eq!(r.push(&segments[0]), Ok(None));
        assert!(r.push(&segments[2]).is_err());
        assert!(r.push(&[]).is_err());
    }
}
