//! Data transfer on one virtual call (X.25 (10/96) 4.3, 4.4): sequence
//! numbering, windows, flow control with RR and RNR, complete packet
//! sequences and the D bit. The call control around it is in `dte.rs`.

use std::collections::VecDeque;

use crate::event::CallParams;
use crate::packet::cause::diagnostic;
use crate::packet::DataFields;

/// One packet of a queued message.
#[derive(Debug, Clone)]
struct Segment {
    q: bool,
    d: bool,
    m: bool,
    data: Vec<u8>,
}

/// A message being reassembled from a complete packet sequence.
#[derive(Debug, Clone, Default)]
struct Reassembly {
    q: bool,
    d: bool,
    data: Vec<u8>,
    started: bool,
}

/// A whole message received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Message {
    pub q: bool,
    pub d: bool,
    pub data: Vec<u8>,
}

/// What a received data packet or P(R) did.
#[derive(Debug, Default)]
pub(crate) struct Received {
    /// A whole message, if the packet ended one.
    pub message: Option<Message>,
    /// Messages sent with D = 1 now confirmed.
    pub confirmed: usize,
}

/// The data transfer variables of a call (4.4.1).
#[derive(Debug, Clone)]
pub(crate) struct DataTransfer {
    pub params: CallParams,
    modulus: u16,
    /// Next P(S) to send.
    vs: u8,
    /// Lower window edge for sending: the last P(R) received.
    va: u8,
    /// Next P(S) expected.
    vr: u8,
    /// Last P(R) sent: lower edge of the receive window.
    pr_sent: u8,
    /// Packets not yet sent.
    queue: VecDeque<Segment>,
    /// P(S) + 1 of each sent packet that ended a D = 1 message, awaiting
    /// a P(R) that passes it.
    d_marks: VecDeque<u8>,
    peer_busy: bool,
    pub own_busy: bool,
    /// A P(R) (RR or RNR) is due.
    ack_pending: bool,
    reassembly: Reassembly,
    /// Our INTERRUPT awaits confirmation.
    pub interrupt_outstanding: bool,
}

impl DataTransfer {
    pub fn new(params: CallParams) -> DataTransfer {
        DataTransfer {
            params,
            modulus: u16::from(params.modulus.value()),
            vs: 0,
            va: 0,
            vr: 0,
            pr_sent: 0,
            queue: VecDeque::new(),
            d_marks: VecDeque::new(),
            peer_busy: false,
            own_busy: false,
            ack_pending: false,
            reassembly: Reassembly::default(),
            interrupt_outstanding: false,
        }
    }

    /// `a - b` modulo the call's modulus.
    fn diff(&self, a: u8, b: u8) -> u16 {
        (u16::from(a) + self.modulus - u16::from(b)) % self.modulus
    }

    fn inc(&self, a: u8) -> u8 {
        // The modulus is at most 128, so the sum fits.
        ((u16::from(a) + 1) % self.modulus) as u8
    }

    /// The variables after a reset (4.4.3): all zero, queues and
    /// reassembly discarded, busy conditions cleared except our own,
    /// which is announced again.
    pub fn reset(&mut self) {
        let own_busy = self.own_busy;
        *self = DataTransfer::new(self.params);
        self.own_busy = own_busy;
        self.ack_pending = own_busy;
    }

    /// Queues a message as a complete packet sequence (4.3.5): packets of
    /// P octets with M = 1, the last shorter or equal with M = 0 and the
    /// message's D bit.
    pub fn queue_message(&mut self, q: bool, d: bool, data: &[u8]) {
        let p = self.params.tx_packet_size;
        let count = data.len().div_ceil(p).max(1);
        for i in 0..count {
            let last = i + 1 == count;
            let end = ((i + 1) * p).min(data.len());
            self.queue.push_back(Segment {
                q,
                d: d && last,
                m: !last,
                data: data[i * p..end].to_vec(),
            });
        }
    }

    /// Packets queued, not yet sent.
    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    /// Packets sent and not yet acknowledged.
    pub fn unacknowledged(&self) -> usize {
        usize::from(self.diff(self.vs, self.va))
    }

    /// True while the peer's RNR holds our data.
    pub fn peer_busy(&self) -> bool {
        self.peer_busy
    }

    /// The next data packet, if the window and the peer allow one
    /// (4.4.1.2); it carries the current P(R).
    pub fn next_data(&mut self) -> Option<DataFields> {
        let window = u16::from(self.params.tx_window);
        if self.peer_busy || self.diff(self.vs, self.va) >= window {
            return None;
        }
        let segment = self.queue.pop_front()?;
        let ps = self.vs;
        self.vs = self.inc(ps);
        if segment.d {
            self.d_marks.push_back(self.vs);
        }
        let pr = self.take_pr();
        Some(DataFields {
            q: segment.q,
            d: segment.d,
            m: segment.m,
            ps,
            pr,
            user_data: segment.data,
        })
    }

    /// P(R) to send: V(R), now the lower edge of the receive window.
    /// While our receiver is busy the P(R) still goes out, but only in
    /// RNR ([`DataTransfer::next_ack`]).
    fn take_pr(&mut self) -> u8 {
        if !self.own_busy {
            self.ack_pending = false;
        }
        self.pr_sent = self.vr;
        self.vr
    }

    /// An RR or RNR due (4.4.1.3): `Some((busy, P(R)))`.
    pub fn next_ack(&mut self) -> Option<(bool, u8)> {
        if !self.ack_pending {
            return None;
        }
        self.ack_pending = false;
        let pr = self.vr;
        self.pr_sent = pr;
        Some((self.own_busy, pr))
    }

    /// Our receiver becomes busy or ready: RNR or RR is due.
    pub fn set_own_busy(&mut self, busy: bool) {
        if busy != self.own_busy {
            self.own_busy = busy;
            self.ack_pending = true;
        }
    }

    /// Processes a P(R) (4.4.1.2): valid if V(A) <= P(R) <= V(S); rotates
    /// the window and counts D-bit messages now confirmed. `Err` is the
    /// diagnostic for the reset.
    pub fn receive_pr(&mut self, pr: u8) -> Result<usize, u8> {
        if u16::from(pr) >= self.modulus || self.diff(pr, self.va) > self.diff(self.vs, self.va) {
            return Err(diagnostic::INVALID_PR);
        }
        let mut confirmed = 0;
        while let Some(&mark) = self.d_marks.front() {
            if self.diff(mark, self.va) > self.diff(pr, self.va) {
                break;
            }
            self.d_marks.pop_front();
            confirmed += 1;
        }
        self.va = pr;
        Ok(confirmed)
    }

    /// RR or RNR received.
    pub fn receive_flow(&mut self, pr: u8, busy: bool) -> Result<usize, u8> {
        let confirmed = self.receive_pr(pr)?;
        self.peer_busy = busy;
        Ok(confirmed)
    }

    /// A data packet received (4.3, 4.4.1). `Err` is the diagnostic of
    /// the reset it calls for: invalid P(S) (not the next expected, or
    /// outside the receive window), invalid P(R), a packet longer than P,
    /// or a Q bit that changes inside a complete packet sequence.
    pub fn receive_data(&mut self, data: DataFields) -> Result<Received, u8> {
        if data.ps != self.vr
            || self.diff(data.ps, self.pr_sent) >= u16::from(self.params.rx_window)
        {
            return Err(diagnostic::INVALID_PS);
        }
        if data.user_data.len() > self.params.rx_packet_size {
            return Err(diagnostic::PACKET_TOO_LONG);
        }
        if self.reassembly.started && self.reassembly.q != data.q {
            return Err(diagnostic::INCONSISTENT_Q_BIT);
        }
        let confirmed = self.receive_pr(data.pr)?;
        self.vr = self.inc(self.vr);
        self.ack_pending = true;
        let r = &mut self.reassembly;
        if !r.started {
            r.started = true;
            r.q = data.q;
        }
        r.d |= data.d;
        r.data.extend_from_slice(&data.user_data);
        let message = if data.m {
            None
        } else {
            let r = core::mem::take(&mut self.reassembly);
            Some(Message {
                q: r.q,
                d: r.d,
                data: r.data,
            })
        };
        Ok(Received { message, confirmed })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use linklab_wire::control::Modulus;

    fn params(modulus: Modulus, window: u8, size: usize) -> CallParams {
        CallParams {
            modulus,
            tx_packet_size: size,
            rx_packet_size: size,
            tx_window: window,
            rx_window: window,
            d_bit: true,
        }
    }

    #[test]
    fn window_stops_the_sender_and_p_r_rotates_it() {
        let mut dt = DataTransfer::new(params(Modulus::Mod8, 2, 16));
        dt.queue_message(false, false, &[0; 80]);
        assert_eq!(dt.queued(), 5);
        let sent: Vec<_> = core::iter::from_fn(|| dt.next_data()).collect();
        assert_eq!(sent.iter().map(|d| d.ps).collect::<Vec<_>>(), [0, 1]);
        assert!(sent.iter().all(|d| d.m));
        assert_eq!(dt.receive_pr(3), Err(diagnostic::INVALID_PR));
        assert_eq!(dt.receive_pr(1), Ok(0));
        assert_eq!(dt.next_data().map(|d| d.ps), Some(2));
        assert_eq!(dt.next_data(), None);
    }

    #[test]
    fn out_of_sequence_p_s_is_invalid() {
        let mut dt = DataTransfer::new(params(Modulus::Mod128, 2, 16));
        let packet = DataFields {
            ps: 1,
            ..DataFields::default()
        };
        assert_eq!(dt.receive_data(packet).err(), Some(diagnostic::INVALID_PS));
    }
}
