//! What the station saw on the air, for the status page and the metrics,
//! sans-IO (time passed in): each port's last frames as `linklab monitor
//! --raw` shows them and its channel busy time in one-minute buckets
//! over the last hour. (The links' counters are the engine's: the
//! embedded server keeps those of links ended, so a port's totals never
//! go down.)
//!
//! Air time is estimated, not measured: a frame's octets with the FCS
//! and one opening flag, plus one stuffed bit in 62 (the expectation for
//! random data), at the port's configured bit rate
//! ([`AirSettings::frame_time`]). TXDELAY and the transmitter tail are
//! not counted (a received frame's are not known). A port with no
//! `bitrate` has no busy time.

use std::collections::VecDeque;
use std::time::Duration;

use linklab_agw::AirFrame;
use linklab_core::Instant;
use linklab_io::AirSettings;
use linklab_link::Stats;
use linklab_wire::monitor::{self, MonitorOptions};
use serde::{Deserialize, Serialize};

/// Frames kept per port for the monitor.
pub const MONITOR_LINES: usize = 40;

/// Information octets a monitor line shows before it is cut.
const MONITOR_INFO: usize = 80;

/// The busy-time buckets: one a minute for the last hour.
pub const BUSY_BUCKETS: usize = 60;

const MINUTE: Duration = Duration::from_secs(60);

/// A frame on the air as the monitor shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MonitorLine {
    /// Seconds since the station started.
    pub at_s: f64,
    /// Sent by the station (false: heard).
    pub sent: bool,
    /// The frame in `linklab monitor`'s one-line format.
    pub text: String,
}

/// A port's air, as the status shows it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PortAir {
    /// The configured bit rate, if any (without one, no busy time).
    pub bit_rate: Option<u32>,
    /// Seconds the channel carried frames, sent and heard, since the
    /// start.
    pub busy_s: f64,
    /// The busy share (0 to 1) of each of the last [`BUSY_BUCKETS`]
    /// minutes since the start, oldest first, the current minute last
    /// (so far); empty without a bit rate.
    pub busy_share: Vec<f64>,
    /// The last frames, oldest first.
    pub monitor: Vec<MonitorLine>,
    /// Every link's counters on this port added up, links gone included.
    pub links: Stats,
}

#[derive(Debug, Clone, Default)]
struct Port {
    bit_rate: Option<u32>,
    air: AirSettings,
    busy: Duration,
    /// (minute since the start, busy time in it), oldest first.
    minutes: VecDeque<(u64, Duration)>,
    monitor: VecDeque<MonitorLine>,
    moduli: monitor::LinkModuli,
}

/// The station's air record (see the module's description).
#[derive(Debug, Clone, Default)]
pub struct Traffic {
    ports: Vec<Port>,
}

impl Traffic {
    /// A record for ports of these bit rates and air settings.
    pub fn new(ports: impl IntoIterator<Item = (Option<u32>, AirSettings)>) -> Traffic {
        let mut traffic = Traffic::default();
        traffic.set_ports(ports);
        traffic
    }

    /// The ports after a reload: their records are kept, ports added get
    /// new ones.
    pub fn set_ports(&mut self, ports: impl IntoIterator<Item = (Option<u32>, AirSettings)>) {
        for (i, (bit_rate, air)) in ports.into_iter().enumerate() {
            if self.ports.len() <= i {
                self.ports.push(Port::default());
            }
            if let Some(p) = self.ports.get_mut(i) {
                p.bit_rate = bit_rate;
                p.air = air;
            }
        }
    }

    /// A frame sent or heard at `now`.
    pub fn air(&mut self, now: Instant, frame: &AirFrame) {
        let Some(p) = self.ports.get_mut(frame.port) else {
            return;
        };
        let modulus = p.moduli.observe(&frame.bytes);
        let options = MonitorOptions {
            max_info: Some(MONITOR_INFO),
        };
        if p.monitor.len() == MONITOR_LINES {
            p.monitor.pop_front();
        }
        p.monitor.push_back(MonitorLine {
            at_s: seconds(now),
            sent: frame.sent,
            text: monitor::format_raw_with(&frame.bytes, modulus, options),
        });
        if p.bit_rate.is_some() {
            let time = p.air.frame_time(frame.bytes.len());
            p.busy += time;
            let minute = now.as_micros() / MINUTE.as_micros() as u64;
            match p.minutes.back_mut() {
                Some((m, busy)) if *m == minute => *busy += time,
                _ => p.minutes.push_back((minute, time)),
            }
            while p
                .minutes
                .front()
                .is_some_and(|(m, _)| *m + (BUSY_BUCKETS as u64) <= minute)
            {
                p.minutes.pop_front();
            }
        }
    }

    /// Port `port`'s air at `now`; `links` is the total of its links'
    /// counters.
    pub fn port(&self, now: Instant, port: usize, links: &Stats) -> PortAir {
        let Some(p) = self.ports.get(port) else {
            return PortAir::default();
        };
        let busy_share = match p.bit_rate {
            None => Vec::new(),
            Some(_) => {
                let minute = now.as_micros() / MINUTE.as_micros() as u64;
                let into = now.as_micros() % MINUTE.as_micros() as u64;
                let first = minute.saturating_sub(BUSY_BUCKETS as u64 - 1);
                (first..=minute)
                    .map(|m| {
                        let busy = p
                            .minutes
                            .iter()
                            .find(|(x, _)| *x == m)
                            .map_or(Duration::ZERO, |(_, b)| *b);
                        // The current minute so far.
                        let span = if m == minute {
                            into.max(1)
                        } else {
                            MINUTE.as_micros() as u64
                        };
                        (busy.as_micros() as f64 / span as f64).min(1.0)
                    })
                    .collect()
            }
        };
        PortAir {
            bit_rate: p.bit_rate,
            busy_s: p.busy.as_secs_f64(),
            busy_share,
            monitor: p.monitor.iter().cloned().collect(),
            links: *links,
        }
    }
}

fn seconds(at: Instant) -> f64 {
    (at - Instant::ZERO).as_secs_f64()
}

#[cfg(test)]
mod tests {
    use super::*;
    use linklab_wire::ax25::{Frame, Pid};
    use linklab_wire::control::Modulus;

    fn ui(text: &str) -> Vec<u8> {
        Frame::ui(
            "ID".parse().unwrap(),
            "N0CALL".parse().unwrap(),
            &[],
            Pid::NoLayer3,
            text.as_bytes().to_vec(),
        )
        .unwrap()
        .encode()
    }

    fn at(s: u64) -> Instant {
        Instant::from_micros(s * 1_000_000)
    }

    fn frame(sent: bool, bytes: Vec<u8>) -> AirFrame {
        AirFrame {
            port: 0,
            sent,
            bytes,
            modulus: Modulus::Mod8,
        }
    }

    #[test]
    fn busy_time_is_the_frames_air_time_in_minute_buckets() {
        let air = AirSettings {
            bit_rate: 1200,
            ..AirSettings::default()
        };
        let mut t = Traffic::new([(Some(1200), air)]);
        let bytes = ui(&"x".repeat(100));
        let each = air.frame_time(bytes.len());
        t.air(at(10), &frame(true, bytes.clone()));
        t.air(at(70), &frame(false, bytes.clone()));
        t.air(at(80), &frame(false, bytes));
        let p = t.port(at(90), 0, &Stats::default());
        assert!((p.busy_s - 3.0 * each.as_secs_f64()).abs() < 1e-9);
        // Minutes 0 and 1 since the start.
        assert_eq!(p.busy_share.len(), 2);
        let last = p.busy_share[1];
        let before = p.busy_share[0];
        assert!((before - each.as_secs_f64() / 60.0).abs() < 1e-9);
        assert!((last - 2.0 * each.as_secs_f64() / 30.0).abs() < 1e-9);
        assert_eq!(p.monitor.len(), 3);
        assert!(
            p.monitor[0].text.starts_with("N0CALL>ID: <UI C>"),
            "{:?}",
            p.monitor[0]
        );
        // An hour later the first minute has left the window.
        let later = t.port(at(3_670), 0, &Stats::default());
        assert_eq!(later.busy_share.len(), BUSY_BUCKETS);
        assert!(later.busy_share.iter().all(|s| *s == 0.0));
        assert!((later.busy_s - p.busy_s).abs() < 1e-12);
    }

    #[test]
    fn no_bit_rate_no_busy_time_and_the_monitor_is_bounded() {
        let mut t = Traffic::new([(None, AirSettings::default())]);
        for i in 0..(MONITOR_LINES + 5) {
            t.air(at(i as u64), &frame(false, ui(&i.to_string())));
        }
        let p = t.port(at(100), 0, &Stats::default());
        assert!(p.busy_share.is_empty());
        assert_eq!(p.busy_s, 0.0);
        assert_eq!(p.monitor.len(), MONITOR_LINES);
        assert!(p.monitor[0].text.ends_with("] 5"), "{:?}", p.monitor[0]);
    }
}
