//! The search: every combination of the settings a user can change,
//! within the equipment's limits, estimated in closed form
//! ([`crate::model`]); the best few simulated; then each parameter varied
//! alone from the best, simulated, which both refines the best (a value
//! that beats it beyond its interval is taken, and the sweep repeated)
//! and says which parameters matter.

use core::num::NonZeroUsize;
use std::collections::BTreeMap;

use serde::Serialize;

use core::time::Duration;

use linklab_scenario::bux::simulate::{LinkRun, MessageLength};

use crate::link::{Ends, Link, LinkError, Modulo};
use crate::model::estimate;
use crate::settings::{Ack, Procedure, Settings};
use crate::simulate::{simulate, Simulated, SimulationError};

/// How hard to look.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SearchOptions {
    /// Master seed of the simulations.
    pub seed: u64,
    /// Replications per simulated setting (at least 2).
    pub replications: u64,
    /// Threads for the simulations.
    pub threads: NonZeroUsize,
    /// Closed-form candidates simulated before the sweeps.
    pub shortlist: usize,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            seed: 1,
            replications: 10,
            threads: linklab_sim::available_threads(),
            shortlist: 6,
        }
    }
}

/// A setting with what the closed form and the simulator say of it.
#[derive(Debug, Clone, Serialize)]
pub struct Rated {
    /// The settings.
    pub settings: Settings,
    /// Closed-form throughput, bit/s.
    pub model_bps: f64,
    /// Simulated throughput.
    pub simulated: Simulated,
}

/// Another set of settings beside the advice.
#[derive(Debug, Clone, Serialize)]
pub struct Compared {
    /// Whose settings: "Linux kernel defaults", "Dire Wolf defaults",
    /// "Linux LAPB defaults" (lines), "current".
    pub name: &'static str,
    /// The settings and their throughput.
    #[serde(flatten)]
    pub rated: Rated,
    /// The advice's throughput over this one's, less one (0.25 = 25%
    /// faster); `None` when this one's transfers were cut.
    pub gain: Option<f64>,
}

/// One value of a parameter varied alone from the advice.
#[derive(Debug, Clone, Serialize)]
pub struct Variant {
    /// The value, as the parameter's line shows it.
    pub value: String,
    /// Simulated throughput with it.
    pub simulated: Simulated,
}

/// How much one parameter matters, the others held at the advice.
#[derive(Debug, Clone, Serialize)]
pub struct Sensitivity {
    /// The parameter, in the protocol's words.
    pub parameter: &'static str,
    /// Its value in the advice.
    pub advised: String,
    /// Every value tried, in order.
    pub variants: Vec<Variant>,
    /// (best − worst) / best of the variants' means.
    pub spread: f64,
    /// "matters", "matters little" or "no effect".
    pub verdict: &'static str,
}

/// The advice for one link.
#[derive(Debug, Clone, Serialize)]
pub struct Advice {
    /// The link advised on.
    pub link: Link,
    /// The best settings found.
    pub best: Rated,
    /// The stacks' defaults and the current settings, beside it.
    pub compared: Vec<Compared>,
    /// Each parameter varied alone from the best.
    pub sensitivity: Vec<Sensitivity>,
    /// Settings estimated in closed form.
    pub modelled: usize,
    /// Settings simulated.
    pub simulated: usize,
    /// Simulation runs in all.
    pub runs: u64,
    /// Master seed.
    pub seed: u64,
}

/// Why no advice could be given.
#[derive(Debug, thiserror::Error)]
pub enum AdviseError {
    /// The link description is unusable.
    #[error(transparent)]
    Link(#[from] LinkError),
    /// A simulation failed.
    #[error(transparent)]
    Simulation(#[from] SimulationError),
    /// Too few replications.
    #[error("{0} replication(s): at least 2 are needed for a confidence interval")]
    Replications(u64),
}

/// Standard serial rates.
const SERIAL_RATES: [u32; 9] = [
    1200, 2400, 4800, 9600, 19200, 38400, 57600, 115_200, 230_400,
];
/// N1 values tried.
const N1S: [usize; 8] = [32, 64, 128, 192, 256, 512, 1024, 2048];
/// Modulo-128 windows tried.
const WINDOWS_128: [u8; 13] = [1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 24, 32, 63];
/// T2 values tried, ms.
const T2S: [u32; 4] = [500, 1000, 2000, 3000];
/// Persistence values tried.
const PERSISTENCES: [u8; 3] = [63, 127, 255];
/// Slot times tried, ms.
const SLOTS: [u32; 3] = [10, 50, 100];
/// Sweeps at most, before the advice stops moving.
const PASSES: usize = 3;
/// A smaller window or persistence within this share of the best is
/// advised instead (less to send again, kinder to the channel).
const NOISE: f64 = 0.01;

/// The parameters, in the order of the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Parameter {
    Procedure,
    Window,
    N1,
    Ack,
    T1,
    Persistence,
    Slot,
    Serial,
    AckWindow,
}

/// The parameters of a radio link, in the order of the report.
const RADIO: [Parameter; 7] = [
    Parameter::Window,
    Parameter::N1,
    Parameter::Ack,
    Parameter::T1,
    Parameter::Persistence,
    Parameter::Slot,
    Parameter::Serial,
];

/// The parameters of a line: no channel access, no serial link, the
/// receiver's acknowledgement the engine's own.
const LINE: [Parameter; 4] = [
    Parameter::Procedure,
    Parameter::Window,
    Parameter::N1,
    Parameter::T1,
];

/// The parameters of a bundle over the AX.25 convergence layer.
const BUNDLE: [Parameter; 8] = [
    Parameter::Window,
    Parameter::N1,
    Parameter::AckWindow,
    Parameter::Ack,
    Parameter::T1,
    Parameter::Persistence,
    Parameter::Slot,
    Parameter::Serial,
];

/// The parameters that apply on `link`.
fn parameters(link: &Link) -> &'static [Parameter] {
    if link.is_line() {
        &LINE
    } else if link.workload.bundle {
        &BUNDLE
    } else {
        &RADIO
    }
}

/// The convergence layer's `ack_window`s tried: from one segment (the
/// per-segment acknowledgement of Ronan et al.'s Fig. 3) to 32 (their
/// choice for stable links).
const ACK_WINDOWS: [u32; 6] = [1, 2, 4, 8, 16, 32];

fn ack_windows(link: &Link) -> Vec<u32> {
    if link.workload.bundle {
        ACK_WINDOWS.to_vec()
    } else {
        vec![crate::settings::default_ack_window()]
    }
}

/// The windows tried: on a line the modulus less one.
fn windows(link: &Link) -> Vec<u8> {
    match (link.is_line(), link.limits.modulo) {
        (true, Modulo::Eight) => vec![7],
        (true, Modulo::OneTwentyEight) => vec![7, 127],
        (false, Modulo::Eight) => (1..=7).collect(),
        (false, Modulo::OneTwentyEight) => WINDOWS_128.to_vec(),
    }
}

fn procedures(link: &Link) -> Vec<Procedure> {
    if link.is_line() {
        vec![Procedure::Abm, Procedure::Nrm]
    } else {
        vec![Procedure::Abm]
    }
}

impl Parameter {
    fn name(self) -> &'static str {
        match self {
            Parameter::Procedure => "procedure",
            Parameter::Window => "window k (MAXFRAME)",
            Parameter::N1 => "N1 (PACLEN)",
            Parameter::Ack => "acknowledgement",
            Parameter::T1 => "T1 (FRACK)",
            Parameter::Persistence => "persistence P",
            Parameter::Slot => "SLOTTIME",
            Parameter::Serial => "serial rate",
            Parameter::AckWindow => "CL ack_window",
        }
    }

    fn show(self, s: &Settings) -> String {
        match self {
            Parameter::Procedure => s.procedure.to_string(),
            Parameter::Window => s.window.to_string(),
            Parameter::N1 => s.n1.to_string(),
            Parameter::Ack => s.ack.to_string(),
            Parameter::T1 => format!("{} ms", s.t1_ms),
            Parameter::Persistence => s.persistence.to_string(),
            Parameter::Slot => format!("{} ms", s.slot_ms),
            Parameter::Serial => format!("{} bit/s", s.serial_bps),
            Parameter::AckWindow => s.ack_window.to_string(),
        }
    }

    /// `best` with this parameter at each value tried, in order.
    fn variants(self, link: &Link, best: &Settings) -> Vec<Settings> {
        let with = |f: &dyn Fn(&mut Settings)| {
            let mut s = *best;
            f(&mut s);
            s
        };
        let out: Vec<Settings> = match self {
            Parameter::Procedure => procedures(link)
                .into_iter()
                .map(|p| with(&|s| s.procedure = p))
                .collect(),
            // A longer window or frame needs a longer T1: raised to the
            // rule's when the best's is too short for it.
            Parameter::Window => windows(link)
                .into_iter()
                .map(|w| with(&|s| s.window = w))
                .map(|s| with_t1_for(link, s))
                .collect(),
            Parameter::N1 => n1s(link)
                .into_iter()
                .map(|n| with(&|s| s.n1 = n))
                .map(|s| with_t1_for(link, s))
                .collect(),
            // A T2 needs a T1 beyond it (and longer than T2 after the
            // window, where the stack's T1 runs from its end).
            Parameter::Ack => acks(link)
                .into_iter()
                .map(|a| with(&|s| s.ack = a))
                .map(|s| with_t1_for(link, s))
                .collect(),
            Parameter::T1 => {
                let rule = t1_rule(link, best);
                let mut t1s = vec![
                    rule / 2,
                    rule * 3 / 4,
                    rule,
                    rule * 3 / 2,
                    rule * 2,
                    3000,
                    10_000,
                ];
                t1s.iter_mut().for_each(|t| *t = t.div_ceil(100) * 100);
                t1s.sort_unstable();
                t1s.dedup();
                t1s.into_iter().map(|t| with(&|s| s.t1_ms = t)).collect()
            }
            Parameter::Persistence => PERSISTENCES
                .into_iter()
                .map(|p| with(&|s| s.persistence = p))
                .collect(),
            Parameter::Slot => SLOTS
                .into_iter()
                .map(|t| with(&|s| s.slot_ms = t))
                .collect(),
            Parameter::Serial => serials(link)
                .into_iter()
                .map(|r| with(&|s| s.serial_bps = r))
                .collect(),
            Parameter::AckWindow => ack_windows(link)
                .into_iter()
                .map(|a| with(&|s| s.ack_window = a))
                .collect(),
        };
        out.into_iter()
            .filter(|s| s.validate(link).is_ok())
            .collect()
    }
}

fn n1s(link: &Link) -> Vec<usize> {
    let limit = link.n1_limit();
    let mut v: Vec<usize> = N1S.into_iter().filter(|&n| n < limit).collect();
    v.push(limit);
    v
}

/// The acknowledgements tried: at once, or after each T2; Dire Wolf's
/// engine has no T2 and always acknowledges when it gets the channel.
fn acks(link: &Link) -> Vec<Ack> {
    if link.stack() == crate::settings::Stack::DireWolf {
        return vec![Ack::AtOnce];
    }
    std::iter::once(Ack::AtOnce)
        .chain(T2S.into_iter().map(|t2_ms| Ack::AfterT2 { t2_ms }))
        .collect()
}

fn serials(link: &Link) -> Vec<u32> {
    let max = link.serial_max_bps();
    let mut v: Vec<u32> = SERIAL_RATES.into_iter().filter(|&r| r < max).collect();
    v.push(max);
    v
}

/// T1 for `s` on `link`: half as long again as the closed form's round
/// trip, and a second more, in whole 100 ms, so that the CSMA wait and
/// the ends' delays seldom make it expire needlessly.
fn t1_rule(link: &Link, s: &Settings) -> u32 {
    if let Ends::Line { t_p_ms } = link.ends {
        // Bux et al. give none; the reproduction's rule (LinkRun::default_t1).
        let t1 = LinkRun::default_t1(
            link.channel.bit_rate,
            Duration::from_secs_f64(t_p_ms / 1e3),
            MessageLength::Constant {
                bits: u32::try_from(8 * s.n1).unwrap_or(u32::MAX),
            },
        );
        return (t1.as_millis().div_ceil(100) * 100).clamp(100, 600_000) as u32;
    }
    let rt = estimate(link, s).round_trip_s;
    // Beyond T2 too: a T1 that runs from the end of the window need not
    // cover all of T2, but a stack that does not poll answers after it.
    let t2 = match s.ack {
        Ack::AtOnce => 0.0,
        Ack::AfterT2 { t2_ms } => f64::from(t2_ms) / 1e3,
    };
    let t1 = (1.5 * rt).max(rt + 1.0).max(t2 + 1.0);
    ((t1 * 10.0).ceil() as u32 * 100).clamp(100, 600_000)
}

/// `s` with T1 raised to [`t1_rule`]'s value if it is shorter.
fn with_t1_for(link: &Link, s: Settings) -> Settings {
    Settings {
        t1_ms: s.t1_ms.max(t1_rule(link, &s)),
        ..s
    }
}

/// Every combination of the searched parameters, T1 set by
/// [`t1_rule`], serial at the link's fastest.
fn grid(link: &Link) -> Vec<Settings> {
    let serial = link.serial_max_bps();
    let (acks, persistences, slots) = if link.is_line() {
        (vec![Ack::AtOnce], vec![255], vec![10])
    } else {
        (acks(link), PERSISTENCES.to_vec(), SLOTS.to_vec())
    };
    let mut out = Vec::new();
    let base = Settings {
        procedure: Procedure::Abm,
        window: 1,
        n1: 1,
        t1_ms: 10_000,
        ack: Ack::AtOnce,
        persistence: 255,
        slot_ms: 10,
        serial_bps: serial,
        ack_window: crate::settings::default_ack_window(),
        stack: link.stack(),
    };
    // Each parameter's values applied in turn to every settings so far.
    let mut grid = vec![base];
    let mut vary = |f: &dyn Fn(Settings) -> Vec<Settings>| {
        grid = grid.iter().flat_map(|s| f(*s)).collect();
    };
    vary(&|s| {
        procedures(link)
            .into_iter()
            .map(|procedure| Settings { procedure, ..s })
            .collect()
    });
    vary(&|s| {
        windows(link)
            .into_iter()
            .map(|window| Settings { window, ..s })
            .collect()
    });
    vary(&|s| {
        n1s(link)
            .into_iter()
            .map(|n1| Settings { n1, ..s })
            .collect()
    });
    vary(&|s| acks.iter().map(|&ack| Settings { ack, ..s }).collect());
    vary(&|s| {
        persistences
            .iter()
            .map(|&persistence| Settings { persistence, ..s })
            .collect()
    });
    vary(&|s| {
        slots
            .iter()
            .map(|&slot_ms| Settings { slot_ms, ..s })
            .collect()
    });
    vary(&|s| {
        ack_windows(link)
            .into_iter()
            .map(|ack_window| Settings { ack_window, ..s })
            .collect()
    });
    for mut s in grid {
        s.t1_ms = t1_rule(link, &s);
        if s.validate(link).is_ok() {
            out.push(s);
        }
    }
    out
}

/// Simulations already run, by settings.
struct Cache<'a> {
    link: &'a Link,
    options: SearchOptions,
    done: BTreeMap<Settings, Simulated>,
    runs: u64,
}

impl Cache<'_> {
    /// Simulates what is not yet known of `settings`.
    fn run(&mut self, settings: &[Settings]) -> Result<(), SimulationError> {
        let mut new: Vec<Settings> = settings
            .iter()
            .filter(|s| !self.done.contains_key(s))
            .copied()
            .collect();
        new.sort_unstable();
        new.dedup();
        let results = simulate(
            self.link,
            &new,
            self.options.seed,
            self.options.replications,
            self.options.threads,
        )?;
        self.runs += new.len() as u64 * self.options.replications;
        self.done.extend(new.into_iter().zip(results));
        Ok(())
    }

    fn get(&self, s: &Settings) -> Simulated {
        self.done[s]
    }

    fn rated(&self, s: &Settings) -> Rated {
        Rated {
            settings: *s,
            model_bps: estimate(self.link, s).throughput_bps,
            simulated: self.get(s),
        }
    }
}

/// Searches the settings of `link` for the most throughput.
pub fn advise(link: &Link, options: SearchOptions) -> Result<Advice, AdviseError> {
    link.validate()?;
    if options.replications < 2 {
        return Err(AdviseError::Replications(options.replications));
    }
    let mut cache = Cache {
        link,
        options,
        done: BTreeMap::new(),
        runs: 0,
    };

    // Closed form over the grid, then the shortlist simulated.
    let mut ranked: Vec<(f64, Settings)> = grid(link)
        .into_iter()
        .map(|s| (estimate(link, &s).transfer_s, s))
        .collect();
    let modelled = ranked.len();
    ranked.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut others = if link.is_line() {
        vec![("Linux LAPB defaults", Settings::linux_lapb(link))]
    } else {
        vec![
            ("Linux kernel defaults", Settings::linux(link)),
            ("Dire Wolf defaults", Settings::direwolf(link)),
        ]
    };
    // The settings in use run on the stack the link describes.
    if let Some(current) = link.current {
        others.push((
            "current",
            Settings {
                stack: link.stack(),
                ..current
            },
        ));
    }
    // The defaults and the current settings are candidates too, on the
    // stack advised; beside the advice each runs on its own.
    let shortlist: Vec<Settings> = ranked
        .iter()
        .take(options.shortlist.max(1))
        .map(|(_, s)| *s)
        .chain(others.iter().map(|(_, s)| Settings {
            stack: link.stack(),
            ..*s
        }))
        .collect();
    cache.run(&shortlist)?;
    cache.run(&others.iter().map(|(_, s)| *s).collect::<Vec<_>>())?;
    let mut best = *shortlist
        .iter()
        .max_by(|a, b| cache.get(a).score().total_cmp(&cache.get(b).score()))
        .expect("a shortlist of at least one");

    // Sweeps from the best until none beats it beyond its interval.
    for _ in 0..PASSES {
        let mut moved = false;
        for &p in parameters(link) {
            let variants = p.variants(link, &best);
            cache.run(&variants)?;
            let here = cache.get(&best);
            let beats =
                |v: &Simulated| v.cut == 0 && (here.cut > 0 || v.lower() > here.throughput_bps);
            if let Some(better) = variants
                .iter()
                .filter(|v| beats(&cache.get(v)))
                .max_by(|a, b| cache.get(a).score().total_cmp(&cache.get(b).score()))
            {
                best = *better;
                moved = true;
            }
        }
        if !moved {
            break;
        }
    }
    best = prefer_smaller(&cache, link, best);

    let sensitivity = parameters(link)
        .iter()
        .map(|&p| {
            let variants = p.variants(link, &best);
            cache.run(&variants)?;
            Ok(sensitivity(&cache, p, &best, &variants))
        })
        .collect::<Result<Vec<_>, SimulationError>>()?;

    let best = cache.rated(&best);
    let compared = others
        .into_iter()
        .map(|(name, s)| {
            let rated = cache.rated(&s);
            Compared {
                name,
                gain: (rated.simulated.cut == 0)
                    .then(|| best.simulated.throughput_bps / rated.simulated.throughput_bps - 1.0),
                rated,
            }
        })
        .collect();
    Ok(Advice {
        link: link.clone(),
        best,
        compared,
        sensitivity,
        modelled,
        simulated: cache.done.len(),
        runs: cache.runs,
        seed: options.seed,
    })
}

/// The smallest window, then the lowest persistence, within [`NOISE`]
/// of the best's throughput.
fn prefer_smaller(cache: &Cache, link: &Link, best: Settings) -> Settings {
    let mut best = best;
    for p in [Parameter::Window, Parameter::Persistence] {
        let top = cache.get(&best).throughput_bps;
        if let Some(smaller) = p.variants(link, &best).into_iter().find(|v| {
            cache
                .done
                .get(v)
                .is_some_and(|s| s.cut == 0 && s.throughput_bps >= top * (1.0 - NOISE))
        }) {
            best = smaller;
        }
    }
    best
}

fn sensitivity(cache: &Cache, p: Parameter, best: &Settings, variants: &[Settings]) -> Sensitivity {
    let means: Vec<f64> = variants
        .iter()
        .map(|v| cache.get(v).throughput_bps)
        .collect();
    let hi = means.iter().copied().fold(f64::MIN, f64::max);
    let lo = means.iter().copied().fold(f64::MAX, f64::min);
    let spread = if hi > 0.0 { (hi - lo) / hi } else { 0.0 };
    let here = cache.get(best);
    // Within the best's own interval, or under 2%: no effect.
    let noise = (here.half_width_bps / here.throughput_bps).max(0.02);
    let verdict = if spread <= noise {
        "no effect"
    } else if spread <= 0.10 {
        "matters little"
    } else {
        "matters"
    };
    Sensitivity {
        parameter: p.name(),
        advised: p.show(best),
        variants: variants
            .iter()
            .map(|v| Variant {
                value: p.show(v),
                simulated: cache.get(v),
            })
            .collect(),
        spread,
        verdict,
    }
}
