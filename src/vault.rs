//! Vault resolution (DESIGN §3): which notes folder the tool works on, and where its state lives.
//!
//! Order: `--vault`, then `LIBRARIAN_VAULT_PATH`, then the global git config key `rutter.vault`.
//! Interactive commands may also use the repository around the current directory when it already
//! holds rutter data; `capture` and `mcp` never do (hooks run in the user's code projects).

use std::path::{Path, PathBuf};

/// Environment variable naming the vault (compatible with the reference).
pub const VAULT_ENV: &str = "LIBRARIAN_VAULT_PATH";
/// Global git config key naming the vault.
pub const VAULT_CONFIG_KEY: &str = "rutter.vault";
/// The overlay folder inside the vault.
pub const OVERLAY_DIR: &str = "_librarian";

/// Where the vault path came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VaultSource {
    Flag,
    Env,
    GitConfig,
    CurrentRepository,
}

/// A resolved vault: its canonical root and, for a git vault, its git directory.
#[derive(Debug, Clone)]
pub struct Vault {
    pub root: PathBuf,
    pub git_dir: Option<PathBuf>,
    pub source: VaultSource,
}

/// Why no vault could be used.
#[derive(Debug, thiserror::Error)]
pub enum VaultError {
    #[error("no vault configured: pass --vault PATH, set LIBRARIAN_VAULT_PATH, or run `git rutter init --global` inside your notes vault")]
    NotConfigured,
    #[error("vault {path} (from {source_name}) is not a usable directory: {reason}")]
    Unusable {
        path: String,
        source_name: &'static str,
        reason: String,
    },
}

/// Resolves the vault. `allow_current_repo` lets interactive commands fall back to the
/// repository containing the current directory when it holds rutter data.
pub fn resolve(flag: Option<&Path>, allow_current_repo: bool) -> Result<Vault, VaultError> {
    let configured = flag
        .map(|p| (p.to_path_buf(), VaultSource::Flag))
        .or_else(|| from_env().map(|p| (p, VaultSource::Env)))
        .or_else(|| from_git_config().map(|p| (p, VaultSource::GitConfig)));
    if let Some((path, source)) = configured {
        return open(&path, source);
    }
    if allow_current_repo {
        if let Some(root) = current_repo_with_rutter_data() {
            return open(&root, VaultSource::CurrentRepository);
        }
    }
    Err(VaultError::NotConfigured)
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
    let git_dir = git_dir_at(&root);
    Ok(Vault {
        root,
        git_dir,
        source,
    })
}

impl VaultSource {
    /// A short description for messages.
    pub fn describe(self) -> &'static str {
        match self {
            VaultSource::Flag => "--vault",
            VaultSource::Env => "LIBRARIAN_VAULT_PATH",
            VaultSource::GitConfig => "git config rutter.vault",
            VaultSource::CurrentRepository => "the current repository",
        }
    }
}

impl Vault {
    /// The tool's private state directory: `.git/rutter/` in a git vault, else
    /// `${XDG_DATA_HOME:-~/.local/share}/rutter/<id>/` (not created here).
    pub fn state_dir(&self) -> PathBuf {
        match &self.git_dir {
            Some(g) => g.join("rutter"),
            None => xdg_data_home().join("rutter").join(self.id()),
        }
    }

    /// The first 16 hex digits of sha256 of the canonical vault path.
    pub fn id(&self) -> String {
        let hex = crate::records::fingerprint::sha256_hex(self.root.as_os_str().as_encoded_bytes());
        hex[..16].to_string()
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
        let dir = root.join(target);
        return dir.join("HEAD").is_file().then_some(dir);
    }
    None
}

fn from_env() -> Option<PathBuf> {
    let raw = std::env::var(VAULT_ENV).ok()?;
    let raw = raw.trim();
    (!raw.is_empty()).then(|| expand_tilde(raw))
}

fn from_git_config() -> Option<PathBuf> {
    let config = git2::Config::open_default().ok()?;
    let value = config.get_string(VAULT_CONFIG_KEY).ok()?;
    let value = value.trim();
    (!value.is_empty()).then(|| expand_tilde(value))
}

/// `~` alone or a `~/` prefix expands to `$HOME`; nothing else does.
pub fn expand_tilde(raw: &str) -> PathBuf {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    match (raw, home) {
        ("~", Some(h)) => h,
        (r, Some(h)) if r.starts_with("~/") => h.join(&r[2..]),
        (r, _) => PathBuf::from(r),
    }
}

fn xdg_data_home() -> PathBuf {
    match std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
        Some(v) => PathBuf::from(v),
        None => expand_tilde("~/.local/share"),
    }
}

fn current_repo_with_rutter_data() -> Option<PathBuf> {
    let repo = git2::Repository::open_from_env().ok()?;
    let root = repo.workdir()?.to_path_buf();
    let has_ref = repo.find_reference(crate::store::RECORDS_REF).is_ok();
    (has_ref || root.join(OVERLAY_DIR).is_dir()).then_some(root)
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
    fn git_dir_only_at_the_root() {
        let t = tempfile::tempdir().unwrap();
        git2::Repository::init(t.path()).unwrap();
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
