//! The record model and its text formats: entry and retraction lines (`@2`), day files (`@1`
//! read, `@2` append), the status of each entry against the record, the identity ledger (`@1`
//! read, `@2` append), what a commit may add to each record file, the fingerprints a ref
//! carries, which entry supersedes which, the credentials a stored text may not hold (masked as
//! `[redacted:KIND]`), and the text helpers they share.

pub(crate) mod dayfile;
pub(crate) mod entry;
pub(crate) mod filter;
pub mod fingerprint;
pub(crate) mod grammar;
pub(crate) mod ids;
pub(crate) mod ledger;
pub mod line;
pub(crate) mod retraction;
pub(crate) mod rule;
pub mod secrets;
pub(crate) mod standing;
pub mod supersede;
pub(crate) mod text;
pub(crate) mod v1;
pub(crate) mod yaml_scalar;

pub use entry::{Entry, NoteRef, Step, Workspace};
pub use rule::Broken;

/// The bytes one append writes to a record file: `header` for an empty file, a separating
/// newline when the file lacks a final one, then the line and its newline.
pub(crate) fn append_bytes(len: u64, ends_with_newline: bool, header: &str, line: &str) -> String {
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

pub(crate) mod paths;
pub(crate) mod purge;
