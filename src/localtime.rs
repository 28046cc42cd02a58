//! Local time for the monitoring commands, read from the system's time
//! zone file (TZif, RFC 8536) without a C library call: `$TZ` when it
//! names a zone (`Europe/Paris`, `:Europe/Paris` or a file path), else
//! `/etc/localtime`. A POSIX rule string in `$TZ` (`CET-1CEST`) or a
//! missing file gives UTC, and the times say so.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use time::{OffsetDateTime, UtcOffset};

/// The local zone: its transitions and offsets.
pub struct Zone {
    /// (transition time, offset in seconds from it), ascending.
    changes: Vec<(i64, i32)>,
    /// Offset before the first transition, or always if there is none.
    initial: i32,
    /// True if no zone file was read (times are UTC).
    pub utc: bool,
}

impl Zone {
    /// The local zone, or UTC if it cannot be read.
    pub fn local() -> Zone {
        let path = match std::env::var("TZ") {
            Ok(tz) if !tz.is_empty() => {
                let name = tz.trim_start_matches(':');
                if name.starts_with('/') {
                    PathBuf::from(name)
                } else {
                    Path::new("/usr/share/zoneinfo").join(name)
                }
            }
            _ => PathBuf::from("/etc/localtime"),
        };
        std::fs::read(&path)
            .ok()
            .and_then(|bytes| parse(&bytes))
            .unwrap_or(Zone {
                changes: Vec::new(),
                initial: 0,
                utc: true,
            })
    }

    /// The UTC offset at `wall`.
    pub fn offset_at(&self, wall: SystemTime) -> UtcOffset {
        let t = OffsetDateTime::from(wall).unix_timestamp();
        let seconds = self
            .changes
            .iter()
            .rev()
            .find(|(at, _)| *at <= t)
            .map_or(self.initial, |(_, offset)| *offset);
        UtcOffset::from_whole_seconds(seconds).unwrap_or(UtcOffset::UTC)
    }

    /// `wall` in local time.
    pub fn at(&self, wall: SystemTime) -> OffsetDateTime {
        OffsetDateTime::from(wall).to_offset(self.offset_at(wall))
    }

    /// `HH:MM:SS` of `wall`, local.
    pub fn clock(&self, wall: SystemTime) -> String {
        let t = self.at(wall);
        format!("{:02}:{:02}:{:02}", t.hour(), t.minute(), t.second())
    }

    /// `YYYY-MM-DD HH:MM:SS` of `wall`, local.
    pub fn date_time(&self, wall: SystemTime) -> String {
        let t = self.at(wall);
        format!(
            "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
            t.year(),
            u8::from(t.month()),
            t.day(),
            t.hour(),
            t.minute(),
            t.second()
        )
    }
}

/// The version-1 data block of a TZif file (RFC 8536 3.1-3.2): enough for
/// the offsets in use (version 2+ files repeat the data with 64-bit
/// times after it; the 32-bit block covers 1901-2038).
fn parse(bytes: &[u8]) -> Option<Zone> {
    if bytes.get(..4)? != b"TZif" {
        return None;
    }
    let count = |i: usize| -> Option<usize> {
        let at = 20 + 4 * i;
        let word = bytes.get(at..at + 4)?;
        usize::try_from(u32::from_be_bytes(word.try_into().ok()?)).ok()
    };
    // isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt.
    let (timecnt, typecnt) = (count(3)?, count(4)?);
    let times_at = 44;
    let index_at = times_at + 4 * timecnt;
    let types_at = index_at + timecnt;
    let offset_of = |t: usize| -> Option<i32> {
        let at = types_at + 6 * t;
        Some(i32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
    };
    if typecnt == 0 {
        return None;
    }
    let mut changes = Vec::with_capacity(timecnt);
    for i in 0..timecnt {
        let at = times_at + 4 * i;
        let time = i32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?);
        let kind = usize::from(*bytes.get(index_at + i)?);
        changes.push((i64::from(time), offset_of(kind)?));
    }
    Some(Zone {
        changes,
        initial: offset_of(0)?,
        utc: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A TZif file: UTC+1 until the transition at t = 1000, UTC+2 after.
    fn file() -> Vec<u8> {
        let mut f = b"TZif2".to_vec();
        f.extend_from_slice(&[0; 15]);
        for n in [0u32, 0, 0, 1, 2, 4] {
            f.extend_from_slice(&n.to_be_bytes());
        }
        f.extend_from_slice(&1000i32.to_be_bytes());
        f.push(1);
        f.extend_from_slice(&3600i32.to_be_bytes());
        f.extend_from_slice(&[0, 0]);
        f.extend_from_slice(&7200i32.to_be_bytes());
        f.extend_from_slice(&[1, 0]);
        f.extend_from_slice(b"A\0B\0");
        f
    }

    #[test]
    fn offsets_follow_the_transitions() {
        let zone = parse(&file()).unwrap();
        let at = |s: u64| SystemTime::UNIX_EPOCH + Duration::from_secs(s);
        assert_eq!(zone.offset_at(at(999)).whole_seconds(), 3600);
        assert_eq!(zone.offset_at(at(1000)).whole_seconds(), 7200);
        assert_eq!(zone.clock(at(1000)), "02:16:40");
        assert_eq!(zone.date_time(at(0)), "1970-01-01 01:00:00");
        assert!(parse(b"nope").is_none());
        assert!(parse(&file()[..30]).is_none());
    }
}
