//! The supersede claims the record cache holds, resolved (`records::supersede`): which entries
//! recall marks `superseded by`, and which ids an entry names that no entry has. A claim counts
//! while its entry is recorded (committed or journalled) and not retracted: retracting the
//! newer entry makes the older current again.

use super::{Index, IndexError};
use crate::records::supersede::{Claim, Links, Supersession};
use std::collections::{HashMap, HashSet};

/// Every honoured claim of the record cache, resolved.
#[derive(Debug, Clone, Default)]
pub(crate) struct Supersedes {
    resolved: Supersession,
    /// Claimant id → the ids it names, in order.
    named: HashMap<String, Vec<String>>,
    /// The named ids that are entries of the record (not retracted).
    known: HashSet<String>,
}

impl Supersedes {
    /// The links recall shows for the entry `id`.
    pub(crate) fn links(&self, id: &str) -> Links {
        let named = self.named.get(id).map(Vec::as_slice).unwrap_or(&[]);
        self.resolved
            .links(id, named, &|n: &str| self.known.contains(n))
    }

    /// Whether no entry names another.
    pub(crate) fn is_empty(&self) -> bool {
        self.named.is_empty()
    }
}

impl Index {
    /// The record cache's supersede claims, resolved (one query; no rows in a record where no
    /// entry names another).
    pub(crate) fn supersedes(&self) -> Result<Supersedes, IndexError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT s.by_id, s.time, s.target, EXISTS (SELECT 1 FROM entries e WHERE e.id = s.target \
             AND NOT EXISTS (SELECT 1 FROM retractions x WHERE x.retracts = e.id)) \
             FROM supersedes s WHERE NOT EXISTS (SELECT 1 FROM retractions x WHERE x.retracts = s.by_id) \
             ORDER BY s.day, s.seq, s.rowid",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, bool>(3)?,
            ))
        })?;
        let mut out = Supersedes::default();
        let mut claims = Vec::new();
        for row in rows {
            let (by, time, target, exists) = row?;
            let named = out.named.entry(by.clone()).or_default();
            if !named.contains(&target) {
                named.push(target.clone());
            }
            if exists {
                out.known.insert(target.clone());
                claims.push(Claim { by, time, target });
            }
        }
        out.resolved = Supersession::resolve(&claims);
        Ok(out)
    }
}
