//! tshark's AX.25 dissector as an independent oracle: frames of every
//! modulo-8 kind, built with random fields, are written to a pcap and
//! tshark's decode must agree with ours field by field.
//!
//! tshark is not a build dependency: without it the test says so and passes,
//! except under CI (`CI` set), where a missing tshark is a failure
//! (`linklab_testkit::tshark`). tshark decodes every I and S frame as
//! modulo 8, so modulo-128 frames are covered by golden bytes in
//! `ax25_golden.rs` instead.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use linklab_core::Stream;
use linklab_testkit::tshark;
use linklab_wire::ax25::{Address, AddressField, CommandResponse, Frame, MultiSrejInfo, Pid};
use linklab_wire::control::{Control, Modulus, Supervisory, Unnumbered};
use linklab_wire::pcap::{LinkType, PcapWriter};
use serde_json::Value;

/// Frames generated for each frame kind.
const PER_KIND: usize = 50;

/// A fixed-seed stream, so every run checks the same frames.
struct Rng(Stream);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0.below(n)
    }
    fn bool(&mut self) -> bool {
        self.0.bernoulli(0.5)
    }
    fn address(&mut self) -> Address {
        const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
        let len = 1 + self.below(6) as usize;
        let call: String = (0..len)
            .map(|_| ALPHABET[self.below(ALPHABET.len() as u64) as usize] as char)
            .collect();
        format!("{call}-{}", self.below(16)).parse().unwrap()
    }
    fn text(&mut self, max: u64) -> Vec<u8> {
        let len = 1 + self.below(max);
        (0..len).map(|_| b' ' + self.below(95) as u8).collect()
    }
}

/// The kinds tshark is asked about, by the name tshark gives each.
const KINDS: [&str; 14] = [
    "I", "RR", "RNR", "REJ", "SREJ", "SABM", "SABME", "DISC", "DM", "UA", "FRMR", "UI", "XID",
    "TEST",
];

fn random_frame(rng: &mut Rng, kind: &str) -> Frame {
    let via: Vec<Address> = (0..rng.below(3))
        .map(|_| {
            let mut a = rng.address();
            a.set_c_or_h(rng.bool());
            a
        })
        .collect();
    // U frames go in the sense AX.25 gives them (v2.2 4.3.3): tshark, like
    // HDLC, names 0x43 sent as a response RD rather than DISC, and 0x0F sent
    // as a command SARM rather than DM.
    let cr = match kind {
        "SABM" | "SABME" | "DISC" => CommandResponse::Command,
        "DM" | "UA" | "FRMR" => CommandResponse::Response,
        _ if rng.bool() => CommandResponse::Command,
        _ => CommandResponse::Response,
    };
    let address = AddressField::new(rng.address(), rng.address(), &via, cr).unwrap();
    let (ns, nr, pf) = (rng.below(8) as u8, rng.below(8) as u8, rng.bool());
    let pid = || Some(Pid::from(0xF0));
    let (control, pid, info) = match kind {
        "I" => (Control::I { ns, nr, pf }, pid(), rng.text(256)),
        "UI" => (
            Control::U {
                kind: Unnumbered::Ui,
                pf,
            },
            pid(),
            rng.text(256),
        ),
        "RR" | "RNR" | "REJ" | "SREJ" => {
            let kind = match kind {
                "RR" => Supervisory::Rr,
                "RNR" => Supervisory::Rnr,
                "REJ" => Supervisory::Rej,
                _ => Supervisory::Srej,
            };
            // Half the SREJs are multi-SREJs (AX.25 v2.2 4.3.2.4): tshark
            // does not dissect their further N(R)s, but must still read
            // the control field and take no offence at the octets after it.
            let further = if kind == Supervisory::Srej && rng.bool() {
                let count = 1 + rng.below(7) as usize;
                let nrs: Vec<u8> = (0..count).map(|_| rng.below(8) as u8).collect();
                MultiSrejInfo::singles(nrs).encode(Modulus::Mod8).unwrap()
            } else {
                Vec::new()
            };
            (Control::S { kind, nr, pf }, None, further)
        }
        name => {
            let kind = *Unnumbered::ALL
                .iter()
                .find(|u| u.name() == name)
                .unwrap_or_else(|| panic!("no U frame named {name}"));
            let info = match kind {
                Unnumbered::Test | Unnumbered::Xid | Unnumbered::Frmr => rng.text(3),
                _ => Vec::new(),
            };
            (Control::U { kind, pf }, None, info)
        }
    };
    Frame::new(address, Modulus::Mod8, control, pid, info).unwrap()
}

/// `showname` of every field of each packet of a PDML document, by field name.
fn pdml_shownames(pdml: &str) -> Vec<BTreeMap<String, String>> {
    let attr = |tag: &str, name: &str| -> Option<String> {
        let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
        let end = tag[start..].find('"')? + start;
        Some(
            tag[start..end]
                .replace("&quot;", "\"")
                .replace("&amp;", "&"),
        )
    };
    pdml.split("<packet>")
        .skip(1)
        .map(|packet| {
            packet
                .split('<')
                .filter(|t| t.starts_with("field ") || t.starts_with("proto "))
                .filter_map(|t| Some((attr(t, "name")?, attr(t, "showname")?)))
                .collect()
        })
        .collect()
}

fn hex_colons(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// Checks one packet of tshark's decode against the frame it came from.
fn agree(frame: &Frame, json: &Value, names: &BTreeMap<String, String>) -> Result<(), String> {
    let ax25 = &json["_source"]["layers"]["ax25"];
    let field = |name: &str| ax25.get(name).and_then(Value::as_str).map(str::to_owned);
    let ctl_tree = &ax25["ax25.ctl_tree"];
    let ctl_field = |name: &str| {
        ctl_tree
            .get(name)
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let expect = |what: &str, theirs: Option<String>, ours: String| {
        if theirs.as_deref() == Some(ours.as_str()) {
            Ok(())
        } else {
            Err(format!("{what}: tshark {theirs:?}, linklab {ours:?}"))
        }
    };

    // Addresses: tshark's names for each address, and the command/response
    // sense, which it shows by calling the P/F bit P or F.
    expect(
        "destination",
        names.get("ax25.dst").cloned(),
        format!("Destination: {}", frame.dest()),
    )?;
    expect(
        "source",
        names.get("ax25.src").cloned(),
        format!("Source: {}", frame.source()),
    )?;
    for (n, digi) in frame.digipeaters().iter().enumerate() {
        let key = format!("ax25.via{}", n + 1);
        expect(
            &key,
            names.get(&key).cloned(),
            format!("Via {}: {digi}", n + 1),
        )?;
        expect(
            &format!("{key} octets (H bit)"),
            field(&key),
            hex_colons(&digi.encode(n + 1 == frame.digipeaters().len())),
        )?;
    }
    if names.contains_key(&format!("ax25.via{}", frame.digipeaters().len() + 1)) {
        return Err("tshark sees more digipeaters".into());
    }

    // Control field.
    let control = frame.control();
    let octet = control.encode(Modulus::Mod8).unwrap()[0];
    expect("control octet", field("ax25.ctl"), format!("0x{octet:02x}"))?;
    let ctl_name = names.get("ax25.ctl").cloned().unwrap_or_default();
    let func = ctl_name
        .split("func=")
        .nth(1)
        .and_then(|s| s.split([' ', ',']).next())
        .map(str::to_owned);
    let (format_letter, our_func) = match control {
        Control::I { .. } => ("I", None),
        Control::S { kind, .. } => ("S", Some(kind.name().to_owned())),
        Control::U { kind, .. } => ("U", Some(kind.name().to_owned())),
    };
    if !ctl_name.starts_with(&format!("Control field: {format_letter}")) {
        return Err(format!("frame format: tshark says {ctl_name:?}"));
    }
    if let Some(ours) = our_func {
        expect("function", func, ours)?;
    }
    // tshark names the P/F bit P in a command and F in a response (always P
    // in an I frame), and leaves it out when it is clear.
    let pf_name = match control {
        Control::S { .. } | Control::U { .. } if frame.is_response() => "ax25.ctl.f",
        _ => "ax25.ctl.p",
    };
    let pf_shown = |name: &str| ctl_field(name).filter(|v| v != "0");
    if control.pf() {
        expect(pf_name, pf_shown(pf_name), "1".into())?;
    } else if pf_shown("ax25.ctl.p").is_some() || pf_shown("ax25.ctl.f").is_some() {
        return Err("tshark sees P/F set; linklab has it clear".into());
    }
    match control {
        Control::I { ns, nr, .. } => {
            expect("N(S)", ctl_field("ax25.ctl.n_s"), ns.to_string())?;
            expect("N(R)", ctl_field("ax25.ctl.n_r"), nr.to_string())?;
        }
        Control::S { nr, .. } => expect("N(R)", ctl_field("ax25.ctl.n_r"), nr.to_string())?,
        Control::U { .. } => {}
    }

    // PID and information field. tshark's dissector looks for a PID only
    // in I frames and in UI frames whose control octet is exactly 0x03 (a
    // command with P clear), though AX.25 v2.2 (4.3.3.6) allows UI with P
    // set and as a response; for those its decode stops at the control
    // field, so there is nothing of tshark's to compare.
    let tshark_skips_pid = matches!(control, Control::U { .. }) && octet != 0x03;
    match frame.pid() {
        Some(_) if tshark_skips_pid => {}
        Some(pid) => {
            expect("PID", field("ax25.pid"), format!("0x{:02x}", u8::from(pid)))?;
            let data = json["_source"]["layers"]["ax25_nol3"]["data"]["data.data"]
                .as_str()
                .map(str::to_owned);
            expect("information field", data, hex_colons(frame.info()))?;
        }
        None => {
            if ax25.get("ax25.pid").is_some() {
                return Err("tshark found a PID in a frame without one".into());
            }
        }
    }
    Ok(())
}

fn check_kind(kind: &str, rng: &mut Rng, dir: &Path) {
    let frames: Vec<Frame> = (0..PER_KIND).map(|_| random_frame(rng, kind)).collect();
    let path = dir.join(format!("{kind}.pcap"));
    let mut writer = PcapWriter::new(Vec::new(), LinkType::Ax25).unwrap();
    for (n, f) in frames.iter().enumerate() {
        writer
            .write_packet(Duration::from_millis(n as u64), &f.encode())
            .unwrap();
    }
    std::fs::write(&path, writer.into_inner()).unwrap();

    if kind == "SREJ" {
        let filter = "_ws.malformed || _ws.expert.severity == error";
        let malformed = tshark::run(&path, &["-Y", filter]);
        assert!(malformed.trim().is_empty(), "{kind}: tshark: {malformed}");
    }
    let json: Vec<Value> = serde_json::from_str(&tshark::run(&path, &["-T", "json"])).unwrap();
    let names = pdml_shownames(&tshark::run(&path, &["-T", "pdml"]));
    assert_eq!(
        json.len(),
        PER_KIND,
        "{kind}: tshark read a different number of packets"
    );
    assert_eq!(names.len(), PER_KIND);
    for (n, frame) in frames.iter().enumerate() {
        if let Err(e) = agree(frame, &json[n], &names[n]) {
            panic!("{kind} frame {n} ({}): {e}", hex_colons(&frame.encode()));
        }
    }
}

#[test]
fn tshark_agrees_on_every_modulo_8_frame_kind() {
    if !tshark::available("AX.25") {
        return;
    }
    let dir = tshark::pcap_dir("wire");
    let mut rng = Rng(Stream::from_seed(0x4C49_4E4B_4C41_4221));
    for kind in KINDS {
        check_kind(kind, &mut rng, &dir);
    }
    std::fs::remove_dir_all(&dir).ok();
}
