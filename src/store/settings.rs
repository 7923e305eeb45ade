//! `git rutter config`'s facts: every `rutter.*` key git-rutter reads, what it does, and where
//! each value set comes from, read by git itself (`git config --show-scope --show-origin`), so
//! includes, conditional includes and `git -c` count exactly as for git's own commands.

use std::path::Path;

/// A key git-rutter reads, and what it does.
pub(crate) struct Known {
    pub key: &'static str,
    pub default: &'static str,
    pub does: &'static str,
}

/// Every `rutter.*` key git-rutter reads.
pub(crate) const KNOWN: &[Known] = &[
    Known {
        key: "rutter.vault",
        default: "(none)",
        does: "The notes vault hooks, the MCP server and commands use when LIBRARIAN_VAULT_PATH and --vault are not given (set it with `git rutter init --global`).",
    },
    Known {
        key: "rutter.capture",
        default: "true",
        does: "false in a repository's config: sessions in that repository are never captured.",
    },
    Known {
        key: "rutter.sign",
        default: "false",
        does: "true: record commits are signed with git's own signing setup (gpg.format, user.signingKey).",
    },
    Known {
        key: "rutter.syncRemote",
        default: "(none)",
        does: "The remote `git rutter sync` exchanges records with (set by `git rutter sync --setup REMOTE`).",
    },
    Known {
        key: "rutter.autoSync",
        default: "off",
        does: "An interval (15m, 1h): after a capture, at a session start and while the MCP server runs, when the last sync started longer ago, a sync with rutter.syncRemote starts by itself in the background.",
    },
    Known {
        key: "rutter.context",
        default: "true",
        does: "false: the SessionStart hook hands sessions no brief (`git rutter context` still prints one).",
    },
    Known {
        key: "rutter.contextBytes",
        default: "2048",
        does: "The most bytes the session-start brief (`git rutter context`) takes, 512 to 65536.",
    },
    Known {
        key: "rutter.syncTimeout",
        default: "5m",
        does: "How long one git process of a sync (a fetch, a push) may run before it is stopped (90s, 15m; off: no bound).",
    },
    Known {
        key: "rutter.keepCited",
        default: "true",
        does: "false: captures keep no copy of the notes they cite under _librarian/cited/, and sync sends none.",
    },
];

/// One value set for a `rutter.*` key.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub(crate) struct Set {
    pub key: String,
    pub value: String,
    /// `system`, `global`, `local`, `worktree` or `command`.
    pub scope: String,
    /// Where git read it: `file:/home/ada/.gitconfig`, `command line:`.
    pub origin: String,
}

/// Every `rutter.*` value git sees from `dir` (a repository, or anywhere), in the order git
/// reads them (the last one of a key wins); `Err` when git cannot be run.
pub(crate) fn read(dir: &Path) -> Result<Vec<Set>, String> {
    let mut git = super::gitcli::git().ok_or("git is not on PATH")?;
    let out = git
        .current_dir(dir)
        .args([
            "config",
            "--show-scope",
            "--show-origin",
            "-z",
            "--get-regexp",
            r"^rutter\.",
        ])
        .output()
        .map_err(|e| format!("running git config: {e}"))?;
    // Exit 1: no key matched.
    match out.status.code() {
        Some(0) => Ok(parse(&out.stdout)),
        Some(1) => Ok(Vec::new()),
        _ => Err(String::from_utf8_lossy(&out.stderr).trim().to_string()),
    }
}

/// Parses `scope NUL origin NUL key LF value NUL`, repeated.
fn parse(bytes: &[u8]) -> Vec<Set> {
    let text = String::from_utf8_lossy(bytes);
    let mut fields = text.split('\0');
    let mut out = Vec::new();
    while let (Some(scope), Some(origin), Some(entry)) =
        (fields.next(), fields.next(), fields.next())
    {
        let (key, value) = entry.split_once('\n').unwrap_or((entry, ""));
        out.push(Set {
            key: key.to_string(),
            value: value.to_string(),
            scope: scope.to_string(),
            origin: origin.to_string(),
        });
    }
    out
}

/// The known key `key` names, compared as git compares names (section and key case-blind).
pub(crate) fn known(key: &str) -> Option<&'static Known> {
    KNOWN.iter().find(|k| k.key.eq_ignore_ascii_case(key))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn git_s_z_output_reads_as_values_with_their_origin() {
        let raw = b"local\0file:.git/config\0rutter.sign\ntrue\0command\0command line:\0rutter.vault\n/x y\0";
        assert_eq!(
            parse(raw),
            vec![
                Set {
                    key: "rutter.sign".into(),
                    value: "true".into(),
                    scope: "local".into(),
                    origin: "file:.git/config".into()
                },
                Set {
                    key: "rutter.vault".into(),
                    value: "/x y".into(),
                    scope: "command".into(),
                    origin: "command line:".into()
                },
            ]
        );
        assert_eq!(
            known("RUTTER.SyncRemote").map(|k| k.key),
            Some("rutter.syncRemote")
        );
    }

    proptest! {
        #[test]
        fn any_bytes_parse_without_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = parse(&bytes);
        }
    }
}
