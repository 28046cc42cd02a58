//! A [`Store`] in a redb database file.
//!
//! Three tables: `bundles` (store key to [`StoredBundle`] record),
//! `delivered` (bundle identity to the DTN time until which it is
//! remembered) and `meta` (the creation-timestamp sequence counter). Each
//! [`Batch`] is one redb write transaction committed with
//! `Durability::Immediate`, so it is on disk when `commit` returns and a
//! crash leaves either all of it or none of it.

use std::path::Path;

use redb::{Database, Durability, ReadableDatabase, ReadableTable, TableDefinition};

use crate::store::{Batch, Snapshot, Store, StoreError, StoredBundle};

const BUNDLES: TableDefinition<u64, &[u8]> = TableDefinition::new("bundles");
const DELIVERED: TableDefinition<&[u8], u64> = TableDefinition::new("delivered");
const META: TableDefinition<&str, u64> = TableDefinition::new("meta");
const NEXT_SEQUENCE: &str = "next_sequence";

/// A bundle store in a redb database file.
pub struct RedbStore {
    db: Database,
}

impl std::fmt::Debug for RedbStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedbStore").finish_non_exhaustive()
    }
}

fn io(context: &str) -> impl Fn(redb::Error) -> StoreError + '_ {
    move |e| StoreError::Io(format!("{context}: {e}"))
}

impl RedbStore {
    /// Opens the database at `path`, creating it (and its tables) if it
    /// does not exist.
    pub fn open(path: &Path) -> Result<RedbStore, StoreError> {
        let db = Database::create(path)
            .map_err(|e| StoreError::Io(format!("cannot open {}: {e}", path.display())))?;
        let txn = db
            .begin_write()
            .map_err(|e| io("begin transaction")(e.into()))?;
        {
            txn.open_table(BUNDLES)
                .map_err(|e| io("create tables")(e.into()))?;
            txn.open_table(DELIVERED)
                .map_err(|e| io("create tables")(e.into()))?;
            txn.open_table(META)
                .map_err(|e| io("create tables")(e.into()))?;
        }
        txn.commit().map_err(|e| io("create tables")(e.into()))?;
        Ok(RedbStore { db })
    }

    fn read(&self) -> Result<Snapshot, redb::Error> {
        let txn = self.db.begin_read()?;
        let mut snapshot = Snapshot::default();
        for row in txn.open_table(BUNDLES)?.iter()? {
            let (key, record) = row?;
            let bundle = StoredBundle::decode(record.value())
                .map_err(|e| redb::Error::Corrupted(format!("bundle {}: {e}", key.value())))?;
            snapshot.bundles.insert(key.value(), bundle);
        }
        for row in txn.open_table(DELIVERED)?.iter()? {
            let (id, until) = row?;
            snapshot
                .delivered
                .insert(id.value().to_vec(), until.value());
        }
        if let Some(next) = txn.open_table(META)?.get(NEXT_SEQUENCE)? {
            snapshot.next_sequence = next.value();
        }
        Ok(snapshot)
    }

    fn write(&self, batch: &Batch) -> Result<(), redb::Error> {
        let mut txn = self.db.begin_write()?;
        txn.set_durability(Durability::Immediate)
            .map_err(|e| redb::Error::Corrupted(e.to_string()))?;
        {
            let mut bundles = txn.open_table(BUNDLES)?;
            for key in &batch.remove {
                bundles.remove(key)?;
            }
            for (key, bundle) in &batch.put {
                bundles.insert(key, bundle.encode().as_slice())?;
            }
            let mut delivered = txn.open_table(DELIVERED)?;
            for id in &batch.forget {
                delivered.remove(id.as_slice())?;
            }
            for (id, until) in &batch.delivered {
                delivered.insert(id.as_slice(), until)?;
            }
            if let Some(next) = batch.next_sequence {
                txn.open_table(META)?.insert(NEXT_SEQUENCE, next)?;
            }
        }
        txn.commit()?;
        Ok(())
    }
}

impl Store for RedbStore {
    fn load(&mut self) -> Result<Snapshot, StoreError> {
        self.read().map_err(|e| match e {
            redb::Error::Corrupted(what) => StoreError::Corrupt(what),
            other => StoreError::Io(format!("read: {other}")),
        })
    }

    fn commit(&mut self, batch: &Batch) -> Result<(), StoreError> {
        if batch.is_empty() {
            return Ok(());
        }
        self.write(batch).map_err(io("commit"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{apply, Disposition};

    #[test]
    fn what_is_committed_is_there_after_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("store.redb");
        let bundle = |n: u8| StoredBundle {
            disposition: Disposition::Forward,
            received_at: u64::from(n),
            expires_at: 1000,
            octets: vec![n; 40],
        };
        let batches = [
            Batch {
                put: vec![(1, bundle(1)), (2, bundle(2)), (3, bundle(3))],
                next_sequence: Some(7),
                ..Batch::default()
            },
            Batch {
                remove: vec![2],
                delivered: vec![(b"two".to_vec(), 500), (b"old".to_vec(), 5)],
                ..Batch::default()
            },
            Batch {
                put: vec![(1, bundle(9))],
                forget: vec![b"old".to_vec()],
                ..Batch::default()
            },
        ];
        let mut expected = Snapshot::default();
        {
            let mut store = RedbStore::open(&path).unwrap();
            for batch in &batches {
                store.commit(batch).unwrap();
                apply(&mut expected, batch);
            }
        }
        let mut store = RedbStore::open(&path).unwrap();
        assert_eq!(store.load().unwrap(), expected);
        assert_eq!(expected.bundles.len(), 2);
        assert_eq!(expected.next_sequence, 7);
    }
}
