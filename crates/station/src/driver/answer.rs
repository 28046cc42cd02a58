//! What answers a call to a service: a program (its standard streams
//! joined to the link, paced by the link's queue), a TCP service, or the
//! builtins; and how each is ended when its link ends.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, SystemTime};

use linklab_core::Instant;
use linklab_wire::ax25::Address;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use super::Input;
use crate::config::Answer;
use crate::core::{Core, Output, SessionId};

/// How long a program whose link ended has between SIGTERM and SIGKILL.
pub const PROGRAM_GRACE: Duration = Duration::from_secs(5);

/// Chunks queued for a program's standard input (or a TCP service)
/// before it counts as not reading.
const ANSWER_QUEUE: usize = 256;

/// What answers one session.
pub(super) enum Answerer {
    /// A program or TCP service: a writer queue and the tasks.
    Stream {
        writer: mpsc::Sender<Vec<u8>>,
        accepting: watch::Sender<bool>,
        tasks: Vec<JoinHandle<()>>,
        child: Option<u32>,
    },
    /// Sends back what it gets.
    Echo,
    /// Writes what it gets to a file.
    Drop { file: File, partial: PathBuf },
}

impl Answerer {
    /// Lets the readers go on by one more chunk if the link takes data
    /// now (each waits for this after every chunk it passes on).
    pub(super) fn pace(&self, accepting: bool) {
        if let Answerer::Stream { accepting: a, .. } = self {
            if accepting {
                a.send_replace(true);
            } else {
                a.send_if_modified(|v| std::mem::replace(v, false));
            }
        }
    }

    /// Ends the answer: a program gets SIGTERM, then SIGKILL after
    /// [`PROGRAM_GRACE`].
    pub(super) fn stop(self) {
        if let Answerer::Stream { tasks, child, .. } = self {
            for task in tasks {
                task.abort();
            }
            if let Some(pid) = child {
                terminate(pid);
            }
        }
    }
}

/// SIGTERM to `pid`, and SIGKILL [`PROGRAM_GRACE`] later if it is still
/// there (it is our child: it stays a zombie, so the pid is not reused,
/// until its waiter task reaps it).
fn terminate(pid: u32) {
    use nix::sys::signal::{kill, Signal};
    use nix::unistd::Pid;
    let Ok(raw) = i32::try_from(pid) else {
        return;
    };
    let pid = Pid::from_raw(raw);
    let _ = kill(pid, Signal::SIGTERM);
    tokio::spawn(async move {
        tokio::time::sleep(PROGRAM_GRACE).await;
        let _ = kill(pid, Signal::SIGKILL);
    });
}

pub(super) fn answer(
    core: &mut Core,
    answers: &mut BTreeMap<SessionId, Answerer>,
    output: Output,
    now: Instant,
    input: &mpsc::Sender<Input>,
    log: &impl Fn(&str),
) {
    match output {
        Output::Answer {
            session,
            answer,
            caller,
            called,
            port,
        } => {
            let vars = Vars {
                caller,
                called,
                port: &port,
            };
            match answer {
                Answer::Greeting { text } => {
                    // Packet lines end with CR, whatever the file wrote.
                    let mut text = vars.expand(&text).replace("\r\n", "\r").replace('\n', "\r");
                    if !text.ends_with('\r') {
                        text.push('\r');
                    }
                    core.session_send(now, session, text.as_bytes());
                    core.session_close(now, session);
                }
                Answer::Echo => {
                    answers.insert(session, Answerer::Echo);
                }
                Answer::Drop { directory } => match drop_file(&directory, &caller, session) {
                    Ok((file, partial)) => {
                        log(&format!("{session}: receiving into {}", partial.display()));
                        answers.insert(session, Answerer::Drop { file, partial });
                    }
                    Err(e) => {
                        log(&format!(
                            "{session}: cannot make a file in {}: {e}",
                            directory.display()
                        ));
                        core.session_send(now, session, b"The file drop is out of order.\r");
                        core.session_close(now, session);
                    }
                },
                Answer::Program { argv } => match spawn_program(&argv, &vars, session, input) {
                    Ok(answerer) => {
                        answers.insert(session, answerer);
                    }
                    Err(e) => {
                        log(&format!("{session}: cannot run {:?}: {e}", argv.first()));
                        core.session_send(now, session, b"The service is out of order.\r");
                        core.session_close(now, session);
                    }
                },
                Answer::Tcp { address } => {
                    answers.insert(session, spawn_tcp(address, session, input));
                }
            }
        }
        Output::Data { session, data } => match answers.get_mut(&session) {
            Some(Answerer::Echo) => core.session_send(now, session, &data),
            Some(Answerer::Drop { file, partial }) => {
                if let Err(e) = file.write_all(&data) {
                    log(&format!(
                        "{session}: writing {} failed: {e}",
                        partial.display()
                    ));
                    answers.remove(&session);
                    core.session_close(now, session);
                }
            }
            Some(Answerer::Stream { writer, .. }) if writer.try_send(data).is_err() => {
                log(&format!(
                    "{session}: the service does not read what the caller sends; ending it"
                ));
                if let Some(answerer) = answers.remove(&session) {
                    answerer.stop();
                }
                core.session_close(now, session);
            }
            Some(Answerer::Stream { .. }) | None => {}
        },
        Output::Datagram { .. } => {}
        Output::Ended { session, released } => match answers.remove(&session) {
            Some(Answerer::Drop { file, partial }) => {
                finish_drop(file, &partial, released, session, log);
            }
            Some(answerer) => answerer.stop(),
            None => {}
        },
    }
}

/// The words `%u`, `%U`, `%c`, `%d` and `%%` stand for in a service's
/// arguments and greeting.
struct Vars<'a> {
    caller: Address,
    called: Address,
    port: &'a str,
}

impl Vars<'_> {
    fn expand(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut chars = text.chars();
        while let Some(c) = chars.next() {
            if c != '%' {
                out.push(c);
                continue;
            }
            match chars.next() {
                Some('u') => out.push_str(&self.caller.to_string()),
                Some('U') => out.push_str(&self.caller.callsign().to_string()),
                Some('c') => out.push_str(&self.called.to_string()),
                Some('d') => out.push_str(self.port),
                Some('%') => out.push('%'),
                Some(other) => {
                    out.push('%');
                    out.push(other);
                }
                None => out.push('%'),
            }
        }
        out
    }
}

fn spawn_program(
    argv: &[String],
    vars: &Vars<'_>,
    session: SessionId,
    input: &mpsc::Sender<Input>,
) -> std::io::Result<Answerer> {
    let args: Vec<String> = argv.iter().map(|a| vars.expand(a)).collect();
    let Some((program, rest)) = args.split_first() else {
        return Err(std::io::Error::other("no program"));
    };
    let mut child = tokio::process::Command::new(program)
        .args(rest)
        .env("LINKLAB_CALLER", vars.caller.to_string())
        .env("LINKLAB_CALLER_BASE", vars.caller.callsign().to_string())
        .env("LINKLAB_CALLED", vars.called.to_string())
        .env("LINKLAB_PORT", vars.port)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(false)
        .spawn()?;
    let pid = child.id();
    let stdin = child.stdin.take();
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let (accepting, accepting_rx) = watch::channel(true);
    let (writer, writer_rx) = mpsc::channel::<Vec<u8>>(ANSWER_QUEUE);
    let mut tasks = Vec::new();
    if let Some(stdin) = stdin {
        tasks.push(tokio::spawn(feed(stdin, writer_rx)));
    }
    let mut readers = Vec::new();
    if let Some(stdout) = stdout {
        readers.push(tokio::spawn(pump(
            stdout,
            session,
            accepting_rx.clone(),
            input.clone(),
        )));
    }
    if let Some(stderr) = stderr {
        readers.push(tokio::spawn(pump(
            stderr,
            session,
            accepting_rx,
            input.clone(),
        )));
    }
    let done = input.clone();
    // The waiter is not aborted with the session: it reaps the child.
    tokio::spawn(async move {
        let status = child.wait().await;
        for reader in readers {
            reader.await.ok();
        }
        let why = match status {
            Ok(s) => format!("the program ended ({s})"),
            Err(e) => format!("waiting for the program failed: {e}"),
        };
        done.send(Input::AnswerDone(session, why)).await.ok();
    });
    Ok(Answerer::Stream {
        writer,
        accepting,
        tasks,
        child: pid,
    })
}

fn spawn_tcp(address: String, session: SessionId, input: &mpsc::Sender<Input>) -> Answerer {
    let (accepting, accepting_rx) = watch::channel(true);
    let (writer, writer_rx) = mpsc::channel::<Vec<u8>>(ANSWER_QUEUE);
    let input = input.clone();
    let task = tokio::spawn(async move {
        let why = match TcpStream::connect(&address).await {
            Ok(stream) => {
                stream.set_nodelay(true).ok();
                let (reader, writer) = stream.into_split();
                let feeder = tokio::spawn(feed(writer, writer_rx));
                pump(reader, session, accepting_rx, input.clone()).await;
                feeder.abort();
                format!("the TCP service {address} closed the connection")
            }
            Err(e) => {
                let line = format!("The service is out of order ({e}).\n");
                input
                    .send(Input::AnswerBytes(session, line.into_bytes()))
                    .await
                    .ok();
                format!("cannot reach the TCP service {address}: {e}")
            }
        };
        input.send(Input::AnswerDone(session, why)).await.ok();
    });
    Answerer::Stream {
        writer,
        accepting,
        tasks: vec![task],
        child: None,
    }
}

/// Writes what comes on `queue` to `out` until either ends.
pub(super) async fn feed(mut out: impl AsyncWrite + Unpin, mut queue: mpsc::Receiver<Vec<u8>>) {
    while let Some(data) = queue.recv().await {
        if out.write_all(&data).await.is_err() {
            return;
        }
    }
}

/// Octets read from a program or TCP service at a time: four I frames
/// at the default N1.
const ANSWER_CHUNK: usize = 1024;

/// Reads `source` to the session while its link takes data: after each
/// chunk it waits until the loop has seen the link take more
/// ([`Answerer::pace`]), so a program that floods waits in its write
/// with at most one chunk beyond the link's queue limit in flight.
async fn pump(
    mut source: impl AsyncRead + Unpin,
    session: SessionId,
    mut accepting: watch::Receiver<bool>,
    input: mpsc::Sender<Input>,
) {
    let mut buf = vec![0u8; ANSWER_CHUNK];
    loop {
        match source.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                let data = buf.get(..n).unwrap_or_default().to_vec();
                accepting.mark_unchanged();
                if input.send(Input::AnswerBytes(session, data)).await.is_err() {
                    return;
                }
            }
        }
        loop {
            if accepting.changed().await.is_err() {
                return;
            }
            if *accepting.borrow_and_update() {
                break;
            }
        }
    }
}

/// A new `.partial` file for a drop from `caller`.
fn drop_file(
    directory: &Path,
    caller: &Address,
    session: SessionId,
) -> std::io::Result<(File, PathBuf)> {
    let stamp = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let base = format!("{caller}-{stamp}-{}", session.0);
    let partial = directory.join(format!("{base}.partial"));
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&partial)?;
    Ok((file, partial))
}

/// A drop's file gets its final name if the caller released the link
/// with DISC; otherwise it stays `.partial`.
fn finish_drop(
    file: File,
    partial: &Path,
    released: bool,
    session: SessionId,
    log: &impl Fn(&str),
) {
    let synced = file.sync_all();
    drop(file);
    let done = partial.with_extension("");
    match (released, synced) {
        (true, Ok(())) => match std::fs::rename(partial, &done) {
            Ok(()) => log(&format!("{session}: stored {}", done.display())),
            Err(e) => log(&format!(
                "{session}: cannot rename {}: {e}",
                partial.display()
            )),
        },
        (true, Err(e)) => log(&format!(
            "{session}: cannot write {}: {e}",
            partial.display()
        )),
        (false, _) => log(&format!(
            "{session}: the link failed; what arrived is kept as {}",
            partial.display()
        )),
    }
}
