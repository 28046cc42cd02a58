//! The AGWPE message format: a 36-octet header and its data (AGWPE
//! TCP/IP API, "Frame Structure"), as a value type and a stream decoder.
//!
//! | offset | octets | field                                            |
//! |--------|--------|--------------------------------------------------|
//! | 0      | 4      | port, little endian (0 = the first radio port)   |
//! | 4      | 4      | data kind (an ASCII letter in the first octet)   |
//! | 6      | 1      | PID (inside the kind's second 16-bit word)       |
//! | 8      | 10     | CallFrom, ASCII, NUL padded                      |
//! | 18     | 10     | CallTo, ASCII, NUL padded                        |
//! | 28     | 4      | DataLen, little endian                           |
//! | 32     | 4      | User (reserved)                                  |

use std::collections::VecDeque;

use linklab_wire::ax25::{Address, AddressError};
use thiserror::Error;

/// Length of the header.
pub const HEADER_LEN: usize = 36;

/// Length of a callsign field (nine characters and a NUL).
pub const CALL_LEN: usize = 10;

/// The most data a client's message may carry. The largest real message
/// is a 'D' with one information field or a 'P' login (510 octets); this
/// leaves room for clients that hand the engine a larger block of
/// connected data at once. A longer header is taken as a broken or hostile
/// client: the framing cannot be trusted after it.
pub const MAX_DATA_LEN: usize = 64 * 1024;

/// A callsign field: up to nine ASCII characters, NUL padded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CallField([u8; CALL_LEN]);

impl CallField {
    /// An empty field.
    pub const EMPTY: CallField = CallField([0; CALL_LEN]);

    /// The field holding `text`, cut at nine octets.
    pub fn from_text(text: &str) -> CallField {
        let mut field = [0u8; CALL_LEN];
        for (slot, byte) in field.iter_mut().zip(text.bytes().take(CALL_LEN - 1)) {
            *slot = byte;
        }
        CallField(field)
    }

    /// The field holding `address` as `CALL` or `CALL-SSID`.
    pub fn from_address(address: &Address) -> CallField {
        CallField::from_text(&address.to_string())
    }

    /// The raw octets.
    pub fn octets(&self) -> [u8; CALL_LEN] {
        self.0
    }

    /// The text up to the first NUL, spaces trimmed (clients are not
    /// required to clear the octets after it).
    pub fn text(&self) -> String {
        let end = self.0.iter().position(|&b| b == 0).unwrap_or(CALL_LEN);
        String::from_utf8_lossy(self.0.get(..end).unwrap_or_default())
            .trim()
            .to_string()
    }

    /// True if the field holds no text.
    pub fn is_empty(&self) -> bool {
        self.text().is_empty()
    }

    /// The field as an AX.25 address.
    pub fn address(&self) -> Result<Address, AddressError> {
        self.text().parse()
    }
}

/// A message header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// The radio port (0 = the first).
    pub port: u8,
    /// The data kind, an ASCII letter.
    pub kind: u8,
    /// The PID, where the kind uses one.
    pub pid: u8,
    /// CallFrom.
    pub call_from: CallField,
    /// CallTo.
    pub call_to: CallField,
    /// Octets of data that follow.
    pub data_len: u32,
    /// The reserved "User" field, carried as received.
    pub user: u32,
}

impl Header {
    /// A header of `kind` on `port` with empty fields.
    pub fn new(port: u8, kind: u8) -> Header {
        Header {
            port,
            kind,
            pid: 0,
            call_from: CallField::EMPTY,
            call_to: CallField::EMPTY,
            data_len: 0,
            user: 0,
        }
    }

    /// Decodes the 36 octets of a header. Octets 1-3 of the port field and
    /// the reserved octets 5 and 7 are ignored.
    pub fn decode(octets: &[u8; HEADER_LEN]) -> Header {
        let field = |at: usize| {
            let mut call = [0u8; CALL_LEN];
            call.copy_from_slice(&octets[at..at + CALL_LEN]);
            CallField(call)
        };
        let word = |at: usize| {
            u32::from_le_bytes([octets[at], octets[at + 1], octets[at + 2], octets[at + 3]])
        };
        Header {
            port: octets[0],
            kind: octets[4],
            pid: octets[6],
            call_from: field(8),
            call_to: field(18),
            data_len: word(28),
            user: word(32),
        }
    }

    /// The 36 octets of the header.
    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let mut out = [0u8; HEADER_LEN];
        out[0] = self.port;
        out[4] = self.kind;
        out[6] = self.pid;
        out[8..18].copy_from_slice(&self.call_from.0);
        out[18..28].copy_from_slice(&self.call_to.0);
        out[28..32].copy_from_slice(&self.data_len.to_le_bytes());
        out[32..36].copy_from_slice(&self.user.to_le_bytes());
        out
    }
}

/// A whole message: header and data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// The header; its `data_len` is the length of `data`.
    pub header: Header,
    /// The data.
    pub data: Vec<u8>,
}

impl Message {
    /// A message of `header` carrying `data` (`data_len` is set from it).
    pub fn new(mut header: Header, data: Vec<u8>) -> Message {
        header.data_len = u32::try_from(data.len()).unwrap_or(u32::MAX);
        Message { header, data }
    }

    /// Header and data as sent on the socket.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.header.encode());
        out.extend_from_slice(&self.data);
    }

    /// Octets on the socket.
    pub fn encoded_len(&self) -> usize {
        HEADER_LEN + self.data.len()
    }
}

/// Why a client's stream cannot be decoded further.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum StreamError {
    /// A header announced more data than [`MAX_DATA_LEN`].
    #[error("a '{kind}' header announces {len} octets of data, more than the {MAX_DATA_LEN} accepted; the stream cannot be trusted after it", kind = printable(*.kind))]
    TooLong {
        /// The kind octet of the header.
        kind: u8,
        /// The length announced.
        len: u32,
    },
}

/// A text message's data: the text and a NUL, counted in the length, as
/// AGWPE and Dire Wolf send them (C clients read them as strings).
pub fn text_data(text: &str) -> Vec<u8> {
    let mut data = text.as_bytes().to_vec();
    data.push(0);
    data
}

/// The kind octet as shown in messages: the letter, or its value in hex.
pub fn printable(kind: u8) -> String {
    if kind.is_ascii_graphic() {
        char::from(kind).to_string()
    } else {
        format!("0x{kind:02x}")
    }
}

/// Splits a client's byte stream into messages.
#[derive(Debug, Clone, Default)]
pub struct Decoder {
    buffer: VecDeque<u8>,
    header: Option<Header>,
    failed: Option<StreamError>,
}

impl Decoder {
    /// A decoder expecting a header.
    pub fn new() -> Decoder {
        Decoder::default()
    }

    /// Octets read from the socket.
    pub fn push(&mut self, bytes: &[u8]) {
        if self.failed.is_none() {
            self.buffer.extend(bytes);
        }
    }

    /// Octets held, not yet part of a message returned.
    pub fn buffered(&self) -> usize {
        self.buffer.len()
    }

    /// The next whole message, or the error that ended the stream (then
    /// again on every call).
    pub fn poll_message(&mut self) -> Option<Result<Message, StreamError>> {
        if let Some(error) = self.failed {
            return Some(Err(error));
        }
        let header = match self.header {
            Some(header) => header,
            None => {
                if self.buffer.len() < HEADER_LEN {
                    return None;
                }
                let mut octets = [0u8; HEADER_LEN];
                for (slot, byte) in octets.iter_mut().zip(self.buffer.drain(..HEADER_LEN)) {
                    *slot = byte;
                }
                let header = Header::decode(&octets);
                if usize::try_from(header.data_len).map_or(true, |len| len > MAX_DATA_LEN) {
                    let error = StreamError::TooLong {
                        kind: header.kind,
                        len: header.data_len,
                    };
                    self.failed = Some(error);
                    self.buffer.clear();
                    return Some(Err(error));
                }
                self.header = Some(header);
                header
            }
        };
        let len = usize::try_from(header.data_len).unwrap_or(usize::MAX);
        if self.buffer.len() < len {
            return None;
        }
        self.header = None;
        let data: Vec<u8> = self.buffer.drain(..len).collect();
        Some(Ok(Message { header, data }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trip_and_layout() {
        let mut header = Header::new(1, b'C');
        header.pid = 0xF0;
        header.call_from = CallField::from_text("N0CALL-1");
        header.call_to = CallField::from_text("N0CALL-2");
        header.data_len = 5;
        let octets = header.encode();
        assert_eq!(octets[0], 1);
        assert_eq!(octets[4], b'C');
        assert_eq!(octets[6], 0xF0);
        assert_eq!(&octets[8..16], b"N0CALL-1");
        assert_eq!(&octets[18..26], b"N0CALL-2");
        assert_eq!(&octets[28..32], &[5, 0, 0, 0]);
        assert_eq!(Header::decode(&octets), header);
    }

    #[test]
    fn call_field_stops_at_nul_and_ignores_what_follows() {
        let mut octets = [0u8; HEADER_LEN];
        octets[8..18].copy_from_slice(b"N0CALL\0XYZ");
        let header = Header::decode(&octets);
        assert_eq!(header.call_from.text(), "N0CALL");
        assert_eq!(header.call_from.address().unwrap().to_string(), "N0CALL");
        assert!(header.call_to.is_empty());
    }

    #[test]
    fn decoder_reassembles_messages_split_anywhere() {
        let mut stream = Vec::new();
        Message::new(Header::new(0, b'R'), Vec::new()).encode_into(&mut stream);
        Message::new(Header::new(0, b'D'), b"hello".to_vec()).encode_into(&mut stream);
        let mut decoder = Decoder::new();
        let mut got = Vec::new();
        for byte in stream {
            decoder.push(&[byte]);
            while let Some(item) = decoder.poll_message() {
                got.push(item.unwrap());
            }
        }
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].header.kind, b'R');
        assert_eq!(got[1].data, b"hello");
        assert_eq!(decoder.buffered(), 0);
    }

    #[test]
    fn absurd_length_ends_the_stream() {
        let mut header = Header::new(0, b'D');
        header.data_len = u32::MAX;
        let mut decoder = Decoder::new();
        decoder.push(&header.encode());
        let error = decoder.poll_message().unwrap().unwrap_err();
        assert_eq!(
            error,
            StreamError::TooLong {
                kind: b'D',
                len: u32::MAX
            }
        );
        decoder.push(&[0; 100]);
        assert_eq!(decoder.poll_message(), Some(Err(error)));
    }
}
