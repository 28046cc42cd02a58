//! Where the KISS TNC is: a TCP address (Dire Wolf's KISS port, a network
//! TNC), a serial port with its speed, or an AXUDP port (AX.25 over UDP to
//! ax25ipd, BPQ or another linklab), and the connection to it.

use core::fmt;
use core::str::FromStr;

use thiserror::Error;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;

use crate::axudp::{AxudpConfig, AxudpConfigError, AxudpStream};

/// How the known address forms are written, for error messages.
const FORMS: &str = "tcp:HOST:PORT, serial:DEVICE:BAUD or axudp:BIND@PEER";

/// The address of a KISS TNC, written `tcp:HOST:PORT`,
/// `serial:DEVICE:BAUD` or `axudp:BIND@PEER[,PEER...]` (e.g.
/// `tcp:127.0.0.1:8001`, `serial:/dev/ttyUSB0:9600`,
/// `axudp:10093@192.0.2.1:10093`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum KissAddress {
    /// A KISS-over-TCP server (Dire Wolf's default port is 8001).
    Tcp {
        /// Host name or IP address (IPv6 literals in brackets or bare).
        host: String,
        /// TCP port.
        port: u16,
    },
    /// A TNC on a serial line, 8 data bits, no parity, 1 stop bit.
    Serial {
        /// The device, e.g. `/dev/ttyUSB0` or `COM3`.
        device: String,
        /// Line speed in bit/s.
        baud: u32,
    },
    /// An AXUDP port: AX.25 frames with their FCS in UDP datagrams, as
    /// ax25ipd and BPQ's AXIP exchange them, with no radio. Written
    /// `axudp:BIND@PEER[,PEER...][;broadcast=CALL[,CALL...]]`: `BIND` is
    /// the local `IP:PORT` (or a bare `PORT`, on 0.0.0.0); each `PEER` is
    /// `[CALL=]IP:PORT[/b]`, the route for frames whose next hop is
    /// `CALL` (SSID 0 for every SSID), or without `CALL=` the default
    /// route, and `/b` sends it the frames for the broadcast calls too.
    /// E.g. `axudp:10093@192.0.2.1:10093` (one peer for everything) or
    /// `axudp:0.0.0.0:10093@N0CALL=192.0.2.1:10093/b,192.0.2.2:10093;broadcast=QST,NODES`.
    /// See [`AxudpConfig`].
    Axudp(AxudpConfig),
}

/// Why text is not a [`KissAddress`].
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum KissAddressError {
    /// No `tcp:`, `serial:` or `axudp:` prefix.
    #[error("KISS address {text:?} has no known scheme: write {FORMS}")]
    Scheme {
        /// The text given.
        text: String,
    },
    /// The part after the last `:` is missing.
    #[error("KISS address {text:?} lacks the {what} after the last ':' (tcp:HOST:PORT or serial:DEVICE:BAUD)")]
    Missing {
        /// The text given.
        text: String,
        /// "port" or "speed".
        what: &'static str,
    },
    /// The host or device name is empty.
    #[error("KISS address {text:?} has an empty {what}")]
    Empty {
        /// The text given.
        text: String,
        /// "host" or "device".
        what: &'static str,
    },
    /// The TCP port is not a number in 1-65535.
    #[error("TCP port {value:?} in KISS address is not a number in 1-65535")]
    Port {
        /// The port text.
        value: String,
    },
    /// The serial speed is not a positive number.
    #[error("serial speed {value:?} in KISS address is not a positive number of bit/s")]
    Baud {
        /// The speed text.
        value: String,
    },
    /// The part after `axudp:` is not an AXUDP port.
    #[error(transparent)]
    Axudp(#[from] AxudpConfigError),
}

impl FromStr for KissAddress {
    type Err = KissAddressError;

    fn from_str(text: &str) -> Result<KissAddress, KissAddressError> {
        let (scheme, rest) = text
            .split_once(':')
            .ok_or_else(|| KissAddressError::Scheme {
                text: text.to_string(),
            })?;
        let (what, empty) = match scheme {
            "tcp" => ("port", "host"),
            "serial" => ("speed", "device"),
            "axudp" => return Ok(KissAddress::Axudp(rest.parse()?)),
            _ => {
                return Err(KissAddressError::Scheme {
                    text: text.to_string(),
                })
            }
        };
        let (name, number) = rest
            .rsplit_once(':')
            .ok_or_else(|| KissAddressError::Missing {
                text: text.to_string(),
                what,
            })?;
        if name.is_empty() {
            return Err(KissAddressError::Empty {
                text: text.to_string(),
                what: empty,
            });
        }
        if scheme == "tcp" {
            let port = number
                .parse::<u16>()
                .ok()
                .filter(|&p| p != 0)
                .ok_or_else(|| KissAddressError::Port {
                    value: number.to_string(),
                })?;
            let host = name
                .strip_prefix('[')
                .and_then(|h| h.strip_suffix(']'))
                .unwrap_or(name);
            Ok(KissAddress::Tcp {
                host: host.to_string(),
                port,
            })
        } else {
            let baud = number
                .parse::<u32>()
                .ok()
                .filter(|&b| b != 0)
                .ok_or_else(|| KissAddressError::Baud {
                    value: number.to_string(),
                })?;
            Ok(KissAddress::Serial {
                device: name.to_string(),
                baud,
            })
        }
    }
}

impl fmt::Display for KissAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KissAddress::Tcp { host, port } if host.contains(':') => {
                write!(f, "tcp:[{host}]:{port}")
            }
            KissAddress::Tcp { host, port } => write!(f, "tcp:{host}:{port}"),
            KissAddress::Serial { device, baud } => write!(f, "serial:{device}:{baud}"),
            KissAddress::Axudp(config) => write!(f, "axudp:{config}"),
        }
    }
}

/// A byte stream to and from a TNC.
pub trait KissStream: AsyncRead + AsyncWrite + Unpin + Send {}

impl<T: AsyncRead + AsyncWrite + Unpin + Send> KissStream for T {}

/// Why the TNC could not be reached.
#[derive(Debug, Error)]
pub enum ConnectError {
    /// The TCP connection failed.
    #[error("cannot connect to the KISS TNC at {address}")]
    Tcp {
        /// The address tried.
        address: KissAddress,
        /// The reason.
        source: std::io::Error,
    },
    /// The serial port could not be opened.
    #[error("cannot open the KISS TNC on {address}")]
    Serial {
        /// The address tried.
        address: KissAddress,
        /// The reason.
        source: tokio_serial::Error,
    },
    /// The AXUDP port's UDP socket could not be bound.
    #[error("cannot open the AXUDP port {address}")]
    Axudp {
        /// The address tried.
        address: KissAddress,
        /// The reason.
        source: std::io::Error,
    },
}

impl KissAddress {
    /// Connects to the TNC; for AXUDP, binds the socket and starts the
    /// port's task (see [`AxudpStream`]).
    pub async fn connect(&self) -> Result<Box<dyn KissStream>, ConnectError> {
        match self {
            KissAddress::Tcp { host, port } => {
                let stream =
                    TcpStream::connect((host.as_str(), *port))
                        .await
                        .map_err(|source| ConnectError::Tcp {
                            address: self.clone(),
                            source,
                        })?;
                // KISS frames are small and latency matters more than
                // throughput: no Nagle delay.
                stream.set_nodelay(true).ok();
                Ok(Box::new(stream))
            }
            KissAddress::Serial { device, baud } => {
                use tokio_serial::SerialPortBuilderExt;
                let port = tokio_serial::new(device.as_str(), *baud)
                    .data_bits(tokio_serial::DataBits::Eight)
                    .parity(tokio_serial::Parity::None)
                    .stop_bits(tokio_serial::StopBits::One)
                    .flow_control(tokio_serial::FlowControl::None)
                    .open_native_async()
                    .map_err(|source| ConnectError::Serial {
                        address: self.clone(),
                        source,
                    })?;
                Ok(Box::new(port))
            }
            KissAddress::Axudp(config) => {
                let port =
                    AxudpStream::open(config)
                        .await
                        .map_err(|source| ConnectError::Axudp {
                            address: self.clone(),
                            source,
                        })?;
                Ok(Box::new(port))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_displays() {
        let tcp: KissAddress = "tcp:127.0.0.1:8001".parse().unwrap();
        assert_eq!(
            tcp,
            KissAddress::Tcp {
                host: "127.0.0.1".into(),
                port: 8001
            }
        );
        assert_eq!(tcp.to_string(), "tcp:127.0.0.1:8001");
        let v6: KissAddress = "tcp:[::1]:8001".parse().unwrap();
        assert_eq!(v6.to_string(), "tcp:[::1]:8001");
        let serial: KissAddress = "serial:/dev/ttyUSB0:9600".parse().unwrap();
        assert_eq!(
            serial,
            KissAddress::Serial {
                device: "/dev/ttyUSB0".into(),
                baud: 9600
            }
        );
        assert_eq!(serial.to_string(), "serial:/dev/ttyUSB0:9600");
        let text = "axudp:127.0.0.1:10093@N0CALL-2=127.0.0.1:10094/b,127.0.0.1:10095;broadcast=QST";
        let axudp: KissAddress = text.parse().unwrap();
        let KissAddress::Axudp(config) = &axudp else {
            panic!("{axudp:?}")
        };
        assert_eq!(config.peers.len(), 2);
        assert_eq!(axudp.to_string(), text);
        assert_eq!(axudp.to_string().parse::<KissAddress>(), Ok(axudp));
        let short: KissAddress = "axudp:10093@192.0.2.1:10093".parse().unwrap();
        assert_eq!(short.to_string(), "axudp:0.0.0.0:10093@192.0.2.1:10093");
    }

    #[test]
    fn errors_are_precise() {
        let err = |text: &str| text.parse::<KissAddress>().unwrap_err().to_string();
        assert_eq!(
            err("127.0.0.1:8001"),
            "KISS address \"127.0.0.1:8001\" has no known scheme: write tcp:HOST:PORT, serial:DEVICE:BAUD or axudp:BIND@PEER"
        );
        assert_eq!(
            err("tcp:localhost"),
            "KISS address \"tcp:localhost\" lacks the port after the last ':' (tcp:HOST:PORT or serial:DEVICE:BAUD)"
        );
        assert_eq!(
            err("tcp:localhost:80x"),
            "TCP port \"80x\" in KISS address is not a number in 1-65535"
        );
        assert_eq!(
            err("tcp:localhost:0"),
            "TCP port \"0\" in KISS address is not a number in 1-65535"
        );
        assert_eq!(
            err("tcp::8001"),
            "KISS address \"tcp::8001\" has an empty host"
        );
        assert!(err("axudp:10093")
            .starts_with("AXUDP address \"10093\" names no peer: write axudp:BIND@"));
        assert_eq!(
            err("serial:/dev/ttyS0:fast"),
            "serial speed \"fast\" in KISS address is not a positive number of bit/s"
        );
    }
}
