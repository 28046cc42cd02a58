//! `linklab listen`, `linklab send` and `linklab connect`: AX.25 connected
//! mode over a real KISS TNC (TCP or serial), in real time, driven by
//! [`linklab_io`].

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{anyhow, Context};
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use linklab_io::{
    driver, AckMode, AirSettings, Direction, DriverHandle, DriverOptions, KissAddress, KissParams,
    KissTime, LinkSettings, Notice, Request, Station, StationEvent,
};
use linklab_link::{AckPolicy, Config, DisconnectReason, Event, FailureReason, LinkError, Version};
use linklab_wire::ax25::{same_station, Address, MAX_DIGIPEATERS};
use linklab_wire::control::Modulus;
use linklab_wire::kiss::Port;
use linklab_wire::monitor;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

use crate::send_feed::Feed;
use crate::usage::usage;

/// Information octets shown per monitored frame.
const MONITOR_OPTIONS: monitor::MonitorOptions = monitor::MonitorOptions { max_info: Some(32) };

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

/// The AX.25 link parameters, the same in every command that sets up
/// links (`send`, `listen`, `connect`, `ip`, `dtn node`, `agw`). Each
/// needs `--kiss`: a command that also takes another way to the radio
/// checks that with [`LinkArgs::first_given`], naming the option.
#[derive(Args, Default)]
pub struct LinkArgs {
    /// Initial T1 (FRACK) in milliseconds; it then follows the measured
    /// round trip [default: 15000: a host stack's T1 runs while its
    /// frames wait in the TNC, a whole window at 1200 bit/s].
    #[arg(long, value_name = "MS")]
    t1_ms: Option<u64>,
    /// T2, the delayed-acknowledgement timer, in milliseconds [default: 1000].
    #[arg(long, value_name = "MS")]
    t2_ms: Option<u64>,
    /// T3, the inactive-link timer, in milliseconds: an idle link is
    /// polled after it, so a station with nothing to send notices a dead
    /// link after T3 and N2 tries of T1 [default: 300000].
    #[arg(long, value_name = "MS")]
    t3_ms: Option<u64>,
    /// N2, the most tries of a frame, 1-255 [default: 10].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(1..))]
    n2: Option<u8>,
    /// Window k, the most I frames sent and not yet acknowledged (1-7
    /// modulo 8, 1-127 modulo 128; with --srej at most 64) [default: 4
    /// modulo 8, 32 modulo 128].
    /// 4, not the spec's 7, at modulo 8: node and BBS software sends its
    /// greeting right after UA, and a sender that has already put 7 I
    /// frames on the air acknowledges none of that greeting in them; a
    /// widely used node counts each such frame as a repeat and drops the
    /// link after its retry count. Dire Wolf's MAXFRAME default is 4 too.
    #[arg(long, value_name = "K")]
    window: Option<u8>,
    /// N1, the largest information field in octets (1-2048) [default: 256].
    #[arg(long, value_name = "N")]
    pub(crate) n1: Option<usize>,
    /// Ask for lost frames with selective reject (SREJ) on modulo-128
    /// links instead of REJ; XID also offers multi-SREJ (several lost
    /// frames in one SREJ), used if the peer agrees.
    #[arg(long)]
    srej: bool,
    /// P on the last I frame of every burst (checkpointing; new frames
    /// wait for the answer), so the peer answers at once whatever its
    /// acknowledgement policy; `--poll-last=false` leaves P to T1 and T3
    /// as the spec's default does [default: true].
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true,
          default_missing_value = "true")]
    poll_last: Option<bool>,
    /// When to acknowledge received I frames that do not ask for an
    /// answer (P = 0) [default: window].
    #[arg(long, value_enum, value_name = "POLICY")]
    ack_policy: Option<AckArg>,
}

/// What is said to the KISS TNC and shown of its traffic, the same in
/// every command that uses one. Each needs `--kiss` (see
/// [`TncArgs::first_given`]).
#[derive(Args, Default)]
pub struct TncArgs {
    /// The TNC's KISS port (0-15) [default: 0].
    #[arg(long, value_name = "N",
          value_parser = clap::value_parser!(u8).range(0..=15))]
    kiss_port: Option<u8>,
    /// Send TXDELAY (keyup delay) to the TNC, in milliseconds (10 ms units).
    #[arg(long, value_name = "MS")]
    txdelay_ms: Option<u64>,
    /// Send the persistence P (0-255, p = (P+1)/256) to the TNC.
    #[arg(long, value_name = "P")]
    persist: Option<u8>,
    /// Send SLOTTIME to the TNC, in milliseconds (10 ms units).
    #[arg(long, value_name = "MS")]
    slot_ms: Option<u64>,
    /// Send TXTAIL to the TNC, in milliseconds (10 ms units).
    #[arg(long, value_name = "MS")]
    txtail_ms: Option<u64>,
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
    ackmode: Option<AckMode>,
    /// Print every frame sent (TX) and received (RX) on standard error.
    #[arg(long)]
    pub(crate) monitor: bool,
}

/// `--ack-policy`: the receiver's acknowledgement policy.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum AckArg {
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

/// The TNC or the AGWPE server a link command works through: exactly
/// one of `--kiss` and `--station`.
#[derive(Args)]
#[group(required = true, multiple = false)]
pub struct Endpoint {
    /// The KISS TNC: tcp:HOST:PORT (e.g. tcp:127.0.0.1:8001, Dire Wolf) or
    /// serial:DEVICE:BAUD (e.g. serial:/dev/ttyUSB0:9600).
    #[arg(long, value_name = "ADDRESS")]
    kiss: Option<KissAddress>,
    /// Or an AGWPE server owning the radio ports (`linklab station`,
    /// `linklab agw`, Dire Wolf, AGWPE): HOST:PORT, e.g. 127.0.0.1:8000.
    /// Its port's settings then hold: the link and TNC options are
    /// refused.
    #[arg(long, value_name = "ADDR:PORT")]
    station: Option<String>,
}

/// The options of `listen`, `send` and `connect` before it is known
/// whether they go through a TNC or an AGWPE server.
#[derive(Args)]
pub struct LinkCommon {
    #[command(flatten)]
    endpoint: Endpoint,
    /// This station's callsign and SSID, e.g. N0CALL-2.
    #[arg(long, value_name = "CALL")]
    mycall: Address,
    /// With --station: the server's radio port, counted from 1 as AGWPE
    /// programs show them [default: 1].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=255))]
    port: Option<u16>,
    #[command(flatten)]
    link: LinkArgs,
    #[command(flatten)]
    tnc: TncArgs,
}

/// Where a link command goes: its own TNC, or an AGWPE server.
pub(crate) enum Through {
    Kiss(Box<CommonArgs>),
    Station(crate::agw_client::StationArgs),
}

impl LinkCommon {
    /// The TNC's options, or the AGWPE server's; an option the chosen
    /// way cannot honour is a usage error naming it. `mod128` is the
    /// command's --mod128.
    pub(crate) fn through(self, mod128: bool) -> anyhow::Result<Through> {
        match (self.endpoint.kiss, self.endpoint.station) {
            (Some(kiss), _) => {
                if self.port.is_some() {
                    return Err(usage(
                        "--port is the AGWPE radio port of --station; with --kiss, \
                         the TNC's port is --kiss-port"
                            .into(),
                    ));
                }
                Ok(Through::Kiss(Box::new(CommonArgs {
                    kiss,
                    mycall: self.mycall,
                    link: self.link,
                    tnc: self.tnc,
                })))
            }
            (None, Some(address)) => {
                let given = self
                    .link
                    .first_given()
                    .or(self.tnc.first_given())
                    .or(mod128.then_some("--mod128"));
                if let Some(option) = given {
                    return Err(usage(format!(
                        "{option} cannot be used with --station: the AGWPE server's radio port \
                         owns the link and TNC settings (set them where the server is configured)"
                    )));
                }
                if self.tnc.monitor {
                    return Err(usage(
                        "--monitor cannot be used with --station: run `linklab monitor --station` \
                         beside it to see the frames"
                            .into(),
                    ));
                }
                Ok(Through::Station(crate::agw_client::StationArgs {
                    address,
                    port: u8::try_from(self.port.unwrap_or(1) - 1).unwrap_or(0),
                    mycall: self.mycall,
                }))
            }
            // The group requires one of the two.
            (None, None) => Err(usage("give --kiss or --station".into())),
        }
    }
}

#[derive(Args)]
pub struct ListenArgs {
    #[command(flatten)]
    common: LinkCommon,
    /// Write what each connection carries to a file of its own: FILE for
    /// the first, FILE.2, FILE.3, ... for the next; in an existing
    /// directory DIR, DIR/transfer-N-CALL. A file gets its name once its
    /// link is released by the peer with DISC; until then, and for good
    /// if the link is cut, it is NAME.partial. Without --out, data goes
    /// to standard output.
    #[arg(long, value_name = "FILE|DIR")]
    out: Option<PathBuf>,
    /// Exit after the first connection is released.
    #[arg(long)]
    once: bool,
}

#[derive(Args)]
pub struct SendArgs {
    #[command(flatten)]
    common: LinkCommon,
    /// The station to send to.
    #[arg(long, value_name = "CALL")]
    to: Address,
    /// Digipeaters to go through, in order (comma separated).
    #[arg(long, value_name = "DIGI,...", value_delimiter = ',')]
    via: Vec<Address>,
    /// Connect with SABME (AX.25 v2.2, modulo 128) instead of SABM.
    #[arg(long)]
    mod128: bool,
    /// The file to send (`-` for standard input).
    file: PathBuf,
}

#[derive(Args)]
pub struct ConnectArgs {
    #[command(flatten)]
    common: LinkCommon,
    /// Digipeaters to go through, in order (comma separated).
    #[arg(long, value_name = "DIGI,...", value_delimiter = ',')]
    via: Vec<Address>,
    /// Connect with SABME (AX.25 v2.2, modulo 128) instead of SABM.
    #[arg(long)]
    mod128: bool,
    /// The station to connect to.
    dest: Address,
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
    fn check_path(&self, dest: &Address, via: &[Address]) -> anyhow::Result<()> {
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
    async fn start(&self, config: Config, listening: bool) -> anyhow::Result<DriverHandle> {
        let grace = release_grace(&config);
        let params = self.tnc.params()?;
        let mut station = Station::new(self.mycall, config).context("invalid link parameters")?;
        station.set_listening(listening);
        station.set_monitor(self.tnc.monitor);
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
        settings
            .config_at(modulus, bit_rate)
            .map_err(|e| usage(format!("--{}: {e}", LinkSettings::setting_of(&e))))
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
fn kiss_option_of(param: KissTime) -> &'static str {
    match param {
        KissTime::TxDelay => "--txdelay-ms",
        KissTime::SlotTime => "--slot-ms",
        KissTime::TxTail => "--txtail-ms",
    }
}

/// Same callsign and SSID.
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
fn release_grace(config: &Config) -> Duration {
    (config.t1 * (u32::from(config.n2) + 1)).min(Duration::from_secs(15))
}

/// Exit status of a command ended by SIGINT (128 + 2), as shells report.
pub(crate) const INTERRUPTED: i32 = 130;

/// Ends the process at once after a second Ctrl-C.
fn quit_now() -> ! {
    eprintln!("linklab: interrupted again; quitting at once");
    std::process::exit(INTERRUPTED)
}

/// Runs `future` on a single-threaded runtime. The runtime is dropped
/// without waiting for a blocked standard-input read.
pub(crate) fn block_on<T, F: std::future::Future<Output = anyhow::Result<T>>>(
    future: F,
) -> anyhow::Result<T> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the tokio runtime")?;
    let result = runtime.block_on(future);
    runtime.shutdown_background();
    result
}

/// Standard-error output that stays clear of the progress bar.
pub(crate) struct Log {
    pub(crate) monitor: bool,
    pub(crate) bar: Option<ProgressBar>,
}

impl Log {
    pub(crate) fn line(&self, text: &str) {
        match &self.bar {
            Some(bar) => bar.suspend(|| eprintln!("{text}")),
            None => eprintln!("{text}"),
        }
    }

    /// Logs what every command shows the same way; returns the link event
    /// (with its remote) for the command to act on.
    fn notice(&self, at: Duration, notice: Notice) -> anyhow::Result<Option<(Address, Event)>> {
        match notice {
            Notice::Rejected(error) => Err(anyhow!(error)),
            Notice::Station(StationEvent::Monitor {
                direction,
                bytes,
                modulus,
            }) => {
                if self.monitor {
                    let dir = match direction {
                        Direction::Tx => "TX",
                        Direction::Rx => "RX",
                    };
                    let line = monitor::format_raw_with(&bytes, modulus, MONITOR_OPTIONS);
                    self.line(&format!("{dir} {:>9.3} {line}", at.as_secs_f64()));
                }
                Ok(None)
            }
            Notice::Station(StationEvent::BadInput(error)) => {
                self.line(&format!("linklab: bad input ignored: {error}"));
                Ok(None)
            }
            Notice::Station(StationEvent::BadInputCount(count)) => {
                self.line(&format!("linklab: {count}"));
                Ok(None)
            }
            Notice::Station(StationEvent::LateFinals { remote, count }) => {
                self.line(&format!(
                    "linklab: {count} more late answers (F=1 with no poll outstanding, \
                     protocol error A) on the link with {remote}"
                ));
                Ok(None)
            }
            Notice::Station(StationEvent::Outstanding { .. } | StationEvent::Unsent { .. }) => {
                Ok(None)
            }
            Notice::Station(StationEvent::Link { remote, event }) => {
                match &event {
                    Event::Connected { version, incoming } => {
                        let (dir, modulo) = (
                            if *incoming { "from" } else { "to" },
                            match version {
                                Version::V2_0 => "AX.25 v2.0, modulo 8",
                                Version::V2_2 => "AX.25 v2.2, modulo 128",
                            },
                        );
                        self.line(&format!("linklab: connected {dir} {remote} ({modulo})"));
                    }
                    Event::Disconnected { reason } => self.line(&format!(
                        "linklab: disconnected from {remote}: {}",
                        disconnect_reason(*reason)
                    )),
                    Event::LinkFailure { reason } => self.line(&format!(
                        "linklab: link with {remote} failed: {}",
                        failure_reason(*reason)
                    )),
                    Event::Error(error) => {
                        // The station passes on a link's first error A
                        // only, and counts the rest.
                        let more = if *error == LinkError::UnexpectedFinal {
                            " (any more are counted, and the count shown when the link ends)"
                        } else {
                            ""
                        };
                        self.line(&format!(
                            "linklab: protocol error on link with {remote}: {error}{more}"
                        ))
                    }
                    Event::Negotiated { outcome, params } => self.line(&format!(
                        "linklab: parameters with {remote} ({outcome:?}): N1 {} out/{} in, \
                         k {} out, {:?}, T1 {} ms, N2 {}",
                        params.n1_tx,
                        params.n1_rx,
                        params.k_tx,
                        params.recovery,
                        params.t1.as_millis(),
                        params.n2
                    )),
                    Event::Data { .. } | Event::UnitData { .. } => {}
                }
                Ok(Some((remote, event)))
            }
        }
    }
}

fn disconnect_reason(reason: DisconnectReason) -> &'static str {
    match reason {
        DisconnectReason::LocalRequest => "released at our request",
        DisconnectReason::ReleaseTimeout => "no answer to our DISC; released anyway",
        DisconnectReason::RemoteRequest => "released by the peer (DISC)",
        DisconnectReason::RemoteDm => "the peer sent DM",
        DisconnectReason::Refused => "connection refused (DM)",
        DisconnectReason::Abandoned => "connection attempt abandoned",
    }
}

fn failure_reason(reason: FailureReason) -> &'static str {
    match reason {
        FailureReason::ConnectTimeout => "no answer to N2 connection requests",
        FailureReason::UnacknowledgedData => "data unacknowledged after N2 tries",
        FailureReason::NoResponseToEnquiry => "no answer to N2 polls",
        FailureReason::PeerBusy => "the peer stayed busy for N2 polls",
    }
}

/// Asks the driver to release every link and stop, logs what comes until
/// it has (handing each link event to `on_event`), and returns its error
/// if it failed. With links still up it says that it waits for their
/// release, and for how long; a Ctrl-C meanwhile quits at once.
async fn finish(
    handle: &mut DriverHandle,
    log: &Log,
    linked: &[Address],
    grace: Duration,
    mut on_event: impl FnMut(Address, Event),
) -> anyhow::Result<()> {
    handle.requests.send(Request::Shutdown).ok();
    if !linked.is_empty() {
        let names: Vec<String> = linked.iter().map(ToString::to_string).collect();
        log.line(&format!(
            "linklab: releasing the link with {} (DISC): waiting up to {:.0} s for an answer; \
             Ctrl-C again to quit at once",
            names.join(", "),
            grace.as_secs_f64().ceil()
        ));
    }
    loop {
        tokio::select! {
            notice = handle.notices.recv() => match notice {
                // Errors of late requests no longer matter.
                Some((at, notice)) => {
                    if let Ok(Some((remote, event))) = log.notice(at, notice) {
                        on_event(remote, event);
                    }
                }
                None => break,
            },
            _ = tokio::signal::ctrl_c() => quit_now(),
        }
    }
    driver_end(handle).await
}

/// The driver's result once its notice channel has closed.
async fn driver_end(handle: &mut DriverHandle) -> anyhow::Result<()> {
    match (&mut handle.task).await {
        Ok(result) => result.map_err(Into::into),
        Err(e) => Err(anyhow!("the KISS driver stopped: {e}")),
    }
}

/// Where `listen` writes what each connection carries.
enum Sink {
    Stdout,
    /// `FILE`, then `FILE.2`, `FILE.3`, ...
    File(PathBuf),
    /// `DIR/transfer-N-CALL`.
    Dir(PathBuf),
}

/// What one incoming connection has carried so far.
struct Incoming {
    remote: Address,
    /// The final name and the name while incomplete (none on standard
    /// output), and the file open under the latter.
    file: Option<(PathBuf, PathBuf, std::fs::File)>,
    octets: u64,
}

/// `listen`'s transfers: one per connection, each written under
/// `NAME.partial` until its link is released by the peer with DISC, then
/// renamed to `NAME`; a link that ends any other way leaves
/// `NAME.partial`, logged as cut.
pub(crate) struct Receiver {
    sink: Sink,
    /// Connections accepted so far.
    count: usize,
    open: Vec<Incoming>,
    /// Transfers cut so far.
    pub(crate) cut: usize,
}

impl Receiver {
    pub(crate) fn new(out: Option<PathBuf>) -> Receiver {
        let sink = match out {
            None => Sink::Stdout,
            Some(path) if path.is_dir() => Sink::Dir(path),
            Some(path) => Sink::File(path),
        };
        Receiver {
            sink,
            count: 0,
            open: Vec::new(),
            cut: 0,
        }
    }

    /// The final name of the `n`th connection's file, from `remote`.
    fn name(&self, n: usize, remote: &Address) -> Option<PathBuf> {
        match &self.sink {
            Sink::Stdout => None,
            Sink::File(path) if n == 1 => Some(path.clone()),
            Sink::File(path) => {
                let mut name = path.clone().into_os_string();
                name.push(format!(".{n}"));
                Some(name.into())
            }
            Sink::Dir(dir) => Some(dir.join(format!("transfer-{n}-{remote}"))),
        }
    }

    /// Acts on a link event; true if it ended a transfer.
    pub(crate) fn on_event(
        &mut self,
        log: &Log,
        remote: Address,
        event: Event,
    ) -> anyhow::Result<bool> {
        match event {
            Event::Connected { .. } => {
                // A SABM on a link already up resets it (6.3.4): what was
                // on the way may be lost.
                self.end(log, &remote, Some("the link was reset (SABM)"))?;
                self.start(remote)?;
                Ok(false)
            }
            Event::Data { data, .. } => {
                self.write(&remote, &data)?;
                Ok(false)
            }
            Event::Disconnected {
                reason: DisconnectReason::RemoteRequest,
            } => self.end(log, &remote, None),
            Event::Disconnected { reason } => {
                self.end(log, &remote, Some(disconnect_reason(reason)))
            }
            Event::LinkFailure { reason } => self.end(log, &remote, Some(failure_reason(reason))),
            _ => Ok(false),
        }
    }

    fn start(&mut self, remote: Address) -> anyhow::Result<()> {
        self.count += 1;
        let file = match self.name(self.count, &remote) {
            Some(name) => {
                let mut partial = name.clone().into_os_string();
                partial.push(".partial");
                let partial = PathBuf::from(partial);
                let file = std::fs::File::create(&partial)
                    .with_context(|| format!("cannot create {}", partial.display()))?;
                Some((name, partial, file))
            }
            None => None,
        };
        self.open.push(Incoming {
            remote,
            file,
            octets: 0,
        });
        Ok(())
    }

    fn write(&mut self, remote: &Address, data: &[u8]) -> anyhow::Result<()> {
        use std::io::Write;
        if !self.open.iter().any(|t| same_station(&t.remote, remote)) {
            self.start(*remote)?;
        }
        let Some(transfer) = self
            .open
            .iter_mut()
            .find(|t| same_station(&t.remote, remote))
        else {
            return Ok(());
        };
        transfer.octets += data.len() as u64;
        match &mut transfer.file {
            Some((_, partial, file)) => file
                .write_all(data)
                .with_context(|| format!("cannot write {}", partial.display())),
            None => {
                let mut stdout = std::io::stdout().lock();
                stdout
                    .write_all(data)
                    .and_then(|()| stdout.flush())
                    .context("cannot write received data")
            }
        }
    }

    /// Ends the transfer from `remote`, if one is open: complete (`cut`
    /// none) renames its file to the final name; cut keeps `NAME.partial`.
    /// Either way the octets received and how the link ended are logged.
    pub(crate) fn end(
        &mut self,
        log: &Log,
        remote: &Address,
        cut: Option<&str>,
    ) -> anyhow::Result<bool> {
        let Some(i) = self
            .open
            .iter()
            .position(|t| same_station(&t.remote, remote))
        else {
            return Ok(false);
        };
        let transfer = self.open.remove(i);
        let n = transfer.octets;
        let place = match &transfer.file {
            Some((name, partial, file)) => {
                file.sync_all()
                    .with_context(|| format!("cannot write {}", partial.display()))?;
                if cut.is_none() {
                    std::fs::rename(partial, name).with_context(|| {
                        format!("cannot rename {} to {}", partial.display(), name.display())
                    })?;
                    name.display().to_string()
                } else {
                    partial.display().to_string()
                }
            }
            None => "standard output".to_string(),
        };
        match cut {
            None => log.line(&format!(
                "linklab: received {n} octets from {remote}, released by the peer (DISC) -> {place}"
            )),
            Some(why) => {
                self.cut += 1;
                log.line(&format!(
                    "linklab: the link with {remote} was cut after {n} octets ({why}); \
                     incomplete data in {place}"
                ));
            }
        }
        Ok(true)
    }

    /// Ends every open transfer as cut, for `why`.
    pub(crate) fn end_all(&mut self, log: &Log, why: &str) -> anyhow::Result<()> {
        while let Some(remote) = self.open.first().map(|t| t.remote) {
            self.end(log, &remote, Some(why))?;
        }
        Ok(())
    }

    pub(crate) fn remotes(&self) -> Vec<Address> {
        self.open.iter().map(|t| t.remote).collect()
    }
}

pub fn listen(mut args: ListenArgs) -> anyhow::Result<()> {
    match take_common(&mut args.common).through(false)? {
        Through::Kiss(common) => block_on(listen_async(*common, args)),
        Through::Station(station) => crate::agw_client::listen(station, args.out, args.once),
    }
}

/// The options, leaving defaults behind (the caller's struct is then
/// used for its other fields only).
fn take_common(common: &mut LinkCommon) -> LinkCommon {
    LinkCommon {
        endpoint: Endpoint {
            kiss: common.endpoint.kiss.take(),
            station: common.endpoint.station.take(),
        },
        mycall: common.mycall,
        port: common.port,
        link: std::mem::take(&mut common.link),
        tnc: std::mem::take(&mut common.tnc),
    }
}

async fn listen_async(common: CommonArgs, args: ListenArgs) -> anyhow::Result<()> {
    let config = common.config(Modulus::Mod128)?;
    let grace = release_grace(&config);
    let mut receiver = Receiver::new(args.out.clone());
    let mut handle = common.start(config, true).await?;
    let log = Log {
        monitor: common.tnc.monitor,
        bar: None,
    };
    log.line(&format!(
        "linklab: {} listening on {}",
        common.mycall, common.kiss
    ));
    let interrupted = loop {
        let (at, notice) = tokio::select! {
            notice = handle.notices.recv() => match notice {
                Some(n) => n,
                None => {
                    receiver.end_all(&log, "the KISS TNC connection ended")?;
                    return driver_end(&mut handle).await;
                }
            },
            _ = tokio::signal::ctrl_c() => break true,
        };
        let (remote, event) = match log.notice(at, notice) {
            Ok(Some(event)) => event,
            Ok(None) => continue,
            Err(e) => {
                log.line(&format!("linklab: {e:#}"));
                continue;
            }
        };
        if receiver.on_event(&log, remote, event)? && args.once {
            break false;
        }
    };
    if interrupted {
        log.line("linklab: interrupted; releasing links");
    }
    let mut failed = None;
    let stopped = finish(
        &mut handle,
        &log,
        &receiver.remotes(),
        grace,
        |remote, event| {
            if let Err(e) = receiver.on_event(&log, remote, event) {
                failed.get_or_insert(e);
            }
        },
    )
    .await;
    if let Some(e) = failed {
        return Err(e);
    }
    receiver.end_all(&log, "linklab stopped")?;
    stopped?;
    match receiver.cut {
        0 => Ok(()),
        1 => Err(anyhow!("a transfer was cut; its data is incomplete")),
        n => Err(anyhow!("{n} transfers were cut; their data is incomplete")),
    }
}

pub fn send(mut args: SendArgs) -> anyhow::Result<()> {
    match take_common(&mut args.common).through(args.mod128)? {
        Through::Kiss(common) => block_on(send_async(*common, args)),
        Through::Station(station) => crate::agw_client::send(station, args.to, args.via, args.file),
    }
}

async fn send_async(common: CommonArgs, args: SendArgs) -> anyhow::Result<()> {
    let modulus = crate::modulus(args.mod128);
    let config = common.config(modulus)?;
    common.check_path(&args.to, &args.via)?;
    let remote = args.to;
    let mut feed = Feed::new(crate::input::ReadAhead::open(&args.file)?, remote);
    let grace = release_grace(&config);
    // Data are given once the link's N1 for sending is known: at once on a
    // v2.0 link, after the XID exchange on a v2.2 one (6.3.2), since the
    // peer may accept shorter I frames than ours.
    let xid = config.xid;
    let (n1, windows) = (config.n1, (config.window_mod8, config.window_mod128));
    let started = std::time::Instant::now();
    let mut handle = common.start(config, false).await?;
    let bar = ProgressBar::with_draw_target(feed.len(), ProgressDrawTarget::hidden());
    let template = match feed.len() {
        Some(_) => "{bar:40} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
        None => "{spinner} {bytes} {bytes_per_sec}",
    };
    bar.set_style(
        ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut log = Log {
        monitor: common.tnc.monitor,
        bar: None,
    };
    handle
        .requests
        .send(Request::Connect {
            remote,
            via: args.via.clone(),
        })
        .ok();
    // Connected at, octets acknowledged, all acknowledged at.
    let mut connected_at: Option<std::time::Instant> = None;
    let mut acked = 0;
    let mut acked_at: Option<std::time::Instant> = None;
    let mut interrupted = false;
    let outcome: anyhow::Result<()> = loop {
        let (at, notice) = tokio::select! {
            notice = handle.notices.recv() => match notice {
                Some(n) => n,
                None => {
                    driver_end(&mut handle).await?;
                    break Err(anyhow!("the KISS driver stopped"));
                }
            },
            block = feed.next_block(), if feed.needs_input() => {
                if let Err(e) = feed.on_block(&handle, block) {
                    break Err(e);
                }
                if feed.released() && feed.given() == 0 {
                    // An empty input: nothing to acknowledge.
                    acked_at = connected_at;
                }
                continue;
            },
            _ = tokio::signal::ctrl_c() => {
                interrupted = true;
                break Ok(());
            }
        };
        match &notice {
            Notice::Station(StationEvent::Outstanding {
                frames, accepted, ..
            }) if feed.started() => {
                acked = feed.acknowledged(*frames, *accepted);
                bar.set_position(acked);
                if log.bar.is_none() && started.elapsed() > Duration::from_secs(1) {
                    bar.set_draw_target(ProgressDrawTarget::stderr());
                    log.bar = Some(bar.clone());
                }
                if feed.all_acknowledged(*frames, *accepted) {
                    acked_at = Some(std::time::Instant::now());
                }
            }
            Notice::Station(StationEvent::Unsent { remote: to, octets }) if *to == remote => {
                feed.on_unsent(&handle, *octets);
            }
            _ => {}
        }
        let event = match log.notice(at, notice) {
            Ok(Some((from, event))) if from == remote => event,
            Ok(_) => continue,
            Err(e) => break Err(e),
        };
        match event {
            Event::Connected { .. } if connected_at.is_some() => {
                break Err(anyhow!(
                    "the link with {remote} was reset; data may have been lost"
                ));
            }
            Event::Connected { version, .. } => {
                connected_at = Some(std::time::Instant::now());
                if version == Version::V2_0 || !xid {
                    let k = match version {
                        Version::V2_0 => windows.0,
                        Version::V2_2 => windows.1,
                    };
                    feed.start(&handle, n1, k);
                }
            }
            Event::Negotiated { params, .. } if !feed.started() => {
                feed.start(&handle, params.n1_tx, params.k_tx);
            }
            Event::Disconnected {
                reason: DisconnectReason::LocalRequest | DisconnectReason::ReleaseTimeout,
            } => break Ok(()),
            Event::Disconnected {
                reason: DisconnectReason::Refused,
            } => break Err(anyhow!("{remote} refused the connection (DM)")),
            Event::Disconnected { reason } => {
                break Err(anyhow!(
                    "the link with {remote} was released before all data was acknowledged: {}",
                    disconnect_reason(reason)
                ))
            }
            Event::LinkFailure { reason } => {
                break Err(anyhow!(
                    "the link with {remote} failed: {}",
                    failure_reason(reason)
                ))
            }
            _ => {}
        }
    };
    bar.finish_and_clear();
    log.bar = None;
    if interrupted {
        // DM, not DISC: the peer must not take a cut transfer for a
        // finished one (see `Station::abort`).
        handle.requests.send(Request::Abort { remote }).ok();
        let of = match feed.len() {
            Some(len) => format!("{len} octets"),
            None => format!("the {} octets given to the link so far", feed.given()),
        };
        log.line(&format!(
            "linklab: interrupted: {remote} acknowledged {acked} of {of}; link ended with DM"
        ));
        finish(&mut handle, &log, &[], grace, |_, _| {}).await?;
        std::process::exit(INTERRUPTED);
    }
    let stopped = finish(&mut handle, &log, &[], grace, |_, _| {}).await;
    outcome?;
    stopped?;
    if let (Some(from), Some(to)) = (connected_at, acked_at) {
        let span = to.duration_since(from).as_secs_f64();
        let rate = if span > 0.0 {
            feed.given() as f64 * 8.0 / span
        } else {
            f64::INFINITY
        };
        println!(
            "sent {} bytes to {remote} in {span:.3} s: {rate:.0} bit/s (elapsed {:.3} s with connection set-up and release)",
            feed.given(),
            started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

pub fn connect(mut args: ConnectArgs) -> anyhow::Result<()> {
    match take_common(&mut args.common).through(args.mod128)? {
        Through::Kiss(common) => block_on(connect_async(*common, args)),
        Through::Station(station) => crate::agw_client::connect(station, args.dest, args.via),
    }
}

async fn connect_async(common: CommonArgs, args: ConnectArgs) -> anyhow::Result<()> {
    let modulus = crate::modulus(args.mod128);
    let config = common.config(modulus)?;
    common.check_path(&args.dest, &args.via)?;
    let grace = release_grace(&config);
    let mut n1 = config.n1;
    let (windows, mut k) = (
        (config.window_mod8, config.window_mod128),
        config.window_mod8,
    );
    let remote = args.dest;
    let mut handle = common.start(config, false).await?;
    let log = Log {
        monitor: common.tnc.monitor,
        bar: None,
    };
    handle
        .requests
        .send(Request::Connect {
            remote,
            via: args.via.clone(),
        })
        .ok();
    log.line(&format!("linklab: connecting to {remote}..."));
    let mut stdin = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    let mut stdout = tokio::io::stdout();
    let mut connected = false;
    let mut stdin_open = true;
    // A line is read only while the link has at most two windows unsent,
    // so that input piped in is read as the link takes it.
    let mut may_read = true;
    let outcome: anyhow::Result<()> = loop {
        tokio::select! {
            notice = handle.notices.recv() => {
                let Some((at, notice)) = notice else {
                    driver_end(&mut handle).await?;
                    break Err(anyhow!("the KISS driver stopped"));
                };
                if let Notice::Station(StationEvent::Unsent { remote: to, .. }) = &notice {
                    may_read |= *to == remote;
                }
                let event = match log.notice(at, notice) {
                    Ok(Some((from, event))) if from == remote => event,
                    Ok(_) => continue,
                    Err(e) => break Err(e),
                };
                match event {
                    Event::Connected { version, .. } => {
                        connected = true;
                        if version == Version::V2_2 {
                            k = windows.1;
                        }
                    }
                    Event::Negotiated { params, .. } => (n1, k) = (params.n1_tx, params.k_tx),
                    Event::Data { data, .. } => {
                        let text: Vec<u8> =
                            data.iter().map(|&b| if b == b'\r' { b'\n' } else { b }).collect();
                        stdout.write_all(&text).await.context("cannot write to standard output")?;
                        stdout.flush().await.context("cannot write to standard output")?;
                    }
                    Event::Disconnected { reason: DisconnectReason::LocalRequest | DisconnectReason::ReleaseTimeout | DisconnectReason::RemoteRequest } => break Ok(()),
                    Event::Disconnected { reason: DisconnectReason::Refused } => {
                        break Err(anyhow!("{remote} refused the connection (DM)"))
                    }
                    Event::Disconnected { reason } => {
                        break Err(anyhow!("the link with {remote} was released: {}", disconnect_reason(reason)))
                    }
                    Event::LinkFailure { reason } => {
                        break Err(anyhow!("the link with {remote} failed: {}", failure_reason(reason)))
                    }
                    _ => {}
                }
            }
            line = stdin.next_line(), if connected && stdin_open && may_read => {
                match line.context("cannot read standard input")? {
                    Some(line) => {
                        let mut bytes = line.into_bytes();
                        bytes.push(b'\r');
                        for chunk in bytes.chunks(n1) {
                            handle.requests.send(Request::Send { remote, data: chunk.to_vec() }).ok();
                        }
                        let octets = 2 * usize::from(k) * n1;
                        handle.requests.send(Request::NotifyUnsent { remote, octets }).ok();
                        may_read = false;
                    }
                    None => {
                        // Released once everything typed is acknowledged.
                        stdin_open = false;
                        handle.requests.send(Request::Release { remote }).ok();
                    }
                }
            }
            _ = tokio::signal::ctrl_c() => {
                log.line("linklab: interrupted; releasing the link");
                break Ok(());
            }
        }
    };
    let linked: &[Address] = if connected { &[remote] } else { &[] };
    let stopped = finish(&mut handle, &log, linked, grace, |_, _| {}).await;
    outcome?;
    stopped
}
