//! The published figures, from the copy of `../shared/reference` kept in
//! `experiments/reference` and compiled in.

/// Figures Zieliński quotes in his text.
pub const ZIELINSKI_TEXT: &str = include_str!("../../experiments/reference/zielinski_text.csv");

/// `v` rounded to `places` decimals.
pub fn round(v: f64, places: i32) -> f64 {
    let f = 10f64.powi(places);
    (v * f).round() / f
}
