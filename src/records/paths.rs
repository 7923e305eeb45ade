//! Vault-relative paths of the record files (DESIGN §3), and which paths the record ref's
//! tree may hold (spec/ref-layout.md, "Tree"): the one allow-list that the intake of a
//! remote's history, the audit, every reader of the ref and every writer of a record file
//! reached from the ref go by.

/// Day files: `_librarian/sessions/YYYY-MM-DD.md`.
pub(crate) const SESSIONS_DIR: &str = "_librarian/sessions";
/// The identity ledger.
pub(crate) const IDENTITY_LEDGER: &str = "_librarian/note-identity.md";
/// The use log for the gate.
pub(crate) const USE_LOG: &str = "_librarian/stateful-use.jsonl";
/// Legacy position streams, carried in the ref and never written.
pub(crate) const POSITIONS_DIR: &str = "_librarian/positions";

/// The vault-relative path of a day file, given its day (or its stem, `YYYY-MM-DD.<tag>`).
pub fn day_file(day: &str) -> String {
    format!("{SESSIONS_DIR}/{day}.md")
}

/// The longest tag a day file name may carry (spec/sync.md, "One writer per file").
pub(crate) const TAG_MAX: usize = 40;

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
pub(crate) fn split_day_file_name(name: &str) -> Option<(&str, Option<&str>)> {
    split_day_stem(name.strip_suffix(".md")?)
}

/// The day and tag of a day file's stem (its name without `.md`): `YYYY-MM-DD` or
/// `YYYY-MM-DD.<tag>`. Readers that keep one record per file key it by its stem.
pub(crate) fn split_day_stem(stem: &str) -> Option<(&str, Option<&str>)> {
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
pub(crate) fn year_path(path: &str) -> Option<String> {
    let name = path.strip_prefix(SESSIONS_DIR)?.strip_prefix('/')?;
    let (day, _) = split_day_file_name(name)?;
    Some(format!("{SESSIONS_DIR}/{}/{name}", &day[..4]))
}

/// The vault-relative path of the day file the ref keeps at `tree_path`, when that is
/// `_librarian/sessions/YYYY/<name>` with `<name>` a day file of the year `YYYY`; `None`
/// for every other path (a day file in the wrong year's folder is not a record file).
pub(crate) fn from_year_path(tree_path: &str) -> Option<String> {
    let rest = tree_path.strip_prefix(SESSIONS_DIR)?.strip_prefix('/')?;
    let (year, name) = rest.split_once('/')?;
    let (day, _) = split_day_file_name(name)?;
    (day.get(..4) == Some(year)).then(|| format!("{SESSIONS_DIR}/{name}"))
}

/// Whether `t` can tag a day file name.
pub(crate) fn is_tag(t: &str) -> bool {
    let mut chars = t.chars();
    t.len() <= TAG_MAX
        && chars
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// The verify acknowledgements.
pub(crate) const ACKS: &str = "_librarian/verify-acks.jsonl";
/// The purge ledger (spec/purge.md).
pub(crate) const PURGES: &str = "_librarian/purges.jsonl";

/// The file name of a record path directly below `_librarian/` (`note-identity.md` of
/// [`IDENTITY_LEDGER`]), for a writer that opened that folder.
pub(crate) const fn file_name(path: &'static str) -> &'static str {
    let bytes = path.as_bytes();
    let mut i = bytes.len();
    while i > 0 && bytes[i - 1] != b'/' {
        i -= 1;
    }
    let (_, name) = bytes.split_at(i);
    match std::str::from_utf8(name) {
        Ok(n) => n,
        Err(_) => path,
    }
}
/// The record folder of the vault, and the ref's folder of cited copies.
pub(crate) const OVERLAY_DIR: &str = "_librarian";
pub(crate) const CITED_DIR: &str = "cited";

/// The largest note a commit keeps a `cited/` copy of (DESIGN §5).
pub(crate) const CITED_MAX_BYTES: u64 = 1024 * 1024;

/// What a record file is, by its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RecordKind {
    DayFile,
    Ledger,
    UseLog,
    Acks,
    /// The purge ledger.
    Purges,
    Position,
    /// `cited/<aa>/<sha256>`: a cited note's bytes (in the ref only, never a working file).
    Cited,
}

/// The folder (below `_librarian/`: `""`, `sessions` or `positions`) and the name of the record
/// file at the vault-relative `path`, when it is one: a day file directly in the sessions folder,
/// the ledger, the use log, the acknowledgements, or a position stream `positions/YYYY-MM.md`.
/// Nothing else is a record file in the working tree (no `..`, `.git`, other folder or name).
pub(crate) fn working_file(path: &str) -> Option<(&'static str, &str, RecordKind)> {
    for (whole, kind) in [
        (IDENTITY_LEDGER, RecordKind::Ledger),
        (USE_LOG, RecordKind::UseLog),
        (ACKS, RecordKind::Acks),
        (PURGES, RecordKind::Purges),
    ] {
        if path == whole {
            return Some(("", &whole[OVERLAY_DIR.len() + 1..], kind));
        }
    }
    let in_dir = |dir: &str| path.strip_prefix(dir)?.strip_prefix('/');
    if let Some(name) = in_dir(SESSIONS_DIR) {
        return split_day_file_name(name).map(|_| ("sessions", name, RecordKind::DayFile));
    }
    let name = in_dir(POSITIONS_DIR)?;
    is_month_file(name).then_some(("positions", name, RecordKind::Position))
}

/// `YYYY-MM.md`: a legacy position stream's name.
pub(crate) fn is_month_file(name: &str) -> bool {
    name.strip_suffix(".md")
        .is_some_and(|m| m.len() == 7 && crate::clock::is_day(&format!("{m}-01")))
}

/// What the record ref's tree holds at `path` (as stored, `/`-separated from the root), when it
/// may hold a file there: a working record file (day files flat, as trees before the year
/// folders kept them, or in their year's folder), or a cited copy `cited/<aa>/<sha256>`, `<aa>`
/// its first two hex digits. Anything else is not a record file (spec/ref-layout.md, "Tree").
pub(crate) fn stored_file(path: &str) -> Option<RecordKind> {
    if let Some(rest) = path
        .strip_prefix(CITED_DIR)
        .and_then(|r| r.strip_prefix('/'))
    {
        let (aa, hex) = rest.split_once('/')?;
        let ok = hex.len() == 64
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
            && hex.get(..2) == Some(aa);
        return ok.then_some(RecordKind::Cited);
    }
    if let Some((_, _, kind)) = working_file(path) {
        return Some(kind);
    }
    from_year_path(path).map(|_| RecordKind::DayFile)
}

/// Whether the record ref's tree may hold a folder at `path`: `_librarian`, its sessions folder
/// and year folders (`YYYY`), `positions`, `cited` and its `<aa>` folders (two lowercase hex
/// digits). No other folder, so no record path is deeper than four names.
pub(crate) fn stored_dir(path: &str) -> bool {
    if matches!(path, OVERLAY_DIR | SESSIONS_DIR | POSITIONS_DIR | CITED_DIR) {
        return true;
    }
    let child = |dir: &str| path.strip_prefix(dir).and_then(|r| r.strip_prefix('/'));
    if let Some(year) = child(SESSIONS_DIR) {
        return year.len() == 4 && year.bytes().all(|b| b.is_ascii_digit());
    }
    child(CITED_DIR).is_some_and(|aa| {
        aa.len() == 2
            && aa
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// Whether `path` is a day file kept in a year folder that is not its own year's
/// (`_librarian/sessions/2025/2026-01-01.md`): not a record file, and named as misplaced.
pub(crate) fn misplaced_day_file(path: &str) -> bool {
    let Some(rest) = path
        .strip_prefix(SESSIONS_DIR)
        .and_then(|r| r.strip_prefix('/'))
    else {
        return false;
    };
    match rest.split_once('/') {
        Some((year, name)) => {
            stored_dir(&format!("{SESSIONS_DIR}/{year}"))
                && split_day_file_name(name).is_some()
                && from_year_path(path).is_none()
        }
        None => false,
    }
}

/// Why a tree entry's name can never be a name of the record tree: one that git's own checks
/// refuse or that would reach outside its folder when written (empty, `.`, `..`, anything git
/// reads as `.git` on some file system, a `/`, `\`, NUL or another control character, bytes
/// that are not UTF-8). `None` for a plain name (which may still not be a record path).
pub(crate) fn hostile_name(name: &[u8]) -> Option<&'static str> {
    let Ok(text) = std::str::from_utf8(name) else {
        return Some("a name that is not UTF-8");
    };
    if text.is_empty() {
        return Some("an empty name");
    }
    if text == "." || text == ".." {
        return Some("a `.` or `..` name");
    }
    if text.contains('/') || text.contains('\\') {
        return Some("a name holding a `/` or `\\`");
    }
    if text.contains('\0') {
        return Some("a name holding NUL");
    }
    if text.chars().any(char::is_control) {
        return Some("a name holding a control character");
    }
    if is_dotgit(text) {
        return Some("a name git reads as `.git`");
    }
    None
}

/// `.git` as git's fsck reads it on any file system: in any case, with the trailing dots and
/// spaces NTFS drops, the 8.3 short name `git~1`, and with the code points HFS+ ignores.
fn is_dotgit(name: &str) -> bool {
    let hfs: String = name
        .chars()
        .filter(
            |c| !matches!(*c as u32, 0x200C..=0x200F | 0x202A..=0x202E | 0x206A..=0x206F | 0xFEFF),
        )
        .collect();
    let ntfs = hfs.trim_end_matches(['.', ' ']);
    ntfs.eq_ignore_ascii_case(".git") || ntfs.eq_ignore_ascii_case("git~1")
}

/// `YYYY-MM-DD.md`, or `YYYY-MM-DD.<tag>.md` (one writer's file of that day, spec/sync.md).
pub(crate) fn is_day_file(name: &str) -> bool {
    split_day_file_name(name).is_some()
}

/// The day of a day file's vault-relative path, `_librarian/sessions/<day>.md` or one writer's
/// `_librarian/sessions/<day>.<tag>.md` (all files of a day are read as one, spec/sync.md).
pub(crate) fn day_of(path: &str) -> Option<&str> {
    let name = path.strip_prefix(SESSIONS_DIR)?.strip_prefix('/')?;
    split_day_file_name(name).map(|(day, _)| day)
}

/// The stem of a day file's vault-relative path (its name without `.md`: the day, or the day and
/// a writer tag): the key of readers that keep one record per day file.
pub(crate) fn stem_of(path: &str) -> Option<&str> {
    let stem = path
        .strip_prefix(SESSIONS_DIR)?
        .strip_prefix('/')?
        .strip_suffix(".md")?;
    split_day_stem(stem).map(|_| stem)
}

/// Where the record ref keeps the bytes of a note cited as `sha256:<hex>`: `cited/<aa>/<hex>`,
/// `<aa>` the first two hex digits (spec/ref-layout.md).
pub(crate) fn cited_path(sha256: &str) -> Option<String> {
    let hex = sha256.strip_prefix("sha256:")?;
    Some(format!("cited/{}/{hex}", hex.get(..2)?))
}

/// One acknowledgement line: `{"ts":…,"finding":…,"reason":…}` (ASCII-escaped JSON).
pub(crate) fn ack_line(ts: &str, finding: &str, reason: &str) -> String {
    let raw = serde_json::json!({"ts": ts, "finding": finding, "reason": reason}).to_string();
    super::line::escape_json_text(&raw)
}

/// Where the `@1` version of `day` whose git blob id is `blob_hex` is kept beside the day file
/// when a sync merge cannot join two versions line by line (spec/sync.md).
pub fn beside_path(day: &str, blob_hex: &str) -> String {
    format!(
        "{SESSIONS_DIR}/{day}.v1-{}.md",
        blob_hex.get(..12).unwrap_or(blob_hex)
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn file_names_of_the_record_files() {
        assert_eq!(file_name(IDENTITY_LEDGER), "note-identity.md");
        assert_eq!(file_name(USE_LOG), "stateful-use.jsonl");
        assert_eq!(file_name(ACKS), "verify-acks.jsonl");
        assert_eq!(file_name("plain"), "plain");
    }

    use super::*;
    use proptest::prelude::*;

    #[test]
    fn record_paths_are_exactly_the_allowed_ones() {
        let hex = format!("ab{}", "0".repeat(62));
        for (path, kind) in [
            ("_librarian/sessions/2026-11-30.md", RecordKind::DayFile),
            (
                "_librarian/sessions/2026-11-30.laptop-3f9a.md",
                RecordKind::DayFile,
            ),
            (
                "_librarian/sessions/2026/2026-11-30.md",
                RecordKind::DayFile,
            ),
            ("_librarian/note-identity.md", RecordKind::Ledger),
            ("_librarian/stateful-use.jsonl", RecordKind::UseLog),
            ("_librarian/verify-acks.jsonl", RecordKind::Acks),
            ("_librarian/positions/2026-11.md", RecordKind::Position),
            (&format!("cited/ab/{hex}"), RecordKind::Cited),
        ] {
            assert_eq!(stored_file(path), Some(kind), "{path}");
        }
        for bad in [
            "_librarian/..",
            "_librarian/../x.md",
            "_librarian/sessions/../../x.md",
            "_librarian/junk/x.md",
            "_librarian/sessions/2025/2026-11-30.md",
            "_librarian/sessions/2026/x/2026-11-30.md",
            "_librarian/positions/2026-13.md",
            "_librarian/positions/2026-1.md",
            "_librarian/positions/2026/2026-11.md",
            "_librarian/note-identity.md/x",
            "_librarian/.git",
            "cited/ab/abcd",
            &format!("cited/ac/{hex}"),
            &format!("cited/ab/{}", hex.to_uppercase()),
            &format!("cited/ab/{hex}/x"),
            "_librarian/sessions/2026-11-30.md.tmp-1",
            "top",
            "",
        ] {
            assert_eq!(stored_file(bad), None, "{bad}");
        }
        for dir in [
            "_librarian",
            "_librarian/sessions",
            "_librarian/sessions/2026",
            "_librarian/positions",
            "cited",
            "cited/0f",
        ] {
            assert!(stored_dir(dir), "{dir}");
        }
        for dir in [
            "_librarian/..",
            "_librarian/junk",
            "_librarian/sessions/26",
            "_librarian/sessions/2026/x",
            "cited/0F",
            "cited/abc",
            ".git",
            "x",
        ] {
            assert!(!stored_dir(dir), "{dir}");
        }
        assert!(misplaced_day_file("_librarian/sessions/2025/2026-11-30.md"));
        assert!(!misplaced_day_file(
            "_librarian/sessions/2026/2026-11-30.md"
        ));
        assert!(!misplaced_day_file("_librarian/sessions/2025/notes.md"));
    }

    #[test]
    fn a_working_record_path_names_its_folder_and_file() {
        assert_eq!(
            working_file("_librarian/sessions/2026-11-30.md"),
            Some(("sessions", "2026-11-30.md", RecordKind::DayFile))
        );
        assert_eq!(
            working_file("_librarian/note-identity.md"),
            Some(("", "note-identity.md", RecordKind::Ledger))
        );
        assert_eq!(
            working_file("_librarian/positions/2026-11.md"),
            Some(("positions", "2026-11.md", RecordKind::Position))
        );
        for bad in [
            "_librarian/sessions/2026/2026-11-30.md",
            "_librarian/../.bashrc",
            "_librarian/sessions/../../x",
            "/etc/passwd",
            "cited/ab/abcd",
            "_librarian/junk.md",
        ] {
            assert_eq!(working_file(bad), None, "{bad}");
        }
    }

    #[test]
    fn hostile_names_are_named() {
        for (name, why) in [
            (&b""[..], "an empty name"),
            (b".", "a `.` or `..` name"),
            (b"..", "a `.` or `..` name"),
            (b"a/b", "a name holding a `/` or `\\`"),
            (b"a\\b", "a name holding a `/` or `\\`"),
            (b"a\0b", "a name holding NUL"),
            (b"a\nb", "a name holding a control character"),
            (b"\xff", "a name that is not UTF-8"),
        ] {
            assert_eq!(hostile_name(name), Some(why), "{name:?}");
        }
        for git in [
            ".git",
            ".GIT",
            ".Git",
            "git~1",
            "GIT~1",
            ".git.",
            ".git ",
            ".git. .",
            ".g\u{200c}it",
        ] {
            assert_eq!(
                hostile_name(git.as_bytes()),
                Some("a name git reads as `.git`"),
                "{git:?}"
            );
        }
        for fine in [
            "2026-11-30.md",
            "_librarian",
            ".gitx",
            "git~2",
            "..x",
            "a.git",
        ] {
            assert_eq!(hostile_name(fine.as_bytes()), None, "{fine}");
        }
    }

    proptest! {
        /// Whatever a path is made of, a record path is never one a hostile name could form,
        /// and every working record path stays directly in one of its three folders.
        #[test]
        fn no_hostile_component_is_a_record_path(parts in prop::collection::vec(
            prop::sample::select(vec!["..", ".", "", ".git", ".GIT", "git~1", "_librarian", "sessions",
                "positions", "cited", "2026", "2026-11-30.md", "2026-11.md", "note-identity.md", "a/b", "x\0"]),
            1..6,
        )) {
            let path = parts.join("/");
            if stored_file(&path).is_some() || stored_dir(&path) {
                prop_assert!(parts.iter().all(|p| hostile_name(p.as_bytes()).is_none()), "{path}");
            }
            if let Some((dir, name, _)) = working_file(&path) {
                prop_assert!(matches!(dir, "" | "sessions" | "positions"));
                prop_assert!(hostile_name(name.as_bytes()).is_none() && !name.contains('/'));
                prop_assert_eq!(path.clone(), if dir.is_empty() { format!("{OVERLAY_DIR}/{name}") } else { format!("{OVERLAY_DIR}/{dir}/{name}") });
            }
        }
    }

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

    #[test]
    fn cited_copies_sit_under_their_first_two_hex_digits() {
        assert_eq!(
            cited_path("sha256:abcdef").as_deref(),
            Some("cited/ab/abcdef")
        );
        assert_eq!(cited_path("abcdef"), None);
        assert_eq!(cited_path("sha256:a"), None);
    }

    #[test]
    fn day_of_reads_day_file_paths_only() {
        assert_eq!(
            day_of("_librarian/sessions/2026-11-30.md"),
            Some("2026-11-30")
        );
        assert_eq!(
            day_of("_librarian/sessions/2026-11-30.laptop-3f9a.md"),
            Some("2026-11-30")
        );
        assert_eq!(day_of("_librarian/sessions/2026-11-30.Laptop.md"), None);
        assert_eq!(day_of("_librarian/sessions/2026-11-30.a.b.md"), None);
        assert_eq!(day_of("_librarian/sessions/2026-11-30..md"), None);
        assert_eq!(day_of("_librarian/sessions/sub/2026-11-30.md"), None);
        assert_eq!(day_of("_librarian/sessions.md"), None);
        assert_eq!(day_of("_librarian/note-identity.md"), None);
        assert_eq!(day_of("_librarian/sessions/2026-11-30.txt"), None);
    }
}
