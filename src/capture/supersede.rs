//! The ids a capture's `supersedes` names, made whole: a short id (a start of an id, as
//! `recent` shows it) that starts exactly one entry id of the vault is written as that whole
//! id; anything else is kept as the client wrote it, to be shown unresolved (spec/recall.md,
//! "Supersede"). An id names its entry's instant, so only the day files of that day and the
//! day before (an entry stamped just past midnight stays in its day's file) are read.

use crate::fsx::Dir;
use crate::records::{dayfile, paths};

/// The shortest start of an id looked up: its instant to the second (`YYYYMMDDTHHMMSS`).
const SHORTEST: usize = 15;

/// `named`, each short id that starts exactly one entry id of the vault's day files made whole.
pub(crate) fn whole_ids(root: &std::path::Path, named: &[String]) -> Vec<String> {
    // Most captures name none: the day files are not even listed then (a ten-year vault's
    // folder holds 3,650 of them, a heavy user's 36,500).
    if named.is_empty() {
        return vec![];
    }
    let sessions = Dir::open(root)
        .ok()
        .and_then(|r| r.open_dir(paths::SESSIONS_DIR, false).ok().flatten());
    let Some(sessions) = sessions else {
        return named.to_vec();
    };
    let names = sessions.list().unwrap_or_default();
    named
        .iter()
        .map(|id| whole_id(&sessions, &names, id).unwrap_or_else(|| id.clone()))
        .collect()
}

/// The one entry id `given` starts, when it is a start of an id and exactly one has it.
fn whole_id(sessions: &Dir, names: &[String], given: &str) -> Option<String> {
    let day = day_of_id(given)?;
    let before = crate::clock::add_days(&day, -1)?;
    let mut found: Vec<String> = Vec::new();
    for name in names
        .iter()
        .filter(|n| paths::split_day_file_name(n).is_some_and(|(d, _)| d == day || d == before))
    {
        let Ok(Some(bytes)) = sessions.read(name) else {
            continue;
        };
        for e in dayfile::parse(&bytes).entries {
            if e.id.starts_with(given) && !found.contains(&e.id) {
                found.push(e.id);
            }
        }
    }
    match found.as_slice() {
        [one] => Some(one.clone()),
        _ => None,
    }
}

/// The UTC day (`YYYY-MM-DD`) an id or a start of one names, when it is at least an instant
/// to the second.
fn day_of_id(given: &str) -> Option<String> {
    let b = given.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|s| s.iter().all(u8::is_ascii_digit));
    if given.len() < SHORTEST || !digits(0..8) || b.get(8) != Some(&b'T') || !digits(9..15) {
        return None;
    }
    let day = format!("{}-{}-{}", &given[0..4], &given[4..6], &given[6..8]);
    crate::clock::is_day(&day).then_some(day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::{line, Entry};

    fn entry(id: &str, time: &str) -> String {
        line::render(&Entry {
            id: id.into(),
            session_id: None,
            time: time.into(),
            summary: "s".into(),
            refs: vec![],
            workspace: None,
            client: None,
            supersedes: None,
            extra: Default::default(),
        })
    }

    #[test]
    fn a_short_id_that_starts_one_id_is_made_whole() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join(paths::SESSIONS_DIR);
        std::fs::create_dir_all(&dir).unwrap();
        let day = |d: &str, lines: &[String]| {
            let mut text = dayfile::header(d);
            for l in lines {
                text.push_str(l);
                text.push('\n');
            }
            text
        };
        std::fs::write(
            dir.join("2026-11-30.md"),
            day(
                "2026-11-30",
                &[
                    entry("20261130T100000111Z", "2026-11-30T10:00:00.111Z"),
                    entry("20261130T110000111Z", "2026-11-30T11:00:00.111Z"),
                    entry("20261130T110000222Z", "2026-11-30T11:00:00.222Z"),
                    entry("20261201T000000001Z", "2026-12-01T00:00:00.001Z"),
                ],
            ),
        )
        .unwrap();
        std::fs::write(
            dir.join("2026-12-01.laptop-1.md"),
            day(
                "2026-12-01",
                &[entry(
                    "20261201T090000000Z-laptop-1",
                    "2026-12-01T09:00:00.000Z",
                )],
            ),
        )
        .unwrap();
        let named: Vec<String> = [
            "20261130T100000",
            "20261130T110000",
            "20261130T110000222Z",
            "20261201T000000",
            "20261201T090000",
            "20261130T1000",
            "nonsense",
            "20261130T120000",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            whole_ids(t.path(), &named),
            [
                "20261130T100000111Z",
                "20261130T110000",
                "20261130T110000222Z",
                "20261201T000000001Z",
                "20261201T090000000Z-laptop-1",
                "20261130T1000",
                "nonsense",
                "20261130T120000",
            ]
        );
        let none = tempfile::tempdir().unwrap();
        assert_eq!(whole_ids(none.path(), &named), named);
    }
}
