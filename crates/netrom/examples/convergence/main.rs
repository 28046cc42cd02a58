//! NET/ROM routing convergence in virtual time.
//!
//! Nodes in a line or a two-row grid, links of one quality, NODES every
//! interval with each node's first broadcast at a seeded random phase.
//! For each seed it measures, in broadcast intervals:
//! - until every node knows every other, and until every node reaches
//!   every other by the best routes;
//! - after the middle link is cut: in a line, until no route across the
//!   cut is left (obsolescence); in a grid, until every node reaches every
//!   other again around the cut;
//! - after the link is restored: until every node reaches every other.
//!
//! Then a circuit from one end of a line to nodes 1 to 9 hops away
//! carries 20 KB each way (links of 100 ms, no bit rate: what the
//! transport's window, timers and losses cost, not air time).
//!
//! `cargo run -p linklab-netrom --example convergence -- [--nodes N]
//! [--seeds K] [--quality Q] [--minimum-quality Q]`
//!
//! Prints a Markdown table (docs/netrom.md keeps one run's).

mod net;

use linklab_core::{Duration, Instant};
use net::{Net, Topology, Transfer};

/// The virtual seconds a circuit from node 0 to node `hops` in a line
/// takes to carry `len` octets each way over links of 100 ms that lose
/// `loss` of the datagrams; or why it did not.
pub fn transfer_time(hops: usize, loss: f64, len: usize, seed: u64) -> Result<f64, String> {
    let mut net = Net::new(hops + 1, Topology::Line, 192, seed, Net::node_config);
    let interval = Net::node_config(0).nodes_interval;
    net.run_until(net.now + interval * 2 * hops as u32, |net| net.converged())
        .ok_or("routes did not converge")?;
    net.loss = loss;
    let mut transfer = Transfer::start(&mut net, 0, hops, len).map_err(|e| e.to_string())?;
    let start = net.now;
    let end = net.run_until(start + Duration::from_secs(86_400), |net| {
        transfer.act(net);
        transfer.done() || !transfer.closed.is_empty()
    });
    if let Some((_, reason)) = transfer.closed.first() {
        return Err(format!("circuit closed: {reason}"));
    }
    let end = end.ok_or("not done within a day")?;
    assert_eq!(transfer.received[1], transfer.outgoing[0]);
    assert_eq!(transfer.received[0], transfer.outgoing[1]);
    Ok((end - start).as_secs_f64())
}

/// What one run measured, in intervals (None: not within the limit).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Outcome {
    /// Until every node knows every other.
    pub known: Option<f64>,
    /// Until every node reaches every other.
    pub reachable: Option<f64>,
    /// After the cut: line, until no route across; grid, until rerouted.
    pub after_cut: Option<f64>,
    /// After the restore, until every node reaches every other.
    pub restored: Option<f64>,
}

/// Runs one network: `n` nodes, `topology`, link `quality`, learned
/// routes need `minimum_quality`; each phase given `limit` intervals.
pub fn run(
    n: usize,
    topology: Topology,
    quality: u8,
    minimum_quality: u8,
    seed: u64,
    limit: u32,
) -> Outcome {
    let mut net = Net::new(n, topology, quality, seed, |i| {
        let mut cfg = Net::node_config(i);
        cfg.routing.minimum_quality = minimum_quality;
        cfg
    });
    let interval = Net::node_config(0).nodes_interval;
    let in_intervals =
        |from: Instant, to: Instant| (to - from).as_secs_f64() / interval.as_secs_f64();
    let span = |now: Instant| now + interval * limit;

    let start = net.now;
    let known = net
        .run_until(span(start), |net| net.converged())
        .map(|t| in_intervals(start, t));
    let reachable = net
        .run_until(span(start), |net| net.all_reachable())
        .map(|t| in_intervals(start, t));

    let (a, b) = match topology {
        Topology::Line => (n / 2 - 1, n / 2),
        Topology::Grid => {
            let cols = n.div_ceil(2);
            (cols / 2 - 1, cols / 2)
        }
    };
    net.set_link(a, b, false);
    let cut = net.now;
    let after_cut = match topology {
        Topology::Line => net.run_until(span(cut), |net| !net.any_route_across(b)),
        Topology::Grid => net.run_until(span(cut), |net| net.all_reachable()),
    }
    .map(|t| in_intervals(cut, t));

    net.set_link(a, b, true);
    let restore = net.now;
    let restored = net
        .run_until(span(restore), |net| net.all_reachable())
        .map(|t| in_intervals(restore, t));
    Outcome {
        known,
        reachable,
        after_cut,
        restored,
    }
}

fn arg(args: &[String], name: &str, default: u64) -> u64 {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(|v| {
            v.parse()
                .unwrap_or_else(|_| panic!("{name} needs a number, not {v:?}"))
        })
        .unwrap_or(default)
}

fn show(x: Option<f64>) -> String {
    x.map_or_else(|| "never".to_string(), |v| format!("{v:.2}"))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n = arg(&args, "--nodes", 10) as usize;
    let seeds = arg(&args, "--seeds", 5);
    let quality = u8::try_from(arg(&args, "--quality", 192)).expect("--quality is 0-255");
    let minimum_quality =
        u8::try_from(arg(&args, "--minimum-quality", 1)).expect("--minimum-quality is 0-255");
    assert!(n >= 4, "--nodes must be at least 4");
    println!("{n} nodes, link quality {quality}, minimum quality {minimum_quality}; times in NODES intervals");
    println!();
    println!("| topology | seed | every node known | every node reached | after the middle link is cut | after it is restored |");
    println!("| --- | --- | --- | --- | --- | --- |");
    for (topology, name, cut) in [
        (Topology::Line, "line", "no route across"),
        (Topology::Grid, "grid 2 rows", "rerouted"),
    ] {
        for seed in 1..=seeds {
            let o = run(n, topology, quality, minimum_quality, seed, 40);
            println!(
                "| {name} | {seed} | {} | {} | {} ({cut}) | {} |",
                show(o.known),
                show(o.reachable),
                show(o.after_cut),
                show(o.restored)
            );
        }
    }
    println!();
    println!(
        "20 000 octets each way over a circuit, default transport parameters, 100 ms per link"
    );
    println!();
    println!("| hops | loss per link | seconds (seed 1) | octets/s each way |");
    println!("| --- | --- | --- | --- |");
    for hops in [1, 2, 4, 9] {
        for loss in [0.0, 0.05] {
            match transfer_time(hops, loss, 20_000, 1) {
                Ok(secs) => println!("| {hops} | {loss} | {secs:.1} | {:.0} |", 20_000.0 / secs),
                Err(why) => println!("| {hops} | {loss} | {why} | |"),
            }
        }
    }
}
