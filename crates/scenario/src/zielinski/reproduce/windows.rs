//! Zieliński, Figs. 7-9 and 14-15 as a report section: the real window
//! sizes.

use super::super::experiment::{parse, Measured, RealWindowExperiment, WindowResult};
use super::super::ZielinskiError;
use super::{setup_text, PAPER};
use crate::builtin;
use crate::report::{Check, Progress, RunOptions, Section};
use crate::{check_note, section_text};
use linklab_channel::profile::profile;

fn window_case<'a>(
    results: &'a [WindowResult],
    fig: &str,
    label: &str,
) -> Result<&'a Measured, ZielinskiError> {
    results
        .iter()
        .find(|r| r.spec.id == fig)
        .and_then(|r| r.case(label))
        .ok_or_else(|| ZielinskiError::Parameter(format!("no case \"{label}\" in \"{fig}\"")))
}

/// Figs. 7-9 and 14-15: real window sizes at k = 7 from the simulated
/// transfers, with the checks that the Z80 controllers cannot use k above
/// about 4.
pub fn real_window_figures(
    opts: &RunOptions,
    progress: &dyn Progress,
) -> Result<Section, ZielinskiError> {
    let hardware: RealWindowExperiment = parse(builtin::ZIELINSKI_FIGS_7_9)?;
    let software: RealWindowExperiment = parse(builtin::ZIELINSKI_FIGS_14_15)?;
    let hw = hardware.simulate(opts, progress)?;
    let sw = software.simulate(opts, progress)?;
    let mut out = hardware.output(&hw);
    let more = software.output(&sw);
    out.tables.extend(more.tables);
    out.figures.extend(more.figures);
    let mut checks = Vec::new();

    let tnc2d = window_case(&hw, "fig7", "N1 = 256")?;
    let tnc2h = window_case(&hw, "fig8", "N1 = 256")?;
    let kpc = window_case(&hw, "fig9", "N1 = 256")?;
    let z80_limited = tnc2d.mean_window() <= 5.0 && tnc2h.mean_window() <= 5.0;
    checks.push(
        Check::qualitative(
            "zielinski2013/fig7-9/z80-real-window-limit",
            PAPER,
            "Figs. 7-9: at k = 7 and N1 = 256 the Z80 TNC2D (1.2 kbit/s) and TNC2H (9.6 \
             kbit/s) send at most about 4-5 frames per transmission, the KPC-9612+ mostly 7",
            "Z80 controllers cannot use the maximum window; for the KPC-9612+ k = 7 dominates",
            format!(
                "mean real window: TNC2D {:.2}, TNC2H {:.2}, KPC-9612+ {:.2} (most frequent \
                 {})",
                tnc2d.mean_window(),
                tnc2h.mean_window(),
                kpc.mean_window(),
                kpc.mode()
            ),
            z80_limited && kpc.mode() == 7,
        )
        .with_note(check_note!("zielinski2013/fig7-9/z80-real-window-limit")),
    );
    let small = window_case(&hw, "fig7", "N1 = 32")?;
    checks.push(
        Check::qualitative(
            "zielinski2013/fig7/smaller-frames-larger-window",
            PAPER,
            "Fig. 7: with shorter I frames the TNC2D's real window grows",
            "with decreasing I frame length, real window sizes increase",
            format!(
                "mean real window {:.2} at N1 = 32, {:.2} at N1 = 256",
                small.mean_window(),
                tnc2d.mean_window()
            ),
            small.mean_window() > tnc2d.mean_window() + 1.0,
        )
        .with_note(check_note!(
            "zielinski2013/fig7/smaller-frames-larger-window"
        )),
    );

    let taps: Vec<(&str, &Measured)> = [
        ("fig14", "TNC2 2.5 MHz, MFJ 1.1.9"),
        ("fig14", "TNC2D 4.9 MHz, Spirit-2 5.0"),
        ("fig15", "Spirit-2 Std. 10 MHz, Spirit-2 5.0"),
        ("fig15", "Spirit-2 H.S. 20 MHz, MFJ 1.1.9"),
    ]
    .iter()
    .map(|&(f, l)| window_case(&sw, f, l).map(|m| (l, m)))
    .collect::<Result<_, _>>()?;
    checks.push(
        Check::qualitative(
            "zielinski2013/fig14-15/tapr-window-about-4",
            PAPER,
            "Figs. 14-15: MFJ and Spirit-2 firmware send about 4 frames per transmission at \
             k = 7",
            "real window size oscillates around 4 (never above 5)",
            taps.iter()
                .map(|(l, m)| format!("{l}: mean {:.2}", m.mean_window()))
                .collect::<Vec<_>>()
                .join("; "),
            taps.iter().all(|(_, m)| {
                m.mean_window() <= 5.0 && m.real_windows[5..].iter().all(|&c| c == 0)
            }),
        )
        .with_note(check_note!("zielinski2013/fig14-15/tapr-window-about-4")),
    );
    let tf21 = window_case(&sw, "fig14", "TNC2 2.5 MHz, TF 2.1d")?;
    let tf27 = window_case(&sw, "fig15", "Spirit-2 H.S. 20 MHz, TF 2.7b")?;
    checks.push(
        Check::qualitative(
            "zielinski2013/fig14-15/tf-window-by-clock",
            PAPER,
            "Figs. 14-15: TF 2.1 on a 2.5 MHz TNC2 sends 1-2 frames per transmission; TF 2.7 \
             on a 20 MHz Spirit-2 still uses 7",
            "TF 2.1 always 1 or 2 at 2.5 MHz; TF 2.7 window of 7 at 20 MHz",
            format!(
                "TF 2.1 on TNC2: mean {:.2}; TF 2.7 on Spirit-2 H.S.: mean {:.2} (most \
                 frequent {})",
                tf21.mean_window(),
                tf27.mean_window(),
                tf27.mode()
            ),
            tf21.mean_window() <= 2.0 && tf27.mode() == 7,
        )
        .with_note(check_note!(
            "zielinski2013/fig14-15/tf-window-by-clock",
            fitted_tf21 = profile("tnc2-tf21")?.firmware.fitted_to,
            fitted_tf27 = profile("tnc2-tf27")?.firmware.fitted_to,
        )),
    );

    let text = section_text!("zielinski2013/figs-7-9-14-15", setup = setup_text());
    Ok(Section {
        heading: "Figs. 7-9, 14-15: real window size".to_string(),
        text,
        tables: out.tables,
        figures: out.figures,
        checks,
    })
}
