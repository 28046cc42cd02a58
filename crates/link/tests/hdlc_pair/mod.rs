//! Test support for HDLC links: a primary (or LAPB DTE) A and a secondary
//! (or DCE) B over a full-duplex lossy line, in virtual time: the
//! generic pair of `support` over [`HdlcFraming`].
#![allow(dead_code)]

use linklab_link::{Config, HdlcAddressing, HdlcFraming, HdlcLink, Mode, Role};
use linklab_wire::control::Control;
use linklab_wire::lapb::{Address, Frame, LinkProcedure, Role as LapbRole, Station};

pub use crate::support::Side;
use crate::support::{test_framing, LinkPair};

/// The HDLC pair.
pub type HdlcPair = LinkPair<HdlcFraming>;

/// The secondary's address in the unbalanced tests.
pub const SECONDARY: Address = Address(0x21);

/// `<I C P S0 R1>`-style text of a frame.
pub fn show(frame: &Frame) -> String {
    let c = frame.control();
    let pf = if c.pf() { " PF" } else { "" };
    match c {
        Control::I { ns, nr, .. } => format!("<I{pf} S{ns} R{nr}> {} octets", frame.info().len()),
        Control::S { nr, .. } => format!("<{}{pf} R{nr}>", c.name()),
        Control::U { .. } => format!("<{}{pf}>", c.name()),
    }
}

// The log shows the address octet, then [`show`].
test_framing!(HdlcFraming, Frame, carrier_sense: false, text: |frame: &Frame| {
    format!("{:02x} {}", frame.address().octet(), show(frame))
});

/// Config for `mode`: A's role is primary (combined in ABM), B's secondary.
pub fn configs(mode: Mode, base: Config) -> (Config, Config) {
    let (ra, rb) = match mode {
        Mode::Abm => (Role::Combined, Role::Combined),
        _ => (Role::Primary, Role::Secondary),
    };
    (
        Config {
            mode,
            role: ra,
            ..base.clone()
        },
        Config {
            mode,
            role: rb,
            ..base
        },
    )
}

impl HdlcPair {
    /// A and B in `mode`; B accepts the link. In ABM, A is the DTE (LAPB
    /// single link), in NRM/ARM the primary.
    pub fn new(mode: Mode, config_a: Config, config_b: Config, seed: u64) -> HdlcPair {
        let (addr_a, addr_b) = match mode {
            Mode::Abm => (
                HdlcAddressing::Lapb {
                    role: LapbRole::Dte,
                    procedure: LinkProcedure::SingleLink,
                },
                HdlcAddressing::Lapb {
                    role: LapbRole::Dce,
                    procedure: LinkProcedure::SingleLink,
                },
            ),
            _ => (
                HdlcAddressing::Unbalanced {
                    station: Station::Primary,
                    secondary: SECONDARY,
                },
                HdlcAddressing::Unbalanced {
                    station: Station::Secondary,
                    secondary: SECONDARY,
                },
            ),
        };
        let a = HdlcLink::new(config_a, addr_a).unwrap();
        let b = HdlcLink::new(config_b, addr_b).unwrap();
        LinkPair::with_links(a, b, seed)
    }

    /// True if the secondary (B) never sent a frame except as a response
    /// to a poll: every frame it sends follows a P = 1 from A received
    /// since its previous F = 1 (NRM, ISO/IEC 13239; Bux A1.2).
    pub fn secondary_only_polled(&self) -> Result<(), String> {
        let polls: Vec<_> = self.arrivals[1]
            .iter()
            .filter(|a| a.poll)
            .map(|a| a.at)
            .collect();
        let mut next_poll = 0;
        let mut holds = false;
        for (t, frame) in &self.sent[1] {
            while next_poll < polls.len() && polls[next_poll] <= *t {
                holds = true;
                next_poll += 1;
            }
            if !holds {
                return Err(format!("B sent {} at {t:?} unpolled", show(frame)));
            }
            if frame.control().pf() {
                holds = false;
            }
        }
        Ok(())
    }
}
