//! Text helpers shared by the record formats: the display-safe human part of a record line,
//! terminal-safe output, JavaScript whitespace (the reference trims with it),
//! line walking, unified diffs, and YAML values as JSON (for unknown keys of `@1` files).

use super::Broken;
use serde_json::Value as Json;
use std::fmt::Write as _;
use yaml_serde::Value as Yaml;

/// The unified diff from `old` to `new` (as text, each invalid sequence as U+FFFD), with
/// `radius` lines of context and the two names in its header. Lines end at `\n` only, as git
/// and `str::lines` read them: a lone CR stays inside its line (where the terminal-safe output
/// shows it as `\u{000D}`), so the hunk counts agree with the lines shown.
pub(crate) fn unified_diff(old: &[u8], new: &[u8], radius: usize, names: (&str, &str)) -> String {
    let (a, b) = (lossy(old), lossy(new));
    let a: Vec<&str> = a.split_inclusive('\n').collect();
    let b: Vec<&str> = b.split_inclusive('\n').collect();
    similar::TextDiff::configure()
        .newline_terminated(true)
        .diff_slices(&a, &b)
        .unified_diff()
        .context_radius(radius)
        .header(names.0, names.1)
        .to_string()
}

/// `bytes` as text, each invalid sequence as U+FFFD (as [`String::from_utf8_lossy`]), checked
/// by the standard library's fast validator first: the lossy one walks byte by byte, a tenth of
/// `init`'s CPU over 79 MB of day files that are almost always valid (docs/performance.md,
/// "Stop 47").
pub(crate) fn lossy(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(text) => std::borrow::Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// Appends the display-safe form of `s`: `<` as `&lt;`, invisible or line-breaking characters
/// as visible `\u{XXXX}` text (grammar in `spec/record-format.md`).
pub(crate) fn push_display_safe(out: &mut String, s: &str) {
    for c in s.chars() {
        if c == '<' {
            out.push_str("&lt;");
        } else if is_unsafe_for_display(c) {
            let _ = write!(out, "\\u{{{:04X}}}", c as u32);
        } else {
            out.push(c);
        }
    }
}

/// `text` (a path, a name) made safe for one line of a terminal message: as [`terminal_safe`],
/// and newlines, tabs and carriage returns shown as `\u{XXXX}` too, so it cannot start a line
/// of its own.
pub(crate) fn one_line_safe(text: &str) -> String {
    field_safe(text).into_owned()
}

/// One field of a record (a path, a project, a client, a summary) as it is shown wherever it is
/// printed whole on one line, in a terminal or on the timeline's page: every character
/// [`push_display_safe`] would escape (controls, line breaks, bidi and invisible format
/// characters) as visible `\u{XXXX}` text, so the field can neither start a line of its own
/// nor reorder or hide what is shown next to it. Borrowed when there is nothing to escape.
pub(crate) fn field_safe(text: &str) -> std::borrow::Cow<'_, str> {
    if scan_safe(text, false) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    push_escaped(&mut out, text);
    std::borrow::Cow::Owned(out)
}

/// Appends [`field_safe`] of `text` to `out`.
pub(crate) fn push_field(out: &mut String, text: &str) {
    if scan_safe(text, false) {
        out.push_str(text);
    } else {
        push_escaped(out, text);
    }
}

/// Makes what was appended to `out` since byte `start` (one field, written there by another
/// function) [`field_safe`]; nothing is copied when it holds nothing to escape.
pub(crate) fn field_safe_since(out: &mut String, start: usize) {
    let Some(tail) = out.get(start..) else {
        return;
    };
    if !scan_safe(tail, false) {
        let tail = out.split_off(start);
        push_escaped(out, &tail);
    }
}

fn push_escaped(out: &mut String, text: &str) {
    for c in text.chars() {
        if is_unsafe_for_display(c) {
            let _ = write!(out, "\\u{{{:04X}}}", c as u32);
        } else {
            out.push(c);
        }
    }
}

/// `text` made safe for a terminal: every character [`push_display_safe`] would escape, except
/// `\n`, `\t` and the `\r` of a `\r\n`, becomes visible `\u{XXXX}` text, so a hand-edited or
/// forged record cannot move the cursor, recolour or reorder what an audit prints.
pub(crate) fn terminal_safe(text: &str) -> std::borrow::Cow<'_, str> {
    let keep = |c: char, next: Option<char>| {
        !is_unsafe_for_display(c) || c == '\n' || c == '\t' || (c == '\r' && next == Some('\n'))
    };
    if scan_safe(text, true) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if keep(c, chars.peek().copied()) {
            out.push(c);
        } else {
            let _ = write!(out, "\\u{{{:04X}}}", c as u32);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Whether [`terminal_safe`] (`layout`: newlines, tabs and the CR of a CRLF are kept) or
/// [`field_safe`] (not `layout`) leaves `text` as it is. A scan of bytes that decodes only the
/// non-ASCII characters: `recent --all` checks all of the record's text, and decoding every
/// character with a lookahead was a noticeable part of its time.
fn scan_safe(text: &str, layout: bool) -> bool {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        // Printable ASCII, the common case, a block at a time: the test has no branch per
        // byte, so the compiler checks a block in a few vector instructions (`recent --all`
        // checks 25 MB; byte by byte it was a tenth of its time).
        if let Some(block) = bytes.get(i..i + BLOCK) {
            if block.iter().fold(true, |ok, &b| ok & printable_ascii(b)) {
                i += BLOCK;
                continue;
            }
        }
        // A block with anything else: its bytes one by one (a character may end past it).
        let end = (i + BLOCK).min(bytes.len());
        while i < end {
            match scan_one(text, i, layout) {
                Some(next) => i = next,
                None => return false,
            }
        }
    }
    true
}

/// Bytes [`scan_safe`] checks together.
const BLOCK: usize = 16;

fn printable_ascii(b: u8) -> bool {
    b.wrapping_sub(0x20) < 0x5F
}

/// Where the scan goes on after the character at byte `i` of `text`, or `None` when that
/// character is not left as it is.
fn scan_one(text: &str, i: usize, layout: bool) -> Option<usize> {
    let bytes = text.as_bytes();
    match *bytes.get(i)? {
        b if printable_ascii(b) => Some(i + 1),
        b'\n' | b'\t' if layout => Some(i + 1),
        b'\r' if layout && bytes.get(i + 1) == Some(&b'\n') => Some(i + 1),
        0x80.. => match text.get(i..).and_then(|rest| rest.chars().next()) {
            Some(c) if !is_unsafe_for_display(c) => Some(i + c.len_utf8()),
            _ => None,
        },
        _ => None,
    }
}

/// JSON text with every character [`push_display_safe`] would escape written as a JSON `\uXXXX`
/// escape (the same value; serde_json leaves DEL, C1 controls and bidi marks raw).
pub(crate) fn json_terminal_safe(json: &str) -> std::borrow::Cow<'_, str> {
    let bytes = json.as_bytes();
    let (mut out, mut kept, mut i) = (String::new(), 0, 0);
    while let Some(&b) = bytes.get(i) {
        // Outside strings serde_json writes only ASCII punctuation, digits, letters, spaces and
        // newlines; newlines are the pretty printer's. A run of those is passed over a byte at a
        // time and copied whole (`recent --all --json` is megabytes of it).
        if printable_ascii(b) || b == b'\n' {
            i += 1;
            continue;
        }
        // `i` is always where a character starts (it moves by a byte over ASCII and by the
        // character's length otherwise), so this always finds one. (A walk by `char_indices`
        // instead was 18 % slower on `recent --all --json`.)
        let Some(c) = json.get(i..).and_then(|rest| rest.chars().next()) else {
            break;
        };
        let next = i + c.len_utf8();
        if is_unsafe_for_display(c) {
            out.push_str(&json[kept..i]);
            let _ = write!(out, "\\u{:04x}", c as u32);
            kept = next;
        }
        i = next;
    }
    if kept == 0 {
        return std::borrow::Cow::Borrowed(json);
    }
    out.push_str(&json[kept..]);
    std::borrow::Cow::Owned(out)
}

/// A writer of JSON text that escapes on the way through what [`json_terminal_safe`] escapes,
/// so an answer is streamed rather than held whole (`recent --all --json` of a heavy vault is
/// most of a gigabyte). A character a write cuts is carried to the next one.
pub(crate) struct JsonSafe<W: std::io::Write> {
    inner: W,
    /// The first bytes of a character the last write cut (at most three).
    carry: Vec<u8>,
}

impl<W: std::io::Write> JsonSafe<W> {
    pub(crate) fn new(inner: W) -> Self {
        JsonSafe {
            inner,
            carry: Vec::new(),
        }
    }

    /// A `JsonSafe` over `inner` behind a 64 KiB buffer: how every `--json` answer is written.
    pub(crate) fn buffered(inner: W) -> std::io::BufWriter<Self> {
        std::io::BufWriter::with_capacity(1 << 16, JsonSafe::new(inner))
    }

    /// Writes the text `bytes` begin with, and keeps a cut character's bytes for later.
    fn pass(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        let not_text = || {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "JSON text that is not UTF-8",
            )
        };
        let (text, rest) = match std::str::from_utf8(bytes) {
            Ok(text) => (text, &[][..]),
            Err(e) if e.error_len().is_none() => {
                let (head, rest) = bytes.split_at(e.valid_up_to());
                (std::str::from_utf8(head).map_err(|_| not_text())?, rest)
            }
            Err(_) => return Err(not_text()),
        };
        self.inner.write_all(json_terminal_safe(text).as_bytes())?;
        self.carry = rest.to_vec();
        Ok(())
    }
}

impl<W: std::io::Write> std::io::Write for JsonSafe<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self.carry.is_empty() {
            true => self.pass(buf)?,
            false => {
                let mut joined = std::mem::take(&mut self.carry);
                joined.extend_from_slice(buf);
                self.pass(&joined)?;
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if !self.carry.is_empty() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "JSON text that ends inside a character",
            ));
        }
        self.inner.flush()
    }
}

fn is_unsafe_for_display(c: char) -> bool {
    matches!(c as u32,
        0x00..=0x1F | 0x7F..=0x9F | 0x2028 | 0x2029 | 0x061C | 0x200B..=0x200F
        | 0x202A..=0x202E | 0x2060 | 0x2066..=0x2069 | 0xFEFF)
}

/// JavaScript's `\s` / `String.prototype.trim` set: WhiteSpace plus LineTerminator. Unlike
/// `char::is_whitespace` it includes U+FEFF and excludes U+0085.
pub(crate) fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{B}' | '\u{C}' | '\r' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202F}'
                | '\u{205F}'
                | '\u{3000}'
                | '\u{FEFF}'
    )
}

/// The line starting at `pos` (without its `\n`) and the offset of the next line.
pub(crate) fn line_at(text: &str, pos: usize) -> Option<(&str, usize)> {
    let rest = text.get(pos..).filter(|rest| !rest.is_empty())?;
    Some(match rest.find('\n') {
        Some(i) => (&rest[..i], pos + i + 1),
        None => (rest, text.len()),
    })
}

/// A YAML value without its tags.
pub(crate) fn untag(mut value: &Yaml) -> &Yaml {
    while let Yaml::Tagged(tagged) = value {
        value = &tagged.value;
    }
    value
}

/// A mapping key as a JSON key: strings as they are, other scalars in their YAML form.
pub(crate) fn key_string(key: &Yaml) -> Result<String, Broken> {
    match untag(key) {
        Yaml::String(s) => Ok(s.clone()),
        Yaml::Number(n) => Ok(n.to_string()),
        Yaml::Bool(b) => Ok(b.to_string()),
        Yaml::Null => Ok("null".into()),
        _ => Err("a mapping key is not a scalar".into()),
    }
}

/// A YAML value as JSON, for unknown keys. Tags are dropped; numbers stay numbers (a
/// non-finite float, which JSON cannot hold, becomes its YAML text such as `.inf`).
pub(crate) fn to_json(value: &Yaml) -> Result<Json, Broken> {
    Ok(match untag(value) {
        Yaml::Null => Json::Null,
        Yaml::Bool(b) => Json::Bool(*b),
        Yaml::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => Json::from(i),
            (_, Some(u)) => Json::from(u),
            _ => n
                .as_f64()
                .and_then(serde_json::Number::from_f64)
                .map_or_else(|| Json::String(n.to_string()), Json::Number),
        },
        Yaml::String(s) => Json::String(s.clone()),
        Yaml::Sequence(items) => Json::Array(items.iter().map(to_json).collect::<Result<_, _>>()?),
        Yaml::Mapping(map) => Json::Object(
            map.iter()
                .map(|(k, v)| Ok((key_string(k)?, to_json(v)?)))
                .collect::<Result<_, Broken>>()?,
        ),
        Yaml::Tagged(_) => return Err("unexpected nested tag".into()),
    })
}

/// Property-test strategies shared by the record formats.
#[cfg(test)]
pub(crate) mod strategies {
    use proptest::prelude::*;

    /// Hostile text for any field of a record line: arbitrary strings, or runs of the fragments
    /// that could split, forge or hide a line (comment delimiters, line breaks, bidi and
    /// terminal controls, NUL, an escaped `<`, an astral character) plus `markers`, the
    /// format's own markers and separators, mixed with plain words.
    pub(crate) fn hostile_text(markers: &[&str]) -> impl Strategy<Value = String> {
        let fragments: Vec<String> = [
            "-->",
            "<!--",
            "\n",
            "\r",
            "\u{2028}",
            "\u{202E}",
            "\u{1b}[2J",
            "\0",
            "&lt;",
            "😀",
        ]
        .iter()
        .chain(markers)
        .map(|s| s.to_string())
        .collect();
        let weight = u32::try_from(fragments.len()).unwrap_or(u32::MAX);
        prop_oneof![
            any::<String>(),
            prop::collection::vec(
                prop_oneof![
                    weight => prop::sample::select(fragments),
                    1 => "[a-z ]{0,5}",
                ],
                0..12
            )
            .prop_map(|v| v.concat()),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn acts_on_a_terminal(s: &str) -> bool {
        let mut chars = s.chars().peekable();
        while let Some(c) = chars.next() {
            let crlf = c == '\r' && chars.peek() == Some(&'\n');
            if is_unsafe_for_display(c) && c != '\n' && c != '\t' && !crlf {
                return true;
            }
        }
        false
    }

    #[test]
    fn terminal_safe_keeps_layout_and_shows_the_rest() {
        assert_eq!(terminal_safe("a\tb\r\nc\n"), "a\tb\r\nc\n");
        assert_eq!(
            terminal_safe("x\u{1b}[2Ky\rz\u{202e}"),
            "x\\u{001B}[2Ky\\u{000D}z\\u{202E}"
        );
        assert!(matches!(
            terminal_safe("plain"),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    /// A lone CR stays inside its line: the hunk counts the lines shown.
    #[test]
    fn a_unified_diff_splits_lines_at_newlines_only() {
        let d = unified_diff(
            b"one\rstill one\ntwo\n",
            b"one\rstill one\ntwo!\n",
            3,
            ("a", "b"),
        );
        assert_eq!(
            d,
            "--- a\n+++ b\n@@ -1,2 +1,2 @@\n one\rstill one\n-two\n+two!\n"
        );
        let d = unified_diff(b"x\ny", b"x\nz", 3, ("a", "b"));
        assert!(d.ends_with("+z\n\\ No newline at end of file\n"), "{d}");
    }

    proptest! {

        /// Without a lone CR, the diff is the one `similar` makes of lines.
        #[test]
        fn a_unified_diff_without_lone_crs_is_similars_line_diff(
            a in "(x|y|z|\r\n|\n){0,24}",
            b in "(x|y|z|\r\n|\n){0,24}",
        ) {
            let want = similar::TextDiff::from_lines(a.as_str(), b.as_str())
                .unified_diff()
                .context_radius(2)
                .header("a", "b")
                .to_string();
            prop_assert_eq!(unified_diff(a.as_bytes(), b.as_bytes(), 2, ("a", "b")), want);
        }
        /// The fast path reads any bytes, valid or not, as the lossy reading does.
        #[test]
        fn lossy_is_the_standard_lossy_reading(
            bytes in prop_oneof![
                any::<String>().prop_map(String::into_bytes),
                prop::collection::vec(any::<u8>(), 0..64),
            ]
        ) {
            prop_assert_eq!(lossy(&bytes), String::from_utf8_lossy(&bytes));
        }

        #[test]
        fn terminal_safe_output_never_acts_on_a_terminal(s in any::<String>()) {
            prop_assert!(!acts_on_a_terminal(&terminal_safe(&s)));
        }

        #[test]
        fn the_byte_scan_agrees_with_the_characters(
            s in proptest::string::string_regex("[a\\r\\n\\t\u{1b}\u{7f}\u{85}\u{9f}\u{a0}\u{61c}\u{200b}\u{2014}\u{2028}\u{202e}\u{2066}\u{feff}\u{1f600}]{0,12}").unwrap(),
            t in any::<String>(),
            // Long runs of printable ASCII between the characters that matter, so whole
            // blocks are skipped and a block that holds one is read byte by byte.
            u in proptest::string::string_regex("([ -~]{0,40}(\\r\\n|[\\r\\n\\t\u{1b}\u{7f}\u{85}\u{e9}\u{2028}\u{202e}\u{1f600}])?){0,8}").unwrap(),
        ) {
            for text in [&s, &t, &u] {
                let mut chars = text.chars().peekable();
                let mut safe = true;
                while let Some(c) = chars.next() {
                    let next = chars.peek().copied();
                    safe &= !is_unsafe_for_display(c)
                        || c == '\n'
                        || c == '\t'
                        || (c == '\r' && next == Some('\n'));
                }
                prop_assert_eq!(scan_safe(text, true), safe, "{:?}", text);
                prop_assert_eq!(scan_safe(text, false), !text.chars().any(is_unsafe_for_display), "{:?}", text);
            }
        }

        /// A field shown on one line holds no character that acts on a terminal or a
        /// browser's layout (no line break, no bidi control), and each escaped character reads
        /// back from its `\u{XXXX}`; `one_line_safe`, `push_field` and `field_safe_since` agree.
        #[test]
        fn a_field_is_one_inert_line(s in crate::records::text::strategies::hostile_text(&["\u{2066}", "\u{200f}", "\u{61c}", "\u{feff}", "\t"])) {
            let safe = field_safe(&s);
            prop_assert!(!safe.chars().any(is_unsafe_for_display), "{:?}", safe);
            prop_assert_eq!(safe.lines().count(), usize::from(!s.is_empty()));
            let mut back = String::new();
            let mut rest = safe.as_ref();
            while let Some(at) = rest.find("\\u{") {
                back.push_str(&rest[..at]);
                let end = rest[at..].find('}').unwrap() + at;
                let code = u32::from_str_radix(&rest[at + 3..end], 16).unwrap();
                let c = char::from_u32(code).unwrap();
                if is_unsafe_for_display(c) {
                    back.push(c);
                } else {
                    back.push_str(&rest[at..=end]);
                }
                rest = &rest[end + 1..];
            }
            back.push_str(rest);
            if !s.contains("\\u{") {
                prop_assert_eq!(&back, &s);
            }
            prop_assert_eq!(one_line_safe(&s), safe.as_ref());
            let mut pushed = String::from("a\n");
            push_field(&mut pushed, &s);
            prop_assert_eq!(&pushed[2..], safe.as_ref());
            let mut since = format!("a\n{s}");
            field_safe_since(&mut since, 2);
            prop_assert_eq!(since, pushed);
        }

        #[test]
        fn json_terminal_safe_keeps_the_value(s in any::<String>()) {
            let value = serde_json::json!({ "s": s, "list": [s.clone()] });
            let pretty = serde_json::to_string_pretty(&value).unwrap();
            let safe = json_terminal_safe(&pretty);
            prop_assert!(!safe.chars().any(|c| is_unsafe_for_display(c) && c != '\n'));
            let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
            prop_assert_eq!(back, value);
            // Text with nothing to escape is passed through, not copied.
            prop_assert_eq!(
                matches!(safe, std::borrow::Cow::Borrowed(_)),
                !pretty.chars().any(|c| is_unsafe_for_display(c) && c != '\n')
            );
            // Streamed through `JsonSafe` in writes of any size, cutting characters: the same.
            for size in [1, 2, 3, 5, 64] {
                let mut streamed = JsonSafe::new(Vec::new());
                for chunk in pretty.as_bytes().chunks(size) {
                    std::io::Write::write_all(&mut streamed, chunk).unwrap();
                }
                std::io::Write::flush(&mut streamed).unwrap();
                prop_assert_eq!(String::from_utf8(streamed.inner).unwrap(), safe.as_ref());
            }
        }
    }
}
