//! The purge ledger `_librarian/purges.jsonl` (spec/purge.md, spec/record-format.md "Purge
//! ledger"): one JSON line per purge, naming what was removed (the entry's day, the SHA-256 of
//! its line, the cited copies only it used) and why, never the removed text. Read by `verify`,
//! recall (the gap where the entry stood) and `sync` (which purges a remote made).

use super::line::escape_json_text;
use super::Broken;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};

/// What a purge (or several) removes from a record tree.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Removal {
    /// For each day (`YYYY-MM-DD`), the SHA-256 of each line its record files lose.
    pub lines: BTreeMap<String, BTreeSet<[u8; 32]>>,
    /// The `cited/` copies removed, by the hex sha256 they are named by.
    pub cited: BTreeSet<String>,
}

/// The SHA-256 of a line's bytes (without its `\n`).
pub(crate) fn line_digest(line: &[u8]) -> [u8; 32] {
    Sha256::digest(line).into()
}

/// `bytes` without the lines whose SHA-256 is in `gone` (each with its `\n`); `None` when no
/// line was removed.
pub(crate) fn without_lines(bytes: &[u8], gone: &BTreeSet<[u8; 32]>) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut removed = false;
    for line in bytes.split_inclusive(|b| *b == b'\n') {
        let body = line.strip_suffix(b"\n").unwrap_or(line);
        match gone.contains(&line_digest(body)) {
            true => removed = true,
            false => out.extend_from_slice(line),
        }
    }
    removed.then_some(out)
}

/// The most characters of a purge's reason.
pub(crate) const REASON_MAX_CHARS: usize = 512;
/// The most cited copies one purge removes (an entry cites at most this many notes).
pub(crate) const CITED_MAX: usize = 256;

/// One purge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Purge {
    /// The purged entry's id.
    pub purge: String,
    /// The day of the record files that held its line (`YYYY-MM-DD`).
    pub day: String,
    /// `sha256:<hex>` of the removed line's bytes (without its `\n`).
    pub line: String,
    /// `sha256:<hex>` of each `cited/` copy removed.
    #[serde(default)]
    pub cited: Vec<String>,
    pub reason: String,
    /// When the purge was made (`YYYY-MM-DDTHH:MM:SS.mmmZ`).
    pub time: String,
    /// The ref before the purge, and the rewritten history's tip.
    pub old_tip: String,
    pub new_tip: String,
    /// Where the entry stood, so recall can show the gap (never its text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `sha256:` and 64 lowercase hex digits.
fn is_sha256_ref(s: &str) -> bool {
    s.strip_prefix("sha256:")
        .is_some_and(|h| h.len() == 64 && h.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
}

fn is_commit_id(s: &str) -> bool {
    s.len() == 40 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The 32 bytes of a `sha256:<hex>` value (checked by [`parse`] first).
fn digest(s: &str) -> Option<[u8; 32]> {
    let hex = s.strip_prefix("sha256:")?;
    let mut out = [0u8; 32];
    for (i, pair) in hex.as_bytes().chunks(2).enumerate() {
        let text = std::str::from_utf8(pair).ok()?;
        *out.get_mut(i)? = u8::from_str_radix(text, 16).ok()?;
    }
    Some(out)
}

impl Purge {
    /// What this purge removes, as the rewrite takes it.
    pub(crate) fn removal(&self) -> Removal {
        removal_of(std::slice::from_ref(self))
    }
}

impl Purge {
    /// The entry recall shows where the purged one stood: its id, time, session, project and
    /// client, and the summary `purged on DATE: REASON`; no text and no ref of the entry.
    pub(crate) fn placeholder(&self) -> super::Entry {
        let project = self.project.clone().unwrap_or_default();
        super::Entry {
            id: self.purge.clone(),
            session_id: self.session_id.clone(),
            time: instant_of_id(&self.purge)
                .unwrap_or_else(|| format!("{}T00:00:00.000Z", self.day)),
            summary: format!(
                "purged on {}: {}",
                self.time.get(..10).unwrap_or(""),
                self.reason
            ),
            refs: vec![],
            workspace: (!project.is_empty()).then(|| super::Workspace::new("", project, None)),
            client: self.client.clone(),
            supersedes: None,
            extra: Map::new(),
        }
    }
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ` of an entry id that starts with its compact instant
/// (`20261130T073141112Z…`).
fn instant_of_id(id: &str) -> Option<String> {
    let b = id.get(..19)?;
    let digits =
        |r: std::ops::Range<usize>| b.get(r).filter(|s| s.bytes().all(|c| c.is_ascii_digit()));
    (b.as_bytes()[8] == b'T' && b.as_bytes()[18] == b'Z').then_some(())?;
    Some(format!(
        "{}-{}-{}T{}:{}:{}.{}Z",
        digits(0..4)?,
        digits(4..6)?,
        digits(6..8)?,
        digits(9..11)?,
        digits(11..13)?,
        digits(13..15)?,
        digits(15..18)?
    ))
}

/// What the purges remove together.
pub(crate) fn removal_of(purges: &[Purge]) -> Removal {
    let mut r = Removal::default();
    for p in purges {
        if let Some(d) = digest(&p.line) {
            r.lines.entry(p.day.clone()).or_default().insert(d);
        }
        for c in &p.cited {
            if let Some(hex) = c.strip_prefix("sha256:") {
                r.cited.insert(hex.to_string());
            }
        }
    }
    r
}

/// The purged entry ids of `purges`.
pub(crate) fn ids(purges: &[Purge]) -> BTreeSet<String> {
    purges.iter().map(|p| p.purge.clone()).collect()
}

/// Renders one purge as its ledger line (without the `\n`): JSON with `<`, `>` and `&` escaped,
/// as every record line's machine part.
pub(crate) fn render(p: &Purge) -> String {
    // Serialising strings and a JSON map cannot fail.
    escape_json_text(&serde_json::to_string(p).unwrap_or_default())
}

/// Reads one ledger line: the purge, or why it is not one (the record grammar's rule).
pub(crate) fn parse(line: &str) -> Result<Purge, Broken> {
    let p: Purge = serde_json::from_str(line).map_err(|_| {
        "not a purge: a JSON object with purge, day, line, reason, time, old_tip and new_tip"
            .to_string()
    })?;
    let within = |what: &str, s: &str, max: usize| match s.chars().count() {
        n if n > max => Err(Broken::from(format!(
            "a purge with {what} of {n} characters, over {max}"
        ))),
        _ => Ok(()),
    };
    within("an id", &p.purge, 256)?;
    within("a reason", &p.reason, REASON_MAX_CHARS)?;
    for (what, v) in [
        ("a session", &p.session_id),
        ("a project", &p.project),
        ("a client", &p.client),
    ] {
        within(what, v.as_deref().unwrap_or(""), 512)?;
    }
    if !crate::clock::is_day(&p.day) {
        return Err(format!("a purge whose day {:?} is not YYYY-MM-DD", p.day).into());
    }
    if !is_sha256_ref(&p.line) || !p.cited.iter().all(|c| is_sha256_ref(c)) {
        return Err("a purge whose line or cited copies are not sha256:<64 hex>".into());
    }
    if p.cited.len() > CITED_MAX {
        return Err(format!(
            "a purge of {} cited copies, over {CITED_MAX}",
            p.cited.len()
        )
        .into());
    }
    if !is_commit_id(&p.old_tip) || !is_commit_id(&p.new_tip) {
        return Err("a purge whose old_tip or new_tip is not a commit id".into());
    }
    if crate::clock::parse_instant(&p.time).is_none() {
        return Err(format!("a purge whose time {:?} is not an instant", p.time).into());
    }
    Ok(p)
}

/// Every purge a ledger's bytes hold, in order; lines that are not purges are skipped (the
/// record grammar refuses them before they are committed).
pub(crate) fn read(bytes: &[u8]) -> Vec<Purge> {
    super::text::lossy(bytes)
        .lines()
        .filter_map(|l| parse(l).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn sample() -> Purge {
        Purge {
            purge: "20261130T073141112Z".into(),
            day: "2026-11-30".into(),
            line: format!("sha256:{}", "ab".repeat(32)),
            cited: vec![format!("sha256:{}", "cd".repeat(32))],
            reason: "a token <pasted> & more".into(),
            time: "2026-12-06T10:00:00.000Z".into(),
            old_tip: "1".repeat(40),
            new_tip: "2".repeat(40),
            session_id: Some("S".into()),
            project: Some("site".into()),
            client: None,
            extra: Map::new(),
        }
    }

    #[test]
    fn a_purge_line_reads_back_as_written_and_names_its_removal() {
        let p = sample();
        let line = render(&p);
        assert!(!line.contains('<') && !line.contains('&'), "{line}");
        assert_eq!(parse(&line), Ok(p.clone()));
        let r = p.removal();
        assert_eq!(r.lines["2026-11-30"].len(), 1);
        assert!(r.lines["2026-11-30"].contains(&[0xab; 32]));
        assert!(r.cited.contains(&"cd".repeat(32)));
        assert_eq!(
            read(format!("{line}\nnot json\n{line}\n").as_bytes()).len(),
            2
        );
    }

    #[test]
    fn the_placeholder_stands_where_the_entry_stood_with_no_text() {
        let e = sample().placeholder();
        assert_eq!(e.id, "20261130T073141112Z");
        assert_eq!(e.time, "2026-11-30T07:31:41.112Z");
        assert_eq!(e.summary, "purged on 2026-12-06: a token <pasted> & more");
        assert_eq!(
            (e.project(), e.session_id.as_deref()),
            (Some("site"), Some("S"))
        );
        assert!(e.refs.is_empty());
        assert_eq!(instant_of_id("x"), None);
    }

    proptest::proptest! {
        /// A remote's ledger line is input: any text is a purge within bounds or refused, never a
        /// panic, and what `render` writes of any purge it takes reads back the same.
        #[test]
        fn any_line_is_a_purge_in_bounds_or_refused(line in "\\PC{0,400}|\\{\"purge\":\"[^\"]{0,20}\".{0,300}") {
            if let Ok(p) = parse(&line) {
                proptest::prop_assert!(p.reason.chars().count() <= REASON_MAX_CHARS);
                proptest::prop_assert!(p.cited.len() <= CITED_MAX);
                proptest::prop_assert_eq!(parse(&render(&p)), Ok(p.clone()));
                let _ = p.removal();
                let _ = p.placeholder();
            }
        }

        #[test]
        fn any_reason_and_id_render_to_one_line_that_reads_back(
            reason in "\\PC{0,600}",
            id in "\\PC{0,40}",
        ) {
            let mut p = sample();
            p.reason = reason.chars().take(REASON_MAX_CHARS).collect();
            p.purge = id;
            let line = render(&p);
            proptest::prop_assert!(!line.contains('\n') && !line.contains('<'));
            proptest::prop_assert_eq!(parse(&line), Ok(p.clone()));
            let _ = p.placeholder();
        }
    }

    #[test]
    fn a_malformed_purge_is_refused_with_its_rule() {
        let bad = |f: &dyn Fn(&mut Purge)| {
            let mut p = sample();
            f(&mut p);
            parse(&render(&p)).unwrap_err()
        };
        assert!(bad(&|p| p.day = "yesterday".into()).contains("day"));
        assert!(bad(&|p| p.line = "sha256:00".into()).contains("sha256"));
        assert!(bad(&|p| p.new_tip = "HEAD".into()).contains("commit id"));
        assert!(bad(&|p| p.reason = "x".repeat(513)).contains("reason of 513"));
        assert!(bad(&|p| p.time = "now".into()).contains("instant"));
        assert!(parse("{}").is_err());
    }
}
