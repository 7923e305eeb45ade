//! When YAML reads a plain (unquoted) scalar as something other than a string: the one rule the
//! two YAML fast paths share, the `@1` day-file reader's ([`crate::records::v1`]) and the note
//! frontmatter reader's (`index::frontmatter`), so neither takes as text a value that their
//! `yaml_serde` fallback would read as null, a bool or a number.
//!
//! The two ask with a different [`Readers`], on purpose: the `@1` reader must take every value
//! the reference's js-yaml 3 writes plain (`yes`, `inf`), so it refuses exactly what YAML 1.2's
//! core schema retypes; the note reader refuses, in any capitalisation, every word some YAML
//! reader retypes, because notes come from many tools and a refused note costs only one full
//! parse.

/// Which readers' types [`may_retype`] guards against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Readers {
    /// YAML 1.2's core schema, as `yaml_serde` and js-yaml 3 read it: `~`, `null`, `true` and
    /// `false` in their three spellings each (`null`, `Null`, `NULL`), and numbers.
    Core,
    /// Any YAML reader: also YAML 1.1's booleans (`yes`, `no`, `on`, `off`, `y`, `n`) and the
    /// bare words `inf`, `infinity` and `nan`, each word in any capitalisation.
    Any,
}

/// The words [`Readers::Any`] refuses, compared without regard to case.
const ANY_READER_WORDS: &[&str] = &[
    "true", "false", "null", "yes", "no", "on", "off", "y", "n", "inf", "infinity", "nan",
];

/// True when `readers` might resolve the plain scalar `s` to null, a bool or a number. It errs
/// on the side of `true` (the caller's full YAML parse then decides). [`Readers::Any`] answers
/// `true` wherever [`Readers::Core`] does.
pub(crate) fn may_retype(s: &str, readers: Readers) -> bool {
    let word = match readers {
        Readers::Core => matches!(
            s,
            "~" | "null" | "Null" | "NULL" | "true" | "True" | "TRUE" | "false" | "False" | "FALSE"
        ),
        Readers::Any => s == "~" || ANY_READER_WORDS.iter().any(|w| w.eq_ignore_ascii_case(s)),
    };
    word || may_be_number(s)
}

/// True when YAML might read `s` as an integer (decimal, `0x`, `0o`, `0b`) or a float
/// (`.inf` and `.nan` included), signed or not.
fn may_be_number(s: &str) -> bool {
    if !s.starts_with(|c: char| c.is_ascii_digit() || matches!(c, '+' | '-' | '.')) {
        return false;
    }
    if s.parse::<f64>().is_ok() {
        return true;
    }
    let unsigned = s.strip_prefix(['+', '-']).unwrap_or(s);
    let radix_int = [("0x", 16), ("0o", 8), ("0b", 2)]
        .iter()
        .any(|(prefix, radix)| {
            unsigned.strip_prefix(prefix).is_some_and(|digits| {
                !digits.is_empty() && digits.chars().all(|c| c.is_digit(*radix))
            })
        });
    let word = unsigned.trim_start_matches('.').get(..3);
    radix_int
        || word.is_some_and(|w| w.eq_ignore_ascii_case("inf") || w.eq_ignore_ascii_case("nan"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use yaml_serde::Value;

    #[test]
    fn core_words_are_exact_and_any_words_are_not() {
        // `0123` is a string to YAML 1.2; the rule errs on the side of `true`.
        for s in [
            "~", "null", "NULL", "True", "false", "0x1F", "-.Inf", "1e5", "0123",
        ] {
            assert!(may_retype(s, Readers::Core), "{s}");
            assert!(may_retype(s, Readers::Any), "{s}");
        }
        for s in [
            "yes", "No", "ON", "y", "inf", "NaN", "Infinity", "nULL", "tRUE",
        ] {
            assert!(!may_retype(s, Readers::Core), "{s}");
            assert!(may_retype(s, Readers::Any), "{s}");
        }
        for s in [
            "1_000",
            "2026-11-30",
            "1.2.3",
            "~x",
            "0x",
            "0xg",
            "word",
            "yess",
        ] {
            assert!(!may_retype(s, Readers::Core), "{s}");
            assert!(!may_retype(s, Readers::Any), "{s}");
        }
    }

    /// Plain scalars near the edges of YAML's types.
    fn plain_like() -> impl Strategy<Value = String> {
        prop_oneof![
            "[0-9+.eExXoObB_-]{1,8}",
            "[+-]?\\.?(inf|Inf|INF|nan|NaN|NAN|infinity)",
            "(~|null|Null|NULL|nULL|true|True|TRUE|tRUE|false|False|FALSE|yes|No|on|OFF|y|n)",
            "[+-]?0[xob][0-9a-fA-F]{0,4}",
            "[a-zA-Z0-9+._~-]{1,8}",
        ]
    }

    proptest! {
        /// What `yaml_serde` reads as null, a bool or a number is never taken for a string, and
        /// `Any` refuses whatever `Core` refuses.
        #[test]
        fn every_scalar_yaml_serde_retypes_is_refused(s in plain_like()) {
            let retyped = matches!(
                yaml_serde::from_str::<Value>(&s),
                Ok(Value::Null | Value::Bool(_) | Value::Number(_))
            );
            prop_assert!(!retyped || may_retype(&s, Readers::Core), "{:?}", s);
            prop_assert!(!may_retype(&s, Readers::Core) || may_retype(&s, Readers::Any), "{:?}", s);
        }
    }
}
