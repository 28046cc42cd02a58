//! The TNC shared with KISS clients (`--kiss-server`): programs that
//! speak KISS (APRS clients, another AX.25 stack) reach the same radios
//! as the AGWPE clients, and each side hears the other.
//!
//! KISS port N of the shared server is radio port N (0-15). A data frame
//! from a KISS client goes to that port's TNC, is shown to AGWPE monitor
//! clients as sent ('T') and to the other KISS clients; a frame received
//! from the air, or sent by the engine for an AGWPE client, goes to every
//! KISS client. Parameter commands are passed on to the TNC; RETURN
//! (leave KISS mode) is not, as it would end the TNC's KISS mode for
//! everyone.

use linklab_wire::ax25::AddressField;
use linklab_wire::kiss::{self, Command, Port};

use crate::port::Arrival;
use crate::server::{ClientId, Server};

/// The longest KISS frame a client may send: the AX.25 v2.2 maximum
/// (N1 = 2048, a full address field and a two-octet control field).
const MAX_FRAME: usize = linklab_io::KISS_MAX_FRAME;

/// Lines logged about one KISS client's bad input before it is only
/// dropped.
const BAD_INPUT_LINES: u32 = 10;

impl Server {
    /// A client connected to the shared KISS port.
    pub fn kiss_client_connected(&mut self) -> ClientId {
        let id = self.client_connected();
        if let Some(client) = self.clients.get_mut(&id) {
            client.kiss = Some(kiss::Decoder::new(MAX_FRAME));
        }
        id
    }

    /// Octets from a KISS client.
    pub(crate) fn handle_shared_kiss(&mut self, id: ClientId, bytes: &[u8]) {
        let mut frames = Vec::new();
        let mut errors = Vec::new();
        if let Some(decoder) = self.clients.get_mut(&id).and_then(|c| c.kiss.as_mut()) {
            decoder.push(bytes);
            for item in decoder.by_ref() {
                match item {
                    Ok(frame) => frames.push(frame),
                    Err(error) => errors.push(error.to_string()),
                }
            }
        }
        for error in errors {
            self.bad_kiss(id, format!("damaged KISS frame dropped: {error}"));
        }
        for frame in frames {
            let index = usize::from(frame.port.get());
            let Some(port) = self.ports.get_mut(index) else {
                self.bad_kiss(
                    id,
                    format!(
                        "frame for KISS port {} dropped: this server has {} radio ports",
                        index,
                        self.ports.len()
                    ),
                );
                continue;
            };
            if !port.up {
                self.bad_kiss(
                    id,
                    format!(
                        "frame for port {} dropped: its TNC is not connected",
                        index + 1
                    ),
                );
                continue;
            }
            match frame.command {
                Command::Data(data) | Command::AckMode { data, .. } => {
                    if AddressField::decode(&data).is_ok() {
                        port.transmit(data, Some(id));
                    } else {
                        self.bad_kiss(
                            id,
                            "data frame dropped: its AX.25 address field does not decode".into(),
                        );
                    }
                }
                Command::Return => {
                    self.bad_kiss(id, "RETURN not passed on: the TNC is shared".into())
                }
                command => port.pass_command(command),
            }
        }
    }

    /// A frame heard or sent on `port`, to every KISS client but the one
    /// that sent it.
    pub(crate) fn share(&mut self, port: usize, arrival: &Arrival) {
        let Some(nibble) = u8::try_from(port).ok().and_then(|p| Port::new(p).ok()) else {
            return;
        };
        let mut encoded = Vec::new();
        for (id, client) in &mut self.clients {
            if client.kiss.is_none() || arrival.origin == Some(*id) {
                continue;
            }
            if encoded.is_empty() {
                kiss::encode_into(
                    &kiss::Frame {
                        port: nibble,
                        command: Command::Data(arrival.bytes.clone()),
                    },
                    &mut encoded,
                );
            }
            client.out.extend_from_slice(&encoded);
        }
    }

    fn bad_kiss(&mut self, id: ClientId, line: String) {
        let Some(client) = self.clients.get_mut(&id) else {
            return;
        };
        client.bad_lines += 1;
        if client.bad_lines <= BAD_INPUT_LINES {
            self.note(format!("{id} (KISS): {line}"));
        }
    }
}
