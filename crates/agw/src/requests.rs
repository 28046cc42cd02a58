//! The client requests an AGWPE engine answers, kind by kind (AGWPE
//! TCP/IP API, "Frames sent by the Application to AGWPE").

use std::time::Duration;

use linklab_core::Instant;
use linklab_io::StationError;
use linklab_link::State;
use linklab_wire::ax25::{Address, AddressField, Frame, Pid};
use linklab_wire::control::Modulus;

use crate::monitor::{self, HEARD_MAX};
use crate::port::{key, RadioPort};
use crate::server::{ClientId, Owner, Server, UNKNOWN_KIND_LINES};
use crate::wire::{printable, text_data, CallField, Header, Message, CALL_LEN};

/// The version the 'R' answer gives: the AGWPE release Dire Wolf's
/// server reports too, late enough for every client that checks one
/// (UI-View32 wants 2000.15 or later).
pub const VERSION: (u32, u32) = (2005, 127);

impl Server {
    pub(crate) fn handle_message(&mut self, now: Instant, id: ClientId, message: Message) {
        let header = message.header;
        if self.is_program_port(usize::from(header.port))
            && matches!(header.kind, b'C' | b'c' | b'v' | b'D' | b'd' | b'Y' | b'g')
        {
            self.program_requests.push_back((id, message));
            return;
        }
        match header.kind {
            b'R' => {
                let mut data = VERSION.0.to_le_bytes().to_vec();
                data.extend_from_slice(&VERSION.1.to_le_bytes());
                self.send(id, &Message::new(Header::new(0, b'R'), data));
            }
            b'G' => {
                let descriptions = self.ports.iter().map(|p| &p.config.description);
                let descriptions: Vec<&String> = descriptions.chain(&self.program_ports).collect();
                let mut text = format!("{};", descriptions.len());
                for (i, description) in descriptions.iter().enumerate() {
                    text.push_str(&format!("Port{} {};", i + 1, description.replace(';', ",")));
                }
                let mut data = text.into_bytes();
                data.push(0);
                self.send(id, &Message::new(Header::new(0, b'G'), data));
            }
            b'g' => self.port_caps(now, id, header),
            b'H' => self.heard(id, header),
            b'X' => self.register(id, header),
            b'x' => self.unregister(id, header),
            b'm' => {
                if let Some(c) = self.clients.get_mut(&id) {
                    c.monitor = !c.monitor;
                }
            }
            b'k' => {
                if let Some(c) = self.clients.get_mut(&id) {
                    c.raw = !c.raw;
                }
            }
            b'y' => {
                let count = self
                    .ports
                    .get(usize::from(header.port))
                    .map_or(0, RadioPort::outstanding);
                let reply = Message::new(Header::new(header.port, b'y'), u32_data(count));
                self.send(id, &reply);
            }
            b'Y' => self.outstanding(id, header),
            b'C' | b'c' | b'v' => self.connect(now, id, &message),
            b'D' => self.data(id, message),
            b'd' => self.disconnect(now, id, header),
            b'M' | b'V' => self.unproto(now, id, &message),
            b'K' => self.raw_frame(now, id, &message),
            // Login: this server has no accounts; the socket is the
            // boundary (it listens on loopback unless told otherwise).
            b'P' => {}
            kind => {
                let Some(client) = self.clients.get_mut(&id) else {
                    return;
                };
                client.bad_lines += 1;
                let n = client.bad_lines;
                if n <= UNKNOWN_KIND_LINES {
                    self.note(format!(
                        "{id}: message of unknown kind '{}' ({} octets of data) ignored{}",
                        printable(kind),
                        message.data.len(),
                        if n == UNKNOWN_KIND_LINES {
                            "; further ones are not logged"
                        } else {
                            ""
                        }
                    ));
                }
            }
        }
    }

    /// The port a request names, or a log line saying why not.
    fn port_of(&mut self, id: ClientId, header: &Header, up: bool) -> Option<usize> {
        let port = usize::from(header.port);
        match self.ports.get(port) {
            None => {
                self.note(format!(
                    "{id}: '{}' names port {}, but this server has {} (numbered from 0 in the header)",
                    printable(header.kind),
                    port,
                    self.ports.len()
                ));
                None
            }
            Some(p) if up && !p.up => {
                self.note(format!(
                    "{id}: '{}' on port {}: its TNC is not connected",
                    printable(header.kind),
                    port + 1
                ));
                None
            }
            Some(_) => Some(port),
        }
    }

    /// The two callsigns of a link request, or a log line.
    fn calls(&mut self, id: ClientId, header: &Header) -> Option<(Address, Address)> {
        match (header.call_from.address(), header.call_to.address()) {
            (Ok(local), Ok(remote)) => Some((local, remote)),
            (Err(e), _) => {
                self.note(format!(
                    "{id}: '{}': CallFrom {:?}: {e}",
                    printable(header.kind),
                    header.call_from.text()
                ));
                None
            }
            (_, Err(e)) => {
                self.note(format!(
                    "{id}: '{}': CallTo {:?}: {e}",
                    printable(header.kind),
                    header.call_to.text()
                ));
                None
            }
        }
    }

    fn register(&mut self, id: ClientId, header: Header) {
        let ok = match header.call_from.address() {
            Err(e) => {
                self.note(format!(
                    "{id}: cannot register {:?}: {e}",
                    header.call_from.text()
                ));
                false
            }
            Ok(call) if self.reserved.contains(&key(&call)) => {
                self.note(format!(
                    "{id}: cannot register {call}: the station's own IP or DTN service answers it"
                ));
                false
            }
            Ok(call) => match self.registry.get(&key(&call)) {
                Some(holder) if *holder != id => {
                    self.note(format!("{id}: cannot register {call}: {holder} holds it"));
                    false
                }
                _ => {
                    self.registry.insert(key(&call), id);
                    for port in &mut self.ports {
                        if let Some(station) = port.stations.get_mut(&key(&call)) {
                            station.set_listening(true);
                        }
                    }
                    true
                }
            },
        };
        let mut reply = Header::new(header.port, b'X');
        reply.call_from = header.call_from;
        self.send(id, &Message::new(reply, vec![u8::from(ok)]));
    }

    fn unregister(&mut self, id: ClientId, header: Header) {
        let Ok(call) = header.call_from.address() else {
            return;
        };
        if self.registry.get(&key(&call)) == Some(&id) {
            self.registry.remove(&key(&call));
            for port in &mut self.ports {
                if let Some(station) = port.stations.get_mut(&key(&call)) {
                    station.set_listening(false);
                }
            }
        }
    }

    fn port_caps(&mut self, now: Instant, id: ClientId, header: Header) {
        let Some(index) = self.port_of(id, &header, false) else {
            return;
        };
        let Some(port) = self.ports.get_mut(index) else {
            return;
        };
        let units = |d: Option<Duration>| d.map_or(0, linklab_wire::kiss::units_from_duration);
        let kiss = port.config.kiss;
        let window = match port.config.link.modulus {
            Modulus::Mod8 => port.config.link.window_mod8,
            Modulus::Mod128 => port.config.link.window_mod128,
        };
        let baud = match port.config.bit_rate {
            Some(2400) => 1,
            Some(4800) => 2,
            Some(9600) => 3,
            Some(19200) => 4,
            Some(38400) => 5,
            Some(57600) => 6,
            Some(115_200) => 7,
            _ => 0,
        };
        let mut data = vec![
            baud,
            0xFF,
            units(kiss.txdelay),
            units(kiss.txtail),
            kiss.persistence.unwrap_or(0),
            units(kiss.slot_time),
            window,
            u8::try_from(port.connections()).unwrap_or(u8::MAX),
        ];
        data.extend_from_slice(&u32_data(port.recent_octets(now)));
        self.send(id, &Message::new(Header::new(header.port, b'g'), data));
    }

    fn heard(&mut self, id: ClientId, header: Header) {
        let Some(index) = self.port_of(id, &header, false) else {
            return;
        };
        let heard: Vec<_> = self
            .ports
            .get(index)
            .map(|p| p.heard().to_vec())
            .unwrap_or_default();
        for i in 0..HEARD_MAX {
            let record = monitor::heard_record(header.port, heard.get(i));
            self.send(id, &record);
        }
    }

    fn outstanding(&mut self, id: ClientId, header: Header) {
        let port = usize::from(header.port);
        let count = match (header.call_from.address(), header.call_to.address()) {
            (Ok(a), Ok(b)) => self.ports.get(port).map_or(0, |p| {
                // The AGWPE texts disagree on the order of the two calls;
                // take the link either way round.
                let find = |local: &Address, remote: &Address| {
                    p.stations
                        .get(&key(local))
                        .and_then(|s| s.link(remote))
                        .map(|l| l.unacked() + l.queued())
                };
                find(&a, &b).or_else(|| find(&b, &a)).unwrap_or(0)
            }),
            _ => 0,
        };
        let mut reply = Header::new(header.port, b'Y');
        reply.call_from = header.call_from;
        reply.call_to = header.call_to;
        self.send(id, &Message::new(reply, u32_data(count)));
    }

    fn connect(&mut self, now: Instant, id: ClientId, message: &Message) {
        let header = message.header;
        let refuse = |server: &mut Server, why: String| {
            server.note(format!(
                "{id}: connect {} -> {} refused: {why}",
                header.call_from.text(),
                header.call_to.text()
            ));
            let mut reply = Header::new(header.port, b'd');
            reply.call_from = header.call_to;
            reply.call_to = header.call_from;
            let text = format!("*** DISCONNECTED From Station {}\r", header.call_to.text());
            server.send(id, &Message::new(reply, text_data(&text)));
        };
        let Some(port) = self.port_of(id, &header, true) else {
            return refuse(self, "no such port, or its TNC is not connected".into());
        };
        let Some((local, remote)) = self.calls(id, &header) else {
            return refuse(self, "a callsign does not parse".into());
        };
        if key(&local) == key(&remote) {
            return refuse(self, "a station cannot connect to itself".into());
        }
        let via = if header.kind == b'v' {
            match via_list(&message.data) {
                Ok((via, _)) => via,
                Err(why) => return refuse(self, why),
            }
        } else {
            Vec::new()
        };
        let pid = if header.kind == b'c' {
            Pid::from(header.pid)
        } else {
            Pid::NoLayer3
        };
        let registered = self.registry.contains_key(&key(&local));
        let k = (port, key(&local), key(&remote));
        if let Some(owner) = self.owners.get(&k) {
            if owner.client != id {
                return refuse(
                    self,
                    format!("{} holds the link {local} <-> {remote}", owner.client),
                );
            }
        }
        let Some(station) = self
            .ports
            .get_mut(port)
            .and_then(|p| p.station(&local, registered))
        else {
            return refuse(self, "the link settings were refused".into());
        };
        match station.connect(now, remote, &via) {
            Ok(()) => {
                self.owners.insert(k, Owner::new(id, pid));
            }
            Err(StationError::AlreadyLinked { state, .. }) => {
                self.note(format!("{id}: connect {local} -> {remote}: the link is already {state:?}; request ignored"));
            }
            Err(error) => refuse(self, error.to_string()),
        }
        self.pump(now);
    }

    fn data(&mut self, id: ClientId, message: Message) {
        let header = message.header;
        let Some(port) = self.port_of(id, &header, true) else {
            return;
        };
        let Some((local, remote)) = self.calls(id, &header) else {
            return;
        };
        let k = (port, key(&local), key(&remote));
        let owner = match self.owners.get_mut(&k) {
            Some(owner) if owner.client == id => owner,
            Some(owner) => {
                let holder = owner.client;
                return self.note(format!(
                    "{id}: {} octets for {local} -> {remote} dropped: {holder} holds that link",
                    message.data.len()
                ));
            }
            None => {
                return self.note(format!(
                    "{id}: {} octets for {local} -> {remote} dropped: no such link",
                    message.data.len()
                ))
            }
        };
        let pid = if header.pid == 0 {
            owner.pid
        } else {
            Pid::from(header.pid)
        };
        if !owner.announced {
            owner.pending.push((pid, message.data));
            return;
        }
        if let Err(e) = self.send_data(port, &local, &remote, pid, message.data) {
            self.note(format!("{id}: data for {local} -> {remote} not sent: {e}"));
        }
    }

    /// Queues `data` on the link `local` -> `remote` of `port` in I frames
    /// of at most N1 octets: AGWPE data is a byte stream, and a peer
    /// without segmentation (AX.25 v2.0, most TNCs) cannot take more in
    /// one frame.
    pub(crate) fn send_data(
        &mut self,
        port: usize,
        local: &Address,
        remote: &Address,
        pid: Pid,
        data: Vec<u8>,
    ) -> Result<(), StationError> {
        let Some(station) = self
            .ports
            .get_mut(port)
            .and_then(|p| p.stations.get_mut(&key(local)))
        else {
            return Err(StationError::NoLink { remote: *remote });
        };
        let n1 = station
            .link(remote)
            .map_or(256, |l| l.params().n1_tx)
            .max(1);
        for chunk in data.chunks(n1) {
            station.send_with_pid(remote, pid, chunk.to_vec())?;
        }
        Ok(())
    }

    fn disconnect(&mut self, now: Instant, id: ClientId, header: Header) {
        let Some((local, remote)) = self.calls(id, &header) else {
            return;
        };
        let port = usize::from(header.port);
        let k = (port, key(&local), key(&remote));
        let held_by_other = self.owners.get(&k).is_some_and(|o| o.client != id);
        let station = self
            .ports
            .get_mut(port)
            .and_then(|p| p.stations.get_mut(&key(&local)));
        let live = station
            .as_ref()
            .and_then(|s| s.link(&remote))
            .is_some_and(|l| l.state() != State::Disconnected);
        match station {
            Some(station) if live && !held_by_other => {
                // The first 'd' releases the link once the data given
                // before it is delivered (AX.25 v2.2 fig. C4.4a discards
                // queued data on a DL-DISCONNECT request, so the last
                // line before 'd' would never go out); a second one, or
                // one on a link not yet up, ends it at once.
                let owner = self.owners.get_mut(&k);
                let up = owner.as_ref().is_some_and(|o| o.announced);
                match owner {
                    Some(owner) if up && !owner.releasing => {
                        owner.releasing = true;
                        let _ = station.release(now, &remote);
                    }
                    _ => {
                        let _ = station.disconnect(now, &remote);
                    }
                }
                self.pump(now);
            }
            _ if held_by_other => {
                self.note(format!(
                    "{id}: disconnect {local} -> {remote} ignored: another client holds that link"
                ));
            }
            _ => {
                // No such link: say it is down, so the client stops waiting.
                let text = format!("*** DISCONNECTED From Station {remote}\r");
                self.send_link_message(id, port, b'd', &remote, &local, &text);
            }
        }
    }

    fn unproto(&mut self, now: Instant, id: ClientId, message: &Message) {
        let header = message.header;
        let Some(port) = self.port_of(id, &header, true) else {
            return;
        };
        let Some((source, dest)) = self.calls(id, &header) else {
            return;
        };
        let (via, info) = if header.kind == b'V' {
            match via_list(&message.data) {
                Ok((via, used)) => (via, message.data.get(used..).unwrap_or_default().to_vec()),
                Err(why) => return self.note(format!("{id}: 'V' dropped: {why}")),
            }
        } else {
            (Vec::new(), message.data.clone())
        };
        // The AGWPE text says PID 0x00 or 0xF0 for plain AX.25; 0 is not
        // a PID AX.25 defines, so it is sent as 0xF0.
        let pid = if header.pid == 0 {
            Pid::NoLayer3
        } else {
            Pid::from(header.pid)
        };
        match Frame::ui(dest, source, &via, pid, info) {
            Ok(frame) => self.transmit(now, port, frame.encode()),
            Err(e) => self.note(format!("{id}: '{}' dropped: {e}", printable(header.kind))),
        }
    }

    fn raw_frame(&mut self, now: Instant, id: ClientId, message: &Message) {
        let Some(port) = self.port_of(id, &message.header, true) else {
            return;
        };
        // The first octet is the KISS type octet; the port comes from the
        // header.
        let frame = message.data.get(1..).unwrap_or_default();
        match AddressField::decode(frame) {
            Ok((_, used)) if frame.len() > used => self.transmit(now, port, frame.to_vec()),
            Ok(_) => self.note(format!(
                "{id}: 'K' dropped: no control field after the addresses"
            )),
            Err(e) => self.note(format!(
                "{id}: 'K' dropped: its address field does not decode: {e}"
            )),
        }
    }

    fn transmit(&mut self, now: Instant, port: usize, bytes: Vec<u8>) {
        if let Some(p) = self.ports.get_mut(port) {
            p.transmit(bytes, None);
        }
        // Its 'T' records.
        self.pump(now);
    }
}

/// A count as AGWPE sends it: 32 bits, little endian.
fn u32_data(count: usize) -> Vec<u8> {
    u32::try_from(count)
        .unwrap_or(u32::MAX)
        .to_le_bytes()
        .to_vec()
}

/// The digipeater list of a 'v' or 'V' message (a count, then ten octets
/// per callsign) and the octets it took.
fn via_list(data: &[u8]) -> Result<(Vec<Address>, usize), String> {
    let count = usize::from(data.first().copied().unwrap_or(0));
    if count == 0 || count > 8 {
        return Err(format!(
            "{count} digipeaters given; AX.25 allows 1 to 8 (3.12.5)"
        ));
    }
    let used = 1 + count * CALL_LEN;
    let fields = data.get(1..used).ok_or_else(|| {
        format!(
            "{count} digipeaters announced but only {} octets of data",
            data.len()
        )
    })?;
    let mut via = Vec::with_capacity(count);
    for chunk in fields.chunks_exact(CALL_LEN) {
        let text = CallField::from_text(&String::from_utf8_lossy(
            chunk.split(|&b| b == 0).next().unwrap_or_default(),
        ));
        via.push(
            text.address()
                .map_err(|e| format!("digipeater {:?}: {e}", text.text()))?,
        );
    }
    Ok((via, used))
}
