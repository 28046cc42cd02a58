//! The bottom of linklab's stack (docs/architecture.md, `core`): what every
//! sans-IO engine and every model shares, and nothing else.
//!
//! - [`time`]: virtual time, [`Instant`] in microseconds. Engines never read
//!   a clock; the simulator, the emulator and the real-time drivers pass
//!   `now` in.
//! - [`rng`]: seeded random streams ([`Streams`], [`Stream`]), identical on
//!   every platform, one per named component.
//! - [`timer`]: a fixed table of timers indexed by an engine's own timer
//!   enum ([`TimerTable`]).
//! - [`engine`]: the [`Engine`] trait, the one shape of time handling every
//!   engine offers, and [`earliest`] for the next wake-up of several.
//! - [`text`]: [`Position`], the place in a configuration or scenario file
//!   a reader reports a mistake at.
//!
//! This crate uses no other linklab crate.

pub mod engine;
pub mod rng;
pub mod text;
pub mod time;
pub mod timer;

pub use core::time::Duration;
pub use engine::{earliest, Engine};
pub use rng::{Stream, Streams};
pub use text::Position;
pub use time::Instant;
pub use timer::{TimerKind, TimerTable};
