//! What recall hands out of an entry, whatever the record already holds (spec/recall.md,
//! "What recall serves"): every field within a bound, a cut one marked visibly. The intake
//! keeps new lines within the capture's bounds (`records::grammar`), but a line taken before it
//! did (a 50 MB summary a remote once sent) or typed into a day file by hand is read as it is;
//! `recent`, `recent --json` and `librarian-recent` show it cut, never whole.

use crate::records::grammar::{PROVENANCE_MAX_CHARS, SUMMARY_MAX_CHARS};
use crate::records::{Entry, Step};
use serde_json::{Map, Value};
use std::borrow::Cow;

/// A cited note's path, at most (a path the file system takes is far shorter: 4,096 bytes).
pub(crate) const PATH_MAX_CHARS: usize = 1024;
/// An id, a session id, a client, a time, a hash, at most (each a few dozen characters when a
/// capture writes it).
pub(crate) const NAME_MAX_CHARS: usize = 256;
/// The cited notes of one step, at most (as many as a capture keeps).
pub(crate) const REFS_MAX: usize = 256;
/// The unknown fields of one entry, ref or workspace, at most, as JSON (a newer version's).
pub(crate) const EXTRA_MAX_BYTES: usize = 4096;

/// `s` cut to `max` characters and marked, when it is longer; a field already cut at `max`
/// (one view cuts what another view's reader served) is left as it is.
pub(crate) fn cut(s: &str, max: usize) -> Cow<'_, str> {
    // A `char` is at least one byte: a short string needs no count.
    if s.len() <= max {
        return Cow::Borrowed(s);
    }
    match s.char_indices().nth(max) {
        Some((end, _)) if !is_mark(&s[end..]) => {
            let more = s[end..].chars().count();
            Cow::Owned(format!("{}{CUT}{more} more characters]", &s[..end]))
        }
        _ => Cow::Borrowed(s),
    }
}

/// What a cut field ends with, before the count.
const CUT: &str = "… [cut: ";

/// Whether `tail` is the whole mark [`cut`] writes.
fn is_mark(tail: &str) -> bool {
    tail.strip_prefix(CUT)
        .and_then(|t| t.strip_suffix(" more characters]"))
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// [`cut`] in place.
pub(crate) fn cut_in_place(s: &mut String, max: usize) {
    if let Cow::Owned(shorter) = cut(s, max) {
        *s = shorter;
    }
}

/// A step with every field of its entry within the bounds (its day is a day file's, which the
/// record's paths bound).
pub(crate) fn step(s: &mut Step) {
    entry(&mut s.entry);
}

/// An entry with every field within the bounds: the summary at the capture's cut, provenance at
/// its cut, paths, names and unknown fields at theirs, at most [`REFS_MAX`] refs (the summary
/// says how many more the record cites).
pub(crate) fn entry(e: &mut Entry) {
    cut_in_place(&mut e.summary, SUMMARY_MAX_CHARS);
    for name in [&mut e.id, &mut e.time]
        .into_iter()
        .chain(e.session_id.as_mut())
        .chain(e.client.as_mut())
    {
        cut_in_place(name, NAME_MAX_CHARS);
    }
    if e.refs.len() > REFS_MAX {
        let more = e.refs.len() - REFS_MAX;
        e.refs.truncate(REFS_MAX);
        e.summary
            .push_str(&format!(" [cut: {more} more cited notes]"));
    }
    for r in &mut e.refs {
        cut_in_place(&mut r.path, PATH_MAX_CHARS);
        cut_in_place(&mut r.hash, NAME_MAX_CHARS);
        if let Some(blob) = r.blob.as_mut() {
            cut_in_place(blob, NAME_MAX_CHARS);
        }
        extra(&mut r.extra);
    }
    if let Some(w) = e.workspace.as_mut() {
        for value in [&mut w.cwd, &mut w.project]
            .into_iter()
            .chain(w.repo.as_mut())
        {
            cut_in_place(value, PROVENANCE_MAX_CHARS);
        }
        extra(&mut w.extra);
    }
    extra(&mut e.extra);
}

/// Unknown fields longer than [`EXTRA_MAX_BYTES`] as JSON are left out, and one field says so.
fn extra(m: &mut Map<String, Value>) {
    if m.is_empty() {
        return;
    }
    let bytes = serde_json::to_string(m).map_or(usize::MAX, |j| j.len());
    if bytes > EXTRA_MAX_BYTES {
        m.clear();
        m.insert(
            "rutter_cut".into(),
            Value::String(format!("{bytes} bytes of unknown fields not shown")),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::{NoteRef, Workspace};
    use proptest::prelude::*;

    #[test]
    fn long_fields_are_cut_and_marked() {
        assert_eq!(cut("short", 10), "short");
        assert_eq!(cut("ééé", 3), "ééé");
        assert_eq!(cut("éééé", 3), "ééé… [cut: 1 more characters]");
        let mut e = Entry {
            id: "i".repeat(300),
            session_id: Some("s".into()),
            time: "2026-11-30T07:31:41.112Z".into(),
            summary: "B".repeat(50 << 20),
            refs: (0..300)
                .map(|i| NoteRef::new(format!("{i}{}", "p".repeat(2000)), "sha256:x", None))
                .collect(),
            workspace: Some(Workspace::new("/w", "q".repeat(600), None)),
            client: None,
            supersedes: None,
            extra: [("future".to_string(), Value::String("f".repeat(5000)))]
                .into_iter()
                .collect(),
        };
        entry(&mut e);
        assert!(e.summary.starts_with(&"B".repeat(SUMMARY_MAX_CHARS)));
        assert!(e.summary.ends_with(&format!(
            "… [cut: {} more characters] [cut: 44 more cited notes]",
            (50 << 20) - SUMMARY_MAX_CHARS
        )));
        assert_eq!(e.refs.len(), REFS_MAX);
        assert!(e.refs[0].path.ends_with("… [cut: 977 more characters]"));
        assert!(e.id.ends_with("… [cut: 44 more characters]"));
        assert!(e.project().is_some_and(|p| p.contains("[cut: 88 more")));
        assert_eq!(e.extra.len(), 1);
        assert!(e.extra["rutter_cut"].as_str().is_some());
        assert!(serde_json::to_string(&e).unwrap().len() < 300_000);
    }

    #[test]
    fn a_cut_field_is_not_cut_again() {
        let once = cut(&"x".repeat(50), 10).into_owned();
        assert_eq!(
            once,
            format!("{}… [cut: 40 more characters]", "x".repeat(10))
        );
        assert_eq!(cut(&once, 10), once);
        // Anything else after the bound is cut, a mark that is not whole included.
        let forged = format!("{}… [cut: 4 more characters] and more", "x".repeat(10));
        assert_ne!(cut(&forged, 10), forged);
    }

    proptest! {
        /// A field within its bound is served as it is; a longer one is its first `max`
        /// characters and the mark.
        #[test]
        fn a_cut_keeps_the_start_and_says_how_much_is_left(s in any::<String>(), max in 0..40usize) {
            let got = cut(&s, max);
            let n = s.chars().count();
            if n <= max {
                prop_assert_eq!(got.as_ref(), s.as_str());
            } else {
                let head: String = s.chars().take(max).collect();
                prop_assert_eq!(
                    got.into_owned(),
                    format!("{head}… [cut: {} more characters]", n - max)
                );
            }
        }

        /// Cutting what was cut changes nothing, so views that cut what readers served agree.
        #[test]
        fn cutting_twice_is_cutting_once(s in any::<String>(), max in 0..40usize) {
            let once = cut(&s, max).into_owned();
            let twice = cut(&once, max).into_owned();
            prop_assert_eq!(twice, once);
        }
    }
}
