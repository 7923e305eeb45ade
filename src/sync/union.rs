//! The line union of two versions of one record file: what a sync merge writes when two
//! machines appended to the same file (spec/sync.md, "Line union").
//!
//! Both versions keep their longest common prefix (cut back to a line boundary) byte for byte;
//! the lines after it are the multiset union of both sides (a line both sides hold is written
//! as often as the side holding it more often does), sorted by the record time and id their
//! machine part carries, then by their bytes. The result depends only on the two versions,
//! never on which machine merges: `union(a, b) == union(b, a)`, and merging a result again with
//! either side changes nothing.

use std::cmp::Ordering;
use std::collections::HashMap;

/// The union of two versions of a record file.
pub(crate) fn union(a: &[u8], b: &[u8]) -> Vec<u8> {
    if a == b {
        return a.to_vec();
    }
    // One side only appended whole lines to the other: keep the longer one as it is.
    if extends(b, a) {
        return b.to_vec();
    }
    if extends(a, b) {
        return a.to_vec();
    }
    let prefix = common_line_prefix(a, b);
    let mut tail = multiset_union(&lines(&a[prefix..]), &lines(&b[prefix..]));
    tail.sort_by(|x, y| compare(x, y));
    let mut out = Vec::with_capacity(a.len().max(b.len()) + 64);
    out.extend_from_slice(&a[..prefix]);
    for l in tail {
        out.extend_from_slice(l);
        out.push(b'\n');
    }
    out
}

/// Whether `long` is `short` plus whole lines: `short` is a prefix ending at a line boundary.
fn extends(long: &[u8], short: &[u8]) -> bool {
    long.starts_with(short) && (short.is_empty() || short.ends_with(b"\n"))
}

/// The length of the longest common prefix of `a` and `b` that ends just after a `\n` (0 when
/// they share no whole line).
pub(crate) fn common_line_prefix(a: &[u8], b: &[u8]) -> usize {
    let same = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    a[..same]
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(0, |i| i + 1)
}

/// The lines of `bytes` without their `\n`; a last line without one is a line too.
fn lines(bytes: &[u8]) -> Vec<&[u8]> {
    if bytes.is_empty() {
        return vec![];
    }
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    body.split(|&c| c == b'\n').collect()
}

/// Every line of `a`, then each line of `b` as many times as `b` holds it more often than `a`.
fn multiset_union<'a>(a: &[&'a [u8]], b: &[&'a [u8]]) -> Vec<&'a [u8]> {
    let mut left: HashMap<&[u8], usize> = HashMap::new();
    for l in a {
        *left.entry(l).or_default() += 1;
    }
    let mut out = a.to_vec();
    for l in b {
        match left.get_mut(l) {
            Some(n) if *n > 0 => *n -= 1,
            _ => out.push(l),
        }
    }
    out
}

/// Record lines by `(time, id)` of their machine part (lines without one first), then bytes.
fn compare(x: &[u8], y: &[u8]) -> Ordering {
    sort_key(x).cmp(&sort_key(y)).then_with(|| x.cmp(y))
}

/// `(time, id)` of a record line: the JSON machine part after the last `<!-- rutter:<kind> `
/// marker (entries and retractions carry `time`, ledger bindings `ts`), or a whole-line JSON
/// object (use log and acknowledgements carry `ts`). Empty strings when there is none.
pub(crate) fn sort_key(line: &[u8]) -> (String, String) {
    const MARKER: &[u8] = b"<!-- rutter:";
    let none = (String::new(), String::new());
    let Ok(text) = std::str::from_utf8(line) else {
        return none;
    };
    let text = text.strip_suffix('\r').unwrap_or(text);
    let json = match memchr::memmem::rfind(text.as_bytes(), MARKER) {
        Some(at) => {
            let rest = &text[at + MARKER.len()..];
            let Some(space) = rest.find(' ') else {
                return none;
            };
            match rest[space + 1..].strip_suffix(" -->") {
                Some(j) => j,
                None => return none,
            }
        }
        None if text.starts_with('{') => text,
        None => return none,
    };
    let Ok(serde_json::Value::Object(v)) = serde_json::from_str::<serde_json::Value>(json) else {
        return none;
    };
    let field = |k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_string);
    (
        field("time").or_else(|| field("ts")).unwrap_or_default(),
        field("id").unwrap_or_default(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn entry(time: &str, id: &str) -> String {
        format!("- x — s <!-- rutter:entry {{\"id\":\"{id}\",\"time\":\"{time}\",\"summary\":\"s\",\"refs\":[]}} -->")
    }

    #[test]
    fn appended_lines_of_both_sides_follow_the_common_prefix_in_time_order() {
        let head = "HEADER\n";
        let (a1, b1, a2) = (
            entry("2026-11-30T09:00:00.000Z", "A1"),
            entry("2026-11-30T08:00:00.000Z", "B1"),
            entry("2026-11-30T10:00:00.000Z", "A2"),
        );
        let a = format!("{head}{a1}\n{a2}\n");
        let b = format!("{head}{b1}\n");
        let want = format!("{head}{b1}\n{a1}\n{a2}\n");
        assert_eq!(
            String::from_utf8(union(a.as_bytes(), b.as_bytes())).unwrap(),
            want
        );
        assert_eq!(
            String::from_utf8(union(b.as_bytes(), a.as_bytes())).unwrap(),
            want
        );
    }

    #[test]
    fn a_side_that_only_appended_wins_as_it_is() {
        assert_eq!(union(b"H\nx\n", b"H\nx\ny\n"), b"H\nx\ny\n");
        assert_eq!(union(b"", b"H\n"), b"H\n");
        // A torn tail is not a line boundary: both lines are kept.
        assert_eq!(union(b"H\nx", b"H\nxy\n"), b"H\nx\nxy\n");
    }

    #[test]
    fn keys_come_from_every_kind_of_record_line() {
        assert_eq!(
            sort_key(entry("T", "I").as_bytes()),
            ("T".to_string(), "I".to_string())
        );
        let binding = r#"- t exact-hash: a -> b (h) <!-- rutter:binding {"id":"B","ts":"T2"} -->"#;
        assert_eq!(sort_key(binding.as_bytes()), ("T2".into(), "B".into()));
        assert_eq!(
            sort_key(br#"{"ts":"T3","kind":"librarian-recent"}"#),
            ("T3".into(), String::new())
        );
        assert_eq!(sort_key(b"# Sessions"), (String::new(), String::new()));
        assert_eq!(
            sort_key(b"<!-- rutter:entry {"),
            (String::new(), String::new())
        );
        assert_eq!(sort_key(b"\xff{"), (String::new(), String::new()));
    }

    fn count(bytes: &[u8], line: &[u8]) -> usize {
        lines(bytes).iter().filter(|l| **l == line).count()
    }

    /// Lines drawn from a small pool, so sides share lines, duplicates and prefixes.
    fn line_pool() -> impl Strategy<Value = String> {
        prop_oneof![
            (0u8..6, 0u8..4)
                .prop_map(|(t, i)| entry(&format!("2026-11-30T0{t}:00:00.000Z"), &format!("E{i}"))),
            (0u8..4)
                .prop_map(|t| format!("{{\"ts\":\"2026-11-30T0{t}:00:00.000Z\",\"kind\":\"k\"}}")),
            prop::sample::select(vec!["", "# Sessions", "---", "plain text", "x\r"])
                .prop_map(str::to_string),
            "[a-c<!\\- {}\"]{0,12}",
        ]
    }

    fn side() -> impl Strategy<Value = Vec<u8>> {
        (prop::collection::vec(line_pool(), 0..8), any::<bool>()).prop_map(|(ls, torn)| {
            let mut text = ls.join("\n");
            if !torn && !text.is_empty() {
                text.push('\n');
            }
            text.into_bytes()
        })
    }

    /// Two versions that share a prefix, as two machines' copies of one file do.
    fn versions() -> impl Strategy<Value = (Vec<u8>, Vec<u8>)> {
        (side(), side(), side()).prop_map(|(mut p, ta, tb)| {
            if !p.is_empty() && !p.ends_with(b"\n") {
                p.push(b'\n');
            }
            ([p.clone(), ta].concat(), [p, tb].concat())
        })
    }

    proptest! {
        /// No line of either side is lost, a line is written as often as the side holding it
        /// more often holds it, and neither the order of the sides nor merging again changes
        /// the result.
        #[test]
        fn union_keeps_every_line_once_deterministically((a, b) in versions()) {
            let u = union(&a, &b);
            for l in lines(&a).into_iter().chain(lines(&b)) {
                prop_assert_eq!(count(&u, l), count(&a, l).max(count(&b, l)), "line {:?}", String::from_utf8_lossy(l));
            }
            prop_assert_eq!(lines(&u).len() <= lines(&a).len() + lines(&b).len(), true);
            prop_assert_eq!(&union(&b, &a), &u, "commutative");
            prop_assert_eq!(&union(&u, &a), &u, "idempotent with a");
            prop_assert_eq!(&union(&b, &u), &u, "idempotent with b");
            prop_assert_eq!(union(&u, &u), u.clone());
        }

        /// Arbitrary bytes never panic and keep every line of both sides.
        #[test]
        fn any_bytes_keep_their_lines(a in prop::collection::vec(any::<u8>(), 0..200), b in prop::collection::vec(any::<u8>(), 0..200)) {
            let u = union(&a, &b);
            for l in lines(&a).into_iter().chain(lines(&b)) {
                prop_assert!(count(&u, l) >= 1);
            }
            prop_assert_eq!(union(&b, &a), u);
        }
    }
}
