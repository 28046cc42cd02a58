//! A TNC between a host and the radio: the host serial link, the TNC's
//! processor and its bounded transmit buffer, so that the frames a TNC has
//! ready when it wins the channel (its "real window size", Zielinski 2013
//! section 3) and its turnaround delay come out of the model.
//!
//! Model (generic parameters, no named firmware profiles):
//! - **Serial link** at R_w bit/s, 10 bits per octet (start, 8 data, stop;
//!   Zielinski eq. 5), one frame at a time each way. A frame crosses it
//!   KISS-encoded (FEND, type octet, escaped body, FEND; exact length from
//!   the wire crate's KISS encoder).
//! - **Processor**: one CPU serving both directions first come, first
//!   served; a frame of n octets takes `per_frame + n·per_octet`.
//! - **Transmit buffer** of `tx_buffer_octets`: a frame's octets are
//!   reserved when the host starts sending it over the serial link and
//!   released when the radio has sent it ([`Tnc::handle_frame_sent`]). The
//!   host is flow-controlled: the next frame does not start across the
//!   serial link until it fits (a frame larger than the whole buffer is
//!   taken when the buffer is empty).
//!
//! Transmit path: host → serial → CPU → [`Tnc::poll_transmit`] (hand the
//! frame to the medium). Receive path: [`Tnc::handle_radio_frame`] → CPU →
//! serial → [`Tnc::poll_host_delivery`].

use core::time::Duration;
use linklab_core::{Engine, Instant};
use std::collections::VecDeque;

use linklab_wire::kiss;

use crate::airtime::bits_duration;

/// Bits per octet on the asynchronous serial link (start + 8 + stop).
pub const SERIAL_BITS_PER_OCTET: u64 = 10;

/// The TNC's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TncConfig {
    /// Host serial rate R_w, bit/s.
    pub serial_rate: u32,
    /// Processing time per frame.
    pub per_frame: Duration,
    /// Processing time per body octet.
    pub per_octet: Duration,
    /// Transmit buffer capacity in body octets.
    pub tx_buffer_octets: usize,
}

impl TncConfig {
    /// Time to move a frame with `body` across the serial link.
    pub fn serial_time(&self, body: &[u8]) -> Duration {
        let octets = kiss::encode(&kiss::Frame::data(body.to_vec())).len() as u64;
        bits_duration(octets * SERIAL_BITS_PER_OCTET, self.serial_rate)
    }

    /// Processor time for a frame of `octets` body octets.
    pub fn processing_time(&self, octets: usize) -> Duration {
        let per_octet = self
            .per_octet
            .checked_mul(u32::try_from(octets).unwrap_or(u32::MAX))
            .unwrap_or(Duration::MAX);
        self.per_frame.saturating_add(per_octet)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Job {
    /// A frame from the host, for the radio.
    Transmit(Vec<u8>),
    /// A frame from the radio, for the host.
    Receive(Vec<u8>),
}

/// The TNC state machine.
#[derive(Debug)]
pub struct Tnc {
    config: TncConfig,
    /// Frames the host has written but not yet started over the serial link.
    host_queue: VecDeque<Vec<u8>>,
    serial_in: Option<(Vec<u8>, Instant)>,
    cpu_queue: VecDeque<Job>,
    cpu: Option<(Job, Instant)>,
    serial_out_queue: VecDeque<Vec<u8>>,
    serial_out: Option<(Vec<u8>, Instant)>,
    to_radio: VecDeque<Vec<u8>>,
    to_host: VecDeque<Vec<u8>>,
    /// Octets reserved in the transmit buffer.
    reserved: usize,
}

impl Tnc {
    /// An idle TNC.
    pub fn new(config: TncConfig) -> Self {
        Tnc {
            config,
            host_queue: VecDeque::new(),
            serial_in: None,
            cpu_queue: VecDeque::new(),
            cpu: None,
            serial_out_queue: VecDeque::new(),
            serial_out: None,
            to_radio: VecDeque::new(),
            to_host: VecDeque::new(),
            reserved: 0,
        }
    }

    /// The TNC's parameters.
    pub fn config(&self) -> &TncConfig {
        &self.config
    }

    /// Octets held in (or reserved in) the transmit buffer.
    pub fn buffered_octets(&self) -> usize {
        self.reserved
    }

    /// The host writes a frame (an AX.25 frame body) to the TNC.
    pub fn host_send(&mut self, now: Instant, frame: Vec<u8>) {
        self.host_queue.push_back(frame);
        self.start_serial_in(now);
    }

    /// A frame received intact from the radio.
    pub fn handle_radio_frame(&mut self, now: Instant, frame: Vec<u8>) {
        self.cpu_queue.push_back(Job::Receive(frame));
        self.start_cpu(now);
    }

    /// The radio finished sending one of this TNC's frames, of `octets`
    /// body octets (`MediumEvent::FrameSent`): its buffer space is freed.
    pub fn handle_frame_sent(&mut self, now: Instant, octets: usize) {
        self.reserved = self.reserved.saturating_sub(octets);
        self.start_serial_in(now);
    }

    /// The next frame that has reached the host.
    pub fn poll_host_delivery(&mut self) -> Option<Vec<u8>> {
        self.to_host.pop_front()
    }

    fn start_serial_in(&mut self, now: Instant) {
        if self.serial_in.is_some() {
            return;
        }
        let Some(len) = self.host_queue.front().map(Vec::len) else {
            return;
        };
        let fits = self.reserved.saturating_add(len) <= self.config.tx_buffer_octets;
        if !(fits || self.reserved == 0) {
            return;
        }
        if let Some(frame) = self.host_queue.pop_front() {
            self.reserved += len;
            let end = now + self.config.serial_time(&frame);
            self.serial_in = Some((frame, end));
        }
    }

    fn start_cpu(&mut self, now: Instant) {
        if self.cpu.is_some() {
            return;
        }
        if let Some(job) = self.cpu_queue.pop_front() {
            let len = match &job {
                Job::Transmit(f) | Job::Receive(f) => f.len(),
            };
            let end = now + self.config.processing_time(len);
            self.cpu = Some((job, end));
        }
    }

    fn start_serial_out(&mut self, now: Instant) {
        if self.serial_out.is_some() {
            return;
        }
        if let Some(frame) = self.serial_out_queue.pop_front() {
            let end = now + self.config.serial_time(&frame);
            self.serial_out = Some((frame, end));
        }
    }
}

impl Engine for Tnc {
    type Transmit = Vec<u8>;

    /// The next frame ready for the radio: pass it to the medium's
    /// `transmit`.
    fn poll_transmit(&mut self, _now: Instant) -> Option<Self::Transmit> {
        self.to_radio.pop_front()
    }

    /// When the TNC next needs [`handle_timeout`](Self::handle_timeout).
    fn poll_timeout(&self) -> Option<Instant> {
        [&self.serial_in, &self.serial_out]
            .into_iter()
            .filter_map(|s| s.as_ref().map(|(_, t)| *t))
            .chain(self.cpu.as_ref().map(|(_, t)| *t))
            .min()
    }

    /// Advances the TNC to `now`.
    fn handle_timeout(&mut self, now: Instant) {
        while let Some(t) = self.poll_timeout().filter(|&t| t <= now) {
            if let Some((frame, _)) = self.serial_in.take_if(|(_, end)| *end == t) {
                self.cpu_queue.push_back(Job::Transmit(frame));
                self.start_cpu(t);
                self.start_serial_in(t);
            } else if let Some((job, _)) = self.cpu.take_if(|(_, end)| *end == t) {
                match job {
                    Job::Transmit(frame) => self.to_radio.push_back(frame),
                    Job::Receive(frame) => {
                        self.serial_out_queue.push_back(frame);
                        self.start_serial_out(t);
                    }
                }
                self.start_cpu(t);
            } else if let Some((frame, _)) = self.serial_out.take_if(|(_, end)| *end == t) {
                self.to_host.push_back(frame);
                self.start_serial_out(t);
            }
        }
    }
}
