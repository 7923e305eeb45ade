//! The record model and its text formats: entry and retraction lines (`@2`), day files (`@1`
//! read, `@2` append), the status of each entry against the record, the identity ledger (`@1`
//! read, `@2` append), the fingerprints a ref carries, and the text helpers they share.

pub mod dayfile;
pub mod entry;
pub mod filter;
pub mod fingerprint;
pub mod ledger;
pub mod line;
pub mod retraction;
pub mod status;
pub mod text;
pub mod v1;

pub use entry::{Entry, NoteRef, Step, Workspace};

/// The bytes one append writes to a record file: `header` for an empty file, a separating
/// newline when the file lacks a final one, then the line and its newline.
pub fn append_bytes(len: u64, ends_with_newline: bool, header: &str, line: &str) -> String {
    let mut out = String::with_capacity(line.len() + header.len() + 2);
    if len == 0 {
        out.push_str(header);
    } else if !ends_with_newline {
        out.push('\n');
    }
    out.push_str(line);
    out.push('\n');
    out
}

/// Vault-relative paths of the record files (DESIGN §3).
pub mod paths {
    /// Day files: `_librarian/sessions/YYYY-MM-DD.md`.
    pub const SESSIONS_DIR: &str = "_librarian/sessions";
    /// The identity ledger.
    pub const IDENTITY_LEDGER: &str = "_librarian/note-identity.md";
    /// The use log for the gate.
    pub const USE_LOG: &str = "_librarian/stateful-use.jsonl";
    /// Legacy position streams, carried in the ref and never written.
    pub const POSITIONS_DIR: &str = "_librarian/positions";

    /// The vault-relative path of a day file, given its day (or its stem, `YYYY-MM-DD.<tag>`).
    pub fn day_file(day: &str) -> String {
        format!("{SESSIONS_DIR}/{day}.md")
    }

    /// The longest tag a day file name may carry (spec/sync.md, "One writer per file").
    pub const TAG_MAX: usize = 40;

    /// The name of a day file: `YYYY-MM-DD.md`, or `YYYY-MM-DD.<tag>.md` for the file of one
    /// writer (a machine id, or `v1-<blob id>` for an `@1` version a merge kept beside).
    pub fn day_file_name(day: &str, tag: Option<&str>) -> String {
        match tag {
            Some(t) => format!("{day}.{t}.md"),
            None => format!("{day}.md"),
        }
    }

    /// The day and tag of a day file name (`YYYY-MM-DD.md` or `YYYY-MM-DD.<tag>.md`, the tag
    /// `[a-z0-9][a-z0-9-]*`, at most [`TAG_MAX`] characters); `None` for any other name.
    pub fn split_day_file_name(name: &str) -> Option<(&str, Option<&str>)> {
        split_day_stem(name.strip_suffix(".md")?)
    }

    /// The day and tag of a day file's stem (its name without `.md`): `YYYY-MM-DD` or
    /// `YYYY-MM-DD.<tag>`. Readers that keep one record per file key it by its stem.
    pub fn split_day_stem(stem: &str) -> Option<(&str, Option<&str>)> {
        let (day, tag) = match stem.split_once('.') {
            Some((d, t)) => (d, Some(t)),
            None => (stem, None),
        };
        if !crate::clock::is_day(day) || !tag.is_none_or(is_tag) {
            return None;
        }
        Some((day, tag))
    }

    /// Where the record ref keeps the day file at the vault-relative `path`: below a folder of
    /// its year, `_librarian/sessions/YYYY/<name>` (spec/ref-layout.md, "Year folders"). `None`
    /// for any path that is not a day file directly in the sessions folder.
    pub fn year_path(path: &str) -> Option<String> {
        let name = path.strip_prefix(SESSIONS_DIR)?.strip_prefix('/')?;
        let (day, _) = split_day_file_name(name)?;
        Some(format!("{SESSIONS_DIR}/{}/{name}", &day[..4]))
    }

    /// The vault-relative path of the day file the ref keeps at `tree_path`, when that is
    /// `_librarian/sessions/YYYY/<name>` with `<name>` a day file of the year `YYYY`; `None`
    /// for every other path (a day file in the wrong year's folder is not a record file).
    pub fn from_year_path(tree_path: &str) -> Option<String> {
        let rest = tree_path.strip_prefix(SESSIONS_DIR)?.strip_prefix('/')?;
        let (year, name) = rest.split_once('/')?;
        let (day, _) = split_day_file_name(name)?;
        (day.get(..4) == Some(year)).then(|| format!("{SESSIONS_DIR}/{name}"))
    }

    /// Whether `t` can tag a day file name.
    pub fn is_tag(t: &str) -> bool {
        let mut chars = t.chars();
        t.len() <= TAG_MAX
            && chars
                .next()
                .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
            && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        use proptest::prelude::*;

        #[test]
        fn year_paths_map_day_files_only_and_back() {
            let flat = "_librarian/sessions/2026-11-30.laptop-3f9a.md";
            let year = "_librarian/sessions/2026/2026-11-30.laptop-3f9a.md";
            assert_eq!(year_path(flat).as_deref(), Some(year));
            assert_eq!(from_year_path(year).as_deref(), Some(flat));
            for not_day in [
                "_librarian/note-identity.md",
                "_librarian/sessions/notes.md",
                "_librarian/sessions/2026/2026-11-30.md",
                "cited/ab/abcd",
            ] {
                assert_eq!(year_path(not_day), None, "{not_day}");
            }
            for not_year in [
                "_librarian/sessions/2025/2026-11-30.md",
                "_librarian/sessions/2026-11-30.md",
                "_librarian/sessions/2026/x/2026-11-30.md",
                "_librarian/sessions/2026/2026-11-30.md.tmp",
                "_librarian/positions/2026/2026-11-30.md",
            ] {
                assert_eq!(from_year_path(not_year), None, "{not_year}");
            }
        }

        proptest! {
            #[test]
            fn year_path_round_trips(y in 1000u32..9999, m in 1u32..=12, d in 1u32..=28, tag in "([a-z0-9][a-z0-9-]{0,8})?") {
                let day = format!("{y:04}-{m:02}-{d:02}");
                let flat = day_file(&if tag.is_empty() { day.clone() } else { format!("{day}.{tag}") });
                let year = year_path(&flat).unwrap();
                let folder = format!("{SESSIONS_DIR}/{y:04}/");
                prop_assert!(year.starts_with(&folder));
                prop_assert_eq!(from_year_path(&year), Some(flat));
            }
        }

        #[test]
        fn day_file_names_with_and_without_a_tag() {
            assert_eq!(
                split_day_file_name("2026-11-30.md"),
                Some(("2026-11-30", None))
            );
            assert_eq!(
                split_day_file_name("2026-11-30.laptop-3f9a.md"),
                Some(("2026-11-30", Some("laptop-3f9a")))
            );
            for bad in [
                "2026-11-30.Laptop.md",
                "2026-11-30.-x.md",
                "2026-11-30..md",
                "2026-11-30.a.b.md",
                "2026-02-30.md",
                "2026-11-30.md.tmp-1",
                ".2026-11-30.md.tmp-1-0",
            ] {
                assert_eq!(split_day_file_name(bad), None, "{bad}");
            }
            assert_eq!(
                split_day_file_name(&format!("2026-11-30.{}.md", "a".repeat(TAG_MAX + 1))),
                None
            );
        }

        proptest! {
            /// Any name reads without panicking, and what reads as a day file is exactly the
            /// name `day_file_name` writes for its day and tag.
            #[test]
            fn names_round_trip(name in any::<String>(), tag in "[a-z0-9][a-z0-9-]{0,39}") {
                if let Some((day, t)) = split_day_file_name(&name) {
                    prop_assert_eq!(day_file_name(day, t), name);
                }
                let written = day_file_name("2026-11-30", Some(&tag));
                prop_assert_eq!(split_day_file_name(&written), Some(("2026-11-30", Some(tag.as_str()))));
            }
        }
    }
}
