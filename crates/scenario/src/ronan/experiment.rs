//! `kind = "ronan-transfer"` ([`RonanTransfer`]): the transfer of
//! section III.B as a scenario file, replicated at every bit rate and
//! window given and set against the model ([`super::compare`]).

use core::fmt;
use core::time::Duration;

use linklab_channel::{SlotClock, StationConfig};
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::Deserialize;

use super::{compare, Comparison};
use crate::experiment::{ExperimentKind, InvalidField, MAX_MESSAGE_OCTETS};
use crate::report::{Figure, Output, Point, Progress, RunOptions, Series, SeriesStyle, Table};
use crate::transfer::{TransferConfig, TransferError};

/// A list of whole numbers that may be written as one number: `window = 3`
/// or `window = [1, 2, 3]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OneOrMany(pub Vec<u64>);

impl<'de> Deserialize<'de> for OneOrMany {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Numbers;
        impl<'de> Visitor<'de> for Numbers {
            type Value = OneOrMany;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a whole number or a list of whole numbers")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<OneOrMany, E> {
                Ok(OneOrMany(vec![v]))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<OneOrMany, E> {
                u64::try_from(v)
                    .map(|v| OneOrMany(vec![v]))
                    .map_err(|_| E::invalid_value(de::Unexpected::Signed(v), &self))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<OneOrMany, A::Error> {
                let mut values = Vec::new();
                while let Some(v) = seq.next_element::<u64>()? {
                    values.push(v);
                }
                Ok(OneOrMany(values))
            }
        }
        deserializer.deserialize_any(Numbers)
    }
}

/// `kind = "ronan-transfer"`: the transfer of Ronan, Long and Walsh,
/// section III.B — one message between two AX.25 stations (the real
/// `link` engine, modulo 8, one RR per window) on the half-duplex KISS
/// CSMA channel — replicated at every bit rate and window given, beside
/// the paper's transfer-time model (Tables II and III) and the model with
/// the simulated access wait ([`crate::ronan`]).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RonanTransfer {
    /// Radio bit rates, bit/s (Tables II and III: 1200 and 9600).
    pub bit_rate_bps: OneOrMany,
    /// Windows k (AX.25 `maxframe`), 1-7.
    pub window: OneOrMany,
    /// N1: octets per information field, 1-256 (Table I: 255).
    pub n1_octets: u64,
    /// Message length, octets (Table I: 7182).
    pub message_octets: u64,
    /// KISS slot time, ms (Table I: 20).
    pub slot_ms: f64,
    /// KISS TXDELAY, ms (Table I: 150).
    pub txdelay_ms: f64,
    /// KISS TXTAIL, ms (Table I: 20).
    pub txtail_ms: f64,
    /// KISS persistence P, 0-255: transmit in a free slot with
    /// probability (P + 1)/256 (Table I: p = 0.25, P = 63).
    pub persistence: u64,
    /// When both stations draw for a slot: `"free-running"` (the default:
    /// at the ticks of a KISS TNC's slot clock) or `"after-clear"` (a
    /// whole slot time after the channel clears or the frame is queued,
    /// as Dire Wolf's modem does; see [`SlotClock`]).
    #[serde(default)]
    pub slot_clock: SlotClockName,
    /// With `slot_clock = "after-clear"`: how often a station looks at its
    /// DCD while the channel is busy, ms (Dire Wolf: 10); 0, the
    /// default, looks continuously.
    #[serde(default)]
    pub carrier_poll_ms: f64,
    /// Replications per bit rate and window, at least 2.
    pub replications: u64,
}

/// The values of `slot_clock` in a scenario file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SlotClockName {
    /// [`SlotClock::FreeRunning`].
    #[default]
    FreeRunning,
    /// [`SlotClock::AfterClear`].
    AfterClear,
}

/// Replications of a `--quick` run (at most).
const QUICK_REPLICATIONS: u64 = 3;

impl ExperimentKind for RonanTransfer {
    type Point = (u64, u64);
    type Result = Comparison;
    type Error = TransferError;

    fn validate(&self) -> Result<(), InvalidField> {
        if self.bit_rate_bps.0.is_empty() {
            return Err(InvalidField::new("bit_rate_bps", "the list is empty"));
        }
        if let Some(r) = self
            .bit_rate_bps
            .0
            .iter()
            .find(|&&r| r == 0 || r > u64::from(u32::MAX))
        {
            return Err(InvalidField::new(
                "bit_rate_bps",
                format!("{r} bit/s is out of range 1-{}", u32::MAX),
            ));
        }
        if self.window.0.is_empty() {
            return Err(InvalidField::new("window", "the list is empty"));
        }
        if let Some(k) = self.window.0.iter().find(|&&k| !(1..=7).contains(&k)) {
            return Err(InvalidField::new(
                "window",
                format!("{k} is out of range 1-7 (AX.25 modulo 8)"),
            ));
        }
        if !(1..=256).contains(&self.n1_octets) {
            return Err(InvalidField::new(
                "n1_octets",
                format!("{} is out of range 1-256 (AX.25 N1)", self.n1_octets),
            ));
        }
        if !(1..=MAX_MESSAGE_OCTETS).contains(&self.message_octets) {
            return Err(InvalidField::new(
                "message_octets",
                format!(
                    "{} is out of range 1-{MAX_MESSAGE_OCTETS} (16 MiB: the simulator holds the message in memory)",
                    self.message_octets
                ),
            ));
        }
        for (field, ms) in [
            ("slot_ms", self.slot_ms),
            ("txdelay_ms", self.txdelay_ms),
            ("txtail_ms", self.txtail_ms),
        ] {
            if !(0.0..=60_000.0).contains(&ms) {
                return Err(InvalidField::new(
                    field,
                    format!("{ms} ms is out of range 0-60000 ms"),
                ));
            }
        }
        if self.slot_ms == 0.0 {
            return Err(InvalidField::new(
                "slot_ms",
                "the slot time must be above 0 ms",
            ));
        }
        if !(0.0..=60_000.0).contains(&self.carrier_poll_ms) {
            return Err(InvalidField::new(
                "carrier_poll_ms",
                format!("{} ms is out of range 0-60000 ms", self.carrier_poll_ms),
            ));
        }
        if self.carrier_poll_ms != 0.0 && self.slot_clock != SlotClockName::AfterClear {
            return Err(InvalidField::new(
                "carrier_poll_ms",
                "a station polls its DCD only with slot_clock = \"after-clear\"",
            ));
        }
        if self.persistence > 255 {
            return Err(InvalidField::new(
                "persistence",
                format!("{} is out of range 0-255 (KISS P)", self.persistence),
            ));
        }
        if self.replications < 2 {
            return Err(InvalidField::new(
                "replications",
                format!(
                    "{} is too few: a confidence interval needs at least 2",
                    self.replications
                ),
            ));
        }
        if self.replications > 1000 {
            return Err(InvalidField::new(
                "replications",
                format!("{} is too many: at most 1000", self.replications),
            ));
        }
        Ok(())
    }

    /// Every (bit rate, window).
    fn points(&self, _: &RunOptions) -> Result<Vec<(u64, u64)>, TransferError> {
        Ok(self
            .bit_rate_bps
            .0
            .iter()
            .flat_map(|&r| self.window.0.iter().map(move |&k| (r, k)))
            .collect())
    }

    /// Replicates the transfer at one bit rate and window; replication r
    /// of every point uses stream r of `opts.seed`. `opts.quick` runs at
    /// most 3 replications.
    fn run_point(
        &self,
        opts: &RunOptions,
        &(rate, k): &(u64, u64),
        progress: &dyn Progress,
    ) -> Result<Comparison, TransferError> {
        progress.add_work(1);
        let c = compare(
            &self.config(rate, k),
            self.replications(opts),
            opts.seed,
            opts.jobs,
        );
        progress.advance(1, &format!("ronan-transfer {rate} bit/s, k = {k}"));
        c
    }

    /// One table of all points and one figure per bit rate (transfer time
    /// against window: simulated with 95% intervals, the published model,
    /// the model with the simulated access wait).
    fn assemble(
        &self,
        opts: &RunOptions,
        _: &[(u64, u64)],
        rows: Vec<Comparison>,
    ) -> Result<Output, TransferError> {
        let replications = self.replications(opts);
        Ok(Output {
            tables: vec![self.table(&rows, replications)],
            figures: self
                .bit_rate_bps
                .0
                .iter()
                .map(|&rate| self.figure(rate, &rows, replications))
                .collect(),
        })
    }
}

impl RonanTransfer {
    /// The transfer at one bit rate and window. Call after
    /// [`ExperimentKind::validate`].
    fn config(&self, bit_rate: u64, window: u64) -> TransferConfig {
        let ms = |v: f64| Duration::from_secs_f64(v / 1e3);
        TransferConfig {
            bit_rate: u32::try_from(bit_rate).unwrap_or(u32::MAX),
            station: StationConfig {
                persistence: u8::try_from(self.persistence).unwrap_or(u8::MAX),
                slot_time: ms(self.slot_ms),
                txdelay: ms(self.txdelay_ms),
                txtail: ms(self.txtail_ms),
                slot_phase: Duration::ZERO,
            },
            slot_clock: match self.slot_clock {
                SlotClockName::FreeRunning => SlotClock::FreeRunning,
                SlotClockName::AfterClear => SlotClock::AfterClear {
                    carrier_poll: ms(self.carrier_poll_ms),
                },
            },
            window: u8::try_from(window).unwrap_or(u8::MAX),
            n1: usize::try_from(self.n1_octets).unwrap_or(usize::MAX),
            message_octets: usize::try_from(self.message_octets).unwrap_or(usize::MAX),
            ..TransferConfig::ronan_table_1(0, 0)
        }
    }

    /// Replications per point: all of them, at most 3 in a quick run.
    fn replications(&self, opts: &RunOptions) -> u64 {
        if opts.quick {
            self.replications.min(QUICK_REPLICATIONS)
        } else {
            self.replications
        }
    }

    fn table(&self, rows: &[Comparison], replications: u64) -> Table {
        let columns = [
            "bit_rate_bps",
            "window",
            "model_s",
            "simulated_s",
            "ci95_s",
            "gap_pct",
            "access_wait_ms",
            "corrected_model_s",
            "corrected_gap_pct",
            "i_frames",
            "acks",
        ];
        Table {
            id: "transfer-time".into(),
            title: format!(
                "Transfer time of {} octets, N1 = {}: Ronan's model against {replications} \
                 simulated transfers (95% intervals)",
                self.message_octets, self.n1_octets
            ),
            columns: columns.iter().map(|c| c.to_string()).collect(),
            rows: rows
                .iter()
                .map(|c| {
                    vec![
                        c.bit_rate.to_string(),
                        c.window.to_string(),
                        format!("{:.3}", c.model_s),
                        format!("{:.3}", c.simulated.mean),
                        format!("{:.3}", c.simulated.half_width),
                        format!("{:+.2}", c.gap_percent()),
                        format!("{:.1}", c.access_wait.mean * 1e3),
                        format!("{:.3}", c.corrected_s),
                        format!("{:+.2}", c.corrected_gap_percent()),
                        format!("{:.1}", c.i_frames),
                        format!("{:.1}", c.acks),
                    ]
                })
                .collect(),
        }
    }

    fn figure(&self, rate: u64, rows: &[Comparison], replications: u64) -> Figure {
        let at_rate: Vec<&Comparison> = rows
            .iter()
            .filter(|c| u64::from(c.bit_rate) == rate)
            .collect();
        let series = |label: String, style, point: &dyn Fn(&Comparison) -> Point| Series {
            label,
            style,
            points: at_rate.iter().map(|c| point(c)).collect(),
        };
        let x = |c: &Comparison| f64::from(c.window);
        Figure {
            id: format!("transfer-time-{rate}bps"),
            title: format!(
                "Transfer time of {} octets against window k at {rate} bit/s",
                self.message_octets
            ),
            x_label: "window k (frames)".into(),
            y_label: "transfer time (s)".into(),
            log_x: false,
            log_y: false,
            series: vec![
                series(
                    format!("simulated, {replications} replications"),
                    SeriesStyle::Simulated,
                    &|c| Point {
                        x: x(c),
                        y: c.simulated.mean,
                        half_width: Some(c.simulated.half_width),
                    },
                ),
                series("Ronan's model".into(), SeriesStyle::Model, &|c| Point {
                    x: x(c),
                    y: c.model_s,
                    half_width: None,
                }),
                series(
                    "model with simulated access wait".into(),
                    SeriesStyle::Model,
                    &|c| Point {
                        x: x(c),
                        y: c.corrected_s,
                        half_width: None,
                    },
                ),
            ],
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::experiment::Experiment;
    use crate::report::NoProgress;

    /// Table I of Ronan et al. as a scenario file, at two windows.
    pub(crate) const TABLE_I: &str = r#"
kind = "ronan-transfer"
bit_rate_bps = 9600
window = [2, 7]
n1_octets = 255
message_octets = 7182
slot_ms = 20
txdelay_ms = 150
txtail_ms = 20
persistence = 63
replications = 2
"#;

    /// [`TABLE_I`] with `line` replaced.
    pub(crate) fn with(line: &str, replacement: &str) -> String {
        TABLE_I.replace(line, replacement)
    }

    /// Why `text` is refused.
    pub(crate) fn error(text: &str) -> String {
        Experiment::from_toml(text).unwrap_err().to_string()
    }

    #[test]
    fn table_i_parses_into_the_transfer_config() {
        let Ok(Experiment::RonanTransfer(t)) = Experiment::from_toml(TABLE_I) else {
            panic!("not a ronan-transfer experiment");
        };
        assert_eq!(t.window, OneOrMany(vec![2, 7]));
        assert_eq!(t.config(9600, 2), TransferConfig::ronan_table_1(9600, 2));
    }

    #[test]
    fn one_window_or_a_list() {
        let Ok(Experiment::RonanTransfer(t)) =
            Experiment::from_toml(&with("window = [2, 7]", "window = 4"))
        else {
            panic!("not a ronan-transfer experiment");
        };
        assert_eq!(t.window, OneOrMany(vec![4]));
    }

    #[test]
    fn the_slot_clock_is_free_running_unless_after_clear_is_asked() {
        let config = |text: &str| match Experiment::from_toml(text) {
            Ok(Experiment::RonanTransfer(t)) => t.config(9600, 2),
            other => panic!("{other:?}"),
        };
        assert_eq!(config(TABLE_I).slot_clock, SlotClock::FreeRunning);
        let dire_wolf = with(
            "replications = 2",
            "slot_clock = \"after-clear\"\ncarrier_poll_ms = 10\nreplications = 2",
        );
        assert_eq!(
            config(&dire_wolf).slot_clock,
            SlotClock::AfterClear {
                carrier_poll: Duration::from_millis(10)
            }
        );
        let e = error(&with("persistence = 63", "slot_clock = \"tnc\""));
        assert!(
            e.contains("unknown variant `tnc`, expected `free-running` or `after-clear`"),
            "{e}"
        );
        let e = error(&with(
            "persistence = 63",
            "persistence = 63\ncarrier_poll_ms = 10",
        ));
        assert!(
            e.contains("carrier_poll_ms: a station polls its DCD only with slot_clock"),
            "{e}"
        );
    }

    #[test]
    fn after_clear_slots_lengthen_the_simulated_transfer() {
        // Dire Wolf's slots: a whole SLOTTIME before every draw. With the
        // same seed the stations make the same persistence draws, so each
        // access waits a whole slot more where the free-running clock
        // waited part of one.
        let run = |text: &str| {
            let e = Experiment::from_toml(text).unwrap();
            let out = e.run(&RunOptions::default(), &NoProgress).unwrap();
            let t = &out.tables[0];
            let col = |name: &str| t.columns.iter().position(|c| c == name).unwrap();
            let cell = |name: &str| t.rows[0][col(name)].parse::<f64>().unwrap();
            (cell("simulated_s"), cell("access_wait_ms"))
        };
        let base = with("window = [2, 7]", "window = 7");
        let (free, free_wait) = run(&base);
        let (after, after_wait) = run(&with(
            "replications = 2",
            "slot_clock = \"after-clear\"\nreplications = 2",
        ));
        assert!(after_wait > free_wait, "{after_wait} vs {free_wait}");
        assert!(after > free, "{after} vs {free}");
    }

    #[test]
    fn a_negative_window_is_refused_by_the_parser() {
        let e = error(&with("window = [2, 7]", "window = -1"));
        assert!(e.contains("a whole number or a list"), "{e}");
    }

    #[test]
    fn a_run_gives_a_table_and_a_figure_per_rate_with_intervals() {
        let e = Experiment::from_toml(&with("window = [2, 7]", "window = 7")).unwrap();
        let out = e.run(&RunOptions::default(), &NoProgress).unwrap();
        assert_eq!(out.tables.len(), 1);
        assert_eq!(out.tables[0].rows.len(), 1);
        assert_eq!(out.tables[0].rows[0][..2], ["9600", "7"]);
        let fig = &out.figures[0];
        assert_eq!(fig.id, "transfer-time-9600bps");
        let simulated = &fig.series[0];
        assert_eq!(simulated.style, SeriesStyle::Simulated);
        let p = simulated.points[0];
        assert!(p.half_width.is_some_and(|h| h >= 0.0));
        // The simulation waits longer for the channel than the model's
        // 5 ms per access (crate::ronan), so it takes longer.
        assert!(p.y > fig.series[1].points[0].y, "{p:?}");
    }
}
