//! Appending one line to a record file: journal record first (in a git vault), then a single
//! `O_APPEND` write. The caller holds the capture lock and commits afterwards.

use super::journal::{Journal, PendingAppend};
use crate::fsx::{Dir, FsError};
use std::io::Write;

/// Appends `line` to `dir/name`. `header` starts an empty file; a newline is written first when
/// the file lacks a final one. `rec` describes the append for the journal (its `offset`, `bytes`
/// and `line` are filled in here). Returns the file's new length.
pub fn append_line(
    dir: &Dir,
    name: &str,
    header: &str,
    line: &str,
    journal: Option<&Journal>,
    mut rec: PendingAppend,
) -> Result<u64, FsError> {
    let mut target = dir.open_append(name)?;
    let bytes = crate::records::append_bytes(target.len, target.ends_with_newline, header, line);
    if let Some(j) = journal {
        rec.offset = target.len;
        rec.bytes = bytes.clone();
        rec.line = line.to_string();
        j.add(&rec)?;
    }
    target
        .file
        .write_all(bytes.as_bytes())
        .map_err(|e| FsError::Io {
            path: target.path.clone(),
            source: e,
        })?;
    Ok(target.len + bytes.len() as u64)
}
