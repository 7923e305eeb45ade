//! Vault resolution (DESIGN §3): which notes folder the tool works on, and where its state lives.
//!
//! Order, as git resolves a repository: `--vault`, then `LIBRARIAN_VAULT_PATH`; for interactive
//! commands only, the repository around the current directory when it holds rutter data, then
//! `rutter.vault` in that repository's own config; then `rutter.vault` in the global git config.
//! `capture` and `mcp` never look at the current directory (hooks and servers run in the user's
//! code projects).

use std::path::{Path, PathBuf};

/// Environment variable naming the vault (compatible with the reference).
pub(crate) const VAULT_ENV: &str = "LIBRARIAN_VAULT_PATH";
/// Global git config key naming the vault.
pub(crate) const VAULT_CONFIG_KEY: &str = "rutter.vault";
/// The overlay folder inside the vault.
pub(crate) const OVERLAY_DIR: &str = crate::records::paths::OVERLAY_DIR;

/// Where the vault path came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VaultSource {
    Flag,
    Env,
    /// `rutter.vault` in the global (or system) git config.
    GitConfig,
    /// `rutter.vault` in the local config of the repository around the current directory.
    LocalConfig,
    CurrentRepository,
}

/// A resolved vault: its canonical root and, for a git vault, its git directory.
#[derive(Debug, Clone)]
pub struct Vault {
    pub root: PathBuf,
    pub git_dir: Option<PathBuf>,
    pub source: VaultSource,
    /// The linked worktree that was named, when the vault is its repository's main worktree
    /// ([`open`]): commands say so.
    pub linked_from: Option<PathBuf>,
}

/// Why no vault could be used.
#[derive(Debug, thiserror::Error)]
pub enum VaultError {
    #[error("no vault configured")]
    NotConfigured,
    #[error("vault {path} (from {source_name}) is not a usable directory: {reason}")]
    Unusable {
        path: String,
        source_name: &'static str,
        reason: String,
    },
}

impl crate::hint::Hinted for VaultError {
    fn hint(&self) -> Option<String> {
        match self {
            VaultError::NotConfigured => Some("Pass --vault PATH, set LIBRARIAN_VAULT_PATH, or run `git rutter init --global` inside your notes vault.".into()),
            VaultError::Unusable { source_name, .. } => match *source_name {
                "LIBRARIAN_VAULT_PATH" => Some("Point LIBRARIAN_VAULT_PATH at your notes vault, or unset it (`unset LIBRARIAN_VAULT_PATH`, and where your shell profile sets it) to use git config rutter.vault.".into()),
                "git config rutter.vault" => Some("Run `git rutter init . --global` in your notes vault, or `git config --global --unset rutter.vault`.".into()),
                "this repository's git config rutter.vault" => Some("Point it at your notes vault (`git config rutter.vault PATH`), or remove it with `git config --unset rutter.vault`.".into()),
                _ => None,
            },
        }
    }
}

/// Why `root` (canonical) cannot be a vault because it is git's own: a git directory (a bare
/// repository, or a work tree's `.git`), or a folder inside one. Records written there would
/// land among git's objects and refs, and `init` there made a repository nested in the bare
/// one that git then found instead of it.
fn git_internal(root: &Path) -> Option<&'static str> {
    if root.components().any(|c| c.as_os_str() == ".git") {
        return Some("it is inside a git repository's own .git folder; point it at the work tree that holds your notes");
    }
    let is_git_dir =
        root.join("HEAD").is_file() && root.join("objects").is_dir() && root.join("refs").is_dir();
    is_git_dir.then_some(
        "it is a bare git repository, which has no work tree for notes; clone it (`git clone PATH DIR`) and use the clone",
    )
}

/// Resolves the vault. `interactive` lets commands run by hand use the repository around the
/// current directory (when it holds rutter data) and that repository's own `rutter.vault`,
/// before the global setting, as git prefers local config to global.
pub fn resolve(flag: Option<&Path>, interactive: bool) -> Result<Vault, VaultError> {
    if let Some(p) = flag {
        return open(p, VaultSource::Flag);
    }
    if let Some(p) = from_env() {
        return open(&p, VaultSource::Env);
    }
    if interactive {
        if let Some(here) = CurrentRepo::discover() {
            if here.has_rutter_data {
                return open(&here.root, VaultSource::CurrentRepository);
            }
            if let Some(p) = here.local_vault {
                return open(&p, VaultSource::LocalConfig);
            }
        }
    }
    match from_git_config() {
        Some(p) => open(&p, VaultSource::GitConfig),
        None => Err(VaultError::NotConfigured),
    }
}

/// Opens a vault at an explicit path (canonicalised; must be an existing directory).
pub fn open(path: &Path, source: VaultSource) -> Result<Vault, VaultError> {
    let unusable = |reason: String| VaultError::Unusable {
        path: path.display().to_string(),
        source_name: source.describe(),
        reason,
    };
    let root = std::fs::canonicalize(path).map_err(|e| unusable(e.to_string()))?;
    if !root.is_dir() {
        return Err(unusable("not a directory".into()));
    }
    if is_system_root(&root) {
        return Err(unusable(
            "it is a system folder, never a notes vault; point it at the folder that holds your notes".into(),
        ));
    }
    if let Some(why) = git_internal(&root) {
        return Err(unusable(why.into()));
    }
    let git_dir = git_dir_at(&root);
    // A linked worktree (`git worktree add`) names its repository, whose one record lives with
    // the main worktree: each worktree keeping day files of its own made every capture of the
    // other look edited to verify.
    if let Some(main) = git_dir.as_deref().and_then(main_worktree) {
        let main_git = git_dir_at(&main);
        return Ok(Vault {
            root: main,
            git_dir: main_git,
            source,
            linked_from: Some(root),
        });
    }
    Ok(Vault {
        root,
        git_dir,
        source,
        linked_from: None,
    })
}

/// The main worktree of the repository whose linked worktree has the git directory `git_dir`:
/// the folder holding the common directory as its `.git`. `None` for a main worktree, a bare
/// repository's worktree, or a main worktree that is gone.
fn main_worktree(git_dir: &Path) -> Option<PathBuf> {
    let common = common_dir(git_dir);
    if common == git_dir || common.file_name()? != ".git" {
        return None;
    }
    let main = common.parent()?.to_path_buf();
    (git_dir_at(&main).as_deref() == Some(common.as_path()) && !is_system_root(&main))
        .then_some(main)
}

/// Folders that are never a vault: `/`, the system's top-level folders and the shared, volatile
/// or system-owned folders one level below (a stray `LIBRARIAN_VAULT_PATH=/mnt` must not create
/// `/mnt/_librarian/`). A folder below one of them (`/mnt/data/notes`) may be a vault.
const SYSTEM_ROOTS: &[&str] = &[
    "/",
    "/bin",
    "/boot",
    "/dev",
    "/etc",
    "/home",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/opt",
    "/proc",
    "/root",
    "/run",
    "/sbin",
    "/srv",
    "/sys",
    "/tmp",
    "/usr",
    "/var",
    "/mnt",
    "/media",
    "/cdrom",
    "/snap",
    "/nix",
    "/lost+found",
    // Second-level system folders: shared, volatile or the system's own.
    "/usr/local",
    "/usr/share",
    "/usr/lib",
    "/usr/bin",
    "/var/tmp",
    "/var/lib",
    "/var/log",
    "/var/cache",
    "/var/mail",
    "/var/spool",
    "/var/opt",
    "/dev/shm",
    "/run/user",
    "/run/media",
    "/opt/homebrew",
    "/Applications",
    "/Library",
    "/System",
    "/Users",
    "/Volumes",
    "/private",
];

/// Whether a canonical path is `/` or one of the system's top-level folders, reached by any
/// path (e.g. `/private/tmp` for `/tmp` on macOS): the same folder (device and inode) as one of
/// them. One `stat` each, where canonicalising each name took a `readlink` per component (60
/// calls on every run of every command).
fn is_system_root(root: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let same =
        |a: &std::fs::Metadata, b: &std::fs::Metadata| a.dev() == b.dev() && a.ino() == b.ino();
    let folder = std::fs::metadata(root).ok();
    SYSTEM_ROOTS.iter().any(|s| {
        let p = Path::new(s);
        root == p
            || folder
                .as_ref()
                .is_some_and(|f| std::fs::metadata(p).is_ok_and(|m| same(f, &m)))
    })
}

impl VaultSource {
    /// A short description for messages.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            VaultSource::Flag => "--vault",
            VaultSource::Env => "LIBRARIAN_VAULT_PATH",
            VaultSource::GitConfig => "git config rutter.vault",
            VaultSource::LocalConfig => "this repository's git config rutter.vault",
            VaultSource::CurrentRepository => "the current repository",
        }
    }
}

impl crate::store::Located for Vault {
    fn place(&self) -> crate::store::Place {
        crate::store::Place {
            root: self.root.clone(),
            git_dir: self.git_dir.clone(),
            state_dir: self.state_dir(),
            worktree_state_dir: self.worktree_state_dir(),
        }
    }
}

impl Vault {
    /// The tool's private state directory: `.git/rutter/` in a git vault, else
    /// `${XDG_DATA_HOME:-~/.local/share}/rutter/<id>/` (not created here). A linked worktree
    /// (`git worktree add`) uses its repository's common git directory, so every worktree of a
    /// repository shares the one lock, pending journal, witness log and aside folder of its one
    /// `refs/rutter/records` (git keeps refs in the common directory too).
    pub(crate) fn state_dir(&self) -> PathBuf {
        match &self.git_dir {
            Some(g) => common_dir(g).join("rutter"),
            None => xdg_data_home().join("rutter").join(self.id()),
        }
    }

    /// The state of this worktree alone: `<git dir>/rutter/` (`.git/worktrees/<name>/rutter/` in
    /// a linked worktree, the same folder as [`Vault::state_dir`] otherwise). What describes the
    /// working files lives here: the index, the dedupe cache's watermarks, verify's cache.
    pub(crate) fn worktree_state_dir(&self) -> PathBuf {
        match &self.git_dir {
            Some(g) => g.join("rutter"),
            None => self.state_dir(),
        }
    }

    /// The first 16 hex digits of sha256 of the canonical vault path.
    pub(crate) fn id(&self) -> String {
        crate::records::fingerprint::vault_id(&self.root)
    }
}

/// The git directory of a repository whose work tree is exactly `root` (no upward search).
fn git_dir_at(root: &Path) -> Option<PathBuf> {
    let dot_git = root.join(".git");
    let meta = std::fs::symlink_metadata(&dot_git).ok()?;
    if meta.is_dir() {
        return dot_git.join("HEAD").is_file().then_some(dot_git);
    }
    if meta.is_file() {
        let text = std::fs::read_to_string(&dot_git).ok()?;
        let target = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("gitdir:"))?
            .trim();
        let dir = std::fs::canonicalize(root.join(target)).ok()?;
        return dir.join("HEAD").is_file().then_some(dir);
    }
    None
}

/// The common git directory of `git_dir`: the directory its `commondir` file names (relative
/// paths taken from `git_dir`, as git reads it), else `git_dir` itself.
pub(crate) fn common_dir(git_dir: &Path) -> PathBuf {
    let Ok(text) = std::fs::read_to_string(git_dir.join("commondir")) else {
        return git_dir.to_path_buf();
    };
    let named = git_dir.join(text.trim_end_matches(['\n', '\r']));
    match std::fs::canonicalize(&named) {
        Ok(dir) if dir.join("HEAD").is_file() => dir,
        _ => git_dir.to_path_buf(),
    }
}

/// `LIBRARIAN_VAULT_PATH` as this process has it (tilde expanded), when set and not empty.
pub(crate) fn from_env() -> Option<PathBuf> {
    let raw = std::env::var(VAULT_ENV).ok()?;
    let raw = raw.trim();
    (!raw.is_empty()).then(|| expand_tilde(raw))
}

fn from_git_config() -> Option<PathBuf> {
    let value = crate::store::gitenv::default_config_string(VAULT_CONFIG_KEY)?;
    let value = value.trim();
    (!value.is_empty()).then(|| expand_tilde(value))
}

pub(crate) use crate::fsx::expand_tilde;

fn xdg_data_home() -> PathBuf {
    match std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
        Some(v) => PathBuf::from(v),
        None => expand_tilde("~/.local/share"),
    }
}

/// The git repository around the current directory, as git finds it (`GIT_DIR`, upward search).
#[derive(Debug, Clone)]
pub(crate) struct CurrentRepo {
    /// Its work tree, canonical.
    pub root: PathBuf,
    /// It has `refs/rutter/records` or a `_librarian/` folder.
    pub has_rutter_data: bool,
    /// `rutter.vault` in its local config, relative paths taken from its work tree.
    pub local_vault: Option<PathBuf>,
}

impl CurrentRepo {
    /// The repository around the current directory, if there is one with a work tree.
    pub(crate) fn discover() -> Option<CurrentRepo> {
        let repo = crate::store::gitenv::repo_here(VAULT_CONFIG_KEY)?;
        let root = std::fs::canonicalize(&repo.workdir).ok()?;
        let local_vault = repo
            .local_value
            .filter(|v| !v.trim().is_empty())
            .map(|v| root.join(expand_tilde(v.trim())));
        Some(CurrentRepo {
            has_rutter_data: repo.has_records_ref || root.join(OVERLAY_DIR).is_dir(),
            root,
            local_vault,
        })
    }
}

/// The work tree of the repository that contains `dir` when `dir` is inside it but is not its
/// root: a repository created at `dir` would be nested in that one.
pub(crate) fn enclosing_work_tree(dir: &Path) -> Option<PathBuf> {
    let dir = std::fs::canonicalize(dir).ok()?;
    let parent = dir.parent()?;
    let outer = std::fs::canonicalize(crate::store::gitenv::work_tree_from(parent)?).ok()?;
    (dir.starts_with(&outer) && dir != outer).then_some(outer)
}

/// A one-line notice naming `vault` when a user standing in another repository may not expect
/// it: the vault came from the environment or a global setting, and the current directory lies
/// in a repository that is not the vault.
pub fn surprise_notice(vault: &Vault) -> Option<String> {
    if !matches!(vault.source, VaultSource::Env | VaultSource::GitConfig) {
        return None;
    }
    let here = CurrentRepo::discover()?;
    (here.root != vault.root).then(|| {
        format!(
            "git-rutter: using the vault {} (from {}), not the repository you are in ({}).",
            vault.root.display(),
            vault.source.describe(),
            here.root.display()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_path_must_exist() {
        let t = tempfile::tempdir().unwrap();
        let v = open(t.path(), VaultSource::Flag).unwrap();
        assert!(v.git_dir.is_none());
        // The state directory of a vault outside git is named by it: it must never change.
        use sha2::{Digest, Sha256};
        let digest = Sha256::digest(v.root.as_os_str().as_encoded_bytes());
        let want: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
        assert_eq!(v.id(), want);
        assert!(open(&t.path().join("missing"), VaultSource::Flag).is_err());
    }

    #[test]
    fn system_roots_are_never_a_vault() {
        for root in [
            "/",
            "/etc",
            "/usr",
            "/tmp",
            "/home",
            "/mnt",
            "/media",
            "/usr/local",
            "/var/tmp",
            "/dev/shm",
        ] {
            if Path::new(root).is_dir() {
                let err = open(Path::new(root), VaultSource::Env)
                    .unwrap_err()
                    .to_string();
                assert!(err.contains("is a system folder"), "{root}: {err}");
            }
        }
        let t = tempfile::tempdir().unwrap();
        assert!(
            open(t.path(), VaultSource::Env).is_ok(),
            "a folder below /tmp is fine"
        );
        // The same folder by another name is still that folder.
        let link = t.path().join("etc-by-another-name");
        std::os::unix::fs::symlink("/etc", &link).unwrap();
        assert!(is_system_root(Path::new("/etc")) && is_system_root(&link));
        assert!(!is_system_root(t.path()));
    }

    #[test]
    fn git_dir_only_at_the_root() {
        let t = tempfile::tempdir().unwrap();
        crate::store::gitenv::init_repo(t.path()).unwrap();
        std::fs::create_dir(t.path().join("inner")).unwrap();
        assert!(open(t.path(), VaultSource::Flag).unwrap().git_dir.is_some());
        assert!(open(&t.path().join("inner"), VaultSource::Flag)
            .unwrap()
            .git_dir
            .is_none());
    }

    #[test]
    fn tilde_expansion_is_narrow() {
        if let Some(h) = std::env::var_os("HOME") {
            assert_eq!(expand_tilde("~/x"), PathBuf::from(&h).join("x"));
            assert_eq!(expand_tilde("~"), PathBuf::from(&h));
        }
        assert_eq!(expand_tilde("a~/x"), PathBuf::from("a~/x"));
        assert_eq!(expand_tilde("~user/x"), PathBuf::from("~user/x"));
    }
}
