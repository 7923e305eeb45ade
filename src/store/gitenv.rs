//! git's own settings and the repositories around the user, read with libgit2 for the parts of
//! the tool that are not the record store: `rutter.vault` and `core.pager` as git resolves them,
//! the repository the current directory lies in (`GIT_DIR` honoured), the work tree enclosing a
//! folder, and the demo's throwaway repository. Everything libgit2 outside the record ref goes
//! through here, so `git2` is used only inside `store`.

use super::{StoreError, RECORDS_REF};
use git2::{Config, ConfigLevel, IndexAddOption, Repository, Signature};
use std::path::{Path, PathBuf};

/// `key` from git's default configuration (system, global, XDG), as `git config --get` run
/// outside any repository would print it; `None` when unset or unreadable.
pub(crate) fn default_config_string(key: &str) -> Option<String> {
    super::cmdline::string(Config::open_default().ok().as_ref(), key)
}

/// `key` as git in the current directory resolves it: the repository's configuration (all
/// levels) when the directory lies in one, else the default configuration.
pub(crate) fn config_string_here(key: &str) -> Option<String> {
    let config = match Repository::open_from_env() {
        Ok(repo) => repo.config().ok(),
        Err(_) => Config::open_default().ok(),
    };
    super::cmdline::string(config.as_ref(), key)
}

/// Sets `key` in the user's global configuration (`git config --global`).
pub fn set_global_config(key: &str, value: &str) -> Result<(), StoreError> {
    let mut config = Config::open_default()?.open_level(ConfigLevel::Global)?;
    config.set_str(key, value)?;
    Ok(())
}

/// The repository around the current directory, as git finds it.
#[derive(Debug, Clone)]
pub(crate) struct RepoHere {
    /// Its work tree, as libgit2 reports it (not canonical).
    pub workdir: PathBuf,
    /// It has `refs/rutter/records`.
    pub has_records_ref: bool,
    /// `local_key` from its own (local) configuration.
    pub local_value: Option<String>,
}

/// The repository around the current directory (`GIT_DIR`, upward search) when it has a work
/// tree, with `local_key` from its local configuration.
pub(crate) fn repo_here(local_key: &str) -> Option<RepoHere> {
    let repo = Repository::open_from_env().ok()?;
    let workdir = repo.workdir()?.to_path_buf();
    // `git -c` wins over every level, the local one too.
    let local_value = match super::cmdline::override_of(local_key) {
        Some(v) => v,
        None => repo
            .config()
            .and_then(|c| c.open_level(ConfigLevel::Local))
            .and_then(|c| c.get_string(local_key))
            .ok(),
    };
    let has_records_ref = repo.find_reference(RECORDS_REF).is_ok();
    Some(RepoHere {
        workdir,
        has_records_ref,
        local_value,
    })
}

/// The work tree of the repository git finds from `dir` upward, if it has one.
pub(crate) fn work_tree_from(dir: &Path) -> Option<PathBuf> {
    let repo = Repository::discover(dir).ok()?;
    repo.workdir().map(Path::to_path_buf)
}

/// Makes `path` a git repository (`git init`); an existing one is left as it is.
pub fn init_repo(path: &Path) -> Result<(), StoreError> {
    Repository::init(path)?;
    Ok(())
}

/// Commits the files under `folders` (added, changed and deleted ones) on the current branch of
/// the repository at `path`, as `name <email>`.
pub(crate) fn commit_all(
    path: &Path,
    folders: &[&str],
    (name, email): (&str, &str),
    message: &str,
) -> Result<(), StoreError> {
    let repo = Repository::open(path)?;
    let mut index = repo.index()?;
    index.add_all(folders, IndexAddOption::DEFAULT, None)?;
    index.update_all(["*"], None)?;
    index.write()?;
    let tree = repo.find_tree(index.write_tree()?)?;
    let sig = Signature::now(name, email)?;
    let parent = repo.head().ok().and_then(|h| h.peel_to_commit().ok());
    let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
    repo.commit(Some("HEAD"), &sig, &sig, message, &tree, &parents)?;
    Ok(())
}

/// `<short id> <subject>` of every commit reachable from `reference`, newest first.
pub fn one_line_log(path: &Path, reference: &str) -> Result<Vec<String>, StoreError> {
    let repo = Repository::open(path)?;
    let mut walk = repo.revwalk()?;
    walk.push_ref(reference)?;
    let mut out = Vec::new();
    for oid in walk {
        let c = repo.find_commit(oid?)?;
        out.push(format!(
            "{} {}",
            &crate::shortid::short(&c.id()),
            c.summary().ok().flatten().unwrap_or("")
        ));
    }
    Ok(out)
}

/// Where a repository keeps its hooks, and the folders that count as inside it.
#[derive(Debug, Clone)]
pub struct HookDirs {
    /// The work tree (`None` for a bare repository).
    pub workdir: Option<PathBuf>,
    /// `core.hooksPath` when set to something non-empty.
    pub hooks_path: Option<PathBuf>,
    /// The repository's git folder (a linked worktree's own).
    pub git_dir: PathBuf,
    /// The folder shared by every worktree (holds `hooks/`).
    pub common_dir: PathBuf,
}

impl super::Store {
    /// This vault's hook folders as git resolves them.
    pub fn hook_dirs(&self) -> Result<HookDirs, StoreError> {
        let hooks_path = match super::cmdline::override_of("core.hooksPath") {
            // `git -c core.hooksPath=…` (a `~/` in it as git expands it).
            Some(Some(p)) if !p.is_empty() => Some(crate::fsx::expand_tilde(&p)),
            Some(_) => None,
            None => match self.repo.config()?.get_path("core.hooksPath") {
                Ok(p) if !p.as_os_str().is_empty() => Some(p),
                Ok(_) => None,
                Err(e) if e.code() == git2::ErrorCode::NotFound => None,
                Err(e) => return Err(e.into()),
            },
        };
        Ok(HookDirs {
            workdir: self.repo.workdir().map(Path::to_path_buf),
            hooks_path,
            git_dir: self.repo.path().to_path_buf(),
            common_dir: self.repo.commondir().to_path_buf(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_demo_repository_commits_and_logs() {
        let t = tempfile::tempdir().unwrap();
        init_repo(t.path()).unwrap();
        std::fs::create_dir_all(t.path().join("Notes")).unwrap();
        std::fs::write(t.path().join("Notes/a.md"), "a\n").unwrap();
        commit_all(t.path(), &["Notes"], ("n", "n@x.invalid"), "first").unwrap();
        std::fs::remove_file(t.path().join("Notes/a.md")).unwrap();
        commit_all(t.path(), &["Notes"], ("n", "n@x.invalid"), "second").unwrap();
        let log = one_line_log(t.path(), "HEAD").unwrap();
        let subjects: Vec<&str> = log.iter().map(|l| &l[8..]).collect();
        assert_eq!(subjects, ["second", "first"]);
        let inner = t.path().join("Notes");
        assert_eq!(
            work_tree_from(&inner).map(|p| p.canonicalize().unwrap()),
            Some(t.path().canonicalize().unwrap())
        );
    }
}
