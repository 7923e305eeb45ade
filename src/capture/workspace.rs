//! Workspace provenance: the `{cwd, project, repo}` recorded with an entry (anchor §6).
//!
//! Owns deriving the project name and origin remote from the hook's `cwd` with pure file reads
//! (no git subprocess, no network, files over 256 KiB ignored), and stripping credentials, query
//! and fragment from the remote URL before it is stored. Provenance never blocks a capture: every
//! failure here degrades to "less provenance", never to an error. It also finds the local config
//! file of the repository around the `cwd`, where the per-repository opt-out is read.

use std::io::Read;
use std::path::{Component, Path, PathBuf};

use crate::capture::sanitize::{inert_line, PROVENANCE_MAX_CHARS};
use crate::records::Workspace;
use crate::store::localconfig::{LocalConfig, NotABool};

/// Git metadata files larger than this are not read.
const MAX_GIT_FILE_BYTES: u64 = 256 * 1024;
/// How many directories above the cwd are searched for a `.git` entry.
const MAX_LEVELS_UP: usize = 64;

/// Derives `{cwd, project, repo}` from the hook's cwd with pure file reads.
///
/// `None` when there is no cwd, its inert form is empty, or the project comes out empty (cwd
/// `/`). `repo` is omitted when no origin remote is found or it is empty once made inert.
pub fn derive_workspace(cwd: Option<&str>) -> Option<Workspace> {
    let raw = cwd?;
    let cwd_inert = inert(raw);
    if cwd_inert.is_empty() {
        return None;
    }
    let abs = absolute_lexical(Path::new(raw));
    let found = find_dot_git(&abs);
    let project_dir = found
        .as_ref()
        .map_or(abs.as_path(), |(dir, _)| dir.as_path());
    let project = inert(&project_dir.file_name()?.to_string_lossy());
    if project.is_empty() {
        return None;
    }
    let repo = found
        .and_then(|(_, dot_git)| git_dir(&dot_git))
        .and_then(|gd| origin_url(&gd))
        .map(|url| inert(&strip_url_credentials(&url)))
        .filter(|r| !r.is_empty());
    Some(Workspace::new(cwd_inert, project, repo))
}

/// Removes credentials, query and fragment from a remote URL (anchor §6 proposal [P]).
///
/// For `scheme://` URLs the whole userinfo is dropped for http(s) and only the password for other
/// schemes (a user name holding `?` or `#` goes too); `?query` and `#fragment` are dropped. An scp-style `git@host:owner/repo.git` is kept
/// as is apart from any `?`/`#` tail.
pub(crate) fn strip_url_credentials(url: &str) -> String {
    let Some(sep) = url.find("://") else {
        return cut_query(url).to_string();
    };
    let (scheme, rest) = (&url[..sep], &url[sep + 3..]);
    // The authority ends at the first '/'; its userinfo runs to the last '@' inside it, so a
    // raw '?', '#', ':' or '@' in a password never leaks.
    let auth_end = rest.find('/').unwrap_or(rest.len());
    let (userinfo, host_and_path) = match rest[..auth_end].rfind('@') {
        Some(at) => (Some(&rest[..at]), &rest[at + 1..]),
        None => (None, rest),
    };
    let http = scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https");
    let user = match userinfo {
        Some(info) if !http => info
            .split(':')
            .next()
            .filter(|u| !u.is_empty() && !u.contains(['?', '#'])),
        _ => None,
    };
    let mut out = String::with_capacity(url.len());
    out.push_str(scheme);
    out.push_str("://");
    if let Some(u) = user {
        out.push_str(u);
        out.push('@');
    }
    out.push_str(cut_query(host_and_path));
    out
}

/// The part before the first `?` or `#`.
fn cut_query(s: &str) -> &str {
    s.find(['?', '#']).map_or(s, |i| &s[..i])
}

fn inert(raw: &str) -> String {
    inert_line(raw, PROVENANCE_MAX_CHARS)
}

/// The cwd made absolute against the process directory, with `.` and `..` resolved lexically
/// (as the reference's `path.resolve` does); symlinks are not followed.
fn absolute_lexical(p: &Path) -> PathBuf {
    let joined = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir().map_or_else(|_| p.to_path_buf(), |d| d.join(p))
    };
    let mut out = PathBuf::new();
    for comp in joined.components() {
        match comp {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The nearest directory at or above `start` holding a `.git` directory or file, with that entry.
fn find_dot_git(start: &Path) -> Option<(PathBuf, PathBuf)> {
    start.ancestors().take(MAX_LEVELS_UP + 1).find_map(|dir| {
        let dot_git = dir.join(".git");
        let meta = std::fs::metadata(&dot_git).ok()?;
        (meta.is_dir() || meta.is_file()).then(|| (dir.to_path_buf(), dot_git))
    })
}

/// The git dir a `.git` entry stands for: itself when a directory, else the `.git`-shaped target
/// of its first `gitdir:` line.
fn git_dir(dot_git: &Path) -> Option<PathBuf> {
    if dot_git.is_dir() {
        return Some(dot_git.to_path_buf());
    }
    let text = read_small(dot_git)?;
    let target = text.lines().find_map(|line| {
        let value = line.trim_start().strip_prefix("gitdir:")?.trim();
        (!value.is_empty()).then_some(value)
    })?;
    let resolved = dot_git.parent()?.join(target);
    is_git_shaped(&resolved).then_some(resolved)
}

/// True when one of the path's segments is exactly `.git`.
fn is_git_shaped(p: &Path) -> bool {
    p.components()
        .any(|c| matches!(c, Component::Normal(s) if s == ".git"))
}

/// The origin URL from the repository's config files, most specific first (git's own parser).
fn origin_url(git_dir: &Path) -> Option<String> {
    config_files(git_dir)
        .iter()
        .filter_map(|f| open_config(f)?.string("remote.origin.url"))
        .find(|url| !url.trim().is_empty())
}

/// The repository around a working directory, with the config files that hold its own settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RepoConfig {
    /// The directory holding the `.git` entry (the work tree's root).
    pub work_tree: PathBuf,
    /// `config.worktree` of a linked work tree (when present), then the repository's `config`;
    /// the first that sets a key decides, as in git.
    pub files: Vec<PathBuf>,
}

impl RepoConfig {
    /// The first value of `key` as a boolean, in file order; `Err` with the raw value when it
    /// is not a boolean.
    pub(crate) fn bool(&self, key: &str) -> Result<Option<bool>, NotABool> {
        for file in &self.files {
            if let Some(config) = open_config(file) {
                if let Some(b) = config.bool(key)? {
                    return Ok(Some(b));
                }
            }
        }
        Ok(None)
    }
}

/// The repository around `cwd` (found by file reads, as for the provenance) and its own config
/// files; `None` outside a repository.
pub(crate) fn repo_config(cwd: &str) -> Option<RepoConfig> {
    let (work_tree, dot_git) = find_dot_git(&absolute_lexical(Path::new(cwd)))?;
    let git_dir = git_dir(&dot_git)?;
    Some(RepoConfig {
        work_tree,
        files: config_files(&git_dir),
    })
}

/// `<gitdir>/config.worktree`, `<gitdir>/config` and the `config` of a `.git`-shaped
/// `commondir` (a linked work tree's repository), those that exist.
fn config_files(git_dir: &Path) -> Vec<PathBuf> {
    let mut files = vec![git_dir.join("config.worktree"), git_dir.join("config")];
    if let Some(common) = read_small(&git_dir.join("commondir")) {
        let common = git_dir.join(common.trim());
        if is_git_shaped(&common) {
            files.push(common.join("config"));
        }
    }
    files.retain(|f| small_regular_file(f));
    files
}

/// A config file that is a regular file of at most 256 KiB, opened with git's parser.
fn open_config(path: &Path) -> Option<LocalConfig> {
    small_regular_file(path)
        .then(|| LocalConfig::open(path))
        .flatten()
}

/// True for a regular file (symlinks followed) of at most 256 KiB: never a FIFO or a device,
/// which libgit2 would block on.
fn small_regular_file(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() <= MAX_GIT_FILE_BYTES)
}

/// Reads a regular file of at most 256 KiB as (lossy) UTF-8; `None` on any failure. Opened with
/// [`super::open_regular`], so a FIFO swapped in after the type check cannot hang the hook.
fn read_small(path: &Path) -> Option<String> {
    let (file, len) = super::open_regular(path).ok()??;
    if len > MAX_GIT_FILE_BYTES {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(MAX_GIT_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .ok()?;
    if u64::try_from(bytes.len()).ok()? > MAX_GIT_FILE_BYTES {
        return None;
    }
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn canon_tmp() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        (dir, root)
    }

    fn write(p: &Path, text: &str) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    fn ws(dir: &Path) -> Workspace {
        derive_workspace(Some(dir.to_str().unwrap())).unwrap()
    }

    const ORIGIN: &str = "[core]\n\tbare = false\n[remote \"upstream\"]\n\turl = https://up/x.git\n\
                          [remote \"origin\"]\n\tfetch = +refs/heads/*\n\turl =\n\turl = https://user:tok@host/o/r.git?q=1#f\n";

    #[test]
    fn subdirectory_resolves_to_repo_name_and_origin() {
        let (_d, root) = canon_tmp();
        let repo = root.join("myproj");
        write(&repo.join(".git/config"), ORIGIN);
        std::fs::create_dir_all(repo.join("src/deep")).unwrap();
        let w = ws(&repo.join("src/deep"));
        assert_eq!(w.project, "myproj");
        assert_eq!(w.cwd, repo.join("src/deep").to_str().unwrap());
        assert_eq!(w.repo.as_deref(), Some("https://host/o/r.git"));
    }

    #[test]
    fn no_git_gives_cwd_basename_and_no_repo() {
        let (_d, root) = canon_tmp();
        let dir = root.join("plain dir — x");
        std::fs::create_dir_all(&dir).unwrap();
        let w = ws(&dir);
        assert_eq!((w.project.as_str(), w.repo), ("plain dir — x", None));
        // A cwd that does not exist still yields its basename.
        let w = ws(&root.join("gone/away"));
        assert_eq!(w.project, "away");
    }

    #[test]
    fn repo_without_origin_has_no_repo_field() {
        let (_d, root) = canon_tmp();
        write(
            &root.join("p/.git/config"),
            "[remote \"upstream\"]\n\turl = x\n",
        );
        let w = ws(&root.join("p"));
        assert_eq!((w.project.as_str(), w.repo), ("p", None));
    }

    #[test]
    fn linked_worktree_uses_its_own_name_and_common_config() {
        let (_d, root) = canon_tmp();
        write(
            &root.join("main/.git/config"),
            "[remote \"origin\"]\nurl = git@host:o/r.git\n",
        );
        write(&root.join("main/.git/worktrees/wt/commondir"), "../..\n");
        write(
            &root.join("wt-dir/.git"),
            &format!(
                "gitdir: {}\n",
                root.join("main/.git/worktrees/wt").display()
            ),
        );
        let w = ws(&root.join("wt-dir"));
        assert_eq!(w.project, "wt-dir");
        assert_eq!(w.repo.as_deref(), Some("git@host:o/r.git"));
    }

    #[test]
    fn relative_gitdir_is_resolved_from_the_file() {
        let (_d, root) = canon_tmp();
        write(
            &root.join("super/.git/modules/sub/config"),
            "[remote \"origin\"]\n url = ssh://git:pw@host/sub\n",
        );
        write(
            &root.join("super/sub/.git"),
            "  gitdir:   ../.git/modules/sub  \n",
        );
        let w = ws(&root.join("super/sub"));
        assert_eq!(w.project, "sub");
        assert_eq!(w.repo.as_deref(), Some("ssh://git@host/sub"));
    }

    #[test]
    fn gitdir_not_git_shaped_gives_no_repo() {
        let (_d, root) = canon_tmp();
        write(
            &root.join("elsewhere/config"),
            "[remote \"origin\"]\nurl = https://h/x\n",
        );
        write(
            &root.join("proj/.git"),
            &format!("gitdir: {}\n", root.join("elsewhere").display()),
        );
        let w = ws(&root.join("proj"));
        assert_eq!((w.project.as_str(), w.repo), ("proj", None));
        // A commondir that is not .git-shaped is not followed either.
        write(
            &root.join("q/.git/commondir"),
            &root.join("elsewhere").display().to_string(),
        );
        assert_eq!(ws(&root.join("q")).repo, None);
    }

    #[test]
    fn oversized_config_is_ignored() {
        let (_d, root) = canon_tmp();
        let big = format!("{ORIGIN}{}", "#".repeat(300 * 1024));
        write(&root.join("p/.git/config"), &big);
        assert_eq!(ws(&root.join("p")).repo, None);
    }

    #[test]
    fn empty_or_root_cwd_gives_none() {
        assert_eq!(derive_workspace(None), None);
        assert_eq!(derive_workspace(Some("")), None);
        assert_eq!(derive_workspace(Some(" \n\t\u{1b}[31m ")), None);
        assert_eq!(derive_workspace(Some("/")), None);
        assert_eq!(derive_workspace(Some("/..")), None);
    }

    #[test]
    fn hostile_cwd_becomes_inert() {
        let w = derive_workspace(Some(
            "/tmp/nonexistent-rutter/evil\n\u{1b}[31mname\u{202e}\r\nx",
        ))
        .unwrap();
        assert!(
            !w.cwd.contains(['\n', '\r', '\u{1b}', '\u{202e}']),
            "{:?}",
            w.cwd
        );
        assert!(
            !w.project.contains(['\n', '\r', '\u{1b}', '\u{202e}']),
            "{:?}",
            w.project
        );
        let long = format!("/tmp/{}", "a".repeat(2000));
        let w = derive_workspace(Some(&long)).unwrap();
        assert!(w.cwd.chars().count() <= PROVENANCE_MAX_CHARS);
        assert!(w.project.chars().count() <= PROVENANCE_MAX_CHARS);
    }

    #[test]
    fn url_stripping_table() {
        let cases = [
            ("https://user:token@host/x.git?q=1#f", "https://host/x.git"),
            ("HTTPS://tok@host/x", "HTTPS://host/x"),
            ("http://u:p@ss@host:8080/x", "http://host:8080/x"),
            ("https://u:p?#x@host/x", "https://host/x"),
            ("ssh://git:pw@host/x", "ssh://git@host/x"),
            ("ssh://git@host:22/x.git", "ssh://git@host:22/x.git"),
            ("ssh://:pw@host/x", "ssh://host/x"),
            ("ssh://a?b:pw@host/x", "ssh://host/x"),
            ("git://host/x#frag", "git://host/x"),
            (
                "git@github.com:owner/repo.git",
                "git@github.com:owner/repo.git",
            ),
            (
                "git@github.com:owner/repo.git?x#y",
                "git@github.com:owner/repo.git",
            ),
            ("/srv/repos/x.git", "/srv/repos/x.git"),
            ("file:///srv/x.git", "file:///srv/x.git"),
            ("https://host?x=1", "https://host"),
            ("", ""),
        ];
        for (input, want) in cases {
            assert_eq!(strip_url_credentials(input), want, "{input}");
        }
    }

    fn check_stripped(url: &str) -> Result<(), TestCaseError> {
        let out = strip_url_credentials(url);
        if let Some(sep) = out.find("://") {
            let rest = &out[sep + 3..];
            prop_assert!(!rest.contains(['?', '#']), "{:?} -> {:?}", url, out);
            let scheme = out[..sep].to_ascii_lowercase();
            let auth = rest.split('/').next().unwrap_or("");
            if scheme == "http" || scheme == "https" {
                prop_assert!(!auth.contains('@'), "{:?} -> {:?}", url, out);
            } else if let Some(at) = auth.rfind('@') {
                prop_assert!(!auth[..at].contains(':'), "{:?} -> {:?}", url, out);
            }
        } else {
            prop_assert!(!out.contains(['?', '#']));
        }
        Ok(())
    }

    proptest! {
        #[test]
        fn strip_never_panics(url in any::<String>()) {
            check_stripped(&url)?;
        }

        #[test]
        fn strip_removes_secrets(
            scheme in "(https?|HTTPS|ssh|git|ftp)",
            user in "[a-z:@?#]{0,6}",
            pass in "[a-zA-Z0-9:@?#%]{0,8}",
            host in "[a-z.]{1,8}(:[0-9]{1,4})?",
            path in "(/[a-z@.]{0,6}){0,3}",
            tail in "(\\?[a-z=&@:]{0,6})?(#[a-z@:]{0,4})?",
        ) {
            let url = format!("{scheme}://{user}:{pass}@{host}{path}{tail}");
            check_stripped(&url)?;
            let out = strip_url_credentials(&url);
            if !pass.is_empty() {
                prop_assert!(!out.contains(&format!(":{pass}@")), "{:?} -> {:?}", url, out);
            }
        }
    }
}
