//! `git rutter init`: prepare a notes vault for git-rutter.

use crate::clock;
use crate::store::setup;
use crate::vault::VAULT_CONFIG_KEY;
use std::path::PathBuf;

/// Prepare a notes vault: its own git repository, the record ref, and the vault setting.
///
/// Makes the vault a git repository if it is not one (no commit is made on your branches),
/// creates refs/rutter/records with a first commit that adopts existing _librarian/ records
/// byte for byte, keeps the ref's reflog forever, and adds /_librarian/ to .git/info/exclude
/// unless you already track it. On a clone whose ref exists, missing record files are
/// restored from the ref; a local file that differs is never overwritten. Safe to re-run.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The vault to initialise (default: --vault, LIBRARIAN_VAULT_PATH, git config
    /// rutter.vault, else the current directory).
    pub path: Option<PathBuf>,
    /// Also record the vault in your global git config (rutter.vault), so hooks and the MCP
    /// server find it.
    #[arg(long)]
    pub global: bool,
}

/// Runs the command.
pub fn run(vault: Option<PathBuf>, args: Args) -> anyhow::Result<i32> {
    let target = match args.path.or(vault) {
        Some(p) => p,
        None => match crate::vault::resolve(None, false) {
            Ok(v) => v.root,
            Err(_) => std::env::current_dir()?,
        },
    };
    let (vault, r) = setup::init(&target, clock::now())?;
    crate::capture::dedupe::DedupeCache::warm(&vault)?;
    let root = vault.root.display();
    if r.created_repository {
        super::print(&format!(
            "Initialised a git repository in {root} (no commit on your branches)."
        ))?;
    }
    if r.created_ref {
        super::print(&format!(
            "Created refs/rutter/records at {}, adopting {} existing record file(s).",
            &r.tip[..12],
            r.adopted.len()
        ))?;
    } else {
        super::print(&format!(
            "refs/rutter/records already exists at {}.",
            &r.tip[..12]
        ))?;
    }
    for (path, why) in &r.skipped {
        eprintln!("git-rutter: skipped {path}: {why}");
    }
    for path in &r.materialised {
        super::print(&format!("Restored {path} from refs/rutter/records."))?;
    }
    for path in &r.differing {
        eprintln!("git-rutter: {path} differs from refs/rutter/records; left untouched (see `git rutter verify`).");
    }
    if r.excluded {
        super::print("_librarian/ is listed in .git/info/exclude; your branches never see it.")?;
    }
    if args.global {
        let mut config = git2::Config::open_default()?.open_level(git2::ConfigLevel::Global)?;
        config.set_str(VAULT_CONFIG_KEY, &vault.root.to_string_lossy())?;
        super::print(&format!(
            "Set git config --global {VAULT_CONFIG_KEY} {root}."
        ))?;
    }
    Ok(super::EXIT_OK)
}
