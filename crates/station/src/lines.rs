//! Line ends between a link and a program: packet terminals end lines
//! with CR, Unix programs with LF. [`LineEnds::Convert`] turns CR (or CR
//! LF) from the link into LF, and LF (or CR LF) from the program into CR;
//! [`LineEnds::Raw`] passes octets as they are.

use crate::config::LineEnds;

const CR: u8 = b'\r';
const LF: u8 = b'\n';

/// One direction's converter, keeping whether the last octet was a CR so
/// that a CR LF split between two reads still becomes one line end.
#[derive(Debug, Clone, Copy)]
pub struct Converter {
    mode: LineEnds,
    /// The line end the other side uses.
    to: u8,
    after_cr: bool,
}

impl Converter {
    /// From the link (CR) to the program (LF).
    pub fn to_program(mode: LineEnds) -> Converter {
        Converter {
            mode,
            to: LF,
            after_cr: false,
        }
    }

    /// From the program (LF) to the link (CR).
    pub fn to_link(mode: LineEnds) -> Converter {
        Converter {
            mode,
            to: CR,
            after_cr: false,
        }
    }

    /// `data` converted.
    pub fn convert(&mut self, data: &[u8]) -> Vec<u8> {
        if self.mode == LineEnds::Raw {
            return data.to_vec();
        }
        let mut out = Vec::with_capacity(data.len());
        for &octet in data {
            match octet {
                CR => {
                    out.push(self.to);
                    self.after_cr = true;
                }
                LF if self.after_cr => self.after_cr = false,
                LF => out.push(self.to),
                other => {
                    out.push(other);
                    self.after_cr = false;
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_lines_become_unix_lines() {
        let mut c = Converter::to_program(LineEnds::Convert);
        assert_eq!(c.convert(b"dir\rbye\r"), b"dir\nbye\n");
        // CR LF, split between two reads, is one line end.
        assert_eq!(c.convert(b"a\r"), b"a\n");
        assert_eq!(c.convert(b"\nb"), b"b");
    }

    #[test]
    fn program_lines_become_packet_lines() {
        let mut c = Converter::to_link(LineEnds::Convert);
        assert_eq!(c.convert(b"hello\nworld\r\n"), b"hello\rworld\r");
    }

    #[test]
    fn raw_passes_everything() {
        let mut c = Converter::to_link(LineEnds::Raw);
        assert_eq!(c.convert(b"a\r\nb\n"), b"a\r\nb\n");
    }
}
