//! The per-repository opt-out (spec/capture.md, "Opting a repository out"): `git config
//! rutter.capture false` in a code repository turns capture off for every session whose working
//! directory is inside it. Read from that repository's own config files by file reads (no git
//! process, no network), as the provenance is.

use super::sanitize::{inert_line, PROVENANCE_MAX_CHARS};
use super::workspace;
use crate::store::localconfig::NotABool;

/// The git config key; `false` in a repository's own config turns capture off there.
pub(crate) const CAPTURE_KEY: &str = "rutter.capture";
/// Why a capture is skipped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    /// The stderr line, without its prefix.
    pub line: String,
    /// The hook-run log's reason: no path, the log says why, not where.
    pub logged: &'static str,
}

/// Why captures from `cwd` are skipped, or `None` when they are allowed: outside a
/// repository, or with the key unset or true.
pub(crate) fn refusal(cwd: Option<&str>) -> Option<Refusal> {
    let repo = workspace::repo_config(cwd?)?;
    let shown = inert_line(&repo.work_tree.display().to_string(), PROVENANCE_MAX_CHARS);
    let quoted = crate::argv::quote(&shown);
    match repo.bool(CAPTURE_KEY) {
        Ok(Some(false)) => Some(Refusal {
            line: format!("capture is turned off in {shown} (git config {CAPTURE_KEY} is false there); nothing captured. To capture sessions there again, run `git -C {quoted} config --unset {CAPTURE_KEY}`."),
            logged: "capture is turned off in the session's repository (rutter.capture is false)",
        }),
        Ok(_) => None,
        Err(NotABool(raw)) => {
            let raw = inert_line(&raw, PROVENANCE_MAX_CHARS);
            Some(Refusal {
                line: format!("{CAPTURE_KEY} is \"{raw}\" in {shown}, which is not true or false; nothing captured. Set it with `git -C {quoted} config {CAPTURE_KEY} false` (or true)."),
                logged: "rutter.capture in the session's repository is not true or false",
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn repo(config: &str) -> (tempfile::TempDir, String) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap().join("work repo");
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join("src/deep")).unwrap();
        std::fs::write(root.join(".git/config"), config).unwrap();
        let cwd = root.join("src/deep").display().to_string();
        (dir, cwd)
    }

    #[test]
    fn off_only_where_the_repository_says_false() {
        let (_d, cwd) = repo("[rutter]\n\tcapture = false\n");
        let why = refusal(Some(&cwd)).unwrap().line;
        assert!(why.starts_with("capture is turned off in /"), "{why}");
        assert!(
            why.contains("work repo (git config rutter.capture is false there)"),
            "{why}"
        );
        assert!(why.ends_with("config --unset rutter.capture`."), "{why}");
        assert!(why.contains("git -C '/"), "{why}");
        for allowed in [
            "",
            "[rutter]\n\tcapture = true\n",
            "[rutter]\n\tvault = /v\n",
        ] {
            let (_d, cwd) = repo(allowed);
            assert_eq!(refusal(Some(&cwd)), None, "{allowed:?}");
        }
        assert_eq!(refusal(None), None);
        assert_eq!(refusal(Some("/nonexistent/rutter/dir")), None);
    }

    #[test]
    fn a_value_that_is_not_a_boolean_is_refused_and_named() {
        let (_d, cwd) = repo("[rutter]\n\tcapture = sometimes\n");
        let why = refusal(Some(&cwd)).unwrap().line;
        assert!(
            why.starts_with("rutter.capture is \"sometimes\" in /"),
            "{why}"
        );
    }

    #[test]
    fn a_linked_work_tree_follows_its_repository() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let main = root.join("main/.git");
        std::fs::create_dir_all(main.join("worktrees/wt")).unwrap();
        std::fs::write(main.join("config"), "[rutter]\ncapture = no\n").unwrap();
        std::fs::write(main.join("worktrees/wt/commondir"), "../..\n").unwrap();
        std::fs::create_dir_all(root.join("wt")).unwrap();
        std::fs::write(
            root.join("wt/.git"),
            format!("gitdir: {}\n", main.join("worktrees/wt").display()),
        )
        .unwrap();
        assert!(refusal(Some(&root.join("wt").display().to_string())).is_some());
        // Its own config.worktree decides first.
        std::fs::write(
            main.join("worktrees/wt/config.worktree"),
            "[rutter]\ncapture = yes\n",
        )
        .unwrap();
        assert_eq!(refusal(Some(&root.join("wt").display().to_string())), None);
        assert!(Path::new(&main).is_dir());
    }
}
