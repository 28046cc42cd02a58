//! The node table: neighbours, destinations and up to three routes per
//! destination, learned from NODES broadcasts and aged by obsolescence
//! counts (LinBPQ `L3Code.c`
//! `PROCESSNODEMESSAGE`, `PROCROUTES`, `REMOVENODES`; the kernel's
//! `nr_route.c` with `netromd` computing qualities).
//!
//! A route's quality is the broadcast quality times the quality of the
//! neighbour it was heard from, over 256, rounded to nearest:
//! `(broadcast × neighbour + 128) / 256` ([`route_quality`]). Each route
//! starts with the obsolescence count [`RoutingConfig::obsolescence_count_initialiser`],
//! is refreshed to it whenever the neighbour advertises the destination
//! again, loses one per broadcast interval ([`NodeTable::age`]) and goes
//! at zero. Locked routes (configured by hand) neither age nor change
//! quality.

use std::collections::BTreeMap;

use linklab_wire::ax25::{same_station, Address, Callsign};

use crate::wire::{station, Alias, NodesBroadcast, NodesEntry};

/// Most routes kept per destination (LinBPQ `NRROUTE[3]`;
/// kernel `nr_node->routes[3]`).
pub const MAX_ROUTES: usize = 3;

/// The routing parameters, named as the kernel's netrom sysctls and
/// LinBPQ's configuration keywords name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoutingConfig {
    /// The count a route starts with and is refreshed to:
    /// `obsolescence_count_initialiser` 6 (kernel
    /// `NR_DEFAULT_OBS`; LinBPQ `OBSINIT` 6).
    pub obsolescence_count_initialiser: u8,
    /// The least obsolescence count a route needs to be advertised in our
    /// broadcasts: LinBPQ `OBSMIN`, default 5 (the kernel leaves it to
    /// netromd's `min_obs`).
    pub broadcast_minimum_obsolescence: u8,
    /// The least quality a learned route needs to enter the table: LinBPQ
    /// `MINQUAL` (default 150 there); 1 here, as the kernel's
    /// `nr_add_node`, which takes any route netromd gives it. A computed
    /// quality of 0 never enters.
    pub minimum_quality: u8,
    /// The least quality a route needs to be advertised: LinBPQ's
    /// per-port `MINQUAL` for broadcasts, never below 1 ("don't send
    /// zero", `SENDNODES`).
    pub broadcast_minimum_quality: u8,
    /// The quality of a neighbour heard on a port without a configured
    /// quality: `default_path_quality` 10 (kernel `NR_DEFAULT_QUAL`).
    pub default_path_quality: u8,
    /// Link failures to a neighbour after which its routes are passed
    /// over: `link_fails_count` 2 (kernel `NR_DEFAULT_FAILS`).
    pub link_fails_count: u8,
    /// Most destinations kept: LinBPQ `MAXNODES`/`MAXDESTS`, 250 by
    /// default. A broadcast cannot grow the table past it.
    pub maximum_destinations: usize,
    /// Most neighbours kept: LinBPQ `MAXNEIGHBOURS`, 64 by default.
    pub maximum_neighbours: usize,
}

impl Default for RoutingConfig {
    fn default() -> RoutingConfig {
        RoutingConfig {
            obsolescence_count_initialiser: 6,
            broadcast_minimum_obsolescence: 5,
            minimum_quality: 1,
            broadcast_minimum_quality: 1,
            default_path_quality: 10,
            link_fails_count: 2,
            maximum_destinations: 250,
            maximum_neighbours: 64,
        }
    }
}

/// The quality of a route learned from a neighbour: the advertised
/// quality scaled by the neighbour's, rounded to nearest as LinBPQ
/// (`((ROUTEQUAL * qual) + 128) / 256`) and netromd compute it.
pub fn route_quality(broadcast: u8, neighbour: u8) -> u8 {
    let q = (u32::from(broadcast) * u32::from(neighbour) + 128) / 256;
    // At most (255 × 255 + 128) / 256 = 254.
    q as u8
}

/// A neighbour: a node heard directly on one port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NeighbourKey {
    /// The port (the station's port number) it is heard on.
    pub port: usize,
    /// Its callsign.
    pub call: Address,
}

impl NeighbourKey {
    fn order(&self) -> (usize, Callsign, u8) {
        (self.port, self.call.callsign(), self.call.ssid())
    }
}

/// A station as a map key: callsign and SSID.
fn order(call: &Address) -> (Callsign, u8) {
    (call.callsign(), call.ssid())
}

/// What the table knows of a neighbour.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Neighbour {
    /// Port and callsign.
    pub key: NeighbourKey,
    /// The quality given to routes through it.
    pub quality: u8,
    /// Configured by hand (kept even without routes).
    pub locked: bool,
    /// Link failures since it was last heard.
    pub failures: u8,
}

/// One route to a destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route {
    /// The neighbour datagrams go to.
    pub neighbour: NeighbourKey,
    /// The route's quality, 1-255.
    pub quality: u8,
    /// Broadcast intervals left before the route goes.
    pub obsolescence: u8,
    /// Configured by hand: never ages, quality fixed.
    pub locked: bool,
}

/// A destination node and its routes, best first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Destination {
    /// Its callsign.
    pub call: Address,
    /// Its alias.
    pub alias: Alias,
    /// Up to [`MAX_ROUTES`] routes, in falling quality.
    pub routes: Vec<Route>,
}

/// What one NODES broadcast did to the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Learned {
    /// Entries that made or refreshed a route.
    pub taken: usize,
    /// Entries for ourselves, below the minimum quality, or worse than
    /// three better routes already known.
    pub ignored: usize,
    /// Entries whose best neighbour is us: the route through the sender
    /// is a loop and is dropped.
    pub loops: usize,
    /// Entries for new destinations left out because the table is full
    /// ([`RoutingConfig::maximum_destinations`]), or every entry when the
    /// sender would be a neighbour past
    /// [`RoutingConfig::maximum_neighbours`].
    pub table_full: usize,
}

/// The node table of one node.
#[derive(Debug, Clone)]
pub struct NodeTable {
    my_call: Address,
    config: RoutingConfig,
    port_quality: BTreeMap<usize, u8>,
    neighbours: BTreeMap<(usize, Callsign, u8), Neighbour>,
    destinations: BTreeMap<(Callsign, u8), Destination>,
}

impl NodeTable {
    /// An empty table for the node `my_call`.
    pub fn new(my_call: Address, config: RoutingConfig) -> NodeTable {
        NodeTable {
            my_call,
            config,
            port_quality: BTreeMap::new(),
            neighbours: BTreeMap::new(),
            destinations: BTreeMap::new(),
        }
    }

    /// The parameters.
    pub fn config(&self) -> &RoutingConfig {
        &self.config
    }

    /// Sets the quality of neighbours heard on `port` that have no quality
    /// of their own (LinBPQ's per-port `QUALITY`).
    pub fn set_port_quality(&mut self, port: usize, quality: u8) {
        self.port_quality.insert(port, quality);
    }

    /// Configures a neighbour with its own quality (LinBPQ `ROUTES:`
    /// entry; kernel `nr_add_neigh` from `nrparms`). A locked neighbour's
    /// quality is not replaced by the port's.
    pub fn set_neighbour(&mut self, key: NeighbourKey, quality: u8, locked: bool) {
        let key = NeighbourKey {
            call: station(&key.call),
            ..key
        };
        let n = self.neighbour_entry(key);
        n.quality = quality;
        n.locked = locked;
    }

    /// Adds a locked route (kernel `nrparms -nodes ... `; LinBPQ's locked
    /// routes): it never ages and broadcasts do not change its quality.
    pub fn lock_route(
        &mut self,
        destination: Address,
        alias: Alias,
        neighbour: NeighbourKey,
        quality: u8,
    ) {
        let neighbour = NeighbourKey {
            call: station(&neighbour.call),
            ..neighbour
        };
        self.neighbour_entry(neighbour);
        let obsolescence = self.config.obsolescence_count_initialiser;
        let dest = self.destination_entry(destination);
        if !alias.is_blank() {
            dest.alias = alias;
        }
        dest.routes.retain(|r| r.neighbour != neighbour);
        dest.routes.push(Route {
            neighbour,
            quality,
            obsolescence,
            locked: true,
        });
        sort_and_trim(&mut dest.routes);
    }

    /// Takes in a NODES broadcast heard from `from` on `port` (Software
    /// 2000; LinBPQ `PROCESSNODEMESSAGE`): the sender itself becomes a
    /// destination at the neighbour's quality, then each entry gives a
    /// route through the sender at [`route_quality`].
    pub fn learn(&mut self, port: usize, from: Address, broadcast: &NodesBroadcast) -> Learned {
        let mut learned = Learned::default();
        if same_station(&from, &self.my_call) {
            learned.ignored = broadcast.entries.len();
            return learned;
        }
        let from = station(&from);
        let key = NeighbourKey { port, call: from };
        let known = self.neighbours.contains_key(&key.order());
        if !known && self.neighbours.len() >= self.config.maximum_neighbours {
            learned.table_full = broadcast.entries.len() + 1;
            return learned;
        }
        let neighbour_quality = self.neighbour_quality(key);
        if neighbour_quality == 0 {
            // Quality 0 shuts the neighbour or port out of routing
            // (LinBPQ's `QUALITY=0`).
            learned.ignored = broadcast.entries.len() + 1;
            return learned;
        }
        let neighbour_quality = self.neighbour_entry(key).quality;
        if let Some(n) = self.neighbours.get_mut(&key.order()) {
            n.failures = 0;
        }
        if self.is_full_for(&from) {
            learned.table_full += 1;
        } else {
            self.update_route(from, broadcast.alias, key, neighbour_quality);
        }
        for entry in &broadcast.entries {
            if same_station(&entry.destination, &self.my_call)
                || same_station(&entry.destination, &from)
            {
                learned.ignored += 1;
                continue;
            }
            if same_station(&entry.best_neighbour, &self.my_call) {
                learned.loops += 1;
                self.drop_route(entry.destination, key);
                continue;
            }
            let quality = route_quality(entry.quality, neighbour_quality);
            if quality == 0 || quality < self.config.minimum_quality {
                learned.ignored += 1;
                continue;
            }
            if self.is_full_for(&entry.destination) {
                learned.table_full += 1;
                continue;
            }
            if self.update_route(entry.destination, entry.alias, key, quality) {
                learned.taken += 1;
            } else {
                learned.ignored += 1;
            }
        }
        learned
    }

    /// A datagram from `origin` came in through `neighbour` and the table
    /// has no route to `origin`: one through that neighbour at quality 0,
    /// as the Linux kernel's `nr_route_frame` adds, so that a node not yet
    /// in any NODES broadcast heard here (a caller whose broadcast has not
    /// reached us) can be answered. A quality-0 route is used only while
    /// there is no other, is never broadcast
    /// ([`NodeTable::broadcast_entries`]) and ages out as any other.
    /// Returns true if the route was added.
    pub fn learn_origin(&mut self, origin: Address, neighbour: NeighbourKey) -> bool {
        if same_station(&origin, &self.my_call)
            || self.best_route(&origin).is_some()
            || self.is_full_for(&origin)
            || self.neighbour_quality(neighbour) == 0
        {
            return false;
        }
        self.neighbour_entry(neighbour);
        let origin = station(&origin);
        self.update_route(origin, Alias::from([b' '; 6]), neighbour, 0)
    }

    /// One broadcast interval passes: every unlocked route's obsolescence
    /// count falls by one and routes at zero go, then destinations without
    /// routes and unlocked neighbours without routes (LinBPQ
    /// `REMOVENODES`).
    pub fn age(&mut self) {
        for dest in self.destinations.values_mut() {
            for route in dest.routes.iter_mut().filter(|r| !r.locked) {
                route.obsolescence = route.obsolescence.saturating_sub(1);
            }
            dest.routes.retain(|r| r.locked || r.obsolescence > 0);
        }
        self.destinations.retain(|_, d| !d.routes.is_empty());
        self.forget_unused_neighbours();
    }

    /// A layer-2 link to `neighbour` failed (kernel `nr_link_failed`):
    /// after [`RoutingConfig::link_fails_count`] failures its routes are
    /// passed over by [`NodeTable::best_route`] until it is heard again.
    pub fn link_failed(&mut self, neighbour: NeighbourKey) {
        if let Some(n) = self.neighbours.get_mut(&neighbour.order()) {
            n.failures = n.failures.saturating_add(1);
        }
    }

    /// A layer-2 link to `neighbour` came up: its failures are forgotten.
    pub fn link_up(&mut self, neighbour: NeighbourKey) {
        if let Some(n) = self.neighbours.get_mut(&neighbour.order()) {
            n.failures = 0;
        }
    }

    /// The best usable route to `destination`: the first whose neighbour
    /// has not failed [`RoutingConfig::link_fails_count`] times.
    pub fn best_route(&self, destination: &Address) -> Option<&Route> {
        let dest = self.destination(destination)?;
        dest.routes.iter().find(|r| {
            self.neighbours
                .get(&r.neighbour.order())
                .is_none_or(|n| n.failures < self.config.link_fails_count)
        })
    }

    /// The destination with callsign `call` (SSID counts).
    pub fn destination(&self, call: &Address) -> Option<&Destination> {
        self.destinations.get(&order(call))
    }

    /// The destination whose alias is `alias`.
    pub fn find_alias(&self, alias: &Alias) -> Option<&Destination> {
        self.destinations.values().find(|d| d.alias == *alias)
    }

    /// The destination a user names: by alias (as nodes show aliases, any
    /// case) or by callsign with optional SSID (`CONNECT BPQNOD` or
    /// `CONNECT G8BPQ-2` at a node's prompt).
    pub fn resolve(&self, name: &str) -> Option<&Destination> {
        let by_alias = name.parse::<Alias>().ok().and_then(|a| self.find_alias(&a));
        by_alias.or_else(|| {
            name.parse::<Address>()
                .ok()
                .and_then(|c| self.destination(&c))
        })
    }

    /// Every destination, in callsign order.
    pub fn destinations(&self) -> impl Iterator<Item = &Destination> {
        self.destinations.values()
    }

    /// Every neighbour.
    pub fn neighbours(&self) -> impl Iterator<Item = &Neighbour> {
        self.neighbours.values()
    }

    /// The entries our NODES broadcast carries: each destination whose
    /// best route is good enough and fresh enough (LinBPQ `SENDNODES`:
    /// quality at least the broadcast minimum, never 0; obsolescence at
    /// least `OBSMIN`; locked routes always fresh).
    pub fn broadcast_entries(&self) -> Vec<NodesEntry> {
        let min_quality = self.config.broadcast_minimum_quality.max(1);
        self.destinations
            .values()
            .filter_map(|d| {
                let route = self.best_route(&d.call)?;
                let fresh = route.locked
                    || route.obsolescence >= self.config.broadcast_minimum_obsolescence;
                (route.quality >= min_quality && fresh).then_some(NodesEntry {
                    destination: d.call,
                    alias: d.alias,
                    best_neighbour: route.neighbour.call,
                    quality: route.quality,
                })
            })
            .collect()
    }

    /// Whether `call` is a new destination and the table has no room.
    fn is_full_for(&self, call: &Address) -> bool {
        self.destination(call).is_none()
            && self.destinations.len() >= self.config.maximum_destinations
    }

    /// The quality of `key`: its own if configured, else its port's, else
    /// the default path quality.
    fn neighbour_quality(&self, key: NeighbourKey) -> u8 {
        match self.neighbours.get(&key.order()) {
            Some(n) => n.quality,
            None => self
                .port_quality
                .get(&key.port)
                .copied()
                .unwrap_or(self.config.default_path_quality),
        }
    }

    fn neighbour_entry(&mut self, key: NeighbourKey) -> &mut Neighbour {
        let quality = self.neighbour_quality(key);
        self.neighbours.entry(key.order()).or_insert(Neighbour {
            key,
            quality,
            locked: false,
            failures: 0,
        })
    }

    fn destination_entry(&mut self, call: Address) -> &mut Destination {
        let key = station(&call);
        self.destinations.entry(order(&key)).or_insert(Destination {
            call: key,
            alias: Alias::BLANK,
            routes: Vec::new(),
        })
    }

    /// Refreshes or adds the route to `call` through `neighbour`; false if
    /// three better routes leave no room for it.
    fn update_route(
        &mut self,
        call: Address,
        alias: Alias,
        neighbour: NeighbourKey,
        quality: u8,
    ) -> bool {
        let obsolescence = self.config.obsolescence_count_initialiser;
        let dest = self.destination_entry(call);
        if !alias.is_blank() {
            dest.alias = alias;
        }
        let taken = if let Some(route) = dest.routes.iter_mut().find(|r| r.neighbour == neighbour) {
            if !route.locked {
                route.quality = quality;
                route.obsolescence = obsolescence;
            }
            true
        } else {
            let room = dest.routes.len() < MAX_ROUTES
                || dest.routes.iter().any(|r| !r.locked && r.quality < quality);
            if room {
                dest.routes.push(Route {
                    neighbour,
                    quality,
                    obsolescence,
                    locked: false,
                });
            }
            room
        };
        sort_and_trim(&mut dest.routes);
        let empty = dest.routes.is_empty();
        if empty {
            self.destinations.remove(&order(&call));
        }
        taken
    }

    fn drop_route(&mut self, call: Address, neighbour: NeighbourKey) {
        let key = order(&call);
        if let Some(dest) = self.destinations.get_mut(&key) {
            dest.routes.retain(|r| r.locked || r.neighbour != neighbour);
            if dest.routes.is_empty() {
                self.destinations.remove(&key);
            }
        }
    }

    fn forget_unused_neighbours(&mut self) {
        let destinations = &self.destinations;
        self.neighbours.retain(|_, n| {
            n.locked
                || destinations
                    .values()
                    .any(|d| d.routes.iter().any(|r| r.neighbour == n.key))
        });
    }
}

/// Best first (stable, so among equals the older route stays ahead, as
/// LinBPQ's swaps keep it), then the worst unlocked routes beyond
/// [`MAX_ROUTES`] go.
fn sort_and_trim(routes: &mut Vec<Route>) {
    routes.sort_by_key(|r| std::cmp::Reverse(r.quality));
    while routes.len() > MAX_ROUTES {
        match routes.iter().rposition(|r| !r.locked) {
            Some(i) => {
                routes.remove(i);
            }
            None => {
                routes.pop();
            }
        }
    }
}
