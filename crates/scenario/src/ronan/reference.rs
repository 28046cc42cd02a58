//! The published numbers of Ronan, Long and Walsh (Tables II, III, V, VI
//! and VII): the rows of [`RONAN_AX25_TRANSFER`], read by
//! [`published::load`](crate::published::load).

use serde::Deserialize;

use crate::published::{Row, Source, RONAN_AX25_TRANSFER};

/// One row of the reference file: one window at one bit rate.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub struct Published {
    /// Radio bit rate, bit/s.
    #[serde(rename = "bitrate_bps")]
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

impl Row for Published {
    const SOURCE: Source = RONAN_AX25_TRANSFER;
}

/// The row of `rows` for `window` at `bit_rate`, if the paper has one.
pub fn published_row(rows: &[Published], bit_rate: u32, window: u8) -> Option<&Published> {
    rows.iter()
        .find(|p| p.bit_rate == bit_rate && p.window == window)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::published::load;

    #[test]
    fn fourteen_rows_with_table_vi_at_1200_only() {
        let rows = load::<Published>().unwrap();
        assert_eq!(rows.len(), 14);
        assert_eq!(rows[0].ax25_cm_cl_s, 110.36);
        assert_eq!(rows[6].error_per_cycle_s, Some(1.63));
        assert_eq!(rows[13].bit_rate, 9600);
        assert_eq!(rows[13].tx_rx_cycles, None);
    }
}
