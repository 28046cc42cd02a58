//! What a program that runs the node in its own process (`linklab
//! station`) may see of it while it runs: the bundles stored, the
//! neighbours with a session now, and the bundles forwarded and
//! delivered. The agent's thread writes it after each event
//! ([`run_watched`](crate::node::run_watched)); the program reads it.

use std::sync::{Arc, Mutex};

/// The node at its last event.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeWatch {
    /// Bundles in the store.
    pub stored: usize,
    /// Neighbours with a convergence-layer session now (node ID or
    /// address as the session names them).
    pub contacts: Vec<String>,
    /// Bundles whose transfer to a neighbour succeeded.
    pub forwarded: u64,
    /// Bundles delivered to local applications (confirmed).
    pub delivered: u64,
}

/// A [`NodeWatch`] shared between the node and the program.
pub type SharedWatch = Arc<Mutex<NodeWatch>>;
