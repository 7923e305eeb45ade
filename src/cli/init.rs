//! `git rutter init`: prepare a notes vault for git-rutter.

use super::{cannot_run, user_error, CommandError, CommandResult, Exit, Ui};
use crate::capture::dedupe::{DayFeed, DedupeCache};
use crate::clock;
use crate::recorder::Recorder;
use crate::setup;
use crate::store::gitenv;
use crate::vault::{Vault, VAULT_CONFIG_KEY};
use std::path::{Path, PathBuf};

/// Prepare a notes vault: its own git repository, the record ref, and the vault setting.
///
/// Makes the vault a git repository if it is not one (no commit is made on your branches),
/// creates refs/rutter/records with a first commit that adopts existing _librarian/ records
/// byte for byte, keeps the ref's reflog forever, and adds /_librarian/ to .git/info/exclude
/// unless you already track it. On a clone whose ref exists, missing record files are
/// restored from the ref; a local file that differs is never overwritten. Safe to re-run.
///
/// As `git init`, it prepares PATH (or --vault), else the current directory: never the vault
/// configured in LIBRARIAN_VAULT_PATH or rutter.vault. A folder inside another repository's work
/// tree is refused unless you pass --nested, because a repository nested there breaks `git add`
/// in the outer one; point it at the outer repository's root to use that repository instead.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The folder to prepare (default: --vault, else the current directory).
    pub path: Option<PathBuf>,
    /// Also record the vault in your global git config (rutter.vault), so hooks and the MCP
    /// server find it.
    #[arg(long)]
    pub global: bool,
    /// Make PATH a repository of its own even though it lies inside another repository's work
    /// tree.
    #[arg(long)]
    pub nested: bool,
}

/// Runs the command.
pub fn run(ui: &mut Ui, vault: Option<PathBuf>, args: Args) -> CommandResult {
    let explicit = args.path.is_some() || vault.is_some();
    if !explicit {
        if let Some(dir) = std::env::var_os("GIT_DIR") {
            return Err(user_error(format!(
                "GIT_DIR is set ({}), and `git rutter init` does not follow it: it would prepare the current folder instead; nothing was done.",
                crate::records::text::field_safe(&dir.to_string_lossy())
            ))
            .hinted("Name the folder to prepare: `git rutter init DIR`."));
        }
    }
    let target = match args.path.or(vault) {
        Some(p) => p,
        None => std::env::current_dir()?,
    };
    // A folder that can be no vault (a file, a bare repository) is refused before anything is
    // said about its notes, named as it was given (PATH, --vault or the current folder).
    if let Err(crate::vault::VaultError::Unusable { reason, .. }) =
        crate::vault::open(&target, crate::vault::VaultSource::Flag)
    {
        return Err(cannot_run(format!(
            "{} cannot be prepared as a vault: {reason}",
            crate::records::text::field_safe(&target.display().to_string())
        )));
    }
    if !explicit {
        if let Some(refusal) = configured_elsewhere(&target, args.global) {
            return Err(refusal);
        }
    }
    if let Some(refusal) = nested_refusal(&target, args.nested) {
        return Err(refusal);
    }
    let no_notes = !holds_markdown(&target);
    if no_notes {
        ui.warn(format_args!(
            "git-rutter: warning: {} holds no markdown notes (none found in it or the folders below it); it is prepared as a vault all the same. If your notes live elsewhere, run `git rutter init` there.",
            target.display()
        ));
    }
    let working =
        super::progress::Progress::start(ui, "preparing the vault (adopting existing records)");
    let (vault, r, feed) = match init_feeding_dedupe(&target) {
        Ok(done) => done,
        Err(InitFailed::Refused(why)) => {
            drop(working);
            return Err(user_error(format!("{why}.")));
        }
        Err(InitFailed::Other(e)) => return Err(e.into()),
    };
    drop(working);
    let held = Recorder::lock_vault(&vault, crate::lock::DEFAULT_WAIT)?;
    DedupeCache::warm_fed(&held, &vault, feed);
    drop(held);
    let root = vault.root.display();
    if r.created_repository {
        ui.print(&format!(
            "Initialised a git repository in {root} (no commit on your branches)."
        ))?;
    }
    if let Some((remote, tip)) = &r.clone.fetched {
        // The ref this line names is the one `init` just made from the fetched tip: one line,
        // never a "fetched" followed by an "already exists" that reads as a contradiction.
        ui.print(&format!(
            "Started refs/rutter/records at the records fetched from {remote} ({}).",
            crate::shortid::long(&tip)
        ))?;
        if !syncs(&vault) {
            ui.print(&format!(
                "Captures made here stay on this machine until it syncs with {remote}: run `git rutter sync --setup {remote}` (docs/sync.md)."
            ))?;
        }
    }
    if let Some(problem) = &r.clone.problem {
        ui.warn(format_args!("git-rutter: {problem}; starting a record of its own here. Run `git rutter init` again once the remote is reachable to start from its records instead."));
    }
    if r.created_ref {
        ui.print(&format!(
            "Created refs/rutter/records at {}, adopting {} existing record file(s).",
            crate::shortid::long(&r.tip),
            r.adopted.len()
        ))?;
    } else if r.clone.fetched.is_none() {
        ui.print(&format!(
            "refs/rutter/records already exists at {}.",
            crate::shortid::long(&r.tip)
        ))?;
    }
    for problem in &r.unwitnessed {
        ui.warn(format_args!("git-rutter: {problem}."));
    }
    for (path, why) in &r.skipped {
        ui.warn(format_args!("git-rutter: skipped {path}: {why}"));
    }
    for path in &r.materialised {
        ui.print(&format!("Restored {path} from refs/rutter/records."))?;
    }
    if let Some(tip) = &r.clone.seeded {
        ui.print(&format!(
            "The reflog and the tip witness log start at {} (this clone's starting point), so `git rutter verify` can check every move from here.",
            crate::shortid::long(&tip)
        ))?;
    }
    for path in &r.differing {
        ui.warn(format_args!("git-rutter: {path} differs from refs/rutter/records; left untouched (see `git rutter verify`)."));
    }
    if r.excluded {
        ui.print("_librarian/ is listed in .git/info/exclude; your branches never see it.")?;
    }
    if args.global {
        gitenv::set_global_config(VAULT_CONFIG_KEY, &vault.root.to_string_lossy())?;
        ui.print(&format!(
            "Set git config --global {VAULT_CONFIG_KEY} {root}."
        ))?;
        if let Some(env) = crate::vault::from_env()
            .filter(|e| e.canonicalize().ok().as_deref() != Some(vault.root.as_path()))
        {
            ui.warn(format_args!(
                "git-rutter: warning: LIBRARIAN_VAULT_PATH is set to {} in this shell and wins over rutter.vault: hooks and MCP servers started with it keep using that. Unset it (and where your shell profile sets it), or point it here.",
                crate::records::text::one_line_safe(&env.display().to_string())
            ));
        }
        if !any_client_hooked() {
            ui.print("Next: `git rutter setup` registers git-rutter with the AI clients on this machine (`--dry-run` shows what it would write first).")?;
        }
    } else if let Some(note) = hooks_use_another_vault(&vault.root).filter(|_| !no_notes) {
        // Never suggested for a folder with no notes (the TypeScript user's `init` in `~`).
        ui.warn(note);
    }
    Ok(Exit::Clean)
}

/// Whether an AI client on this machine already runs git-rutter's Stop hook (as `status`
/// reads the clients' files); `true` when that cannot be told (no HOME), so nothing is
/// suggested then.
fn any_client_hooked() -> bool {
    let Ok(ctx) = super::install_hook::context(None) else {
        return true;
    };
    crate::status::clients::inspect(&ctx)
        .iter()
        .any(|c| c.hook.state == "registered")
}

/// Whether the vault has a sync remote set (`rutter.syncRemote`).
fn syncs(vault: &Vault) -> bool {
    crate::store::Store::open(vault)
        .ok()
        .and_then(|store| crate::recall::sync_state::remote(&store))
        .is_some()
}

/// The refusal to prepare the current folder when no PATH was given and the configured vault
/// (`LIBRARIAN_VAULT_PATH`, `rutter.vault`) is another folder: a TypeScript user who runs
/// `git rutter init` in `~` with their vault exported means that vault. A folder that is a vault
/// already (re-running is safe) is never refused. The hint names both ways on, each a command
/// to paste (paths quoted as shell words); with `--global`, the one that moves the hooks and the
/// MCP server to this folder keeps it.
fn configured_elsewhere(here: &Path, global: bool) -> Option<CommandError> {
    let configured = crate::vault::resolve(None, false).ok()?;
    let here = here.canonicalize().ok()?;
    // A vault already: it has the record ref, or record files of the TypeScript version.
    let is_vault = crate::vault::open(&here, crate::vault::VaultSource::Flag).is_ok_and(|v| {
        v.root == configured.root
            || v.root.join(crate::vault::OVERLAY_DIR).is_dir()
            || crate::store::Store::open(&v).is_ok_and(|s| s.tip().is_ok_and(|t| t.is_some()))
    });
    if is_vault || here.starts_with(&configured.root) {
        return None;
    }
    let that = crate::records::text::one_line_safe(&configured.root.display().to_string());
    let refusal = user_error(format!(
        "{} names the vault {that}, not this folder ({}); nothing was changed.",
        configured.source.describe(),
        crate::records::text::one_line_safe(&here.display().to_string()),
    ));
    let quoted = crate::argv::quote(&that);
    let this = match global {
        true => "to make this folder your vault instead (hooks and the MCP server move to it), run `git rutter init . --global`",
        false => "to make this folder a vault of its own, run `git rutter init .` (add `--global` to move hooks and the MCP server to it)",
    };
    Some(refusal.hinted_below(format!(
        "To prepare that vault, run `git rutter init {quoted}`; {this}."
    )))
}

/// Whether `dir` or a folder up to three levels below it (hidden folders, `node_modules` and
/// `_librarian` aside) holds a markdown note; the walk stops at the first one.
fn holds_markdown(dir: &Path) -> bool {
    fn walk(dir: &Path, depth: usize, budget: &mut usize) -> bool {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return false;
        };
        for e in entries.flatten() {
            if *budget == 0 {
                return true; // A big tree: do not warn on a guess.
            }
            *budget -= 1;
            let name = e.file_name();
            let name = name.to_string_lossy();
            let Ok(kind) = e.file_type() else { continue };
            if kind.is_file() && name.to_ascii_lowercase().ends_with(".md") {
                return true;
            }
            let skipped = name.starts_with('.') || name == "node_modules" || name == "_librarian";
            if kind.is_dir() && !skipped && depth > 0 && walk(&e.path(), depth - 1, budget) {
                return true;
            }
        }
        false
    }
    walk(dir, 3, &mut 20_000)
}

/// Why `init` stopped: the records it would start from were refused (exit 1), or anything
/// else.
enum InitFailed {
    Refused(Box<setup::InitError>),
    Other(setup::InitError),
}

/// Prepares the vault, parsing each day file the adoption reads for the dedupe cache as it is
/// read (each day file is read once). On this thread, not a second one: what the parse
/// allocates is then freed into the allocator's pool that the cache's own keys reuse (with a
/// parser thread `init`'s peak on the ten-year vault was 51 MB instead of 46 MB, for no wall
/// time gained on the loaded 2-core machine).
fn init_feeding_dedupe(target: &Path) -> Result<(Vault, setup::InitReport, DayFeed), InitFailed> {
    let mut feed = DayFeed::default();
    let (vault, report) = setup::init_seeing(target, clock::now(), &mut |path, bytes| {
        feed.ingest(path, &bytes)
    })
    .map_err(|e| match e {
        e if e.is_refusal() => InitFailed::Refused(Box::new(e)),
        e => InitFailed::Other(e),
    })?;
    Ok((vault, report, feed))
}

/// The refusal to create a repository inside another repository's work tree, unless `nested`.
/// A folder that already is a repository of its own is never refused (nothing new is nested).
fn nested_refusal(target: &Path, nested: bool) -> Option<CommandError> {
    if nested || target.join(".git").exists() {
        return None;
    }
    let outer = crate::vault::enclosing_work_tree(target)?;
    let refusal = user_error(format!(
        "{} is inside the work tree of the git repository {outer}. A repository created here would be nested in it, and `git add` in {outer} would then fail on it.",
        target.display(),
        outer = outer.display(),
    ));
    Some(refusal.hinted_below(format!(
        "To keep the records in that repository, run `git rutter init {outer}`; to make this folder a repository of its own anyway, run `git rutter init --nested {}`.",
        target.display(),
        outer = outer.display(),
    )))
}

/// A note when hooks and the MCP server (which never look at the current directory) would use
/// another vault than the one just prepared, or none.
fn hooks_use_another_vault(root: &Path) -> Option<String> {
    const MAKE_IT_THIS_ONE: &str = "run `git rutter init --global` here to make them use this one";
    let configured = match crate::vault::resolve(None, false) {
        Ok(configured) => configured,
        Err(crate::vault::VaultError::NotConfigured) => {
            return Some(format!(
                "git-rutter: note: hooks and the MCP server find no vault yet (neither LIBRARIAN_VAULT_PATH nor git config --global rutter.vault is set), so nothing is captured; {MAKE_IT_THIS_ONE}."
            ))
        }
        Err(e) => return Some(format!("git-rutter: note: hooks and the MCP server cannot use their vault: {e}; {MAKE_IT_THIS_ONE}.")),
    };
    (configured.root != root).then(|| {
        format!(
            "git-rutter: note: hooks and the MCP server use the vault {} (from {}); {MAKE_IT_THIS_ONE}.",
            configured.root.display(),
            configured.source.describe()
        )
    })
}
