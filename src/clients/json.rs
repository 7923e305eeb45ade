//! JSON documents edited in place: a value that keeps its keys in the order the user wrote them
//! (serde_json's map sorts them unless a crate-wide feature is switched on), and the layout of the
//! file it came from (indent, one line or many, final newline), so a document written back with
//! only our entry changed differs from the original only in that entry.

use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde::{Deserialize, Serialize};
use std::fmt;

/// A JSON value whose objects keep their keys in file order (duplicates included).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Json {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    /// An empty object.
    pub(crate) fn object() -> Json {
        Json::Object(Vec::new())
    }

    /// A string value.
    pub(crate) fn str(s: &str) -> Json {
        Json::String(s.to_string())
    }

    /// The value of `key` in an object (the last one when the key is repeated, as JavaScript and
    /// Go read it).
    pub(crate) fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(kv) => kv.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The value of `key`, mutable.
    pub(crate) fn get_mut(&mut self, key: &str) -> Option<&mut Json> {
        match self {
            Json::Object(kv) => kv.iter_mut().rev().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Sets `key` (in place when present, else at the end); `false` when `self` is no object.
    pub(crate) fn set(&mut self, key: &str, value: Json) -> bool {
        match self {
            Json::Object(kv) => {
                match kv.iter_mut().rev().find(|(k, _)| k == key) {
                    Some((_, v)) => *v = value,
                    None => kv.push((key.to_string(), value)),
                }
                true
            }
            _ => false,
        }
    }

    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }

    pub(crate) fn as_array(&self) -> Option<&Vec<Json>> {
        match self {
            Json::Array(a) => Some(a),
            _ => None,
        }
    }

    pub(crate) fn as_array_mut(&mut self) -> Option<&mut Vec<Json>> {
        match self {
            Json::Array(a) => Some(a),
            _ => None,
        }
    }

    pub(crate) fn is_object(&self) -> bool {
        matches!(self, Json::Object(_))
    }

    /// Whether an object or array has nothing in it.
    pub(crate) fn is_empty_container(&self) -> bool {
        match self {
            Json::Object(kv) => kv.is_empty(),
            Json::Array(a) => a.is_empty(),
            _ => false,
        }
    }
}

impl Serialize for Json {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Null => s.serialize_unit(),
            Json::Bool(b) => s.serialize_bool(*b),
            Json::Number(n) => n.serialize(s),
            Json::String(t) => s.serialize_str(t),
            Json::Array(a) => {
                let mut seq = s.serialize_seq(Some(a.len()))?;
                for v in a {
                    seq.serialize_element(v)?;
                }
                seq.end()
            }
            Json::Object(kv) => {
                let mut map = s.serialize_map(Some(kv.len()))?;
                for (k, v) in kv {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Json, D::Error> {
        d.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }
    fn visit_bool<E>(self, b: bool) -> Result<Json, E> {
        Ok(Json::Bool(b))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Json, E> {
        Ok(Json::Number(n.into()))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Json, E> {
        Ok(Json::Number(n.into()))
    }
    fn visit_f64<E: serde::de::Error>(self, n: f64) -> Result<Json, E> {
        serde_json::Number::from_f64(n)
            .map(Json::Number)
            .ok_or_else(|| E::custom("a number JSON cannot hold"))
    }
    fn visit_str<E>(self, s: &str) -> Result<Json, E> {
        Ok(Json::String(s.to_string()))
    }
    fn visit_string<E>(self, s: String) -> Result<Json, E> {
        Ok(Json::String(s))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = seq.next_element()? {
            out.push(v);
        }
        Ok(Json::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut out = Vec::new();
        while let Some((k, v)) = map.next_entry::<String, Json>()? {
            out.push((k, v));
        }
        Ok(Json::Object(out))
    }
}

/// How a JSON file was laid out, so it can be written back the same way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Layout {
    /// The indent of one level; `None` for a document on one line.
    pub indent: Option<String>,
    pub final_newline: bool,
}

impl Default for Layout {
    /// Two spaces and a final newline: what the clients themselves write.
    fn default() -> Layout {
        Layout {
            indent: Some("  ".into()),
            final_newline: true,
        }
    }
}

impl Layout {
    /// The layout of `text`: the indent of its first indented line (two spaces when it has
    /// none), one line when no line break falls inside the document (an empty `{}` or `[]` says
    /// nothing, so it gets two spaces too).
    pub(crate) fn of(text: &str) -> Layout {
        let body = text.trim();
        let bare: String = body.split_whitespace().collect();
        let indent = match body.contains('\n') {
            false if !body.is_empty() && bare != "{}" && bare != "[]" => None,
            _ => Some(
                body.lines()
                    .skip(1)
                    .map(|l| &l[..l.len() - l.trim_start_matches([' ', '\t']).len()])
                    .find(|w| !w.is_empty())
                    .unwrap_or("  ")
                    .to_string(),
            ),
        };
        Layout {
            indent,
            final_newline: text.is_empty() || text.ends_with('\n'),
        }
    }
}

/// Parses a document; an empty (or all-blank) text is `{}`.
pub(crate) fn parse(text: &str) -> Result<Json, serde_json::Error> {
    if text.trim().is_empty() {
        return Ok(Json::object());
    }
    serde_json::from_str(text)
}

/// What `text` holds that JSON does not allow, when it is what editors and some clients accept:
/// a byte-order mark, comments, trailing commas (JSONC), said with what to do; `None` when the
/// parser's own error says it best.
pub(crate) fn not_json(text: &str) -> Option<String> {
    if text.starts_with('\u{feff}') {
        return Some(
            "it starts with a byte-order mark (U+FEFF), which JSON does not allow. Save it as \
             UTF-8 without one"
                .into(),
        );
    }
    let what = match jsonc(text) {
        (true, true) => "comments and trailing commas",
        (true, false) => "comments (`//` or `/* */`)",
        (false, true) => "a trailing comma (a comma before `}` or `]`)",
        (false, false) => return None,
    };
    Some(format!(
        "it holds {what} (JSON with comments, JSONC), which git-rutter does not edit: it edits \
         only files it can parse exactly. Take them out, or add the entries by hand (hooks/ in \
         the git-rutter repository has each one)"
    ))
}

/// Whether `text` has comments, and a comma before a closing bracket, outside strings.
fn jsonc(text: &str) -> (bool, bool) {
    let b = text.as_bytes();
    let (mut comments, mut trailing, mut i) = (false, false, 0);
    let mut comma = false;
    while i < b.len() {
        match b[i] {
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                comma = false;
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                comments = true;
                i = memchr::memchr(b'\n', &b[i..]).map_or(b.len(), |n| i + n);
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                comments = true;
                i = memchr::memmem::find(&b[i + 2..], b"*/").map_or(b.len(), |n| i + 2 + n + 2);
                continue;
            }
            b',' => comma = true,
            b'}' | b']' if comma => trailing = true,
            c if c.is_ascii_whitespace() => {}
            _ => comma = false,
        }
        i += 1;
    }
    (comments, trailing)
}

/// Writes `value` in `layout`.
pub(crate) fn print(value: &Json, layout: &Layout) -> String {
    let mut out = Vec::new();
    let written = match &layout.indent {
        Some(indent) => {
            let fmt = serde_json::ser::PrettyFormatter::with_indent(indent.as_bytes());
            value.serialize(&mut serde_json::Serializer::with_formatter(&mut out, fmt))
        }
        None => value.serialize(&mut serde_json::Serializer::new(&mut out)),
    };
    // Writing into a Vec cannot fail and every Json is representable.
    debug_assert!(written.is_ok());
    let mut text = String::from_utf8_lossy(&out).into_owned();
    if layout.final_newline {
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jsonc_and_a_byte_order_mark_are_named_in_the_refusal() {
        let why = |t: &str| {
            assert!(parse(t).is_err(), "{t}");
            not_json(t).unwrap_or_default()
        };
        let c = why("{\n  // comment\n  \"a\": 1\n}\n");
        assert!(c.starts_with("it holds comments (`//` or `/* */`)"), "{c}");
        assert!(c.contains("hooks/ in the git-rutter repository"), "{c}");
        assert!(why("{\"a\": [1, 2,],}").starts_with("it holds a trailing comma"));
        assert!(why("{/* x */ \"a\": 1,\n}").starts_with("it holds comments and trailing commas"));
        assert_eq!(why("{\"a\" 1}"), "");
        assert!(why("\u{feff}{}").starts_with("it starts with a byte-order mark"));
        // Inside strings they are text.
        assert_eq!(why("{\"u\": \"http://x/*\", \"v\": \"a,]\" x}"), "");
    }
    use proptest::prelude::*;

    #[test]
    fn key_order_and_layout_survive_a_round_trip() {
        for text in [
            "{\n  \"z\": 1,\n  \"a\": [\n    true,\n    null\n  ],\n  \"m\": {}\n}\n",
            "{\n    \"z\": 1.5,\n    \"a\": \"x\"\n}",
            "{\n\t\"z\": [],\n\t\"a\": {\n\t\t\"b\": -3\n\t}\n}\n",
            "{\"z\":1,\"a\":[1,2]}",
        ] {
            let v = parse(text).unwrap();
            assert_eq!(print(&v, &Layout::of(text)), text, "{text}");
        }
    }

    #[test]
    fn empty_text_is_an_empty_object_and_garbage_is_an_error() {
        assert_eq!(parse("  \n").unwrap(), Json::object());
        assert!(parse("{\"a\": }").is_err());
        assert!(parse("{} {}").is_err());
        assert_eq!(Layout::of(""), Layout::default());
    }

    #[test]
    fn set_get_remove_and_entry() {
        let mut v = parse(r#"{"b": 1, "a": {"x": 2}}"#).unwrap();
        assert!(v.set("b", Json::str("two")));
        assert!(v.set("c", Json::Null));
        assert_eq!(
            print(
                &v,
                &Layout {
                    indent: None,
                    final_newline: false
                }
            ),
            r#"{"b":"two","a":{"x":2},"c":null}"#
        );
    }

    fn any_json() -> impl Strategy<Value = Json> {
        let leaf = prop_oneof![
            Just(Json::Null),
            any::<bool>().prop_map(Json::Bool),
            any::<i64>().prop_map(|n| Json::Number(n.into())),
            any::<u64>().prop_map(|n| Json::Number(n.into())),
            // Binary fractions: serde_json's default float parsing is exact for these.
            (-1_000_000i32..1_000_000).prop_map(|i| Json::Number(
                serde_json::Number::from_f64(f64::from(i) / 4.0).unwrap()
            )),
            "\\PC{0,8}".prop_map(Json::String),
        ];
        leaf.prop_recursive(4, 40, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..5).prop_map(Json::Array),
                proptest::collection::vec(("[a-z]{0,3}", inner), 0..5).prop_map(Json::Object),
            ]
        })
    }

    proptest! {
        /// The JSONC scan reads a user's file whatever it holds: it never panics, and never
        /// names comments or commas in a document that parses.
        #[test]
        fn the_jsonc_scan_never_panics_nor_blames_valid_json(
            text in "[{}\\[\\],:\"/*\\\\a \n\u{feff}]{0,40}",
            v in any_json(),
        ) {
            let _ = not_json(&text);
            prop_assert_eq!(not_json(&print(&v, &Layout::default())), None);
        }

        #[test]
        fn printed_documents_parse_back_and_print_the_same(v in any_json(), indent in "( {1,4}|\t)?",
                                                           nl in any::<bool>()) {
            let layout = Layout { indent: (!indent.is_empty()).then_some(indent), final_newline: nl };
            let text = print(&v, &layout);
            let back = parse(&text).unwrap();
            prop_assert_eq!(&back, &v);
            prop_assert_eq!(print(&back, &Layout::of(&text)), text);
        }

        #[test]
        fn arbitrary_text_never_panics(s in "\\PC{0,40}") {
            let _ = parse(&s).map(|v| print(&v, &Layout::of(&s)));
        }
    }
}
