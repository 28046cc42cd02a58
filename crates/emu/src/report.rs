//! The channel's statistics: per channel and per station, as a table for
//! people and as JSON for scripts ([`Report`]).

use core::fmt;

use serde::Serialize;

/// Statistics of a channel server at one moment.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// Model time since the server started, seconds.
    pub elapsed_s: f64,
    /// Each channel.
    pub channels: Vec<ChannelReport>,
    /// Each station.
    pub stations: Vec<StationReport>,
    /// How late frames reached clients against their model time (the
    /// driver's measurement; none from the model alone).
    pub lateness: Option<Lateness>,
}

/// One channel's counters.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChannelReport {
    /// Its name.
    pub name: String,
    /// Bit rate, bit/s.
    pub bit_rate: u32,
    /// Key-ups of any transmitter.
    pub transmissions: u64,
    /// Key-ups while another transmitter was keyed (each one collision).
    pub collisions: u64,
    /// Frames put on the air.
    pub frames_sent: u64,
    /// Share of time at least one transmitter was keyed.
    pub utilisation: f64,
}

/// One station's counters, over all its radios.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct StationReport {
    /// Its name.
    pub name: String,
    /// Clients connected now.
    pub clients: usize,
    /// Key-ups of its transmitter(s).
    pub transmissions: u64,
    /// Frames it put on the air.
    pub frames_sent: u64,
    /// Their octets (address through information field).
    pub octets_sent: u64,
    /// Frames it received intact.
    pub received: u64,
    /// Frames lost at it to collisions.
    pub lost_to_collisions: u64,
    /// Frames lost at it to bit errors.
    pub lost_to_errors: u64,
    /// Frames lost at it because it was transmitting (half duplex).
    pub lost_while_transmitting: u64,
    /// Received frames handed to its clients.
    pub delivered: u64,
    /// Received frames dropped because no client was connected.
    pub dropped_no_client: u64,
    /// Frames dropped for a client that read too slowly.
    pub dropped_slow_client: u64,
    /// Frames it repeated as a digipeater (AX.25 v2.2 3.12.5); they count
    /// in `frames_sent` too.
    pub digipeated: u64,
    /// Octets outside KISS frames, skipped.
    pub garbage_octets: u64,
    /// KISS frames skipped as damaged, unknown or empty.
    pub bad_frames: u64,
    /// Frames for a KISS port with no radio.
    pub unknown_port: u64,
    /// KISS commands other than data (TXDELAY, P, ...).
    pub kiss_commands: u64,
    /// Mean queue delay, from the radio getting a frame to its first bit
    /// on the air, milliseconds.
    pub queue_delay_mean_ms: f64,
    /// Longest queue delay, milliseconds.
    pub queue_delay_max_ms: f64,
}

/// Lateness of deliveries to clients: wall-clock time of the write
/// against the model time of the frame's end on the air.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Lateness {
    /// Deliveries measured.
    pub count: u64,
    /// Median, microseconds.
    pub p50_us: u64,
    /// 99th percentile, microseconds.
    pub p99_us: u64,
    /// Largest, microseconds.
    pub max_us: u64,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "after {:.1} s:", self.elapsed_s)?;
        for c in &self.channels {
            writeln!(
                f,
                "channel {} ({} bit/s): {} transmissions, {} collisions, {} frames, {:.1}% busy",
                c.name,
                c.bit_rate,
                c.transmissions,
                c.collisions,
                c.frames_sent,
                c.utilisation * 100.0
            )?;
        }
        writeln!(
            f,
            "{:<10} {:>7} {:>7} {:>7} {:>9} {:>7} {:>7} {:>9} {:>7} {:>9}",
            "station",
            "sent",
            "rcvd",
            "collid",
            "bit-err",
            "deaf",
            "dropped",
            "bad-kiss",
            "q-ms",
            "q-max-ms"
        )?;
        for s in &self.stations {
            writeln!(
                f,
                "{:<10} {:>7} {:>7} {:>7} {:>9} {:>7} {:>7} {:>9} {:>7.1} {:>9.1}",
                s.name,
                s.frames_sent,
                s.received,
                s.lost_to_collisions,
                s.lost_to_errors,
                s.lost_while_transmitting,
                s.dropped_no_client + s.dropped_slow_client,
                s.bad_frames + s.unknown_port,
                s.queue_delay_mean_ms,
                s.queue_delay_max_ms
            )?;
        }
        for s in self.stations.iter().filter(|s| s.digipeated > 0) {
            writeln!(
                f,
                "{} repeated {} frames as a digipeater",
                s.name, s.digipeated
            )?;
        }
        if let Some(l) = self.lateness {
            writeln!(
                f,
                "delivery lateness over {} frames: p50 {} us, p99 {} us, max {} us",
                l.count, l.p50_us, l.p99_us, l.max_us
            )?;
        }
        Ok(())
    }
}
