//! The Claude Code Stop hook a project registers for itself: `.claude/settings.json` (the
//! team's, committed) or `.claude/settings.local.json` (personal) at the project's root. Claude
//! Code runs the hooks of those files beside the user's own `~/.claude/settings.json`
//! (code.claude.com/docs/en/settings, "Settings files"), so `status`, run in such a project,
//! counts ours there as a registered hook instead of saying none is.

use crate::clients::command::Kind;
use crate::clients::{claude, hooks, Context};
use std::path::{Path, PathBuf};

/// The project's settings files, as Claude Code names them.
const FILES: [&str; 2] = [".claude/settings.json", ".claude/settings.local.json"];

/// Larger files are not read (a settings file is a few KB).
const MAX_BYTES: u64 = 1 << 20;

/// The first project settings file that holds our Stop hook, for a `status` run in `cwd`: in
/// `cwd` and each folder above it up to the root of the git work tree around it (only `cwd`
/// outside one). Read as `status` reads the user's own (`ctx`, [`crate::clients::json_doc`]);
/// a file over [`MAX_BYTES`] (a cloned project's to choose), or not JSON, holds none.
pub(crate) fn claude_hook(ctx: &Context, cwd: &Path) -> Option<PathBuf> {
    project_dirs(cwd)
        .into_iter()
        .flat_map(|dir| FILES.map(|f| dir.join(f)))
        .find(|path| holds_our_stop_hook(ctx, path))
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

fn holds_our_stop_hook(ctx: &Context, path: &Path) -> bool {
    if std::fs::metadata(path).map_or(true, |m| m.len() > MAX_BYTES) {
        return false;
    }
    crate::clients::json_doc(ctx, path).is_some_and(|doc| {
        hooks::handlers(&doc, claude::SHAPE)
            .iter()
            .any(|(kind, _)| matches!(kind, Kind::Ours { .. }))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `status`'s reading context (links followed, nothing written).
    fn ctx(home: &Path) -> Context {
        Context {
            home: home.to_path_buf(),
            vars: vec![],
            bin: "/usr/local/bin/git-rutter".into(),
            vault_flag: None,
            configured: None,
            user_label: String::new(),
            follow_links: true,
        }
    }

    const OURS: &str = r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"/usr/local/bin/git-rutter capture --client claude"}]}]}}"#;

    #[test]
    fn our_hook_in_a_projects_settings_is_found_from_any_folder_of_its_work_tree() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("proj");
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join(".claude")).unwrap();
        std::fs::create_dir_all(root.join("src/deep")).unwrap();
        assert_eq!(claude_hook(&ctx(dir.path()), &root.join("src/deep")), None);
        std::fs::write(root.join(".claude/settings.local.json"), OURS).unwrap();
        let local = root.join(".claude/settings.local.json");
        assert_eq!(
            claude_hook(&ctx(dir.path()), &root.join("src/deep")),
            Some(local.clone())
        );
        assert_eq!(claude_hook(&ctx(dir.path()), &root), Some(local));
        // Above the work tree's root is another project's business.
        std::fs::create_dir_all(dir.path().join(".claude")).unwrap();
        std::fs::write(dir.path().join(".claude/settings.json"), OURS).unwrap();
        std::fs::remove_file(root.join(".claude/settings.local.json")).unwrap();
        assert_eq!(claude_hook(&ctx(dir.path()), &root.join("src")), None);
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
            assert_eq!(claude_hook(&ctx(root), root), None, "{text}");
        }
        std::fs::remove_file(&settings).unwrap();
        std::fs::create_dir(&settings).unwrap();
        assert_eq!(claude_hook(&ctx(root), root), None);
    }
}
