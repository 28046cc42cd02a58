//! The scenario runner: independent replications with warm-up deletion.
//!
//! The replication/deletion approach (Law & Kelton, *Simulation Modeling and
//! Analysis*, "replication/deletion approach for means") runs n independent
//! replications, deletes each one's warm-up period, reduces what is left to
//! one estimate per replication, and builds a Student-t interval from the n
//! estimates, which are iid by construction. Here the warm-up of each
//! replication's time series is found by MSER-5 ([`crate::stats::mser5`]).
//!
//! Replications run one after another, or on several threads with
//! [`Runner::run_parallel`] ([`crate::parallel`]); either way they are
//! summarised in order, so a report depends only on the master seed and
//! the model. A replication that can fail runs through the `try_` forms,
//! which return the error of the first failing replication in replication
//! order.
//!
//! Metrics are named by [`Metric`] constants declared once beside the model
//! and used both to record and to look up, so a misspelt name is a compile
//! error, not an empty interval.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::fmt;
use std::num::NonZeroUsize;

use crate::parallel::map_ordered;
use crate::stats::{mser5, ConfidenceInterval, MserCut};
use linklab_core::rng::Streams;

/// The name of one output of a model, declared once as a constant:
/// `const TRANSFER_S: Metric = Metric::new("transfer_s");`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Metric(&'static str);

impl Metric {
    /// The metric called `name` (its name in reports).
    pub const fn new(name: &'static str) -> Metric {
        Metric(name)
    }

    /// Its name in reports.
    pub const fn name(self) -> &'static str {
        self.0
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

/// One metric's raw output from one replication.
#[derive(Debug, Clone, PartialEq)]
pub enum Observation {
    /// A single figure for the whole replication, used as it stands (e.g.
    /// a time-weighted average the model computed after its own warm-up).
    Value(f64),
    /// A series in the order observed (e.g. each message's transfer time,
    /// or a queue length sampled at a fixed interval). The runner deletes
    /// its MSER-5 warm-up and takes the mean of the rest.
    Series(Vec<f64>),
}

/// What a replication hands back: named metrics.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReplicationOutput {
    metrics: BTreeMap<Metric, Observation>,
}

impl ReplicationOutput {
    /// An output with no metrics.
    pub fn new() -> Self {
        ReplicationOutput::default()
    }

    /// Records a single figure for `metric` (replacing any earlier one).
    pub fn value(&mut self, metric: Metric, value: f64) -> &mut Self {
        self.metrics.insert(metric, Observation::Value(value));
        self
    }

    /// Records a time series for `metric` (replacing any earlier one).
    pub fn series(&mut self, metric: Metric, series: Vec<f64>) -> &mut Self {
        self.metrics.insert(metric, Observation::Series(series));
        self
    }
}

/// Runs independent replications of a model and summarises them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Runner {
    master_seed: u64,
    replications: u64,
    level: f64,
}

impl Runner {
    /// `replications` replications seeded from `master_seed`, with 95%
    /// intervals (the level Bux et al. 1982 report).
    pub fn new(master_seed: u64, replications: u64) -> Self {
        Runner {
            master_seed,
            replications,
            level: 0.95,
        }
    }

    /// The same runner with intervals at confidence `level` (e.g. 0.90).
    pub fn with_level(self, level: f64) -> Self {
        Runner { level, ..self }
    }

    /// Runs replication r = 0, 1, … with the random streams
    /// `Streams::new(master_seed).replication(r)` and summarises every
    /// metric. A metric missing from some replications is summarised over
    /// those that have it; an empty series contributes nothing.
    pub fn run<F>(&self, mut replicate: F) -> Report
    where
        F: FnMut(Streams) -> ReplicationOutput,
    {
        let master = Streams::new(self.master_seed);
        let outputs = (0..self.replications).map(|r| replicate(master.replication(r)));
        self.summarise(outputs)
    }

    /// As [`Runner::run`], with the replications shared among `threads`
    /// threads. Replication r still gets the streams of replication r and
    /// the outputs are summarised in replication order, so the report is
    /// identical to the sequential one whatever the thread count.
    pub fn run_parallel<F>(&self, threads: NonZeroUsize, replicate: F) -> Report
    where
        F: Fn(Streams) -> ReplicationOutput + Sync,
    {
        let Ok(report) = self.try_run_parallel(threads, |s| Ok::<_, Infallible>(replicate(s)));
        report
    }

    /// As [`Runner::run_parallel`] for replications that can fail.
    ///
    /// # Errors
    /// The error of the first failing replication in replication order.
    pub fn try_run_parallel<F, E>(&self, threads: NonZeroUsize, replicate: F) -> Result<Report, E>
    where
        F: Fn(Streams) -> Result<ReplicationOutput, E> + Sync,
        E: Send,
    {
        let outputs = self.replicate_range(threads, 0..self.replications, &replicate)?;
        Ok(self.summarise(outputs.into_iter()))
    }

    /// The sequential procedure for a relative precision (Law & Kelton,
    /// "obtaining a specified precision"): runs the runner's replications
    /// on `threads` threads, then adds as many again at a time until
    /// every metric's half-width is at most `precision` times its mean, or
    /// until `max_replications` have run. Replication r gets the streams
    /// of replication r, so the report depends only on the seed, the
    /// model and the limits, not on the thread count. The
    /// report's `replications` is the number actually run; a metric that
    /// misses the precision at the cap keeps its wider interval.
    pub fn run_to_precision<F>(
        &self,
        threads: NonZeroUsize,
        precision: f64,
        max_replications: u64,
        replicate: F,
    ) -> Report
    where
        F: Fn(Streams) -> ReplicationOutput + Sync,
    {
        let Ok(report) = self.try_run_to_precision(threads, precision, max_replications, |s| {
            Ok::<_, Infallible>(replicate(s))
        });
        report
    }

    /// As [`Runner::run_to_precision`] for replications that can fail.
    ///
    /// # Errors
    /// The error of the first failing replication in replication order;
    /// no replications are added after a failure.
    pub fn try_run_to_precision<F, E>(
        &self,
        threads: NonZeroUsize,
        precision: f64,
        max_replications: u64,
        replicate: F,
    ) -> Result<Report, E>
    where
        F: Fn(Streams) -> Result<ReplicationOutput, E> + Sync,
        E: Send,
    {
        let step = self.replications.max(1);
        let mut outputs = self.replicate_range(threads, 0..self.replications, &replicate)?;
        let mut report = self.summarise(outputs.iter().cloned());
        let mut run = self.replications;
        while run < max_replications && !report.within(precision) {
            let next = (run + step).min(max_replications);
            outputs.extend(self.replicate_range(threads, run..next, &replicate)?);
            run = next;
            report = Runner {
                replications: run,
                ..*self
            }
            .summarise(outputs.iter().cloned());
        }
        Ok(report)
    }

    /// Replications `range`, shared among `threads` threads, in order.
    fn replicate_range<F, E>(
        &self,
        threads: NonZeroUsize,
        range: std::ops::Range<u64>,
        replicate: &F,
    ) -> Result<Vec<ReplicationOutput>, E>
    where
        F: Fn(Streams) -> Result<ReplicationOutput, E> + Sync,
        E: Send,
    {
        let master = Streams::new(self.master_seed);
        let replications: Vec<u64> = range.collect();
        map_ordered(threads, &replications, |_, &r| {
            replicate(master.replication(r))
        })
        .into_iter()
        .collect()
    }

    fn summarise(&self, outputs: impl Iterator<Item = ReplicationOutput>) -> Report {
        let mut metrics: BTreeMap<Metric, MetricSummary> = BTreeMap::new();
        for output in outputs {
            for (name, observation) in output.metrics {
                let summary = metrics.entry(name).or_default();
                match observation {
                    Observation::Value(v) => summary.estimates.push(v),
                    Observation::Series(xs) => {
                        let cut = mser5(&xs);
                        if let Some(kept) = xs.get(cut.cut..).filter(|k| !k.is_empty()) {
                            summary
                                .estimates
                                .push(kept.iter().sum::<f64>() / kept.len() as f64);
                            summary.cuts.push(cut);
                        }
                    }
                }
            }
        }
        for summary in metrics.values_mut() {
            summary.ci = ConfidenceInterval::from_samples(&summary.estimates, self.level);
        }
        Report {
            master_seed: self.master_seed,
            replications: self.replications,
            level: self.level,
            metrics,
        }
    }
}

/// One metric across all replications.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MetricSummary {
    /// The interval over the per-replication estimates; `None` with fewer
    /// than two estimates.
    pub ci: Option<ConfidenceInterval>,
    /// One estimate per replication that reported the metric, in order.
    pub estimates: Vec<f64>,
    /// The MSER-5 cut applied to each replication's series (empty for
    /// metrics reported as single values).
    pub cuts: Vec<MserCut>,
}

impl MetricSummary {
    /// Replications whose MSER-5 minimum lay at the end of the search range:
    /// their warm-up may be longer than the run shows.
    pub fn cuts_at_limit(&self) -> usize {
        self.cuts.iter().filter(|c| c.at_limit).count()
    }
}

/// The outcome of [`Runner::run`].
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// The master seed the replications were derived from.
    pub master_seed: u64,
    /// Number of replications run.
    pub replications: u64,
    /// Confidence level of the intervals.
    pub level: f64,
    /// Every metric any replication reported.
    pub metrics: BTreeMap<Metric, MetricSummary>,
}

impl Report {
    /// The interval for `metric`, if it has one.
    pub fn ci(&self, metric: Metric) -> Option<ConfidenceInterval> {
        self.metrics.get(&metric).and_then(|m| m.ci)
    }

    /// Every metric has an interval no wider than `precision` times its
    /// mean (a zero-width interval counts, whatever its mean).
    pub fn within(&self, precision: f64) -> bool {
        self.metrics.values().all(|m| {
            m.ci.is_some_and(|ci| ci.half_width <= precision * ci.mean.abs())
        })
    }
}

impl fmt::Display for Report {
    /// One line per metric: name, interval, and a warning when some
    /// warm-up cuts hit the MSER search limit.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} replications, master seed {}",
            self.replications, self.master_seed
        )?;
        for (name, m) in &self.metrics {
            match m.ci {
                Some(ci) => write!(f, "{name}: {ci}")?,
                None => write!(f, "{name}: too few replications for an interval")?,
            }
            if !m.cuts.is_empty() {
                let mean_cut = m.cuts.iter().map(|c| c.cut).sum::<usize>() / m.cuts.len();
                write!(f, "; MSER-5 warm-up cut {mean_cut} observations on average")?;
            }
            match m.cuts_at_limit() {
                0 => writeln!(f)?,
                k => writeln!(
                    f,
                    " (warning: in {k} replication(s) the warm-up may exceed half the run)"
                )?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLAIN: Metric = Metric::new("plain");
    const SERIES: Metric = Metric::new("series");
    const RARE: Metric = Metric::new("rare");
    const ABSENT: Metric = Metric::new("absent");
    const X: Metric = Metric::new("x");
    const S: Metric = Metric::new("s");
    const EXACT: Metric = Metric::new("exact");

    fn threads(n: usize) -> NonZeroUsize {
        NonZeroUsize::new(n).unwrap()
    }

    #[test]
    fn values_and_series_are_summarised() {
        let mut r = 0.0;
        let report = Runner::new(1, 4).run(|_| {
            r += 1.0;
            let mut out = ReplicationOutput::new();
            // 10 high batches then steady at r: MSER-5 cuts the first 50.
            let mut xs = vec![100.0; 50];
            xs.extend((0..500).map(|i| r + if i % 2 == 0 { 0.5 } else { -0.5 }));
            out.value(PLAIN, r).series(SERIES, xs);
            if r > 3.0 {
                out.value(RARE, 1.0);
            }
            out
        });
        let plain = report.ci(PLAIN).unwrap();
        assert_eq!((plain.mean, plain.n), (2.5, 4));
        let series = &report.metrics[&SERIES];
        assert_eq!(series.estimates, [1.0, 2.0, 3.0, 4.0]);
        assert!(series.cuts.iter().all(|c| c.cut == 50));
        assert_eq!(series.cuts_at_limit(), 0);
        assert!(report.metrics[&PLAIN].cuts.is_empty());
        assert_eq!(report.metrics[&RARE].estimates, [1.0]);
        assert_eq!(report.ci(RARE), None);
        assert_eq!(report.ci(ABSENT), None);
        let text = report.to_string();
        assert!(
            text.contains("plain: 2.5000 ± 2.0543 (95% CI, n = 4"),
            "{text}"
        );
        assert!(text.contains("warm-up cut 50 observations"), "{text}");
        assert!(text.contains("rare: too few replications"), "{text}");
    }

    #[test]
    fn replications_get_distinct_reproducible_streams() {
        let draw = |seed| {
            Runner::new(seed, 3).with_level(0.9).run(|s| {
                let mut out = ReplicationOutput::new();
                out.value(X, s.stream("x").uniform());
                out
            })
        };
        let a = draw(7);
        assert_eq!(a, draw(7));
        assert_ne!(a, draw(8));
        let xs = &a.metrics[&X].estimates;
        assert!(xs[0] != xs[1] && xs[1] != xs[2]);
        assert_eq!(a.ci(X).unwrap().level, 0.9);
        let direct = Streams::new(7).replication(2).stream("x").uniform();
        assert_eq!(xs[2], direct, "replication 2 can be rerun alone");
    }

    #[test]
    fn parallel_replications_report_exactly_what_sequential_ones_do() {
        let replicate = |s: Streams| {
            let mut out = ReplicationOutput::new();
            let mut x = s.stream("x");
            out.value(X, x.uniform())
                .series(S, (0..200).map(|_| x.uniform()).collect());
            out
        };
        let sequential = Runner::new(11, 9).run(replicate);
        for threads in [1, 2, 4, 20] {
            assert_eq!(
                Runner::new(11, 9).run_parallel(self::threads(threads), replicate),
                sequential
            );
        }
    }

    #[test]
    fn replications_are_added_until_the_relative_precision_is_reached() {
        // Estimates 10 ± uniform noise of width 4: s ≈ 1.15, so ±2% of 10
        // (0.2) needs about (1.96 · 1.15 / 0.2)² ≈ 130 replications.
        let replicate = |s: Streams| {
            let mut out = ReplicationOutput::new();
            out.value(X, 10.0 + 4.0 * (s.stream("x").uniform() - 0.5))
                .value(EXACT, 1.0);
            out
        };
        let report = Runner::new(5, 4).run_to_precision(threads(2), 0.02, 1000, replicate);
        let ci = report.ci(X).unwrap();
        assert!(ci.half_width <= 0.02 * ci.mean, "{ci}");
        assert!((60..400).contains(&report.replications), "{report}");
        assert_eq!(ci.n, report.replications);
        assert!(report.within(0.02));
        // It stops as soon as the precision is reached: one step fewer
        // would not do.
        let fewer = Runner::new(5, report.replications - 4).run_parallel(threads(2), replicate);
        assert!(!fewer.within(0.02));
        // Identical to a fixed run of as many replications, on any threads.
        let fixed = Runner::new(5, report.replications).run(replicate);
        assert_eq!(report, fixed);
        assert_eq!(
            Runner::new(5, 4).run_to_precision(threads(1), 0.02, 1000, replicate),
            report
        );
        // The cap wins over the precision.
        let capped = Runner::new(5, 4).run_to_precision(threads(2), 0.001, 20, replicate);
        assert_eq!(capped.replications, 20);
        assert!(!capped.within(0.001));
        // Already precise: nothing added.
        let exact = Runner::new(5, 3).run_to_precision(threads(2), 0.02, 1000, |_| {
            let mut out = ReplicationOutput::new();
            out.value(EXACT, 1.0);
            out
        });
        assert_eq!(exact.replications, 3);
    }

    #[test]
    fn a_failing_replication_fails_the_run_with_the_first_error_in_order() {
        let replicate = |s: Streams| {
            let x = s.stream("x").uniform();
            if x < 0.5 {
                Err(x)
            } else {
                let mut out = ReplicationOutput::new();
                out.value(X, x);
                Ok(out)
            }
        };
        let first_failure = (0..20)
            .map(|r| Streams::new(3).replication(r).stream("x").uniform())
            .find(|&x| x < 0.5);
        for n in [1, 2, 4] {
            assert_eq!(
                Runner::new(3, 20).try_run_parallel(threads(n), replicate),
                Err(first_failure.unwrap())
            );
        }
    }
}
