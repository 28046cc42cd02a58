//! A keyboard session on a link that is up, as `call` gave: `connect`
//! and `listen --chat`. Each line typed goes with a CR at its end (AX.25
//! text ends its lines with CR); what arrives is shown with every CR as a
//! line end. A line that starts with `~` is for linklab:
//!
//! - `~.` ends the session: the link is released with DISC;
//! - `~s FILE` sends the file as it is, octet for octet;
//! - `~r FILE` writes what arrives into FILE (which must not exist)
//!   instead of the terminal, until `~r` again or the session's end;
//! - `~?` lists these; `~~` at the start of a line sends one `~`.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use linklab_io::{DriverHandle, Request};
use linklab_wire::ax25::Address;
use tokio::io::AsyncWriteExt;

use super::receiver::cr_as_lf;
use super::Log;

/// What the escapes do, shown for `~?` and an unknown escape.
const HELP: &str = "linklab: escapes at the start of a line: ~. release the link and quit; \
                    ~s FILE send a file; ~r FILE receive into a file (~r again to stop); \
                    ~? this help; ~~ a line starting with ~";

/// What a typed line asked for.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Typed {
    /// Octets were queued on the link.
    Sent,
    /// Nothing for the link (an escape done, or refused with a message).
    Nothing,
    /// `~.`: release the link and end.
    Quit,
}

/// A file `~r` is writing into.
struct Capture {
    path: PathBuf,
    file: std::fs::File,
    octets: u64,
}

/// One keyboard session with `remote`.
pub(crate) struct Session {
    remote: Address,
    /// N1 for sending, as agreed.
    pub(crate) n1: usize,
    capture: Option<Capture>,
}

impl Session {
    pub(crate) fn new(remote: Address, n1: usize) -> Session {
        Session {
            remote,
            n1,
            capture: None,
        }
    }

    /// Shows `data` from the peer, or writes it into the `~r` file.
    pub(crate) async fn on_data(&mut self, data: &[u8]) -> anyhow::Result<()> {
        if let Some(capture) = &mut self.capture {
            capture.octets += data.len() as u64;
            return capture
                .file
                .write_all(data)
                .with_context(|| format!("cannot write {}", capture.path.display()));
        }
        let mut stdout = tokio::io::stdout();
        stdout
            .write_all(&cr_as_lf(data))
            .await
            .context("cannot write to standard output")?;
        stdout
            .flush()
            .await
            .context("cannot write to standard output")
    }

    /// Acts on a line typed (without its line end).
    pub(crate) fn on_line(
        &mut self,
        handle: &DriverHandle,
        log: &Log,
        line: &str,
    ) -> anyhow::Result<Typed> {
        let Some(escape) = line.strip_prefix('~') else {
            return Ok(self.send_text(handle, line));
        };
        if let Some(literal) = escape.strip_prefix('~') {
            return Ok(self.send_text(handle, &format!("~{literal}")));
        }
        let (command, argument) = match escape.split_once(char::is_whitespace) {
            Some((c, a)) => (c, a.trim()),
            None => (escape, ""),
        };
        match (command, argument) {
            (".", _) => return Ok(Typed::Quit),
            ("?", _) => log.line(HELP),
            ("s", "") => log.line("linklab: ~s needs a file: ~s FILE"),
            ("s", path) => match std::fs::read(path) {
                Ok(data) => {
                    log.line(&format!(
                        "linklab: sending {path} ({} octets) to {}",
                        data.len(),
                        self.remote
                    ));
                    self.send(handle, &data);
                    return Ok(Typed::Sent);
                }
                Err(e) => log.line(&format!("linklab: ~s: cannot read {path}: {e}")),
            },
            ("r", path) => self.toggle_capture(log, path)?,
            _ => log.line(&format!("linklab: unknown escape ~{command}. {HELP}")),
        }
        Ok(Typed::Nothing)
    }

    /// `~r FILE` starts writing into a new FILE; `~r` alone (or with the
    /// same file) stops.
    fn toggle_capture(&mut self, log: &Log, path: &str) -> anyhow::Result<()> {
        if let Some(capture) = self.capture.take() {
            Self::close(log, capture, None)?;
            return Ok(());
        }
        if path.is_empty() {
            log.line("linklab: ~r needs a file: ~r FILE");
            return Ok(());
        }
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
        {
            Ok(file) => {
                log.line(&format!(
                    "linklab: receiving into {path} until ~r again or the end of the session"
                ));
                self.capture = Some(Capture {
                    path: path.into(),
                    file,
                    octets: 0,
                });
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                log.line(&format!("linklab: ~r: {path} exists; give another name"))
            }
            Err(e) => log.line(&format!("linklab: ~r: cannot create {path}: {e}")),
        }
        Ok(())
    }

    /// Closes a `~r` file and says what it holds; `cut`: why the link
    /// ended before the file was closed, so that it may lack the rest.
    fn close(log: &Log, capture: Capture, cut: Option<&str>) -> anyhow::Result<()> {
        capture
            .file
            .sync_all()
            .with_context(|| format!("cannot write {}", capture.path.display()))?;
        let (octets, path) = (capture.octets, capture.path.display());
        log.line(&match cut {
            None => format!("linklab: received {octets} octets into {path}"),
            Some(why) => format!(
                "linklab: cut: {octets} octets received into {path} before the link ended \
                 ({why}); it may be incomplete"
            ),
        });
        Ok(())
    }

    /// Ends the session: closes a `~r` file, saying what it holds; `cut`
    /// as for [`Session::close`].
    pub(crate) fn end(&mut self, log: &Log, cut: Option<&str>) -> anyhow::Result<()> {
        match self.capture.take() {
            Some(capture) => Self::close(log, capture, cut),
            None => Ok(()),
        }
    }

    fn send_text(&self, handle: &DriverHandle, line: &str) -> Typed {
        let mut bytes = line.as_bytes().to_vec();
        bytes.push(b'\r');
        self.send(handle, &bytes);
        Typed::Sent
    }

    /// Queues `data` in I frames of at most N1 octets.
    fn send(&self, handle: &DriverHandle, data: &[u8]) {
        for chunk in data.chunks(self.n1.max(1)) {
            handle
                .requests
                .send(Request::Send {
                    remote: self.remote,
                    data: chunk.to_vec(),
                })
                .ok();
        }
    }
}
