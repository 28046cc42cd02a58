//! `linklab advise`: the seed papers' findings turned into settings for a
//! user's own link.
//!
//! Every seed paper asks which settings (window k, N1, T1, when to
//! acknowledge, persistence and slot time, the serial rate to the TNC)
//! carry the most over a given channel. Given a [`Link`] (the channel, the
//! two ends, the message, what the equipment allows), [`advise`] searches
//! those settings: every combination in closed form first
//! ([`model::estimate`], Zieliński's cycle with the ends' turnaround, the
//! acknowledgement delay and lost frames added), then the best few on the
//! simulator, which runs the real AX.25 engine at both ends
//! ([`simulate`](mod@simulate)), then each parameter varied alone from the best, which
//! refines it and says which parameters matter ([`Sensitivity`]). Beside
//! the advice it simulates the Linux kernel's and Dire Wolf's defaults
//! and the settings in use ([`Compared`]).
//!
//! Sans-IO like the engines: a [`Link`] in, an [`Advice`] out, no clock
//! and no files; `linklab advise` reads and prints.

pub mod link;
pub mod model;
pub mod probe;
pub mod search;
pub mod settings;
pub mod simulate;

pub use link::{Channel, Duplex, Ends, Fades, KissEnds, Limits, Link, LinkError, Modulo, Workload};
pub use search::{
    advise, Advice, AdviseError, Compared, Rated, SearchOptions, Sensitivity, Variant,
};
pub use settings::{Ack, Procedure, Settings, Stack};
pub use simulate::{simulate, Simulated, SimulationError, LEVEL};
