//! The published figures, from the copy of `../shared/reference` kept in
//! `experiments/reference` and compiled in.

use anyhow::Context;

/// Ronan et al., Tables II, III and V-VII.
pub const RONAN_TRANSFER: &str =
    include_str!("../../experiments/reference/ronan_ax25_transfer.csv");

/// Figures Zieliński quotes in his text.
pub const ZIELINSKI_TEXT: &str = include_str!("../../experiments/reference/zielinski_text.csv");

/// (window, model_s) rows of the Ronan reference file at one bit rate.
pub fn ronan_rows(text: &str, bitrate_bps: f64) -> anyhow::Result<Vec<(u32, f64)>> {
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let headers = reader.headers()?.clone();
    let col = |name: &str| {
        headers
            .iter()
            .position(|h| h == name)
            .with_context(|| format!("reference file has no column {name}"))
    };
    let (rate_i, window_i, model_i) = (col("bitrate_bps")?, col("window")?, col("model_s")?);
    let mut rows = Vec::new();
    for record in reader.records() {
        let r = record?;
        if r[rate_i].parse::<f64>()? == bitrate_bps {
            rows.push((r[window_i].parse()?, r[model_i].parse()?));
        }
    }
    Ok(rows)
}

/// `v` rounded to `places` decimals.
pub fn round(v: f64, places: i32) -> f64 {
    let f = 10f64.powi(places);
    (v * f).round() / f
}
