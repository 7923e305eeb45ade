//! The fast path of the `@1` reader: exactly the lines js-yaml 3 writes for a reference record,
//! nothing else. It answers only when its input is exactly that shape and steps aside (`None`)
//! otherwise, so the fallback decides.

use std::borrow::Cow;

use serde_json::Map;

use super::{valid_day, Parsed, SCHEMA_PREFIX};
use crate::records::yaml_scalar::{may_retype, Readers};
use crate::records::{Entry, NoteRef, Workspace};

/// The line patterns of one `refs` block at one indentation.
struct RefsShape {
    empty: &'static str,
    open: &'static str,
    path: &'static str,
    hash: &'static str,
}

const ENTRY_REFS: RefsShape = RefsShape {
    empty: "    refs: []",
    open: "    refs:",
    path: "      - path: ",
    hash: "        hash: ",
};
const TOP_REFS: RefsShape = RefsShape {
    empty: "refs: []",
    open: "refs:",
    path: "  - path: ",
    hash: "    hash: ",
};

/// Characters js-yaml never writes first in a plain scalar (YAML indicators).
const FIRST_UNSAFE: &[u8] = b"-?:,[]{}#&*!|=>'\"%@`";

/// One entry as the fast path reads it: each value borrowed from the text unless an escape or
/// a doubled quote had to be undone. [`EntryView::into_entry`] makes it the [`Entry`]; the
/// dedupe keys are read from it without that (`crate::records::dayfile::dedupe_keys`).
#[derive(Debug)]
pub(crate) struct EntryView<'a> {
    pub id: Cow<'a, str>,
    pub session_id: Option<Cow<'a, str>>,
    pub time: Cow<'a, str>,
    pub summary: Cow<'a, str>,
    /// Each ref's path and hash.
    pub refs: Vec<(Cow<'a, str>, Cow<'a, str>)>,
    pub workspace: Option<WorkspaceView<'a>>,
}

/// A workspace's `cwd`, `project` and `repo`, as [`EntryView`] holds them.
pub(crate) type WorkspaceView<'a> = (Cow<'a, str>, Cow<'a, str>, Option<Cow<'a, str>>);

impl EntryView<'_> {
    /// The entry, its values owned.
    pub(crate) fn into_entry(self) -> Entry {
        Entry {
            id: self.id.into_owned(),
            session_id: self.session_id.map(Cow::into_owned),
            time: self.time.into_owned(),
            summary: self.summary.into_owned(),
            refs: self
                .refs
                .into_iter()
                .map(|(path, hash)| NoteRef {
                    path: path.into_owned(),
                    hash: hash.into_owned(),
                    blob: None,
                    extra: Map::new(),
                })
                .collect(),
            workspace: self.workspace.map(|(cwd, project, repo)| Workspace {
                cwd: cwd.into_owned(),
                project: project.into_owned(),
                repo: repo.map(Cow::into_owned),
                extra: Map::new(),
            }),
            client: None,
            supersedes: None,
            extra: Map::new(),
        }
    }
}

/// Parses the text after the opening `---\n` up to and including the closing `---` line:
/// the record and how many bytes that took. `None` when the frontmatter is not exactly the
/// reference's shape, or is invalid in any way (the fallback then produces the error).
///
/// No line it accepts before the closing one is `---`, so it closes where
/// [`super::split_frontmatter`] does.
pub(super) fn parse(text: &str) -> Option<(Parsed, usize)> {
    let (day, schema, entries, used) = parse_views(text)?;
    let parsed = Parsed {
        day,
        schema,
        entries: entries.into_iter().map(EntryView::into_entry).collect(),
    };
    Some((parsed, used))
}

/// [`parse`], its entries borrowed: the day, the schema, the entries and the bytes used.
pub(super) fn parse_views(text: &str) -> Option<(String, String, Vec<EntryView<'_>>, usize)> {
    let mut lines = Lines::new(text);
    lines.scalar("collection: ")?;
    let schema = lines.field("schema: ")?;
    let day = lines.field("day: ")?;
    if !schema.starts_with(SCHEMA_PREFIX) || !valid_day(&day) {
        return None;
    }
    lines.exact("sessions:")?;
    let mut entries = Vec::new();
    while lines.peek()?.starts_with("  - id: ") {
        entries.push(entry(&mut lines)?);
    }
    if entries.is_empty() {
        return None;
    }
    refs(&mut lines, &TOP_REFS, |_, _| ())?;
    if lines.peek()? != "---" {
        return None;
    }
    // `rest` starts just after the current (closing) line.
    let used = text.len() - lines.rest.len();
    Some((day, schema, entries, used))
}

fn entry<'a>(lines: &mut Lines<'a>) -> Option<EntryView<'a>> {
    let id = lines.scalar("  - id: ")?;
    let session_id = lines.opt_scalar("    session_id: ")?;
    let time = lines.scalar("    time: ")?;
    let summary = lines.scalar("    summary: ")?;
    let refs = refs(lines, &ENTRY_REFS, |path, hash| (path, hash))?;
    let workspace = if lines.peek() == Some("    workspace:") {
        lines.advance();
        Some((
            lines.scalar("      cwd: ")?,
            lines.scalar("      project: ")?,
            lines.opt_scalar("      repo: ")?,
        ))
    } else {
        None
    };
    Some(EntryView {
        id,
        session_id,
        time,
        summary,
        refs,
        workspace,
    })
}

/// A `refs: []` line, or `refs:` and one or more `- path:`/`hash:` pairs.
fn refs<'a, T>(
    lines: &mut Lines<'a>,
    shape: &RefsShape,
    mut make: impl FnMut(Cow<'a, str>, Cow<'a, str>) -> T,
) -> Option<Vec<T>> {
    let line = lines.take()?;
    if line == shape.empty {
        return Some(Vec::new());
    }
    if line != shape.open {
        return None;
    }
    let mut out = Vec::new();
    while lines.peek().is_some_and(|l| l.starts_with(shape.path)) {
        let path = lines.scalar(shape.path)?;
        let hash = lines.scalar(shape.hash)?;
        out.push(make(path, hash));
    }
    (!out.is_empty()).then_some(out)
}

/// Line cursor over the frontmatter. `\n` is the only line break: a value holding another
/// YAML break (CR, NEL, U+2028, U+2029) is refused by [`scalar`].
struct Lines<'a> {
    cur: Option<&'a str>,
    rest: &'a str,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Self {
        let mut lines = Lines {
            cur: None,
            rest: text,
        };
        lines.advance();
        lines
    }

    fn advance(&mut self) {
        if self.rest.is_empty() {
            self.cur = None;
            return;
        }
        let (line, rest) = self.rest.split_once('\n').unwrap_or((self.rest, ""));
        self.cur = Some(line);
        self.rest = rest;
    }

    fn peek(&self) -> Option<&'a str> {
        self.cur
    }

    fn take(&mut self) -> Option<&'a str> {
        let line = self.cur?;
        self.advance();
        Some(line)
    }

    fn exact(&mut self, want: &str) -> Option<()> {
        (self.take()? == want).then_some(())
    }

    /// The scalar after `prefix` on the current line, which is consumed.
    fn scalar(&mut self, prefix: &str) -> Option<Cow<'a, str>> {
        let value = scalar(self.cur?.strip_prefix(prefix)?)?;
        self.advance();
        Some(value)
    }

    fn field(&mut self, prefix: &str) -> Option<String> {
        self.scalar(prefix).map(Cow::into_owned)
    }

    /// `Some(None)` when the current line is not this key; `None` when it is but is invalid.
    fn opt_scalar(&mut self, prefix: &str) -> Option<Option<Cow<'a, str>>> {
        match self.cur {
            Some(line) if line.starts_with(prefix) => self.scalar(prefix).map(Some),
            _ => Some(None),
        }
    }
}

/// Byte classes for [`scan`].
const INDICATOR: u8 = 1; // `:` `,` `[` `]` `{` `}`: js-yaml quotes strings holding them
const HASH: u8 = 2; // `#`: a comment when it follows a space
const CONTROL: u8 = 4; // controls (tab and CR included) and DEL: left to the fallback
const NON_ASCII: u8 = 8; // checked further by `clean_non_ascii`

/// The union of the classes of a value's bytes (branch-free, so it vectorises).
fn scan(bytes: &[u8]) -> u8 {
    let (mut indicator, mut hash, mut control, mut non_ascii) = (false, false, false, false);
    for &b in bytes {
        indicator |= matches!(b, b':' | b',' | b'[' | b']' | b'{' | b'}');
        hash |= b == b'#';
        control |= b < 0x20 || b == 0x7F;
        non_ascii |= b >= 0x80;
    }
    [
        (indicator, INDICATOR),
        (hash, HASH),
        (control, CONTROL),
        (non_ascii, NON_ASCII),
    ]
    .iter()
    .filter(|(seen, _)| *seen)
    .fold(0, |acc, (_, class)| acc | class)
}

/// False when the (valid UTF-8) bytes hold a non-ASCII character the fast path leaves to
/// the fallback: C1 controls (NEL included), U+2028, U+2029, U+FEFF, U+FFFE and U+FFFF.
fn clean_non_ascii(bytes: &[u8]) -> bool {
    bytes.iter().enumerate().all(|(i, &c)| {
        let next = |k: usize| bytes.get(i + k).copied();
        !match c {
            0xC2 => matches!(next(1), Some(0x80..=0x9F)),
            0xE2 => next(1) == Some(0x80) && matches!(next(2), Some(0xA8 | 0xA9)),
            0xEF => matches!(
                (next(1), next(2)),
                (Some(0xBB), Some(0xBF)) | (Some(0xBF), Some(0xBE | 0xBF))
            ),
            _ => false,
        }
    })
}

/// A whole-line scalar value: plain, single-quoted or double-quoted.
fn scalar(raw: &str) -> Option<Cow<'_, str>> {
    let bytes = raw.as_bytes();
    let classes = scan(bytes);
    if classes & CONTROL != 0 || (classes & NON_ASCII != 0 && !clean_non_ascii(bytes)) {
        return None;
    }
    match bytes.first()? {
        b'\'' => single_quoted(raw),
        b'"' => double_quoted(raw).map(Cow::Owned),
        _ => plain(raw, classes).map(Cow::Borrowed),
    }
}

/// A plain scalar js-yaml would write and YAML reads back as this same string.
fn plain(raw: &str, classes: u8) -> Option<&str> {
    let bytes = raw.as_bytes();
    let first = *bytes.first()?;
    if FIRST_UNSAFE.contains(&first) || first == b' ' || bytes.last() == Some(&b' ') {
        return None;
    }
    if classes & INDICATOR != 0 || (classes & HASH != 0 && raw.contains(" #")) {
        return None;
    }
    (!may_retype(raw, Readers::Core)).then_some(raw)
}

/// `'...'` with `''` for a quote, closing at the end of the line.
fn single_quoted(raw: &str) -> Option<Cow<'_, str>> {
    let inner = raw.strip_prefix('\'')?.strip_suffix('\'')?;
    if !inner.contains('\'') {
        return Some(Cow::Borrowed(inner));
    }
    let mut out = String::with_capacity(inner.len());
    let mut rest = inner;
    while let Some(i) = rest.find('\'') {
        let (head, tail) = rest.split_at(i + 1);
        if !tail.starts_with('\'') {
            return None;
        }
        out.push_str(head);
        rest = &tail[1..];
    }
    out.push_str(rest);
    Some(Cow::Owned(out))
}

/// `"..."` with YAML escapes, closing at the end of the line.
fn double_quoted(raw: &str) -> Option<String> {
    let inner = raw.strip_prefix('"')?.strip_suffix('"')?;
    let mut out = String::with_capacity(inner.len());
    let mut rest = inner;
    while let Some(i) = rest.find(['\\', '"']) {
        let (head, tail) = rest.split_at(i);
        let escaped = tail.strip_prefix('\\')?;
        let (c, used) = escape(escaped)?;
        out.push_str(head);
        out.push(c);
        rest = escaped.get(used..)?;
    }
    out.push_str(rest);
    Some(out)
}

/// One escape (the text after the backslash): the character and how many bytes it used.
fn escape(s: &str) -> Option<(char, usize)> {
    let c = match s.as_bytes().first()? {
        b'0' => '\0',
        b'a' => '\x07',
        b'b' => '\x08',
        b't' => '\t',
        b'n' => '\n',
        b'v' => '\x0B',
        b'f' => '\x0C',
        b'r' => '\r',
        b'e' => '\x1B',
        b' ' => ' ',
        b'"' => '"',
        b'/' => '/',
        b'\\' => '\\',
        b'N' => '\u{85}',
        b'_' => '\u{A0}',
        b'L' => '\u{2028}',
        b'P' => '\u{2029}',
        b'x' => return hex_escape(s, 2),
        b'u' => return hex_escape(s, 4),
        b'U' => return hex_escape(s, 8),
        _ => return None,
    };
    Some((c, 1))
}

fn hex_escape(s: &str, digits: usize) -> Option<(char, usize)> {
    let hex = s.get(1..1 + digits)?;
    if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let code = u32::from_str_radix(hex, 16).ok()?;
    Some((char::from_u32(code)?, 1 + digits))
}
