//! The one-off calibration of the host + KISS TNC model for Ronan, Long
//! and Walsh's Tables V, VI and VII (see
//! `linklab_scenario::ronan::measured`): a grid search over the TNC's
//! processing time per frame, the carrier hold and the DTN application's
//! overhead, minimising the largest relative error over all 21 checks.
//! Prints the best point; its values go into
//! `experiments/ronan-tables-5-7.toml`.
//!
//! `cargo run --release -p linklab-scenario --example ronan_calibrate`

use linklab_scenario::ronan::measured::{calibrate, Grid, MeasuredConfig};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let base = MeasuredConfig::built_in()?;
    let grid = Grid {
        tnc_per_frame_ms: (0..=8).map(|i| 120.0 + 20.0 * f64::from(i)).collect(),
        carrier_hold_ms: (0..=8).map(|i| 500.0 + 50.0 * f64::from(i)).collect(),
        cl_overhead_octets: (0..=10).map(|i| 20 * i).collect(),
    };
    let fit = calibrate(&base, &grid, 10, 0x4c49_4e4b)?;
    println!(
        "tnc_per_frame_ms = {}\ncarrier_hold_ms = {}\ncl_overhead_octets = {}\n\
         # largest relative error {:.2} %, RMS {:.2} % (21 checks)",
        fit.tnc_per_frame_ms,
        fit.carrier_hold_ms,
        fit.cl_overhead_octets,
        100.0 * fit.max_relative_error,
        100.0 * fit.rms_relative_error
    );
    Ok(())
}
