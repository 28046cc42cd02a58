//! Fuzzes the station's core (`linklab_station::Core`) as a bad TNC, bad
//! callers and bad answers would: arbitrary KISS octets from the TNC,
//! well-formed frames to the station's services, its digipeater alias,
//! its IP callsign, its NET/ROM node and NODES (PID 0xCF or not), an AGWPE client writing
//! arbitrary octets, answers writing arbitrary octets and closing,
//! datagrams from the kernel, reloads, the TNC going away and coming
//! back, time advancing.
//!
//! Input: steps of one op octet (low 3 bits: what; high 5 bits: time to
//! advance, in 100 ms units) and its operands (a length octet, then that
//! many octets).
//!
//! Invariants: no panic; what goes to the TNC is whole KISS frames; the
//! core's timer never lies in the past once handled; the status report
//! serialises.
#![no_main]

mod input;

use core::time::Duration;
use std::path::Path;
use std::time::SystemTime;

use input::Input;
use libfuzzer_sys::fuzz_target;
use linklab_core::Instant;
use linklab_station::{config, Core, Output};
use linklab_wire::ax25::{Address, Frame, Pid};
use linklab_wire::kiss;

const MAX_STEPS: usize = 512;

const FILE: &str = r#"
[[port]]
name = "vhf"
kiss = "tcp:127.0.0.1:8001"
callsigns = ["N0CALL-1"]
aliases = ["RELAY"]
nn-aliases = ["WIDE"]
digipeat = true
t1-ms = 1000

[[service]]
callsign = "N0CALL-2"
builtin = "echo"

[[service]]
callsign = "N0CALL-3"
builtin = "greeting"
text = "hello %u"

[[beacon]]
port = "vhf"
text = "beacon"
every-s = 10

[[tun]]
port = "vhf"
name = "ax0"
callsign = "N0CALL-10"
addresses = ["44.128.0.1/24"]
mode = "datagram"

[netrom]
callsign = "N0CALL-5"
alias = "FUZZ"
service = "N0CALL-2"
nodes-interval-s = 60
[[netrom.port]]
name = "vhf"
quality = 192
"#;

/// Destinations the well-formed frames go to.
const DESTS: [&str; 7] = [
    "N0CALL-2", "N0CALL-3", "N0CALL-10", "N0CALL-1", "QST", "N0CALL-5", "NODES",
];

fn kiss_data(frame: Vec<u8>) -> Vec<u8> {
    let mut out = Vec::new();
    kiss::encode_into(
        &kiss::Frame {
            port: kiss::Port::default(),
            command: kiss::Command::Data(frame),
        },
        &mut out,
    );
    out
}

fuzz_target!(|data: &[u8]| {
    let config = config::parse(Path::new("fuzz.toml"), FILE).expect("the file is good");
    let mut core = Core::new(config.clone(), SystemTime::UNIX_EPOCH);
    let mut now = Instant::ZERO;
    core.port_up(now, 0);
    let client = core.server().client_connected();
    let mut tnc = kiss::Decoder::new(1 << 16);
    let mut sessions = Vec::new();
    let mut input = Input(data);
    for _ in 0..MAX_STEPS {
        let Some(op) = input.byte() else { break };
        now = now + Duration::from_millis(100 * u64::from(op >> 3));
        let len = usize::from(input.byte().unwrap_or(0));
        let operand = input.take(len);
        match op & 7 {
            0 => core.handle_kiss_bytes(now, 0, operand),
            1 => {
                // A well-formed frame: an SABM, I frame or UI to one of
                // the station's calls, through RELAY or WIDE2-2 or not.
                let dest: Address = DESTS[usize::from(operand.first().copied().unwrap_or(0)) % DESTS.len()]
                    .parse()
                    .unwrap();
                let source: Address = "N0CALL-9".parse().unwrap();
                let via: Vec<Address> = match operand.get(1).copied().unwrap_or(0) % 3 {
                    0 => Vec::new(),
                    1 => vec!["RELAY".parse().unwrap()],
                    _ => vec!["WIDE2-2".parse().unwrap()],
                };
                let pid = if operand.get(1).is_some_and(|b| b & 4 != 0) { 0xCF } else { 0xCC };
                let info = operand.get(2..).unwrap_or_default().to_vec();
                if let Ok(frame) = Frame::ui(dest, source, &via, Pid::from(pid), info) {
                    core.handle_kiss_bytes(now, 0, &kiss_data(frame.encode()));
                }
            }
            2 => core.handle_client_bytes(now, client, operand),
            3 => {
                if let Some(&id) = sessions.get(usize::from(operand.first().copied().unwrap_or(0)) % sessions.len().max(1)) {
                    core.session_send(now, id, operand);
                }
            }
            4 => {
                if let Some(&id) = sessions.first() {
                    core.session_close(now, id);
                }
            }
            5 => core.tun_datagram(now, 0, operand.to_vec()),
            6 => {
                if operand.first().is_some_and(|b| b & 1 == 0) {
                    core.port_down(now, 0, "fuzz");
                } else {
                    core.port_up(now, 0);
                }
            }
            _ => {
                let _ = core.reload(now, config.clone());
            }
        }
        if core.poll_timeout().is_some_and(|t| t <= now) {
            core.handle_timeout(now);
            assert!(core.poll_timeout().is_none_or(|t| t > now || t == now));
        }
        while let Some(output) = core.poll_output() {
            match output {
                Output::Answer { session, .. } => sessions.push(session),
                Output::Ended { session, .. } => sessions.retain(|s| *s != session),
                Output::Data { .. } | Output::Datagram { .. } => {}
            }
        }
        while core.poll_log().is_some() {}
        let _ = core.server().take_output(client);
        tnc.push(&core.server().take_tx(0));
        for frame in tnc.by_ref() {
            assert!(frame.is_ok(), "the station sent a bad KISS frame");
        }
    }
    let status = core.status(now, "fuzz.toml");
    serde_json::to_string(&status).expect("the status serialises");
});
