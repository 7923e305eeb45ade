//! How a command ends, as jj's `CommandError`: a command that ran returns an [`Exit`] (0, or 1
//! with findings); one that did not returns a [`CommandError`], whose [`ErrorKind`] sets the
//! exit status and whose hints (what to do next) are kept apart from the message, so `--json`
//! output can carry them. `cli::dispatch` is the one place either becomes an exit status.
//!
//! Exit status: 0 ok; 1 a finding or a user error (a refusal the user can fix: an unknown
//! entry id, a remote not set up); 2 a usage error or a command that could not run. Hooks
//! (`capture`, `hook`) always exit 0 and never go through here.
//!
//! A library error met on the way (`?`) says what to do next through [`Hinted`] (issue 36,
//! F5): the first error of its chain that gives a hint gives it here, and one that is the user's
//! to fix makes the command a user error.

use super::ui::Ui;
use crate::hint::Hinted;
use std::fmt;

/// Exit status for success.
pub const EXIT_OK: i32 = 0;
/// Exit status for a finding or a user error.
pub const EXIT_FINDING: i32 = 1;
/// Exit status for a usage error or when the command could not run.
pub const EXIT_CANNOT_RUN: i32 = 2;

/// What a command returns.
pub type CommandResult = Result<Exit, CommandError>;

/// How a command that ran to its end exits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Exit status 0.
    Clean,
    /// Exit status 1: what the command reports is something a script must notice (verify's or
    /// status's findings, search's empty answer as `git grep`, `diff --exit-code`'s difference,
    /// commit's refused lines, a push the remote refused).
    Findings,
}

impl Exit {
    /// [`Exit::Findings`] when `found`, else [`Exit::Clean`].
    pub fn findings_if(found: bool) -> Exit {
        match found {
            true => Exit::Findings,
            false => Exit::Clean,
        }
    }

    /// The process exit status.
    pub(crate) fn code(self) -> i32 {
        match self {
            Exit::Clean => EXIT_OK,
            Exit::Findings => EXIT_FINDING,
        }
    }
}

/// Why a command stopped, which sets its exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A refusal the user can fix by asking differently (exit 1): nothing was changed.
    User,
    /// A usage error, or the command could not run (exit 2).
    CannotRun,
}

/// A command that stopped: its kind, the error, and the hints saying what to do next.
#[derive(Debug)]
pub struct CommandError {
    kind: ErrorKind,
    error: anyhow::Error,
    hints: Vec<Hint>,
}

/// What to do next, printed after the message: on its line (`… nothing was retracted. `git
/// rutter log` lists the entries.`), or on a line of its own for a longer one.
#[derive(Debug, Clone)]
struct Hint {
    text: String,
    own_line: bool,
}

/// A refusal the user can fix (exit 1).
pub fn user_error(message: impl fmt::Display) -> CommandError {
    CommandError::new(ErrorKind::User, message)
}

/// A usage error, or a command that could not run (exit 2).
pub fn cannot_run(message: impl fmt::Display) -> CommandError {
    CommandError::new(ErrorKind::CannotRun, message)
}

impl CommandError {
    /// An error of `kind` whose whole text is `message`.
    pub fn new(kind: ErrorKind, message: impl fmt::Display) -> CommandError {
        CommandError {
            kind,
            error: anyhow::Error::msg(message.to_string()),
            hints: Vec::new(),
        }
    }

    /// Adds a hint, printed after the message on its line.
    pub fn hinted(mut self, hint: impl Into<String>) -> CommandError {
        self.hints.push(Hint {
            text: hint.into(),
            own_line: false,
        });
        self
    }

    /// Adds a hint, printed on a line of its own.
    pub fn hinted_below(mut self, hint: impl Into<String>) -> CommandError {
        self.hints.push(Hint {
            text: hint.into(),
            own_line: true,
        });
        self
    }

    /// The kind, which sets the exit status.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The exit status.
    pub(crate) fn exit_code(&self) -> i32 {
        match self.kind {
            ErrorKind::User => EXIT_FINDING,
            ErrorKind::CannotRun => EXIT_CANNOT_RUN,
        }
    }

    /// The message without its hints (an error with causes names each, as `a: b`).
    #[cfg(test)]
    fn message(&self) -> String {
        causes(&self.error)
    }

    /// The hints, in order.
    #[cfg(test)]
    fn hints(&self) -> Vec<&str> {
        self.hints.iter().map(|h| h.text.as_str()).collect()
    }

    /// Says on stderr why the command stopped: `git-rutter: MESSAGE HINT…`.
    pub fn report(&self, ui: &mut Ui) {
        ui.warn(self);
    }
}

impl fmt::Display for CommandError {
    /// The text [`CommandError::report`] prints, without the final newline: a hint on the
    /// message's line follows a final period.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut text = causes(&self.error);
        for hint in &self.hints {
            match hint.own_line {
                true => text = format!("{text}\n{}", hint.text),
                false => text = crate::hint::joined(&text, &hint.text),
            }
        }
        write!(f, "git-rutter: {text}")
    }
}

/// The error and its causes as `a: b`, leaving out a cause whose text the message already
/// holds (`git: unknown object format` wraps a libgit2 error it also names as its source, and
/// said it twice).
fn causes(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain().map(ToString::to_string) {
        if text.is_empty() {
            text = cause;
        } else if !text.contains(&cause) {
            text.push_str(": ");
            text.push_str(&cause);
        }
    }
    text
}

/// Any other error (a store, index or I/O error met on the way) means the command could not
/// run, unless a library error in it is the user's to fix; its causes are shown, as `a: b`,
/// then the hint of the first that gives one.
impl<E: Into<anyhow::Error>> From<E> for CommandError {
    fn from(e: E) -> CommandError {
        let error = e.into();
        let said: Vec<&dyn Hinted> = error.chain().filter_map(hinted).collect();
        let kind = match said.iter().any(|h| h.users_to_fix()) {
            true => ErrorKind::User,
            false => ErrorKind::CannotRun,
        };
        let hints = said
            .iter()
            .find_map(|h| h.hint())
            .map(|text| Hint {
                text,
                own_line: false,
            })
            .into_iter()
            .collect();
        CommandError { kind, error, hints }
    }
}

/// The library error `cause` is, when it is one that may say what to do next: each type that
/// implements [`Hinted`] (the architecture test `every_hinted_error_is_known_to_cli` holds this
/// list whole).
fn hinted<'a>(cause: &'a (dyn std::error::Error + 'static)) -> Option<&'a dyn Hinted> {
    macro_rules! first_of {
        ($($t:ty),* $(,)?) => {
            $(if let Some(e) = cause.downcast_ref::<$t>() {
                return Some(e);
            })*
        };
    }
    first_of!(
        crate::index::IndexError,
        crate::mcp::standalone::WatchError,
        crate::recorder::RecordError,
        crate::setup::InitError,
        crate::setup::AdoptError,
        crate::store::StoreError,
        crate::store::transport::TransportError,
        crate::sync::SyncError,
        crate::vault::VaultError,
    );
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_follow_the_message_and_the_kind_sets_the_exit_status() {
        let e = user_error("no entry id starts with 2026; nothing was retracted.")
            .hinted("`git rutter log` lists the entries.");
        assert_eq!(
            e.to_string(),
            "git-rutter: no entry id starts with 2026; nothing was retracted. `git rutter log` lists the entries."
        );
        assert_eq!(e.exit_code(), EXIT_FINDING);
        assert_eq!(e.hints(), ["`git rutter log` lists the entries."]);
        assert_eq!(
            e.message(),
            "no entry id starts with 2026; nothing was retracted."
        );
        let below = cannot_run("stopped.").hinted_below("Run it again.");
        assert_eq!(below.to_string(), "git-rutter: stopped.\nRun it again.");
        assert_eq!(below.exit_code(), EXIT_CANNOT_RUN);
    }

    #[test]
    fn other_errors_cannot_run_and_show_their_causes() {
        let io = std::io::Error::other("disk full");
        let e: CommandError = anyhow::Error::new(io)
            .context("writing the day file")
            .into();
        assert_eq!(e.kind(), ErrorKind::CannotRun);
        assert_eq!(e.to_string(), "git-rutter: writing the day file: disk full");
        let (mut ui, got) = Ui::with_buffers(false);
        e.report(&mut ui);
        assert_eq!(
            got.stderr(),
            "git-rutter: writing the day file: disk full\n"
        );
        assert_eq!(Exit::findings_if(true).code(), 1);
        assert_eq!(Exit::Clean.code(), 0);
    }

    /// A library error met on the way gives its hint after the message, and one the user is
    /// to fix makes the command a user error (issue 36, F5); wrapped in context, too.
    #[test]
    fn a_library_error_gives_its_hint_and_its_kind() {
        let e: CommandError = crate::sync::SyncError::NotConfigured("origin".into()).into();
        assert_eq!(
            e.to_string(),
            "git-rutter: the remote origin is not set up for rutter. Run `git rutter sync --setup origin` first (it checks that the remote is yours and makes `git fetch` bring the records)."
        );
        assert_eq!(e.exit_code(), EXIT_FINDING);
        let wrapped: CommandError = anyhow::Error::new(crate::vault::VaultError::NotConfigured)
            .context("opening the vault")
            .into();
        assert_eq!(
            wrapped.to_string(),
            "git-rutter: opening the vault: no vault configured. Pass --vault PATH, set LIBRARIAN_VAULT_PATH, or run `git rutter init --global` inside your notes vault."
        );
        assert_eq!(wrapped.exit_code(), EXIT_CANNOT_RUN);
        assert_eq!(wrapped.message(), "opening the vault: no vault configured");
    }

    /// A cause the message already names is not said twice (a store error wrapping a libgit2
    /// error printed `git: X: X`).
    #[test]
    fn a_cause_the_message_already_names_is_said_once() {
        let git = crate::store::StoreError::from(git2::Error::from_str("unknown object format"));
        let e: CommandError = anyhow::Error::new(git).context("reading the record").into();
        assert_eq!(
            e.to_string(),
            "git-rutter: reading the record: git: unknown object format"
        );
    }
}
