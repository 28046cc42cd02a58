//! `linklab encode` and `linklab decode`: the command forms and their
//! round trip through every format.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn linklab(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_linklab"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("linklab runs");
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

fn ok(out: Output) -> Vec<u8> {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

const APRS: [&str; 9] = [
    "encode", "--from", "N0CALL-1", "--to", "APRS", "--via", "WIDE1-1*", "--ui", "text",
];

#[test]
fn the_issue_example_in_every_format() {
    let expected = "N0CALL-1>APRS,WIDE1-1*: <UI C P> [F0] text\n";
    for format in ["hex", "kiss", "pcap", "pcap-kiss"] {
        let mut args = APRS.to_vec();
        args.extend(["--pf", "--format", format]);
        let encoded = ok(linklab(&args, b""));
        let decoded = ok(linklab(&["decode"], &encoded));
        assert_eq!(String::from_utf8(decoded).unwrap(), expected, "{format}");
    }
}

#[test]
fn hex_is_the_default_and_exact() {
    let hex = String::from_utf8(ok(linklab(&APRS, b""))).unwrap();
    // APRS (C bit set), N0CALL-1, WIDE1-1 with H bit and the end mark, UI, PID.
    // APRS with the command C bit, N0CALL-1, WIDE1-1 with its H bit and the
    // end-of-address mark, then UI, PID F0 and the text.
    assert_eq!(
        hex,
        "82a0a4a64040e0\
         9c608682989862\
         ae92888a6240e3\
         03f0\
         74657874\n"
    );
}

#[test]
fn i_s_and_u_frames() {
    let cases: [(&[&str], &str); 5] = [
        (
            &["--i", "hello", "--ns", "2", "--nr", "5", "--pf"],
            "N0CALL-1>N0CALL-2: <I C P S2 R5> [F0] hello",
        ),
        (
            &["--s", "rr", "--nr", "3", "--pf", "--response"],
            "N0CALL-1>N0CALL-2: <RR R F R3>",
        ),
        (
            &["--s", "srej", "--nr", "100", "--mod128"],
            "N0CALL-1>N0CALL-2: <SREJ C R100>",
        ),
        (&["--u", "sabme", "--pf"], "N0CALL-1>N0CALL-2: <SABME C P>"),
        (
            &["--u", "test", "--info", "ping"],
            "N0CALL-1>N0CALL-2: <TEST C> ping",
        ),
    ];
    for (extra, line) in cases {
        let mut args = vec!["encode", "--from", "N0CALL-1", "--to", "N0CALL-2"];
        args.extend_from_slice(extra);
        let hex = ok(linklab(&args, b""));
        let mut decode = vec!["decode", "--format", "hex"];
        if extra.contains(&"--mod128") {
            decode.push("--mod128");
        }
        let text = String::from_utf8(ok(linklab(&decode, &hex))).unwrap();
        assert_eq!(text.trim_end(), line, "{extra:?}");
    }
}

#[test]
fn output_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.pcap");
    let mut args = APRS.to_vec();
    args.extend(["--format", "pcap", "--out", path.to_str().unwrap()]);
    assert!(ok(linklab(&args, b"")).is_empty());
    let text = ok(linklab(&["decode", path.to_str().unwrap()], b""));
    assert_eq!(
        String::from_utf8(text).unwrap(),
        "N0CALL-1>APRS,WIDE1-1*: <UI C> [F0] text\n"
    );
}

#[test]
fn encode_out_has_the_short_form_o() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.hex");
    let mut args = APRS.to_vec();
    args.extend(["-o", path.to_str().unwrap()]);
    assert!(ok(linklab(&args, b"")).is_empty());
    assert_eq!(std::fs::read(&path).unwrap(), ok(linklab(&APRS, b"")));
}

#[test]
fn hex_files_longer_than_the_detection_prefix_are_detected() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.hex");
    let line = ok(linklab(&APRS, b""));
    // 100 lines of 41 octets: the 4,096-octet prefix ends inside a line.
    let text = line.repeat(100);
    assert!(text.len() > 4096 && !4096_usize.is_multiple_of(line.len()));
    std::fs::write(&path, &text).unwrap();
    let out = String::from_utf8(ok(linklab(&["decode", path.to_str().unwrap()], b""))).unwrap();
    assert_eq!(out.lines().count(), 100);
    assert!(out
        .lines()
        .all(|l| l == "N0CALL-1>APRS,WIDE1-1*: <UI C> [F0] text"));
}

#[test]
fn empty_input_decodes_to_no_frames() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty");
    std::fs::write(&path, b"").unwrap();
    let out = linklab(&["decode", path.to_str().unwrap()], b"");
    assert!(ok(out.clone()).is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("is empty: no frames"), "{stderr}");
    assert!(!stderr.contains("cannot tell"), "{stderr}");
    let out = linklab(&["decode", "-"], b"");
    assert!(ok(out).is_empty());
}

/// Runs linklab with its standard output a pipe nobody reads.
fn with_stdout_closed(args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_linklab"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("linklab runs");
    drop(child.stdout.take());
    child.wait_with_output().unwrap()
}

#[test]
fn a_closed_stdout_ends_decode_and_encode_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.hex");
    std::fs::write(&path, ok(linklab(&APRS, b"")).repeat(2000)).unwrap();
    for args in [&["decode", path.to_str().unwrap()][..], &APRS[..]] {
        let out = with_stdout_closed(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert!(
            out.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn kiss_stream_with_garbage_and_commands() {
    let mut stream = b"garbage".to_vec();
    stream.extend([0xC0, 0x01, 30, 0xC0]); // TXDELAY 300 ms
    let mut args = APRS.to_vec();
    args.extend(["--format", "kiss"]);
    stream.extend(ok(linklab(&args, b"")));
    stream.extend([0xC0, 0x00, 0x01, 0x02, 0xC0]); // a data frame too short for AX.25
    let out = linklab(&["decode", "--format", "kiss"], &stream);
    let text = String::from_utf8(ok(out)).unwrap();
    let lines: Vec<_> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert_eq!(lines[0], "KISS TXDELAY 30 (300 ms)");
    assert_eq!(lines[1], "N0CALL-1>APRS,WIDE1-1*: <UI C> [F0] text");
    assert!(lines[2].starts_with("<undecodable: "), "{}", lines[2]);
}

#[test]
fn user_errors_are_explained() {
    let out = linklab(&["decode"], b"\x01\x02 not anything");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--format pcap|kiss|hex"));

    let out = linklab(&["decode", "--format", "hex"], b"82a0 zz\n");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("line 1: 'z' is not a hex digit"));

    let out = linklab(
        &["encode", "--from", "N0CALLXX", "--to", "APRS", "--ui", "x"],
        b"",
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("N0CALLXX"));

    let out = linklab(
        &[
            "encode", "--from", "A", "--to", "B", "--s", "rr", "--nr", "9",
        ],
        b"",
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("N(R) = 9"));

    let out = linklab(&["decode", "/nonexistent/file"], b"");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read /nonexistent/file"));
}

#[test]
fn kiss_from_a_live_stream_is_decoded_as_it_arrives() {
    use std::io::{BufRead, BufReader};
    let mut args = APRS.to_vec();
    args.extend(["--format", "kiss"]);
    let frame = ok(linklab(&args, b""));
    let mut child = Command::new(env!("CARGO_BIN_EXE_linklab"))
        .arg("decode")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    for _ in 0..2 {
        // The line arrives while standard input is still open.
        stdin.write_all(&frame).unwrap();
        stdin.flush().unwrap();
        let line = lines.next().unwrap().unwrap();
        assert_eq!(line, "N0CALL-1>APRS,WIDE1-1*: <UI C> [F0] text");
    }
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

#[test]
fn hdlc_bit_streams_round_trip_and_count_what_is_dropped() {
    for line_code in [&[][..], &["--nrz"][..]] {
        let mut args = APRS.to_vec();
        args.extend(["--format", "hdlc"]);
        args.extend_from_slice(line_code);
        let bits = ok(linklab(&args, b""));
        // Two copies with three octets of noise between them.
        let mut stream = bits.clone();
        stream.extend([0x00, 0x12, 0x34]);
        stream.extend(&bits);
        let mut decode = vec!["decode", "--format", "hdlc"];
        decode.extend_from_slice(line_code);
        let out = linklab(&decode, &stream);
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        assert_eq!(
            text.lines().collect::<Vec<_>>(),
            ["N0CALL-1>APRS,WIDE1-1*: <UI C> [F0] text"; 2],
            "{line_code:?}"
        );
        // A flipped bit inside the frame is a bad FCS, reported, not shown.
        let mut damaged = bits.clone();
        damaged[12] ^= 0x10;
        let out = linklab(&decode, &damaged);
        assert!(out.status.success());
        assert!(out.stdout.is_empty());
        assert!(String::from_utf8_lossy(&out.stderr).contains("1 bad FCS"));
    }
}

#[test]
fn encode_refuses_a_ui_text_longer_than_n1_unless_raised() {
    // 5,000 octets in a UI frame once went without a word.
    let text = "x".repeat(5000);
    let out = linklab(
        &[
            "encode", "--from", "N0CALL-1", "--to", "APRS", "--ui", &text,
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--ui: 5000 octets") && err.contains("N1 = 256"),
        "{err}"
    );
    // Asked for on purpose, it is built.
    let hex = ok(linklab(
        &[
            "encode", "--from", "N0CALL-1", "--to", "APRS", "--n1", "5000", "--ui", &text,
        ],
        b"",
    ));
    assert!(hex.len() > 10_000, "{} octets of hex", hex.len());
}
