//! The record cache read as a stream for `recent --all` (spec/recall.md) and `timeline`: every entries row
//! matching recall's filters, a day at a time from the newest day file, with what is needed to
//! know when a session group has been read whole. Nothing here holds more than one row.

use super::reads::entry_conditions;
use super::{Index, IndexError};
use crate::records::filter::EntryFilter;
use crate::records::standing::Status;
use std::collections::HashMap;

/// Whether an `entries` row was retracted (an honoured retraction names its id).
const RETRACTED: &str = "EXISTS (SELECT 1 FROM retractions x WHERE x.retracts = entries.id)";

/// Whether a read of the `entries` rows copies each row's JSON ([`EntryRow::json`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Json {
    Read,
    /// Left unread (empty): a pass that only counts rows does not copy them.
    Unread,
}

/// One `entries` row, borrowed from the statement that read it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EntryRow<'a> {
    /// The day file's stem, and the entry's place in it (the table's key).
    pub file: &'a str,
    pub seq: i64,
    pub id: &'a str,
    pub day: &'a str,
    /// The entry's recorded UTC time, as in its JSON.
    pub time: &'a str,
    /// The session group (`[session_id, project]`, or the entry alone).
    pub group_key: &'a str,
    pub project: Option<&'a str>,
    /// The entry as the cache serialised it (empty when the read did not ask for it).
    pub json: &'a str,
    pub status: Status,
    pub retracted: bool,
}

impl Index {
    /// The number of rows of each session group with more than one row matching the filters
    /// (retracted rows included, as [`Index::each_entry_row`] passes them): a group absent
    /// from the map has one row. Call both inside one [`Index::read`], so they see one snapshot.
    pub(crate) fn group_sizes(
        &self,
        project_key: Option<&str>,
        f: &EntryFilter,
    ) -> Result<HashMap<String, usize>, IndexError> {
        let words = self.named_by_words(f)?;
        let (filter, values) = entry_conditions("1", project_key, f, words.as_deref());
        let sql = format!(
            "SELECT group_key, count(*) FROM entries WHERE {filter} GROUP BY group_key HAVING count(*) > 1"
        );
        let mut stmt = self.conn.prepare(&sql)?;
        let mut rows = stmt.query(rusqlite::params_from_iter(values))?;
        let mut sizes = HashMap::new();
        while let Some(row) = rows.next()? {
            let n: i64 = row.get(1)?;
            sizes.insert(row.get(0)?, n as usize);
        }
        Ok(sizes)
    }

    /// Every `entries` row matching the filters, retracted ones included and marked, handed to
    /// `each` in the table's order backwards: by file stem, then place, descending. A day's
    /// files have stems that start with the day, so the rows of one day come together and days
    /// come newest first; a table scan, with no sort and nothing held; each row's JSON as `json`
    /// says.
    pub(crate) fn each_entry_row(
        &self,
        project_key: Option<&str>,
        f: &EntryFilter,
        json: Json,
        mut each: impl FnMut(&EntryRow<'_>) -> Result<(), IndexError>,
    ) -> Result<(), IndexError> {
        let words = self.named_by_words(f)?;
        let (filter, values) = entry_conditions("1", project_key, f, words.as_deref());
        let json = match json {
            Json::Read => "json",
            Json::Unread => "''",
        };
        let sql = format!(
            "SELECT file, seq, day, time, group_key, project, {json}, status, {RETRACTED}, id
             FROM entries WHERE {filter} ORDER BY file DESC, seq DESC"
        );
        let mut stmt = self.conn.prepare(&sql)?;
        let mut rows = stmt.query(rusqlite::params_from_iter(values))?;
        while let Some(row) = rows.next()? {
            each(&entry_row(row)?)?;
        }
        Ok(())
    }

    /// The `entries` rows at `keys` (file stem, place), as [`Index::each_entry_row`] hands them
    /// over, in the order given; a key no row has is passed over.
    pub(crate) fn entry_rows_at<'k>(
        &self,
        keys: impl IntoIterator<Item = (&'k str, i64)>,
        mut each: impl FnMut(&EntryRow<'_>) -> Result<(), IndexError>,
    ) -> Result<(), IndexError> {
        let sql = format!(
            "SELECT file, seq, day, time, group_key, project, json, status, {RETRACTED}, id
             FROM entries WHERE file = ?1 AND seq = ?2"
        );
        let mut stmt = self.conn.prepare_cached(&sql)?;
        for (file, seq) in keys {
            let mut rows = stmt.query(rusqlite::params![file, seq])?;
            if let Some(row) = rows.next()? {
                each(&entry_row(row)?)?;
            }
        }
        Ok(())
    }
}

/// The row of a query that selects `file, seq, day, time, group_key, project, json, status` and
/// whether it was retracted, then `id`, in that order.
fn entry_row<'r>(row: &'r rusqlite::Row<'_>) -> Result<EntryRow<'r>, IndexError> {
    let text = |i: usize| row.get_ref(i).and_then(|v| Ok(v.as_str()?));
    Ok(EntryRow {
        file: text(0)?,
        seq: row.get(1)?,
        day: text(2)?,
        time: text(3)?,
        group_key: text(4)?,
        project: row.get_ref(5).and_then(|v| Ok(v.as_str_or_null()?))?,
        json: text(6)?,
        status: Status::parse(text(7)?).unwrap_or(Status::Unverified),
        retracted: row.get(8)?,
        id: text(9)?,
    })
}
