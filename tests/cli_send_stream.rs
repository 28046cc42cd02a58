//! `linklab send` streams its input: a 100 MB file crosses a fast KISS hub
//! byte for byte in memory that does not depend on its size, and data
//! from standard input goes out before the input ends. (How fast the
//! first I frame leaves is measured by `bench/send_stream.sh`, not here.)

mod cli;

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::Path;
use std::process::{ChildStdin, Command, Output, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use cli::{assert_both_succeeded, finish, linklab, listen_once, tail, text, Hub, Running};

/// Peak memory the sender of a 100 MB file may reach: it reads as the
/// window opens, so this does not grow with the file.
const MEMORY_LIMIT_KB: u64 = 50 * 1024;

/// How long a 100 MB transfer may take on a loaded machine with a debug
/// build before the test gives up (a bound, not a measurement).
const LARGE_LIMIT: Duration = Duration::from_secs(600);

/// The `i`th 8 octets of the test data: SplitMix64 of `i`, so that a
/// frame out of place or repeated anywhere in the file shows.
fn word(i: u64) -> [u8; 8] {
    let mut z = i.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)).to_le_bytes()
}

/// Writes `len` octets of test data (a multiple of 8) to `out`.
fn write_data(out: &mut impl Write, from: u64, len: u64) -> std::io::Result<()> {
    let mut block = Vec::with_capacity(64 * 1024);
    for i in from / 8..(from + len) / 8 {
        block.extend_from_slice(&word(i));
        if block.len() == block.capacity() {
            out.write_all(&block)?;
            block.clear();
        }
    }
    out.write_all(&block)
}

/// Whether the file at `path` holds exactly the first `len` octets of
/// the test data, read a block at a time.
fn holds_data(path: &Path, len: u64) -> bool {
    let mut file = File::open(path).unwrap();
    let mut expected = Vec::new();
    let mut got = vec![0u8; 64 * 1024];
    let mut at = 0u64;
    loop {
        let n = read_full(&mut file, &mut got);
        if n == 0 {
            return at == len;
        }
        expected.clear();
        write_data(&mut expected, at, n as u64).unwrap();
        if got.get(..n) != Some(&expected[..]) {
            return false;
        }
        at += n as u64;
    }
}

/// Reads until `buf` is full or the file ends; the octets read.
fn read_full(file: &mut File, buf: &mut [u8]) -> usize {
    let mut n = 0;
    while n < buf.len() {
        match file.read(&mut buf[n..]).unwrap() {
            0 => break,
            m => n += m,
        }
    }
    n
}

/// The peak resident memory of process `pid` so far (VmHWM), in kB.
fn peak_memory_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Waits for `run` (killing it after `limit`), reading its peak memory
/// until it exits; the output and the last peak read.
fn finish_watching_memory(mut run: Running, limit: Duration) -> (Output, u64) {
    let end = Instant::now() + limit;
    let mut peak = 0;
    let status = loop {
        if let Some(kb) = peak_memory_kb(run.child.id()) {
            peak = peak.max(kb);
        }
        if let Some(status) = run.child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > end {
            run.child.kill().ok();
            run.child.wait().ok();
            panic!(
                "send still running after {limit:?}; killed.\nstderr:\n{}",
                tail(&run.stderr.join().unwrap())
            );
        }
        thread::sleep(Duration::from_millis(10));
    };
    let output = Output {
        status,
        stdout: run.stdout.join().unwrap(),
        stderr: run.stderr.join().unwrap(),
    };
    (output, peak)
}

fn assert_sent(sender: &Output, listener: &Output, len: u64) {
    assert_both_succeeded(sender, listener);
    let report = text(&sender.stdout);
    assert!(
        report.starts_with(&format!("sent {len} bytes to N0CALL-2 in ")),
        "{report}"
    );
}

/// A 100 MB file over a fast hub: byte for byte at the receiver, and the
/// sender's peak memory under 50 MB (it held 3.4 times the file when it
/// queued every frame at once).
#[test]
fn a_100_mb_file_is_sent_byte_exact_in_bounded_memory() {
    const LEN: u64 = 100 * 1024 * 1024;
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("input.bin");
    let output = dir.path().join("output.bin");
    let mut file = BufWriter::new(File::create(&input).unwrap());
    write_data(&mut file, 0, LEN).unwrap();
    file.into_inner().unwrap().sync_all().unwrap();
    let hub = Hub::start();
    let kiss = hub.address();
    let listener = listen_once(&kiss, &output);
    hub.wait_for_clients(1);
    let sender = linklab(&[
        "send",
        "--kiss",
        &kiss,
        "--mycall",
        "N0CALL-1",
        "--to",
        "N0CALL-2",
        input.to_str().unwrap(),
    ]);
    let (sender, peak_kb) = finish_watching_memory(sender, LARGE_LIMIT);
    let listener = cli::finish_within(listener, "listen", cli::LIMIT);
    assert_sent(&sender, &listener, LEN);
    assert!(holds_data(&output, LEN), "received data differ");
    assert!(
        0 < peak_kb && peak_kb < MEMORY_LIMIT_KB,
        "send's peak memory {peak_kb} kB, over {MEMORY_LIMIT_KB} kB"
    );
}

/// Standard input is sent as it comes: the first megabyte reaches the
/// receiver while the rest is still held back by the test (a sender that
/// read all of its input first would never send it), then all of it,
/// byte for byte.
#[test]
fn standard_input_is_sent_before_it_ends() {
    const FIRST: u64 = 1024 * 1024;
    const LEN: u64 = 8 * 1024 * 1024;
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("output.bin");
    let mut partial = output.clone().into_os_string();
    partial.push(".partial");
    let hub = Hub::start();
    let kiss = hub.address();
    let listener = listen_once(&kiss, &output);
    hub.wait_for_clients(1);
    let mut child = Command::new(env!("CARGO_BIN_EXE_linklab"))
        .args([
            "send", "--kiss", &kiss, "--mycall", "N0CALL-1", "--to", "N0CALL-2", "-",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdin: ChildStdin = child.stdin.take().unwrap();
    let (go_on, rest_wanted) = mpsc::channel::<()>();
    let writer = thread::spawn(move || {
        let mut stdin = stdin;
        write_data(&mut stdin, 0, FIRST)?;
        if rest_wanted.recv().is_ok() {
            write_data(&mut stdin, FIRST, LEN - FIRST)?;
        }
        Ok::<(), std::io::Error>(())
    });
    let pipe = |p: Option<Box<dyn Read + Send>>| {
        thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut p) = p {
                p.read_to_end(&mut bytes).ok();
            }
            bytes
        })
    };
    let stdout = pipe(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = pipe(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let sender = Running {
        child,
        stdout,
        stderr,
    };
    let end = Instant::now() + cli::LIMIT;
    while std::fs::metadata(&partial).map_or(0, |m| m.len()) == 0 {
        assert!(
            Instant::now() < end,
            "nothing received while the sender's input is open"
        );
        thread::sleep(Duration::from_millis(20));
    }
    go_on.send(()).unwrap();
    let sender = finish(sender, "send");
    writer.join().unwrap().unwrap();
    let listener = finish(listener, "listen");
    assert_sent(&sender, &listener, LEN);
    assert!(holds_data(&output, LEN), "received data differ");
}
