//! Short entry ids, as git abbreviates commits: the shortest prefix of an id that no other
//! entry's id shares, never shorter than the id's instant to the second
//! (`20261202T013025`), so a short id still reads as a time. `recent` shows them; `retract`
//! and `log` take any unique prefix that long (spec/recall.md, "Entry ids").

use super::{Index, IndexError};
use std::cell::RefCell;
use std::collections::HashMap;

/// The fewest characters a short id has: `YYYYMMDDTHHMMSS`.
pub(crate) const MIN_LEN: usize = 15;

/// The instant part of an id, `YYYYMMDDTHHMMSSmmmZ`.
const INSTANT_LEN: usize = 19;

/// Short ids of one answer: looked up id by id (a screen of steps), or from every id read once
/// (`recent --all`).
pub(crate) struct ShortIds<'a> {
    source: Source<'a>,
    memo: RefCell<HashMap<String, String>>,
}

enum Source<'a> {
    Lookups(&'a Index),
    /// Every distinct id, sorted.
    All(Sorted),
}

/// Sorted ids in one buffer, each known by where it ends: a heavy vault's 693,000 ids held as
/// as many strings were 40 MiB of `timeline`'s peak.
#[derive(Debug, Default)]
struct Sorted {
    text: String,
    ends: Vec<usize>,
}

impl Sorted {
    fn push(&mut self, id: &str) {
        self.text.push_str(id);
        self.ends.push(self.text.len());
    }

    fn len(&self) -> usize {
        self.ends.len()
    }

    /// The `i`-th id (`i` below [`Sorted::len`]).
    fn get(&self, i: usize) -> &str {
        let start = i.checked_sub(1).map_or(0, |j| self.ends[j]);
        self.text.get(start..self.ends[i]).unwrap_or("")
    }
}

impl<'a> ShortIds<'a> {
    /// Two index lookups per id shortened.
    pub(crate) fn lookups(index: &'a Index) -> ShortIds<'a> {
        ShortIds {
            source: Source::Lookups(index),
            memo: RefCell::default(),
        }
    }

    /// Every id read once, for an answer of many steps.
    pub fn all(index: &Index) -> Result<ShortIds<'static>, IndexError> {
        Ok(ShortIds {
            source: Source::All(index.all_ids()?),
            memo: RefCell::default(),
        })
    }

    /// The short form of `id` (the whole id when the index cannot be read).
    pub(crate) fn short(&self, id: &str) -> String {
        let index = match &self.source {
            // A binary search among every id, nothing copied: `recent --all` shortens each of
            // 69,000 ids once, so a memo would only cost.
            Source::All(all) => {
                let (before, after) = neighbours(all, id);
                return shortest(id, before, after).to_string();
            }
            Source::Lookups(index) => index,
        };
        if let Some(s) = self.memo.borrow().get(id) {
            return s.clone();
        }
        let (before, after) = index
            .id_neighbours(id)
            .unwrap_or((Some(id.to_string()), None));
        let s = shortest(id, before.as_deref(), after.as_deref()).to_string();
        self.memo.borrow_mut().insert(id.to_string(), s.clone());
        s
    }
}

/// What a short id names.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Resolved {
    /// The one id it names (itself, when it is a whole id).
    One(String),
    None,
    /// Several ids start with it (at most a few are listed).
    Many(Vec<String>),
}

/// Whether `given` may be a short id: the start of an id's instant, at least [`MIN_LEN`]
/// characters (`YYYYMMDDTHHMMSS`, then more of the instant).
pub(crate) fn is_short_id(given: &str) -> bool {
    given.len() >= MIN_LEN && is_id_start(given)
}

/// Whether `given` is the start of an entry id too short to name one: fewer than [`MIN_LEN`]
/// characters (`20261208T0018`), which the refusal says rather than "no entry".
pub(crate) fn is_too_short(given: &str) -> bool {
    given.len() >= 8 && given.len() < MIN_LEN && is_id_start(given)
}

/// Whether `given` has the shape of the start of an entry id (`YYYYMMDDTHHMMSSmmmZ`).
fn is_id_start(given: &str) -> bool {
    const SHAPE: &[u8] = b"99999999T999999999Z";
    given.len() < SHAPE.len()
        && given.bytes().zip(SHAPE).all(|(c, want)| match want {
            b'9' => c.is_ascii_digit(),
            other => c == *other,
        })
}

/// The id a whole or short id names, among the indexed entries.
pub fn resolve(index: &Index, given: &str) -> Result<Resolved, IndexError> {
    if !is_short_id(given) {
        return Ok(Resolved::One(given.to_string()));
    }
    let mut ids = index.ids_starting(given, 6)?;
    Ok(match ids.len() {
        0 => Resolved::None,
        1 => Resolved::One(ids.remove(0)),
        _ => Resolved::Many(ids),
    })
}

/// The ids just below and just above `id` in sorted `all`.
fn neighbours<'a>(all: &'a Sorted, id: &str) -> (Option<&'a str>, Option<&'a str>) {
    // The first id not below `id`.
    let (mut at, mut end) = (0, all.len());
    while at < end {
        let mid = at + (end - at) / 2;
        match all.get(mid) < id {
            true => at = mid + 1,
            false => end = mid,
        }
    }
    let before = at.checked_sub(1).map(|i| all.get(i));
    let after = (at..all.len()).map(|i| all.get(i)).find(|x| *x != id);
    (before, after)
}

/// The shortest prefix of `id` (at least [`MIN_LEN`] characters) that neither neighbour shares.
pub(crate) fn shortest<'i>(id: &'i str, before: Option<&str>, after: Option<&str>) -> &'i str {
    let common = |other: Option<&str>| {
        other.map_or(0, |o| {
            id.bytes()
                .zip(o.bytes())
                .take_while(|(a, b)| a == b)
                .count()
        })
    };
    let len = (common(before).max(common(after)) + 1).max(MIN_LEN);
    // A cut inside the suffixes (`-p123`, `-1`) reads as a typo: the whole id then.
    if len > INSTANT_LEN || len >= id.len() || !id.is_char_boundary(len) {
        return id;
    }
    &id[..len]
}

impl Index {
    /// Every distinct entry id, sorted.
    fn all_ids(&self) -> Result<Sorted, IndexError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT DISTINCT id FROM entries ORDER BY id")?;
        let mut rows = stmt.query([])?;
        let mut all = Sorted::default();
        while let Some(row) = rows.next()? {
            all.push(row.get_ref(0).and_then(|v| Ok(v.as_str()?))?);
        }
        Ok(all)
    }

    /// The ids just below and just above `id`.
    pub fn id_neighbours(&self, id: &str) -> Result<(Option<String>, Option<String>), IndexError> {
        use rusqlite::OptionalExtension as _;
        let one = |sql: &str| -> Result<Option<String>, IndexError> {
            Ok(self
                .conn
                .prepare_cached(sql)?
                .query_row([id], |r| r.get(0))
                .optional()?)
        };
        Ok((
            one("SELECT id FROM entries WHERE id < ?1 ORDER BY id DESC LIMIT 1")?,
            one("SELECT id FROM entries WHERE id > ?1 ORDER BY id LIMIT 1")?,
        ))
    }

    /// The distinct ids that start with `prefix`, at most `limit` of them, sorted.
    pub fn ids_starting(&self, prefix: &str, limit: usize) -> Result<Vec<String>, IndexError> {
        // Ids hold only ASCII letters, digits and `-`, all below `~`: a range on the id index
        // finds them.
        let mut stmt = self.conn.prepare_cached(
            "SELECT DISTINCT id FROM entries WHERE id >= ?1 AND id < ?1 || '~' AND substr(id, 1, length(?1)) = ?1 ORDER BY id LIMIT ?2",
        )?;
        let rows = stmt.query_map(rusqlite::params![prefix, limit as i64], |r| r.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_id_is_the_second_unless_a_neighbour_shares_it() {
        let id = "20261202T013025931Z";
        assert_eq!(shortest(id, None, None), "20261202T013025");
        assert_eq!(
            shortest(id, Some("20261202T013024000Z"), None),
            "20261202T013025"
        );
        assert_eq!(
            shortest(
                id,
                Some("20261202T013025100Z"),
                Some("20261202T013025931Z-1")
            ),
            id,
            "a neighbour that extends it leaves the whole id"
        );
        assert_eq!(
            shortest("20261202T013025931Z-1", Some(id), None),
            "20261202T013025931Z-1"
        );
        assert_eq!(
            shortest(id, Some("20261202T013025900Z"), None),
            "20261202T01302593"
        );
        assert_eq!(shortest("short", None, None), "short");
    }

    #[test]
    fn a_short_id_is_the_start_of_an_instant() {
        for ok in ["20261202T013025", "20261202T0130259", "20261202T013025931"] {
            assert!(is_short_id(ok), "{ok}");
        }
        for not in [
            "20261202T01302",
            "20261202T013025931Z",
            "2026120xT013025",
            "20261202-013025",
            "",
        ] {
            assert!(!is_short_id(not), "{not}");
        }
    }

    #[test]
    fn neighbours_skip_the_id_itself() {
        let mut all = Sorted::default();
        ["a1", "b2", "b3", "c4"]
            .into_iter()
            .for_each(|id| all.push(id));
        assert_eq!(neighbours(&all, "b2"), (Some("a1"), Some("b3")));
        assert_eq!(neighbours(&all, "c4"), (Some("b3"), None));
        assert_eq!(neighbours(&all, "a1"), (None, Some("b2")));
    }
}
