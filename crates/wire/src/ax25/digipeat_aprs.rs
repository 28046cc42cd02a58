//! The rules an APRS station digipeater applies under the "new paradigm"
//! (WB4APR, "The New n-N Paradigm", 2004, and the APRS 1.0.1 protocol
//! reference, chapter 3 "APRS digipeating"), on top of the AX.25 rule of
//! [`digipeat`](super::digipeat) (v2.2 3.12.5).
//!
//! A received frame's next hop is its first repeater address whose H bit
//! is 0 (3.12.5). A station digipeater repeats it when that hop is:
//!
//! - its own callsign and SSID (the AX.25 rule: H set, nothing else
//!   changed);
//! - one of its aliases (as TNC firmware's MYALIAS, e.g. `RELAY`, or
//!   `WIDE1-1` at a fill-in digipeater): the alias is replaced by the
//!   station's callsign with H set, so the path records who repeated it;
//! - an n-N alias such as `WIDE2-2` (prefix, the hop count n the sender
//!   asked for, and in the SSID the hops N still to go): N goes down by
//!   one; with tracing (as for `WIDEn-N` in Dire Wolf and the new
//!   paradigm) the station's callsign is inserted before it with H set,
//!   or replaces it once N would reach 0; without tracing the alias
//!   stays, and its H bit is set once N reaches 0.
//!
//! Never repeated: a frame the station sent itself (its callsign as the
//! source), one whose path already holds the station's callsign with H
//! set (so no station repeats a frame twice by these rules), an n-N hop
//! whose N is 0, above 7 or above n, and one asking for more hops than
//! the station allows ([`DigipeatRules::max_hops`], against `WIDE7-7`
//! floods). A path never grows past the 8 repeaters AX.25 allows (3.12.5):
//! with a full path the n-N alias is decremented without the trace.
//!
//! A repeated frame differs from the received one in its address field
//! only; its destination, source, C bits, control field, PID and
//! information field are the received octets. Duplicates (the same frame
//! heard again through another digipeater, or an untraced n-N frame heard
//! back from the next hop) are the caller's to suppress, comparing
//! [`dedupe_key`]s over a recent interval (APRS digipeaters use about 30
//! s).

use super::address::{same_station, Address, AddressField, Callsign, MAX_DIGIPEATERS};
use super::digipeat::digipeat;

/// An n-N alias family a station digipeater serves, e.g. `WIDE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NnAlias {
    /// The callsign prefix before the digit n, e.g. `WIDE` or `TRACE` (at
    /// most five characters, since n takes the sixth).
    pub prefix: Callsign,
    /// Insert this station's callsign, H set, before the alias when
    /// repeating (replacing the alias when N reaches 0), so the path
    /// shows every station that repeated the frame.
    pub trace: bool,
}

/// What a station digipeater repeats, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DigipeatRules {
    /// The station's callsign and SSID, put in the path when it repeats.
    pub mycall: Address,
    /// Aliases repeated once, each replaced by `mycall` with H set
    /// (callsign and SSID must match; e.g. `RELAY`, `WIDE1-1`).
    pub aliases: Vec<Address>,
    /// The n-N alias families served, e.g. `WIDE` with tracing.
    pub nn: Vec<NnAlias>,
    /// The most hops an n-N alias may ask for: a hop with n (or, without
    /// a digit, N) above it is not repeated. The new paradigm
    /// recommends 2 (`WIDE2-2`); 7 accepts every valid alias.
    pub max_hops: u8,
}

/// Why a hop is, or is not, repeated: the rule that matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hop {
    Mine,
    Alias,
    Nn { remaining: u8, trace: bool },
}

impl DigipeatRules {
    /// Rules for `mycall` with the new-paradigm defaults: `WIDE` n-N
    /// traced, at most 2 hops, no other alias.
    pub fn new(mycall: Address) -> DigipeatRules {
        DigipeatRules {
            mycall,
            aliases: Vec::new(),
            nn: "WIDE"
                .parse()
                .map(|prefix| {
                    vec![NnAlias {
                        prefix,
                        trace: true,
                    }]
                })
                .unwrap_or_default(),
            max_hops: 2,
        }
    }

    /// The frame this station transmits on receiving `frame` (an AX.25
    /// frame without flags and FCS, as KISS carries it), or `None` if it
    /// does not repeat it. See the [module](self) for the rules.
    pub fn apply(&self, frame: &[u8]) -> Option<Vec<u8>> {
        let (field, used) = AddressField::decode(frame).ok()?;
        // The address field, then at least a control field (3).
        let rest = frame.get(used..).filter(|r| !r.is_empty())?;
        let path = field.digipeaters();
        let next = path.iter().position(|d| !d.c_or_h())?;
        // Our call with H set anywhere, also after the next hop in a path
        // whose H bits are out of order: the frame has been through us.
        if path
            .iter()
            .any(|d| d.c_or_h() && same_station(d, &self.mycall))
        {
            return None;
        }
        let hop = self.classify(field.source(), &path[next])?;
        if hop == Hop::Mine {
            return digipeat(frame, &self.mycall);
        }
        let mut me = self.mycall;
        me.set_c_or_h(true);
        let mut via = path.to_vec();
        match hop {
            Hop::Mine => {}
            Hop::Alias => via[next] = me,
            Hop::Nn { remaining, trace } => {
                if trace && remaining == 0 {
                    via[next] = me;
                } else {
                    let alias = Address::new(via[next].callsign(), remaining).ok()?;
                    let mut alias = with_reserved(alias, &via[next]);
                    alias.set_c_or_h(remaining == 0);
                    via[next] = alias;
                    if trace && via.len() < MAX_DIGIPEATERS {
                        via.insert(next, me);
                    }
                }
            }
        }
        let out = AddressField::new(
            *field.dest(),
            *field.source(),
            &via,
            field.command_response(),
        )
        .ok()?;
        let mut repeated = Vec::with_capacity(out.encoded_len() + rest.len());
        out.encode_into(&mut repeated);
        repeated.extend_from_slice(rest);
        Some(repeated)
    }

    /// Which rule repeats a frame from `source` whose next hop is `hop`.
    fn classify(&self, source: &Address, hop: &Address) -> Option<Hop> {
        if same_station(hop, &self.mycall) {
            return Some(Hop::Mine);
        }
        if same_station(source, &self.mycall) {
            return None;
        }
        if self.aliases.iter().any(|a| same_station(a, hop)) {
            return Some(Hop::Alias);
        }
        let call = hop.callsign();
        let text = call.as_str();
        let family = self.nn.iter().find(|f| {
            text.strip_prefix(f.prefix.as_str())
                .is_some_and(|digit| digit.len() <= 1 && digit.bytes().all(|b| b.is_ascii_digit()))
        })?;
        let big_n = hop.ssid();
        let small_n = match text.len() - family.prefix.as_str().len() {
            0 => big_n,
            _ => text.bytes().last().map(|b| b - b'0')?,
        };
        let valid = (1..=7).contains(&small_n) && (1..=small_n).contains(&big_n);
        if !valid || small_n > self.max_hops {
            return None;
        }
        Some(Hop::Nn {
            remaining: big_n - 1,
            trace: family.trace,
        })
    }
}

/// What APRS digipeaters compare to suppress duplicates: the source and
/// destination (callsign and SSID, without the C and reserved bits) and
/// the information field with trailing CR, LF and spaces removed, but
/// not the repeater path, which each digipeater changes. `None` if the
/// frame's address field does not decode or it has no control field.
///
/// The information field is what follows the control field and, on I and
/// UI frames, the PID: this function reads the control octet as a
/// modulo-8 one, as APRS (UI frames) is.
pub fn dedupe_key(frame: &[u8]) -> Option<DedupeKey> {
    let (field, used) = AddressField::decode(frame).ok()?;
    let rest = frame.get(used..).filter(|r| !r.is_empty())?;
    let control = rest[0];
    // I frames (bit 0 clear) and UI (0x03 with P/F masked) carry a PID.
    let has_pid = control & 0x01 == 0 || control & !0x10 == 0x03;
    let info = if has_pid {
        rest.get(2..).unwrap_or_default()
    } else {
        rest.get(1..).unwrap_or_default()
    };
    let end = info
        .iter()
        .rposition(|b| !matches!(b, b'\r' | b'\n' | b' '))
        .map_or(0, |i| i + 1);
    let bare = |a: &Address| Address::new(a.callsign(), a.ssid()).unwrap_or(*a);
    Some(DedupeKey {
        source: bare(field.source()),
        dest: bare(field.dest()),
        info: info[..end].to_vec(),
    })
}

/// The parts of a frame APRS digipeaters compare for duplicates
/// ([`dedupe_key`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DedupeKey {
    /// The source, C and reserved bits cleared to the defaults.
    pub source: Address,
    /// The destination, likewise.
    pub dest: Address,
    /// The information field, trailing CR, LF and spaces removed.
    pub info: Vec<u8>,
}

/// `address` with the reserved bits of `like`.
fn with_reserved(mut address: Address, like: &Address) -> Address {
    // The value comes from a decoded address, so it is in range.
    let _ = address.set_reserved(like.reserved());
    address
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ax25::{Frame, Pid};
    use crate::control::Modulus;

    fn a(text: &str) -> Address {
        text.parse().unwrap()
    }

    /// `via` as "CALL" (H = 0) or "CALL*" (H = 1).
    fn path(via: &[&str]) -> Vec<Address> {
        via.iter()
            .map(|v| {
                let mut d = a(v.trim_end_matches('*'));
                d.set_c_or_h(v.ends_with('*'));
                d
            })
            .collect()
    }

    fn ui_from(source: &str, via: &[&str]) -> Vec<u8> {
        Frame::ui(
            a("APRS"),
            a(source),
            &path(via),
            Pid::NoLayer3,
            b"!4903.50N/07201.75W-".to_vec(),
        )
        .unwrap()
        .encode()
    }

    fn ui(via: &[&str]) -> Vec<u8> {
        ui_from("W1ABC", via)
    }

    /// The path of `frame` as "CALL" / "CALL*" text.
    fn shown(frame: &[u8]) -> Vec<String> {
        Frame::decode(frame, Modulus::Mod8)
            .unwrap()
            .digipeaters()
            .iter()
            .map(|d| format!("{d}{}", if d.c_or_h() { "*" } else { "" }))
            .collect()
    }

    fn rules() -> DigipeatRules {
        let mut rules = DigipeatRules::new(a("DIGI-9"));
        rules.aliases = vec![a("RELAY"), a("WIDE1-1")];
        rules
    }

    /// [`rules`] serving only the `SS` n-N family, traced or not, up to
    /// `max_hops`.
    fn ss_rules(trace: bool, max_hops: u8) -> DigipeatRules {
        let mut r = rules();
        r.nn = vec![NnAlias {
            prefix: "SS".parse().unwrap(),
            trace,
        }];
        r.max_hops = max_hops;
        r
    }

    #[test]
    fn wide_n_n_is_traced_and_decremented() {
        let r = rules();
        // Worked example: W1ABC>APRS,WIDE2-2 heard by DIGI-9.
        let once = r.apply(&ui(&["WIDE2-2"])).unwrap();
        assert_eq!(shown(&once), ["DIGI-9*", "WIDE2-1"]);
        // The next digipeater finishes the hop and replaces it.
        let mut other = rules();
        other.mycall = a("RELAY-3");
        let twice = other.apply(&once).unwrap();
        assert_eq!(shown(&twice), ["DIGI-9*", "RELAY-3*"]);
        // DIGI-9 hears its own repeat back and leaves it.
        assert_eq!(r.apply(&once), None);
        assert_eq!(r.apply(&twice), None);
        // Everything else is the received octets.
        let (_, used) = AddressField::decode(&once).unwrap();
        assert_eq!(&once[used..], &ui(&[])[14..]);
    }

    /// Found by fuzzing (`ax25_digipeat_aprs`): a full path with our call
    /// already used after the next hop, an n-N alias. The alias was
    /// counted down without our trace (no room), and the repeat, which
    /// carries our call used, was taken again for the last hop.
    #[test]
    fn our_call_used_after_the_next_hop_is_not_repeated() {
        let r = ss_rules(true, 5);
        let via = [
            "N1A*", "SS-2", "N2B", "N3C", "N4D", "DIGI-9*", "N5E*", "SS-2",
        ];
        assert_eq!(r.apply(&ui(&via)), None);
        // Still repeated with our call unused there.
        let mut unused = via;
        unused[5] = "DIGI-9";
        assert_eq!(
            shown(&r.apply(&ui(&unused)).unwrap()),
            ["N1A*", "SS-1", "N2B", "N3C", "N4D", "DIGI-9", "N5E*", "SS-2"]
        );
    }

    #[test]
    fn aliases_are_replaced_by_mycall() {
        let r = rules();
        let fill_in = r.apply(&ui(&["WIDE1-1", "WIDE2-1"])).unwrap();
        assert_eq!(shown(&fill_in), ["DIGI-9*", "WIDE2-1"]);
        let relay = r.apply(&ui(&["N0XYZ*", "RELAY"])).unwrap();
        assert_eq!(shown(&relay), ["N0XYZ*", "DIGI-9*"]);
        // Our own call: the AX.25 rule, H set in place.
        let mine = r.apply(&ui(&["DIGI-9", "WIDE2-1"])).unwrap();
        assert_eq!(
            mine,
            crate::ax25::digipeat(&ui(&["DIGI-9", "WIDE2-1"]), &a("DIGI-9")).unwrap()
        );
    }

    #[test]
    fn untraced_aliases_count_down_and_are_marked_at_zero() {
        let r = ss_rules(false, 3);
        let once = r.apply(&ui(&["SS3-3"])).unwrap();
        assert_eq!(shown(&once), ["SS3-2"]);
        let last = r.apply(&ui(&["SS3-1"])).unwrap();
        assert_eq!(shown(&last), ["SS3*"]);
        // Heard back: the same dedupe key, for the caller's history.
        assert_eq!(dedupe_key(&once), dedupe_key(&ui(&["SS3-3"])));
    }

    #[test]
    fn refused_hops() {
        let r = rules();
        for via in [
            &["WIDE7-7"][..],
            &["WIDE3-3"],
            &["WIDE3-1"],
            &["WIDE2-3"],
            &["WIDE2"],
            &["WIDE0-1"],
            &["WIDE8-1"],
            &["WIDE2-9"],
            &["WIDEX-1"],
            &["WIDE12-1"],
            &["OTHER"],
            &["WIDE2-2*"],
            &["DIGI-9*", "WIDE2-1"],
            &[],
        ] {
            assert_eq!(r.apply(&ui(via)), None, "{via:?}");
        }
        // Its own frames.
        assert_eq!(r.apply(&ui_from("DIGI-9", &["WIDE2-2"])), None);
        // Bare prefix: N is the hop count.
        let bare = r.apply(&ui(&["WIDE-2"])).unwrap();
        assert_eq!(shown(&bare), ["DIGI-9*", "WIDE-1"]);
        let mut seven = rules();
        seven.max_hops = 7;
        assert!(seven.apply(&ui(&["WIDE7-7"])).is_some());
    }

    #[test]
    fn a_full_path_is_decremented_without_the_trace() {
        let r = rules();
        let full = ["R1*", "R2*", "R3*", "R4*", "R5*", "R6*", "R7*", "WIDE2-2"];
        let out = r.apply(&ui(&full)).unwrap();
        assert_eq!(
            shown(&out),
            ["R1*", "R2*", "R3*", "R4*", "R5*", "R6*", "R7*", "WIDE2-1"]
        );
        let seven = ["R1*", "R2*", "R3*", "R4*", "R5*", "R6*", "WIDE2-2"];
        let out = r.apply(&ui(&seven)).unwrap();
        assert_eq!(out.len(), ui(&seven).len() + 7);
        assert_eq!(shown(&out)[6..], ["DIGI-9*", "WIDE2-1"]);
    }

    #[test]
    fn dedupe_key_ignores_the_path_and_trailing_blanks() {
        let plain = dedupe_key(&ui(&["WIDE2-2"])).unwrap();
        assert_eq!(
            dedupe_key(&ui(&["DIGI-9*", "WIDE2-1"])),
            Some(plain.clone())
        );
        assert_eq!(plain.source, a("W1ABC"));
        assert_eq!(plain.info, b"!4903.50N/07201.75W-");
        let padded = Frame::ui(
            a("APRS"),
            a("W1ABC"),
            &[],
            Pid::NoLayer3,
            b"!4903.50N/07201.75W- \r\n".to_vec(),
        )
        .unwrap()
        .encode();
        assert_eq!(dedupe_key(&padded), Some(plain.clone()));
        let other = Frame::ui(
            a("APRS"),
            a("W1ABD"),
            &[],
            Pid::NoLayer3,
            b"!4903.50N/07201.75W-".to_vec(),
        )
        .unwrap()
        .encode();
        assert_ne!(dedupe_key(&other), Some(plain));
        assert_eq!(dedupe_key(&[]), None);
        assert_eq!(dedupe_key(&ui(&[])[..14]), None);
    }
}
