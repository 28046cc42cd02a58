//! Issue 4: Ronan, Long and Walsh, Tables V, VI and VII (AX.25 CM-CL
//! column), quick run: the real engines behind the calibrated host and
//! KISS TNC model against the published transfer times.

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
fn every_row_of_tables_v_vi_and_vii_within_ten_percent() {
    let section = quick();
    let rows: Vec<_> = section
        .checks
        .iter()
        .filter(|c| {
            c.id.contains("tableV/") || c.id.contains("tableVI/") || c.id.contains("tableVII/")
        })
        .collect();
    assert_eq!(rows.len(), 21);
    for c in rows {
        assert!(c.pass, "{}: paper {} ours {}", c.id, c.paper_value, c.ours);
        assert_eq!(c.tolerance, Some(0.10));
    }
}
