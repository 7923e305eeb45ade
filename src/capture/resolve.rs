//! Ref resolution: turns the paths a client cites into confined, fingerprinted vault files.
//!
//! Owns the normalisation of a raw ref (`[[Note|alias]]`, `Note.md#heading`, `./a/../b.md`), the
//! confinement rules (no absolute paths, no lexical escape, nothing under `.git`, no symlink
//! leading outside the vault, regular files only) and the fingerprints of the bytes actually read
//! (`sha256:<hex>` and the git blob id). The client never supplies a hash; the file is read here,
//! once, through directory handles that do not follow symlinks and never block on a FIFO. A file
//! over [`CITED_HASH_MAX_BYTES`] is not read at all: the hook must finish in its time budget
//! whatever a client cites (a sparse 100 GiB file reads as zeroes for minutes).

use std::collections::HashSet;
use std::io::{self, Read};
use std::path::{Component, Path};

use crate::fsx::{Dir, FsError};
use crate::records::{fingerprint, NoteRef};

/// Cited files up to this size get a content-addressed copy in the record ref (the commit reads
/// them again and keeps them only if their sha256 still matches).
pub(crate) const CITED_COPY_MAX_BYTES: u64 = crate::records::paths::CITED_MAX_BYTES;

/// Cited files up to this size are read and fingerprinted ([`fingerprint::NOTE_MAX_BYTES`]); a
/// larger one is left out of the entry with a message, so a capture never spends the hook's
/// time budget on one note. No real note comes near it.
pub(crate) const CITED_HASH_MAX_BYTES: u64 = fingerprint::NOTE_MAX_BYTES;

/// One cited file that resolved inside the vault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ResolvedRef {
    /// The normalised vault-relative path that is stored (the link path for an in-vault symlink).
    pub path: String,
    /// `"sha256:"` plus 64 lowercase hex digits of the raw bytes.
    pub hash: String,
    /// The git blob id (40 hex digits) of the raw bytes.
    pub blob: String,
    /// The canonical vault-relative path of the file actually read, with `/` separators.
    pub target: String,
    /// The file is at most [`CITED_COPY_MAX_BYTES`] long and nothing withholds it, so the
    /// commit may keep a copy.
    pub copyable: bool,
    /// Why no copy may be kept whatever its size (spec/secrets.md, "Cited copies").
    pub withheld: Option<Withheld>,
}

/// Why a cited note is cited by hash and blob id but never copied into the record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Withheld {
    /// Its bytes hold a credential of these kinds.
    Secret(Vec<&'static str>),
    /// Its frontmatter says `rutter: private`, or `.rutterignore` names it.
    Private,
}

impl Withheld {
    /// The value of the ref's `withheld` field in the entry.
    pub(crate) fn field(&self) -> String {
        match self {
            Withheld::Secret(kinds) => format!("secret: {}", kinds.join(", ")),
            Withheld::Private => "private".to_string(),
        }
    }
}

/// The ref an entry stores for a resolved note: path, hash, blob, and `withheld` when no copy
/// may be kept.
pub(crate) fn note_ref(r: &ResolvedRef) -> NoteRef {
    let mut n = NoteRef::new(&r.path, &r.hash, Some(r.blob.clone()));
    if let Some(w) = &r.withheld {
        n.extra
            .insert(WITHHELD_KEY.into(), serde_json::Value::String(w.field()));
    }
    n
}

/// The key of a ref whose note was not copied: `secret: KINDS` or `private`.
pub(crate) const WITHHELD_KEY: &str = "withheld";

/// Why a raw ref was dropped from the entry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Rejection {
    #[error("empty path")]
    Empty,
    #[error("absolute path")]
    Absolute,
    #[error("path escapes the vault")]
    Escapes,
    #[error("path is inside .git")]
    InsideGit,
    #[error("symlink leads outside the vault")]
    SymlinkOutside,
    #[error("not a regular file")]
    NotAFile,
    #[error("unreadable: {0}")]
    Unreadable(String),
    /// Over [`CITED_HASH_MAX_BYTES`] (at least this many bytes): not read, not fingerprinted.
    #[error("larger than the 64 MiB a capture reads")]
    TooLarge(u64),
    /// Past the first [`MAX_REFS`] distinct refs of one entry.
    #[error("more than {MAX_REFS} notes cited")]
    TooMany,
}

/// The most distinct notes one entry cites; further refs are rejected ([`Rejection::TooMany`]),
/// so an entry's line stays far below the record line limit.
pub(crate) const MAX_REFS: usize = 256;

/// The outcome of resolving a directive's refs, both lists in input order.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct RefResolution {
    pub resolved: Vec<ResolvedRef>,
    /// The raw input as given, with the reason it was dropped.
    pub rejected: Vec<(String, Rejection)>,
    /// Refs that named a note already cited (as given, or once resolved): cited once.
    pub duplicates: usize,
}

/// Normalises a raw ref to a vault-relative path, or `None` when it is empty or unusable.
///
/// Anchor §5 `normalizeRefPath` (strip one `[[`/`]]`, cut at `?`, `#` or `|`, trim, refuse NUL),
/// then, deliberately unlike the reference, lexical canonicalisation: `""` and `.` segments are
/// dropped and `..` is resolved; an absolute path or one climbing above the root gives `None`.
pub(crate) fn normalize_ref_path(raw: &str) -> Option<String> {
    normalize(raw).ok()
}

/// Resolves every raw ref against the vault, whose root must already be canonical.
///
/// Keeps input order. Unlike the reference, a note is cited once: a ref given twice (as the
/// same text, or resolving to the same note) counts as a duplicate, and after [`MAX_REFS`]
/// distinct notes the rest are rejected (a directive citing one note 12,000 times made a 2 MB
/// line no record may hold).
pub(crate) fn resolve_refs(vault_root: &Path, raw: &[String]) -> RefResolution {
    let mut out = RefResolution::default();
    let (mut given, mut paths) = (HashSet::new(), HashSet::new());
    for r in raw {
        if !given.insert(r.as_str()) {
            out.duplicates += 1;
            continue;
        }
        if out.resolved.len() >= MAX_REFS {
            out.rejected.push((r.clone(), Rejection::TooMany));
            continue;
        }
        match resolve_one(vault_root, r) {
            // The file read, not the path given: a symlink and its target are one note.
            Ok(resolved) if !paths.insert(resolved.target.clone()) => out.duplicates += 1,
            Ok(resolved) => out.resolved.push(resolved),
            Err(why) => out.rejected.push((r.clone(), why)),
        }
    }
    out
}

/// The anchor's textual clean-up: brackets, query/heading/alias tail, whitespace, NUL.
fn strip_decorations(raw: &str) -> Option<&str> {
    let s = raw.strip_prefix("[[").unwrap_or(raw);
    let s = s.strip_suffix("]]").unwrap_or(s);
    let s = match s.find(['?', '#', '|']) {
        Some(i) => &s[..i],
        None => s,
    };
    let s = s.trim();
    (!s.is_empty() && !s.contains('\0')).then_some(s)
}

/// A POSIX root, a Windows drive (`C:\`, `C:/`) or a UNC prefix (`\\`).
fn is_absolute(s: &str) -> bool {
    let b = s.as_bytes();
    let drive =
        b.len() >= 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && matches!(b[2], b'\\' | b'/');
    s.starts_with('/') || s.starts_with("\\\\") || drive
}

fn normalize(raw: &str) -> Result<String, Rejection> {
    let s = strip_decorations(raw).ok_or(Rejection::Empty)?;
    if is_absolute(s) {
        return Err(Rejection::Absolute);
    }
    let mut segs: Vec<&str> = Vec::new();
    for seg in s.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                segs.pop().ok_or(Rejection::Escapes)?;
            }
            other => segs.push(other),
        }
    }
    if segs.is_empty() {
        return Err(Rejection::Empty);
    }
    Ok(segs.join("/"))
}

fn is_git_segment(seg: &str) -> bool {
    seg.eq_ignore_ascii_case(".git")
}

fn resolve_one(vault_root: &Path, raw: &str) -> Result<ResolvedRef, Rejection> {
    let path = normalize(raw)?;
    if path.split('/').any(is_git_segment) {
        return Err(Rejection::InsideGit);
    }
    let target_segs = confined_target(vault_root, &path)?;
    let bytes = read_beneath(vault_root, &target_segs)?;
    let target = target_segs.join("/");
    let small = u64::try_from(bytes.len()).is_ok_and(|n| n <= CITED_COPY_MAX_BYTES);
    // Only a note that would be copied is scanned: the rest never reaches the record.
    let withheld = small
        .then(|| withheld(vault_root, &target, &bytes))
        .flatten();
    Ok(ResolvedRef {
        path,
        hash: fingerprint::sha256_ref(&bytes),
        blob: fingerprint::blob_id(&bytes),
        target,
        copyable: small && withheld.is_none(),
        withheld,
    })
}

/// Why the note `target` (its `bytes`) is not to be copied, if anything says so.
fn withheld(vault_root: &Path, target: &str, bytes: &[u8]) -> Option<Withheld> {
    if super::private::is_private(vault_root, target, bytes) {
        return Some(Withheld::Private);
    }
    let found = crate::records::secrets::find(bytes);
    if found.is_empty() {
        return None;
    }
    let mut kinds: Vec<&'static str> = found.iter().map(|f| f.kind).collect();
    kinds.sort_unstable();
    kinds.dedup();
    Some(Withheld::Secret(kinds))
}

/// Canonicalises the ref and checks it stays in the vault, outside `.git`, and is a regular
/// file; returns the canonical vault-relative segments.
fn confined_target(vault_root: &Path, path: &str) -> Result<Vec<String>, Rejection> {
    let canonical = std::fs::canonicalize(vault_root.join(path)).map_err(unreadable)?;
    let rel = canonical
        .strip_prefix(vault_root)
        .map_err(|_| Rejection::SymlinkOutside)?;
    let mut segs = Vec::new();
    for comp in rel.components() {
        let Component::Normal(os) = comp else {
            return Err(Rejection::SymlinkOutside);
        };
        let seg = os
            .to_str()
            .ok_or_else(|| Rejection::Unreadable("target path is not valid UTF-8".into()))?;
        if is_git_segment(seg) {
            return Err(Rejection::InsideGit);
        }
        segs.push(seg.to_string());
    }
    if segs.is_empty() {
        return Err(Rejection::NotAFile);
    }
    // Metadata first: a directory, FIFO or socket is refused without being opened.
    let meta = std::fs::metadata(&canonical).map_err(unreadable)?;
    if !meta.is_file() {
        return Err(Rejection::NotAFile);
    }
    if meta.len() > CITED_HASH_MAX_BYTES {
        return Err(Rejection::TooLarge(meta.len()));
    }
    Ok(segs)
}

/// Reads the file at `segs` below `root` through [`Dir`] handles, which refuse a component
/// swapped for a symlink after canonicalisation and open the file non-blocking, so a component
/// swapped for a FIFO cannot hang the hook. At most [`CITED_HASH_MAX_BYTES`] are read: a file
/// that grew past it after it was measured is refused, not read to its end.
fn read_beneath(root: &Path, segs: &[String]) -> Result<Vec<u8>, Rejection> {
    let Some((last, parents)) = segs.split_last() else {
        return Err(Rejection::NotAFile);
    };
    let gone = || Rejection::Unreadable("the file disappeared while it was read".into());
    let dir = Dir::open(root)?
        .open_dir(&parents.join("/"), false)?
        .ok_or_else(gone)?;
    let file = dir.open_read(last)?.ok_or_else(gone)?;
    let mut bytes = Vec::new();
    file.take(CITED_HASH_MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    match u64::try_from(bytes.len()) {
        Ok(n) if n <= CITED_HASH_MAX_BYTES => Ok(bytes),
        _ => Err(Rejection::TooLarge(CITED_HASH_MAX_BYTES + 1)),
    }
}

impl From<FsError> for Rejection {
    fn from(e: FsError) -> Self {
        match e {
            FsError::WrongKind(_) => Rejection::NotAFile,
            other => Rejection::Unreadable(other.to_string()),
        }
    }
}

fn unreadable(e: io::Error) -> Rejection {
    Rejection::Unreadable(e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::os::unix::fs::symlink;
    use std::path::PathBuf;

    /// A canonical temp vault with a `.git` dir and a few notes.
    fn vault() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
        std::fs::create_dir_all(root.join("Notes/sub")).unwrap();
        std::fs::write(root.join("Notes/a.md"), "alpha\n").unwrap();
        std::fs::write(root.join("Note"), "bare\n").unwrap();
        std::fs::write(root.join("Note.md"), "note\n").unwrap();
        (dir, root)
    }

    fn one(root: &Path, raw: &str) -> Result<ResolvedRef, Rejection> {
        let res = resolve_refs(root, &[raw.to_string()]);
        match (res.resolved.first(), res.rejected.first()) {
            (Some(r), None) => Ok(r.clone()),
            (None, Some((given, why))) => {
                assert_eq!(given, raw);
                Err(why.clone())
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn normalisation_table() {
        let cases: &[(&str, Option<&str>)] = &[
            ("Notes/a.md", Some("Notes/a.md")),
            ("[[Note|alias]]", Some("Note")),
            ("[[Note]]", Some("Note")),
            ("Note.md#heading", Some("Note.md")),
            ("Note.md?query=1", Some("Note.md")),
            ("?query", None),
            ("  Notes/a.md  ", Some("Notes/a.md")),
            ("./a/./b.md", Some("a/b.md")),
            ("a//b.md", Some("a/b.md")),
            ("a/x/../b.md", Some("a/b.md")),
            ("a/../../x", None),
            ("../x", None),
            ("../vault/Notes/x.md", None),
            ("/etc/passwd", None),
            ("C:\\x.md", None),
            ("c:/x.md", None),
            ("\\\\server\\share", None),
            ("a\0b", None),
            ("", None),
            ("   ", None),
            ("[[]]", None),
            (".", None),
            ("a/..", None),
        ];
        for (raw, want) in cases {
            assert_eq!(normalize_ref_path(raw).as_deref(), *want, "{raw:?}");
        }
    }

    #[test]
    fn rejection_kinds() {
        let (_d, root) = vault();
        assert_eq!(one(&root, ""), Err(Rejection::Empty));
        assert_eq!(one(&root, "#only"), Err(Rejection::Empty));
        assert_eq!(one(&root, "a\0b.md"), Err(Rejection::Empty));
        assert_eq!(one(&root, "/etc/passwd"), Err(Rejection::Absolute));
        assert_eq!(one(&root, "C:\\Notes\\a.md"), Err(Rejection::Absolute));
        assert_eq!(one(&root, "\\\\srv\\a.md"), Err(Rejection::Absolute));
        assert_eq!(one(&root, "../x"), Err(Rejection::Escapes));
        assert_eq!(one(&root, "Notes/../../x"), Err(Rejection::Escapes));
        assert_eq!(one(&root, ".git/config"), Err(Rejection::InsideGit));
        assert_eq!(
            one(&root, "Notes/../.GIT/config"),
            Err(Rejection::InsideGit)
        );
        assert_eq!(one(&root, "Notes"), Err(Rejection::NotAFile));
        assert!(matches!(
            one(&root, "missing.md"),
            Err(Rejection::Unreadable(_))
        ));
    }

    #[test]
    fn escape_landing_back_inside_is_rejected() {
        let (_d, root) = vault();
        let name = root.file_name().unwrap().to_str().unwrap().to_string();
        assert_eq!(
            one(&root, &format!("../{name}/Notes/a.md")),
            Err(Rejection::Escapes)
        );
    }

    #[test]
    fn resolves_with_both_fingerprints() {
        let (_d, root) = vault();
        let r = one(&root, "./Notes/./a.md").unwrap();
        assert_eq!(r.path, "Notes/a.md");
        assert_eq!(r.target, "Notes/a.md");
        // printf 'alpha\n' | sha256sum ; printf 'alpha\n' | git hash-object --stdin
        assert_eq!(
            r.hash,
            "sha256:b6a98d9ce9a2d9149288fa3df42d377c3e42737afdcdaf714e33c0a100b51060"
        );
        assert_eq!(r.blob, "4a58007052a65fbc2fc3f910f2855f45a4058e74");
        assert!(r.copyable);
    }

    #[test]
    fn wikilink_heading_and_query_forms_resolve() {
        let (_d, root) = vault();
        assert_eq!(one(&root, "[[Note|alias]]").unwrap().path, "Note");
        assert_eq!(one(&root, "[[Note.md#heading]]").unwrap().path, "Note.md");
        assert_eq!(one(&root, "Note.md#heading").unwrap().path, "Note.md");
        let r = one(&root, "Note.md?x=1").unwrap();
        assert_eq!(r.hash, fingerprint::sha256_ref(b"note\n"));
        assert!(r.copyable);
    }

    #[test]
    fn symlink_inside_is_accepted_with_link_path() {
        let (_d, root) = vault();
        symlink("Notes/a.md", root.join("link.md")).unwrap();
        symlink("..", root.join("Notes/sub/up")).unwrap();
        let r = one(&root, "link.md").unwrap();
        assert_eq!(
            (r.path.as_str(), r.target.as_str()),
            ("link.md", "Notes/a.md")
        );
        assert_eq!(r.hash, fingerprint::sha256_ref(b"alpha\n"));
        let r = one(&root, "Notes/sub/up/a.md").unwrap();
        assert_eq!(
            (r.path.as_str(), r.target.as_str()),
            ("Notes/sub/up/a.md", "Notes/a.md")
        );
        // A note and a link to it are one note: cited once, as first given.
        let raw = ["Notes/a.md", "link.md", "Notes/sub/up/a.md"].map(String::from);
        let res = resolve_refs(&root, &raw);
        let paths: Vec<&str> = res.resolved.iter().map(|r| r.path.as_str()).collect();
        assert_eq!((paths, res.duplicates), (vec!["Notes/a.md"], 2));
    }

    #[test]
    fn symlink_outside_or_into_git_is_rejected() {
        let (_d, root) = vault();
        let outside = tempfile::NamedTempFile::new().unwrap();
        symlink(outside.path(), root.join("out.md")).unwrap();
        symlink(".git/config", root.join("cfg")).unwrap();
        symlink("/", root.join("rootdir")).unwrap();
        assert_eq!(one(&root, "out.md"), Err(Rejection::SymlinkOutside));
        assert_eq!(one(&root, "cfg"), Err(Rejection::InsideGit));
        let out_dir = tempfile::tempdir().unwrap();
        std::fs::write(out_dir.path().join("f.md"), "x").unwrap();
        symlink(out_dir.path(), root.join("outdir")).unwrap();
        assert_eq!(one(&root, "outdir/f.md"), Err(Rejection::SymlinkOutside));
        assert_eq!(one(&root, "rootdir/etc"), Err(Rejection::SymlinkOutside));
        symlink("nowhere.md", root.join("dangling.md")).unwrap();
        assert!(matches!(
            one(&root, "dangling.md"),
            Err(Rejection::Unreadable(_))
        ));
    }

    #[test]
    fn any_file_type_and_odd_names() {
        let (_d, root) = vault();
        std::fs::create_dir_all(root.join("_librarian/sessions")).unwrap();
        for name in [
            "page.html",
            ".gitignore",
            "_librarian/sessions/2026-01-01.md",
            "with space — dash.md",
            "ünïcödé/日本.md",
        ] {
            if let Some(parent) = Path::new(name).parent() {
                std::fs::create_dir_all(root.join(parent)).unwrap();
            }
            std::fs::write(root.join(name), name).unwrap();
            let r = one(&root, name).unwrap();
            assert_eq!(r.path, name);
            assert_eq!(r.hash, fingerprint::sha256_ref(name.as_bytes()));
            assert!(r.copyable);
        }
    }

    #[test]
    fn fifo_and_socket_are_refused_without_blocking() {
        let (_d, root) = vault();
        crate::fsx::testing::fifo(&root.join("pipe.md"));
        assert_eq!(one(&root, "pipe.md"), Err(Rejection::NotAFile));
        let _sock = std::os::unix::net::UnixListener::bind(root.join("sock")).unwrap();
        assert_eq!(one(&root, "sock"), Err(Rejection::NotAFile));
    }

    /// What a component swapped after canonicalisation meets: a symlinked file or directory is
    /// refused, a FIFO is refused without blocking, a vanished file is unreadable.
    #[test]
    fn read_beneath_refuses_components_swapped_after_canonicalisation() {
        let (_d, root) = vault();
        let segs = |p: &str| p.split('/').map(str::to_string).collect::<Vec<_>>();
        assert_eq!(
            read_beneath(&root, &segs("Notes/a.md")),
            Ok(b"alpha\n".to_vec())
        );
        symlink("Notes/a.md", root.join("link.md")).unwrap();
        symlink("Notes", root.join("linkdir")).unwrap();
        for p in ["link.md", "linkdir/a.md", "gone.md", "Notes/gone/a.md"] {
            assert!(
                matches!(read_beneath(&root, &segs(p)), Err(Rejection::Unreadable(_))),
                "{p}"
            );
        }
        crate::fsx::testing::fifo(&root.join("Notes/pipe.md"));
        for p in ["Notes/pipe.md", "Notes/sub", "Notes/a.md/x"] {
            assert_eq!(
                read_beneath(&root, &segs(p)),
                Err(Rejection::NotAFile),
                "{p}"
            );
        }
    }

    #[test]
    fn large_file_is_fingerprinted_but_not_copyable() {
        let (_d, root) = vault();
        let big = vec![b'x'; usize::try_from(CITED_COPY_MAX_BYTES).unwrap() + 1];
        std::fs::write(root.join("big.bin"), &big).unwrap();
        let r = one(&root, "big.bin").unwrap();
        assert!(!r.copyable);
        assert_eq!(r.hash, fingerprint::sha256_ref(&big));
        let exact = &big[..big.len() - 1];
        std::fs::write(root.join("exact.bin"), exact).unwrap();
        let r = one(&root, "exact.bin").unwrap();
        assert_eq!(r.hash, fingerprint::sha256_ref(exact));
        assert!(r.copyable);
    }

    #[test]
    fn order_kept_and_each_note_cited_once() {
        let (_d, root) = vault();
        let raw: Vec<String> = [
            "Note",
            "../x",
            "Note",
            "Notes/a.md",
            "./Notes/a.md",
            "[[Note]]",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let res = resolve_refs(&root, &raw);
        let paths: Vec<&str> = res.resolved.iter().map(|r| r.path.as_str()).collect();
        assert_eq!(paths, ["Note", "Notes/a.md"]);
        assert_eq!(res.rejected, vec![("../x".to_string(), Rejection::Escapes)]);
        assert_eq!(
            res.duplicates, 3,
            "as given twice, or resolving to a note already kept"
        );
    }

    #[test]
    fn rejected_refs_do_not_count_toward_the_bound() {
        let (_d, root) = vault();
        let raw: Vec<String> = std::iter::repeat_n("Note".to_string(), 2)
            .chain((0..MAX_REFS + 5).map(|i| format!("missing-{i}")))
            .chain(["Notes/a.md".to_string()])
            .collect();
        let res = resolve_refs(&root, &raw);
        assert_eq!(
            res.resolved.len(),
            2,
            "missing notes are rejected, not counted"
        );
        assert_eq!(res.duplicates, 1);
        let many: Vec<String> = (0..MAX_REFS + 3).map(|_| "Note".to_string()).collect();
        assert_eq!(resolve_refs(&root, &many).resolved.len(), 1);
    }

    #[test]
    fn a_note_over_the_hash_limit_is_refused_unread() {
        let (_d, root) = vault();
        // Sparse: 100 GiB of zeroes that would take minutes to read.
        let f = std::fs::File::create(root.join("Notes/huge.md")).unwrap();
        f.set_len(100 << 30).unwrap();
        let started = std::time::Instant::now();
        assert_eq!(
            one(&root, "Notes/huge.md"),
            Err(Rejection::TooLarge(100 << 30))
        );
        f.set_len(CITED_HASH_MAX_BYTES + 1).unwrap();
        assert_eq!(
            one(&root, "Notes/huge.md"),
            Err(Rejection::TooLarge(CITED_HASH_MAX_BYTES + 1))
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }

    proptest! {
        #[test]
        fn normalize_never_escapes(raw in "(\\[\\[)?([a-z.]{0,3}|\\.\\.|/|#|\\?|\\||\\\\| |\\x00|:){0,12}(\\]\\])?") {
            check_normalized(&raw)?;
        }

        #[test]
        fn normalize_never_panics(raw in any::<String>()) {
            check_normalized(&raw)?;
        }
    }

    fn check_normalized(raw: &str) -> Result<(), TestCaseError> {
        if let Some(p) = normalize_ref_path(raw) {
            prop_assert!(!p.starts_with('/'));
            prop_assert!(!p.contains('\0'));
            for seg in p.split('/') {
                prop_assert!(
                    !seg.is_empty() && seg != ".." && seg != ".",
                    "{:?} -> {:?}",
                    raw,
                    p
                );
            }
        }
        Ok(())
    }
}
