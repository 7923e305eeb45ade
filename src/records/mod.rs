//! The record model and its text formats: entry lines (`@2`), day files (`@1` read, `@2` append).

pub mod dayfile;
pub mod entry;
pub mod ledger;
pub mod fingerprint;
pub mod line;
pub mod v1;

pub use entry::{Entry, NoteRef, Workspace};

/// Vault-relative paths of the record files (DESIGN §3).
pub mod paths {
    /// Day files: `_librarian/sessions/YYYY-MM-DD.md`.
    pub const SESSIONS_DIR: &str = "_librarian/sessions";
    /// The identity ledger.
    pub const IDENTITY_LEDGER: &str = "_librarian/note-identity.md";
    /// The use log for the gate.
    pub const USE_LOG: &str = "_librarian/stateful-use.jsonl";
    /// Legacy position streams, carried in the ref and never written.
    pub const POSITIONS_DIR: &str = "_librarian/positions";

    /// The vault-relative path of a day file.
    pub fn day_file(day: &str) -> String {
        format!("{SESSIONS_DIR}/{day}.md")
    }
}
