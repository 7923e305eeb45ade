//! The record as the index reads it: `refs/rutter/records` and the pending journal through the
//! store, or nothing for a vault without a record. Refreshing the index's record cache goes
//! through here, so recall never takes an entry's text from a working day file.

use crate::index::entries::{Moved, RecordSource, Scope};
use crate::index::SourceError;
use crate::index::{Index, IndexError};
use crate::objectid::ObjectId;
use crate::store::Store;
use crate::vault::Vault;
use std::collections::BTreeMap;

/// The record of one vault, opened for one refresh.
pub(crate) struct Source {
    store: Option<Store>,
    tip: Option<ObjectId>,
    pending: BTreeMap<String, Vec<String>>,
}

impl Source {
    /// Opens the vault's record: its tip and pending journal lines. A vault that is not a git
    /// repository has none.
    pub fn open(vault: &Vault) -> Result<Source, IndexError> {
        if vault.git_dir.is_none() {
            return Ok(Source {
                store: None,
                tip: None,
                pending: BTreeMap::new(),
            });
        }
        let store = Store::open(vault).map_err(record_error)?;
        let tip = store.tip().map_err(record_error)?;
        let pending = crate::journal::Journal::pending_lines(store.state_dir());
        Ok(Source {
            store: Some(store),
            tip,
            pending,
        })
    }
}

fn record_error(e: crate::store::StoreError) -> IndexError {
    IndexError::Record(Box::new(e))
}

impl RecordSource for Source {
    fn tip(&self) -> Option<String> {
        self.tip.map(|t| t.to_string())
    }

    fn committed_days(&self) -> Result<Vec<(String, String)>, SourceError> {
        let (Some(store), Some(tip)) = (&self.store, self.tip) else {
            return Ok(vec![]);
        };
        let days = store.committed_days(tip)?;
        Ok(days
            .into_iter()
            .map(|(d, oid)| (d, oid.to_string()))
            .collect())
    }

    fn changed_days(&self, since: &str) -> Result<Option<Vec<Moved>>, SourceError> {
        let (Some(store), Some(tip)) = (&self.store, self.tip) else {
            return Ok(None);
        };
        let Ok(old) = ObjectId::from_hex(since) else {
            return Ok(None);
        };
        // An old tip that cannot be read (gc'd after a rewind) means: compare every day.
        Ok(store.changed_days(old, tip).ok().map(|days| {
            days.into_iter()
                .map(|(d, blob)| (d, blob.map(|b| b.to_string())))
                .collect()
        }))
    }

    fn committed_bytes(&self, blob: &str, working: Option<&[u8]>) -> Result<Vec<u8>, SourceError> {
        let store = self.store.as_ref().ok_or("the vault has no record")?;
        let oid = ObjectId::from_hex(blob).map_err(|_| format!("{blob:?} is not an object id"))?;
        Ok(store.blob_bytes(oid, working)?)
    }

    fn pending(&self) -> &BTreeMap<String, Vec<String>> {
        &self.pending
    }

    fn fork(&self) -> Option<Box<dyn RecordSource + Send>> {
        // A fork reads a bulk load's days: many blobs, worth comparing through the packs.
        let store = match &self.store {
            Some(s) => Some(s.reopen().ok()?),
            None => None,
        };
        if let Some(s) = &store {
            s.compare_blobs_through_packs();
        }
        Some(Box::new(Source {
            store,
            tip: self.tip,
            pending: self.pending.clone(),
        }))
    }

    fn purges(&self) -> Vec<crate::records::purge::Purge> {
        let (Some(store), Some(tip)) = (&self.store, self.tip) else {
            return vec![];
        };
        crate::recorder::purge::recorded(store, tip).unwrap_or_default()
    }

    fn reread(&self, day: &str) -> Result<(Option<String>, Vec<String>), SourceError> {
        let Some(store) = &self.store else {
            return Ok((None, vec![]));
        };
        // The journal first, then the tip: see `RecordSource::reread`.
        let lines = crate::journal::Journal::pending_lines(store.state_dir())
            .remove(day)
            .unwrap_or_default();
        let blob = match store.tip()? {
            Some(tip) => store.committed_day(tip, day)?,
            None => None,
        };
        Ok((blob.map(|b| b.to_string()), lines))
    }
}

/// Refreshes the index's record cache from the vault's record.
pub(crate) fn refresh(
    vault: &Vault,
    index: &mut Index,
    scope: Scope<'_>,
) -> Result<crate::index::entries::EntriesRefresh, IndexError> {
    let src = Source::open(vault)?;
    index.refresh_records(&src, scope)
}

/// Opens the vault's index (see [`Index::open`]); one that has to be built gets its record
/// cache filled from the record on another thread while its notes load.
pub(crate) fn open_index(vault: &Vault, force: bool) -> Result<Index, IndexError> {
    let open =
        || -> Result<Box<dyn RecordSource>, IndexError> { Ok(Box::new(Source::open(vault)?)) };
    Index::open_with(vault, force, Some(&open))
}
