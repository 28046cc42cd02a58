//! NET/ROM formats: the NODES routing broadcast, the network (layer 3)
//! header and the transport (layer 4) header with its six opcodes.
//!
//! Both kinds ride in AX.25 frames with PID 0xCF (AX.25 v2.2 3.4, table
//! 3.2): NODES broadcasts in UI frames to the destination `NODES`, network
//! datagrams in the information field of I frames between neighbours.
//! The layouts are NET/ROM's (Software 2000's protocol) as the Linux
//! kernel (`net/netrom/`) and LinBPQ (`L3Code.c`, `L4Code.c`) write and
//! read them. Callsigns are seven-octet
//! AX.25 address subfields (AX.25 v2.2 3.12); aliases are six ASCII
//! characters, space padded.
//!
//! Every decoder here is total: any octets give either a value or an
//! error, never a panic.

use std::fmt;
use std::str::FromStr;

use linklab_wire::ax25::{Address, AddressError, ADDRESS_LEN};
use thiserror::Error;

/// The first octet of a NODES broadcast's information field.
pub const NODES_SIGNATURE: u8 = 0xFF;

/// Octets of one NODES entry: destination (7), alias (6), best neighbour
/// (7), quality (1).
pub const NODES_ENTRY_LEN: usize = 21;

/// Most entries in one NODES frame: the 256-octet AX.25 information field
/// holds the signature, the 6-octet alias and 11 entries of 21 octets
/// (LinBPQ's `SENDNODES` with the default `NODESPACLEN`:
/// (256 - 22) / 21 = 11).
pub const MAX_NODES_ENTRIES: usize = 11;

/// Octets of the network header: origin (7), destination (7), TTL (1).
pub const NETWORK_HEADER_LEN: usize = 15;

/// Octets of the transport header: circuit index, circuit ID, TX sequence,
/// RX sequence, opcode and flags.
pub const TRANSPORT_HEADER_LEN: usize = 5;

/// Most octets of user data in one information message: 256 octets of
/// AX.25 information field less the 20 octets of headers (the kernel's
/// `NR_MAX_PACKET_SIZE`, 236).
pub const MAX_INFO_LEN: usize = 236;

/// Why octets are not a NET/ROM message.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DecodeError {
    /// Fewer octets than the part named needs.
    #[error("NET/ROM {what} truncated: needs {needed} octets, {available} present")]
    Truncated {
        /// The part that is cut short.
        what: &'static str,
        /// Octets the part needs.
        needed: usize,
        /// Octets present.
        available: usize,
    },
    /// A NODES broadcast without the 0xFF signature.
    #[error("not a NODES broadcast: first octet 0x{0:02X}, expected 0xFF")]
    NotNodes(u8),
    /// A callsign field that is not a valid AX.25 address subfield.
    #[error("NET/ROM {what}: {source}")]
    Address {
        /// Which callsign field.
        what: &'static str,
        /// What is wrong with it.
        source: AddressError,
    },
}

/// A node alias (the NET/ROM "mnemonic"): up to six printable ASCII
/// characters, space padded on the wire. The octets are kept as received,
/// so an alias decodes and encodes back unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Alias([u8; 6]);

/// Why text is not a valid alias.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum AliasError {
    /// More than six characters.
    #[error("alias \"{0}\" is longer than 6 characters")]
    TooLong(String),
    /// A space, control or non-ASCII character.
    #[error("alias \"{0}\" has a character other than printable ASCII without spaces")]
    BadChar(String),
}

impl Alias {
    /// The empty alias: six spaces.
    pub const BLANK: Alias = Alias([b' '; 6]);

    /// The six octets as carried.
    pub fn octets(&self) -> [u8; 6] {
        self.0
    }

    /// The alias as text, without padding; octets outside printable ASCII
    /// (some nodes send NULs) are dropped.
    pub fn text(&self) -> String {
        self.0
            .iter()
            .filter(|b| b.is_ascii_graphic())
            .map(|&b| char::from(b))
            .collect()
    }

    /// Whether the alias is blank (spaces or NULs only).
    pub fn is_blank(&self) -> bool {
        self.0.iter().all(|&b| b == b' ' || b == 0)
    }
}

impl From<[u8; 6]> for Alias {
    fn from(octets: [u8; 6]) -> Alias {
        Alias(octets)
    }
}

impl FromStr for Alias {
    type Err = AliasError;

    /// Parses an alias, converting letters to upper case as nodes show them.
    fn from_str(text: &str) -> Result<Alias, AliasError> {
        if text.len() > 6 {
            return Err(AliasError::TooLong(text.to_owned()));
        }
        if !text.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(AliasError::BadChar(text.to_owned()));
        }
        let mut octets = [b' '; 6];
        for (o, b) in octets.iter_mut().zip(text.bytes()) {
            *o = b.to_ascii_uppercase();
        }
        Ok(Alias(octets))
    }
}

impl fmt::Display for Alias {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

/// One destination in a NODES broadcast: its callsign and alias, the
/// sender's best neighbour towards it and the quality of that route.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NodesEntry {
    /// The destination node's callsign.
    pub destination: Address,
    /// The destination node's alias.
    pub alias: Alias,
    /// The neighbour the sender routes through to reach the destination.
    pub best_neighbour: Address,
    /// The quality of the sender's best route, 0-255.
    pub quality: u8,
}

/// A NODES broadcast: the signature 0xFF, the sender's alias and up to
/// eleven entries (LinBPQ `SENDNODES`, `PROCESSNODEMESSAGE`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NodesBroadcast {
    /// The sending node's alias.
    pub alias: Alias,
    /// The destinations the sender advertises.
    pub entries: Vec<NodesEntry>,
}

impl NodesBroadcast {
    /// Decodes the information field of a NODES UI frame. Octets after the
    /// last whole entry (fewer than 21) are ignored, as LinBPQ does; an
    /// entry with a bad callsign makes the whole broadcast an error, so
    /// nothing from a corrupt frame reaches the routing table.
    pub fn decode(info: &[u8]) -> Result<NodesBroadcast, DecodeError> {
        let (&signature, rest) = info.split_first().ok_or(DecodeError::Truncated {
            what: "NODES broadcast",
            needed: 7,
            available: 0,
        })?;
        if signature != NODES_SIGNATURE {
            return Err(DecodeError::NotNodes(signature));
        }
        let (alias, mut rest) = split::<6>(rest, "NODES alias", 7)?;
        let mut entries = Vec::new();
        while let Some((entry, tail)) = rest.split_first_chunk::<NODES_ENTRY_LEN>() {
            entries.push(nodes_entry(entry)?);
            rest = tail;
        }
        Ok(NodesBroadcast {
            alias: Alias(*alias),
            entries,
        })
    }

    /// Encodes the information field (signature, alias, entries). The
    /// caller keeps to [`MAX_NODES_ENTRIES`] per frame; see
    /// [`NodesBroadcast::split`].
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(7 + NODES_ENTRY_LEN * self.entries.len());
        out.push(NODES_SIGNATURE);
        out.extend_from_slice(&self.alias.0);
        for entry in &self.entries {
            out.extend_from_slice(&entry.destination.encode(false));
            out.extend_from_slice(&entry.alias.0);
            out.extend_from_slice(&entry.best_neighbour.encode(false));
            out.push(entry.quality);
        }
        out
    }

    /// The broadcasts of at most [`MAX_NODES_ENTRIES`] entries each that
    /// carry `entries` (one broadcast with no entries if there are none:
    /// a node with an empty table still announces itself).
    pub fn split(alias: Alias, entries: &[NodesEntry]) -> Vec<NodesBroadcast> {
        if entries.is_empty() {
            return vec![NodesBroadcast {
                alias,
                entries: Vec::new(),
            }];
        }
        entries
            .chunks(MAX_NODES_ENTRIES)
            .map(|chunk| NodesBroadcast {
                alias,
                entries: chunk.to_vec(),
            })
            .collect()
    }
}

/// One 21-octet NODES entry.
fn nodes_entry(octets: &[u8; NODES_ENTRY_LEN]) -> Result<NodesEntry, DecodeError> {
    let mut destination = [0u8; ADDRESS_LEN];
    destination.copy_from_slice(&octets[0..7]);
    let mut alias = [0u8; 6];
    alias.copy_from_slice(&octets[7..13]);
    let mut neighbour = [0u8; ADDRESS_LEN];
    neighbour.copy_from_slice(&octets[13..20]);
    Ok(NodesEntry {
        destination: address(&destination, "NODES destination")?,
        alias: Alias(alias),
        best_neighbour: address(&neighbour, "NODES best neighbour")?,
        quality: octets[20],
    })
}

/// The transport opcodes, the low four bits of the fifth transport octet
/// (kernel `NR_CONNREQ` ... `NR_INFOACK`; LinBPQ `L4CREQ`
/// ... `L4IACK`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Opcode {
    /// 0: protocol extension (IP over NET/ROM when index and ID are 0x0C).
    ProtocolExtension,
    /// 1: connect request.
    ConnectRequest,
    /// 2: connect acknowledgement.
    ConnectAck,
    /// 3: disconnect request.
    DisconnectRequest,
    /// 4: disconnect acknowledgement.
    DisconnectAck,
    /// 5: information.
    Information,
    /// 6: information acknowledgement.
    InformationAck,
    /// 7-15: not in the original protocol (LinBPQ uses 7 for a reset and
    /// 8 for a connect to a service).
    Other(u8),
}

impl Opcode {
    /// The opcode in the low four bits of `octet`.
    pub fn from_octet(octet: u8) -> Opcode {
        match octet & 0x0F {
            0 => Opcode::ProtocolExtension,
            1 => Opcode::ConnectRequest,
            2 => Opcode::ConnectAck,
            3 => Opcode::DisconnectRequest,
            4 => Opcode::DisconnectAck,
            5 => Opcode::Information,
            6 => Opcode::InformationAck,
            n => Opcode::Other(n),
        }
    }

    /// The four-bit value.
    pub fn value(self) -> u8 {
        match self {
            Opcode::ProtocolExtension => 0,
            Opcode::ConnectRequest => 1,
            Opcode::ConnectAck => 2,
            Opcode::DisconnectRequest => 3,
            Opcode::DisconnectAck => 4,
            Opcode::Information => 5,
            Opcode::InformationAck => 6,
            Opcode::Other(n) => n & 0x0F,
        }
    }
}

/// The flags in the high four bits of the opcode octet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Flags {
    /// 0x80: choke, the sender cannot take more information; on a connect
    /// acknowledgement, the connection is refused.
    pub choke: bool,
    /// 0x40: NAK, resend the information message numbered by the RX
    /// sequence number.
    pub nak: bool,
    /// 0x20: more follows, this information message is a fragment of a
    /// larger one.
    pub more_follows: bool,
    /// 0x10: not in the original protocol; LinBPQ marks compressed data
    /// with it (`L4COMP`). Kept so that a message decodes and encodes back
    /// unchanged.
    pub spare: bool,
}

impl Flags {
    const CHOKE: u8 = 0x80;
    const NAK: u8 = 0x40;
    const MORE_FOLLOWS: u8 = 0x20;
    const SPARE: u8 = 0x10;

    /// The flags in the high four bits of `octet`.
    pub fn from_octet(octet: u8) -> Flags {
        Flags {
            choke: octet & Self::CHOKE != 0,
            nak: octet & Self::NAK != 0,
            more_follows: octet & Self::MORE_FOLLOWS != 0,
            spare: octet & Self::SPARE != 0,
        }
    }

    /// The high four bits.
    pub fn bits(self) -> u8 {
        (if self.choke { Self::CHOKE } else { 0 })
            | (if self.nak { Self::NAK } else { 0 })
            | (if self.more_follows {
                Self::MORE_FOLLOWS
            } else {
                0
            })
            | (if self.spare { Self::SPARE } else { 0 })
    }
}

/// A circuit's two identifying octets, index and ID, as one side chose
/// them (each end names the circuit by its own pair: kernel `my_index`,
/// `your_index`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CircuitId {
    /// The circuit index.
    pub index: u8,
    /// The circuit ID.
    pub id: u8,
}

/// The extension LinBPQ and XRouter append to a connect request: two
/// octets after the originating node, the requester's transport timeout
/// in seconds, low octet first (LinBPQ `L4Code.c` `SendConnectRequest`;
/// the kernel reads it in `nr_rx_frame` when the datagram is 37 octets).
/// LinBPQ sets bit 6 of the high octet to offer compression, so
/// [`ConnectRequest::timeout_secs`] masks it off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TimeoutExtension(pub u16);

/// A connect request (opcode 1).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ConnectRequest {
    /// The requester's own circuit index and ID.
    pub circuit: CircuitId,
    /// The window size the requester proposes.
    pub window: u8,
    /// The user on whose behalf the circuit is made.
    pub user: Address,
    /// The node at which the user entered the network.
    pub originating_node: Address,
    /// The LinBPQ/XRouter timeout, if present.
    pub timeout: Option<TimeoutExtension>,
    /// Octets after the timeout (LinBPQ's 'Z' "spy" flag), kept as given.
    pub trailer: Vec<u8>,
}

impl ConnectRequest {
    /// The requester's transport timeout in seconds, if it sent one.
    pub fn timeout_secs(&self) -> Option<u16> {
        self.timeout.map(|t| t.0 & 0x3FFF)
    }
}

/// One transport message (the five-octet header and what follows it).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Message {
    /// Opcode 1: open a circuit.
    ConnectRequest(ConnectRequest),
    /// Opcode 2: the answer to a connect request.
    ConnectAck {
        /// The requester's circuit (octets 1-2).
        your: CircuitId,
        /// The acceptor's own circuit (octets 3-4).
        my: CircuitId,
        /// The window size accepted.
        window: u8,
        /// Choke set: the connection is refused.
        refused: bool,
        /// Octets after the window: the kernel sends its network TTL
        /// initialiser there when the request carried LinBPQ's timeout
        /// (`nr_write_internal`, `bpqext`). Kept as given.
        trailer: Vec<u8>,
    },
    /// Opcode 3: close the circuit.
    DisconnectRequest {
        /// The receiver's circuit.
        your: CircuitId,
    },
    /// Opcode 4: the answer to a disconnect request.
    DisconnectAck {
        /// The receiver's circuit.
        your: CircuitId,
    },
    /// Opcode 5: user data.
    Information {
        /// The receiver's circuit.
        your: CircuitId,
        /// N(S): this message's sequence number.
        tx_sequence: u8,
        /// N(R): the next sequence number the sender expects.
        rx_sequence: u8,
        /// Choke, NAK and more-follows.
        flags: Flags,
        /// The data.
        data: Vec<u8>,
    },
    /// Opcode 6: acknowledgement without data.
    InformationAck {
        /// The receiver's circuit.
        your: CircuitId,
        /// N(R): the next sequence number the sender expects.
        rx_sequence: u8,
        /// Choke and NAK.
        flags: Flags,
    },
    /// Any other opcode (protocol extension, LinBPQ's reset and service
    /// connect), or a known opcode too short for its fields: the header
    /// octets and the rest as received.
    Other {
        /// The five header octets.
        header: [u8; TRANSPORT_HEADER_LEN],
        /// What follows them.
        data: Vec<u8>,
    },
}

impl Message {
    /// Decodes a transport message. Only fewer than five octets is an
    /// error; a known opcode whose fields are short or malformed decodes as
    /// [`Message::Other`], which a circuit ignores.
    pub fn decode(octets: &[u8]) -> Result<Message, DecodeError> {
        let (header, body) =
            split::<TRANSPORT_HEADER_LEN>(octets, "transport header", TRANSPORT_HEADER_LEN)?;
        let [b0, b1, b2, b3, op] = *header;
        let your = CircuitId { index: b0, id: b1 };
        let flags = Flags::from_octet(op);
        let other = || Message::Other {
            header: *header,
            data: body.to_vec(),
        };
        let message = match Opcode::from_octet(op) {
            Opcode::ConnectRequest => match connect_request(your, body) {
                Some(request) => Message::ConnectRequest(request),
                None => other(),
            },
            Opcode::ConnectAck => match body.split_first() {
                Some((&window, trailer)) => Message::ConnectAck {
                    your,
                    my: CircuitId { index: b2, id: b3 },
                    window,
                    refused: flags.choke,
                    trailer: trailer.to_vec(),
                },
                None => other(),
            },
            Opcode::DisconnectRequest => Message::DisconnectRequest { your },
            Opcode::DisconnectAck => Message::DisconnectAck { your },
            Opcode::Information => Message::Information {
                your,
                tx_sequence: b2,
                rx_sequence: b3,
                flags,
                data: body.to_vec(),
            },
            Opcode::InformationAck => Message::InformationAck {
                your,
                rx_sequence: b3,
                flags,
            },
            Opcode::ProtocolExtension | Opcode::Other(_) => other(),
        };
        Ok(message)
    }

    /// Appends the message's octets to `out`. Octets the format leaves
    /// unused are sent as 0.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        match self {
            Message::ConnectRequest(r) => {
                out.extend_from_slice(&[
                    r.circuit.index,
                    r.circuit.id,
                    0,
                    0,
                    Opcode::ConnectRequest.value(),
                ]);
                out.push(r.window);
                out.extend_from_slice(&r.user.encode(false));
                out.extend_from_slice(&r.originating_node.encode(false));
                if let Some(TimeoutExtension(t)) = r.timeout {
                    out.extend_from_slice(&t.to_le_bytes());
                    out.extend_from_slice(&r.trailer);
                }
            }
            Message::ConnectAck {
                your,
                my,
                window,
                refused,
                trailer,
            } => {
                let flags = Flags {
                    choke: *refused,
                    ..Flags::default()
                };
                out.extend_from_slice(&[
                    your.index,
                    your.id,
                    my.index,
                    my.id,
                    Opcode::ConnectAck.value() | flags.bits(),
                    *window,
                ]);
                out.extend_from_slice(trailer);
            }
            Message::DisconnectRequest { your } => {
                out.extend_from_slice(&[
                    your.index,
                    your.id,
                    0,
                    0,
                    Opcode::DisconnectRequest.value(),
                ]);
            }
            Message::DisconnectAck { your } => {
                out.extend_from_slice(&[your.index, your.id, 0, 0, Opcode::DisconnectAck.value()]);
            }
            Message::Information {
                your,
                tx_sequence,
                rx_sequence,
                flags,
                data,
            } => {
                out.extend_from_slice(&[
                    your.index,
                    your.id,
                    *tx_sequence,
                    *rx_sequence,
                    Opcode::Information.value() | flags.bits(),
                ]);
                out.extend_from_slice(data);
            }
            Message::InformationAck {
                your,
                rx_sequence,
                flags,
            } => {
                out.extend_from_slice(&[
                    your.index,
                    your.id,
                    0,
                    *rx_sequence,
                    Opcode::InformationAck.value() | flags.bits(),
                ]);
            }
            Message::Other { header, data } => {
                out.extend_from_slice(header);
                out.extend_from_slice(data);
            }
        }
    }
}

/// The body of a connect request after the header, or `None` if it is too
/// short or a callsign is malformed.
fn connect_request(circuit: CircuitId, body: &[u8]) -> Option<ConnectRequest> {
    let (&window, rest) = body.split_first()?;
    let (user, rest) = rest.split_first_chunk::<ADDRESS_LEN>()?;
    let (node, rest) = rest.split_first_chunk::<ADDRESS_LEN>()?;
    let (timeout, trailer) = match rest.split_first_chunk::<2>() {
        Some((t, trailer)) => (
            Some(TimeoutExtension(u16::from_le_bytes(*t))),
            trailer.to_vec(),
        ),
        None => (None, Vec::new()),
    };
    Some(ConnectRequest {
        circuit,
        window,
        user: Address::decode(user).ok()?.0,
        originating_node: Address::decode(node).ok()?.0,
        timeout,
        // A lone octet after the node cannot be a timeout: it is dropped
        // with the extension (the kernel ignores it too).
        trailer,
    })
}

/// A network datagram: the layer-3 header and the transport message.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Datagram {
    /// The node that sent the datagram into the network.
    pub origin: Address,
    /// The node it is for.
    pub destination: Address,
    /// Time to live: hops left; a node that would forward it with 0 drops
    /// it.
    pub ttl: u8,
    /// The transport message.
    pub message: Message,
}

impl Datagram {
    /// Decodes the information field of an AX.25 frame with PID 0xCF that
    /// is not a NODES broadcast.
    pub fn decode(octets: &[u8]) -> Result<Datagram, DecodeError> {
        let (origin, rest) = split::<ADDRESS_LEN>(octets, "network header", NETWORK_HEADER_LEN)?;
        let (destination, rest) = split::<ADDRESS_LEN>(rest, "network header", NETWORK_HEADER_LEN)?;
        let (&ttl, rest) = rest.split_first().ok_or(DecodeError::Truncated {
            what: "network header",
            needed: NETWORK_HEADER_LEN,
            available: octets.len(),
        })?;
        Ok(Datagram {
            origin: address(origin, "origin")?,
            destination: address(destination, "destination")?,
            ttl,
            message: Message::decode(rest)?,
        })
    }

    /// Encodes the datagram. The callsigns' SSID octets carry the bits the
    /// kernel's `nr_transmit_buffer` sets: C clear, reserved as given
    /// (both set by [`Address::new`]), extension bit set on the
    /// destination only.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(NETWORK_HEADER_LEN + TRANSPORT_HEADER_LEN + MAX_INFO_LEN);
        out.extend_from_slice(&self.origin.encode(false));
        out.extend_from_slice(&self.destination.encode(true));
        out.push(self.ttl);
        self.message.encode_into(&mut out);
        out
    }
}

/// The first `N` octets of `octets` and the rest, or a truncation error
/// naming `what` and the `needed` length.
fn split<'a, const N: usize>(
    octets: &'a [u8],
    what: &'static str,
    needed: usize,
) -> Result<(&'a [u8; N], &'a [u8]), DecodeError> {
    octets
        .split_first_chunk::<N>()
        .ok_or(DecodeError::Truncated {
            what,
            needed,
            available: octets.len(),
        })
}

/// A callsign field as the station it names: [`station`] of the decoded
/// address (the extension, C and reserved bits mean nothing inside
/// NET/ROM).
fn address(octets: &[u8; ADDRESS_LEN], what: &'static str) -> Result<Address, DecodeError> {
    let (address, _) =
        Address::decode(octets).map_err(|source| DecodeError::Address { what, source })?;
    Ok(station(&address))
}

/// The station `address` names, with the C bit clear and both reserved
/// bits set as [`Address::new`] makes them, so that addresses from the
/// wire, from layer 2 and from configuration compare equal with `==`.
pub fn station(address: &Address) -> Address {
    Address::new(address.callsign(), address.ssid()).unwrap_or(*address)
}
