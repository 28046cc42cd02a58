//! The one-off calibration of the host + KISS TNC model for Ronan, Long
//! and Walsh's Tables V, VI and VII (see
//! `linklab_scenario::ronan::measured`): a grid search over the TNC's
//! processing time per frame and the carrier hold, with the real bundle
//! agent and AX.25 CL above the engines (the first `ack_window` of the
//! experiment, 8), minimising the largest relative error over all 21
//! checks of the AX.25-CL column.
//! Prints the best point; its values go into
//! `crates/scenario/experiments/ronan-tables-5-7.toml`.
//!
//! `cargo run --release -p linklab-scenario --example ronan_calibrate`

use linklab_scenario::ronan::measured::{calibrate, Grid, MeasuredConfig};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let base = MeasuredConfig::built_in()?;
    let grid = Grid {
        tnc_per_frame_ms: (0..=18).map(|i| 100.0 + 10.0 * f64::from(i)).collect(),
        carrier_hold_ms: (0..=24).map(|i| 300.0 + 25.0 * f64::from(i)).collect(),
    };
    let fit = calibrate(&base, &grid, 10, 0x4c49_4e4b)?;
    println!(
        "tnc_per_frame_ms = {}\ncarrier_hold_ms = {}\n\
         # largest relative error {:.2} %, RMS {:.2} % (21 checks)",
        fit.tnc_per_frame_ms,
        fit.carrier_hold_ms,
        100.0 * fit.max_relative_error,
        100.0 * fit.rms_relative_error
    );
    Ok(())
}
