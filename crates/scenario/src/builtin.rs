//! The built-in scenario files of the reproductions, compiled in so that
//! `linklab reproduce` runs from any directory. They are ordinary scenario
//! files (`crates/scenario/experiments/*.toml`, the same kinds `linklab
//! sim` reads), and `gaps.toml` lists the checks known not to reproduce,
//! each with its reason.

/// Bux et al. 1982, Figs. 2-3: one-way throughput, constant lengths.
pub const BUX_THROUGHPUT_ONE_WAY: &str = include_str!("../experiments/bux-throughput-one-way.toml");
/// Bux et al. 1982, Figs. 4 and 6: two-way throughput, constant lengths.
pub const BUX_THROUGHPUT_TWO_WAY: &str = include_str!("../experiments/bux-throughput-two-way.toml");
/// Bux et al. 1982, Fig. 5: two-way throughput, exponential lengths.
pub const BUX_THROUGHPUT_EXPONENTIAL: &str =
    include_str!("../experiments/bux-throughput-exponential.toml");
/// Bux et al. 1982, Figs. 7-9 and 11: transfer and buffer-holding times.
pub const BUX_TRANSFER_TIME: &str = include_str!("../experiments/bux-transfer-time.toml");
/// Bux et al. 1982, Fig. 10: transfer time against the propagation delay.
pub const BUX_TRANSFER_TIME_TP: &str = include_str!("../experiments/bux-transfer-time-tp.toml");
/// Ronan et al., D-STAR Table I: transfers over the DD channel.
pub const DSTAR_TABLE_1: &str = include_str!("../experiments/dstar-table-1.toml");
/// Ronan et al., D-STAR Table II: transfers through fades.
pub const DSTAR_TABLE_2: &str = include_str!("../experiments/dstar-table-2.toml");
/// Korb and Wills 1987, Table 1: ping over the X.25 network.
pub const KORB_TABLE_1: &str = include_str!("../experiments/korb-table-1.toml");
/// Korb and Wills 1987, Table 2: FTP put and get.
pub const KORB_TABLE_2: &str = include_str!("../experiments/korb-table-2.toml");
/// Korb and Wills 1987, Table 3: FTP over two circuits.
pub const KORB_TABLE_3: &str = include_str!("../experiments/korb-table-3.toml");
/// Korb and Wills 1987, Table 4: FTP over one to ten circuits.
pub const KORB_TABLE_4: &str = include_str!("../experiments/korb-table-4.toml");
/// Ronan et al., AX.25 Tables V-VII: the CM-CL through host and KISS TNC.
pub const RONAN_TABLES_5_7: &str = include_str!("../experiments/ronan-tables-5-7.toml");
/// Zieliński 2013, Figs. 4-6: throughput against window and N1.
pub const ZIELINSKI_FIGS_4_6: &str = include_str!("../experiments/zielinski-figs-4-6.toml");
/// Zieliński 2013, Figs. 7-9: real window sizes with hardware TNCs.
pub const ZIELINSKI_FIGS_7_9: &str = include_str!("../experiments/zielinski-figs-7-9.toml");
/// Zieliński 2013, Figs. 10-13: throughput with software TNCs.
pub const ZIELINSKI_FIGS_10_13: &str = include_str!("../experiments/zielinski-figs-10-13.toml");
/// Zieliński 2013, Figs. 14-15: real window sizes with software TNCs.
pub const ZIELINSKI_FIGS_14_15: &str = include_str!("../experiments/zielinski-figs-14-15.toml");
/// The declared gaps: check ids that fail for a known, documented reason.
pub const GAPS: &str = include_str!("../experiments/gaps.toml");
