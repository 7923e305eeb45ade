//! The git hooks' files in the vault repository, as `install-git-hooks` edits them: where they
//! are (the hooks directory, refused when it lies outside the repository; a symlinked hook
//! followed only inside it), the managed block between START/END marker lines (git-branchless's
//! habit) made from the shipped `git-hooks/<name>` templates, and the edits themselves: the block
//! added right after the `#!` line or refreshed in place, or removed (a file left with only its
//! `#!` line is deleted), each file replaced atomically. The user's own hook content is kept and
//! runs after the block. The command line prints what was done, and answers for the hooks when
//! git runs them (`git-rutter hook`).

use crate::store::gitenv::HookDirs;
use crate::textblock::{self, lines, BlockError};
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

/// The line that opens the managed block in a hook file.
pub(crate) const START_MARKER: &str =
    "# >>> git-rutter START (managed by git rutter install-git-hooks; do not edit) >>>";
/// The line that closes the managed block.
pub(crate) const END_MARKER: &str = "# <<< git-rutter END <<<";
/// Stands for the shell-quoted binary path in the shipped templates.
const BIN_PLACEHOLDER: &str = "@GIT_RUTTER_BIN@";
/// The shipped hook templates, as installed (placeholder aside).
pub(crate) const TEMPLATES: [(&str, &str); 2] = [
    ("pre-commit", include_str!("../../git-hooks/pre-commit")),
    (
        "reference-transaction",
        include_str!("../../git-hooks/reference-transaction"),
    ),
];
/// Interpreters that can run the block (a file without `#!` is run by git with `/bin/sh`).
const SHELLS: [&str; 7] = ["sh", "bash", "dash", "ash", "ksh", "mksh", "zsh"];

/// Why the hooks directory cannot be used.
#[derive(Debug, thiserror::Error)]
pub(crate) enum HookDirError {
    #[error("the vault repository has no work tree")]
    NoWorkTree,
    #[error(
        "the hooks directory {} ({setting}) lies outside this repository, and git-rutter only \
         edits hook files inside it. Copy the blocks from git-hooks/ by hand (see \
         docs/git-hooks.md), or point core.hooksPath inside the repository.",
        dir.display()
    )]
    Outside {
        dir: PathBuf,
        /// What names the directory: `core.hooksPath` or the repository's hooks directory.
        setting: &'static str,
    },
    #[error("cannot resolve {}", .0.display())]
    Unresolvable(PathBuf),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// Where hook files may be written: the hooks directory and the repository's own directories.
pub(crate) struct HookPlace {
    dir: PathBuf,
    workdir: PathBuf,
    inside: Vec<PathBuf>,
}

impl HookPlace {
    /// `core.hooksPath` (relative to the work tree) when set, else `<common git dir>/hooks`;
    /// refused when it lies outside the repository.
    pub(crate) fn resolve(repo: &HookDirs) -> Result<HookPlace, HookDirError> {
        let workdir = repo
            .workdir
            .as_deref()
            .ok_or(HookDirError::NoWorkTree)?
            .canonicalize()?;
        let (dir, setting) = match &repo.hooks_path {
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
        if !inside.iter().any(|root| dir.starts_with(root)) {
            return Err(HookDirError::Outside { dir, setting });
        }
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
fn resolve_missing(p: &Path) -> Result<PathBuf, HookDirError> {
    let mut base = p.to_path_buf();
    let mut rest = Vec::new();
    while std::fs::symlink_metadata(&base).is_err() {
        let Some(name) = base.file_name().map(|n| n.to_os_string()) else {
            return Err(HookDirError::Unresolvable(p.to_path_buf()));
        };
        rest.push(name);
        base.pop();
    }
    let mut out = base.canonicalize()?;
    for name in rest.iter().rev() {
        out.push(name);
    }
    match out.components().any(|c| c == Component::ParentDir) {
        true => Err(HookDirError::Unresolvable(p.to_path_buf())),
        false => Ok(out),
    }
}

/// The file to write for a hook: the hook path itself, or the target of a symlink that stays
/// inside the repository. `Err` says why the hook is left alone.
fn hook_file(place: &HookPlace, name: &str) -> Result<PathBuf, HookError> {
    let path = place.dir.join(name);
    let Ok(meta) = std::fs::symlink_metadata(&path) else {
        return Ok(path);
    };
    if !meta.file_type().is_symlink() {
        return match meta.is_file() {
            true => Ok(path),
            false => Err(HookError::Refused(format!(
                "{} is not a regular file; left alone.",
                place.show(&path)
            ))),
        };
    }
    let target = path.canonicalize().map_err(|e| {
        HookError::Refused(format!(
            "{} is a symlink whose target cannot be read ({e}); fix or remove it, then run again.",
            place.show(&path)
        ))
    })?;
    if !place.inside.iter().any(|root| target.starts_with(root)) {
        return Err(HookError::Refused(format!(
            "{} is a symlink to {}, outside this repository; git-rutter does not edit hooks \
             shared with other repositories. Add the block by hand (docs/git-hooks.md).",
            place.show(&path),
            target.display()
        )));
    }
    match target.is_file() {
        true => Ok(target),
        false => Err(HookError::Refused(format!(
            "{} does not lead to a regular file; left alone.",
            place.show(&path)
        ))),
    }
}

/// Installs or refreshes the block in one hook; returns what was done.
pub(crate) fn install_one(
    place: &HookPlace,
    name: &str,
    block: &[u8],
) -> Result<String, HookError> {
    let file = hook_file(place, name)?;
    let shown = place.show(&place.dir.join(name));
    let Some((old, mode)) = read_hook(&file)? else {
        let mut text = b"#!/bin/sh\n".to_vec();
        text.extend_from_slice(block);
        // `install-git-hooks` writes the hook files it names, by path as git does (DESIGN §2.2:
        // install commands write the files they name); not rutter's state or records.
        std::fs::create_dir_all(&place.dir).map_err(HookError::Os)?;
        write_hook(&file, &text, 0o755)?;
        return Ok(format!("created {shown}"));
    };
    if mode & 0o111 == 0 {
        return Err(HookError::Refused(format!(
            "{shown} exists but is not executable, so git ignores it; adding the block would \
             start running it. Make it executable (chmod +x) or remove it, then run again."
        )));
    }
    check_shell(&old).map_err(|why| {
        HookError::Refused(format!(
            "{shown} {why}; call the binary from it yourself (docs/git-hooks.md)."
        ))
    })?;
    let block_error = |source| HookError::Block {
        shown: shown.clone(),
        source,
    };
    let had = find_block(&old).map_err(block_error)?;
    let new = with_block(&old, block).map_err(block_error)?;
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
pub(crate) fn uninstall_one(place: &HookPlace, name: &str) -> Result<String, HookError> {
    let path = place.dir.join(name);
    let file = hook_file(place, name)?;
    let shown = place.show(&path);
    let Some((old, mode)) = read_hook(&file)? else {
        return Ok(format!("no {shown}; nothing to remove"));
    };
    let Some(new) = without_block(&old).map_err(|source| HookError::Block {
        shown: shown.clone(),
        source,
    })?
    else {
        return Ok(format!("no git-rutter block in {shown}; left as it is"));
    };
    if only_shebang(&new) && file == path {
        std::fs::remove_file(&file)
            .map_err(|e| HookError::io(format!("cannot remove {shown}"), e))?;
        return Ok(format!(
            "removed {shown} (it held only the git-rutter block)"
        ));
    }
    write_hook(&file, &new, mode)?;
    Ok(format!("removed the git-rutter block from {shown}"))
}

/// The bytes and permission bits of a hook file, `None` when it does not exist.
fn read_hook(file: &Path) -> Result<Option<(Vec<u8>, u32)>, HookError> {
    match std::fs::read(file) {
        Ok(bytes) => {
            let meta = std::fs::metadata(file).map_err(HookError::Os)?;
            Ok(Some((bytes, meta.permissions().mode() & 0o7777)))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(HookError::io(format!("cannot read {}", file.display()), e)),
    }
}

/// Replaces `file` atomically (a temporary file beside it, renamed over it).
fn write_hook(file: &Path, bytes: &[u8], mode: u32) -> Result<(), HookError> {
    use std::io::Write;
    let fail = |e| HookError::io(format!("cannot write {}", file.display()), e);
    let dir = file.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(fail)?;
    tmp.write_all(bytes).map_err(fail)?;
    tmp.as_file()
        .set_permissions(std::fs::Permissions::from_mode(mode))
        .map_err(fail)?;
    tmp.persist(file).map_err(|e| fail(e.error))?;
    Ok(())
}

/// The managed block of a template, with the binary path filled in.
pub(crate) fn block_for(template: &str, quoted_bin: &str) -> Vec<u8> {
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
    fences: false,
};

/// The byte range of the managed block (START line through END line), if there is one.
fn find_block(text: &[u8]) -> Result<Option<(usize, usize)>, BlockError> {
    textblock::find(text, MARKERS)
}

/// `text` with `block` in place of its block, or right after the `#!` line when it has none.
fn with_block(text: &[u8], block: &[u8]) -> Result<Vec<u8>, BlockError> {
    textblock::with_block(text, block, MARKERS, textblock::Placement::AfterShebang)
}

/// `text` without its block; `None` when it has none.
fn without_block(text: &[u8]) -> Result<Option<Vec<u8>>, BlockError> {
    textblock::without_block(text, MARKERS, textblock::Placement::AfterShebang)
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
fn check_shell(text: &[u8]) -> Result<(), NotAShell> {
    let Some(first) = text.strip_prefix(b"#!") else {
        return match text.contains(&0) {
            true => Err(NotAShell::Binary),
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
        false => Err(NotAShell::RunBy(prog.to_string())),
    }
}

/// What runs a hook file, when it is not a POSIX shell.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum NotAShell {
    #[error("is a binary program")]
    Binary,
    #[error("is run by `{0}`, not a POSIX shell")]
    RunBy(String),
}

/// Why one hook was not installed or uninstalled (the other hooks still are).
#[derive(Debug, thiserror::Error)]
pub(crate) enum HookError {
    /// The hook is left alone; the message says why and what to do.
    #[error("{0}")]
    Refused(String),
    /// Its managed block cannot be told apart (markers out of order, or twice).
    #[error("{shown}: {source}. {}", textblock::FIX)]
    Block { shown: String, source: BlockError },
    /// A file could not be read, written or removed: what was done to which file, and why.
    #[error("{doing}: {source}")]
    Io {
        doing: String,
        source: std::io::Error,
    },
    /// The hooks folder could not be made, or a hook's permissions read.
    #[error(transparent)]
    Os(std::io::Error),
}

impl HookError {
    fn io(doing: String, source: std::io::Error) -> HookError {
        HookError::Io { doing, source }
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
