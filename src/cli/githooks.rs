//! `git rutter install-git-hooks` and the hidden `git-rutter hook`: git hooks in the vault
//! repository that refuse the two git-CLI ways of losing records (DESIGN §6, spec/git-hooks.md).
//!
//! This file holds the arguments, the output of `install-git-hooks` (one line per hook, through
//! the command's `Ui`) and `run_hook`; the hook files themselves (the managed block, where the
//! files are, how they are edited) are `clients::githooks`. The block calls this binary by
//! absolute path, filters in shell so unrelated commits and ref updates never start a process,
//! and fails open when the binary is gone. The binary side (`git-rutter hook <name>`) exits 1
//! only for a real refusal; any error of its own is a warning and exit 0.

use crate::clients::githooks::{block_for, install_one, uninstall_one, HookPlace, TEMPLATES};
use crate::clients::guard;
use crate::store::Store;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

/// Environment variable that lets a rewind or deletion of the record ref through.
pub(crate) use guard::ALLOW_REWIND_ENV;

/// Install the git hooks that guard your records against git commands.
///
/// Adds a block to two hooks of the vault repository (in core.hooksPath when set, else
/// .git/hooks): pre-commit refuses a commit on your branches that changes record lines already
/// committed to refs/rutter/records (appending is fine), and reference-transaction refuses a
/// git command that rewinds or deletes refs/rutter/records. Your own hook content is kept and
/// still runs after the block; running the command again changes nothing. The hooks call this
/// binary by its absolute path: run the command again after moving it. Override once with
/// `git commit --no-verify` or RUTTER_ALLOW_REWIND=1. Tools built on libgit2 (git-rutter itself
/// included) do not run hooks; `git rutter verify` is the proof, the hooks are a seatbelt.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Remove the git-rutter blocks instead (a hook file left with only its `#!` line is deleted).
    #[arg(long)]
    pub uninstall: bool,
}

/// Run by the installed git hooks; not for interactive use.
#[derive(Debug, clap::Args)]
pub struct HookArgs {
    /// The hook that is running.
    #[arg(value_enum)]
    pub hook: HookName,
    /// The arguments git gave the hook (reference-transaction: the state).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub rest: Vec<String>,
}

/// The hooks the binary answers for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HookName {
    PreCommit,
    ReferenceTransaction,
}

/// Runs `install-git-hooks`.
pub fn run(ui: &mut super::Ui, vault: Option<PathBuf>, args: Args) -> super::CommandResult {
    let vault = super::interactive_vault(ui, vault.as_deref())?;
    let store = Store::open(&vault)?;
    let place = HookPlace::resolve(&store.hook_dirs()?)?;
    let bin = if args.uninstall {
        String::new()
    } else {
        binary_path()?
    };
    let mut refused = false;
    for (name, template) in TEMPLATES {
        let done = if args.uninstall {
            uninstall_one(&place, name)
        } else {
            install_one(&place, name, &block_for(template, &bin))
        };
        match done {
            Ok(what) => ui.print(&format!("{name}: {what}"))?,
            Err(why) => {
                ui.warn(format_args!("git-rutter: {name}: {why}"));
                refused = true;
            }
        }
    }
    Ok(super::Exit::findings_if(refused))
}

/// The canonical path of this binary, shell-quoted for the block.
fn binary_path() -> anyhow::Result<String> {
    let exe = std::env::current_exe()?.canonicalize()?;
    let bytes = exe.as_os_str().as_bytes();
    anyhow::ensure!(
        !bytes.contains(&b'\n'),
        "the path of this binary contains a line break; install git-rutter elsewhere"
    );
    Ok(crate::argv::quote_always(&String::from_utf8_lossy(bytes)))
}

/// The word after `hook pre-commit` with which the block says that standard input holds the
/// staged changes, as `git diff --cached --no-renames --name-status` prints them: its first
/// [`STAGED_MAX`] lines, then, when there were more, [`CUT`] and the staged record files
/// (`-- _librarian`). A block installed before calls `hook pre-commit` alone (only when
/// `_librarian/` is staged): the record check, as it always did.
const STAGED: &str = "staged";
/// The line the block puts in place of git's 501st (`sed -e '501{s/.*/git-rutter: cut/;q;}'`).
const CUT: &str = "git-rutter: cut";

/// How many cited notes the pre-commit line names; the rest are counted.
const NAMED_NOTES: usize = 3;

/// The most staged changes the block passes on before it cuts git's list: the line then says
/// "at least".
const STAGED_MAX: usize = 500;

/// `hook pre-commit staged`: the record check when the commit stages something under
/// `_librarian/`, then, when it is allowed and changes or deletes notes that recorded decisions
/// cited, one line saying which. That line never refuses, and whatever stops it (no index yet,
/// an unreadable one) leaves the commit alone and says nothing.
fn pre_commit_staged() -> anyhow::Result<guard::Verdict> {
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input)?;
    let (head, tail) = match input.split_once(&format!("\n{CUT}\n")) {
        Some((head, tail)) => (head, Some(tail)),
        None => (input.as_str(), None),
    };
    let mut staged = crate::store::gitcli::name_status(head);
    let beyond = crate::store::gitcli::name_status(tail.unwrap_or(""));
    let overlay = crate::records::paths::OVERLAY_DIR;
    let under_records = |p: &str| p.strip_prefix(overlay).is_some_and(|r| r.starts_with('/'));
    let verdict = match staged.iter().chain(&beyond).any(|(_, p)| under_records(p)) {
        true => guard::pre_commit_here()?,
        false => guard::Verdict::Allow,
    };
    let cut = tail.is_some() || staged.len() > STAGED_MAX;
    staged.truncate(STAGED_MAX);
    let notes: Vec<String> = staged
        .into_iter()
        .filter(|(status, p)| {
            matches!(status, 'M' | 'D' | 'T')
                && p.to_ascii_lowercase().ends_with(".md")
                && !under_records(p)
        })
        .map(|(_, p)| p)
        .collect();
    if notes.is_empty() || matches!(verdict, guard::Verdict::Refuse(_)) {
        return Ok(verdict);
    }
    let Some(line) = cited_line(&notes, cut) else {
        return Ok(verdict);
    };
    Ok(match verdict {
        guard::Verdict::Warn(w) => guard::Verdict::Warn(format!("{w}{line}")),
        _ => guard::Verdict::Warn(line),
    })
}

/// The line for the staged `notes` that recorded decisions cited, if any (the vault is the
/// repository git runs the hook in, at the top of its work tree); `cut`: git's list was cut.
fn cited_line(notes: &[String], cut: bool) -> Option<String> {
    let here = std::env::current_dir().ok()?;
    let vault = crate::vault::open(&here, crate::vault::VaultSource::CurrentRepository).ok()?;
    line_for(&crate::recall::cited::among(&vault, notes).ok()??, cut)
}

/// One line naming the `cited` notes a commit changes (the first [`NAMED_NOTES`], then how
/// many more), each made safe for one line of a terminal; `None` for none. `cut`: only the
/// first [`STAGED_MAX`] staged changes were read.
fn line_for(cited: &[String], cut: bool) -> Option<String> {
    let safe = |p: &String| crate::records::text::one_line_safe(p);
    Some(match (cited, cut) {
        ([], _) => return None,
        ([one], false) => format!(
            "git-rutter: this commit changes {}, which recorded decisions cited (`git rutter cited-by {}` lists them).\n",
            safe(one),
            safe(&crate::argv::quote(one))
        ),
        (many, _) => {
            let named: Vec<String> = many.iter().take(NAMED_NOTES).map(safe).collect();
            let mut list = named.join(", ");
            if many.len() > NAMED_NOTES {
                list.push_str(&format!(" and {} more", many.len() - NAMED_NOTES));
            }
            let (least, only) = match cut {
                true => ("at least ", format!(" (only the first {STAGED_MAX} staged changes were read)")),
                false => ("", String::new()),
            };
            let notes = if many.len() == 1 { "note" } else { "notes" };
            format!(
                "git-rutter: this commit changes {least}{} {notes} that recorded decisions cited{only}: {list} (`git rutter cited-by PATH` lists them).\n",
                many.len()
            )
        }
    })
}

/// Runs `git-rutter hook <name>`: 1 for a refusal, 0 otherwise (errors fail open).
pub fn run_hook(args: HookArgs) -> i32 {
    let name = args.hook;
    let label = match name {
        HookName::PreCommit => "pre-commit",
        HookName::ReferenceTransaction => "reference-transaction",
    };
    let state = args
        .rest
        .first()
        .cloned()
        .unwrap_or_else(|| "prepared".to_string());
    let outcome = std::panic::catch_unwind(move || -> anyhow::Result<guard::Verdict> {
        // The repository git's environment names (GIT_INDEX_FILE included, which `git commit
        // -a` and `git commit PATH` set).
        Ok(match name {
            HookName::PreCommit if state == STAGED => pre_commit_staged()?,
            HookName::PreCommit => guard::pre_commit_here()?,
            HookName::ReferenceTransaction if state != "prepared" => guard::Verdict::Allow,
            HookName::ReferenceTransaction => {
                let mut input = String::new();
                std::io::stdin().read_to_string(&mut input)?;
                let allow = std::env::var(ALLOW_REWIND_ENV).as_deref() == Ok("1");
                guard::reference_transaction_here(&input, allow)?
            }
        })
    });
    match outcome {
        Ok(Ok(guard::Verdict::Allow)) => super::EXIT_OK,
        Ok(Ok(guard::Verdict::Warn(message))) => {
            eprint!("{message}");
            super::EXIT_OK
        }
        Ok(Ok(guard::Verdict::Refuse(message))) => {
            eprint!("{message}");
            super::EXIT_FINDING
        }
        Ok(Err(e)) => {
            eprintln!("git-rutter: the {label} hook could not check ({e:#}); allowed.");
            super::EXIT_OK
        }
        Err(_) => {
            eprintln!("git-rutter: the {label} hook failed; allowed.");
            super::EXIT_OK
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pre_commit_line_is_one_line_naming_at_most_three_notes() {
        let notes = |n: usize| -> Vec<String> { (1..=n).map(|i| format!("N/{i}.md")).collect() };
        assert_eq!(line_for(&[], false), None);
        assert_eq!(
            line_for(&["Notes/my note.md".to_string()], false).unwrap(),
            "git-rutter: this commit changes Notes/my note.md, which recorded decisions cited (`git rutter cited-by 'Notes/my note.md'` lists them).\n"
        );
        assert_eq!(
            line_for(&notes(5), false).unwrap(),
            "git-rutter: this commit changes 5 notes that recorded decisions cited: N/1.md, N/2.md, N/3.md and 2 more (`git rutter cited-by PATH` lists them).\n"
        );
        assert_eq!(
            line_for(&notes(1), true).unwrap(),
            "git-rutter: this commit changes at least 1 note that recorded decisions cited (only the first 500 staged changes were read): N/1.md (`git rutter cited-by PATH` lists them).\n"
        );
        let hostile = line_for(&["a\nb\u{1b}[31m.md".to_string()], false).unwrap();
        assert_eq!(hostile.lines().count(), 1, "{hostile}");
        assert!(!hostile.contains('\u{1b}'), "{hostile}");
    }
}
