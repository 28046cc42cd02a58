//! The one-off calibration of the host + KISS TNC model for Ronan, Long
//! and Walsh's Tables V and VII (see `linklab_scenario::ronan::measured`):
//! a grid search over the TNC's processing time per frame and per octet.
//! Prints the best point; its values go into
//! `experiments/ronan-tables-5-7.toml`.
//!
//! `cargo run --release -p linklab-scenario --example ronan_calibrate`

use linklab_scenario::ronan::measured::{calibrate, MeasuredConfig};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let base = MeasuredConfig::built_in()?;
    let per_frame: Vec<f64> = (0..=40).map(|i| f64::from(i) * 10.0).collect();
    let per_octet: Vec<f64> = (0..=20).map(|i| f64::from(i) * 50.0).collect();
    let fit = calibrate(&base, &per_frame, &per_octet, 10, 0x4c49_4e4b)?;
    println!(
        "tnc_per_frame_ms = {}\ntnc_per_octet_us = {}\n# RMS relative error {:.2} %, largest {:.2} %",
        fit.tnc_per_frame_ms,
        fit.tnc_per_octet_us,
        100.0 * fit.rms_relative_error,
        100.0 * fit.max_relative_error
    );
    Ok(())
}
