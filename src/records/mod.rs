//! The record model and its text formats: entry lines (`@2`), day files (`@1` read, `@2` append).

pub mod dayfile;
pub mod entry;
pub mod line;
pub mod v1;

pub use entry::{Entry, NoteRef, Workspace};
