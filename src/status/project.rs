//! The Claude Code Stop hook a project registers for itself: `.claude/settings.json` (the
//! team's, committed) or `.claude/settings.local.json` (personal) at the project's root. Claude
//! Code runs the hooks of those files beside the user's own `~/.claude/settings.json`
//! (code.claude.com/docs/en/settings, "Settings files"), so `status`, run in such a project,
//! counts ours there as a registered hook instead of saying none is.

use crate::clients::command::Kind;
use crate::clients::{claude, hooks, json};
use std::path::{Path, PathBuf};

/// The project's settings files, as Claude Code names them.
const FILES: [&str; 2] = [".claude/settings.json", ".claude/settings.local.json"];

/// Larger files are not read (a settings file is a few KB).
const MAX_BYTES: u64 = 1 << 20;

/// The first project settings file that holds our Stop hook, for a `status` run in `cwd`: in
/// `cwd` and each folder above it up to the root of the git work tree around it (only `cwd`
/// outside one). A file that is not a regular one, too large, or not a JSON object holds none.
pub(crate) fn claude_hook(cwd: &Path) -> Option<PathBuf> {
    project_dirs(cwd)
        .into_iter()
        .flat_map(|dir| FILES.map(|f| dir.join(f)))
        .find(|path| holds_our_stop_hook(path))
}

/// `cwd` and the folders above it up to the work tree's root (the first holding `.git`).
fn project_dirs(cwd: &Path) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for dir in cwd.ancestors() {
        dirs.push(dir.to_path_buf());
        if dir.join(".git").exists() {
            return dirs;
        }
    }
    vec![cwd.to_path_buf()]
}

fn holds_our_stop_hook(path: &Path) -> bool {
    // `metadata` follows a link, as Claude Code does; a FIFO or a folder is never opened.
    let readable = std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() <= MAX_BYTES);
    let Some(text) = readable
        .then(|| std::fs::read_to_string(path).ok())
        .flatten()
    else {
        return false;
    };
    json::parse(&text).is_ok_and(|doc| {
        hooks::handlers(&doc, claude::SHAPE)
            .iter()
            .any(|(kind, _)| matches!(kind, Kind::Ours { .. }))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const OURS: &str = r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"/usr/local/bin/git-rutter capture --client claude"}]}]}}"#;

    #[test]
    fn our_hook_in_a_projects_settings_is_found_from_any_folder_of_its_work_tree() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("proj");
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join(".claude")).unwrap();
        std::fs::create_dir_all(root.join("src/deep")).unwrap();
        assert_eq!(claude_hook(&root.join("src/deep")), None);
        std::fs::write(root.join(".claude/settings.local.json"), OURS).unwrap();
        let local = root.join(".claude/settings.local.json");
        assert_eq!(claude_hook(&root.join("src/deep")), Some(local.clone()));
        assert_eq!(claude_hook(&root), Some(local));
        // Above the work tree's root is another project's business.
        std::fs::create_dir_all(dir.path().join(".claude")).unwrap();
        std::fs::write(dir.path().join(".claude/settings.json"), OURS).unwrap();
        std::fs::remove_file(root.join(".claude/settings.local.json")).unwrap();
        assert_eq!(claude_hook(&root.join("src")), None);
    }

    #[test]
    fn another_hook_or_a_file_of_another_kind_is_none() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join(".claude")).unwrap();
        let settings = root.join(".claude/settings.json");
        for text in [
            r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"./notify.sh"}]}]}}"#,
            r#"{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"git-rutter capture --client claude"}]}]}}"#,
            "not json",
            "[]",
            "",
        ] {
            std::fs::write(&settings, text).unwrap();
            assert_eq!(claude_hook(root), None, "{text}");
        }
        std::fs::remove_file(&settings).unwrap();
        std::fs::create_dir(&settings).unwrap();
        assert_eq!(claude_hook(root), None);
    }
}
