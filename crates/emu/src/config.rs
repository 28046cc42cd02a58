//! What a channel is made of: the [`Plan`] (channels, stations, their
//! radios and KISS defaults, who hears whom, bit errors per link), read
//! from a TOML file ([`Plan::from_toml`], errors with line and column) or
//! built from a few numbers ([`Plan::simple`], the command line's
//! `--stations N`).
//!
//! # The file
//! ```toml
//! seed = 1                  # every random stream (CSMA draws, bit errors);
//!                           # beyond 2^63 - 1 as a string: "0x84593e2f..."
//! bind = "127.0.0.1"        # where the KISS TCP ports listen
//! client_queue_frames = 256 # frames held for a client that reads slowly
//!
//! [defaults]                # each radio's KISS parameters until its host
//! txdelay_ms = 300          # sends KISS commands (and each station's
//! persistence = 63          # own override)
//! slot_ms = 100
//! txtail_ms = 30
//! full_duplex = false
//!
//! [[channel]]
//! name = "vhf"
//! bitrate = 1200
//! dcd_delay_ms = 0
//! ber = 1e-5                # or [channel.gilbert_elliott] (below)
//! hidden = [["a", "c"]]     # pairs that do not hear each other
//!
//! [[station]]
//! name = "a"
//! port = 8001               # its KISS TCP port (0: any free port)
//! pty = "/tmp/kiss-a"       # also a pseudo-terminal, linked here
//! channels = ["vhf"]        # KISS port 0, 1, ... (default: the first)
//! txdelay_ms = 150          # overrides [defaults]
//! digipeater = "DIGI-1"     # repeats frames whose next hop is DIGI-1
//! [station.tnc]             # a KISS TNC between host and radio
//! serial_bps = 9600
//! per_frame_ms = 10
//!
//! [[link]]                  # one path worse than its channel
//! from = "a"
//! to = "b"
//! [link.gilbert_elliott]
//! p_good_to_bad = 1e-5
//! p_bad_to_good = 1e-2
//! ber_good = 0
//! ber_bad = 0.1
//! ```

use core::time::Duration;
use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::PathBuf;

use linklab_channel::{ErrorModel, GilbertElliott, StationConfig, TncConfig};
use linklab_core::Position;
use linklab_wire::ax25::{same_station, Address};
use serde::Deserialize;
use thiserror::Error;

/// Frames held for one client before the channel drops frames for it.
pub const CLIENT_QUEUE_FRAMES: usize = 256;

/// Most stations on one channel server.
pub const MAX_STATIONS: usize = 256;

/// A whole channel server, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Master seed of every random stream.
    pub seed: u64,
    /// Address the KISS TCP ports listen on.
    pub bind: IpAddr,
    /// Frames queued for a client before frames for it are dropped.
    pub client_queue_frames: usize,
    /// The channels, in order.
    pub channels: Vec<ChannelPlan>,
    /// The stations, in order.
    pub stations: Vec<StationPlan>,
}

/// One radio channel.
#[derive(Debug, Clone, PartialEq)]
pub struct ChannelPlan {
    /// Its name (and the prefix of its random streams).
    pub name: String,
    /// Bit rate, bit/s.
    pub bit_rate: u32,
    /// Carrier-detect delay.
    pub dcd_delay: Duration,
    /// Bit errors at every receiver, unless a link says otherwise.
    pub errors: ErrorModel,
    /// Pairs of stations (by index) that do not hear each other.
    pub hidden: Vec<(usize, usize)>,
    /// Links (receiver, transmitter) with errors of their own.
    pub links: Vec<LinkPlan>,
}

/// Bit errors on the path from one station to another.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkPlan {
    /// Transmitting station.
    pub from: usize,
    /// Receiving station.
    pub to: usize,
    /// Its error model.
    pub errors: ErrorModel,
}

/// One station: a KISS port (TCP, optionally a pseudo-terminal) and a
/// radio on each of its channels.
#[derive(Debug, Clone, PartialEq)]
pub struct StationPlan {
    /// Its name.
    pub name: String,
    /// KISS TCP port; 0 takes any free port.
    pub port: u16,
    /// A pseudo-terminal too, with a symbolic link at this path if given.
    pub pty: Option<PtyPlan>,
    /// Its radios: KISS port i is on channel `radios[i].channel`.
    pub radios: Vec<RadioPlan>,
    /// A TNC model between host and radio, or none (the host's frames
    /// reach the radio at once).
    pub tnc: Option<TncPlan>,
    /// The call (and SSID) it repeats frames for as a digipeater, as a
    /// TNC with DIGIPEAT ON and MYCALL this call (AX.25 v2.2 3.12.5), or
    /// none.
    pub digipeater: Option<Address>,
}

/// Whether and where to make a pseudo-terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PtyPlan {
    /// Only the /dev/pts path, printed at start.
    Anonymous,
    /// A symbolic link at this path to the /dev/pts path.
    Link(PathBuf),
}

/// One radio of a station.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RadioPlan {
    /// Index of its channel.
    pub channel: usize,
    /// KISS parameters until the host changes them.
    pub kiss: StationConfig,
    /// Slot clock phase; drawn from the stream `slot-phase` when `None`.
    pub slot_phase: Option<Duration>,
    /// KISS FULLDUP until the host changes it.
    pub full_duplex: bool,
}

/// A TNC between the host and the radio (the model of Ronan et al.'s
/// measured set-up, `linklab_channel::Tnc`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TncPlan {
    /// Serial link, processor and buffer.
    pub tnc: TncConfig,
    /// How long after others' carrier drops the TNC still holds its
    /// frames.
    pub carrier_hold: Duration,
}

/// A channel file that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{}{message}", at.map(|p| format!("{p}: ")).unwrap_or_default())]
pub struct PlanError {
    /// Where, when known.
    pub at: Option<Position>,
    /// What is wrong.
    pub message: String,
}

type Spanned<T> = toml::Spanned<T>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    seed: Option<Spanned<SeedFile>>,
    bind: Option<Spanned<String>>,
    client_queue_frames: Option<Spanned<usize>>,
    #[serde(default)]
    defaults: KissFile,
    #[serde(default)]
    channel: Vec<ChannelFile>,
    #[serde(default)]
    station: Vec<StationFile>,
    #[serde(default)]
    link: Vec<LinkFile>,
}

/// KISS parameters as written (all optional; missing ones inherit).
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct KissFile {
    txdelay_ms: Option<Spanned<f64>>,
    persistence: Option<Spanned<i64>>,
    slot_ms: Option<Spanned<f64>>,
    txtail_ms: Option<Spanned<f64>>,
    full_duplex: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ChannelFile {
    name: Spanned<String>,
    bitrate: Spanned<i64>,
    dcd_delay_ms: Option<Spanned<f64>>,
    ber: Option<Spanned<f64>>,
    gilbert_elliott: Option<Spanned<GeFile>>,
    #[serde(default)]
    hidden: Vec<Spanned<Vec<String>>>,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(deny_unknown_fields)]
struct GeFile {
    p_good_to_bad: f64,
    p_bad_to_good: f64,
    ber_good: f64,
    ber_bad: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StationFile {
    name: Spanned<String>,
    port: Option<Spanned<i64>>,
    pty: Option<PtyFile>,
    channels: Option<Spanned<Vec<String>>>,
    txdelay_ms: Option<Spanned<f64>>,
    persistence: Option<Spanned<i64>>,
    slot_ms: Option<Spanned<f64>>,
    txtail_ms: Option<Spanned<f64>>,
    full_duplex: Option<bool>,
    slot_phase_ms: Option<Spanned<f64>>,
    tnc: Option<TncFile>,
    digipeater: Option<Spanned<String>>,
}

/// A seed as TOML can hold it: an integer up to 2^63 - 1, or a string
/// (decimal or 0x-hex) for the full 64-bit range of replication seeds.
#[derive(Deserialize)]
#[serde(untagged)]
enum SeedFile {
    Integer(i64),
    Text(String),
}

#[derive(Deserialize)]
#[serde(untagged)]
enum PtyFile {
    On(bool),
    Link(PathBuf),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TncFile {
    serial_bps: Spanned<i64>,
    #[serde(default)]
    per_frame_ms: f64,
    #[serde(default)]
    per_octet_us: f64,
    buffer_octets: Option<usize>,
    #[serde(default)]
    carrier_hold_ms: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LinkFile {
    from: Spanned<String>,
    to: Spanned<String>,
    ber: Option<Spanned<f64>>,
    gilbert_elliott: Option<Spanned<GeFile>>,
}

/// A radio's KISS parameters until its host or the file sets them: Dire
/// Wolf's defaults (TXDELAY 30 and TXTAIL 10 units, 300 and 100 ms; P 63;
/// SLOTTIME 10 units, 100 ms), the TNC a user of today most often meets.
/// The KISS specification's own TXDELAY default, 500 ms, was for the
/// transmitters of 1987.
pub fn default_kiss() -> StationConfig {
    StationConfig {
        persistence: 63,
        slot_time: Duration::from_millis(100),
        txdelay: Duration::from_millis(300),
        txtail: Duration::from_millis(100),
        slot_phase: Duration::ZERO,
    }
}

impl Plan {
    /// `stations` stations named s0, s1, ... on one channel of `bit_rate`
    /// bit/s, KISS TCP ports `base_port`, `base_port + 1`, ... (all 0:
    /// any free port), every radio with `kiss` and bit errors `errors`.
    pub fn simple(
        stations: usize,
        base_port: u16,
        bit_rate: u32,
        kiss: StationConfig,
        errors: ErrorModel,
    ) -> Result<Plan, PlanError> {
        let plain = |message: String| PlanError { at: None, message };
        if stations == 0 || stations > MAX_STATIONS {
            return Err(plain(format!(
                "--stations: {stations}; a channel has 1 to {MAX_STATIONS} stations"
            )));
        }
        if bit_rate == 0 {
            return Err(plain(
                "--bitrate: 0; the bit rate must be at least 1".into(),
            ));
        }
        let port = |i: usize| -> Result<u16, PlanError> {
            if base_port == 0 {
                return Ok(0);
            }
            u16::try_from(usize::from(base_port) + i).map_err(|_| {
                plain(format!(
                    "--base-port {base_port} with {stations} stations runs past port 65535"
                ))
            })
        };
        Ok(Plan {
            seed: 1,
            bind: IpAddr::from([127, 0, 0, 1]),
            client_queue_frames: CLIENT_QUEUE_FRAMES,
            channels: vec![ChannelPlan {
                name: "radio".into(),
                bit_rate,
                dcd_delay: Duration::ZERO,
                errors,
                hidden: Vec::new(),
                links: Vec::new(),
            }],
            stations: (0..stations)
                .map(|i| {
                    Ok(StationPlan {
                        name: format!("s{i}"),
                        port: port(i)?,
                        pty: None,
                        radios: vec![RadioPlan {
                            channel: 0,
                            kiss,
                            slot_phase: None,
                            full_duplex: false,
                        }],
                        tnc: None,
                        digipeater: None,
                    })
                })
                .collect::<Result<_, _>>()?,
        })
    }

    /// Makes station `name` a digipeater for `call` (the command line's
    /// `--digipeater NAME=CALL`); an error names the station or the call.
    pub fn set_digipeater(&mut self, name: &str, call: Address) -> Result<(), String> {
        let Some(i) = self.stations.iter().position(|s| s.name == name) else {
            let names: Vec<&str> = self.stations.iter().map(|s| s.name.as_str()).collect();
            return Err(format!(
                "no station named `{name}` (the stations are {})",
                names.join(", ")
            ));
        };
        let others = self.stations.iter().enumerate().filter(|&(j, _)| j != i);
        check_digipeater(others.map(|(_, s)| s), call)?;
        self.stations[i].digipeater = Some(call);
        Ok(())
    }

    /// Reads and checks a channel file.
    pub fn from_toml(text: &str) -> Result<Plan, PlanError> {
        let at = |offset: usize| Some(Position::of(text, offset));
        let file: File = toml::from_str(text).map_err(|e| PlanError {
            at: e.span().and_then(|s| at(s.start)),
            message: e.message().trim_end().replace('\n', "; "),
        })?;
        let err = |span: core::ops::Range<usize>, message: String| PlanError {
            at: at(span.start),
            message,
        };
        let bind = match &file.bind {
            None => IpAddr::from([127, 0, 0, 1]),
            Some(b) => b.get_ref().parse().map_err(|_| {
                err(
                    b.span(),
                    format!("bind: `{}` is not an IP address", b.get_ref()),
                )
            })?,
        };
        let client_queue_frames = match &file.client_queue_frames {
            None => CLIENT_QUEUE_FRAMES,
            Some(q) if *q.get_ref() == 0 => {
                return Err(err(
                    q.span(),
                    "client_queue_frames: must be at least 1".into(),
                ))
            }
            Some(q) => *q.get_ref(),
        };
        if file.channel.is_empty() {
            return Err(PlanError {
                at: None,
                message: "no [[channel]]: a channel file needs at least one".into(),
            });
        }
        if file.station.is_empty() {
            return Err(PlanError {
                at: None,
                message: "no [[station]]: a channel file needs at least one".into(),
            });
        }
        if file.station.len() > MAX_STATIONS {
            return Err(PlanError {
                at: None,
                message: format!("{} stations; at most {MAX_STATIONS}", file.station.len()),
            });
        }
        let defaults = kiss_of(&file.defaults, default_kiss(), &err)?;
        let default_duplex = file.defaults.full_duplex.unwrap_or(false);

        let mut channel_index = BTreeMap::new();
        let mut channels = Vec::new();
        for (i, c) in file.channel.iter().enumerate() {
            let name = c.name.get_ref().clone();
            if channel_index.insert(name.clone(), i).is_some() {
                return Err(err(
                    c.name.span(),
                    format!("channel `{name}` is defined twice"),
                ));
            }
            let bit_rate = u32::try_from(*c.bitrate.get_ref())
                .ok()
                .filter(|&b| b > 0)
                .ok_or_else(|| {
                    err(
                        c.bitrate.span(),
                        format!(
                            "bitrate: {} must be 1 to 4294967295 bit/s",
                            c.bitrate.get_ref()
                        ),
                    )
                })?;
            let dcd_delay = match &c.dcd_delay_ms {
                None => Duration::ZERO,
                Some(ms) => millis(ms, "dcd_delay_ms", &err)?,
            };
            channels.push(ChannelPlan {
                name,
                bit_rate,
                dcd_delay,
                errors: errors_of(c.ber.as_ref(), c.gilbert_elliott.as_ref(), &err)?,
                hidden: Vec::new(),
                links: Vec::new(),
            });
        }

        let mut station_index = BTreeMap::new();
        let mut stations = Vec::new();
        for (i, s) in file.station.iter().enumerate() {
            let name = s.name.get_ref().clone();
            if station_index.insert(name.clone(), i).is_some() {
                return Err(err(
                    s.name.span(),
                    format!("station `{name}` is defined twice"),
                ));
            }
            let port = match &s.port {
                None => 0,
                Some(p) => u16::try_from(*p.get_ref()).map_err(|_| {
                    err(
                        p.span(),
                        format!("port: {} is not a TCP port (0-65535)", p.get_ref()),
                    )
                })?,
            };
            let own = KissFile {
                txdelay_ms: s.txdelay_ms.clone(),
                persistence: s.persistence.clone(),
                slot_ms: s.slot_ms.clone(),
                txtail_ms: s.txtail_ms.clone(),
                full_duplex: s.full_duplex,
            };
            let kiss = kiss_of(&own, defaults, &err)?;
            let full_duplex = s.full_duplex.unwrap_or(default_duplex);
            let slot_phase = s
                .slot_phase_ms
                .as_ref()
                .map(|ms| millis(ms, "slot_phase_ms", &err))
                .transpose()?;
            let radios = match &s.channels {
                None => vec![0],
                Some(list) if list.get_ref().is_empty() || list.get_ref().len() > 16 => {
                    return Err(err(
                        list.span(),
                        "channels: a station has 1 to 16 radios (KISS ports 0-15)".into(),
                    ))
                }
                Some(list) => {
                    let mut radios: Vec<usize> = Vec::new();
                    for c in list.get_ref() {
                        let index = channel_index.get(c).copied().ok_or_else(|| {
                            err(list.span(), format!("channels: no channel named `{c}`"))
                        })?;
                        if radios.contains(&index) {
                            return Err(err(
                                list.span(),
                                format!("channels: `{c}` is listed twice; a station has one radio per channel"),
                            ));
                        }
                        radios.push(index);
                    }
                    radios
                }
            };
            let tnc = s.tnc.as_ref().map(|t| tnc_of(t, &err)).transpose()?;
            let digipeater = s
                .digipeater
                .as_ref()
                .map(|call| {
                    call.get_ref()
                        .parse::<Address>()
                        .map_err(|e| err(call.span(), format!("digipeater: {e}")))
                })
                .transpose()?;
            stations.push(StationPlan {
                name,
                port,
                pty: match &s.pty {
                    None | Some(PtyFile::On(false)) => None,
                    Some(PtyFile::On(true)) => Some(PtyPlan::Anonymous),
                    Some(PtyFile::Link(path)) => Some(PtyPlan::Link(path.clone())),
                },
                radios: radios
                    .into_iter()
                    .map(|channel| RadioPlan {
                        channel,
                        kiss,
                        slot_phase,
                        full_duplex,
                    })
                    .collect(),
                tnc,
                digipeater,
            });
        }
        let used_ports: Vec<u16> = stations
            .iter()
            .map(|s| s.port)
            .filter(|&p| p != 0)
            .collect();
        for (i, s) in file.station.iter().enumerate() {
            let p = stations[i].port;
            if p != 0 && used_ports.iter().filter(|&&q| q == p).count() > 1 {
                let span = s.port.as_ref().map_or(s.name.span(), |p| p.span());
                return Err(err(span, format!("port: {p} is given to two stations")));
            }
        }
        for (i, s) in file.station.iter().enumerate() {
            if let (Some(call), Some(span)) = (stations[i].digipeater, &s.digipeater) {
                check_digipeater(&stations[..i], call)
                    .map_err(|message| err(span.span(), format!("digipeater: {message}")))?;
            }
        }
        let station_of = |name: &Spanned<String>| {
            station_index.get(name.get_ref()).copied().ok_or_else(|| {
                err(
                    name.span(),
                    format!("no station named `{}`", name.get_ref()),
                )
            })
        };
        for (c, cf) in channels.iter_mut().zip(&file.channel) {
            for pair in &cf.hidden {
                let [a, b] = pair.get_ref().as_slice() else {
                    return Err(err(
                        pair.span(),
                        "hidden: each entry is a pair of station names".into(),
                    ));
                };
                let find = |n: &String| {
                    station_index
                        .get(n)
                        .copied()
                        .ok_or_else(|| err(pair.span(), format!("hidden: no station named `{n}`")))
                };
                c.hidden.push((find(a)?, find(b)?));
            }
        }
        for l in &file.link {
            let from = station_of(&l.from)?;
            let to = station_of(&l.to)?;
            let errors = errors_of(l.ber.as_ref(), l.gilbert_elliott.as_ref(), &err)?;
            let shared: Vec<usize> = stations[from]
                .radios
                .iter()
                .map(|r| r.channel)
                .filter(|c| stations[to].radios.iter().any(|r| r.channel == *c))
                .collect();
            if shared.is_empty() || from == to {
                return Err(err(
                    l.to.span(),
                    format!(
                        "link: `{}` and `{}` share no channel",
                        l.from.get_ref(),
                        l.to.get_ref()
                    ),
                ));
            }
            for c in shared {
                channels[c].links.push(LinkPlan { from, to, errors });
            }
        }
        let seed = match &file.seed {
            None => 1,
            Some(seed) => seed_of(seed, &err)?,
        };
        Ok(Plan {
            seed,
            bind,
            client_queue_frames,
            channels,
            stations,
        })
    }
}

/// Refuses `call` as a digipeater call if one of the `others` stations
/// repeats for it already: both would repeat every frame, one copy
/// colliding with the other.
fn check_digipeater<'a>(
    others: impl IntoIterator<Item = &'a StationPlan>,
    call: Address,
) -> Result<(), String> {
    let same = |a: &Address| same_station(a, &call);
    match others
        .into_iter()
        .find(|s| s.digipeater.as_ref().is_some_and(same))
    {
        Some(other) => Err(format!(
            "{call} is already station `{}`'s digipeater call",
            other.name
        )),
        None => Ok(()),
    }
}

fn seed_of(seed: &Spanned<SeedFile>, err: &ErrAt) -> Result<u64, PlanError> {
    let bad = || {
        err(
            seed.span(),
            "seed: expected 0 to 18446744073709551615, as an integer or a string (decimal or 0x...)"
                .into(),
        )
    };
    match seed.get_ref() {
        SeedFile::Integer(n) => u64::try_from(*n).map_err(|_| bad()),
        SeedFile::Text(t) => match t.strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16).map_err(|_| bad()),
            None => t.parse().map_err(|_| bad()),
        },
    }
}

type ErrAt<'a> = dyn Fn(core::ops::Range<usize>, String) -> PlanError + 'a;

fn millis(ms: &Spanned<f64>, name: &str, err: &ErrAt) -> Result<Duration, PlanError> {
    let v = *ms.get_ref();
    if !(0.0..=3_600_000.0).contains(&v) {
        return Err(err(
            ms.span(),
            format!("{name}: {v} ms is out of range 0 to 3600000"),
        ));
    }
    Ok(Duration::from_secs_f64(v / 1e3))
}

/// A KISS time parameter: KISS carries 0-255 units of 10 ms.
fn kiss_millis(ms: &Spanned<f64>, name: &str, err: &ErrAt) -> Result<Duration, PlanError> {
    let d = millis(ms, name, err)?;
    if d > Duration::from_millis(2550) {
        return Err(err(
            ms.span(),
            format!(
                "{name}: {} ms; KISS carries at most 2550 ms (255 units of 10 ms)",
                ms.get_ref()
            ),
        ));
    }
    Ok(d)
}

fn kiss_of(k: &KissFile, base: StationConfig, err: &ErrAt) -> Result<StationConfig, PlanError> {
    let mut c = base;
    if let Some(ms) = &k.txdelay_ms {
        c.txdelay = kiss_millis(ms, "txdelay_ms", err)?;
    }
    if let Some(ms) = &k.slot_ms {
        c.slot_time = kiss_millis(ms, "slot_ms", err)?;
    }
    if let Some(ms) = &k.txtail_ms {
        c.txtail = kiss_millis(ms, "txtail_ms", err)?;
    }
    if let Some(p) = &k.persistence {
        c.persistence = u8::try_from(*p.get_ref()).map_err(|_| {
            err(
                p.span(),
                format!(
                    "persistence: {} is out of range 0-255 (KISS P)",
                    p.get_ref()
                ),
            )
        })?;
    }
    Ok(c)
}

fn probability(
    v: f64,
    name: &str,
    span: core::ops::Range<usize>,
    err: &ErrAt,
) -> Result<f64, PlanError> {
    if (0.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err(err(
            span,
            format!("{name}: {v} is not a probability (0 to 1)"),
        ))
    }
}

fn errors_of(
    ber: Option<&Spanned<f64>>,
    ge: Option<&Spanned<GeFile>>,
    err: &ErrAt,
) -> Result<ErrorModel, PlanError> {
    match (ber, ge) {
        (Some(b), Some(g)) => Err(err(
            g.span().start.min(b.span().start)..b.span().end,
            "give either ber or gilbert_elliott, not both".into(),
        )),
        (Some(b), None) => Ok(ErrorModel::Independent {
            ber: probability(*b.get_ref(), "ber", b.span(), err)?,
        }),
        (None, Some(g)) => {
            let f = *g.get_ref();
            let p = |v, name| probability(v, name, g.span(), err);
            Ok(ErrorModel::GilbertElliott(GilbertElliott {
                p_good_to_bad: p(f.p_good_to_bad, "p_good_to_bad")?,
                p_bad_to_good: p(f.p_bad_to_good, "p_bad_to_good")?,
                ber_good: p(f.ber_good, "ber_good")?,
                ber_bad: p(f.ber_bad, "ber_bad")?,
            }))
        }
        (None, None) => Ok(ErrorModel::Perfect),
    }
}

fn tnc_of(t: &TncFile, err: &ErrAt) -> Result<TncPlan, PlanError> {
    let serial_rate = u32::try_from(*t.serial_bps.get_ref())
        .ok()
        .filter(|&r| r > 0)
        .ok_or_else(|| {
            err(
                t.serial_bps.span(),
                format!("serial_bps: {} must be at least 1", t.serial_bps.get_ref()),
            )
        })?;
    let nonneg = |v: f64, name: &str| {
        if v.is_finite() && v >= 0.0 {
            Ok(v)
        } else {
            Err(err(
                t.serial_bps.span(),
                format!("tnc.{name}: {v} must be a time of 0 or more"),
            ))
        }
    };
    Ok(TncPlan {
        tnc: TncConfig {
            serial_rate,
            per_frame: Duration::from_secs_f64(nonneg(t.per_frame_ms, "per_frame_ms")? / 1e3),
            per_octet: Duration::from_secs_f64(nonneg(t.per_octet_us, "per_octet_us")? / 1e6),
            tx_buffer_octets: t.buffer_octets.unwrap_or(8192),
        },
        carrier_hold: Duration::from_secs_f64(nonneg(t.carrier_hold_ms, "carrier_hold_ms")? / 1e3),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO_CHANNELS: &str = r#"
seed = 7
[defaults]
txdelay_ms = 150
[[channel]]
name = "vhf"
bitrate = 1200
hidden = [["a", "c"]]
[[channel]]
name = "uhf"
bitrate = 9600
ber = 1e-5
[[station]]
name = "a"
port = 8001
[[station]]
name = "b"
channels = ["vhf", "uhf"]
slot_ms = 50
[station.tnc]
serial_bps = 9600
per_frame_ms = 10
[[station]]
name = "c"
channels = ["uhf"]
pty = true
[[link]]
from = "b"
to = "c"
ber = 1e-3
"#;

    #[test]
    fn a_file_names_channels_stations_and_links() {
        let plan = Plan::from_toml(TWO_CHANNELS).unwrap();
        assert_eq!(plan.seed, 7);
        assert_eq!(plan.channels.len(), 2);
        assert_eq!(plan.channels[0].hidden, vec![(0, 2)]);
        assert_eq!(
            plan.channels[1].errors,
            ErrorModel::Independent { ber: 1e-5 }
        );
        let b = &plan.stations[1];
        assert_eq!(b.radios.len(), 2);
        assert_eq!(b.radios[1].channel, 1);
        assert_eq!(b.radios[0].kiss.txdelay, Duration::from_millis(150));
        assert_eq!(b.radios[0].kiss.slot_time, Duration::from_millis(50));
        assert_eq!(
            plan.stations[0].radios[0].kiss.slot_time,
            Duration::from_millis(100)
        );
        assert_eq!(b.tnc.unwrap().tnc.serial_rate, 9600);
        assert_eq!(plan.stations[2].pty, Some(PtyPlan::Anonymous));
        assert_eq!(
            plan.channels[1].links,
            vec![LinkPlan {
                from: 1,
                to: 2,
                errors: ErrorModel::Independent { ber: 1e-3 },
            }]
        );
    }

    #[test]
    fn mistakes_are_located() {
        let bad = |text: &str| Plan::from_toml(text).unwrap_err().to_string();
        let e = bad("[[channel]]\nname = \"x\"\nbitrate = 0\n[[station]]\nname = \"a\"\n");
        assert_eq!(
            e,
            "line 3, column 11: bitrate: 0 must be 1 to 4294967295 bit/s"
        );
        let e = bad("[[channel]]\nname = \"x\"\nbitrate = 1200\n[[station]]\nname = \"a\"\nchannels = [\"y\"]\n");
        assert_eq!(e, "line 6, column 12: channels: no channel named `y`");
        let e = bad("[[channel]]\nname = \"x\"\nbitrate = 1200\n[[station]]\nname = \"a\"\ntxdelay_ms = 3000\n");
        assert!(
            e.starts_with("line 6, column 14: txdelay_ms: 3000 ms; KISS carries at most"),
            "{e}"
        );
        let e = bad("[[channel]]\nname = \"x\"\nbitrate = 1200\nspeed = 3\n");
        assert!(
            e.starts_with("line 4, column 1: unknown field `speed`"),
            "{e}"
        );
        let e = bad("[[channel]]\nname = \"x\"\nbitrate = 1200\n[[station]]\nname = \"a\"\nport = 9\n[[station]]\nname = \"b\"\nport = 9\n");
        assert_eq!(e, "line 6, column 8: port: 9 is given to two stations");
        assert_eq!(
            bad("[[station]]\nname = \"a\"\n"),
            "no [[channel]]: a channel file needs at least one"
        );
        let e = bad(
            "seed = -1\n[[channel]]\nname = \"x\"\nbitrate = 1200\n[[station]]\nname = \"a\"\n",
        );
        assert!(
            e.starts_with("line 1, column 8: seed: expected 0 to"),
            "{e}"
        );
    }

    #[test]
    fn digipeaters_are_calls_each_repeated_by_one_station() {
        let file = |calls: &str| {
            Plan::from_toml(&format!(
                "[[channel]]\nname = \"x\"\nbitrate = 1200\n[[station]]\nname = \"a\"\n[[station]]\nname = \"b\"\n{calls}"
            ))
        };
        let plan = file("digipeater = \"digi-1\"\n").unwrap();
        assert_eq!(plan.stations[0].digipeater, None);
        assert_eq!(plan.stations[1].digipeater, Some("DIGI-1".parse().unwrap()));
        let e = file("digipeater = \"DIGI-16\"\n").unwrap_err().to_string();
        assert_eq!(
            e,
            "line 8, column 14: digipeater: SSID 16 is out of range; it must be 0-15"
        );
        let e = file("digipeater = \"DIGI_1\"\n").unwrap_err().to_string();
        assert!(
            e.starts_with("line 8, column 14: digipeater: callsign"),
            "{e}"
        );
        let mut plan = file("digipeater = \"DIGI\"\n").unwrap();
        assert_eq!(
            plan.set_digipeater("a", "DIGI".parse().unwrap()),
            Err("DIGI is already station `b`'s digipeater call".into())
        );
        assert_eq!(
            plan.set_digipeater("c", "DIGI".parse().unwrap()),
            Err("no station named `c` (the stations are a, b)".into())
        );
        let e = Plan::from_toml(
            "[[channel]]\nname = \"x\"\nbitrate = 1200\n[[station]]\nname = \"a\"\ndigipeater = \"DIGI\"\n[[station]]\nname = \"b\"\ndigipeater = \"DIGI-0\"\n",
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            e,
            "line 9, column 14: digipeater: DIGI is already station `a`'s digipeater call"
        );
        plan.set_digipeater("a", "RELAY-2".parse().unwrap())
            .unwrap();
        assert_eq!(
            plan.stations[0].digipeater,
            Some("RELAY-2".parse().unwrap())
        );
    }

    #[test]
    fn seeds_beyond_toml_integers_are_strings() {
        let file = |seed: &str| {
            Plan::from_toml(&format!(
                "seed = {seed}\n[[channel]]\nname = \"x\"\nbitrate = 1200\n[[station]]\nname = \"a\"\n"
            ))
            .unwrap()
            .seed
        };
        assert_eq!(file("\"9536991056488915102\""), 9536991056488915102);
        assert_eq!(file("\"0xFFFFFFFFFFFFFFFF\""), u64::MAX);
        assert_eq!(file("42"), 42);
    }

    #[test]
    fn simple_plans_count_ports_up() {
        let p = Plan::simple(3, 8001, 9600, default_kiss(), ErrorModel::Perfect).unwrap();
        let ports: Vec<u16> = p.stations.iter().map(|s| s.port).collect();
        assert_eq!(ports, [8001, 8002, 8003]);
        assert!(Plan::simple(2, 65535, 9600, default_kiss(), ErrorModel::Perfect).is_err());
        assert!(Plan::simple(0, 8001, 9600, default_kiss(), ErrorModel::Perfect).is_err());
    }
}
