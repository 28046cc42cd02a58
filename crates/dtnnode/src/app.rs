//! The application interface: how `linklab dtn send`, `linklab dtn recv`
//! or any other program talks to a node, over a Unix socket or a loopback
//! TCP port.
//!
//! Every message is one line of UTF-8 text ending in `\n`: a verb, then
//! fields `key=value` separated by single spaces (values never contain a
//! space). A message with a `length=N` field is followed by exactly `N`
//! raw octets. An `ERROR` line carries free text after the verb instead.
//!
//! The node speaks first:
//!
//! ```text
//! NODE id=dtn://a/
//! ```
//!
//! Then the application asks, and the node answers each request in order:
//!
//! | application sends | node answers |
//! |---|---|
//! | `REGISTER endpoint=EID` | `OK` or `ERROR text` |
//! | `SEND dest=EID source=EID lifetime=S reports=KINDS length=N` + octets | `SENT source=EID created=MS seq=N` or `ERROR text` |
//! | `DONE delivery=N` | nothing, or `ERROR text` if no such delivery waits for it |
//!
//! `REGISTER` makes this connection the receiver of the endpoint's bundles
//! and status reports (one connection per endpoint; it ends with the
//! connection). In `SEND`, `source` (an endpoint of the node) and
//! `lifetime` (seconds, default one day) may be left out; `reports` is a
//! comma-separated list of `received`, `forwarded`, `delivered`, `deleted`
//! (RFC 9171 4.2.3), the reports carrying times. `SENT` names the bundle
//! by source and creation timestamp (DTN milliseconds and sequence
//! number, RFC 9171 4.2.7); the node has stored it when it answers.
//!
//! At any time the node may also send, for a registered endpoint:
//!
//! ```text
//! BUNDLE delivery=N source=EID dest=EID created=MS seq=N length=N   (+ octets)
//! REPORT to=EID from=EID source=EID created=MS seq=N status=KIND@MS,KIND reason=NAME octets=N
//! ```
//!
//! A `BUNDLE` stays the node's until the application answers
//! `DONE delivery=N`, having kept the data: a bundle not confirmed (the
//! application or the node died) is delivered again, with the same source,
//! creation time and sequence number, so it can be recognised. A `REPORT`
//! is a bundle status report (RFC 9171 6.1.1) about the bundle named by
//! `source`, `created` and `seq`; each status has the DTN time it asserts
//! when the reporting node gave one; `reason` is the reason code's name
//! (6.1.1) and `octets` the length of the administrative record as this
//! node encodes it again.

use std::fmt;
use std::io;

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt};

/// The longest line accepted, in octets.
pub const MAX_LINE: usize = 64 * 1024;

/// The largest bundle payload accepted in one `SEND` or `BUNDLE`.
pub const MAX_PAYLOAD: usize = 16 * 1024 * 1024;

/// One message of the application interface: a verb, its fields, and the
/// octets that follow it, if it has a `length` field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// `NODE`, `REGISTER`, `SEND`, `SENT`, `OK`, `ERROR`, `DONE`, `BUNDLE`
    /// or `REPORT`.
    pub verb: String,
    /// The fields, in order.
    pub fields: Vec<(String, String)>,
    /// The text of an `ERROR`.
    pub text: String,
    /// The octets after the line (their length is the `length` field).
    pub body: Vec<u8>,
}

/// A line that is not a message, or a message missing what it needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtocolError(pub String);

impl fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ProtocolError {}

impl Message {
    /// A message without fields.
    pub fn new(verb: &str) -> Message {
        Message {
            verb: verb.to_string(),
            fields: Vec::new(),
            text: String::new(),
            body: Vec::new(),
        }
    }

    /// An `ERROR` with `text` (line breaks become spaces).
    pub fn error(text: impl fmt::Display) -> Message {
        let mut message = Message::new("ERROR");
        message.text = text.to_string().replace(['\n', '\r'], " ");
        message
    }

    /// Adds a field; a space or line break in `value` becomes `_`, which
    /// no well-formed value has.
    pub fn with(mut self, key: &str, value: impl fmt::Display) -> Message {
        let value = value.to_string().replace([' ', '\n', '\r'], "_");
        self.fields.push((key.to_string(), value));
        self
    }

    /// Adds the octets that follow the line (and the `length` field).
    pub fn with_body(self, body: Vec<u8>) -> Message {
        let mut message = self.with("length", body.len());
        message.body = body;
        message
    }

    /// The value of field `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The value of field `key`, which must be there.
    pub fn field(&self, key: &str) -> Result<&str, ProtocolError> {
        self.get(key)
            .ok_or_else(|| ProtocolError(format!("{} without {key}=", self.verb)))
    }

    /// Field `key` read as `T`, which must be there.
    pub fn parsed<T: std::str::FromStr>(&self, key: &str) -> Result<T, ProtocolError>
    where
        T::Err: fmt::Display,
    {
        let value = self.field(key)?;
        value
            .parse()
            .map_err(|e| ProtocolError(format!("{} {key}={value}: {e}", self.verb)))
    }

    /// The message as it goes on the wire.
    pub fn encode(&self) -> Vec<u8> {
        let mut line = self.verb.clone();
        if self.verb == "ERROR" {
            line.push(' ');
            line.push_str(&self.text);
        }
        for (key, value) in &self.fields {
            line.push(' ');
            line.push_str(key);
            line.push('=');
            line.push_str(value);
        }
        line.push('\n');
        let mut octets = line.into_bytes();
        octets.extend_from_slice(&self.body);
        octets
    }

    /// Reads a message's line (without its body) and the body length it
    /// announces.
    pub fn parse_line(line: &str) -> Result<(Message, usize), ProtocolError> {
        let line = line.strip_suffix('\n').unwrap_or(line);
        let line = line.strip_suffix('\r').unwrap_or(line);
        let (verb, rest) = line.split_once(' ').unwrap_or((line, ""));
        if verb.is_empty() || !verb.chars().all(|c| c.is_ascii_uppercase()) {
            return Err(ProtocolError(format!("not a message: {line:?}")));
        }
        let mut message = Message::new(verb);
        if verb == "ERROR" {
            message.text = rest.to_string();
            return Ok((message, 0));
        }
        for field in rest.split(' ').filter(|f| !f.is_empty()) {
            let (key, value) = field
                .split_once('=')
                .ok_or_else(|| ProtocolError(format!("{verb}: {field:?} is not key=value")))?;
            message.fields.push((key.to_string(), value.to_string()));
        }
        let length = match message.get("length") {
            None => 0,
            Some(_) => message.parsed::<usize>("length")?,
        };
        if length > MAX_PAYLOAD {
            return Err(ProtocolError(format!(
                "{verb}: length {length} is over the limit of {MAX_PAYLOAD} octets"
            )));
        }
        Ok((message, length))
    }
}

/// Reads the next message; `None` at the end of the stream. A malformed
/// line or an over-long one is an [`io::ErrorKind::InvalidData`] error.
pub async fn read_message<R: AsyncBufRead + Unpin>(reader: &mut R) -> io::Result<Option<Message>> {
    let mut line = Vec::new();
    let read = (&mut *reader)
        .take(MAX_LINE as u64 + 1)
        .read_until(b'\n', &mut line)
        .await?;
    if read == 0 {
        return Ok(None);
    }
    let invalid = |why: String| io::Error::new(io::ErrorKind::InvalidData, why);
    if line.last() != Some(&b'\n') {
        return Err(if line.len() > MAX_LINE {
            invalid(format!("a line longer than {MAX_LINE} octets"))
        } else {
            io::Error::new(io::ErrorKind::UnexpectedEof, "the stream ended mid-line")
        });
    }
    let text =
        std::str::from_utf8(&line).map_err(|_| invalid("a line that is not UTF-8".into()))?;
    let (mut message, length) = Message::parse_line(text).map_err(|e| invalid(e.0))?;
    message.body = vec![0; length];
    reader.read_exact(&mut message.body).await?;
    Ok(Some(message))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip() {
        let sent = Message::new("SEND")
            .with("dest", "ipn:2.1")
            .with("reports", "delivered,received")
            .with_body(b"hello\nworld".to_vec());
        let octets = sent.encode();
        let line_end = octets.iter().position(|&b| b == b'\n').unwrap();
        let line = std::str::from_utf8(&octets[..=line_end]).unwrap();
        assert_eq!(
            line,
            "SEND dest=ipn:2.1 reports=delivered,received length=11\n"
        );
        let (mut got, length) = Message::parse_line(line).unwrap();
        got.body = octets[line_end + 1..].to_vec();
        assert_eq!(length, 11);
        assert_eq!(got, sent);
        let error = Message::error("no such\nendpoint");
        assert_eq!(error.encode(), b"ERROR no such endpoint\n");
        assert_eq!(
            Message::parse_line("ERROR no such endpoint\n").unwrap().0,
            error
        );
    }

    #[test]
    fn bad_lines_say_why() {
        for (line, why) in [
            ("", "not a message"),
            ("send dest=x", "not a message"),
            ("SEND dest", "is not key=value"),
            ("SEND length=x", "length=x"),
            ("SEND length=99999999999", "over the limit"),
        ] {
            let e = Message::parse_line(line).unwrap_err();
            assert!(e.0.contains(why), "{line:?}: {e}");
        }
    }

    #[tokio::test(flavor = "current_thread")]
    async fn streams_are_read_message_by_message() {
        let mut octets = Message::new("OK").encode();
        octets.extend(Message::new("BUNDLE").with_body(vec![7; 3]).encode());
        octets.extend(b"GARBAGE x\n");
        let mut reader = &octets[..];
        assert_eq!(read_message(&mut reader).await.unwrap().unwrap().verb, "OK");
        assert_eq!(
            read_message(&mut reader).await.unwrap().unwrap().body,
            vec![7; 3]
        );
        let e = read_message(&mut reader).await.unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        let mut truncated = &b"BUNDLE length=5\nab"[..];
        assert!(read_message(&mut truncated).await.is_err());
        let mut empty = &b""[..];
        assert!(read_message(&mut empty).await.unwrap().is_none());
    }
}
