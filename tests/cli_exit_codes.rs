//! docs/cli.md's table of bad invocations is a contract: each row is run
//! from the top of the checkout, and its exit status and the text its
//! standard error must name are checked. A usage or input error is exit
//! status 2, reported before anything starts (a command that started
//! instead runs into the time limit and fails the row).

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// How long one row may take; every row is refused or fails at once.
const LIMIT: Duration = Duration::from_secs(120);

/// One row: the arguments after `linklab`, the exit status, the text.
struct Row {
    args: Vec<String>,
    exit: i32,
    names: String,
}

/// The text between the first pair of backquotes in `cell`.
fn quoted(cell: &str) -> Option<&str> {
    let start = cell.find('`')? + 1;
    let len = cell[start..].find('`')?;
    Some(&cell[start..start + len])
}

/// The rows of the table under the heading "Bad invocations, one per row".
fn rows(doc: &str) -> Vec<Row> {
    let section = doc
        .split("### Bad invocations, one per row")
        .nth(1)
        .expect("docs/cli.md has the table of bad invocations");
    section
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .map(|line| {
            let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
            let [invocation, exit, names] = cells[..] else {
                panic!("a row of three cells: {line}");
            };
            let invocation = quoted(invocation).unwrap_or_else(|| panic!("{line}"));
            let mut words = invocation.split_whitespace().map(str::to_string);
            assert_eq!(words.next().as_deref(), Some("linklab"), "{line}");
            Row {
                args: words.collect(),
                exit: exit.parse().unwrap_or_else(|_| panic!("{line}")),
                names: quoted(names).unwrap_or_else(|| panic!("{line}")).into(),
            }
        })
        .collect()
}

/// Runs `linklab ARGS` in `dir`; its exit status (None: killed at the
/// limit) and standard error.
fn run(dir: &Path, args: &[String]) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_linklab"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("linklab runs");
    let mut pipe = child.stderr.take().unwrap();
    let stderr = thread::spawn(move || {
        let mut text = String::new();
        pipe.read_to_string(&mut text).ok();
        text
    });
    let until = Instant::now() + LIMIT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.code();
        }
        if Instant::now() > until {
            child.kill().ok();
            child.wait().ok();
            break None;
        }
        thread::sleep(Duration::from_millis(20));
    };
    (status, stderr.join().unwrap())
}

#[test]
fn every_bad_invocation_in_docs_cli_md_exits_as_documented_naming_what_is_wrong() {
    let top = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(top.join("docs/cli.md")).unwrap();
    let rows = rows(&doc);
    assert!(rows.len() >= 30, "{} rows", rows.len());
    let mut wrong = Vec::new();
    for row in &rows {
        let (status, stderr) = run(top, &row.args);
        // linklab's own `linklab: error: ...`, or the parser's `error: ...`.
        let line = stderr.lines().find(|l| l.contains("error: "));
        let named = line.is_some_and(|l| l.contains(&row.names));
        if status != Some(row.exit) || !named {
            wrong.push(format!(
                "linklab {}: exit {status:?} (documented {}), stderr {stderr:?} (must name {:?})",
                row.args.join(" "),
                row.exit,
                row.names
            ));
        }
        // One error line, with no Rust debug form in it.
        assert!(!stderr.contains("Error {"), "{stderr}");
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn an_os_error_is_printed_once() {
    // A port taken by another program: the bind error's cause appears once.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let args: Vec<String> = ["channel", "--bind", "127.0.0.1", "--base-port", &port]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let (status, stderr) = run(Path::new(env!("CARGO_MANIFEST_DIR")), &args);
    assert_eq!(status, Some(1), "{stderr}");
    assert_eq!(stderr.matches("os error").count(), 1, "{stderr}");
}
