//! Parts of a run for many machines (a Slurm job array): `--shard I/N` runs the
//! I-th of N disjoint parts of an experiment's points (or of
//! `reproduce`'s sections) and `linklab merge` puts the parts together
//! into the output of the whole run.
//!
//! A point's random streams come from the master seed and the point's own
//! coordinates, never from its shard, so a point gives the same result in
//! any part, and the merged output is the unsharded one, byte for byte.

use core::fmt;
use core::str::FromStr;

use serde::{Deserialize, Serialize};

/// The I-th of N parts, counted from 0: `--shard I/N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// Which part, `0..count`.
    pub index: u32,
    /// How many parts.
    pub count: u32,
}

impl Shard {
    /// The whole run as one part.
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    /// Whether point `point` of an experiment is this part's: the points
    /// are dealt out in turn (0, N, 2N, ... to part 0), so that parts of
    /// a sweep ordered by size get a share of each size.
    pub fn owns(self, point: usize) -> bool {
        point % self.count as usize == self.index as usize
    }

    /// Which part runs each of the jobs whose rough costs are `costs`:
    /// the longest job first, each to the part with the least cost so far
    /// (the lowest index among equals). Depends on the costs and the part
    /// count only.
    pub fn by_cost(costs: &[u32], count: u32) -> Vec<u32> {
        let mut order: Vec<usize> = (0..costs.len()).collect();
        order.sort_by_key(|&i| core::cmp::Reverse(costs[i]));
        let mut load = vec![0u64; count.max(1) as usize];
        let mut part = vec![0u32; costs.len()];
        for i in order {
            let (least, _) = load
                .iter()
                .enumerate()
                .min_by_key(|&(p, &l)| (l, p))
                .unwrap_or((0, &0));
            load[least] += u64::from(costs[i]);
            part[i] = least as u32;
        }
        part
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = String;

    /// `I/N` with `0 ≤ I < N`.
    fn from_str(s: &str) -> Result<Shard, String> {
        let usage = || format!("\"{s}\" is not I/N (part I of N, counted from 0: 0/4 to 3/4)");
        let (i, n) = s.split_once('/').ok_or_else(usage)?;
        let index: u32 = i.trim().parse().map_err(|_| usage())?;
        let count: u32 = n.trim().parse().map_err(|_| usage())?;
        if count == 0 {
            return Err(format!("\"{s}\": there must be at least one part"));
        }
        if index >= count {
            return Err(format!(
                "\"{s}\": parts are counted from 0, so part {index} of {count} does not exist (0/{count} to {}/{count})",
                count - 1
            ));
        }
        Ok(Shard { index, count })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_parsed_and_refused_with_reasons() {
        assert_eq!("2/4".parse(), Ok(Shard { index: 2, count: 4 }));
        assert_eq!("0/1".parse(), Ok(Shard::WHOLE));
        for bad in ["4/4", "1/0", "a/2", "3", "-1/2", "1/2/3"] {
            let err = bad.parse::<Shard>().unwrap_err();
            assert!(err.contains(bad), "{err}");
        }
    }

    #[test]
    fn every_point_is_in_exactly_one_part() {
        for count in 1..6u32 {
            for point in 0..40 {
                let owners = (0..count)
                    .filter(|&index| Shard { index, count }.owns(point))
                    .count();
                assert_eq!(owners, 1);
            }
        }
    }

    #[test]
    fn jobs_by_cost_balance_the_parts() {
        // 33 alone; 20 + 1s; 17 + 16 ...: no part above the longest job
        // plus the smallest.
        let costs = [1, 1, 1, 6, 20, 33, 10, 1, 3, 16, 4, 10, 17];
        let parts = Shard::by_cost(&costs, 4);
        let mut load = [0u32; 4];
        for (c, p) in costs.iter().zip(&parts) {
            load[*p as usize] += c;
        }
        assert_eq!(load.iter().sum::<u32>(), costs.iter().sum::<u32>());
        assert!(load.iter().all(|&l| l <= 34), "{load:?}");
        assert_eq!(parts, Shard::by_cost(&costs, 4));
        assert!(Shard::by_cost(&costs, 1).iter().all(|&p| p == 0));
    }
}
