//! Text helpers shared by the record formats: the display-safe human part of a record line,
//! line walking, and YAML values as JSON (for unknown keys of `@1` files).

use serde_json::Value as Json;
use std::fmt::Write as _;
use yaml_serde::Value as Yaml;

/// Appends the display-safe form of `s`: `<` as `&lt;`, invisible or line-breaking characters
/// as visible `\u{XXXX}` text (grammar in `spec/record-format.md`).
pub fn push_display_safe(out: &mut String, s: &str) {
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

fn is_unsafe_for_display(c: char) -> bool {
    matches!(c as u32,
        0x00..=0x1F | 0x7F..=0x9F | 0x2028 | 0x2029 | 0x061C | 0x200B..=0x200F
        | 0x202A..=0x202E | 0x2060 | 0x2066..=0x2069 | 0xFEFF)
}

/// The line starting at `pos` (without its `\n`) and the offset of the next line.
pub fn line_at(text: &str, pos: usize) -> Option<(&str, usize)> {
    let rest = text.get(pos..).filter(|rest| !rest.is_empty())?;
    Some(match rest.find('\n') {
        Some(i) => (&rest[..i], pos + i + 1),
        None => (rest, text.len()),
    })
}

/// A YAML value without its tags.
pub fn untag(mut value: &Yaml) -> &Yaml {
    while let Yaml::Tagged(tagged) = value {
        value = &tagged.value;
    }
    value
}

/// A mapping key as a JSON key: strings as they are, other scalars in their YAML form.
pub fn key_string(key: &Yaml) -> Result<String, String> {
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
pub fn to_json(value: &Yaml) -> Result<Json, String> {
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
                .collect::<Result<_, String>>()?,
        ),
        Yaml::Tagged(_) => return Err("unexpected nested tag".into()),
    })
}
