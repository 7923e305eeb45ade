//! Appending one line to a record file: journal record first (in a git vault), then a single
//! `O_APPEND` write. The caller holds the capture lock and commits afterwards.

use super::journal::{Journal, PendingAppend};
use crate::fsx::{Dir, FsError};
use std::io::{Seek, Write};

/// Appends `line` to `dir/name`. A missing file is first published holding `header` alone
/// (whole, so two captures that both find it missing never both write a header); a newline is
/// written first when the file lacks a final one. `rec` describes the append for the journal
/// (its `offset`, `bytes` and `line` are filled in here, the offset corrected after the write
/// when another process appended in between). Returns the file's new length.
pub fn append_line(
    dir: &Dir,
    name: &str,
    header: &str,
    line: &str,
    journal: Option<&Journal>,
    mut rec: PendingAppend,
) -> Result<u64, FsError> {
    let mut target = match dir.open_append_existing(name)? {
        Some(t) => t,
        None if header.is_empty() => dir.open_append(name)?,
        None => {
            dir.publish_new(name, header.as_bytes())?;
            dir.open_append(name)?
        }
    };
    let bytes = crate::records::append_bytes(target.len, target.ends_with_newline, header, line);
    let io = |e| FsError::Io {
        path: target.path.clone(),
        source: e,
    };
    if let Some(j) = journal {
        rec.offset = target.len;
        rec.bytes = bytes.clone();
        rec.line = line.to_string();
        j.add(&rec)?;
    }
    target.file.write_all(bytes.as_bytes()).map_err(io)?;
    // O_APPEND wrote at the end as it was then: later than `len` if another capture (without
    // the lock) appended since the open.
    let end = target.file.stream_position().map_err(io)?;
    let at = end - bytes.len() as u64;
    if let (Some(j), true) = (journal, at != rec.offset) {
        rec.offset = at;
        j.add(&rec)?;
    }
    Ok(end)
}
