//! The persistent bundle store (RFC 9171 clause 5.6 step 1: a received bundle
//! is retained until it is forwarded, delivered or deleted).
//!
//! The agent keeps a copy of everything in memory and writes every change
//! to a [`Store`] as one atomic, durable [`Batch`] before it acts on it:
//! a bundle is acknowledged as accepted only once its batch has committed,
//! and a delivery is marked done (and remembered, so that a copy arriving
//! later is not delivered again) in the same batch that removes the bundle.
//! [`MemoryStore`] keeps nothing across a restart (for simulations);
//! [`RedbStore`](crate::RedbStore) keeps everything in a redb database file.

use std::collections::BTreeMap;

use thiserror::Error;

/// What the agent is to do with a stored bundle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Disposition {
    /// Forward towards its destination (RFC 9171 5.4).
    Forward,
    /// Deliver to a local endpoint (5.7).
    Deliver,
    /// A fragment for a local endpoint, held until its ADU is whole (5.9).
    Reassemble,
}

impl Disposition {
    fn code(self) -> u8 {
        match self {
            Disposition::Forward => 0,
            Disposition::Deliver => 1,
            Disposition::Reassemble => 2,
        }
    }

    fn from_code(code: u8) -> Option<Disposition> {
        match code {
            0 => Some(Disposition::Forward),
            1 => Some(Disposition::Deliver),
            2 => Some(Disposition::Reassemble),
            _ => None,
        }
    }
}

/// One bundle in the store, with what the agent knows about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredBundle {
    /// What is to happen to it.
    pub disposition: Disposition,
    /// DTN time (milliseconds since 2000-01-01 UTC, RFC 9171 4.2.6) at
    /// which this node received or created it.
    pub received_at: u64,
    /// DTN time at which its lifetime ends (5.5).
    pub expires_at: u64,
    /// The encoded bundle.
    pub octets: Vec<u8>,
}

/// Version tag of the record layout written by [`StoredBundle::encode`].
const RECORD_VERSION: u8 = 1;
const RECORD_HEADER: usize = 1 + 1 + 8 + 8;

impl StoredBundle {
    /// The record as stored: version, disposition, the two times (big-endian)
    /// and the bundle.
    pub fn encode(&self) -> Vec<u8> {
        let mut record = Vec::with_capacity(RECORD_HEADER + self.octets.len());
        record.push(RECORD_VERSION);
        record.push(self.disposition.code());
        record.extend_from_slice(&self.received_at.to_be_bytes());
        record.extend_from_slice(&self.expires_at.to_be_bytes());
        record.extend_from_slice(&self.octets);
        record
    }

    /// Reads a record written by [`StoredBundle::encode`].
    pub fn decode(record: &[u8]) -> Result<StoredBundle, StoreError> {
        if record.len() < RECORD_HEADER || record[0] != RECORD_VERSION {
            return Err(StoreError::Corrupt("bundle record header".into()));
        }
        let disposition = Disposition::from_code(record[1])
            .ok_or_else(|| StoreError::Corrupt(format!("disposition code {}", record[1])))?;
        let time = |at: usize| {
            let mut octets = [0; 8];
            octets.copy_from_slice(&record[at..at + 8]);
            u64::from_be_bytes(octets)
        };
        Ok(StoredBundle {
            disposition,
            received_at: time(2),
            expires_at: time(10),
            octets: record[RECORD_HEADER..].to_vec(),
        })
    }
}

/// Everything a store holds, as read at start-up.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// Stored bundles by store key.
    pub bundles: BTreeMap<u64, StoredBundle>,
    /// Bundles already delivered: bundle identity (see
    /// [`bundle_key`](crate::bundle::bundle_key)) to the DTN time until which
    /// the record is kept.
    pub delivered: BTreeMap<Vec<u8>, u64>,
    /// The next creation-timestamp sequence number (RFC 9171 4.2.7).
    pub next_sequence: u64,
}

/// Changes applied to a store atomically and durably by [`Store::commit`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Batch {
    /// Bundles to add or replace.
    pub put: Vec<(u64, StoredBundle)>,
    /// Store keys to remove.
    pub remove: Vec<u64>,
    /// Delivery records to add.
    pub delivered: Vec<(Vec<u8>, u64)>,
    /// Delivery records to forget (their bundles have expired).
    pub forget: Vec<Vec<u8>>,
    /// A new next sequence number.
    pub next_sequence: Option<u64>,
}

impl Batch {
    /// Whether the batch changes nothing.
    pub fn is_empty(&self) -> bool {
        self.put.is_empty()
            && self.remove.is_empty()
            && self.delivered.is_empty()
            && self.forget.is_empty()
            && self.next_sequence.is_none()
    }
}

/// A failure of the store.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum StoreError {
    /// The database could not be opened, read or written.
    #[error("bundle store: {0}")]
    Io(String),
    /// A record in the database is not one this crate wrote.
    #[error("bundle store is corrupt: {0}")]
    Corrupt(String),
}

/// Durable storage for the agent's bundles.
pub trait Store {
    /// Reads everything stored (once, when the agent starts).
    fn load(&mut self) -> Result<Snapshot, StoreError>;

    /// Applies `batch` atomically; when this returns `Ok` the changes must
    /// survive a crash of the process (and, for a disk store, of the
    /// machine).
    fn commit(&mut self, batch: &Batch) -> Result<(), StoreError>;
}

/// A store in memory: durable only for the life of the value. For
/// simulations and tests; hand it back with [`MemoryStore::snapshot`] to
/// model a restart that keeps the store.
#[derive(Debug, Clone, Default)]
pub struct MemoryStore {
    contents: Snapshot,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> MemoryStore {
        MemoryStore::default()
    }

    /// What the store holds now.
    pub fn snapshot(&self) -> &Snapshot {
        &self.contents
    }
}

impl Store for MemoryStore {
    fn load(&mut self) -> Result<Snapshot, StoreError> {
        Ok(self.contents.clone())
    }

    fn commit(&mut self, batch: &Batch) -> Result<(), StoreError> {
        apply(&mut self.contents, batch);
        Ok(())
    }
}

/// Applies a batch to a snapshot (removals before additions, as every
/// store must).
pub(crate) fn apply(contents: &mut Snapshot, batch: &Batch) {
    for key in &batch.remove {
        contents.bundles.remove(key);
    }
    for (key, bundle) in &batch.put {
        contents.bundles.insert(*key, bundle.clone());
    }
    for id in &batch.forget {
        contents.delivered.remove(id);
    }
    for (id, until) in &batch.delivered {
        contents.delivered.insert(id.clone(), *until);
    }
    if let Some(next) = batch.next_sequence {
        contents.next_sequence = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_bad_ones_are_refused() {
        let bundle = StoredBundle {
            disposition: Disposition::Reassemble,
            received_at: 0x0102_0304_0506_0708,
            expires_at: u64::MAX,
            octets: vec![0x9F, 0xFF],
        };
        let record = bundle.encode();
        assert_eq!(StoredBundle::decode(&record), Ok(bundle));
        assert!(StoredBundle::decode(&record[..5]).is_err());
        let mut bad = record.clone();
        bad[1] = 9;
        assert!(StoredBundle::decode(&bad).is_err());
        bad[0] = 2;
        assert!(StoredBundle::decode(&bad).is_err());
    }
}
