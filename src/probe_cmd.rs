//! `linklab probe`: measure a link through a KISS TNC and a peer that
//! answers AX.25 connected mode, fit what the advice needs, and write it
//! as a link `linklab advise --link` takes.

use std::time::Duration;

use anyhow::{bail, Context};
use clap::Args;
use linklab_advise::probe::{self, Fit, Known, ProbeConfig, ProbeEvent, Prober, Sample};
use linklab_channel::StationConfig;
use linklab_core::Instant;
use linklab_io::{KissAddress, KissParams};
use linklab_wire::ax25::{same_station, Address};
use linklab_wire::control::{Control, Unnumbered};
use linklab_wire::kiss::{self, Command};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::runtime::{Signals, Stop};
use crate::table::Table;
use crate::usage::usage;

/// The longest silence while the probe waits for the peer's UA.
const SAY_EVERY: Duration = Duration::from_secs(5);

/// `linklab probe`.
#[derive(Args)]
pub struct ProbeArgs {
    /// The KISS TNC: tcp:HOST:PORT, serial:DEVICE:BAUD or
    /// axudp:BIND@PEER (see docs/cli.md).
    #[arg(long, value_name = "ADDRESS")]
    kiss: KissAddress,
    /// This station's callsign and SSID.
    #[arg(long, value_name = "CALL")]
    mycall: Address,
    /// The peer: any station that answers AX.25 connected mode (a node,
    /// a BBS, `linklab listen`).
    #[arg(long, value_name = "CALL")]
    to: Address,
    /// Digipeaters to go through, in order (comma separated).
    #[arg(long, value_name = "DIGI,...", value_delimiter = ',')]
    via: Vec<Address>,
    /// Radio bit rate, bit/s.
    #[arg(long, value_name = "BPS")]
    bitrate: u32,
    /// Serial rate between each host and its TNC, bit/s.
    #[arg(long, value_name = "BPS", default_value_t = 9600)]
    serial_bps: u32,
    /// TXTAIL the probe sends its TNC, ms (its TXDELAY is not sent: it is
    /// measured). P 255 and SLOTTIME 10 ms are sent too.
    #[arg(long, value_name = "MS", default_value_t = 10)]
    txtail_ms: u64,
    /// The peer's persistence P, as its TNC is set.
    #[arg(long, value_name = "P", default_value_t = 63)]
    peer_persist: u8,
    /// The peer's SLOTTIME, ms.
    #[arg(long, value_name = "MS", default_value_t = 100)]
    peer_slot_ms: u64,
    /// The peer's window k: a station like linklab or Dire Wolf
    /// acknowledges at once when that many frames are outstanding.
    #[arg(long, value_name = "K", default_value_t = 4,
          value_parser = clap::value_parser!(u8).range(1..=7))]
    peer_window: u8,
    /// The peer's TXTAIL, ms.
    #[arg(long, value_name = "MS", default_value_t = 100)]
    peer_txtail_ms: u64,
    /// The TNCs' processing time per octet, µs (assumed, not fitted).
    #[arg(long, value_name = "US", default_value_t = 0.0)]
    tnc_per_octet_us: f64,
    /// The TNCs' transmit buffer, octets (assumed).
    #[arg(long, value_name = "OCTETS", default_value_t = 8192)]
    tnc_buffer: usize,
    /// The TNCs' carrier hold, ms (assumed).
    #[arg(long, value_name = "MS", default_value_t = 0.0)]
    carrier_hold_ms: f64,
    /// The peer host's delay between stack and serial port, ms (assumed).
    #[arg(long, value_name = "MS", default_value_t = 0.0)]
    peer_latency_ms: f64,
    /// The longest information field the peer takes, octets.
    #[arg(long, value_name = "N", default_value_t = 256)]
    n1: usize,
    /// How many times each kind of window is sent.
    #[arg(long, value_name = "N", default_value_t = 5)]
    repeat: usize,
    /// Windows of seven full frames sent after the others, for the loss
    /// (a BER within 10% takes about a hundred frames lost).
    #[arg(long, value_name = "N", default_value_t = 40)]
    loss_windows: usize,
    /// Wait after each answer before the next window, ms.
    #[arg(long, value_name = "MS", default_value_t = 500)]
    pause_ms: u64,
    /// Wait for an answer before asking again, ms.
    #[arg(long, value_name = "MS", default_value_t = 10_000)]
    response_ms: u64,
    /// Stop after this many seconds whatever is left of the plan.
    #[arg(long, value_name = "S", default_value_t = 600)]
    max_time: u64,
    /// Print the link as JSON (for `linklab advise --link`) instead of
    /// text.
    #[arg(long)]
    json: bool,
}

impl ProbeArgs {
    fn known(&self) -> anyhow::Result<Known> {
        let ms = |v: f64| Duration::from_secs_f64(v / 1e3);
        for (name, v) in [
            ("--tnc-per-octet-us", self.tnc_per_octet_us),
            ("--carrier-hold-ms", self.carrier_hold_ms),
            ("--peer-latency-ms", self.peer_latency_ms),
        ] {
            if !(v.is_finite() && (0.0..=10_000.0).contains(&v)) {
                return Err(usage(format!("{name} {v} is not 0-10000")));
            }
        }
        if self.bitrate == 0 || self.serial_bps == 0 {
            return Err(usage("--bitrate and --serial-bps must be positive".into()));
        }
        Ok(Known {
            bit_rate: self.bitrate,
            serial_bps: self.serial_bps,
            local: probe::local_station(Duration::from_millis(self.txtail_ms)),
            peer: StationConfig {
                persistence: self.peer_persist,
                slot_time: Duration::from_millis(self.peer_slot_ms.max(1)),
                txdelay: Duration::ZERO,
                txtail: Duration::from_millis(self.peer_txtail_ms),
                slot_phase: Duration::ZERO,
            },
            per_octet: Duration::from_secs_f64(self.tnc_per_octet_us / 1e6),
            buffer_octets: self.tnc_buffer,
            carrier_hold: ms(self.carrier_hold_ms),
            peer_latency: ms(self.peer_latency_ms),
            peer_window: self.peer_window,
        })
    }

    fn config(&self) -> anyhow::Result<ProbeConfig> {
        if !(2..=2048).contains(&self.n1) {
            return Err(usage(format!("--n1 {} is not 2-2048", self.n1)));
        }
        if self.repeat == 0 {
            return Err(usage("--repeat must be at least 1".into()));
        }
        if same_station(&self.to, &self.mycall) {
            return Err(usage(format!(
                "--to {} is this station's own callsign (--mycall): the probe needs another \
                 station to answer",
                self.to
            )));
        }
        if let Some(why) = crate::options::via_error(&self.mycall, &self.to, &self.via) {
            return Err(usage(format!("--via: {why}")));
        }
        Ok(ProbeConfig {
            local: self.mycall,
            remote: self.to,
            via: self.via.clone(),
            plan: probe::plan(self.n1, self.repeat, self.loss_windows),
            response_time: Duration::from_millis(self.response_ms.max(100)),
            tries: 5,
            pause: Duration::from_millis(self.pause_ms),
        })
    }
}

pub fn run(args: ProbeArgs) -> anyhow::Result<()> {
    let known = args.known()?;
    let config = args.config()?;
    let (samples, ended) = crate::runtime::block_on(measure(&args, config.clone()))?;
    let planned = prober_plan_len(&args);
    let fit = match (probe::fit(&known, &config, &samples), ended) {
        (Ok(fit), _) => fit,
        // Stopped by the user before there was enough to fit: still the
        // signal's exit status, as for any other interrupted run.
        (Err(why), Ended::Interrupted(stop)) => {
            eprintln!(
                "linklab: probe stopped by {} after {} of {planned} measurements, too few to fit the link: {why}",
                spoken(stop),
                samples.len()
            );
            std::process::exit(stop.status());
        }
        (Err(why), _) => anyhow::bail!("cannot fit the link: {why}"),
    };
    let mut link = probe::link(&known, &fit, Duration::from_millis(args.txtail_ms));
    link.limits.n1_max = args.n1;
    if args.json {
        link.probe = Some(fit);
        println!("{}", serde_json::to_string_pretty(&link)?);
    } else {
        print!("{}", text(&fit, samples.len()));
    }
    match ended {
        Ended::Completed => {}
        Ended::TimeUp => eprintln!(
            "linklab: --max-time reached after {} of {planned} measurements; the fit uses what was measured",
            samples.len()
        ),
        Ended::Interrupted(stop) => {
            eprintln!(
                "linklab: probe stopped by {} after {} of {planned} measurements; the fit uses what was measured",
                spoken(stop),
                samples.len()
            );
            std::process::exit(stop.status());
        }
    }
    Ok(())
}

/// How a probe's measurement ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ended {
    /// Every planned measurement was made.
    Completed,
    /// `--max-time` cut the plan short.
    TimeUp,
    /// A signal (Ctrl-C, SIGTERM, SIGHUP) cut the plan short.
    Interrupted(Stop),
}

/// Runs the plan over the TNC; the samples, and how it ended. The first
/// signal (Ctrl-C, SIGTERM, SIGHUP; or `--max-time`) stops the plan and
/// releases the link; a second leaves without waiting for the release.
async fn measure(args: &ProbeArgs, config: ProbeConfig) -> anyhow::Result<(Vec<Sample>, Ended)> {
    let mut signals = Signals::new()?;
    let stream = args
        .kiss
        .connect()
        .await
        .with_context(|| format!("cannot reach the TNC at {}", args.kiss))?;
    let (mut rd, mut wr) = tokio::io::split(stream);
    let params = KissParams {
        persistence: Some(255),
        slot_time: Some(Duration::from_millis(10)),
        txtail: Some(Duration::from_millis(args.txtail_ms)),
        ..KissParams::default()
    };
    params.validate()?;
    wr.write_all(&params.encode()).await?;
    let origin = tokio::time::Instant::now();
    let now = || Instant::ZERO + origin.elapsed();
    let deadline = origin + Duration::from_secs(args.max_time);
    let (tries, response_time) = (config.tries, config.response_time);
    let mut prober = Prober::new(config, now());
    let mut decoder = kiss::Decoder::new(linklab_io::KISS_MAX_FRAME);
    let mut samples = Vec::new();
    let mut ended = Ended::Completed;
    let mut buf = vec![0u8; 4096];
    let total = prober_plan_len(args);
    let mut connected = false;
    let mut sabms = 0;
    let mut say_at = tokio::time::Instant::now() + SAY_EVERY;
    loop {
        while let Some(frame) = prober.poll_transmit() {
            if !connected && is_set_mode(frame.control()) {
                sabms += 1;
                eprintln!(
                    "connecting to {}: SABM {sabms} of {}, waiting {:.0} s for UA",
                    args.to,
                    tries,
                    response_time.as_secs_f64()
                );
                say_at = tokio::time::Instant::now() + SAY_EVERY;
            }
            wr.write_all(&kiss::encode(&kiss::Frame::data(frame.encode())))
                .await
                .context("the TNC connection failed")?;
        }
        while let Some(event) = prober.poll_event() {
            match event {
                ProbeEvent::Connected => {
                    connected = true;
                    eprintln!("connected to {}", args.to)
                }
                ProbeEvent::Sample(s) => {
                    samples.push(s);
                    eprintln!("{}", progress(&s, samples.len(), total));
                }
                ProbeEvent::Finished => {}
                ProbeEvent::Failed(why) => bail!("the probe failed: {why}"),
            }
        }
        if prober.is_done() {
            break;
        }
        let wake = prober.poll_timeout().map(|t| origin + (t - Instant::ZERO));
        tokio::select! {
            read = rd.read(&mut buf) => {
                let n = read.context("the TNC connection failed")?;
                if n == 0 {
                    bail!("the TNC closed the connection");
                }
                decoder.push(&buf[..n]);
                for item in decoder.by_ref() {
                    if let Ok(kiss::Frame { port, command: Command::Data(data) }) = item {
                        if port == kiss::Port::default() {
                            prober.handle_frame(now(), &data);
                        }
                    }
                }
            }
            _ = sleep_until(wake) => prober.handle_timeout(now()),
            _ = tokio::time::sleep_until(say_at), if !connected => {
                eprintln!(
                    "connecting to {}: waiting for UA to SABM {} of {} ({:.0} s so far)",
                    args.to,
                    sabms.max(1),
                    tries,
                    origin.elapsed().as_secs_f64()
                );
                say_at = tokio::time::Instant::now() + SAY_EVERY;
            }
            stop = signals.recv() => {
                if matches!(ended, Ended::Interrupted(_)) {
                    eprintln!("second {}: leaving without waiting for the link's release", spoken(stop));
                    break;
                }
                eprintln!("{}: releasing the link (Ctrl-C again to leave at once)", spoken(stop));
                ended = Ended::Interrupted(stop);
                prober.stop(now());
            }
            _ = tokio::time::sleep_until(deadline), if ended == Ended::Completed => {
                eprintln!("--max-time reached: releasing the link");
                ended = Ended::TimeUp;
                prober.stop(now());
            }
        }
    }
    if samples.len() >= prober_plan_len(args) {
        ended = Ended::Completed;
    }
    Ok((samples, ended))
}

/// A stopping signal as the messages name it: Ctrl-C for SIGINT.
fn spoken(stop: Stop) -> &'static str {
    match stop {
        Stop::Interrupt => "Ctrl-C",
        other => other.name(),
    }
}

/// Whether a frame the prober sends is its set-mode command (SABM, or
/// SABME).
fn is_set_mode(control: Control) -> bool {
    matches!(
        control,
        Control::U {
            kind: Unnumbered::Sabm | Unnumbered::Sabme,
            ..
        }
    )
}

fn prober_plan_len(args: &ProbeArgs) -> usize {
    probe::plan(args.n1, args.repeat, args.loss_windows).len()
}

async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(t) => tokio::time::sleep_until(t).await,
        None => std::future::pending().await,
    }
}

fn progress(s: &Sample, n: usize, total: usize) -> String {
    let e = s.exchange;
    let what = format!(
        "{} frame(s) of {} octets{}",
        e.frames,
        e.octets,
        if e.poll { "" } else { " without P" }
    );
    match s.round_trip {
        Some(rt) => format!("[{n}/{total}] {what}: {:.0} ms", rt.as_secs_f64() * 1e3),
        None if s.ack_lost => format!("[{n}/{total}] {what}: acknowledgement lost"),
        None => format!("[{n}/{total}] {what}: {} frame(s) lost", s.frames_lost),
    }
}

fn text(fit: &Fit, samples: usize) -> String {
    let mut out = format!(
        "TXDELAY {:.0} ms, TNC {:.0} ms per frame{}, bit errors {:.2e}{}\n",
        fit.txdelay_ms,
        fit.tnc_per_frame_ms,
        if fit.per_frame_resolved {
            ""
        } else {
            " (below the smallest frame's air time: shared with TXDELAY)"
        },
        fit.ber,
        fit.peer_ack_delay_ms.map_or(String::new(), |d| format!(
            ", peer acknowledges {d:.0} ms late without P"
        )),
    );
    out += &format!(
        "{samples} windows, {} I frames, {} lost, {} acknowledgements lost; fit RMS error {:.1}%\n\n",
        fit.frames_sent,
        fit.frames_lost,
        fit.acks_lost,
        100.0 * fit.rms_relative_error
    );
    let mut t = Table::new(["frames", "octets", "measured", "median_ms", "fitted_ms"]);
    for r in &fit.residuals {
        t.row(vec![
            r.exchange.frames.to_string(),
            r.exchange.octets.to_string(),
            r.measured.to_string(),
            format!("{:.1}", r.measured_ms),
            format!("{:.1}", r.fitted_ms),
        ]);
    }
    out += &format!("{t}\nWith --json, the link for `linklab advise --link FILE`.\n");
    out
}
