//! The monitoring messages an AGWPE engine sends to clients that asked
//! for them ('m' and 'k'), and the heard list ('H').
//!
//! A monitor record is a line of text describing the frame, as AGWPE
//! terminal programs show it, then the information field:
//!
//! ```text
//!  1:Fm N0CALL-1 To N0CALL-2 Via DIGI <I S3 R2 pid=F0 Len=5 P=0 >[12:34:56]\rhello\r\0
//! ```
//!
//! The kind is 'I' for I frames, 'U' for UI frames, 'S' for supervisory
//! and other unnumbered frames, and 'T' for any frame this engine sent.
//! The description follows the records Dire Wolf's AGWPE server sends
//! (the form most client programs are tested with): the port counted from
//! 1, "P" after commands and "F" after responses, "PF" for AX.25 v1
//! frames whose C bits do not say, `Len` the length of the information
//! field alone. The time is the wall clock, UTC.

use std::time::{Duration, SystemTime};

use linklab_wire::ax25::{Address, AddressField, CommandResponse, Frame};
use linklab_wire::control::{Control, Modulus, Unnumbered};

use crate::wire::{CallField, Header, Message};

/// Stations an 'H' answer lists at most, the most recently heard first.
pub const HEARD_MAX: usize = 20;

/// The monitor record of `frame` (its octets `bytes`, decoded with
/// `modulus`) on `port`, at `wall`; `own` for a frame this engine sent.
/// `None` if the octets do not decode as an AX.25 frame.
pub fn record(
    port: u8,
    bytes: &[u8],
    modulus: Modulus,
    own: bool,
    wall: SystemTime,
) -> Option<Message> {
    let frame = Frame::decode(bytes, modulus)
        .or_else(|_| Frame::decode(bytes, Modulus::Mod8))
        .ok()?;
    let (kind, description) = describe(&frame);
    let mut text = addresses(port, frame.address());
    text.push_str(&description);
    text.push_str(&format!("[{}]\r", clock(wall)));
    let mut data = text.into_bytes();
    if !frame.info().is_empty() {
        data.extend_from_slice(frame.info());
        data.push(b'\r');
    }
    data.push(0);
    let mut header = Header::new(port, if own { b'T' } else { kind });
    header.pid = frame.pid().map_or(0, u8::from);
    header.call_from = CallField::from_address(frame.source());
    header.call_to = CallField::from_address(frame.dest());
    Some(Message::new(header, data))
}

/// The raw record ('K') of a frame received on `port`: the KISS type
/// octet (the port in the high nibble, data command 0), then the frame
/// without FCS.
pub fn raw_record(port: u8, kiss_port: u8, bytes: &[u8]) -> Message {
    let mut data = Vec::with_capacity(bytes.len() + 1);
    data.push(kiss_port << 4);
    data.extend_from_slice(bytes);
    Message::new(Header::new(port, b'K'), data)
}

/// `" 1:Fm SRC To DST Via D1,D2 "`.
fn addresses(port: u8, field: &AddressField) -> String {
    let mut text = format!(
        " {}:Fm {} To {} ",
        u16::from(port) + 1,
        field.source(),
        field.dest()
    );
    if !field.digipeaters().is_empty() {
        let via: Vec<String> = field.digipeaters().iter().map(Address::to_string).collect();
        text.push_str(&format!("Via {} ", via.join(",")));
    }
    text
}

/// The record kind and the `<...>` description of `frame`.
fn describe(frame: &Frame) -> (u8, String) {
    let pf_name = match frame.command_response() {
        CommandResponse::Command => "P",
        CommandResponse::Response => "F",
        _ => "PF",
    };
    let len = frame.info().len();
    let pid = frame.pid().map_or(0, u8::from);
    match frame.control() {
        Control::I { ns, nr, pf } => (
            b'I',
            format!(
                "<I S{ns} R{nr} pid={pid:02X} Len={len} {pf_name}={} >",
                u8::from(pf)
            ),
        ),
        Control::S { kind, nr, pf } => {
            let name = kind.name();
            let extra = if len > 0 {
                format!(" Len={len}")
            } else {
                String::new()
            };
            (
                b'S',
                format!("<{name} R{nr} {pf_name}={}{extra} >", u8::from(pf)),
            )
        }
        Control::U {
            kind: Unnumbered::Ui,
            pf,
        } => (
            b'U',
            format!("<UI pid={pid:02X} Len={len} {pf_name}={} >", u8::from(pf)),
        ),
        Control::U { kind, pf } => {
            let extra = if matches!(kind, Unnumbered::Xid | Unnumbered::Test) {
                format!(" Len={len}")
            } else {
                String::new()
            };
            (
                b'S',
                format!("<{} {pf_name}={}{extra} >", kind.name(), u8::from(pf)),
            )
        }
    }
}

/// `HH:MM:SS` of `wall`, UTC.
fn clock(wall: SystemTime) -> String {
    let t = time::OffsetDateTime::from(wall);
    format!("{:02}:{:02}:{:02}", t.hour(), t.minute(), t.second())
}

/// A station heard on a port: when first and last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Heard {
    /// Its address.
    pub station: Address,
    /// When first heard.
    pub first: SystemTime,
    /// When last heard.
    pub last: SystemTime,
}

/// The 'H' answer for one station heard on `port` (or an empty record
/// for `None`): CallFrom the station; data its text line, `CALL
/// first-heard  last-heard`, a NUL, and the two times as Windows
/// SYSTEMTIME structures (UTC), as AGWPE sends them.
pub fn heard_record(port: u8, heard: Option<&Heard>) -> Message {
    let mut header = Header::new(port, b'H');
    let mut data = Vec::new();
    match heard {
        Some(h) => {
            header.call_from = CallField::from_address(&h.station);
            data.extend_from_slice(
                format!("{} {}  {}", h.station, stamp(h.first), stamp(h.last)).as_bytes(),
            );
            data.push(0);
            data.extend_from_slice(&system_time(h.first));
            data.extend_from_slice(&system_time(h.last));
        }
        None => {
            data.push(0);
            data.extend_from_slice(&[0; 32]);
        }
    }
    Message::new(header, data)
}

/// `Thu,26Nov2026 11:35:17`.
fn stamp(wall: SystemTime) -> String {
    let t = time::OffsetDateTime::from(wall);
    let day = match t.weekday() {
        time::Weekday::Monday => "Mon",
        time::Weekday::Tuesday => "Tue",
        time::Weekday::Wednesday => "Wed",
        time::Weekday::Thursday => "Thu",
        time::Weekday::Friday => "Fri",
        time::Weekday::Saturday => "Sat",
        time::Weekday::Sunday => "Sun",
    };
    let month = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]
    .get(usize::from(u8::from(t.month())) - 1)
    .copied()
    .unwrap_or("???");
    format!(
        "{day},{:02}{month}{} {:02}:{:02}:{:02}",
        t.day(),
        t.year(),
        t.hour(),
        t.minute(),
        t.second()
    )
}

/// A Windows SYSTEMTIME: year, month, day of week (0 = Sunday), day,
/// hour, minute, second, milliseconds, each 16 bits little endian.
fn system_time(wall: SystemTime) -> [u8; 16] {
    let t = time::OffsetDateTime::from(wall);
    let fields = [
        u16::try_from(t.year()).unwrap_or(0),
        u16::from(u8::from(t.month())),
        u16::from(t.weekday().number_days_from_sunday()),
        u16::from(t.day()),
        u16::from(t.hour()),
        u16::from(t.minute()),
        u16::from(t.second()),
        t.millisecond(),
    ];
    let mut out = [0u8; 16];
    for (chunk, value) in out.chunks_exact_mut(2).zip(fields) {
        chunk.copy_from_slice(&value.to_le_bytes());
    }
    out
}

/// `wall` at `offset` after `epoch`.
pub(crate) fn wall_at(epoch: SystemTime, offset: Duration) -> SystemTime {
    epoch.checked_add(offset).unwrap_or(epoch)
}

#[cfg(test)]
mod tests {
    use super::*;
    use linklab_wire::ax25::Pid;

    fn at(seconds: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(seconds)
    }

    fn address(text: &str) -> Address {
        text.parse().unwrap()
    }

    #[test]
    fn ui_record_matches_the_agwpe_form() {
        let frame = Frame::ui(
            address("APRS"),
            address("N0CALL-1"),
            &[address("WIDE1-1")],
            Pid::NoLayer3,
            b"hi".to_vec(),
        )
        .unwrap();
        // 1 Jan 1970 + 12:34:56.
        let message = record(0, &frame.encode(), Modulus::Mod8, false, at(45_296)).unwrap();
        assert_eq!(message.header.kind, b'U');
        assert_eq!(message.header.call_from.text(), "N0CALL-1");
        assert_eq!(message.header.call_to.text(), "APRS");
        assert_eq!(
            message.data,
            b" 1:Fm N0CALL-1 To APRS Via WIDE1-1 <UI pid=F0 Len=2 P=0 >[12:34:56]\rhi\r\0"
        );
        let own = record(2, &frame.encode(), Modulus::Mod8, true, at(0)).unwrap();
        assert_eq!(own.header.kind, b'T');
        assert!(own.data.starts_with(b" 3:Fm "));
    }

    #[test]
    fn heard_record_has_text_then_two_system_times() {
        let heard = Heard {
            station: address("N0CALL-5"),
            first: at(0),
            last: at(86_400 + 3_723),
        };
        let message = heard_record(1, Some(&heard));
        let nul = message.data.iter().position(|&b| b == 0).unwrap();
        assert_eq!(
            &message.data[..nul],
            b"N0CALL-5 Thu,01Jan1970 00:00:00  Fri,02Jan1970 01:02:03"
        );
        let times = &message.data[nul + 1..];
        assert_eq!(times.len(), 32);
        // Year 1970, January, Friday (5), the 2nd, 01:02:03.
        assert_eq!(
            &times[16..30],
            &[0xB2, 0x07, 1, 0, 5, 0, 2, 0, 1, 0, 2, 0, 3, 0]
        );
        let empty = heard_record(1, None);
        assert!(empty.header.call_from.is_empty());
    }
}
