//! `git rutter install-git-hooks` and the hidden `git-rutter hook`: git hooks in the vault
//! repository that refuse the two git-CLI ways of losing records (DESIGN §6, spec/git-hooks.md).
//!
//! Each hook gets one block between START/END marker lines (git-branchless's habit), so the
//! user's own hook content survives and runs after ours. The block text is `git-hooks/<name>`,
//! compiled in; it calls this binary by absolute path, filters in shell so unrelated commits and
//! ref updates never start a process, and fails open when the binary is gone. The binary side
//! (`git-rutter hook <name>`) exits 1 only for a real refusal; any error of its own is a
//! warning and exit 0.

use crate::store::gitenv::HookDirs;
use crate::store::{guard, Store};
use crate::textblock::{self, lines};
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

/// The line that opens the managed block in a hook file.
pub const START_MARKER: &str =
    "# >>> git-rutter START (managed by git rutter install-git-hooks; do not edit) >>>";
/// The line that closes the managed block.
pub const END_MARKER: &str = "# <<< git-rutter END <<<";
/// Environment variable that lets a rewind or deletion of the record ref through.
pub use crate::store::guard::ALLOW_REWIND_ENV;
/// Stands for the shell-quoted binary path in the shipped templates.
const BIN_PLACEHOLDER: &str = "@GIT_RUTTER_BIN@";
/// The shipped hook templates, as installed (placeholder aside).
pub const TEMPLATES: [(&str, &str); 2] = [
    ("pre-commit", include_str!("../../git-hooks/pre-commit")),
    (
        "reference-transaction",
        include_str!("../../git-hooks/reference-transaction"),
    ),
];
/// Interpreters that can run the block (a file without `#!` is run by git with `/bin/sh`).
const SHELLS: [&str; 7] = ["sh", "bash", "dash", "ash", "ksh", "mksh", "zsh"];

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

// START install

/// Where hook files may be written: the hooks directory and the repository's own directories.
struct HookPlace {
    dir: PathBuf,
    workdir: PathBuf,
    inside: Vec<PathBuf>,
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

impl HookPlace {
    /// `core.hooksPath` (relative to the work tree) when set, else `<common git dir>/hooks`;
    /// refused when it lies outside the repository.
    fn resolve(repo: &HookDirs) -> anyhow::Result<HookPlace> {
        let workdir = repo
            .workdir
            .as_deref()
            .ok_or_else(|| anyhow::anyhow!("the vault repository has no work tree"))?
            .canonicalize()?;
        let (dir, source) = match &repo.hooks_path {
            Some(p) => (workdir.join(p), "core.hooksPath"),
            None => (
                repo.common_dir.join("hooks"),
                "the repository's hooks directory",
            ),
        };
        let mut inside = vec![workdir.clone()];
        for d in [&repo.git_dir, &repo.common_dir] {
            inside.push(d.canonicalize()?);
        }
        let dir = resolve_missing(&dir)?;
        anyhow::ensure!(
            inside.iter().any(|root| dir.starts_with(root)),
            "the hooks directory {} ({source}) lies outside this repository, and git-rutter only \
             edits hook files inside it. Copy the blocks from git-hooks/ by hand (see \
             docs/git-hooks.md), or point core.hooksPath inside the repository.",
            dir.display()
        );
        Ok(HookPlace {
            dir,
            workdir,
            inside,
        })
    }

    /// A path as shown to the user: relative to the work tree when inside it.
    fn show(&self, p: &Path) -> String {
        p.strip_prefix(&self.workdir)
            .unwrap_or(p)
            .display()
            .to_string()
    }
}

/// Canonicalises the longest existing prefix of `p` and keeps the missing rest as it is.
fn resolve_missing(p: &Path) -> anyhow::Result<PathBuf> {
    let mut base = p.to_path_buf();
    let mut rest = Vec::new();
    while std::fs::symlink_metadata(&base).is_err() {
        let Some(name) = base.file_name().map(|n| n.to_os_string()) else {
            anyhow::bail!("cannot resolve {}", p.display());
        };
        rest.push(name);
        base.pop();
    }
    let mut out = base.canonicalize()?;
    for name in rest.iter().rev() {
        out.push(name);
    }
    anyhow::ensure!(
        !out.components().any(|c| c == Component::ParentDir),
        "cannot resolve {}",
        p.display()
    );
    Ok(out)
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

/// The file to write for a hook: the hook path itself, or the target of a symlink that stays
/// inside the repository. `Err` says why the hook is left alone.
fn hook_file(place: &HookPlace, name: &str) -> Result<PathBuf, String> {
    let path = place.dir.join(name);
    let Ok(meta) = std::fs::symlink_metadata(&path) else {
        return Ok(path);
    };
    if !meta.file_type().is_symlink() {
        return match meta.is_file() {
            true => Ok(path),
            false => Err(format!(
                "{} is not a regular file; left alone.",
                place.show(&path)
            )),
        };
    }
    let target = path.canonicalize().map_err(|e| {
        format!(
            "{} is a symlink whose target cannot be read ({e}); fix or remove it, then run again.",
            place.show(&path)
        )
    })?;
    if !place.inside.iter().any(|root| target.starts_with(root)) {
        return Err(format!(
            "{} is a symlink to {}, outside this repository; git-rutter does not edit hooks \
             shared with other repositories. Add the block by hand (docs/git-hooks.md).",
            place.show(&path),
            target.display()
        ));
    }
    match target.is_file() {
        true => Ok(target),
        false => Err(format!(
            "{} does not lead to a regular file; left alone.",
            place.show(&path)
        )),
    }
}

/// Installs or refreshes the block in one hook; returns what was done.
fn install_one(place: &HookPlace, name: &str, block: &[u8]) -> Result<String, String> {
    let file = hook_file(place, name)?;
    let shown = place.show(&place.dir.join(name));
    let Some((old, mode)) = read_hook(&file)? else {
        let mut text = b"#!/bin/sh\n".to_vec();
        text.extend_from_slice(block);
        // `install-git-hooks` writes the hook files it names, by path as git does (DESIGN §2.2:
        // install commands write the files they name); not rutter's state or records.
        std::fs::create_dir_all(&place.dir).map_err(|e| e.to_string())?;
        write_hook(&file, &text, 0o755)?;
        return Ok(format!("created {shown}"));
    };
    if mode & 0o111 == 0 {
        return Err(format!(
            "{shown} exists but is not executable, so git ignores it; adding the block would \
             start running it. Make it executable (chmod +x) or remove it, then run again."
        ));
    }
    check_shell(&old).map_err(|why| {
        format!("{shown} {why}; call the binary from it yourself (docs/git-hooks.md).")
    })?;
    let had = find_block(&old).map_err(|why| format!("{shown}: {why}"))?;
    let new = with_block(&old, block).map_err(|why| format!("{shown}: {why}"))?;
    if new == old {
        return Ok(format!("{shown} is up to date"));
    }
    write_hook(&file, &new, mode)?;
    Ok(match had {
        Some(_) => format!("updated the git-rutter block in {shown}"),
        None => format!("added the git-rutter block to {shown}, before your own content"),
    })
}

/// Removes the block from one hook; returns what was done.
fn uninstall_one(place: &HookPlace, name: &str) -> Result<String, String> {
    let path = place.dir.join(name);
    let file = hook_file(place, name)?;
    let shown = place.show(&path);
    let Some((old, mode)) = read_hook(&file)? else {
        return Ok(format!("no {shown}; nothing to remove"));
    };
    let Some(new) = without_block(&old).map_err(|why| format!("{shown}: {why}"))? else {
        return Ok(format!("no git-rutter block in {shown}; left as it is"));
    };
    if only_shebang(&new) && file == path {
        std::fs::remove_file(&file).map_err(|e| format!("cannot remove {shown}: {e}"))?;
        return Ok(format!(
            "removed {shown} (it held only the git-rutter block)"
        ));
    }
    write_hook(&file, &new, mode)?;
    Ok(format!("removed the git-rutter block from {shown}"))
}

/// The bytes and permission bits of a hook file, `None` when it does not exist.
fn read_hook(file: &Path) -> Result<Option<(Vec<u8>, u32)>, String> {
    match std::fs::read(file) {
        Ok(bytes) => {
            let meta = std::fs::metadata(file).map_err(|e| e.to_string())?;
            Ok(Some((bytes, meta.permissions().mode() & 0o7777)))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("cannot read {}: {e}", file.display())),
    }
}

/// Replaces `file` atomically (a temporary file beside it, renamed over it).
fn write_hook(file: &Path, bytes: &[u8], mode: u32) -> Result<(), String> {
    use std::io::Write;
    let fail = |e: &dyn std::fmt::Display| format!("cannot write {}: {e}", file.display());
    let dir = file.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| fail(&e))?;
    tmp.write_all(bytes).map_err(|e| fail(&e))?;
    tmp.as_file()
        .set_permissions(std::fs::Permissions::from_mode(mode))
        .map_err(|e| fail(&e))?;
    tmp.persist(file).map_err(|e| fail(&e.error))?;
    Ok(())
}

// END install

// START block text

/// The managed block of a template, with the binary path filled in.
fn block_for(template: &str, quoted_bin: &str) -> Vec<u8> {
    let text = template.replace(BIN_PLACEHOLDER, quoted_bin);
    let bytes = text.into_bytes();
    match find_block(&bytes) {
        Ok(Some((start, end))) => bytes[start..end].to_vec(),
        _ => bytes,
    }
}

/// The markers of the managed block in a hook file.
const MARKERS: textblock::Markers = textblock::Markers {
    start: START_MARKER,
    end: END_MARKER,
};

/// The byte range of the managed block (START line through END line), if there is one.
fn find_block(text: &[u8]) -> Result<Option<(usize, usize)>, String> {
    textblock::find(text, MARKERS).map_err(|e| e.to_string())
}

/// `text` with `block` in place of its block, or right after the `#!` line when it has none.
fn with_block(text: &[u8], block: &[u8]) -> Result<Vec<u8>, String> {
    textblock::with_block(text, block, MARKERS, textblock::Placement::AfterShebang)
        .map_err(|e| e.to_string())
}

/// `text` without its block; `None` when it has none.
fn without_block(text: &[u8]) -> Result<Option<Vec<u8>>, String> {
    textblock::without_block(text, MARKERS, textblock::Placement::AfterShebang)
        .map_err(|e| e.to_string())
}

/// Whether `text` is empty or only a `#!` line (plus blank space).
fn only_shebang(text: &[u8]) -> bool {
    let mut rest = lines(text).filter(|(_, _, l)| !l.trim_ascii().is_empty());
    match rest.next() {
        None => true,
        Some((_, _, first)) => first.starts_with(b"#!") && rest.next().is_none(),
    }
}

/// `Ok` when a POSIX shell runs the hook; `Err` names what runs it instead.
fn check_shell(text: &[u8]) -> Result<(), String> {
    let Some(first) = text.strip_prefix(b"#!") else {
        return match text.contains(&0) {
            true => Err("is a binary program".into()),
            false => Ok(()),
        };
    };
    let first = lines(first).next().map_or(&b""[..], |(_, _, l)| l);
    let first = String::from_utf8_lossy(first);
    let mut words = first.split_whitespace();
    let mut prog = words.next().unwrap_or("");
    if prog.rsplit('/').next() == Some("env") {
        prog = words
            .find(|w| !w.starts_with('-') && !w.contains('='))
            .unwrap_or("");
    }
    let name = prog.rsplit('/').next().unwrap_or(prog);
    match SHELLS.contains(&name) {
        true => Ok(()),
        false => Err(format!("is run by `{prog}`, not a POSIX shell")),
    }
}

// END block text

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

    const BLOCK: &str = "# >>> git-rutter START (managed by git rutter install-git-hooks; do not edit) >>>\necho rutter\n# <<< git-rutter END <<<\n";

    #[test]
    fn templates_hold_one_block_after_a_shebang() {
        for (name, t) in TEMPLATES {
            assert!(t.starts_with("#!/bin/sh\n"), "{name}");
            let (s, e) = find_block(t.as_bytes()).unwrap().unwrap();
            assert_eq!((s, e), ("#!/bin/sh\n".len(), t.len()), "{name}");
            assert_eq!(t.matches(BIN_PLACEHOLDER).count(), 1, "{name}");
            let b = block_for(t, "'/x y/git-rutter'");
            assert!(String::from_utf8(b)
                .unwrap()
                .contains("__rutter_bin='/x y/git-rutter'\n"));
        }
    }

    #[test]
    fn block_goes_after_the_shebang_and_is_replaced_in_place() {
        let user = b"#!/bin/bash\nset -e\necho mine\n";
        let once = with_block(user, BLOCK.as_bytes()).unwrap();
        assert_eq!(
            once,
            format!("#!/bin/bash\n{BLOCK}set -e\necho mine\n").into_bytes()
        );
        assert_eq!(with_block(&once, BLOCK.as_bytes()).unwrap(), once);
        let other = BLOCK.replace("echo rutter", "echo new");
        let updated = with_block(&once, other.as_bytes()).unwrap();
        assert_eq!(
            updated,
            format!("#!/bin/bash\n{other}set -e\necho mine\n").into_bytes()
        );
        assert_eq!(without_block(&updated).unwrap().unwrap(), user.to_vec());
        assert_eq!(without_block(user).unwrap(), None);
    }

    #[test]
    fn files_without_shebang_or_newline() {
        assert_eq!(with_block(b"echo hi\n", b"B\n").unwrap(), b"B\necho hi\n");
        assert_eq!(with_block(b"#!/bin/sh", b"B\n").unwrap(), b"#!/bin/sh\nB\n");
        assert!(only_shebang(b"#!/bin/sh\n"));
        assert!(only_shebang(b"#!/bin/sh\n\n  \n"));
        assert!(only_shebang(b""));
        assert!(!only_shebang(b"#!/bin/sh\necho hi\n"));
    }

    #[test]
    fn malformed_markers_are_refused() {
        let start_only = format!("#!/bin/sh\n{START_MARKER}\n");
        assert!(find_block(start_only.as_bytes()).is_err());
        let end_only = format!("#!/bin/sh\n{END_MARKER}\n");
        assert!(find_block(end_only.as_bytes()).is_err());
        let twice = format!("{BLOCK}{BLOCK}");
        assert!(find_block(twice.as_bytes()).is_err());
    }

    #[test]
    fn only_shell_hooks_take_the_block() {
        for ok in [
            &b"#!/bin/sh\n"[..],
            b"#!/usr/bin/env bash\n",
            b"#! /bin/dash -e\n",
            b"#!/usr/bin/env -S zsh -f\n",
            b"echo no shebang\n",
        ] {
            assert!(check_shell(ok).is_ok(), "{}", String::from_utf8_lossy(ok));
        }
        for bad in [
            &b"#!/usr/bin/env python3\n"[..],
            b"#!/usr/bin/node\n",
            b"\x7fELF\0\0",
        ] {
            assert!(
                check_shell(bad).is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
