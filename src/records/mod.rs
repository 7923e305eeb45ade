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
