//! Where `listen` puts what each incoming connection carries: one file
//! per connection, never over a file that is already there, and never
//! under its final name unless the link ended with the peer's DISC and
//! was not reset on the way.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use linklab_link::{DisconnectReason, Event, LinkError};
use linklab_wire::ax25::{same_station, Address};

use super::log::{disconnect_reason, failure_reason};
use super::Log;
use crate::usage::usage;

/// Where `listen` writes what each connection carries.
enum Sink {
    /// Standard output; CR becomes LF when `text` (a terminal, or
    /// `--chat`): AX.25 text ends its lines with CR.
    Stdout { text: bool },
    /// `FILE` for the first connection, then `FILE.2`, `FILE.3`, ...;
    /// `force`: `FILE` may be overwritten.
    File { path: PathBuf, force: bool },
    /// `DIR/transfer-N-CALL`, N above every transfer already in `DIR`.
    Dir(PathBuf),
}

/// What one incoming connection has carried so far.
struct Incoming {
    remote: Address,
    /// The final name and the name while incomplete (none on standard
    /// output), and the file open under the latter.
    file: Option<(PathBuf, PathBuf, std::fs::File)>,
    octets: u64,
    /// Why the link was reset while this connection was up (a SABM on
    /// the link already up, FRMR, or a re-establishment after a protocol
    /// error): what the peer had sent and not yet had acknowledged was
    /// dropped, so what came is never complete.
    reset: Option<String>,
}

/// `listen`'s transfers: one per connection, each written under
/// `NAME.partial` until its link is released by the peer with DISC, then
/// renamed to `NAME`; a link that ends any other way, or was reset on the
/// way, leaves `NAME.partial`, logged as cut.
pub(crate) struct Receiver {
    sink: Sink,
    /// The lowest number the next connection's name may take.
    next: usize,
    open: Vec<Incoming>,
    /// Transfers cut so far.
    pub(crate) cut: usize,
}

/// `NAME.partial`.
fn partial_of(name: &Path) -> PathBuf {
    let mut partial = name.as_os_str().to_owned();
    partial.push(".partial");
    partial.into()
}

/// Refuses, as a usage error naming `--out`, a directory where no file
/// can be created: a file is created there and removed again.
fn check_writable(dir: &Path) -> anyhow::Result<()> {
    let probe = dir.join(format!(".linklab-out-check-{}", std::process::id()));
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
        .map_err(|e| {
            usage(format!(
                "--out: cannot create files in {}: {e}",
                dir.display()
            ))
        })?;
    std::fs::remove_file(&probe).ok();
    Ok(())
}

/// The numbers N of the `transfer-N-CALL` files (and their `.partial`)
/// in `dir`.
fn transfers_in(dir: &Path) -> anyhow::Result<usize> {
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))?;
    let mut highest = 0;
    for entry in entries {
        let name = entry.with_context(|| format!("cannot read {}", dir.display()))?;
        let name = name.file_name();
        let n = name
            .to_str()
            .and_then(|n| n.strip_prefix("transfer-"))
            .and_then(|rest| rest.split('-').next())
            .and_then(|n| n.parse::<usize>().ok());
        highest = highest.max(n.unwrap_or(0));
    }
    Ok(highest)
}

/// Whether a protocol error means the link was reset (AX.25 v2.2 C4.3,
/// fig. C4.7a): F, the peer's SABM on the link already up (6.3.4); K,
/// FRMR received; J, L, M and N, which re-establish the link. Either way
/// I frames the peer had sent and not yet had acknowledged are gone.
fn resets_the_link(error: &LinkError) -> bool {
    matches!(
        error,
        LinkError::ResetByPeer
            | LinkError::Frmr(_)
            | LinkError::NrSequence { .. }
            | LinkError::ControlFieldInvalid { .. }
            | LinkError::InfoNotPermitted { .. }
            | LinkError::FrameLength { .. }
    )
}

impl Receiver {
    /// Where `listen --out` writes, checked before any SABM is answered:
    /// a usage error naming `--out` for a directory that does not exist
    /// or where nothing can be created, or, without `force`, a `FILE`
    /// that exists. Without `out`, standard output, CR as LF if `text`.
    pub(crate) fn new(out: Option<PathBuf>, force: bool, text: bool) -> anyhow::Result<Receiver> {
        let sink = match out {
            None => Sink::Stdout { text },
            Some(dir) if dir.is_dir() => {
                if force {
                    return Err(usage(
                        "--force: --out DIR never overwrites (each connection takes the next \
                         free number); --force is for --out FILE"
                            .into(),
                    ));
                }
                check_writable(&dir)?;
                Sink::Dir(dir)
            }
            Some(path) => {
                let parent = match path.parent() {
                    Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                    _ => PathBuf::from("."),
                };
                if !parent.is_dir() {
                    return Err(usage(format!(
                        "--out: the directory {} does not exist",
                        parent.display()
                    )));
                }
                if path.exists() && !force {
                    return Err(usage(format!(
                        "--out: {} exists; give --force to overwrite it, or another name",
                        path.display()
                    )));
                }
                check_writable(&parent)?;
                Sink::File { path, force }
            }
        };
        Ok(Receiver {
            sink,
            next: 1,
            open: Vec::new(),
            cut: 0,
        })
    }

    /// The final name of connection number `n`, from `remote`.
    fn candidate(&self, n: usize, remote: &Address) -> Option<PathBuf> {
        match &self.sink {
            Sink::Stdout { .. } => None,
            Sink::File { path, .. } if n == 1 => Some(path.clone()),
            Sink::File { path, .. } => {
                let mut name = path.clone().into_os_string();
                name.push(format!(".{n}"));
                Some(name.into())
            }
            Sink::Dir(dir) => Some(dir.join(format!("transfer-{n}-{remote}"))),
        }
    }

    /// Whether connection number `n` may take a name that exists: only
    /// `--out FILE --force`, and only `FILE`.
    fn may_overwrite(&self, n: usize) -> bool {
        matches!(self.sink, Sink::File { force: true, .. }) && n == 1
    }

    /// A new file for a connection from `remote`, under `NAME.partial`:
    /// the first name from `next` on that neither exists nor has a
    /// `.partial` (in a directory, numbered above every transfer there).
    fn create(
        &mut self,
        remote: &Address,
    ) -> anyhow::Result<Option<(PathBuf, PathBuf, std::fs::File)>> {
        if let Sink::Dir(dir) = &self.sink {
            self.next = self.next.max(transfers_in(dir)? + 1);
        }
        loop {
            let n = self.next;
            let Some(name) = self.candidate(n, remote) else {
                return Ok(None);
            };
            self.next += 1;
            let partial = partial_of(&name);
            let overwrite = self.may_overwrite(n);
            if !overwrite && name.exists() {
                continue;
            }
            // Never over a `.partial`, even with --force: it holds what
            // an earlier connection was cut with.
            let opened = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&partial);
            match opened {
                Ok(file) => return Ok(Some((name, partial, file))),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(e).with_context(|| format!("cannot create {}", partial.display()))
                }
            }
        }
    }

    /// Acts on a link event; true if it ended a transfer.
    pub(crate) fn on_event(
        &mut self,
        log: &Log,
        remote: Address,
        event: Event,
    ) -> anyhow::Result<bool> {
        match event {
            Event::Connected { .. } => {
                // Raised again when a reset dropped data (6.3.4): the
                // connection goes on in the same file, marked reset.
                if !self.mark_reset(&remote, "SABM on the link already up") {
                    self.start(remote)?;
                }
                Ok(false)
            }
            Event::Error(error) if resets_the_link(&error) => {
                self.mark_reset(&remote, &error.to_string());
                Ok(false)
            }
            Event::Data { data, .. } => {
                self.write(&remote, &data)?;
                Ok(false)
            }
            Event::Disconnected {
                reason: DisconnectReason::RemoteRequest,
            } => self.end(log, &remote, None),
            Event::Disconnected { reason } => {
                self.end(log, &remote, Some(disconnect_reason(reason)))
            }
            Event::LinkFailure { reason } => self.end(log, &remote, Some(failure_reason(reason))),
            _ => Ok(false),
        }
    }

    /// Marks the open transfer from `remote` as reset, for `why` (the
    /// first reason is kept); false if none is open.
    fn mark_reset(&mut self, remote: &Address, why: &str) -> bool {
        match self
            .open
            .iter_mut()
            .find(|t| same_station(&t.remote, remote))
        {
            Some(transfer) => {
                transfer.reset.get_or_insert_with(|| why.to_string());
                true
            }
            None => false,
        }
    }

    fn start(&mut self, remote: Address) -> anyhow::Result<()> {
        let file = self.create(&remote)?;
        self.open.push(Incoming {
            remote,
            file,
            octets: 0,
            reset: None,
        });
        Ok(())
    }

    fn write(&mut self, remote: &Address, data: &[u8]) -> anyhow::Result<()> {
        if !self.open.iter().any(|t| same_station(&t.remote, remote)) {
            self.start(*remote)?;
        }
        let text = matches!(self.sink, Sink::Stdout { text: true });
        let Some(transfer) = self
            .open
            .iter_mut()
            .find(|t| same_station(&t.remote, remote))
        else {
            return Ok(());
        };
        transfer.octets += data.len() as u64;
        match &mut transfer.file {
            Some((_, partial, file)) => file
                .write_all(data)
                .with_context(|| format!("cannot write {}", partial.display())),
            None => {
                let shown = if text { cr_as_lf(data) } else { data.to_vec() };
                let mut stdout = crate::stdout::stdout();
                stdout
                    .write_all(&shown)
                    .and_then(|()| stdout.flush())
                    .context("cannot write received data")
            }
        }
    }

    /// Ends the transfer from `remote`, if one is open: complete (`cut`
    /// none, and no reset on the way) renames its file to the final name,
    /// or the next free one if a file of that name appeared meanwhile;
    /// cut keeps `NAME.partial`. Either way the octets received and how
    /// the link ended are logged.
    pub(crate) fn end(
        &mut self,
        log: &Log,
        remote: &Address,
        cut: Option<&str>,
    ) -> anyhow::Result<bool> {
        let Some(i) = self
            .open
            .iter()
            .position(|t| same_station(&t.remote, remote))
        else {
            return Ok(false);
        };
        let transfer = self.open.remove(i);
        let n = transfer.octets;
        let complete = cut.is_none() && transfer.reset.is_none();
        let place = match &transfer.file {
            Some((name, partial, file)) => {
                file.sync_all()
                    .with_context(|| format!("cannot write {}", partial.display()))?;
                if complete {
                    self.finish_file(name, partial)?.display().to_string()
                } else {
                    partial.display().to_string()
                }
            }
            None => "standard output".to_string(),
        };
        match (cut, &transfer.reset) {
            (None, None) => log.line(&format!(
                "linklab: received {n} octets from {remote}, released by the peer (DISC) -> {place}"
            )),
            (_, Some(reset)) => {
                self.cut += 1;
                log.line(&format!(
                    "linklab: cut: {n} octets received from {remote} before the link was reset \
                     ({reset}); incomplete data in {place}"
                ));
            }
            (Some(why), None) => {
                self.cut += 1;
                log.line(&format!(
                    "linklab: the link with {remote} was cut after {n} octets ({why}); \
                     incomplete data in {place}"
                ));
            }
        }
        Ok(true)
    }

    /// Renames `partial` to `name`, or, if a file `name` appeared since
    /// the transfer began (and may not be overwritten), to the next free
    /// name; the name used.
    fn finish_file(&self, name: &Path, partial: &Path) -> anyhow::Result<PathBuf> {
        let forced = matches!(&self.sink, Sink::File { path, force: true } if path == name);
        let mut target = name.to_path_buf();
        let mut k = 2;
        while !forced && target.exists() {
            let mut other = name.as_os_str().to_owned();
            other.push(format!(".{k}"));
            target = other.into();
            k += 1;
        }
        std::fs::rename(partial, &target).with_context(|| {
            format!(
                "cannot rename {} to {}",
                partial.display(),
                target.display()
            )
        })?;
        Ok(target)
    }

    /// Ends every open transfer as cut, for `why`.
    pub(crate) fn end_all(&mut self, log: &Log, why: &str) -> anyhow::Result<()> {
        while let Some(remote) = self.open.first().map(|t| t.remote) {
            self.end(log, &remote, Some(why))?;
        }
        Ok(())
    }

    pub(crate) fn remotes(&self) -> Vec<Address> {
        self.open.iter().map(|t| t.remote).collect()
    }
}

/// `data` with every CR as LF: AX.25 text ends its lines with CR (what
/// `connect` sends for each line), which a terminal takes as a return to
/// the start of the same line.
pub(crate) fn cr_as_lf(data: &[u8]) -> Vec<u8> {
    data.iter()
        .map(|&b| if b == b'\r' { b'\n' } else { b })
        .collect()
}
