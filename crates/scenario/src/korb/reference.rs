//! The published numbers of Korb (1987): the rows of [`KORB_PING`]
//! (Table 1) and [`KORB_FTP`] (Tables 2-4), read by
//! [`published::load`](crate::published::load).

use serde::{Deserialize, Deserializer};

use crate::published::{Row, Source, KORB_FTP, KORB_PING};

/// One row of Table 1.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub struct PingRow {
    /// Ping size, octets (64 or 512).
    #[serde(rename = "size_bytes")]
    pub size: usize,
    /// True for the median, false for the average.
    #[serde(rename = "statistic", deserialize_with = "median")]
    pub median: bool,
    /// True for sequence numbers 50-100, false for 1-100.
    #[serde(rename = "sequence", deserialize_with = "settled")]
    pub settled: bool,
    /// Round-trip time, ms.
    pub rtt_ms: f64,
}

impl Row for PingRow {
    const SOURCE: Source = KORB_PING;
}

/// Which experiment a row of Tables 2-4 belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FtpExperiment {
    /// Table 2: one transfer, one circuit.
    Single,
    /// Table 3: one transfer, several circuits.
    MultiChannel,
    /// Table 4: five transfers at once.
    MultiPut,
}

/// One row of Tables 2-4.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct FtpRow {
    /// The table.
    pub experiment: FtpExperiment,
    /// Circuits allowed.
    pub channels: usize,
    /// True for put.
    #[serde(rename = "direction", deserialize_with = "put")]
    pub put: bool,
    /// Octets per file.
    #[serde(rename = "file_bytes")]
    pub file_octets: usize,
    /// Files at once.
    pub files: usize,
    /// Reported or estimated rate, bit/s (Table 4's starred rows have
    /// none).
    pub rate_bps: Option<f64>,
    /// Table 4: the longest transfer's time, s.
    pub max_time_s: Option<f64>,
    /// The paper's remark (Table 4: "one of five transfers failed").
    pub note: String,
}

impl Row for FtpRow {
    const SOURCE: Source = KORB_FTP;
}

/// Table 1's `statistic` column.
#[derive(PartialEq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Statistic {
    Average,
    Median,
}

/// Table 1's `sequence` column: which sequence numbers a figure covers.
#[derive(PartialEq, Deserialize)]
enum Sequence {
    #[serde(rename = "1-100")]
    All,
    #[serde(rename = "50-100")]
    Settled,
}

/// Tables 2-4's `direction` column.
#[derive(PartialEq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Direction {
    Put,
    Get,
}

/// Whether a `statistic` cell is `median` (else `average`).
fn median<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    Ok(Statistic::deserialize(d)? == Statistic::Median)
}

/// Whether a `sequence` cell is `50-100` (else `1-100`).
fn settled<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    Ok(Sequence::deserialize(d)? == Sequence::Settled)
}

/// Whether a `direction` cell is `put` (else `get`).
fn put<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    Ok(Direction::deserialize(d)? == Direction::Put)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::published::load;

    #[test]
    fn the_reference_files_parse() {
        let ping = load::<PingRow>().unwrap();
        assert_eq!(ping.len(), 8);
        assert!(ping
            .iter()
            .any(|r| r.size == 512 && r.median && r.settled && r.rtt_ms == 880.0));
        assert!(ping.iter().any(|r| !r.median && !r.settled));
        let ftp = load::<FtpRow>().unwrap();
        assert_eq!(ftp.len(), 14);
        let starred = ftp.iter().filter(|r| r.rate_bps.is_none()).count();
        assert_eq!(starred, 3, "Table 4's rows 2, 4 and 10");
        assert!(ftp.iter().any(|r| !r.put));
        assert_eq!(ftp[5].note, "one of five transfers failed");
    }
}
