//! Every `rutter.*` value git sees, and where each comes from, read by git itself (`git config
//! --show-scope --show-origin`), so includes, conditional includes and `git -c` count exactly as
//! for git's own commands. What each key does is `setup::settings`'s (`git rutter config`).

use std::path::Path;

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

/// Why git could not say which `rutter.*` values are set.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ReadError {
    #[error("git is not on PATH")]
    NoGit,
    #[error("running git config: {0}")]
    Run(#[from] std::io::Error),
    /// git ran and failed: its own message.
    #[error("{0}")]
    Git(String),
}

/// Every `rutter.*` value git sees from `dir` (a repository, or anywhere), in the order git
/// reads them (the last one of a key wins); `Err` when git cannot be run.
pub(crate) fn read(dir: &Path) -> Result<Vec<Set>, ReadError> {
    let mut git = super::gitcli::git().ok_or(ReadError::NoGit)?;
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
        .output()?;
    // Exit 1: no key matched.
    match out.status.code() {
        Some(0) => Ok(parse(&out.stdout)),
        Some(1) => Ok(Vec::new()),
        _ => Err(ReadError::Git(
            String::from_utf8_lossy(&out.stderr).trim().to_string(),
        )),
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
    }

    proptest! {
        #[test]
        fn any_bytes_parse_without_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = parse(&bytes);
        }
    }
}
