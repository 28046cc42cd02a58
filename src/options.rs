//! The options every command that runs AX.25 links over a KISS TNC
//! shares (`send`, `listen`, `connect`, `ip`, `dtn node`, `agw`)
//! and their checks: every value that cannot work is refused, naming its
//! option, before the TNC is touched.

use std::time::Duration;

use anyhow::Context;
use clap::{Args, ValueEnum};
use linklab_io::{
    driver, AckMode, AirSettings, DriverHandle, DriverOptions, KissAddress, KissParams, KissTime,
    LinkSettings, Station,
};
use linklab_link::{AckPolicy, Config};
use linklab_wire::ax25::{same_station, Address, MAX_DIGIPEATERS};
use linklab_wire::control::Modulus;
use linklab_wire::kiss::Port;

use crate::usage::usage;

/// Options shared by the three commands and `linklab ip`.
#[derive(Args)]
pub struct CommonArgs {
    /// The KISS TNC: tcp:HOST:PORT (e.g. tcp:127.0.0.1:8001, Dire Wolf),
    /// serial:DEVICE:BAUD (e.g. serial:/dev/ttyUSB0:9600), or an AXUDP
    /// port, axudp:BIND@[CALL=]IP:PORT[/b][,...][;broadcast=CALL,...]
    /// (e.g. axudp:10093@192.0.2.1:10093, AX.25 over UDP to ax25ipd or
    /// BPQ).
    #[arg(long, value_name = "ADDRESS")]
    pub(crate) kiss: KissAddress,
    /// This station's callsign and SSID, e.g. N0CALL-2.
    #[arg(long, value_name = "CALL")]
    pub(crate) mycall: Address,
    #[command(flatten)]
    pub(crate) link: LinkArgs,
    #[command(flatten)]
    pub(crate) tnc: TncArgs,
}

/// The longest T1 and T2 the options take, ms: ten minutes, longer than
/// any radio link's round trip (a T2 that long is a T2 that never fires,
/// as the benchmarks that acknowledge by window alone use).
const T1_T2_MAX_MS: u64 = 600_000;

/// The longest T3 the option takes, ms: a day.
const T3_MAX_MS: u64 = 86_400_000;

/// The AX.25 link parameters, the same in every command that sets up
/// links (`send`, `listen`, `connect`, `ip`, `dtn node`, `agw`). Each
/// needs `--kiss`: a command that also takes another way to the radio
/// checks that with [`LinkArgs::first_given`], naming the option.
#[derive(Args, Default)]
pub struct LinkArgs {
    /// Initial T1 (FRACK) in milliseconds, 1-600000; it then follows the
    /// measured round trip, T1 held while our frames wait in the TNC
    /// [default: 3000].
    #[arg(long, value_name = "MS")]
    pub(crate) t1_ms: Option<u64>,
    /// T2, the delayed-acknowledgement timer, in milliseconds, 1-600000 and
    /// at most T1 [default: 1000, or from --bitrate; shorter than a T1
    /// given, at most half of it].
    #[arg(long, value_name = "MS")]
    pub(crate) t2_ms: Option<u64>,
    /// T3, the inactive-link timer, in milliseconds (1-86400000): an idle
    /// link is polled after it, so a station with nothing to send notices
    /// a dead link after T3 and N2 tries of T1 [default: 300000].
    #[arg(long, value_name = "MS")]
    pub(crate) t3_ms: Option<u64>,
    /// N2, the most tries of a frame, 1-255 [default: 10].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(1..))]
    pub(crate) n2: Option<u8>,
    /// Window k, the most I frames sent and not yet acknowledged (1-7
    /// modulo 8, 1-127 modulo 128; with --srej at most 64) [default: 4
    /// modulo 8, 32 modulo 128].
    /// 4, not the spec's 7, at modulo 8: node and BBS software sends its
    /// greeting right after UA, and a sender that has already put 7 I
    /// frames on the air acknowledges none of that greeting in them; a
    /// widely used node counts each such frame as a repeat and drops the
    /// link after its retry count. Dire Wolf's MAXFRAME default is 4 too.
    #[arg(long, value_name = "K")]
    pub(crate) window: Option<u8>,
    /// N1, the largest information field in octets (1-2048) [default: 256].
    #[arg(long, value_name = "N")]
    pub(crate) n1: Option<usize>,
    /// Ask for lost frames with selective reject (SREJ) on modulo-128
    /// links instead of REJ; XID also offers multi-SREJ (several lost
    /// frames in one SREJ), used if the peer agrees.
    #[arg(long)]
    pub(crate) srej: bool,
    /// P on the last I frame of every burst (checkpointing; new frames
    /// wait for the answer), so the peer answers at once whatever its
    /// acknowledgement policy; `--poll-last=false` leaves P to T1 and T3
    /// as the spec's default does [default: true].
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true,
          default_missing_value = "true")]
    pub(crate) poll_last: Option<bool>,
    /// When to acknowledge received I frames that do not ask for an
    /// answer (P = 0) [default: window].
    #[arg(long, value_enum, value_name = "POLICY")]
    pub(crate) ack_policy: Option<AckArg>,
}

/// What is said to the KISS TNC and shown of its traffic, the same in
/// every command that uses one. Each needs `--kiss` (see
/// [`TncArgs::first_given`]).
#[derive(Args, Default)]
pub struct TncArgs {
    /// The TNC's KISS port (0-15) [default: 0].
    #[arg(long, value_name = "N",
          value_parser = clap::value_parser!(u8).range(0..=15))]
    pub(crate) kiss_port: Option<u8>,
    /// Send TXDELAY (keyup delay) to the TNC, in milliseconds (10 ms units).
    #[arg(long, value_name = "MS")]
    pub(crate) txdelay_ms: Option<u64>,
    /// Send the persistence P (0-255, p = (P+1)/256) to the TNC.
    #[arg(long, value_name = "P")]
    pub(crate) persist: Option<u8>,
    /// Send SLOTTIME to the TNC, in milliseconds (10 ms units).
    #[arg(long, value_name = "MS")]
    pub(crate) slot_ms: Option<u64>,
    /// Send TXTAIL to the TNC, in milliseconds (10 ms units).
    #[arg(long, value_name = "MS")]
    pub(crate) txtail_ms: Option<u64>,
    /// The radio's bit rate on the air: with the TXDELAY, P and SLOTTIME,
    /// when a frame handed to the TNC should have left the air, which is
    /// when T1 starts (unless the TNC answers ACKMODE) [default: 1200].
    #[arg(long, value_name = "BIT/S",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) bitrate: Option<u32>,
    /// KISS ACKMODE (G8BPQ, command 0x0C): the TNC tells when each frame
    /// has been sent, and T1 starts then. `auto` asks with the first frame
    /// and falls back to the estimate from --bitrate if the TNC does not
    /// answer; `on` or `off` to say [default: auto].
    #[arg(long, value_name = "MODE", value_parser = str::parse::<AckMode>)]
    pub(crate) ackmode: Option<AckMode>,
    /// Print every frame sent (TX) and received (RX) on standard error.
    #[arg(long)]
    pub(crate) monitor: bool,
}

/// `--ack-policy`: the receiver's acknowledgement policy.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum AckArg {
    /// At once when the window k is full or P is set; otherwise T2 after
    /// the last frame heard. Fast on a hub or a full-duplex link; on a
    /// half-duplex radio one RR per window, after the peer's transmission,
    /// as Dire Wolf does.
    Window,
    /// The AX.25 v2.2 rule (6.7.1.2): RR T2 after the first frame not yet
    /// acknowledged, so each window waits T2 unless the sender polls
    /// (--poll-last).
    T2,
    /// An RR for every I frame, at once.
    Immediate,
}

impl From<AckArg> for AckPolicy {
    fn from(arg: AckArg) -> AckPolicy {
        match arg {
            AckArg::Window => AckPolicy::WindowOrT2,
            AckArg::T2 => AckPolicy::AfterT2,
            AckArg::Immediate => AckPolicy::Immediately,
        }
    }
}

impl CommonArgs {
    /// The link configuration for `modulus`, with the KISS parameters
    /// checked too, so that every value that cannot work is refused,
    /// naming its option, before a file is read or the TNC is touched.
    pub(crate) fn config(&self, modulus: Modulus) -> anyhow::Result<Config> {
        self.tnc.params()?;
        self.link.config(modulus, self.tnc.bitrate)
    }

    /// Refuses, before the TNC is touched, a link to this station itself
    /// or a digipeater path that cannot work: more than 8 digipeaters
    /// (AX.25 v2.2 3.12.5), or one of them this station or `dest`.
    pub(crate) fn check_path(&self, dest: &Address, via: &[Address]) -> anyhow::Result<()> {
        if same_station(dest, &self.mycall) {
            return Err(usage(format!(
                "{dest} is this station's own callsign (--mycall): a station cannot connect to itself"
            )));
        }
        match via_error(&self.mycall, dest, via) {
            Some(why) => Err(usage(format!("--via: {why}"))),
            None => Ok(()),
        }
    }

    /// Connects to the TNC and starts the driver.
    pub(crate) async fn start(
        &self,
        config: Config,
        listening: bool,
    ) -> anyhow::Result<DriverHandle> {
        let grace = release_grace(&config);
        let params = self.tnc.params()?;
        let mut station = Station::new(self.mycall, config).context("invalid link parameters")?;
        station.set_listening(listening);
        // A station that calls out watches its own frames for the SABMs it
        // reports while connecting (`connecting`); --monitor shows them all.
        station.set_monitor(self.tnc.monitor || !listening);
        let stream = self.kiss.connect().await?;
        Ok(driver::spawn(
            stream,
            station,
            params,
            DriverOptions {
                shutdown_grace: grace,
                air: self.tnc.air()?,
            },
        ))
    }
}

impl LinkArgs {
    /// The link configuration: AX.25 v2.2 defaults, REJ unless --srej
    /// (SREJ, multi-SREJ if XID agrees), the acknowledgement policy and the
    /// modulo-8 window chosen for the command line, with the options given.
    /// A value that cannot work is a usage error naming its option.
    pub(crate) fn config(&self, modulus: Modulus, bit_rate: Option<u32>) -> anyhow::Result<Config> {
        let settings = LinkSettings {
            t1_ms: self.t1_ms,
            t2_ms: self.t2_ms,
            t3_ms: self.t3_ms,
            n2: self.n2,
            window: self.window,
            n1: self.n1,
            srej: self.srej,
            poll_last: self.poll_last.unwrap_or(true),
            ack_policy: self.ack_policy.unwrap_or(AckArg::Window).into(),
        };
        self.check_timers()?;
        if self.srej && modulus == Modulus::Mod8 {
            return Err(usage(
                "--srej: selective reject is for modulo-128 links (AX.25 v2.2 4.3.2.4, 6.4.4); \
                 add --mod128, or leave --srej out"
                    .into(),
            ));
        }
        let mut config = settings
            .config_at(modulus, bit_rate)
            .map_err(|e| usage(format!("--{}: {e}", LinkSettings::setting_of(&e))))?;
        if self.t2_ms.is_some() && config.t2 > config.t1 {
            return Err(usage(format!(
                "--t2-ms: T2 ({} ms) must not be longer than T1 ({} ms): the peer would give up \
                 waiting (T1) before our delayed acknowledgement (T2) went",
                config.t2.as_millis(),
                config.t1.as_millis()
            )));
        }
        if self.t2_ms.is_none() && config.t2 >= config.t1 {
            // A short --t1-ms alone: the default T2 gives way to it.
            config.t2 = config.t1 / 2;
        }
        Ok(config)
    }

    /// Refuses a timer outside its range, naming its option: T1 and T2
    /// at most ten minutes, T3 at most a day.
    fn check_timers(&self) -> anyhow::Result<()> {
        for (value, option, max) in [
            (self.t1_ms, "--t1-ms", T1_T2_MAX_MS),
            (self.t2_ms, "--t2-ms", T1_T2_MAX_MS),
            (self.t3_ms, "--t3-ms", T3_MAX_MS),
        ] {
            // Zero is refused by the link's own check (`Config::validate`).
            if let Some(ms) = value.filter(|&ms| ms > max) {
                return Err(usage(format!(
                    "{option}: {ms} ms is out of range: 1-{max} ms allowed"
                )));
            }
        }
        Ok(())
    }
}

impl LinkArgs {
    /// The first of these options given on the command line, by name, or
    /// `None`: for commands where they need `--kiss`.
    pub(crate) fn first_given(&self) -> Option<&'static str> {
        [
            (self.t1_ms.is_some(), "--t1-ms"),
            (self.t2_ms.is_some(), "--t2-ms"),
            (self.t3_ms.is_some(), "--t3-ms"),
            (self.n2.is_some(), "--n2"),
            (self.window.is_some(), "--window"),
            (self.n1.is_some(), "--n1"),
            (self.srej, "--srej"),
            (self.poll_last.is_some(), "--poll-last"),
            (self.ack_policy.is_some(), "--ack-policy"),
        ]
        .into_iter()
        .find_map(|(given, name)| given.then_some(name))
    }
}

impl TncArgs {
    /// The first TNC setting given on the command line (not counting
    /// --monitor), by name, or `None`.
    pub(crate) fn first_given(&self) -> Option<&'static str> {
        [
            (self.kiss_port.is_some(), "--kiss-port"),
            (self.txdelay_ms.is_some(), "--txdelay-ms"),
            (self.persist.is_some(), "--persist"),
            (self.slot_ms.is_some(), "--slot-ms"),
            (self.txtail_ms.is_some(), "--txtail-ms"),
            (self.bitrate.is_some(), "--bitrate"),
            (self.ackmode.is_some(), "--ackmode"),
        ]
        .into_iter()
        .find_map(|(given, name)| given.then_some(name))
    }

    /// The KISS port and the parameters to send to the TNC; a time KISS
    /// cannot carry (over 2550 ms) is a usage error naming its option.
    pub(crate) fn params(&self) -> anyhow::Result<KissParams> {
        let params = KissParams {
            port: Port::new(self.kiss_port.unwrap_or(0)).unwrap_or_default(),
            txdelay: self.txdelay_ms.map(Duration::from_millis),
            persistence: self.persist,
            slot_time: self.slot_ms.map(Duration::from_millis),
            txtail: self.txtail_ms.map(Duration::from_millis),
        };
        params
            .validate()
            .map_err(|e| usage(format!("{}: {e}", kiss_option_of(e.param))))?;
        Ok(params)
    }
}

impl TncArgs {
    /// ACKMODE as asked for (`auto` unless given).
    pub(crate) fn ackmode(&self) -> AckMode {
        self.ackmode.unwrap_or_default()
    }

    /// What the transmit clock knows of the port: ACKMODE, the bit rate
    /// and the KISS timings sent to the TNC.
    pub(crate) fn air(&self) -> anyhow::Result<AirSettings> {
        Ok(AirSettings::for_port(
            self.ackmode(),
            self.bitrate,
            &self.params()?,
        ))
    }
}

/// The option that sets a KISS timing parameter.
pub(crate) fn kiss_option_of(param: KissTime) -> &'static str {
    match param {
        KissTime::TxDelay => "--txdelay-ms",
        KissTime::SlotTime => "--slot-ms",
        KissTime::TxTail => "--txtail-ms",
    }
}

/// Why `via` cannot be the digipeater path from `mycall` to `dest`, or
/// `None` if it can: more than 8 digipeaters (AX.25 v2.2 3.12.5), or one
/// of them this station or `dest`. Shared by the link commands and
/// `linklab dtn node`, whose `--via` options follow the same rules.
pub(crate) fn via_error(mycall: &Address, dest: &Address, via: &[Address]) -> Option<String> {
    if via.len() > MAX_DIGIPEATERS {
        return Some(format!(
            "{} digipeaters given; AX.25 allows at most {MAX_DIGIPEATERS} (3.12.5)",
            via.len()
        ));
    }
    via.iter().find_map(|digi| {
        if same_station(digi, mycall) {
            Some(format!("{digi} is this station itself (--mycall)"))
        } else if same_station(digi, dest) {
            Some(format!("{digi} is the destination, not a digipeater"))
        } else {
            None
        }
    })
}

/// How long a shutdown waits for the peers to answer DISC: N2 + 1 tries
/// of T1, at most 15 s.
pub(crate) fn release_grace(config: &Config) -> Duration {
    (config.t1 * (u32::from(config.n2) + 1)).min(Duration::from_secs(15))
}
