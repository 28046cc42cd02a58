//! The published numbers of Korb (1987), compiled in from
//! `experiments/reference/korb_ping.csv` (Table 1) and `korb_ftp.csv`
//! (Tables 2-4).

use thiserror::Error;

const PING_CSV: &str = include_str!("../../../../experiments/reference/korb_ping.csv");
const FTP_CSV: &str = include_str!("../../../../experiments/reference/korb_ftp.csv");

/// One row of Table 1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PingRow {
    /// Ping size, octets (64 or 512).
    pub size: usize,
    /// True for the median, false for the average.
    pub median: bool,
    /// True for sequence numbers 50-100, false for 1-100.
    pub settled: bool,
    /// Round-trip time, ms.
    pub rtt_ms: f64,
}

/// Which experiment a row of Tables 2-4 belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FtpExperiment {
    /// Table 2: one transfer, one circuit.
    Single,
    /// Table 3: one transfer, several circuits.
    MultiChannel,
    /// Table 4: five transfers at once.
    MultiPut,
}

/// One row of Tables 2-4.
#[derive(Debug, Clone, PartialEq)]
pub struct FtpRow {
    /// The table.
    pub experiment: FtpExperiment,
    /// Circuits allowed.
    pub channels: usize,
    /// True for put.
    pub put: bool,
    /// Octets per file.
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

/// The reference files did not parse.
#[derive(Debug, Error)]
#[error("experiments/reference/{file}, line {line}: {what}")]
pub struct ReferenceError {
    file: &'static str,
    line: usize,
    what: String,
}

fn rows(text: &'static str) -> impl Iterator<Item = (usize, Vec<&'static str>)> {
    text.lines()
        .enumerate()
        .skip(1)
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| (i + 1, l.split(',').map(str::trim).collect()))
}

fn number<T: std::str::FromStr>(
    file: &'static str,
    line: usize,
    field: &str,
) -> Result<T, ReferenceError> {
    field.parse().map_err(|_| ReferenceError {
        file,
        line,
        what: format!("{field:?} is not a number"),
    })
}

/// Table 1.
pub fn ping_rows() -> Result<Vec<PingRow>, ReferenceError> {
    const FILE: &str = "korb_ping.csv";
    rows(PING_CSV)
        .map(|(line, f)| {
            let bad = |what: &str| ReferenceError {
                file: FILE,
                line,
                what: what.into(),
            };
            let [size, statistic, sequence, rtt] = f[..] else {
                return Err(bad("expected 4 fields"));
            };
            Ok(PingRow {
                size: number(FILE, line, size)?,
                median: match statistic {
                    "median" => true,
                    "average" => false,
                    _ => return Err(bad("statistic is neither median nor average")),
                },
                settled: match sequence {
                    "50-100" => true,
                    "1-100" => false,
                    _ => return Err(bad("sequence is neither 1-100 nor 50-100")),
                },
                rtt_ms: number(FILE, line, rtt)?,
            })
        })
        .collect()
}

/// Tables 2-4.
pub fn ftp_rows() -> Result<Vec<FtpRow>, ReferenceError> {
    const FILE: &str = "korb_ftp.csv";
    rows(FTP_CSV)
        .map(|(line, f)| {
            let bad = |what: &str| ReferenceError {
                file: FILE,
                line,
                what: what.into(),
            };
            let [experiment, channels, direction, octets, files, rate, time, note] = f[..] else {
                return Err(bad("expected 8 fields"));
            };
            let optional = |s: &str| -> Result<Option<f64>, ReferenceError> {
                if s.is_empty() {
                    Ok(None)
                } else {
                    number(FILE, line, s).map(Some)
                }
            };
            Ok(FtpRow {
                experiment: match experiment {
                    "single" => FtpExperiment::Single,
                    "multichannel" => FtpExperiment::MultiChannel,
                    "multiput" => FtpExperiment::MultiPut,
                    _ => return Err(bad("unknown experiment")),
                },
                channels: number(FILE, line, channels)?,
                put: match direction {
                    "put" => true,
                    "get" => false,
                    _ => return Err(bad("direction is neither put nor get")),
                },
                file_octets: number(FILE, line, octets)?,
                files: number(FILE, line, files)?,
                rate_bps: optional(rate)?,
                max_time_s: optional(time)?,
                note: note.to_string(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_files_parse() {
        let ping = ping_rows().unwrap();
        assert_eq!(ping.len(), 8);
        assert!(ping
            .iter()
            .any(|r| r.size == 512 && r.median && r.settled && r.rtt_ms == 880.0));
        let ftp = ftp_rows().unwrap();
        assert_eq!(ftp.len(), 14);
        let starred = ftp.iter().filter(|r| r.rate_bps.is_none()).count();
        assert_eq!(starred, 3, "Table 4's rows 2, 4 and 10");
    }
}
