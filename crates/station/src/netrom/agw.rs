//! The node as an AGWPE port: the station lists a port after its radio
//! ports ([`linklab_agw::Server::add_program_port`]), and a client that
//! connects on it to a node's alias or callsign gets a NET/ROM circuit
//! to that node, with its own callsign as the circuit's user. The
//! messages are those of an AX.25 link on a radio port (AGWPE TCP/IP
//! API: 'C', 'D', 'd', 'Y'), so `linklab connect --station` and other
//! AGWPE programs need nothing new; what they reach is the far node's
//! command line, or its application, as a user of a NET/ROM node would.

use linklab_agw::wire::{text_data, CallField, Header, Message};
use linklab_agw::ClientId;
use linklab_core::Instant;
use linklab_netrom::{CircuitEvent, CircuitHandle};

use super::{console, NetromService};

/// A circuit an AGWPE client opened.
#[derive(Debug, Clone)]
pub(super) struct ClientCircuit {
    client: ClientId,
    /// The port's number in the client's messages.
    port: u8,
    /// The client's callsign (CallFrom of its 'C').
    local: CallField,
    /// The node as the client named it (CallTo of its 'C').
    remote: CallField,
    circuit: CircuitHandle,
}

impl NetromService {
    /// Client `id`'s request on the node's port.
    pub fn client_request(&mut self, now: Instant, id: ClientId, message: Message) {
        let header = message.header;
        let found = self.clients.iter().position(|c| {
            c.client == id && c.local == header.call_from && c.remote == header.call_to
        });
        match header.kind {
            b'C' | b'c' | b'v' => {
                if found.is_some() {
                    return self.log.push(format!(
                        "NET/ROM: {id}: connect to {} ignored: that circuit is open already",
                        header.call_to.text()
                    ));
                }
                self.client_connect(now, id, header);
            }
            b'D' => match found {
                Some(i) => {
                    let circuit = self.clients[i].circuit;
                    self.send(circuit, &message.data);
                }
                None => self.log.push(format!(
                    "NET/ROM: {id}: {} octets for {} dropped: no such circuit",
                    message.data.len(),
                    header.call_to.text()
                )),
            },
            b'd' => {
                if let Some(i) = found {
                    let circuit = self.clients[i].circuit;
                    self.close(circuit);
                }
            }
            b'Y' => {
                let octets = found.map_or(0, |i| {
                    let circuit = self.clients[i].circuit;
                    self.pending.get(&circuit).map_or(0, |q| q.len())
                        + self.node.transport().unacknowledged(circuit)
                });
                let frames = octets.div_ceil(self.spec.node.transport.maximum_info_len.max(1));
                let mut reply = Header::new(header.port, b'Y');
                reply.call_from = header.call_from;
                reply.call_to = header.call_to;
                let count = u32::try_from(frames).unwrap_or(u32::MAX);
                self.to_clients
                    .push((id, Message::new(reply, count.to_le_bytes().to_vec())));
            }
            b'g' => {
                // Port capabilities: no radio settings; the circuit
                // window, the circuits open.
                let open = u8::try_from(self.clients.len()).unwrap_or(u8::MAX);
                let mut data = vec![0, 0xFF, 0, 0, 0, 0];
                data.push(self.spec.node.transport.transport_requested_window_size);
                data.push(open);
                data.extend_from_slice(&0u32.to_le_bytes());
                self.to_clients
                    .push((id, Message::new(Header::new(header.port, b'g'), data)));
            }
            _ => {}
        }
    }

    /// Client `id` went away: its circuits are closed.
    pub fn client_gone(&mut self, id: ClientId) {
        let gone: Vec<CircuitHandle> = self
            .clients
            .iter()
            .filter(|c| c.client == id)
            .map(|c| c.circuit)
            .collect();
        self.clients.retain(|c| c.client != id);
        for circuit in gone {
            self.close(circuit);
        }
    }

    fn client_connect(&mut self, now: Instant, id: ClientId, header: Header) {
        let name = header.call_to.text();
        let user = header.call_from.address();
        let target = self.node.table().resolve(&name).map(|d| d.call);
        let opened = match (user, target) {
            (Err(e), _) => Err(format!("its callsign {:?}: {e}", header.call_from.text())),
            (_, None) => Err(format!("{name} is not in the node table")),
            (Ok(user), Some(target)) => self
                .node
                .connect(now, user, target)
                .map_err(|e| e.to_string()),
        };
        match opened {
            Ok(circuit) => {
                self.log.push(format!(
                    "NET/ROM: {id} ({}) connects to {name}",
                    header.call_from.text()
                ));
                self.clients.push(ClientCircuit {
                    client: id,
                    port: header.port,
                    local: header.call_from,
                    remote: header.call_to,
                    circuit,
                });
            }
            Err(why) => {
                self.log
                    .push(format!("NET/ROM: {id}: connect to {name} refused: {why}"));
                let text = format!("*** DISCONNECTED From Station {name}\r");
                self.to_clients.push((
                    id,
                    link_message(header.port, b'd', header.call_to, header.call_from, &text),
                ));
            }
        }
    }

    /// A client circuit's event; false if the circuit is not one.
    pub(super) fn client_circuit_event(&mut self, now: Instant, event: CircuitEvent) -> bool {
        let circuit = event.circuit();
        let Some(i) = self.clients.iter().position(|c| c.circuit == circuit) else {
            return false;
        };
        let c = self.clients[i].clone();
        let say = |kind, text: &str| {
            (
                c.client,
                link_message(c.port, kind, c.remote, c.local, text),
            )
        };
        match event {
            CircuitEvent::Connected { .. } => {
                let text = format!("*** CONNECTED With Station {}\r", c.remote.text());
                self.to_clients.push(say(b'C', &text));
            }
            CircuitEvent::Readable { .. } => {
                let data = self.read(now, circuit);
                self.to_clients.push(self.data_message(&c, data));
            }
            CircuitEvent::Closed { reason, .. } => {
                let data = self.read(now, circuit);
                if !data.is_empty() {
                    self.to_clients.push(self.data_message(&c, data));
                }
                self.release(circuit);
                self.clients.remove(i);
                self.log.push(format!(
                    "NET/ROM: {} ({}) <-> {}: {reason}",
                    c.client,
                    c.local.text(),
                    c.remote.text()
                ));
                let text = format!("*** DISCONNECTED From Station {}\r", c.remote.text());
                self.to_clients.push(say(b'd', &text));
            }
            CircuitEvent::Incoming { .. } => {}
        }
        true
    }

    fn data_message(&self, c: &ClientCircuit, data: Vec<u8>) -> (ClientId, Message) {
        let mut header = Header::new(c.port, b'D');
        header.call_from = c.remote;
        header.call_to = c.local;
        header.pid = 0xF0;
        (c.client, Message::new(header, data))
    }

    /// How the node's port shows in the port list.
    pub fn port_description(&self) -> String {
        format!(
            "NET/ROM node {}",
            console::node_name(&self.spec.node.alias, &self.spec.node.call)
        )
    }
}

/// A link message as AGWPE sends it: CallFrom the far station, CallTo
/// the client's, the text NUL-terminated.
fn link_message(port: u8, kind: u8, from: CallField, to: CallField, text: &str) -> Message {
    let mut header = Header::new(port, kind);
    header.call_from = from;
    header.call_to = to;
    Message::new(header, text_data(text))
}
