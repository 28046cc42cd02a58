//! A pseudo-terminal for a station, for software that speaks KISS only
//! over a serial line (kissattach, many TNC programs): the server keeps
//! the master side, the program opens the slave (`/dev/pts/N`, or a
//! symbolic link to it).

use std::fs::File;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use nix::pty::openpty;
use nix::sys::termios::{cfmakeraw, tcgetattr, tcsetattr, SetArg};

/// An open pseudo-terminal.
#[derive(Debug)]
pub struct Pty {
    /// The server's side.
    pub master: File,
    /// The slave, held open so the master keeps working while no program
    /// has the terminal open; raw mode, so KISS octets pass untouched.
    _slave: OwnedFd,
    /// The slave's path.
    pub path: PathBuf,
    /// The symbolic link made to it, removed on drop.
    link: Option<PathBuf>,
}

impl Pty {
    /// Opens a pseudo-terminal in raw mode, with a symbolic link to its
    /// slave at `link` if given (an existing symbolic link there is
    /// replaced; any other file is an error).
    pub fn open(link: Option<&Path>) -> std::io::Result<Pty> {
        let pair = openpty(None, None).map_err(std::io::Error::from)?;
        let mut termios = tcgetattr(&pair.slave).map_err(std::io::Error::from)?;
        cfmakeraw(&mut termios);
        tcsetattr(&pair.slave, SetArg::TCSANOW, &termios).map_err(std::io::Error::from)?;
        let path = nix::unistd::ttyname(&pair.slave).map_err(std::io::Error::from)?;
        if let Some(link) = link {
            match std::fs::symlink_metadata(link) {
                Ok(m) if m.file_type().is_symlink() => std::fs::remove_file(link)?,
                Ok(_) => {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::AlreadyExists,
                        format!("{} exists and is not a symbolic link", link.display()),
                    ))
                }
                Err(_) => {}
            }
            std::os::unix::fs::symlink(&path, link)?;
        }
        Ok(Pty {
            master: File::from(pair.master),
            _slave: pair.slave,
            path,
            link: link.map(Path::to_path_buf),
        })
    }
}

impl Drop for Pty {
    fn drop(&mut self) {
        if let Some(link) = &self.link {
            let _ = std::fs::remove_file(link);
        }
    }
}
