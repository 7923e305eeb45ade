//! The record model and its text formats: entry and retraction lines (`@2`), day files (`@1`
//! read, `@2` append), the status of each entry against the record, the identity ledger (`@1`
//! read, `@2` append), the fingerprints a ref carries, and the text helpers they share.

pub mod dayfile;
pub mod entry;
pub mod fingerprint;
pub mod ledger;
pub mod line;
pub mod retraction;
pub mod status;
pub mod text;
pub mod v1;

pub use entry::{Entry, NoteRef, Step, Workspace};

/// The bytes one append writes to a record file: `header` for an empty file, a separating
/// newline when the file lacks a final one, then the line and its newline.
pub fn append_bytes(len: u64, ends_with_newline: bool, header: &str, line: &str) -> String {
    let mut out = String::with_capacity(line.len() + header.len() + 2);
    if len == 0 {
        out.push_str(header);
    } else if !ends_with_newline {
        out.push('\n');
    }
    out.push_str(line);
    out.push('\n');
    out
}

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
