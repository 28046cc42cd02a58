//! Bux et al., Figs. 7-11 as report sections: mean transfer and
//! buffer-holding time against the load and against t_p.

use super::super::delay::{Curve, DelayCurves, TransferTimeExperiment};
use super::super::model::{md1_transfer_s, nrm_secondary_transfer_s};
use super::super::replicate::Estimate;
use super::super::BuxError;
use super::{above, estimates, quick_or, section, verdict, widest, PAPER};
use crate::builtin;
use crate::report::{Check, Progress, RunOptions, Section};
use crate::{check_note, section_text};

/// The line of Figs. 7-9 and 11: bit rate, bit/s.
const LINE_BPS: f64 = 48_000.0;
/// Its processing plus propagation delay t_p, s.
const T_P_S: f64 = 0.05;

/// The curves of a transfer-time experiment, by figure id.
type Figures = std::collections::BTreeMap<String, Vec<DelayCurves>>;

fn delay_fig<'a>(figures: &'a Figures, id: &str, p_bit: f64) -> Result<&'a DelayCurves, BuxError> {
    figures
        .get(id)
        .and_then(|v| v.iter().find(|c| c.p_bit == p_bit))
        .ok_or(BuxError::NoEstimate {
            what: "figure of the built-in experiment",
        })
}

/// The precision sentence of a transfer-time section, over every point
/// of every curve.
fn precision(f: &Figures) -> String {
    widest(
        f.values()
            .flatten()
            .flat_map(|c| estimates([&c.nrm_primary, &c.nrm_secondary, &c.abm])),
    )
}

fn at_x(curve: &Curve, x: f64) -> Option<Estimate> {
    curve
        .iter()
        .find(|(px, _)| (px - x).abs() < 1e-9)
        .map(|(_, e)| *e)
}

/// Figs. 7-9 and 11: mean transfer and buffer-holding time against load.
pub fn transfer_time(opts: &RunOptions, progress: &dyn Progress) -> Result<Section, BuxError> {
    let experiment = TransferTimeExperiment::from_toml(builtin::BUX_TRANSFER_TIME)?;
    let results = experiment.measure(opts, progress)?;
    let f = &results.figures;
    let checks = [
        md1_checks(f)?,
        fig7_checks(f)?,
        fig8_checks(f)?,
        fig9_checks(f)?,
        fig11_checks(f)?,
    ]
    .concat();
    let wide = precision(f);
    let msgs = quick_or(
        opts,
        experiment.quick_messages_per_replication,
        experiment.messages_per_replication,
    );
    let text = section_text!("bux1982/figs-7-9-11", precision = wide, msgs = msgs);
    Ok(section(
        "Figs. 7-9 and 11: mean transfer and buffer-holding time vs load",
        text,
        results.output,
        checks,
    ))
}

/// Figs. 7 and 9: error-free ABM against the M/D/1 formula.
fn md1_checks(f: &Figures) -> Result<Vec<Check>, BuxError> {
    let mut checks = Vec::new();
    let (v, t_p) = (LINE_BPS, T_P_S);
    // Error-free ABM against M/D/1 (Fig. 7; Fig. 9 up to 0.3).
    for (id, l, max_load) in [("bux-fig7", 5000.0, 1.0), ("bux-fig9", 800.0, 0.3)] {
        let c = delay_fig(f, id, 0.0)?;
        let i_frame = (l + 40.0) / v;
        let mut failures = Vec::new();
        for &(load, e) in c.abm.iter().filter(|(x, _)| *x <= max_load + 1e-9) {
            if let Some(model) = md1_transfer_s(load, l, 40.0, v, t_p) {
                let model = model / i_frame;
                if (e.mean - model).abs() > e.half_width {
                    failures.push(format!(
                        "Y_u = {load}: ABM {} vs M/D/1 {model:.4}",
                        e.show()
                    ));
                }
            }
        }
        checks.push(Check::qualitative(
            format!("bux1982/{}/abm-md1", id.trim_start_matches("bux-")),
            PAPER,
            format!(
                "{}: error-free ABM mean transfer time equals the M/D/1 formula within the \
                95% interval (loads up to {max_load})",
                if id == "bux-fig7" {
                    "Fig. 7, 5000 bits"
                } else {
                    "Fig. 9, 800 bits"
                }
            ),
            "the queueing delay for the ABM link is that of a simple M/D/1 queue (Fig. 9: up to \
                loads of about 0.4)",
            verdict(&failures),
            failures.is_empty(),
        ).with_note(check_note!("bux1982/*/abm-md1")));
    }

    Ok(checks)
}

/// Fig. 7: the NRM directions against ABM, error-free and with errors.
fn fig7_checks(f: &Figures) -> Result<Vec<Check>, BuxError> {
    let mut checks = Vec::new();
    let (v, t_p) = (LINE_BPS, T_P_S);
    // The NRM secondary-to-primary extra delay, light load.
    let c7 = delay_fig(f, "bux-fig7", 0.0)?;
    let i_frame7 = 5040.0 / v;
    if let (Some(s), Some(a)) = (c7.nrm_secondary.first(), c7.abm.first()) {
        let extra_ms = (s.1.mean - a.1.mean) * i_frame7 * 1e3;
        let extra_hw_ms = (s.1.half_width + a.1.half_width) * i_frame7 * 1e3;
        let t_p_ms = t_p * 1e3;
        let model_ms = nrm_secondary_transfer_s(s.0, 5000.0, 40.0, v, t_p)
            .zip(md1_transfer_s(s.0, 5000.0, 40.0, v, t_p))
            .map_or(f64::NAN, |(n, m)| (n - m) * 1e3);
        checks.push(
            Check::qualitative(
                "bux1982/fig7/nrm-secondary-extra-delay",
                PAPER,
                format!(
                    "Fig. 7, error-free, Y_u = {}: NRM secondary-to-primary transfer time \
                    minus ABM's is of the order of t_p, i.e. between t_p/2 and 2 t_p ({:.0} to \
                    {:.0} ms)",
                    s.0,
                    t_p_ms / 2.0,
                    2.0 * t_p_ms
                ),
                "the secondary-to-primary direction of NRM shows an additional delay in the \
                    order of the processing plus propagation delay (conclusion 5)",
                format!(
                    "{extra_ms:.1} ± {extra_hw_ms:.1} ms = {:.2} t_p",
                    extra_ms / t_p_ms
                ),
                extra_ms - extra_hw_ms >= t_p_ms / 2.0 && extra_ms + extra_hw_ms <= 2.0 * t_p_ms,
            )
            .with_note(check_note!(
                "bux1982/fig7/nrm-secondary-extra-delay",
                model_ms = format!("{model_ms:.1}"),
            )),
        );
    }
    let mut failures = Vec::new();
    for (&(x, p), &(_, a)) in c7.nrm_primary.iter().zip(&c7.abm) {
        if (p.mean - a.mean).abs() > p.half_width + a.half_width {
            failures.push(format!("Y_u = {x}: P→S {} vs ABM {}", p.show(), a.show()));
        }
    }
    let largest = format!(
        "{:.2}",
        100.0
            * c7.nrm_primary
                .iter()
                .zip(&c7.abm)
                .map(|(p, a)| (p.1.mean / a.1.mean - 1.0).abs())
                .fold(0.0, f64::max)
    );
    checks.push(Check::qualitative(
        "bux1982/fig7/nrm-primary-equals-abm",
        PAPER,
        "Fig. 7, error-free: NRM primary-to-secondary transfer time equals ABM's within the \
            intervals",
        "in the error-free case, ABM and the direction from primary to secondary of the NRM link \
            show the same delay values",
        verdict(&failures),
        failures.is_empty(),
    ).with_note(check_note!(
        "bux1982/fig7/nrm-primary-equals-abm",
        largest = largest,
    )));
    let e7 = delay_fig(f, "bux-fig7", 1e-5)?;
    let mut failures = Vec::new();
    for (&(x, p), &(_, a)) in e7
        .nrm_primary
        .iter()
        .zip(&e7.abm)
        .filter(|(p, _)| p.0 <= 0.3 + 1e-9)
    {
        if !above(a, p) {
            failures.push(format!("Y_u = {x}: P→S {} vs ABM {}", p.show(), a.show()));
        }
    }
    let ratios = e7
        .nrm_primary
        .iter()
        .zip(&e7.abm)
        .filter(|(p, _)| p.0 <= 0.3 + 1e-9)
        .map(|(p, a)| format!("{:.3} at {}", a.1.mean / p.1.mean, p.0))
        .collect::<Vec<_>>()
        .join(", ");
    checks.push(
        Check::qualitative(
            "bux1982/fig7/errors-nrm-primary-faster",
            PAPER,
            "Fig. 7, p_bit = 1e-5, light and medium loads (up to 0.3): NRM primary-to-secondary \
            transfer time below ABM's",
            "apart from very high loads, the direction from primary to secondary of the NRM link \
            performs slightly better than the ABM link",
            verdict(&failures),
            failures.is_empty(),
        )
        .with_note(check_note!(
            "bux1982/fig7/errors-nrm-primary-faster",
            ratios = ratios,
        )),
    );
    Ok(checks)
}

/// Fig. 8 against Fig. 7: exponential lengths give longer transfer times.
fn fig8_checks(f: &Figures) -> Result<Vec<Check>, BuxError> {
    let mut checks = Vec::new();
    let c7 = delay_fig(f, "bux-fig7", 0.0)?;
    let c8 = delay_fig(f, "bux-fig8", 0.0)?;
    let mut failures = Vec::new();
    for &(x, e) in &c8.abm {
        if let Some(k) = at_x(&c7.abm, x) {
            if !(above(e, k) || x < 0.15) {
                failures.push(format!(
                    "Y_u = {x}: exponential {} vs constant {}",
                    e.show(),
                    k.show()
                ));
            }
        }
    }
    let ratios = c8
        .abm
        .iter()
        .filter_map(|&(x, e)| Some(format!("{:.3} at {x}", e.mean / at_x(&c7.abm, x)?.mean)))
        .collect::<Vec<_>>()
        .join(", ");
    checks.push(Check::qualitative(
        "bux1982/fig8/exponential-longer",
        PAPER,
        "Fig. 8 against Fig. 7, error-free ABM: exponential lengths give longer transfer times \
            than constant ones (loads from 0.2)",
        "this leads to longer transfer times because the queueing delay increases with the \
            variance of the transmission times",
        verdict(&failures),
        failures.is_empty(),
    ).with_note(check_note!(
        "bux1982/fig8/exponential-longer",
        ratios = ratios,
    )));
    Ok(checks)
}

/// Fig. 9: NRM primary to secondary leaves M/D/1 at a load of 0.3.
fn fig9_checks(f: &Figures) -> Result<Vec<Check>, BuxError> {
    let c9 = delay_fig(f, "bux-fig9", 0.0)?;
    let (Some(p), Some(a)) = (at_x(&c9.nrm_primary, 0.3), at_x(&c9.abm, 0.3)) else {
        return Ok(Vec::new());
    };
    let i9 = 840.0 / LINE_BPS;
    let model = md1_transfer_s(0.3, 800.0, 40.0, LINE_BPS, T_P_S).map_or(f64::NAN, |m| m / i9);
    Ok(vec![Check::qualitative(
        "bux1982/fig9/nrm-primary-leaves-md1",
        PAPER,
        "Fig. 9, error-free, Y_u = 0.3: NRM primary-to-secondary clearly above the M/D/1 \
                value while ABM is not",
        "for the direction primary to secondary the transfer delay deviates from the ideal \
                case already at a utilization of 0.2 and increases steeply beyond 0.3",
        format!("P→S {}, ABM {}, M/D/1 {model:.4}", p.show(), a.show()),
        p.lower() > model && (a.mean - model).abs() <= a.half_width.max(0.01 * model),
    )
    .with_note(check_note!(
        "bux1982/fig9/nrm-primary-leaves-md1",
        p_above = format!("{:.1}", 100.0 * (p.mean / model - 1.0)),
        abm_above = format!("{:+.1}", 100.0 * (a.mean / model - 1.0)),
    ))])
}

/// Fig. 11: buffer-holding times, NRM against ABM and primary against
/// secondary.
fn fig11_checks(f: &Figures) -> Result<Vec<Check>, BuxError> {
    let mut checks = Vec::new();
    let c9 = delay_fig(f, "bux-fig9", 0.0)?;
    let h = delay_fig(f, "bux-fig11", 0.0)?;
    let mut failures = Vec::new();
    for ((&(x, p), &(_, s)), &(_, a)) in h.nrm_primary.iter().zip(&h.nrm_secondary).zip(&h.abm) {
        if !(above(p, a) && above(s, a)) {
            failures.push(format!(
                "Y_u = {x}: P {} S {} ABM {}",
                p.show(),
                s.show(),
                a.show()
            ));
        }
    }
    let over_abm = |curve: &Curve| {
        curve
            .iter()
            .zip(&h.abm)
            .map(|(p, a)| format!("{:.2}", p.1.mean / a.1.mean))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (primary, secondary) = (over_abm(&h.nrm_primary), over_abm(&h.nrm_secondary));
    checks.push(Check::qualitative(
        "bux1982/fig11/nrm-buffers-held-longer",
        PAPER,
        "Fig. 11, error-free: buffer-holding time of both NRM stations above ABM's at every load",
        "buffers have to be held considerably longer within primary and secondary stations than \
            within combined stations",
        verdict(&failures),
        failures.is_empty(),
    ).with_note(check_note!(
        "bux1982/fig11/nrm-buffers-held-longer",
        primary = primary,
        secondary = secondary,
    )));
    if let (Some(p), Some(s), Some(tp), Some(ts)) = (
        at_x(&h.nrm_primary, 0.2),
        at_x(&h.nrm_secondary, 0.2),
        at_x(&c9.nrm_primary, 0.2),
        at_x(&c9.nrm_secondary, 0.2),
    ) {
        checks.push(
            Check::relative(
                "bux1982/fig11/primary-equals-secondary",
                PAPER,
                "Fig. 11, error-free, Y_u = 0.2: NRM secondary's buffer-holding time over the \
                    primary's",
                1.0,
                s.mean / p.mean,
                "",
                0.10,
            )
            .with_paper_text("almost equal (conclusion 6)")
            .with_note(check_note!(
                "bux1982/fig11/primary-equals-secondary",
                factor = format!("{:.2}", ts.mean / tp.mean),
                p_to_s = tp.show(),
                s_to_p = ts.show(),
            )),
        );
    }
    Ok(checks)
}

/// Fig. 10: mean transfer time against t_p at Y_u = 0.5.
pub fn transfer_time_vs_t_p(
    opts: &RunOptions,
    progress: &dyn Progress,
) -> Result<Section, BuxError> {
    let experiment = TransferTimeExperiment::from_toml(builtin::BUX_TRANSFER_TIME_TP)?;
    let results = experiment.measure(opts, progress)?;
    let c = delay_fig(&results.figures, "bux-fig10", 0.0)?;
    let (l, v) = (952.0, 48_000.0);
    let i_frame = (l + 40.0) / v;
    // Where each curve first leaves the linear (M/D/1 + t_p) growth by 5%.
    let departure = |curve: &Curve| {
        curve
            .iter()
            .find(|(x, e)| {
                md1_transfer_s(0.5, l, 40.0, v, x * i_frame)
                    .is_some_and(|m| e.lower() > 1.05 * (m / i_frame))
            })
            .map(|(x, _)| *x)
    };
    let abm_linear = c.abm.iter().take(4).all(|(x, e)| {
        md1_transfer_s(0.5, l, 40.0, v, x * i_frame)
            .is_some_and(|m| (e.mean - m / i_frame).abs() <= e.half_width)
    });
    let nrm = departure(&c.nrm_primary);
    let abm = departure(&c.abm);
    let show = |x: Option<f64>| {
        x.map_or("not within the sweep".to_string(), |x| {
            format!("t_p/T_I = {x:.2}")
        })
    };
    let differences = c
        .abm
        .iter()
        .take(4)
        .filter_map(|&(x, e)| {
            md1_transfer_s(0.5, l, 40.0, v, x * i_frame).map(|m| {
                format!(
                    "{:+.4} ± {:.4} at {x:.2}",
                    e.mean - m / i_frame,
                    e.half_width
                )
            })
        })
        .collect::<Vec<_>>()
        .join(", ");
    let checks =
        vec![
        Check::qualitative(
            "bux1982/fig10/linear-for-small-t-p",
            PAPER,
            "Fig. 10, error-free ABM: transfer time grows linearly with t_p for small t_p (equal \
                to M/D/1 + t_p within the interval at the four smallest t_p)",
            "for small values of the processing plus propagation delay, the mean transfer time \
                grows linearly",
            if abm_linear { "linear (M/D/1 + t_p)" } else { "departs from M/D/1 + t_p" },
            abm_linear,
        ).with_note(check_note!(
            "bux1982/fig10/linear-for-small-t-p",
            differences = differences,
        )),
        Check::qualitative(
            "bux1982/fig10/modulus-hits-nrm-first",
            PAPER,
            "Fig. 10, error-free: the modulus makes NRM primary to secondary leave linear growth \
                (its interval 5% above M/D/1 + t_p) at a smaller t_p than ABM",
            "the impact of the modulus is experienced in NRM at considerably smaller ratios of \
                t_p to I-frame transmission time than in ABM",
            format!("NRM P→S: {}; ABM: {}", show(nrm), show(abm)),
            match (nrm, abm) {
                (Some(n), Some(a)) => n < a,
                (Some(_), None) => true,
                _ => false,
            },
        ).with_note(check_note!("bux1982/fig10/modulus-hits-nrm-first")),
    ];
    let wide = precision(&results.figures);
    Ok(section(
        "Fig. 10: mean transfer time vs processing plus propagation delay",
        section_text!("bux1982/fig-10", precision = wide),
        results.output,
        checks,
    ))
}
