//! The smoltcp side of the interface: a [`Device`] of [`Medium::Ip`] whose
//! tokens only fill and drain two queues of IP datagrams; the AX.25 side
//! ([`crate::Ax25Interface`]) serves them.

use std::collections::VecDeque;

use smoltcp::phy::{self, Device, DeviceCapabilities, Medium};
use smoltcp::time::Instant;

use crate::sniff::TcpSniffer;

/// A queue-backed IP device (smoltcp [`Device`], [`Medium::Ip`]).
///
/// The transmit queue holds at most `tx_queue_len` datagrams (as a Linux
/// interface's `txqueuelen`); while it is full smoltcp is given no transmit
/// token and keeps its segments.
#[derive(Debug)]
pub struct Ax25Device {
    mtu: usize,
    tx_queue_len: usize,
    rx: VecDeque<Vec<u8>>,
    tx: VecDeque<Vec<u8>>,
    tx_sniffer: TcpSniffer,
    rx_sniffer: TcpSniffer,
}

impl Ax25Device {
    /// A device with IP MTU `mtu` octets and room for `tx_queue_len`
    /// datagrams waiting for the AX.25 side.
    pub fn new(mtu: usize, tx_queue_len: usize) -> Ax25Device {
        Ax25Device {
            mtu,
            tx_queue_len: tx_queue_len.max(1),
            rx: VecDeque::new(),
            tx: VecDeque::new(),
            tx_sniffer: TcpSniffer::new(),
            rx_sniffer: TcpSniffer::new(),
        }
    }

    /// The IP MTU, octets.
    pub fn mtu(&self) -> usize {
        self.mtu
    }

    /// Hands a received IP datagram to smoltcp (at its next poll).
    pub fn push_received(&mut self, datagram: Vec<u8>) {
        self.rx.push_back(datagram);
    }

    /// The next datagram smoltcp sent, oldest first.
    pub fn pop_transmitted(&mut self) -> Option<Vec<u8>> {
        self.tx.pop_front()
    }

    /// Queues a datagram of a host outside smoltcp (the kernel behind a
    /// TUN device, [`crate::DatagramPort`]) as smoltcp's transmit token
    /// would; `false`, and nothing queued, while the transmit queue is
    /// full.
    pub fn push_transmit(&mut self, datagram: Vec<u8>) -> bool {
        if self.tx.len() >= self.tx_queue_len {
            return false;
        }
        self.tx_sniffer.observe(&datagram);
        self.tx.push_back(datagram);
        true
    }

    /// The next datagram received, for a host outside smoltcp, as
    /// smoltcp's receive token would give it.
    pub fn pop_received(&mut self) -> Option<Vec<u8>> {
        let datagram = self.rx.pop_front()?;
        self.rx_sniffer.observe(&datagram);
        Some(datagram)
    }

    /// Datagrams received but not yet taken by smoltcp.
    pub fn rx_pending(&self) -> usize {
        self.rx.len()
    }

    /// Datagrams smoltcp sent that the AX.25 side has not taken yet.
    pub fn tx_pending(&self) -> usize {
        self.tx.len()
    }

    /// TCP counters of the transmit path (retransmissions).
    pub fn tx_sniffer(&self) -> &TcpSniffer {
        &self.tx_sniffer
    }

    /// TCP counters of the receive path (duplicates received).
    pub fn rx_sniffer(&self) -> &TcpSniffer {
        &self.rx_sniffer
    }
}

impl Device for Ax25Device {
    type RxToken<'a> = RxToken<'a>;
    type TxToken<'a> = TxToken<'a>;

    fn receive(&mut self, _timestamp: Instant) -> Option<(RxToken<'_>, TxToken<'_>)> {
        let datagram = self.rx.pop_front()?;
        Some((
            RxToken {
                datagram,
                sniffer: &mut self.rx_sniffer,
            },
            TxToken {
                queue: &mut self.tx,
                sniffer: &mut self.tx_sniffer,
            },
        ))
    }

    fn transmit(&mut self, _timestamp: Instant) -> Option<TxToken<'_>> {
        (self.tx.len() < self.tx_queue_len).then_some(TxToken {
            queue: &mut self.tx,
            sniffer: &mut self.tx_sniffer,
        })
    }

    fn capabilities(&self) -> DeviceCapabilities {
        let mut caps = DeviceCapabilities::default();
        caps.medium = Medium::Ip;
        caps.max_transmission_unit = self.mtu;
        caps
    }
}

/// A received datagram handed to smoltcp.
#[derive(Debug)]
pub struct RxToken<'a> {
    datagram: Vec<u8>,
    sniffer: &'a mut TcpSniffer,
}

impl phy::RxToken for RxToken<'_> {
    fn consume<R, F>(self, f: F) -> R
    where
        F: FnOnce(&[u8]) -> R,
    {
        self.sniffer.observe(&self.datagram);
        f(&self.datagram)
    }
}

/// Room for one datagram smoltcp sends.
#[derive(Debug)]
pub struct TxToken<'a> {
    queue: &'a mut VecDeque<Vec<u8>>,
    sniffer: &'a mut TcpSniffer,
}

impl phy::TxToken for TxToken<'_> {
    fn consume<R, F>(self, len: usize, f: F) -> R
    where
        F: FnOnce(&mut [u8]) -> R,
    {
        let mut datagram = vec![0; len];
        let result = f(&mut datagram);
        self.sniffer.observe(&datagram);
        self.queue.push_back(datagram);
        result
    }
}
