//! What one side of a sync gained, by kind of record line (spec/sync.md, "The report"): entries
//! apart from retractions, identity bindings, acknowledgements, purge records and use-log
//! events, so a sync never calls a retraction an entry.

use crate::objectid::ObjectId;
use crate::records::paths;
use crate::store::tree::Trees;
use crate::store::StoreError;
use std::collections::HashSet;

/// The record lines a tree holds that another does not.
#[derive(Debug, Default, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Tally {
    /// Entry ids.
    pub entries: Vec<String>,
    /// The ids of the entries the new retraction lines take back.
    pub retractions: Vec<String>,
    /// Identity ledger bindings.
    pub bindings: usize,
    /// Verify acknowledgements.
    pub acknowledgements: usize,
    /// Purge records (spec/purge.md).
    pub purges: usize,
    /// Use-log events.
    pub use_events: usize,
}

impl Tally {
    /// Record lines of tree `to` that tree `from` does not hold.
    pub(crate) fn between(
        trees: &mut Trees<'_>,
        from: Option<ObjectId>,
        to: ObjectId,
    ) -> Result<Tally, StoreError> {
        let mut out = Tally::default();
        for ch in trees.changes(from, Some(to))? {
            let Some(new) = ch.new else { continue };
            let new = trees.blob(new)?.to_vec();
            let old = match ch.old {
                Some(o) => trees.blob(o)?.to_vec(),
                None => Vec::new(),
            };
            out.add(&ch.path, &old, &new);
        }
        Ok(out)
    }

    /// Adds what `new` holds and `old` does not, read as the record file at `path`.
    fn add(&mut self, path: &str, old: &[u8], new: &[u8]) {
        if paths::day_of(path).is_some() {
            let (old, new) = (
                crate::records::dayfile::parse(old),
                crate::records::dayfile::parse(new),
            );
            let had: HashSet<&str> = old.entries.iter().map(|e| e.id.as_str()).collect();
            let entries = new.entries.iter().filter(|e| !had.contains(&e.id.as_str()));
            self.entries.extend(entries.map(|e| e.id.clone()));
            let had: HashSet<&str> = old.retractions.iter().map(|r| r.id.as_str()).collect();
            let retractions = new
                .retractions
                .iter()
                .filter(|r| !had.contains(&r.id.as_str()));
            self.retractions
                .extend(retractions.map(|r| r.retracts.clone()));
            return;
        }
        let slot = match path {
            paths::IDENTITY_LEDGER => {
                let had = crate::records::ledger::parse(old).bindings;
                let had: HashSet<&str> = had.iter().map(|b| b.id.as_str()).collect();
                let now = crate::records::ledger::parse(new).bindings;
                self.bindings += now.iter().filter(|b| !had.contains(&b.id.as_str())).count();
                return;
            }
            paths::ACKS => &mut self.acknowledgements,
            paths::PURGES => &mut self.purges,
            paths::USE_LOG => &mut self.use_events,
            _ => return,
        };
        *slot += added_lines(old, new);
    }

    /// Whether no record line was gained.
    pub fn is_empty(&self) -> bool {
        *self == Tally::default()
    }

    /// Each kind there is, entries first: `1 entry and 2 retractions`, `2 retractions`, `1
    /// entry, 1 identity binding and 3 use-log events`; `0 entries` when there is none.
    pub fn said(&self) -> String {
        let kinds = [
            (self.entries.len(), "entry", "entries"),
            (self.retractions.len(), "retraction", "retractions"),
            (self.bindings, "identity binding", "identity bindings"),
            (self.acknowledgements, "acknowledgement", "acknowledgements"),
            (self.purges, "purge record", "purge records"),
            (self.use_events, "use-log event", "use-log events"),
        ];
        let parts: Vec<String> = kinds
            .into_iter()
            .filter(|(n, ..)| *n > 0)
            .map(|(n, one, many)| crate::count::count(n, one, many))
            .collect();
        match parts.split_last() {
            None => "0 entries".into(),
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        }
    }

    /// Adds what another round gained.
    pub(crate) fn extend(&mut self, other: Tally) {
        self.entries.extend(other.entries);
        self.retractions.extend(other.retractions);
        self.bindings += other.bindings;
        self.acknowledgements += other.acknowledgements;
        self.purges += other.purges;
        self.use_events += other.use_events;
    }
}

/// Lines of `new` that `old` does not hold, as a multiset (record files only grow, or are the
/// line union of two that did).
fn added_lines(old: &[u8], new: &[u8]) -> usize {
    let mut had: std::collections::HashMap<&[u8], usize> = std::collections::HashMap::new();
    for line in old.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        *had.entry(line).or_default() += 1;
    }
    new.split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .filter(|l| match had.get_mut(l) {
            Some(n) if *n > 0 => {
                *n -= 1;
                false
            }
            _ => true,
        })
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_lines_the_old_version_lacks_count() {
        assert_eq!(added_lines(b"", b"a\nb\n"), 2);
        assert_eq!(added_lines(b"a\n", b"a\nb\n"), 1);
        assert_eq!(added_lines(b"a\n", b"a\na\n"), 1);
        assert_eq!(added_lines(b"a\nb\n", b"a\nb\n"), 0);
    }

    #[test]
    fn the_kinds_are_named_apart() {
        let mut t = Tally::default();
        assert_eq!(t.said(), "0 entries");
        t.entries = vec!["e".into()];
        assert_eq!(t.said(), "1 entry");
        t.retractions = vec!["a".into(), "b".into()];
        assert_eq!(t.said(), "1 entry and 2 retractions");
        t.entries.clear();
        assert_eq!(t.said(), "2 retractions");
        t.bindings = 1;
        t.use_events = 3;
        assert_eq!(
            t.said(),
            "2 retractions, 1 identity binding and 3 use-log events"
        );
    }
}
