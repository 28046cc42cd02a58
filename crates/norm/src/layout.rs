//! Segmentation of an object into source blocks (RFC 5740 section 5.1.1,
//! the block partitioning of RFC 5052 section 9.1).

use crate::wire::{Fti, PayloadId, MAX_OBJECT_SIZE};

/// How an object of a given size is cut into segments and source blocks:
/// `large_block_count` blocks of `large_block_len` segments first, then
/// blocks of one segment fewer; every segment is `segment_size` octets
/// except the object's last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    object_size: u64,
    segment_size: u16,
    num_blocks: u32,
    large_block_len: u16,
    large_block_count: u32,
    final_segment_size: u16,
}

impl Layout {
    /// The layout of an object described by `fti`, or `None` if it has no
    /// octets, no segment size, no block length or more than 2^24 blocks.
    pub fn new(fti: &Fti) -> Option<Layout> {
        let size = fti.object_size;
        let seg = u64::from(fti.segment_size);
        let k = u64::from(fti.max_block_len);
        if size == 0 || size > MAX_OBJECT_SIZE || seg == 0 || k == 0 {
            return None;
        }
        let num_segments = size.div_ceil(seg);
        let num_blocks = num_segments.div_ceil(k);
        if num_blocks > u64::from(PayloadId::MAX_SBN) + 1 {
            return None;
        }
        let large_block_len = num_segments.div_ceil(num_blocks);
        let large_block_count = if num_segments == num_blocks * large_block_len {
            num_blocks
        } else {
            num_segments - num_blocks * (large_block_len - 1)
        };
        Some(Layout {
            object_size: size,
            segment_size: fti.segment_size,
            num_blocks: num_blocks as u32,
            large_block_len: large_block_len as u16,
            large_block_count: large_block_count as u32,
            final_segment_size: (size - (num_segments - 1) * seg) as u16,
        })
    }

    /// Octets in the object.
    pub fn object_size(&self) -> u64 {
        self.object_size
    }

    /// Octets per segment.
    pub fn segment_size(&self) -> u16 {
        self.segment_size
    }

    /// Source blocks in the object.
    pub fn num_blocks(&self) -> u32 {
        self.num_blocks
    }

    /// Source symbols in block `sbn`.
    pub fn block_len(&self, sbn: u32) -> u16 {
        if sbn < self.large_block_count {
            self.large_block_len
        } else {
            self.large_block_len - 1
        }
    }

    /// Octet offset of segment `esi` of block `sbn` in the object.
    pub fn offset(&self, sbn: u32, esi: u16) -> u64 {
        let seg = u64::from(self.segment_size);
        let large = u64::from(self.large_block_len);
        let sbn64 = u64::from(sbn);
        let first = if sbn < self.large_block_count {
            sbn64 * large
        } else {
            let lc = u64::from(self.large_block_count);
            lc * large + (sbn64 - lc) * (large - 1)
        };
        (first + u64::from(esi)) * seg
    }

    /// Octets in segment `esi` of block `sbn` (the object's last segment
    /// may be short).
    pub fn segment_len(&self, sbn: u32, esi: u16) -> usize {
        if sbn + 1 == self.num_blocks && esi + 1 == self.block_len(sbn) {
            usize::from(self.final_segment_size)
        } else {
            usize::from(self.segment_size)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(size: u64, seg: u16, k: u8) -> Layout {
        Layout::new(&Fti {
            object_size: size,
            segment_size: seg,
            max_block_len: k,
            num_parity: 0,
        })
        .unwrap()
    }

    #[test]
    fn blocks_differ_by_at_most_one_segment() {
        // 10 segments in blocks of at most 4: 4 + 3 + 3 (RFC 5052 9.1).
        let l = layout(1000, 100, 4);
        assert_eq!(l.num_blocks(), 3);
        assert_eq!((l.block_len(0), l.block_len(1), l.block_len(2)), (4, 3, 3));
        assert_eq!(l.offset(1, 0), 400);
        assert_eq!(l.offset(2, 2), 900);
        let l = layout(1001, 100, 4);
        assert_eq!(l.num_blocks(), 3);
        assert_eq!((l.block_len(0), l.block_len(1), l.block_len(2)), (4, 4, 3));
        assert_eq!(l.segment_len(2, 2), 1);
        assert_eq!(l.segment_len(2, 1), 100);
        let total: u64 = (0..l.num_blocks())
            .flat_map(|b| (0..l.block_len(b)).map(move |e| (b, e)))
            .map(|(b, e)| l.segment_len(b, e) as u64)
            .sum();
        assert_eq!(total, 1001);
    }

    #[test]
    fn degenerate_objects_are_refused() {
        let fti = |object_size, segment_size, max_block_len| Fti {
            object_size,
            segment_size,
            max_block_len,
            num_parity: 0,
        };
        assert!(Layout::new(&fti(0, 100, 4)).is_none());
        assert!(Layout::new(&fti(10, 0, 4)).is_none());
        assert!(Layout::new(&fti(10, 10, 0)).is_none());
        assert!(Layout::new(&fti(MAX_OBJECT_SIZE, 1, 1)).is_none());
    }
}
