//! `linklab reproduce`: the papers' tables and figures beside linklab's.
//!
//! Each reproduction is a [`Job`]: a function giving one
//! [`Section`] of a paper. The jobs run on two threads, the report keeps
//! their declared order whatever the timing, and the results become
//!
//! - `DIR/summary.json`: `{"checks": [{"id", "paper", "what",
//!   "paper_value", "ours", "unit", "tolerance", "pass", "note"}]}`;
//! - `DIR/<id>.csv` for every table and figure (a figure's columns are
//!   `series,x,y,half_width`), `DIR/<id>.svg` for every figure;
//! - `DIR/report.html`: one self-contained page with all of it;
//! - the tables as text on stdout.
//!
//! The command fails (exit status 1) when a check fails, naming it,
//! unless that check is a declared gap ([`gaps`]); and when a declared gap
//! passes.

mod files;
mod gaps;
mod html;
mod progress;
mod svg;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::Args;
use linklab_scenario::report::{Check, Paper, PaperReport, Progress, RunOptions, Section};
use linklab_scenario::shard::Shard;
use serde::{Deserialize, Serialize};

use crate::parts::{Merged, Part, PartDir, RunOf};

use crate::run_args::RunArgs;

pub use files::{check_ids, create_dir, print_table, write, write_tables_and_figures};
pub use progress::Bar;

/// The papers, in report order.
const PAPERS: [Paper; 5] = [
    Paper::Zielinski2013,
    Paper::RonanAx25,
    Paper::Bux1982,
    Paper::Korb1987,
    Paper::RonanDstar,
];

#[derive(Args)]
pub struct ReproduceArgs {
    /// Reproduce only this paper.
    #[arg(long, value_parser = PossibleValuesParser::new(PAPERS.map(Paper::id)).try_map(paper))]
    paper: Option<Paper>,
    /// Directory for report.html, summary.json, the CSV and SVG files.
    #[arg(long, default_value = "linklab-report")]
    out: PathBuf,
    /// Run only part I of N (counted from 0) of the sections, the longest
    /// dealt out first, and write it to `--out DIR` as DIR/part.cbor, for
    /// `linklab merge`.
    #[arg(long, value_name = "I/N")]
    shard: Option<Shard>,
    #[command(flatten)]
    run: RunArgs,
}

/// The paper with `summary.json` id `id`.
fn paper(id: String) -> Result<Paper, String> {
    PAPERS
        .into_iter()
        .find(|p| p.id() == id)
        .ok_or_else(|| format!("no paper {id}"))
}

/// One reproduction: a section of a paper.
pub struct Job {
    /// The paper reproduced.
    pub paper: Paper,
    /// Runs it.
    pub run: fn(&RunOptions, &dyn Progress) -> anyhow::Result<Section>,
    /// Its rough cost, the seconds a full run of it took on one core
    /// (2026-11-26, docs/performance.md): the jobs start longest first so
    /// that no core idles while a long one finishes last. Results do not
    /// depend on it.
    pub cost: u32,
}

/// Every reproduction, in the order of the papers' own sections.
fn jobs() -> Vec<Job> {
    vec![
        Job {
            paper: Paper::Zielinski2013,
            run: |o, p| Ok(linklab_scenario::zielinski::figures_4_to_6(o, p)?),
            cost: 1,
        },
        Job {
            paper: Paper::Zielinski2013,
            run: |o, p| Ok(linklab_scenario::zielinski::real_window_figures(o, p)?),
            cost: 1,
        },
        Job {
            paper: Paper::Zielinski2013,
            run: |o, p| Ok(linklab_scenario::zielinski::figures_10_to_13(o, p)?),
            cost: 1,
        },
        Job {
            paper: Paper::RonanAx25,
            run: |o, p| Ok(linklab_scenario::ronan::tables_2_3(o, p)?),
            cost: 1,
        },
        Job {
            paper: Paper::RonanAx25,
            run: |o, p| Ok(linklab_scenario::ronan::tables_5_7(o, p)?),
            cost: 1,
        },
        Job {
            paper: Paper::RonanAx25,
            run: |o, p| Ok(linklab_scenario::ronan::tables_5_7_tcpip(o, p)?),
            cost: 1,
        },
        Job {
            paper: Paper::RonanAx25,
            run: |o, p| Ok(linklab_scenario::ronan::ack_window::section(o, p)?),
            cost: 1,
        },
        Job {
            paper: Paper::RonanAx25,
            run: |o, p| Ok(linklab_scenario::ronan::repeater::section(o, p)?),
            cost: 1,
        },
        Job {
            paper: Paper::Bux1982,
            run: |o, p| Ok(linklab_scenario::bux::throughput_one_way(o, p)?),
            cost: 6,
        },
        Job {
            paper: Paper::Bux1982,
            run: |o, p| Ok(linklab_scenario::bux::throughput_two_way(o, p)?),
            cost: 20,
        },
        Job {
            paper: Paper::Bux1982,
            run: |o, p| Ok(linklab_scenario::bux::transfer_time(o, p)?),
            cost: 33,
        },
        Job {
            paper: Paper::Bux1982,
            run: |o, p| Ok(linklab_scenario::bux::transfer_time_vs_t_p(o, p)?),
            cost: 10,
        },
        Job {
            paper: Paper::Korb1987,
            run: |o, p| Ok(linklab_scenario::korb::table_1(o, p)?),
            cost: 1,
        },
        Job {
            paper: Paper::Korb1987,
            run: |o, p| Ok(linklab_scenario::korb::tables_2_3(o, p)?),
            cost: 3,
        },
        Job {
            paper: Paper::Korb1987,
            run: |o, p| Ok(linklab_scenario::korb::table_4(o, p)?),
            cost: 16,
        },
        Job {
            paper: Paper::Korb1987,
            run: |o, p| Ok(linklab_scenario::korb::retransmissions(o, p)?),
            cost: 4,
        },
        Job {
            paper: Paper::Korb1987,
            run: |o, p| Ok(linklab_scenario::korb::larger_segments(o, p)?),
            cost: 4,
        },
        Job {
            paper: Paper::RonanDstar,
            run: |o, p| Ok(linklab_scenario::dstar::table_1(o, p)?),
            cost: 10,
        },
        Job {
            paper: Paper::RonanDstar,
            run: |o, p| Ok(linklab_scenario::dstar::table_2(o, p)?),
            cost: 17,
        },
        Job {
            paper: Paper::RonanDstar,
            run: |o, p| Ok(linklab_scenario::dstar::stations::section(o, p)?),
            cost: 4,
        },
    ]
}

/// Replications of the standard case timed for its frames per second.
const STANDARD_CASE_REPLICATIONS: u64 = 500;

/// The speed of the whole stack in one standard case: two
/// AX.25 stations (the real engine) on Ronan et al.'s Table I channel at
/// 9600 bit/s, window 7, 7182 octets, replications run one after the
/// other on one thread (`cargo bench -p linklab-scenario --bench ronan`
/// measures the same case).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct StandardCase {
    /// Replications run.
    pub replications: u64,
    /// Frames the radio carried in them.
    pub frames: u64,
    /// Wall time they took.
    pub elapsed: Duration,
}

impl StandardCase {
    /// What it is, for the report.
    pub const WHAT: &'static str =
        "two AX.25 stations on Ronan et al.'s Table I channel at 9600 bit/s, window 7, 7182 octets";

    /// Runs it, the replications seeded from `seed`.
    fn measure(seed: u64) -> anyhow::Result<StandardCase> {
        let config = linklab_scenario::transfer::TransferConfig::ronan_table_1(9600, 7);
        let start = Instant::now();
        let mut frames = 0;
        for i in 0..STANDARD_CASE_REPLICATIONS {
            let streams = linklab_core::Streams::new(seed.wrapping_add(i));
            frames += linklab_scenario::transfer::run_transfer(&config, &streams)?
                .radio
                .frames_sent;
        }
        Ok(StandardCase {
            replications: STANDARD_CASE_REPLICATIONS,
            frames,
            elapsed: start.elapsed(),
        })
    }

    /// Simulated frames per second.
    pub fn frames_per_second(&self) -> f64 {
        let seconds = self.elapsed.as_secs_f64();
        if seconds > 0.0 {
            self.frames as f64 / seconds
        } else {
            0.0
        }
    }
}

/// What one section cost.
#[derive(Debug, Clone, PartialEq)]
pub struct SectionCost {
    /// Its paper.
    pub paper: Paper,
    /// Its heading.
    pub heading: String,
    /// Its wall and CPU time.
    pub cost: Cost,
}

/// A finished run: the sections by paper and how it was run.
pub struct Run {
    /// The papers reproduced, in [`PAPERS`] order.
    pub papers: Vec<PaperReport>,
    /// Quick or full, and the seed.
    pub options: RunOptions,
    /// Wall time of the reproductions (files not included).
    pub wall_time: Duration,
    /// CPU time of the reproductions, every thread.
    pub cpu_time: Duration,
    /// What each section cost, in report order.
    pub costs: Vec<SectionCost>,
    /// The speed of the whole stack in the standard case.
    pub standard_case: StandardCase,
    /// The checks known not to reproduce.
    pub gaps: gaps::Gaps,
}

impl Run {
    /// Every check, in report order.
    pub fn checks(&self) -> impl Iterator<Item = &Check> {
        self.papers
            .iter()
            .flat_map(|p| &p.sections)
            .flat_map(|s| &s.checks)
    }

    fn sections(&self) -> impl Iterator<Item = &Section> {
        self.papers.iter().flat_map(|p| &p.sections)
    }
}

/// The jobs reproducing `paper`, or every paper.
fn jobs_of(paper: Option<Paper>) -> anyhow::Result<Vec<Job>> {
    let jobs: Vec<Job> = jobs()
        .into_iter()
        .filter(|j| paper.is_none_or(|p| p == j.paper))
        .collect();
    if jobs.is_empty() {
        bail!(
            "no reproduction of {} yet",
            paper.map_or("any paper", Paper::id)
        );
    }
    Ok(jobs)
}

/// One job's section and what it cost, as a part file carries it.
#[derive(Serialize, Deserialize)]
struct Done {
    section: Section,
    cost: Cost,
}

pub fn run(args: ReproduceArgs) -> anyhow::Result<()> {
    let jobs = jobs_of(args.paper)?;
    crate::usage::check_out_dir("--out", &args.out)?;
    let options = args.run.options();
    let shard = args.shard.unwrap_or(Shard::WHOLE);
    let costs: Vec<u32> = jobs.iter().map(|j| j.cost).collect();
    let owned: Vec<bool> = Shard::by_cost(&costs, shard.count)
        .into_iter()
        .map(|part| part == shard.index)
        .collect();
    let bar = Bar::new("reproduce");
    let start = Instant::now();
    let (sections, cpu_time) = linklab_sim::cpu_time_of(|| run_jobs(&jobs, &owned, &options, &bar));
    let wall_time = start.elapsed();
    bar.finish();
    let mut done = Vec::new();
    for (i, (section, cost)) in sections {
        let section = section.with_context(|| format!("reproducing {}", jobs[i].paper.id()))?;
        done.push((i, Done { section, cost }));
    }
    let standard_case = if shard.index == 0 {
        Some(StandardCase::measure(options.seed)?)
    } else {
        None
    };
    if args.shard.is_none() {
        let done = done.into_iter().map(|(_, d)| d).collect();
        let standard_case = standard_case.unwrap_or_default();
        return finish(
            &jobs,
            done,
            options,
            wall_time,
            cpu_time,
            standard_case,
            &args.out,
        );
    }
    let run = RunOf::Reproduce {
        paper: args.paper.map(|p| p.id().to_string()),
    };
    let mut part = Part::new(run, &options, shard);
    part.total = jobs.len();
    part.results = done
        .iter()
        .map(|(i, d)| ciborium::Value::serialized(d).map(|v| (*i, v)))
        .collect::<Result<_, _>>()?;
    part.wall = wall_time;
    part.cpu = cpu_time;
    part.extra = standard_case
        .map(|s| ciborium::Value::serialized(&s))
        .transpose()?;
    part.write(&args.out)
}

/// `linklab merge` of the parts of `linklab reproduce`: the report of the
/// whole run from the parts' sections. Its timing is the parts' own: each
/// section's wall and CPU time where it ran, the longest part's wall
/// time, the CPU time of all parts, part 0's standard case.
pub fn merge(paper: Option<&str>, merged: Merged, out: &std::path::Path) -> anyhow::Result<()> {
    let paper = paper
        .map(|p| self::paper(p.to_string()).map_err(anyhow::Error::msg))
        .transpose()?;
    let jobs = jobs_of(paper)?;
    if jobs.len() != merged.results.len() {
        bail!(
            "the parts have {} sections, this linklab's reproduction {}",
            merged.results.len(),
            jobs.len()
        );
    }
    let done = merged
        .results
        .iter()
        .enumerate()
        .map(|(i, v)| {
            v.deserialized::<Done>()
                .map_err(|e| anyhow::anyhow!("section {i} does not read back: {e}"))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let standard_case = match merged.extras.first().cloned().flatten() {
        Some(v) => v
            .deserialized()
            .map_err(|e| anyhow::anyhow!("the standard case does not read back: {e}"))?,
        None => bail!("part 0 holds no standard case"),
    };
    let options = RunOptions {
        quick: merged.first.quick,
        seed: merged.first.seed,
        ..RunOptions::default()
    };
    finish(
        &jobs,
        done,
        options,
        merged.wall,
        merged.cpu,
        standard_case,
        out,
    )
}

/// Writes the report of `jobs` from their sections, says how many checks
/// pass and judges them.
fn finish(
    jobs: &[Job],
    done: Vec<Done>,
    options: RunOptions,
    wall_time: Duration,
    cpu_time: Duration,
    standard_case: StandardCase,
    out: &std::path::Path,
) -> anyhow::Result<()> {
    create_dir(out)?;
    let mut papers: Vec<PaperReport> = Vec::new();
    let mut costs = Vec::new();
    for (job, done) in jobs.iter().zip(done) {
        costs.push(SectionCost {
            paper: job.paper,
            heading: done.section.heading.clone(),
            cost: done.cost,
        });
        match papers.iter_mut().find(|p| p.paper == job.paper) {
            Some(p) => p.sections.push(done.section),
            None => papers.push(PaperReport {
                paper: job.paper,
                sections: vec![done.section],
            }),
        }
    }
    papers.sort_by_key(|p| p.paper);
    costs.sort_by_key(|c| c.paper);
    let run = Run {
        papers,
        options,
        wall_time,
        cpu_time,
        costs,
        standard_case,
        gaps: gaps::Gaps::built_in()?,
    };
    write_report(&run, out)?;

    let total = run.checks().count();
    let passed = run.checks().filter(|c| c.pass).count();
    let gaps = run
        .checks()
        .filter(|c| !c.pass && run.gaps.why(&c.id).is_some())
        .count();
    let declared = match gaps {
        0 => String::new(),
        n => format!(", {n} fail as declared gaps"),
    };
    let checks: Vec<&Check> = run.checks().collect();
    println!(
        "{passed} of {total} checks pass ({}){declared}; report in {}",
        html::by_basis(&checks),
        out.join("report.html").display()
    );
    verdict(&run)
}

/// An error naming every failing check that is not a declared gap, and
/// every declared gap that passes.
fn verdict(run: &Run) -> anyhow::Result<()> {
    let failing: Vec<&str> = run
        .checks()
        .filter(|c| !c.pass && run.gaps.why(&c.id).is_none())
        .map(|c| c.id.as_str())
        .collect();
    if !failing.is_empty() {
        bail!(
            "{} of {} checks fail: {}",
            failing.len(),
            run.checks().count(),
            failing.join(", ")
        );
    }
    let closed: Vec<&str> = run
        .checks()
        .filter(|c| c.pass && run.gaps.why(&c.id).is_some())
        .map(|c| c.id.as_str())
        .collect();
    if !closed.is_empty() {
        bail!(
            "declared gaps now pass (take them out of crates/scenario/experiments/gaps.toml): {}",
            closed.join(", ")
        );
    }
    Ok(())
}

/// What a job cost: wall and CPU time (its own thread's and its
/// workers').
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Cost {
    /// From its start to its end.
    pub wall: Duration,
    /// CPU time on every thread it used.
    pub cpu: Duration,
}

/// Runs the `owned` jobs on `options.jobs` threads, longest first; the
/// results come back in job order, by job index, with what each cost.
fn run_jobs(
    jobs: &[Job],
    owned: &[bool],
    options: &RunOptions,
    progress: &dyn Progress,
) -> Vec<(usize, (anyhow::Result<Section>, Cost))> {
    let mut order: Vec<usize> = (0..jobs.len()).filter(|&i| owned[i]).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(jobs[i].cost));
    let mut done = linklab_sim::map_ordered(options.jobs, &order, |_, &i| {
        let start = Instant::now();
        let (result, cpu) = linklab_sim::cpu_time_of(|| (jobs[i].run)(options, progress));
        let cost = Cost {
            wall: start.elapsed(),
            cpu,
        };
        (i, (result, cost))
    });
    done.sort_by_key(|(i, _)| *i);
    done
}

/// Prints the tables and checks and writes every file of the report.
fn write_report(run: &Run, out: &std::path::Path) -> anyhow::Result<()> {
    let mut ids = std::collections::BTreeSet::new();
    if let Some(c) = run.checks().find(|c| !ids.insert(c.id.as_str())) {
        bail!("two checks share the id \"{}\"", c.id);
    }
    check_ids(
        run.sections().flat_map(|s| &s.tables),
        run.sections().flat_map(|s| &s.figures),
    )?;
    for paper in &run.papers {
        println!("== {} ==\n", paper.paper.citation());
        for section in &paper.sections {
            println!("-- {}\n", section.heading);
            for table in &section.tables {
                print_table(table);
            }
            for c in &section.checks {
                println!(
                    "{}  {}: ours {} {unit}, paper {} {unit}",
                    if c.pass { "pass" } else { "FAIL" },
                    c.id,
                    html::value(&c.ours),
                    html::value(&c.paper_value),
                    unit = c.unit,
                );
            }
            println!();
        }
    }
    let svgs = write_tables_and_figures(
        out,
        run.sections().flat_map(|s| &s.tables),
        run.sections().flat_map(|s| &s.figures),
    )?;
    write(out, "summary.json", files::summary_json(run)?)?;
    write(out, "report.html", html::page(run, &svgs))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use linklab_scenario::report::NoProgress;

    fn section(heading: &str) -> Section {
        Section {
            heading: heading.into(),
            ..Section::default()
        }
    }

    #[test]
    fn results_keep_the_job_order_whatever_the_timing() {
        // The first job is the slowest, so the second thread finishes the
        // others first; the costs start the last job first.
        let jobs = [
            Job {
                paper: Paper::Bux1982,
                run: |_, _| {
                    std::thread::sleep(Duration::from_millis(50));
                    Ok(section("slow"))
                },
                cost: 1,
            },
            Job {
                paper: Paper::Bux1982,
                run: |_, _| Ok(section("fast")),
                cost: 5,
            },
            Job {
                paper: Paper::RonanAx25,
                run: |_, _| Err(anyhow::anyhow!("broken")),
                cost: 0,
            },
            Job {
                paper: Paper::Bux1982,
                run: |_, _| Ok(section("last")),
                cost: 9,
            },
        ];
        let results = run_jobs(&jobs, &[true; 4], &RunOptions::default(), &NoProgress);
        assert!(results[0].1 .1.wall >= Duration::from_millis(50));
        let headings: Vec<String> = results
            .iter()
            .map(|(_, (r, _))| match r {
                Ok(s) => s.heading.clone(),
                Err(e) => e.to_string(),
            })
            .collect();
        assert_eq!(headings, ["slow", "fast", "broken", "last"]);
        let some = run_jobs(
            &jobs,
            &[false, true, false, true],
            &RunOptions::default(),
            &NoProgress,
        );
        let indices: Vec<usize> = some.iter().map(|(i, _)| *i).collect();
        assert_eq!(indices, [1, 3]);
    }

    #[test]
    fn a_failing_check_fails_the_run_by_name() {
        let checks = vec![
            Check::qualitative("b/ok", Paper::Bux1982, "w", "x", "x", true),
            Check::qualitative("b/abm-nrm", Paper::Bux1982, "w", "x", "y", false),
        ];
        let mut run = Run {
            papers: vec![PaperReport {
                paper: Paper::Bux1982,
                sections: vec![Section {
                    checks,
                    ..section("s")
                }],
            }],
            options: RunOptions::default(),
            wall_time: Duration::ZERO,
            cpu_time: Duration::ZERO,
            costs: Vec::new(),
            standard_case: StandardCase::default(),
            gaps: gaps::Gaps::default(),
        };
        let e = verdict(&run).unwrap_err();
        assert_eq!(e.to_string(), "1 of 2 checks fail: b/abm-nrm");
        run.papers[0].sections[0].checks[1].pass = true;
        assert!(verdict(&run).is_ok());
    }

    #[test]
    fn a_declared_gap_may_fail_but_not_pass() {
        let checks = vec![Check::qualitative(
            "b/gap",
            Paper::Bux1982,
            "w",
            "x",
            "y",
            false,
        )];
        let mut run = Run {
            papers: vec![PaperReport {
                paper: Paper::Bux1982,
                sections: vec![Section {
                    checks,
                    ..section("s")
                }],
            }],
            options: RunOptions::default(),
            wall_time: Duration::ZERO,
            cpu_time: Duration::ZERO,
            costs: Vec::new(),
            standard_case: StandardCase::default(),
            gaps: toml::from_str("[[gap]]\ncheck = \"b/gap\"\nwhy = \"known\"\n").unwrap(),
        };
        assert!(verdict(&run).is_ok());
        run.papers[0].sections[0].checks[0].pass = true;
        let e = verdict(&run).unwrap_err();
        assert!(e.to_string().contains("b/gap"), "{e}");
    }
}
