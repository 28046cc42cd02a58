//! The published numbers of Ronan, Long and Walsh (Tables II, III, V, VI
//! and VII), compiled in from `experiments/reference/ronan_ax25_transfer.csv`.

use thiserror::Error;

/// The reference file, as copied from the papers' numbers.
const TRANSFER_CSV: &str =
    include_str!("../../../../experiments/reference/ronan_ax25_transfer.csv");

/// One row of the reference file: one window at one bit rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Published {
    /// Radio bit rate, bit/s.
    pub bit_rate: u32,
    /// Window k.
    pub window: u8,
    /// Table II / III: the model's transfer time, s.
    pub model_s: f64,
    /// Table V / VII: measured AX.25 CM-CL transfer time, s.
    pub ax25_cm_cl_s: f64,
    /// Table VI (1200 bit/s only): TX/RX cycles.
    pub tx_rx_cycles: Option<u32>,
    /// Table VI: measured minus model, s.
    pub model_error_s: Option<f64>,
    /// Table VI: that difference per cycle, s.
    pub error_per_cycle_s: Option<f64>,
    /// Table V / VII: measured TCP/IP-over-AX.25 (FTP) transfer time, s.
    pub tcpip_s: f64,
}

/// The row of `rows` for `window` at `bit_rate`, if the paper has one.
pub fn published_row(rows: &[Published], bit_rate: u32, window: u8) -> Option<&Published> {
    rows.iter()
        .find(|p| p.bit_rate == bit_rate && p.window == window)
}

/// The reference file could not be read.
#[derive(Debug, Error)]
#[error("experiments/reference/ronan_ax25_transfer.csv, line {line}: {what}")]
pub struct ReferenceError {
    line: usize,
    what: String,
}

/// Every row of the reference file, in file order.
pub fn published() -> Result<Vec<Published>, ReferenceError> {
    let mut lines = TRANSFER_CSV.lines().enumerate();
    let header: Vec<&str> = lines
        .next()
        .map(|(_, h)| h.split(',').collect())
        .unwrap_or_default();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .ok_or(ReferenceError {
                line: 1,
                what: format!("no column {name}"),
            })
    };
    let cols = [
        col("bitrate_bps")?,
        col("window")?,
        col("model_s")?,
        col("ax25_cm_cl_s")?,
        col("tx_rx_cycles")?,
        col("model_error_s")?,
        col("error_per_cycle_s")?,
        col("tcpip_s")?,
    ];
    let mut rows = Vec::new();
    for (i, line) in lines.filter(|(_, l)| !l.trim().is_empty()) {
        let cells: Vec<&str> = line.split(',').collect();
        let cell = |c: usize| -> Result<Option<f64>, ReferenceError> {
            match cells.get(cols[c]).map(|s| s.trim()) {
                None | Some("") => Ok(None),
                Some(s) => s.parse().map(Some).map_err(|_| ReferenceError {
                    line: i + 1,
                    what: format!("\"{s}\" is not a number"),
                }),
            }
        };
        let needed = |c: usize| {
            cell(c)?.ok_or(ReferenceError {
                line: i + 1,
                what: format!("column {} is empty", header[cols[c]]),
            })
        };
        rows.push(Published {
            bit_rate: needed(0)? as u32,
            window: needed(1)? as u8,
            model_s: needed(2)?,
            ax25_cm_cl_s: needed(3)?,
            tx_rx_cycles: cell(4)?.map(|c| c as u32),
            model_error_s: cell(5)?,
            error_per_cycle_s: cell(6)?,
            tcpip_s: needed(7)?,
        });
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fourteen_rows_with_table_vi_at_1200_only() {
        let rows = published().unwrap();
        assert_eq!(rows.len(), 14);
        assert_eq!(rows[0].ax25_cm_cl_s, 110.36);
        assert_eq!(rows[6].error_per_cycle_s, Some(1.63));
        assert_eq!(rows[13].bit_rate, 9600);
        assert_eq!(rows[13].tx_rx_cycles, None);
    }
}
