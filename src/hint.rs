//! What to do about an error, kept apart from what went wrong (issue 36, F5). A library error
//! says in its message what is wrong and gives the next step as its [`Hinted::hint`]; `cli`
//! prints the hint after the message as it prints its own (spec/output.md, "Errors and hints"),
//! and sets the exit status from [`Hinted::users_to_fix`]. A place that has one line for an
//! error (a hook's stderr line, the hook-run log, the MCP server's stderr) adds the hint with
//! [`after`].

/// An error that may say what to do next.
pub trait Hinted: std::error::Error {
    /// The next step, one sentence with its capital and final period; `None` when the message
    /// says all there is.
    fn hint(&self) -> Option<String> {
        None
    }

    /// Whether the user fixes it by asking differently or by setting something up, with
    /// nothing changed (a remote not set up for sync, an index of another vault): `cli` exits
    /// 1 for it, as for its own refusals, instead of 2 ("could not run").
    fn users_to_fix(&self) -> bool {
        false
    }
}

/// The hint of `e` as it follows a message on its line (` Run …`), or nothing.
pub fn after(e: &(impl Hinted + ?Sized)) -> String {
    e.hint().map(|h| format!(" {h}")).unwrap_or_default()
}

/// `message` followed by `hint` on its line: a final period closes the message first.
pub fn joined(message: &str, hint: &str) -> String {
    format!("{} {hint}", closed(message))
}

/// `message` as a sentence: a final period unless it ends in one already (git's own messages,
/// quoted in ours, often do).
pub fn closed(message: &str) -> String {
    match message.ends_with(['.', '!', '?']) {
        true => message.to_string(),
        false => format!("{message}."),
    }
}

/// The error's message and its hint on one line (`the remote … is not set up for rutter. Run …`).
pub fn one_line(e: &(impl Hinted + ?Sized)) -> String {
    match e.hint() {
        Some(h) => joined(&e.to_string(), &h),
        None => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("no sync remote is set")]
    struct NoRemote;

    impl Hinted for NoRemote {
        fn hint(&self) -> Option<String> {
            Some("Run `git rutter sync --setup REMOTE`.".into())
        }
    }

    #[derive(Debug, thiserror::Error)]
    #[error("disk full")]
    struct Full;

    impl Hinted for Full {}

    #[test]
    fn the_hint_follows_the_message_after_a_period() {
        assert_eq!(
            one_line(&NoRemote),
            "no sync remote is set. Run `git rutter sync --setup REMOTE`."
        );
        assert_eq!(after(&NoRemote), " Run `git rutter sync --setup REMOTE`.");
        assert_eq!(
            joined("stopped.", "Run it again."),
            "stopped. Run it again."
        );
        assert_eq!(one_line(&Full), "disk full");
        assert_eq!(after(&Full), "");
        assert!(!Full.users_to_fix());
    }
}
