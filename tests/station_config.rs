//! `linklab station --check FILE` on files with one mistake each: every
//! one exits 2 and names `FILE:LINE:COLUMN`, the key (`port[1].window`)
//! and what is wrong. `--config` with a bad file starts nothing (no
//! control socket, no listening port); a good file is accepted with its
//! summary line. Every run is bounded in time (`cli::finish`).

mod cli;

use std::net::TcpListener;
use std::path::Path;

use cli::{finish, linklab, text};

/// A port the other parts of a case add to (lines 1-3).
const PORT: &str = "[[port]]\nname = \"vhf\"\nkiss = \"tcp:127.0.0.1:8001\"\n";

/// A port with a callsign, an alias and the digipeater (lines 1-6), for
/// the services: their `[[service]]` is line 7, its `callsign` line 8.
const DIGI_PORT: &str = "[[port]]\nname = \"vhf\"\nkiss = \"tcp:127.0.0.1:8001\"\n\
                         callsigns = [\"N0CALL-1\"]\naliases = [\"RELAY\"]\ndigipeat = true\n";

/// A service's table and callsign (lines 7-8 after [`DIGI_PORT`]).
const SERVICE: &str = "[[service]]\ncallsign = \"N0CALL-2\"\n";

/// A beacon's table, port and source (lines 4-6 after [`PORT`]).
const BEACON: &str = "[[beacon]]\nport = \"vhf\"\nfrom = \"N0CALL\"\n";

/// One mistake and what the checker must say about it.
struct Case {
    name: &'static str,
    text: String,
    /// Line and column (from 1), if the mistake has a place.
    at: Option<(usize, usize)>,
    /// The key path, if the mistake is about a key.
    key: Option<&'static str>,
    /// Words the message must hold.
    words: &'static [&'static str],
}

fn case(
    name: &'static str,
    text: impl Into<String>,
    at: (usize, usize),
    key: &'static str,
    words: &'static [&'static str],
) -> Case {
    Case {
        name,
        text: text.into(),
        at: Some(at),
        key: Some(key),
        words,
    }
}

/// Runs `linklab ARGS` bounded in time: exit code, stdout, stderr.
fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let out = finish(linklab(args), &args.join(" "));
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

fn check(path: &Path) -> (Option<i32>, String, String) {
    run(&["station", "--check", path.to_str().unwrap()])
}

/// Writes each case to its own file, checks it, and collects every
/// failure, so one run shows all of them.
fn run_cases(cases: Vec<Case>) {
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    let mut names = std::collections::BTreeSet::new();
    for c in &cases {
        assert!(names.insert(c.name), "two cases named {}", c.name);
        let path = dir.path().join(format!("{}.toml", c.name));
        std::fs::write(&path, &c.text).unwrap();
        let (code, stdout, stderr) = check(&path);
        let mut wrong = Vec::new();
        if code != Some(2) {
            wrong.push(format!("exit status {code:?}, not 2"));
        }
        // `linklab: error: FILE:LINE:COLUMN: KEY: MESSAGE`
        let mut head = path.display().to_string();
        if let Some((line, column)) = c.at {
            head.push_str(&format!(":{line}:{column}"));
        }
        if let Some(key) = c.key {
            head.push_str(&format!(": {key}"));
        }
        head.push_str(": ");
        let Some(line) = stderr.lines().find(|l| l.contains(&head)) else {
            wrong.push(format!("no line starting {head:?}"));
            failures.push(format!(
                "{}: {}\nstderr: {stderr}",
                c.name,
                wrong.join("; ")
            ));
            continue;
        };
        assert_eq!(stderr.lines().count(), 1, "{}: one line: {stderr}", c.name);
        let message = &line[line.find(&head).unwrap() + head.len()..];
        for w in c.words {
            if !message.contains(w) {
                wrong.push(format!("message lacks {w:?}"));
            }
        }
        if !stdout.is_empty() {
            wrong.push(format!("stdout not empty: {stdout:?}"));
        }
        if !wrong.is_empty() {
            failures.push(format!(
                "{}: {}\nstderr: {stderr}",
                c.name,
                wrong.join("; ")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases wrong:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn file_level_mistakes() {
    run_cases(vec![
        Case {
            name: "syntax_unquoted_string",
            text: "[[port]]\nname = vhf\nkiss = \"tcp:127.0.0.1:8001\"\n".into(),
            at: Some((2, 8)),
            key: None,
            words: &["invalid string", "expected `\"`"],
        },
        Case {
            name: "syntax_unclosed_list",
            text: format!("{PORT}callsigns = [\"N0CALL-1\"\n"),
            at: Some((5, 1)),
            key: None,
            words: &["invalid array", "expected `]`"],
        },
        Case {
            name: "duplicate_key",
            text: format!("{PORT}window = 3\nwindow = 4\n"),
            at: Some((5, 1)),
            key: None,
            words: &["duplicate key `window`"],
        },
        case(
            "unknown_table",
            format!("[stations]\ncallsign = \"N0CALL\"\n{PORT}"),
            (1, 2),
            "stations",
            &["unknown field `stations`", "`station`"],
        ),
        Case {
            name: "no_port",
            text: "[station]\ncallsign = \"N0CALL\"\n".into(),
            at: None,
            key: Some("port"),
            words: &["no radio port", "[[port]]"],
        },
        Case {
            name: "empty_file",
            text: String::new(),
            at: None,
            key: Some("port"),
            words: &["no radio port"],
        },
        case(
            "port_as_one_table",
            "[port]\nname = \"vhf\"\nkiss = \"tcp:127.0.0.1:8001\"\n",
            (1, 1),
            "port",
            &["expected a list", "write [[port]]"],
        ),
        case(
            "station_bad_callsign",
            format!("[station]\ncallsign = \"N0CALL-99\"\n{PORT}"),
            (2, 12),
            "station.callsign",
            &["SSID 99", "0-15"],
        ),
        case(
            "station_log_frames_not_bool",
            format!("[station]\nlog-frames = \"yes\"\n{PORT}"),
            (2, 14),
            "station.log-frames",
            &["invalid type", "boolean"],
        ),
        case(
            "station_control_not_path",
            format!("[station]\ncontrol = 5\n{PORT}"),
            (2, 11),
            "station.control",
            &["invalid type", "path"],
        ),
        case(
            "agw_listen_host_name",
            format!("[agw]\nlisten = \"localhost:8000\"\n{PORT}"),
            (2, 10),
            "agw.listen",
            &["\"localhost:8000\"", "not an address and port"],
        ),
        case(
            "agw_listen_port_only",
            format!("[agw]\nlisten = \"8000\"\n{PORT}"),
            (2, 10),
            "agw.listen",
            &["not an address and port", "127.0.0.1:8000"],
        ),
        case(
            "agw_unknown_key",
            format!("[agw]\nlisten = \"127.0.0.1:8000\"\nport = 8000\n{PORT}"),
            (3, 1),
            "agw.port",
            &["unknown field `port`", "`listen`"],
        ),
        case(
            "kiss_server_port_too_big",
            format!("[kiss-server]\nlisten = \"127.0.0.1:80000\"\n{PORT}"),
            (2, 10),
            "kiss-server.listen",
            &["not an address and port"],
        ),
        case(
            "kiss_server_same_as_agw",
            format!(
                "[agw]\nlisten = \"127.0.0.1:8000\"\n[kiss-server]\nlisten = \"127.0.0.1:8000\"\n{PORT}"
            ),
            (4, 10),
            "kiss-server.listen",
            &["127.0.0.1:8000", "AGWPE server's address too"],
        ),
        case(
            "kiss_server_overlaps_agw",
            format!(
                "[agw]\nlisten = \"127.0.0.1:8000\"\n[kiss-server]\nlisten = \"0.0.0.0:8000\"\n{PORT}"
            ),
            (4, 10),
            "kiss-server.listen",
            &["0.0.0.0:8000", "AGWPE server's 127.0.0.1:8000", "same port"],
        ),
    ]);
}

#[test]
fn port_mistakes() {
    let with = |body: &str| format!("{PORT}{body}");
    run_cases(vec![
        case(
            "unknown_key_typo",
            with("windw = 4\n"),
            (4, 1),
            "port[1].windw",
            &["unknown field `windw`", "`window`"],
        ),
        case(
            "wrong_type",
            with("window = \"four\"\n"),
            (4, 10),
            "port[1].window",
            &["invalid type", "\"four\"", "whole number from 0 to 255"],
        ),
        case(
            "negative_timer",
            with("t1-ms = -5\n"),
            (4, 9),
            "port[1].t1-ms",
            &["-5", "whole number, 0 or more"],
        ),
        case(
            "missing_kiss",
            "[[port]]\nname = \"vhf\"\n",
            (1, 1),
            "port[1].kiss",
            &["missing field `kiss`"],
        ),
        case(
            "duplicate_name",
            format!("{PORT}{PORT}"),
            (5, 8),
            "port[2].name",
            &["\"vhf\"", "above already"],
        ),
        case(
            "bad_name",
            "[[port]]\nname = \"v hf\"\nkiss = \"tcp:127.0.0.1:8001\"\n",
            (2, 8),
            "port[1].name",
            &["\"v hf\"", "letters, digits"],
        ),
        case(
            "empty_name",
            "[[port]]\nname = \"\"\nkiss = \"tcp:127.0.0.1:8001\"\n",
            (2, 8),
            "port[1].name",
            &["letters, digits"],
        ),
        case(
            "kiss_unknown_scheme",
            "[[port]]\nname = \"vhf\"\nkiss = \"udp:127.0.0.1:8001\"\n",
            (3, 8),
            "port[1].kiss",
            &["no known scheme", "tcp:HOST:PORT", "serial:DEVICE:BAUD"],
        ),
        case(
            "kiss_no_port",
            "[[port]]\nname = \"vhf\"\nkiss = \"tcp:127.0.0.1\"\n",
            (3, 8),
            "port[1].kiss",
            &["lacks the port"],
        ),
        case(
            "kiss_serial_speed_zero",
            "[[port]]\nname = \"vhf\"\nkiss = \"serial:/dev/ttyUSB0:0\"\n",
            (3, 8),
            "port[1].kiss",
            &["serial speed \"0\"", "positive"],
        ),
        case(
            "same_tcp_tnc_twice",
            format!("{PORT}[[port]]\nname = \"uhf\"\nkiss = \"tcp:127.0.0.1:8001\"\n"),
            (6, 8),
            "port[2].kiss",
            &["KISS port 0", "port \"vhf\"'s already", "kiss-port"],
        ),
        case(
            "same_serial_device_twice",
            "[[port]]\nname = \"vhf\"\nkiss = \"serial:/dev/ttyUSB0:9600\"\n\
             [[port]]\nname = \"uhf\"\nkiss = \"serial:/dev/ttyUSB0:9600\"\nkiss-port = 1\n",
            (6, 8),
            "port[2].kiss",
            &["/dev/ttyUSB0", "serial line already"],
        ),
        case(
            "kiss_port_16",
            with("kiss-port = 16\n"),
            (4, 13),
            "port[1].kiss-port",
            &["16", "not a KISS port (0-15)"],
        ),
        case(
            "txdelay_3000",
            with("txdelay-ms = 3000\n"),
            (4, 14),
            "port[1].txdelay-ms",
            &["3000 ms", "TXDELAY", "at most 2550 ms"],
        ),
        case(
            "persist_300",
            with("persist = 300\n"),
            (4, 11),
            "port[1].persist",
            &["300", "0 to 255"],
        ),
        case(
            "slot_3000",
            with("slot-ms = 3000\n"),
            (4, 11),
            "port[1].slot-ms",
            &["SLOTTIME", "2550 ms"],
        ),
        case(
            "txtail_3000",
            with("txtail-ms = 3000\n"),
            (4, 13),
            "port[1].txtail-ms",
            &["TXTAIL", "2550 ms"],
        ),
        case(
            "window_8_mod8",
            with("window = 8\n"),
            (4, 10),
            "port[1].window",
            &["k = 8", "modulo 8", "1-7"],
        ),
        case(
            "window_0",
            with("window = 0\n"),
            (4, 10),
            "port[1].window",
            &["k = 0", "1-7"],
        ),
        case(
            "window_128_mod128",
            with("mod128 = true\nwindow = 128\n"),
            (5, 10),
            "port[1].window",
            &["k = 128", "modulo 128", "1-127"],
        ),
        case(
            "srej_window_100",
            with("mod128 = true\nsrej = true\nwindow = 100\n"),
            (6, 10),
            "port[1].window",
            &["selective reject", "k <= 64", "k = 100"],
        ),
        case(
            "n1_0",
            with("n1 = 0\n"),
            (4, 6),
            "port[1].n1",
            &["N1 = 0", "1-2048"],
        ),
        case(
            "n1_5000",
            with("n1 = 5000\n"),
            (4, 6),
            "port[1].n1",
            &["N1 = 5000", "1-2048"],
        ),
        case(
            "n2_0",
            with("n2 = 0\n"),
            (4, 6),
            "port[1].n2",
            &["N2 = 0", "at least 1"],
        ),
        case(
            "t1_0",
            with("t1-ms = 0\n"),
            (4, 9),
            "port[1].t1-ms",
            &["T1", "longer than zero"],
        ),
        case(
            "t3_0",
            with("t3-ms = 0\n"),
            (4, 9),
            "port[1].t3-ms",
            &["T3", "longer than zero"],
        ),
        case(
            "ack_policy",
            with("ack-policy = \"later\"\n"),
            (4, 14),
            "port[1].ack-policy",
            &["\"later\"", "\"window\", \"t2\" or \"immediate\""],
        ),
        case(
            "callsign_too_long",
            with("callsigns = [\"N0CALL-1\", \"TOOLONGCALL\"]\n"),
            (4, 26),
            "port[1].callsigns",
            &["\"TOOLONGCALL\"", "at most 6"],
        ),
        case(
            "callsign_ssid_16",
            with("callsigns = [\"N0CALL-16\"]\n"),
            (4, 14),
            "port[1].callsigns",
            &["SSID 16", "0-15"],
        ),
        case(
            "callsign_not_string",
            with("callsigns = [\"N0CALL-1\", 7]\n"),
            (4, 26),
            "port[1].callsigns",
            &["invalid type", "expected a string"],
        ),
        case(
            "callsign_twice",
            with("callsigns = [\"N0CALL-1\", \"n0call-1\"]\n"),
            (4, 26),
            "port[1].callsigns",
            &["N0CALL-1", "listed twice"],
        ),
        case(
            "alias_is_callsign",
            with("callsigns = [\"N0CALL-1\"]\naliases = [\"N0CALL-1\"]\n"),
            (5, 12),
            "port[1].aliases",
            &["N0CALL-1", "one of the port's callsigns"],
        ),
        case(
            "digipeat_without_calls",
            with("digipeat = true\n"),
            (4, 12),
            "port[1].digipeat",
            &["digipeater needs a callsign or an alias"],
        ),
        case(
            "max_links_0",
            with("max-links = 0\n"),
            (4, 13),
            "port[1].max-links",
            &["0 links"],
        ),
        case(
            "bitrate_0",
            with("bitrate = 0\n"),
            (4, 11),
            "port[1].bitrate",
            &["0 bit/s", "1200"],
        ),
        case(
            "second_port_mistake",
            format!("{PORT}[[port]]\nname = \"uhf\"\nkiss = \"tcp:127.0.0.1:8002\"\nwindow = 9\n"),
            (7, 10),
            "port[2].window",
            &["k = 9"],
        ),
    ]);
}

#[test]
fn service_mistakes() {
    let dir = tempfile::tempdir().unwrap();
    // A file that exists but may not be run.
    let plain = dir.path().join("not-a-program");
    std::fs::write(&plain, "#!/bin/sh\n").unwrap();
    let plain = plain.display().to_string();
    let missing = dir.path().join("no-such-directory").display().to_string();
    let with = |body: &str| format!("{DIGI_PORT}{SERVICE}{body}");
    run_cases(vec![
        case(
            "none_of_three",
            with(""),
            (8, 12),
            "service[1].callsign",
            &["exactly one of `program`, `tcp` or `builtin`", "none given"],
        ),
        case(
            "two_of_three",
            with("builtin = \"echo\"\ntcp = \"127.0.0.1:6300\"\n"),
            (10, 7),
            "service[1].tcp",
            &["exactly one of", "builtin and tcp given"],
        ),
        case(
            "all_three",
            with("program = [\"/bin/cat\"]\ntcp = \"127.0.0.1:6300\"\nbuiltin = \"echo\"\n"),
            (10, 7),
            "service[1].tcp",
            &["program and tcp and builtin given"],
        ),
        case(
            "unknown_key",
            with("programme = [\"/bin/cat\"]\n"),
            (9, 1),
            "service[1].programme",
            &["unknown field `programme`", "`program`"],
        ),
        case(
            "missing_callsign",
            format!("{DIGI_PORT}[[service]]\nbuiltin = \"echo\"\n"),
            (7, 1),
            "service[1].callsign",
            &["missing field `callsign`"],
        ),
        case(
            "bad_callsign",
            format!("{DIGI_PORT}[[service]]\ncallsign = \"N0CALL-22\"\nbuiltin = \"echo\"\n"),
            (8, 12),
            "service[1].callsign",
            &["SSID 22"],
        ),
        case(
            "program_not_executable",
            with(&format!("program = [\"{plain}\", \"%u\"]\n")),
            (9, 11),
            "service[1].program",
            &["not-a-program", "not an executable file"],
        ),
        case(
            "program_not_in_path",
            with("program = [\"no-such-program-for-linklab\", \"%u\"]\n"),
            (9, 11),
            "service[1].program",
            &["\"no-such-program-for-linklab\"", "not an executable file in PATH"],
        ),
        case(
            "program_empty",
            with("program = []\n"),
            (9, 11),
            "service[1].program",
            &["empty list"],
        ),
        case(
            // Columns count characters, not octets.
            "program_argument_not_string",
            with("program = [\"/bin/echo\", \"grüß ☺\", 5]\n"),
            (9, 35),
            "service[1].program",
            &["invalid type: integer `5`", "expected a string"],
        ),
        case(
            "tcp_without_port",
            with("tcp = \"127.0.0.1\"\n"),
            (9, 7),
            "service[1].tcp",
            &["\"127.0.0.1\"", "not HOST:PORT"],
        ),
        case(
            "tcp_port_too_big",
            with("tcp = \"bbs.example:99999\"\n"),
            (9, 7),
            "service[1].tcp",
            &["not HOST:PORT"],
        ),
        case(
            "unknown_builtin",
            with("builtin = \"chat\"\n"),
            (9, 11),
            "service[1].builtin",
            &["\"chat\"", "\"greeting\", \"echo\" or \"drop\""],
        ),
        case(
            "greeting_without_text",
            with("builtin = \"greeting\"\n"),
            (9, 11),
            "service[1].text",
            &["greeting needs its `text`"],
        ),
        case(
            "text_on_echo",
            with("builtin = \"echo\"\ntext = \"hello\"\n"),
            (10, 8),
            "service[1].text",
            &["`text` is for a greeting only"],
        ),
        case(
            "drop_without_directory",
            with("builtin = \"drop\"\n"),
            (9, 11),
            "service[1].directory",
            &["file drop needs its `directory`"],
        ),
        case(
            "drop_directory_missing",
            with(&format!("builtin = \"drop\"\ndirectory = \"{missing}\"\n")),
            (10, 13),
            "service[1].directory",
            &["no-such-directory", "is not a directory"],
        ),
        case(
            "directory_on_echo",
            with("builtin = \"echo\"\ndirectory = \"/tmp\"\n"),
            (10, 13),
            "service[1].directory",
            &["`directory` is for a file drop only"],
        ),
        case(
            "same_callsign_twice",
            format!(
                "{DIGI_PORT}{SERVICE}builtin = \"echo\"\n[[service]]\ncallsign = \"n0call-2\"\nbuiltin = \"echo\"\n"
            ),
            (11, 12),
            "service[2].callsign",
            &["N0CALL-2", "answered by a service above"],
        ),
        case(
            "on_digipeater_alias",
            format!("{DIGI_PORT}[[service]]\ncallsign = \"RELAY\"\nbuiltin = \"echo\"\n"),
            (8, 12),
            "service[1].callsign",
            &["RELAY", "digipeater alias of port \"vhf\"", "callsign of its own"],
        ),
        case(
            "bad_line_ends",
            with("builtin = \"echo\"\nline-ends = \"crlf\"\n"),
            (10, 13),
            "service[1].line-ends",
            &["\"crlf\"", "\"convert\"", "\"raw\""],
        ),
        case(
            "max_sessions_0",
            with("builtin = \"echo\"\nmax-sessions = 0\n"),
            (10, 16),
            "service[1].max-sessions",
            &["0 sessions"],
        ),
    ]);
}

#[test]
fn beacon_mistakes() {
    let with = |body: &str| format!("{PORT}{BEACON}{body}");
    let long = "x".repeat(257);
    run_cases(vec![
        case(
            "unknown_port",
            format!("{PORT}[[beacon]]\nport = \"uhf\"\nfrom = \"N0CALL\"\ntext = \"hi\"\nevery-s = 600\n"),
            (5, 8),
            "beacon[1].port",
            &["no port named \"uhf\"", "\"vhf\""],
        ),
        case(
            "every_5",
            with("text = \"hi\"\nevery-s = 5\n"),
            (8, 11),
            "beacon[1].every-s",
            &["5 s", "at least 10 s"],
        ),
        case(
            "every_missing",
            with("text = \"hi\"\n"),
            (4, 1),
            "beacon[1].every-s",
            &["missing field `every-s`"],
        ),
        case(
            "text_empty",
            with("text = \"\"\nevery-s = 600\n"),
            (7, 8),
            "beacon[1].text",
            &["0 octets", "1 to 256"],
        ),
        case(
            "text_257",
            with(&format!("text = \"{long}\"\nevery-s = 600\n")),
            (7, 8),
            "beacon[1].text",
            &["257 octets", "1 to 256"],
        ),
        case(
            "via_9",
            with(
                "via = [\"A1\", \"A2\", \"A3\", \"A4\", \"A5\", \"A6\", \"A7\", \"A8\", \"A9\"]\n\
                 text = \"hi\"\nevery-s = 600\n",
            ),
            (7, 7),
            "beacon[1].via",
            &["9 digipeaters", "at most 8"],
        ),
        case(
            "via_bad_entry",
            with("via = [\"WIDE1-1\", \"WIDE2-22\"]\ntext = \"hi\"\nevery-s = 600\n"),
            (7, 19),
            "beacon[1].via",
            &["\"WIDE2-22\"", "SSID 22"],
        ),
        case(
            "bad_to",
            with("to = \"BEACON-99\"\ntext = \"hi\"\nevery-s = 600\n"),
            (7, 6),
            "beacon[1].to",
            &["SSID 99"],
        ),
        case(
            "no_source",
            format!("{PORT}[[beacon]]\nport = \"vhf\"\ntext = \"hi\"\nevery-s = 600\n"),
            (5, 8),
            "beacon[1].from",
            &["no source", "`from`", "[station] callsign"],
        ),
    ]);
}

/// A file the station accepts: two ports, every kind of service, a
/// beacon, both servers.
#[test]
fn good_file_is_accepted_with_its_summary() {
    let dir = tempfile::tempdir().unwrap();
    let drop = dir.path().join("drop");
    std::fs::create_dir(&drop).unwrap();
    let path = dir.path().join("station.toml");
    let text = format!(
        r#"[station]
callsign = "N0CALL"
control = "{control}"

[agw]
listen = "127.0.0.1:8000"

[kiss-server]
listen = "127.0.0.1:8100"

[[port]]
name = "vhf"
kiss = "tcp:127.0.0.1:8001"
callsigns = ["N0CALL-1"]
aliases = ["RELAY"]
digipeat = true
txdelay-ms = 300
window = 4

[[port]]
name = "uhf"
kiss = "serial:/dev/ttyUSB0:9600"
mod128 = true
srej = true
window = 32

[[service]]
callsign = "N0CALL-2"
program = ["cat"]

[[service]]
callsign = "N0CALL-3"
tcp = "127.0.0.1:6300"

[[service]]
callsign = "N0CALL-4"
builtin = "greeting"
text = "Hello %u, this is %c on %d"

[[service]]
callsign = "N0CALL-5"
builtin = "drop"
directory = "{drop}"

[[beacon]]
port = "vhf"
via = ["WIDE1-1"]
text = "N0CALL packet station"
every-s = 600
"#,
        control = dir.path().join("station.sock").display(),
        drop = drop.display(),
    );
    std::fs::write(&path, text).unwrap();
    let (code, stdout, stderr) = check(&path);
    assert_eq!(code, Some(0), "stderr: {stderr}");
    assert_eq!(
        stdout,
        format!(
            "{}: good: 2 ports, 4 services, 1 beacon, 0 TUN devices\n",
            path.display()
        )
    );
    assert_eq!(stderr, "");
    // Checking starts nothing either.
    assert!(!dir.path().join("station.sock").exists());
}

/// `--config` with a mistake at the end of the file exits 2 before the
/// control socket or the AGWPE and KISS servers given above the mistake
/// are opened.
#[test]
fn bad_config_starts_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let control = dir.path().join("station.sock");
    // Two free ports: ask the system for them, then let them go.
    let free = || {
        TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
    };
    let (agw, kiss) = (free(), free());
    let path = dir.path().join("station.toml");
    std::fs::write(
        &path,
        format!(
            "[station]\ncallsign = \"N0CALL\"\ncontrol = \"{}\"\n\
             [agw]\nlisten = \"{agw}\"\n[kiss-server]\nlisten = \"{kiss}\"\n\
             {PORT}{BEACON}text = \"hi\"\nevery-s = 5\n",
            control.display()
        ),
    )
    .unwrap();
    let (code, stdout, stderr) = run(&["station", "--config", path.to_str().unwrap()]);
    assert_eq!(code, Some(2), "stderr: {stderr}");
    assert!(
        stderr.contains(&format!("{}:15:11: beacon[1].every-s: ", path.display())),
        "{stderr}"
    );
    assert_eq!(stdout, "");
    assert!(!control.exists(), "the control socket was made");
    // Nothing listens where the file said: both bind here.
    TcpListener::bind(agw).expect("the AGWPE address was taken");
    TcpListener::bind(kiss).expect("the KISS server address was taken");
}

/// A file that is not there, or not readable, is a usage error too.
#[test]
fn missing_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("absent.toml");
    for flag in ["--check", "--config"] {
        let (code, _, stderr) = run(&["station", flag, path.to_str().unwrap()]);
        assert_eq!(code, Some(2), "{flag}: {stderr}");
        assert!(
            stderr.contains(&format!("{}: cannot read it", path.display())),
            "{flag}: {stderr}"
        );
    }
}

/// `[status]`: an address and port, on loopback unless `public = true`
/// says otherwise, not the AGWPE server's.
#[test]
fn status_listener_mistakes() {
    run_cases(vec![
        case(
            "status_not_loopback",
            format!("[status]\nlisten = \"0.0.0.0:8080\"\n{PORT}"),
            (2, 10),
            "status.listen",
            &["0.0.0.0:8080 is not a loopback address", "public = true"],
        ),
        case(
            "status_not_an_address",
            format!("[status]\nlisten = \"8080\"\n{PORT}"),
            (2, 10),
            "status.listen",
            &["\"8080\" is not an address and port"],
        ),
        case(
            "status_agw_port",
            format!(
                "[agw]\nlisten = \"127.0.0.1:8000\"\n[status]\nlisten = \"127.0.0.1:8000\"\n{PORT}"
            ),
            (4, 10),
            "status.listen",
            &["the AGWPE server's 127.0.0.1:8000"],
        ),
    ]);
}

/// `[dtn]`: a node ID where the node's ID goes, and a failed transfer
/// that waits before it goes again.
#[test]
fn dtn_mistakes() {
    let dtn = |eid: &str, retry: &str| {
        format!(
            "[dtn]\nport = \"vhf\"\neid = \"{eid}\"\ncallsign = \"N0CALL-12\"\n\
             store = \"dtn-store\"\napp-socket = \"dtn.sock\"\n{retry}{PORT}"
        )
    };
    run_cases(vec![
        case(
            "dtn_eid_not_a_node",
            dtn("ipn:1.5", ""),
            (3, 7),
            "dtn.eid",
            &["ipn:1.5 is not a node ID"],
        ),
        case(
            "dtn_retry_after_zero",
            dtn("ipn:1.0", "retry-after-s = 0\n"),
            (7, 17),
            "dtn.retry-after-s",
            &["waits at least 1 s"],
        ),
    ]);
}

/// A public status listener, written out, is accepted.
#[test]
fn a_public_status_listener_written_out_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("public.toml");
    std::fs::write(
        &path,
        format!("[status]\nlisten = \"0.0.0.0:8080\"\npublic = true\n{PORT}"),
    )
    .unwrap();
    let (code, _, stderr) = check(&path);
    assert_eq!(code, Some(0), "stderr: {stderr}");
}
