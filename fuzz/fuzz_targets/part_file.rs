//! Fuzzes the part files `linklab merge` reads (`linklab_scenario::part`):
//! arbitrary octets as a `part.cbor`, a part that decodes cut into parts
//! and given in several orders, and whatever merges put into every
//! built-in experiment and into the scenario text the part carries.
//!
//! Input: octet 0 says how to cut and spoil the parts, the rest is the
//! part file. Bits 0-1: cut into 1 to 4 parts, results dealt out in turn
//! as `--shard` deals points, part 0 keeping the extra and the CPU time;
//! bit 2: leave the last part out; bit 3: give part 0 twice; bits 4-5:
//! change the last part's seed, quick flag or version; bits 6-7: how far
//! to rotate the third order.
//!
//! Invariants: no panic, decoding and merging return a value or an error;
//! the parts merge in every order or in none (docs/cluster.md: "all N
//! parts, in any order"), and to the same results, extras and times; a
//! part that merges alone merges to the same results when cut into parts
//! (the merged output is the unsharded one); an experiment's merge of
//! them returns its output or an error.
//!
//! A merge is tried on the built-in experiments of the part's number of
//! points only: the others refuse every part for its count before
//! reading a result, and working out their points for every input would
//! cost most of the time.
#![no_main]

use std::num::NonZeroUsize;
use std::sync::OnceLock;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use linklab_scenario::builtin;
use linklab_scenario::experiment::Experiment;
use linklab_scenario::part::{gather, Merged, Part, RunOf};
use linklab_scenario::report::{NoProgress, RunOptions};
use linklab_scenario::shard::Shard;

/// Every built-in experiment's text.
const BUILT_IN: [&str; 16] = [
    builtin::BUX_THROUGHPUT_ONE_WAY,
    builtin::BUX_THROUGHPUT_TWO_WAY,
    builtin::BUX_THROUGHPUT_EXPONENTIAL,
    builtin::BUX_TRANSFER_TIME,
    builtin::BUX_TRANSFER_TIME_TP,
    builtin::DSTAR_TABLE_1,
    builtin::DSTAR_TABLE_2,
    builtin::KORB_TABLE_1,
    builtin::KORB_TABLE_2,
    builtin::KORB_TABLE_3,
    builtin::KORB_TABLE_4,
    builtin::RONAN_TABLES_5_7,
    builtin::ZIELINSKI_FIGS_4_6,
    builtin::ZIELINSKI_FIGS_7_9,
    builtin::ZIELINSKI_FIGS_10_13,
    builtin::ZIELINSKI_FIGS_14_15,
];

/// A built-in experiment and its number of points in a full and in a
/// quick run.
struct BuiltIn {
    experiment: Experiment,
    points: [usize; 2],
}

/// Every built-in experiment, parsed and counted once.
fn built_in() -> &'static [BuiltIn] {
    static ALL: OnceLock<Vec<BuiltIn>> = OnceLock::new();
    ALL.get_or_init(|| {
        BUILT_IN
            .iter()
            .map(|text| {
                let experiment = Experiment::from_toml(text).expect("a built-in experiment parses");
                // A part that owns none of the points runs nothing and
                // says how many there are.
                let none = Shard {
                    index: u32::MAX - 1,
                    count: u32::MAX,
                };
                let points = [false, true].map(|quick| {
                    let options = RunOptions {
                        quick,
                        seed: 0,
                        jobs: NonZeroUsize::MIN,
                    };
                    experiment
                        .run_part(&options, none, &NoProgress)
                        .expect("a built-in experiment counts its points")
                        .total
                });
                BuiltIn { experiment, points }
            })
            .collect()
    })
}

/// `part` cut into `count` parts as `--shard` would have run them.
fn cut(part: &Part, count: u32) -> Vec<Part> {
    (0..count)
        .map(|index| Part {
            shard: Shard { index, count },
            results: part
                .results
                .iter()
                .enumerate()
                .filter(|(j, _)| *j % count as usize == index as usize)
                .map(|(_, r)| r.clone())
                .collect(),
            extra: part.extra.clone().filter(|_| index == 0),
            cpu: if index == 0 { part.cpu } else { Duration::ZERO },
            ..part.clone()
        })
        .collect()
}

/// The gather of `parts` in this order, each labelled by its place.
fn gather_in(parts: &[&Part]) -> Option<Merged> {
    let labelled: Vec<(String, Part)> = parts
        .iter()
        .enumerate()
        .map(|(i, p)| (format!("part-{i}"), (*p).clone()))
        .collect();
    gather(&labelled).ok()
}

/// What a merge promises not to depend on the order of the parts: all
/// but which part came first (values as their CBOR octets, so that a NaN
/// equals itself).
#[derive(Debug, PartialEq)]
struct Whole<'a> {
    run: (&'a str, &'a RunOf, u64, bool, u32, usize),
    results: Vec<Vec<u8>>,
    extras: Vec<Option<Vec<u8>>>,
    wall: Duration,
    cpu: Duration,
}

fn whole(m: &Merged) -> Whole<'_> {
    let cbor = |v: &ciborium::Value| {
        let mut bytes = Vec::new();
        ciborium::into_writer(v, &mut bytes).expect("a value encodes");
        bytes
    };
    let f = &m.first;
    Whole {
        run: (&f.version, &f.run, f.seed, f.quick, f.shard.count, f.total),
        results: m.results.iter().map(cbor).collect(),
        extras: m.extras.iter().map(|e| e.as_ref().map(cbor)).collect(),
        wall: m.wall,
        cpu: m.cpu,
    }
}

/// Merges `merged` into every built-in experiment of as many points (the
/// others refuse it for its count alone) and into the scenario the part
/// ran, as `linklab merge` would: an output or an error.
fn merge_into_experiments(merged: &Merged) {
    let options = RunOptions {
        quick: merged.first.quick,
        seed: merged.first.seed,
        jobs: NonZeroUsize::MIN,
    };
    for b in built_in() {
        if b.points[usize::from(options.quick)] == merged.results.len() {
            let _ = b.experiment.merge(&options, merged.results.clone());
        }
    }
    if let RunOf::Sim { text, .. } = &merged.first.run {
        if BUILT_IN.contains(&text.as_str()) {
            return;
        }
        if let Ok(experiment) = Experiment::from_toml(text) {
            let _ = experiment.merge(&options, merged.results.clone());
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&how, file)) = data.split_first() else {
        return;
    };
    let Ok(part) = Part::decode(file) else {
        return;
    };
    let alone = gather_in(&[&part]);

    let count = u32::from(how & 3) + 1;
    let mut parts = cut(&part, count);
    let spoilt = how & 0x3c != 0;
    if how & 4 != 0 {
        parts.pop();
    }
    if let (true, Some(first)) = (how & 8 != 0, parts.first().cloned()) {
        parts.push(first);
    }
    if let Some(last) = parts.last_mut() {
        match (how >> 4) & 3 {
            1 => last.seed = last.seed.wrapping_add(1),
            2 => last.quick = !last.quick,
            3 => last.version.push('+'),
            _ => {}
        }
    }
    let given: Vec<&Part> = parts.iter().collect();
    let reversed: Vec<&Part> = given.iter().rev().copied().collect();
    let mut rotated = given.clone();
    if !rotated.is_empty() {
        let by = usize::from(how >> 6) % rotated.len();
        rotated.rotate_left(by);
    }
    let in_order = gather_in(&given);
    for other in [&reversed, &rotated] {
        let merged = gather_in(other);
        assert_eq!(
            in_order.is_some(),
            merged.is_some(),
            "the parts merge in one order and not in another"
        );
        if let (Some(a), Some(b)) = (&in_order, &merged) {
            assert_eq!(
                whole(a),
                whole(b),
                "the order of the parts changed the merge"
            );
        }
    }

    // A whole run (one part 0/1) cut into parts merges to the same
    // results: the merged output is the unsharded one.
    if let (Some(one), false, Shard::WHOLE) = (&alone, spoilt, part.shard) {
        let merged = in_order
            .as_ref()
            .expect("a whole run cut into parts merges");
        let (w, m) = (whole(one), whole(merged));
        assert_eq!(
            w.results, m.results,
            "cutting a run into parts changed its results"
        );
        assert_eq!(
            (w.wall, w.cpu),
            (m.wall, m.cpu),
            "cutting a run into parts changed its times"
        );
        assert_eq!(
            w.extras[0], m.extras[0],
            "cutting a run into parts changed its extra"
        );
    }

    for merged in [&alone, &in_order].into_iter().flatten() {
        merge_into_experiments(merged);
    }
});
