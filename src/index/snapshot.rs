//! The notes' stat snapshot, table `note_dirs`: one row per directory the walk enters, with the
//! directory's stamp and, for each of its notes, the name, size and stamp the note had when its
//! content was indexed. The freshness check compares the file system with it instead of
//! re-listing every directory; every refresh keeps it in step with `notes`, in the same
//! transaction.
//!
//! A row's notes are one blob (decoded on the checking threads), so loading the snapshot of a
//! 10,000-note vault is one query over a few hundred rows, not 10,000 row steps.

use super::walk::Stamp;
use rusqlite::{params, Connection, OptionalExtension};
use std::collections::BTreeSet;

/// A stamp whose ctime is this close to the moment it was read may still change without
/// changing (a second write within the file system's timestamp granularity, up to 2 s on FAT);
/// such a stamp is recorded with a zero ctime, so the next check re-reads it.
pub(crate) const RACY_NS: i64 = 2_000_000_000;

/// The blob's format version, its first byte.
const FORMAT: u8 = 1;

/// A note as the snapshot records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub name: String,
    pub size: u64,
    pub stamp: Stamp,
    /// False when the note could not be read: it is not in `notes`, and is tried again once
    /// its stamp changes (a `chmod` moves the ctime).
    pub indexed: bool,
}

/// A directory as the snapshot records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DirRow {
    /// Vault-relative, no trailing `/`; empty for the vault root.
    pub path: String,
    pub stamp: Stamp,
    /// False for a directory that could not be opened (it has no entries).
    pub listed: bool,
    /// Sorted by name.
    pub entries: Vec<Entry>,
}

/// A stored row with its entries still encoded.
#[derive(Debug, Clone)]
pub(crate) struct RawRow {
    pub path: String,
    pub stamp: Stamp,
    pub listed: bool,
    pub blob: Vec<u8>,
}

impl RawRow {
    /// The row decoded; `None` when its blob is malformed.
    pub(crate) fn decode(&self) -> Option<DirRow> {
        let entries = decode(&self.blob)?
            .into_iter()
            .map(EntryRef::to_entry)
            .collect();
        Some(DirRow {
            path: self.path.clone(),
            stamp: self.stamp,
            listed: self.listed,
            entries,
        })
    }
}

/// A decoded entry borrowing its name from the blob.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct EntryRef<'a> {
    pub name: &'a str,
    pub size: u64,
    pub stamp: Stamp,
    pub indexed: bool,
}

impl EntryRef<'_> {
    pub fn to_entry(self) -> Entry {
        Entry {
            name: self.name.to_string(),
            size: self.size,
            stamp: self.stamp,
            indexed: self.indexed,
        }
    }
}

/// The stamp to record for one read at `since_ns` (taken before the read): a racy one gets a
/// zero ctime.
pub(crate) fn settled(stamp: Stamp, since_ns: i64) -> Stamp {
    if since_ns.saturating_sub(stamp.ctime_ns) < RACY_NS {
        Stamp {
            ctime_ns: 0,
            ..stamp
        }
    } else {
        stamp
    }
}

/// The current time in ns since the epoch (0 before 1970).
pub(crate) fn now_ns() -> i64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
    #[cfg(test)]
    let now = now.saturating_add(tests::SKEW_NS.with(std::cell::Cell::get));
    now
}

/// Encodes entries: the format byte, then per entry the name's length (u16 LE), the name, the
/// size (u64 LE), mtime and ctime (i64 LE) and a flags byte (bit 0: indexed).
pub fn encode(entries: &[Entry]) -> Vec<u8> {
    let mut out = Vec::with_capacity(1 + entries.iter().map(|e| e.name.len() + 27).sum::<usize>());
    out.push(FORMAT);
    for e in entries {
        // Names longer than a u16 do not exist (NAME_MAX is 255); one would be cut short and
        // never match the file system again, which only costs a re-read.
        let name = &e.name.as_bytes()[..e.name.len().min(usize::from(u16::MAX))];
        out.extend_from_slice(&(name.len() as u16).to_le_bytes());
        out.extend_from_slice(name);
        out.extend_from_slice(&e.size.to_le_bytes());
        out.extend_from_slice(&e.stamp.mtime_ns.to_le_bytes());
        out.extend_from_slice(&e.stamp.ctime_ns.to_le_bytes());
        out.push(u8::from(e.indexed));
    }
    out
}

/// Decodes what [`encode`] wrote; `None` for anything else (the row is then treated as
/// changed and rebuilt).
pub(crate) fn decode(blob: &[u8]) -> Option<Vec<EntryRef<'_>>> {
    fields(blob)?
        .into_iter()
        .map(|(name, e)| {
            Some(EntryRef {
                name: std::str::from_utf8(name).ok()?,
                ..e
            })
        })
        .collect()
}

/// How many notes a row records and how many of them are not indexed, read from its blob
/// without taking the names as text (`status` counts a heavy vault's 100,000 this way); `None`
/// where the blob's shape is not [`encode`]'s.
pub(crate) fn tally(blob: &[u8]) -> Option<(usize, usize)> {
    let fields = fields(blob)?;
    let unindexed = fields.iter().filter(|(_, e)| !e.indexed).count();
    Some((fields.len(), unindexed))
}

/// Each entry's name bytes and the rest of it (its `name` left empty), as [`encode`] lays
/// them out; `None` for anything else.
fn fields(blob: &[u8]) -> Option<Vec<(&[u8], EntryRef<'static>)>> {
    let (&format, mut rest) = blob.split_first()?;
    if format != FORMAT {
        return None;
    }
    let mut out = Vec::new();
    while !rest.is_empty() {
        let (len, tail) = take::<2>(rest)?;
        let len = usize::from(u16::from_le_bytes(len));
        if tail.len() < len {
            return None;
        }
        let (name, tail) = tail.split_at(len);
        let (size, tail) = take::<8>(tail)?;
        let (mtime, tail) = take::<8>(tail)?;
        let (ctime, tail) = take::<8>(tail)?;
        let (&flags, tail) = tail.split_first()?;
        if flags > 1 {
            return None;
        }
        let entry = EntryRef {
            name: "",
            size: u64::from_le_bytes(size),
            stamp: Stamp {
                mtime_ns: i64::from_le_bytes(mtime),
                ctime_ns: i64::from_le_bytes(ctime),
            },
            indexed: flags == 1,
        };
        out.push((name, entry));
        rest = tail;
    }
    Some(out)
}

fn take<const N: usize>(bytes: &[u8]) -> Option<([u8; N], &[u8])> {
    let head = bytes.get(..N)?.try_into().ok()?;
    Some((head, &bytes[N..]))
}

/// Every row, entries encoded.
pub(crate) fn load_all(conn: &Connection) -> rusqlite::Result<Vec<RawRow>> {
    let mut stmt =
        conn.prepare_cached("SELECT path, mtime_ns, ctime_ns, listed, entries FROM note_dirs")?;
    let rows = stmt.query_map([], raw_row)?;
    rows.collect()
}

/// One row, decoded; `None` when there is none or it is malformed.
pub(crate) fn load(conn: &Connection, path: &str) -> rusqlite::Result<Option<DirRow>> {
    let mut stmt = conn.prepare_cached(
        "SELECT path, mtime_ns, ctime_ns, listed, entries FROM note_dirs WHERE path = ?1",
    )?;
    let row = stmt.query_row([path], raw_row).optional()?;
    Ok(row.and_then(|r| r.decode()))
}

/// The paths of every recorded directory.
pub(crate) fn paths(conn: &Connection) -> rusqlite::Result<BTreeSet<String>> {
    let mut stmt = conn.prepare_cached("SELECT path FROM note_dirs")?;
    let rows = stmt.query_map([], |r| r.get(0))?;
    rows.collect()
}

fn raw_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<RawRow> {
    Ok(RawRow {
        path: r.get(0)?,
        stamp: Stamp {
            mtime_ns: r.get(1)?,
            ctime_ns: r.get(2)?,
        },
        listed: r.get(3)?,
        blob: r.get(4)?,
    })
}

/// Records a directory, replacing its previous row.
pub(crate) fn put(conn: &Connection, row: &DirRow) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT OR REPLACE INTO note_dirs(path, mtime_ns, ctime_ns, listed, entries) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![
        row.path,
        row.stamp.mtime_ns,
        row.stamp.ctime_ns,
        row.listed,
        encode(&row.entries)
    ])?;
    Ok(())
}

/// Forgets a directory and everything under it (everything for the root).
pub(crate) fn delete_tree(conn: &Connection, path: &str) -> rusqlite::Result<()> {
    if path.is_empty() {
        conn.prepare_cached("DELETE FROM note_dirs")?.execute([])?;
        return Ok(());
    }
    let (low, high) = subtree_range(path);
    conn.prepare_cached("DELETE FROM note_dirs WHERE path = ?1 OR (path >= ?2 AND path < ?3)")?
        .execute(params![path, low, high])?;
    Ok(())
}

/// The half-open range of paths strictly under `dir` in byte order: `dir/` to `dir0` (`0`
/// follows `/`). Empty `dir`: everything.
pub(crate) fn subtree_range(dir: &str) -> (String, String) {
    if dir.is_empty() {
        (String::new(), "\u{10FFFF}".repeat(2))
    } else {
        (format!("{dir}/"), format!("{dir}0"))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    thread_local! {
        /// Added to [`now_ns`] on this thread: tests that write notes and check them at once
        /// move the clock past the racy window.
        pub(crate) static SKEW_NS: std::cell::Cell<i64> = const { std::cell::Cell::new(0) };
    }

    /// Makes every stamp read on this thread count as settled.
    pub(crate) fn settle_all() {
        SKEW_NS.with(|s| s.set(10 * RACY_NS));
    }

    fn entry(name: &str, n: i64, indexed: bool) -> Entry {
        Entry {
            name: name.into(),
            size: n as u64,
            stamp: Stamp {
                mtime_ns: n * 7,
                ctime_ns: -n,
            },
            indexed,
        }
    }

    #[test]
    fn entries_round_trip_and_an_empty_list_is_one_byte() {
        let entries = vec![entry("a.md", 1, true), entry("é b.md", 2, false)];
        let blob = encode(&entries);
        let back: Vec<Entry> = decode(&blob)
            .unwrap()
            .into_iter()
            .map(EntryRef::to_entry)
            .collect();
        assert_eq!(back, entries);
        assert_eq!(encode(&[]), vec![FORMAT]);
        assert_eq!(decode(&[FORMAT]), Some(vec![]));
    }

    #[test]
    fn malformed_blobs_are_refused() {
        let blob = encode(&[entry("a.md", 1, true)]);
        assert_eq!(decode(&[]), None);
        assert_eq!(decode(&[2]), None, "another format");
        assert_eq!(decode(&blob[..blob.len() - 1]), None, "truncated");
        let mut bad = blob.clone();
        *bad.last_mut().unwrap() = 2;
        assert_eq!(decode(&bad), None, "unknown flag");
        let mut bad = blob.clone();
        bad[3] = 0xff;
        assert_eq!(decode(&bad), None, "not UTF-8");
        assert_eq!(
            tally(&bad),
            Some((1, 0)),
            "counted without reading the name"
        );
        assert_eq!(tally(&blob[..blob.len() - 1]), None, "truncated");
        assert_eq!(tally(&[2]), None, "another format");
    }

    #[test]
    fn a_racy_stamp_loses_its_ctime() {
        let s = Stamp {
            mtime_ns: 5,
            ctime_ns: 10 * RACY_NS,
        };
        assert_eq!(settled(s, 11 * RACY_NS), s);
        assert_eq!(settled(s, 11 * RACY_NS - 1).ctime_ns, 0);
        assert_eq!(settled(s, 0).ctime_ns, 0, "a ctime after the read");
        assert_eq!(settled(s, i64::MIN).ctime_ns, 0);
    }

    #[test]
    fn subtrees_cover_children_not_siblings() {
        let (low, high) = subtree_range("a");
        for p in ["a/b", "a/b/c", "a/-", "a/\u{10FFFF}"] {
            assert!(p >= low.as_str() && p < high.as_str(), "{p}");
        }
        for p in ["a", "a-b", "a.b", "ab", "a0", "b"] {
            assert!(!(p >= low.as_str() && p < high.as_str()), "{p}");
        }
    }

    fn any_entry() -> impl Strategy<Value = Entry> {
        (
            "\\PC{0,40}",
            any::<u64>(),
            any::<i64>(),
            any::<i64>(),
            any::<bool>(),
        )
            .prop_map(|(name, size, m, c, indexed)| Entry {
                name,
                size,
                stamp: Stamp {
                    mtime_ns: m,
                    ctime_ns: c,
                },
                indexed,
            })
    }

    proptest! {
        #[test]
        fn any_entries_round_trip(entries in proptest::collection::vec(any_entry(), 0..20)) {
            let blob = encode(&entries);
            let back: Vec<Entry> = decode(&blob).unwrap().into_iter().map(EntryRef::to_entry).collect();
            let unindexed = entries.iter().filter(|e| !e.indexed).count();
            prop_assert_eq!(tally(&blob), Some((entries.len(), unindexed)));
            prop_assert_eq!(back, entries);
        }

        #[test]
        fn any_bytes_decode_without_panicking(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            if let Some(entries) = decode(&bytes) {
                let owned: Vec<Entry> = entries.into_iter().map(EntryRef::to_entry).collect();
                prop_assert_eq!(encode(&owned), bytes);
            } else if let Some((n, _)) = tally(&bytes) {
                // Only a name that is not UTF-8 makes the one refuse what the other counts.
                prop_assert!(n > 0);
            }
        }
    }
}
