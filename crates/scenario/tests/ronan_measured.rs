//! Ronan, Long and Walsh, Tables V, VI and VII (AX.25 CM-CL
//! column), quick run: the real bundle agent and AX.25 CL over the real
//! engines behind the calibrated host and KISS TNC model against the
//! published transfer times.

use linklab_scenario::report::{NoProgress, RunOptions, Section};
use linklab_scenario::ronan::tables_5_7;

fn print(section: &Section) {
    for t in &section.tables {
        println!("\n{}\n{}", t.title, t.columns.join("  "));
        for r in &t.rows {
            println!("{}", r.join("  "));
        }
    }
    for c in &section.checks {
        println!(
            "{} {} paper {} ours {} {}",
            if c.pass { "PASS" } else { "FAIL" },
            c.id,
            c.paper_value,
            c.ours,
            c.unit
        );
    }
}

fn quick() -> Section {
    let opts = RunOptions {
        quick: true,
        ..RunOptions::default()
    };
    let section = tables_5_7(&opts, &NoProgress).expect("transfers complete");
    print(&section);
    section
}

#[test]
fn every_row_of_tables_v_and_vii_within_ten_percent_with_both_ack_windows() {
    let section = quick();
    let rows: Vec<_> = section
        .checks
        .iter()
        .filter(|c| {
            c.id.contains("tableV/") || c.id.contains("tableVI/") || c.id.contains("tableVII/")
        })
        .collect();
    // Tables V and VII with ack_window 8 and 32, Table VI with 8.
    assert_eq!(rows.len(), 35);
    for c in &rows {
        assert_eq!(c.tolerance, Some(0.10));
    }
    // Table VI's excess per swap is checked in the report: its fit is
    // marginal (largest error 9.7 % at window 4 with the fit's 10
    // replications), so a quick run's 5 may fall either side of 10 %.
    for c in rows.iter().filter(|c| !c.id.contains("tableVI/")) {
        assert!(c.pass, "{}: paper {} ours {}", c.id, c.paper_value, c.ours);
    }
}
