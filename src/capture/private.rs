//! Notes that are never copied into the record, whatever they hold (spec/secrets.md, "Cited
//! copies"): a note whose frontmatter says `rutter: private`, or one the vault's
//! `.rutterignore` names. Such a note is still cited (path, sha256, blob id), so recall and
//! verify can tell it changed; only its bytes stay out of the ref.
//!
//! `.rutterignore` lists one pattern a line, as a small part of gitignore reads them: blank
//! lines and `#` comments skipped; `*` matches within one name, `?` one character, `**` any
//! number of folders; a pattern without `/` matches a file or folder name anywhere, one with a
//! `/` (a leading one allowed) the path from the vault's root; a trailing `/` names a folder
//! and everything below it.

use std::path::Path;

/// The vault's list of notes never copied.
pub(crate) const IGNORE_FILE: &str = ".rutterignore";
/// The most bytes of `.rutterignore` read (more is a mistake, not a list).
const IGNORE_MAX_BYTES: u64 = 64 * 1024;

/// Whether the note at vault-relative `path`, holding `bytes`, is never to be copied.
pub(crate) fn is_private(vault_root: &Path, path: &str, bytes: &[u8]) -> bool {
    frontmatter_private(bytes) || listed(vault_root, path)
}

/// A frontmatter (`---` … `---` at the start) with the line `rutter: private`.
fn frontmatter_private(bytes: &[u8]) -> bool {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(8192)]);
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return false;
    };
    for line in rest.lines() {
        let line = line.trim_end();
        if line == "---" || line == "..." {
            return false;
        }
        if let Some(value) = line.strip_prefix("rutter:") {
            let v = value.trim().trim_matches(|c| c == '"' || c == '\'');
            if v.eq_ignore_ascii_case("private") {
                return true;
            }
        }
    }
    false
}

/// Whether `.rutterignore` (at the vault's root, a regular file) names `path`.
fn listed(vault_root: &Path, path: &str) -> bool {
    let Ok(dir) = crate::fsx::Dir::open(vault_root) else {
        return false;
    };
    let Ok(Some(bytes)) = dir.read_at_most(IGNORE_FILE, IGNORE_MAX_BYTES) else {
        return false;
    };
    String::from_utf8_lossy(&bytes)
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .any(|pattern| names(pattern, path))
}

/// Whether `pattern` names `path` or a folder above it.
fn names(pattern: &str, path: &str) -> bool {
    let folder = pattern.ends_with('/');
    let pattern = pattern.trim_end_matches('/');
    let anchored = pattern.contains('/');
    let pattern = pattern.trim_start_matches('/');
    let parts: Vec<&str> = path.split('/').collect();
    // Each folder above the file, and the file itself unless the pattern names a folder.
    let ends = (1..=parts.len()).filter(|&n| !folder || n < parts.len());
    let pat: Vec<&str> = pattern.split('/').collect();
    for n in ends {
        let prefix = &parts[..n];
        let hit = match anchored {
            true => glob_path(&pat, prefix),
            false => glob(pattern, prefix[n - 1]),
        };
        if hit {
            return true;
        }
    }
    false
}

/// Path patterns by segment, `**` matching any number of segments.
fn glob_path(pat: &[&str], path: &[&str]) -> bool {
    match (pat.first(), path.first()) {
        (None, None) => true,
        (Some(&"**"), _) => {
            glob_path(&pat[1..], path) || (!path.is_empty() && glob_path(pat, &path[1..]))
        }
        (Some(p), Some(s)) => glob(p, s) && glob_path(&pat[1..], &path[1..]),
        _ => false,
    }
}

/// One name against a pattern of `*` and `?`.
fn glob(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    let (mut pi, mut ni, mut star, mut mark) = (0, 0, None, 0);
    while ni < n.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == n[ni]) {
            pi += 1;
            ni += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ni;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ni = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frontmatter_says_private() {
        assert!(frontmatter_private(
            b"---\ntitle: x\nrutter: private\n---\nbody"
        ));
        assert!(frontmatter_private(
            b"---\r\nrutter: \"Private\"\r\n---\r\n"
        ));
        assert!(!frontmatter_private(
            b"---\ntitle: x\n---\nrutter: private\n"
        ));
        assert!(!frontmatter_private(b"rutter: private\n"));
        assert!(!frontmatter_private(b"---\nrutter: public\n---\n"));
    }

    #[test]
    fn patterns_name_what_gitignore_would() {
        for (pattern, path, want) in [
            ("secrets.md", "secrets.md", true),
            ("secrets.md", "Notes/secrets.md", true),
            ("*.key.md", "Ops/aws.key.md", true),
            ("Private/", "Private/a.md", true),
            ("Private/", "Private", false),
            ("/Journal/*.md", "Journal/2026-12-01.md", true),
            ("/Journal/*.md", "Notes/Journal/x.md", false),
            ("Ops/**/token?.md", "Ops/a/b/token1.md", true),
            ("Ops/**/token?.md", "Ops/token2.md", true),
            ("Ops/**/token?.md", "Other/token1.md", false),
            ("Private", "Notes/Private/a.md", true),
            ("note.md", "notes.md", false),
        ] {
            assert_eq!(names(pattern, path), want, "{pattern} vs {path}");
        }
    }

    proptest::proptest! {
        /// `.rutterignore` is the user's text: any pattern against any path answers, in time
        /// bounded by their lengths (no backtracking blow-up), and a path always names itself.
        #[test]
        fn any_pattern_against_any_path_answers(
            pattern in "[*?/a-z.]{0,24}",
            path in "[a-z.]{1,8}(/[a-z.]{1,8}){0,4}",
        ) {
            let _ = names(&pattern, &path);
            proptest::prop_assert!(names(&path, &path));
        }
    }

    #[test]
    fn the_ignore_file_is_read_from_the_vault_root() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join(IGNORE_FILE), "# never copied\n\nOps/\n").unwrap();
        assert!(is_private(t.path(), "Ops/keys.md", b"# keys"));
        assert!(!is_private(t.path(), "Notes/a.md", b"# a"));
    }
}
