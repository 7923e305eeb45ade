//! Reading `session-record@1` day files: the YAML frontmatter the TypeScript reference writes.
//!
//! Owns the `@1` reader and nothing else (it never writes): splitting off the frontmatter, a
//! fast line parser for the reference's deterministic js-yaml 3 output, a full YAML fallback
//! (`yaml_serde`) for anything that parser does not recognise, the reference's validation, and
//! the byte offset where the generated body ends (entry lines may be appended after it).
//!
//! The two paths give identical results: the fast path only answers when its input is exactly
//! the reference's shape, and otherwise steps aside (`None`) so the fallback decides.

use crate::records::text::line_at;
use crate::records::Entry;

mod fallback;
mod fast;

pub(crate) use fast::EntryView;

/// What every accepted `schema` value starts with.
const SCHEMA_PREFIX: &str = "session-record@";

/// A parsed `@1` day file.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct V1File {
    pub day: String,
    /// The frontmatter's `schema`, e.g. `"session-record@1"`.
    pub schema: String,
    pub entries: Vec<Entry>,
    /// Byte offset just after the generated @1 body: after the closing `---` line of the
    /// frontmatter, the `# Sessions - DAY` heading line, one blank line, and as many non-empty
    /// lines as there are entries (stop early at EOF). Lines after this offset may hold appended
    /// @2 entry lines. The heading is consumed only when the line starts with `#`, and blank
    /// lines among the body lines are skipped without being counted.
    pub body_end: usize,
}

/// Why a day file yields no `@1` entries. The reference treats all of these as "file absent".
#[derive(Debug, thiserror::Error, PartialEq)]
pub(crate) enum V1Error {
    #[error("no YAML frontmatter")]
    NoFrontmatter,
    #[error("frontmatter is not valid YAML: {0}")]
    Yaml(String),
    #[error("not a session record: {0}")]
    Schema(String),
}

/// The frontmatter fields both parsing paths produce.
#[derive(Debug, Clone, PartialEq)]
struct Parsed {
    day: String,
    schema: String,
    entries: Vec<Entry>,
}

/// True when the text starts with a YAML frontmatter block (`---\n`, or `---\r\n`).
pub(crate) fn has_frontmatter(text: &str) -> bool {
    text.starts_with("---\n") || text.starts_with("---\r\n")
}

/// The byte offset just after the frontmatter's closing `---` line, when the text has a complete
/// frontmatter block (any content; nothing is parsed).
pub(crate) fn frontmatter_end(text: &str) -> Option<usize> {
    split_frontmatter(text).map(|(_, end)| end)
}

/// Parses a day file's YAML frontmatter (any schema value starting `session-record@`) into
/// entries. An unterminated frontmatter block counts as no frontmatter.
pub(crate) fn parse_v1(text: &str) -> Result<V1File, V1Error> {
    let fast = text.strip_prefix("---\n").and_then(fast::parse);
    let (parsed, close_end) = match fast {
        Some((parsed, consumed)) => (parsed, 4 + consumed),
        None => {
            let (fm, close_end) = split_frontmatter(text).ok_or(V1Error::NoFrontmatter)?;
            (fallback::parse(fm)?, close_end)
        }
    };
    let body_end = body_end(text, close_end, parsed.entries.len());
    Ok(V1File {
        day: parsed.day,
        schema: parsed.schema,
        entries: parsed.entries,
        body_end,
    })
}

/// The entries of an `@1` day file, borrowed from `text`, and where its generated body ends
/// ([`V1File::body_end`]), when the fast path reads its frontmatter; `None` when it steps aside
/// (then only [`parse_v1`] knows what the file holds). Where it answers, it answers what
/// [`parse_v1`] does: the same code reads both.
pub(crate) fn parse_v1_views(text: &str) -> Option<(Vec<EntryView<'_>>, usize)> {
    let (_, _, entries, consumed) = text.strip_prefix("---\n").and_then(fast::parse_views)?;
    let body_end = body_end(text, 4 + consumed, entries.len());
    Some((entries, body_end))
}

/// The frontmatter text (between the delimiter lines, ending in its last `\n`) and the offset
/// just after the closing `---` line. The block closes at the first line that is exactly `---`.
pub(crate) fn split_frontmatter(text: &str) -> Option<(&str, usize)> {
    let open = if text.starts_with("---\n") {
        4
    } else if text.starts_with("---\r\n") {
        5
    } else {
        return None;
    };
    let mut line_start = open;
    loop {
        let rest = text.get(line_start..)?;
        if let Some(after) = rest.strip_prefix("---") {
            let eol = if after.is_empty() {
                Some(0)
            } else if after.starts_with('\n') {
                Some(1)
            } else if after.starts_with("\r\n") {
                Some(2)
            } else {
                None
            };
            if let Some(eol) = eol {
                let fm = text.get(open..line_start)?;
                return Some((fm, line_start + 3 + eol));
            }
        }
        line_start += rest.find("\n---")? + 1;
    }
}

/// Where the generated body that starts at `from` ends (see [`V1File::body_end`]).
fn body_end(text: &str, from: usize, entries: usize) -> usize {
    let mut pos = from;
    if let Some((line, next)) = line_at(text, pos) {
        if line.starts_with('#') {
            pos = next;
        }
    }
    let mut left = entries;
    while left > 0 {
        let Some((line, next)) = line_at(text, pos) else {
            break;
        };
        if !line.bytes().all(|b| matches!(b, b' ' | b'\t' | b'\r')) {
            left -= 1;
        }
        pos = next;
    }
    pos
}

/// The reference's day check: `^\d{4}-\d{2}-\d{2}$` (ASCII digits).
fn valid_day(day: &str) -> bool {
    let b = day.as_bytes();
    b.len() == 10
        && b.iter().enumerate().all(|(i, c)| {
            if i == 4 || i == 7 {
                *c == b'-'
            } else {
                c.is_ascii_digit()
            }
        })
}

#[cfg(test)]
mod tests;
