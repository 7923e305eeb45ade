//! What the lines a commit adds to a record file may be (spec/record-format.md, "What a record
//! file may hold"): the grammar of each kind of record file and the bounds a capture keeps. One
//! rule for what sync takes in from a remote, what `verify` accepts in the history, and which
//! use-log lines `git rutter commit` commits. Reading an addition this way also yields the ids
//! of the records it holds, which the audit learns commit by commit.

use super::entry::Entry;
use super::paths::{self, RecordKind};
use super::Broken;
use super::{dayfile, ledger, line, retraction, v1};
use crate::clock::Instant;

/// The cut a capture applies to a summary (and `retract` to a reason), in `char`s.
pub(crate) const SUMMARY_MAX_CHARS: usize = 2000;
/// The cut a capture applies to each provenance value (cwd, project, repo), in `char`s.
pub(crate) const PROVENANCE_MAX_CHARS: usize = 512;
/// How far past this machine's clock a use-log event may be stamped: a day covers a clock set
/// to local time as if it were UTC (at most 14 hours ahead) and ordinary drift. An event from a
/// clock further ahead is refused until the clock here catches up with it, so an honest machine
/// with a wrong clock delays a sync, and one stamped in the year 9999 never gets in.
pub(crate) const USE_CLOCK_MARGIN_MS: i64 = 86_400_000;
/// The earliest plausible use-log event, 2000-01-01T00:00:00Z: neither rutter nor its
/// TypeScript reference existed before, so an earlier stamp is a clock that was reset (to the
/// epoch, on a machine without a real-time clock) or a forgery.
pub(crate) const USE_EARLIEST: Instant = Instant(946_684_800_000);
/// The largest `@1` file a commit may add: the reference rewrote a day's whole file on every
/// capture, so its files hold one day's entries (kilobytes), and its YAML is parsed whole.
pub(crate) const MAX_V1_BYTES: usize = 16 << 20;

/// The first line of an addition that breaks the grammar: its 1-based number in the file's new
/// version, and the rule it breaks (one sentence, no capital, no period).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Breach {
    pub line: usize,
    pub rule: String,
}

impl std::fmt::Display for Breach {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.rule)
    }
}

/// The ids of the records (entries, retractions, bindings) that `new` adds to `old` at the
/// vault-relative record path `path` (`old` empty: `new` is a new file), when every line it adds
/// keeps the grammar of that file; the first line that does not otherwise. A `new` that does not
/// extend `old` is the history's to judge (a rewrite), and nothing here.
pub(crate) fn added(
    path: &str,
    old: &[u8],
    new: &[u8],
    now: Instant,
) -> Result<Vec<String>, Breach> {
    let Some((_, _, kind)) = paths::working_file(path) else {
        return Ok(vec![]);
    };
    let Some(mut rest) = new.strip_prefix(old).filter(|t| !t.is_empty()) else {
        return Ok(vec![]);
    };
    let mut at = Reader {
        kind,
        now,
        line: 1 + memchr::memchr_iter(b'\n', old).count(),
        ids: Vec::new(),
    };
    if !rest.ends_with(b"\n") {
        at.line += memchr::memchr_iter(b'\n', rest).count();
        return Err(at.breach("the file does not end with a newline"));
    }
    if !old.is_empty() && !old.ends_with(b"\n") {
        // A writer that finds no final newline writes one first, and nothing else, before its
        // line: the old last line is never completed by anything but that newline.
        rest = rest.strip_prefix(b"\n").ok_or_else(|| {
            at.breach("an append to a file without a final newline starts with one")
        })?;
        at.line += 1;
    }
    let mut old_style = false;
    if old.is_empty() {
        let (head, v1) = at.head(path, rest)?;
        old_style = v1;
        at.line += memchr::memchr_iter(b'\n', &rest[..head]).count();
        rest = &rest[head..];
    }
    for l in rest.split_inclusive(|b| *b == b'\n') {
        at.line(&l[..l.len() - 1], old_style)?;
        at.line += 1;
    }
    Ok(at.ids)
}

/// Whether `l` (one line, without its newline) is a use-log event a record takes: a JSON
/// object with a string `kind` and a string `ts` of the form `YYYY-MM-DDTHH:MM:SS.mmmZ`, not
/// before [`USE_EARLIEST`] and at most [`USE_CLOCK_MARGIN_MS`] after `now`.
pub(crate) fn use_event(l: &str, now: Instant) -> Result<(), Broken> {
    let v: serde_json::Value =
        serde_json::from_str(l).map_err(|_| "not a JSON object (a use-log event)".to_string())?;
    let field = |k: &str| v.get(k).and_then(serde_json::Value::as_str);
    let (Some(ts), Some(_)) = (field("ts"), field("kind")) else {
        return Err("not a use-log event: a JSON object with a string `ts` and `kind`".into());
    };
    let Some(at) = crate::clock::parse_instant(ts).filter(|_| ts.len() == 24) else {
        return Err("its `ts` is not a time of the form YYYY-MM-DDTHH:MM:SS.mmmZ".into());
    };
    if at < USE_EARLIEST {
        return Err(
            format!("its `ts` {ts} is before 2000, earlier than any use rutter logs").into(),
        );
    }
    if at.0 > now.0.saturating_add(USE_CLOCK_MARGIN_MS) {
        return Err(format!(
            "its `ts` {ts} is more than a day after this machine's clock ({})",
            now.iso()
        )
        .into());
    }
    Ok(())
}

/// Whether an entry keeps the bounds a capture keeps: its summary and provenance values no
/// longer than the capture's cuts, and the ids it supersedes within theirs.
pub(crate) fn entry_bounds(e: &Entry) -> Result<(), Broken> {
    within("summary", &e.summary, SUMMARY_MAX_CHARS)?;
    if let Some(ids) = &e.supersedes {
        super::supersede::check(ids)?;
    }
    if let Some(w) = &e.workspace {
        within("cwd", &w.cwd, PROVENANCE_MAX_CHARS)?;
        within("project", &w.project, PROVENANCE_MAX_CHARS)?;
        if let Some(repo) = &w.repo {
            within("repo", repo, PROVENANCE_MAX_CHARS)?;
        }
    }
    Ok(())
}

fn within(what: &str, s: &str, max: usize) -> Result<(), Broken> {
    // A `char` is at most 4 bytes: a short field needs no count.
    if s.len() <= max {
        return Ok(());
    }
    match s.chars().count() {
        n if n > max => {
            Err(format!("a {what} of {n} characters, over the {max} a capture keeps").into())
        }
        _ => Ok(()),
    }
}

/// Where in the file the lines being read are, what they are, and the ids read so far.
struct Reader {
    kind: RecordKind,
    now: Instant,
    line: usize,
    ids: Vec<String>,
}

impl Reader {
    fn breach(&self, rule: impl std::fmt::Display) -> Breach {
        Breach {
            line: self.line,
            rule: rule.to_string(),
        }
    }

    /// How many bytes of a new file's `bytes` its head takes (the `@2` header, or an `@1`
    /// frontmatter and generated body), and whether it is an `@1` file.
    fn head(&mut self, path: &str, bytes: &[u8]) -> Result<(usize, bool), Breach> {
        let (header, what, schema) = match self.kind {
            RecordKind::DayFile => (
                dayfile::header(paths::day_of(path).unwrap_or_default()),
                "day file",
                "session-record",
            ),
            RecordKind::Ledger => (ledger::header(), "ledger", "note-identity"),
            _ => return Ok((0, false)),
        };
        if bytes.starts_with(header.as_bytes()) {
            return Ok((header.len(), false));
        }
        let want = format!(
            "a new {what} starts with the `{schema}@2` header of spec/record-format.md or is a `{schema}@1` file"
        );
        let text = std::str::from_utf8(bytes)
            .ok()
            .filter(|t| v1::has_frontmatter(t))
            .ok_or_else(|| self.breach(want.clone()))?;
        if bytes.len() > MAX_V1_BYTES {
            return Err(self.breach(format!(
                "an `@1` file of {} bytes, over the {MAX_V1_BYTES} a commit may add",
                bytes.len()
            )));
        }
        if let Some((n, long)) = text
            .split('\n')
            .enumerate()
            .find(|(_, l)| l.len() > line::MAX_LINE_BYTES)
        {
            self.line += n;
            return Err(self.breach(too_long(long.len())));
        }
        let start = match self.kind {
            RecordKind::DayFile => self.v1_day(text, &want)?,
            _ => {
                let (start, bindings) = ledger::frontmatter(text)
                    .map_err(|e| self.breach(format!("{want}; its frontmatter: {e}")))?;
                self.ids.extend(bindings.into_iter().map(|b| b.id));
                start
            }
        };
        Ok((start, true))
    }

    /// The end of an `@1` day file's generated body, its frontmatter's entries within bounds.
    fn v1_day(&mut self, text: &str, want: &str) -> Result<usize, Breach> {
        let file = v1::parse_v1(text)
            .ok()
            .filter(|f| f.schema == "session-record@1")
            .ok_or_else(|| self.breach(format!("{want}; its frontmatter cannot be read")))?;
        for e in &file.entries {
            entry_bounds(e).map_err(|rule| self.breach(format!("an `@1` entry with {rule}")))?;
        }
        self.ids.extend(file.entries.into_iter().map(|e| e.id));
        Ok(file.body_end)
    }

    /// Reads one added line (without its newline). After the generated body of an `@1` file
    /// (`old_style`) a line without a record marker is the reference's text, not a record.
    fn line(&mut self, bytes: &[u8], old_style: bool) -> Result<(), Breach> {
        if bytes.len() > line::MAX_LINE_BYTES {
            return Err(self.breach(too_long(bytes.len())));
        }
        if self.kind == RecordKind::Position {
            return Ok(());
        }
        let l = std::str::from_utf8(bytes).map_err(|_| self.breach("a line that is not UTF-8"))?;
        let read = match self.kind {
            RecordKind::DayFile => self.day_line(l, old_style),
            RecordKind::Ledger => match ledger::parse_line(l) {
                Ok(Some(b)) => {
                    self.ids.push(b.id);
                    Ok(())
                }
                Ok(None) if old_style => Ok(()),
                Ok(None) => Err("not a binding line".into()),
                Err(e) => Err(e),
            },
            RecordKind::UseLog => use_event(l, self.now),
            RecordKind::Acks => ack(l),
            RecordKind::Purges => super::purge::parse(l).map(drop),
            RecordKind::Position | RecordKind::Cited => Ok(()),
        };
        read.map_err(|rule| self.breach(rule))
    }

    fn day_line(&mut self, l: &str, old_style: bool) -> Result<(), Broken> {
        match line::parse(l) {
            Ok(Some(e)) => {
                entry_bounds(&e).map_err(|rule| format!("an entry line with {rule}"))?;
                self.ids.push(e.id);
                return Ok(());
            }
            Ok(None) => {}
            Err(e) => return Err(format!("an entry line that does not parse: {e}").into()),
        }
        match retraction::parse(l) {
            Ok(Some(r)) => {
                within("reason", &r.reason, SUMMARY_MAX_CHARS)
                    .map_err(|rule| format!("a retraction line with {rule}"))?;
                self.ids.push(r.id);
                Ok(())
            }
            Ok(None) if old_style => Ok(()),
            Ok(None) => Err("neither an entry line nor a retraction line".into()),
            Err(e) => Err(format!("a retraction line that does not parse: {e}").into()),
        }
    }
}

/// An acknowledgement: a JSON object with a string `finding` and `reason` (what `verify` reads).
fn ack(l: &str) -> Result<(), Broken> {
    let v: serde_json::Value = serde_json::from_str(l).map_err(|_| "not a JSON object")?;
    let field = |k: &str| v.get(k).and_then(serde_json::Value::as_str);
    match (field("finding"), field("reason")) {
        (Some(_), Some(_)) => Ok(()),
        _ => {
            Err("not an acknowledgement: a JSON object with a string `finding` and `reason`".into())
        }
    }
}

fn too_long(n: usize) -> String {
    format!(
        "a line of {n} bytes, over the {} a record line may hold",
        line::MAX_LINE_BYTES
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::sanitize::inert_line;
    use crate::records::entry::{NoteRef, Workspace};
    use crate::records::ledger::Binding;
    use crate::records::retraction::Retraction;
    use crate::records::text::strategies::hostile_text;
    use proptest::prelude::*;

    const DAY: &str = "2026-11-30";
    const PATH: &str = "_librarian/sessions/2026-11-30.md";
    const USE: &str = "_librarian/stateful-use.jsonl";

    fn now() -> Instant {
        crate::clock::parse_instant("2026-11-30T12:00:00.000Z").unwrap()
    }

    fn entry(id: &str, summary: &str) -> Entry {
        Entry {
            id: id.into(),
            session_id: Some("S".into()),
            time: "2026-11-30T07:31:41.112Z".into(),
            summary: summary.into(),
            refs: vec![NoteRef::new(
                "a.md",
                format!("sha256:{}", "0".repeat(64)),
                None,
            )],
            workspace: Some(Workspace::new("/w/p", "p", None)),
            client: Some("claude".into()),
            supersedes: None,
            extra: Default::default(),
        }
    }

    fn file(lines: &[String]) -> String {
        let mut text = dayfile::header(DAY);
        for l in lines {
            text.push_str(l);
            text.push('\n');
        }
        text
    }

    fn rule(path: &str, old: &str, new: &str) -> String {
        match added(path, old.as_bytes(), new.as_bytes(), now()) {
            Ok(ids) => panic!("taken, ids {ids:?}"),
            Err(b) => b.to_string(),
        }
    }

    #[test]
    fn a_new_day_file_and_appends_to_it_are_read_for_their_ids() {
        let one = line::render(&entry("1", "one"));
        let new = file(std::slice::from_ref(&one));
        assert_eq!(
            added(PATH, b"", new.as_bytes(), now()),
            Ok(vec!["1".into()])
        );
        let r = Retraction {
            id: "3".into(),
            retracts: "1".into(),
            time: "2026-11-30T08:00:00.000Z".into(),
            reason: "wrong".into(),
            extra: Default::default(),
        };
        let more = format!(
            "{new}{}\n{}\n",
            line::render(&entry("2", "two")),
            retraction::render(&r)
        );
        let ids = added(PATH, new.as_bytes(), more.as_bytes(), now());
        assert_eq!(ids, Ok(vec!["2".into(), "3".into()]));
        // Nothing added, a rewrite, a file of no kind: nothing to judge here.
        assert_eq!(
            added(PATH, new.as_bytes(), new.as_bytes(), now()),
            Ok(vec![])
        );
        assert_eq!(added(PATH, b"other", new.as_bytes(), now()), Ok(vec![]));
        assert_eq!(added("_librarian/x.md", b"", b"junk", now()), Ok(vec![]));
        // An empty file holds nothing.
        assert_eq!(added(PATH, b"", b"", now()), Ok(vec![]));
    }

    #[test]
    fn each_rule_names_the_line_that_breaks_it() {
        let one = line::render(&entry("1", "one"));
        let new = file(std::slice::from_ref(&one));
        let long = line::render(&entry("2", &"é".repeat(SUMMARY_MAX_CHARS + 1)));
        assert_eq!(
            rule(PATH, &new, &format!("{new}{long}\n")),
            "line 9: an entry line with a summary of 2001 characters, over the 2000 a capture keeps"
        );
        let mut far = entry("2", "x");
        far.workspace = Some(Workspace::new("/w", "p".repeat(513), None));
        let far = line::render(&far);
        assert!(
            rule(PATH, &new, &format!("{new}{far}\n")).contains("with a project of 513 characters")
        );
        let mut many = entry("2", "x");
        many.supersedes = Some(vec!["20261130T073141112Z".into(); 17]);
        assert_eq!(
            rule(PATH, &new, &format!("{new}{}\n", line::render(&many))),
            "line 9: an entry line with a `supersedes` of 17 ids, over the 16 an entry may name"
        );
        let hostile = "- x <!-- rutter:entry {\"id\":\"2\",\"time\":\"t\",\"summary\":\"s\",\"refs\":[],\"supersedes\":[1]} -->";
        assert!(rule(PATH, &new, &format!("{new}{hostile}\n"))
            .starts_with("line 9: an entry line that does not parse"));
        let not_array = hostile.replace("[1]", "\"20261130T073141112Z\"");
        assert!(rule(PATH, &new, &format!("{new}{not_array}\n"))
            .starts_with("line 9: an entry line that does not parse"));
        assert_eq!(
            rule(PATH, "", &format!("{one}\n")),
            "line 1: a new day file starts with the `session-record@2` header of spec/record-format.md or is a `session-record@1` file"
        );
        assert_eq!(
            rule(PATH, &new, &format!("{new}{one}")),
            "line 9: the file does not end with a newline"
        );
        assert_eq!(
            rule(PATH, &new, &format!("{new}\n")),
            "line 9: neither an entry line nor a retraction line"
        );
        assert!(
            rule(PATH, &new, &format!("{new}- <!-- rutter:entry {{ -->\n"))
                .starts_with("line 9: an entry line that does not parse")
        );
        let huge = format!("{new}{}\n", "x".repeat(line::MAX_LINE_BYTES + 1));
        assert!(rule(PATH, &new, &huge).ends_with("over the 1048576 a record line may hold"));
        let latin1 = [new.as_bytes(), b"\xff\n"].concat();
        assert_eq!(
            added(PATH, new.as_bytes(), &latin1, now()).map_err(|b| b.rule),
            Err("a line that is not UTF-8".into())
        );
    }

    #[test]
    fn a_file_without_a_final_newline_is_completed_only_by_one() {
        let one = line::render(&entry("1", "one"));
        let torn = format!("{}{one}\n- torn", dayfile::header(DAY));
        let two = line::render(&entry("2", "two"));
        let ok = format!("{torn}\n{two}\n");
        assert_eq!(
            added(PATH, torn.as_bytes(), ok.as_bytes(), now()),
            Ok(vec!["2".into()])
        );
        assert_eq!(
            rule(PATH, &torn, &format!("{torn} completed\n{two}\n")),
            "line 9: an append to a file without a final newline starts with one"
        );
    }

    /// The reference's `@1` files are read as they are: their entries within bounds, any text
    /// after their generated body that carries no marker kept, marked lines held to the grammar.
    #[test]
    fn v1_files_are_taken_within_the_bounds() {
        let v1 = |summary: &str| {
            format!("---\ncollection: librarian.sessions\nschema: session-record@1\nday: '{DAY}'\nsessions:\n  - id: 20261130T000000000Z\n    time: '2026-11-30T00:00:00.000Z'\n    summary: '{summary}'\n    refs: []\nrefs: []\n---\n# Sessions - {DAY}\n\n- 00:00:00 - {summary}\n")
        };
        let good = v1("x <!-- rutter:entry {} -->");
        assert_eq!(
            added(PATH, b"", good.as_bytes(), now()),
            Ok(vec!["20261130T000000000Z".into()])
        );
        let two = line::render(&entry("2", "two"));
        let more = format!("{good}stray text\n{two}\n");
        assert_eq!(
            added(PATH, b"", more.as_bytes(), now()),
            Ok(vec!["20261130T000000000Z".into(), "2".into()])
        );
        let bad = format!("{good}- x <!-- rutter:entry {{ -->\n");
        assert!(rule(PATH, "", &bad).contains("an entry line that does not parse"));
        let long = v1(&"a".repeat(SUMMARY_MAX_CHARS + 1));
        assert!(rule(PATH, "", &long).contains("an `@1` entry with a summary of 2001"));
        let broken = good.replace("sessions:\n", "sessions: [\n");
        assert!(rule(PATH, "", &broken).contains("its frontmatter cannot be read"));
    }

    #[test]
    fn ledgers_hold_binding_lines_after_their_header_or_their_v1_body() {
        let path = crate::records::ledger::LEDGER_PATH;
        let b = Binding {
            id: "20261202T080000000Z-1".into(),
            from: "a.md".into(),
            to: "b.md".into(),
            hash: "sha256:00".into(),
            detected: "exact-hash".into(),
            ts: "2026-12-02T08:00:00.000Z".into(),
            extra: Default::default(),
        };
        let line = ledger::render(&b);
        let new = format!("{}{line}\n", ledger::header());
        assert_eq!(
            added(path, b"", new.as_bytes(), now()),
            Ok(vec![b.id.clone()])
        );
        assert_eq!(
            rule(path, &new, &format!("{new}plain\n")),
            "line 8: not a binding line"
        );
        let v1 = "---\ncollection: librarian.note-identity\nschema: note-identity@1\nbindings:\n  - id: v1\n    from: a.md\n    to: b.md\n    hash: 'sha256:00'\n    detected: exact-hash\n    ts: '2026-11-30T07:31:59.482Z'\n---\n# Note identity bindings\n\n- 2026-11-30T07:31:59.482Z exact-hash: a.md -> b.md (sha256:00)\n";
        let with = format!("{v1}{line}\n");
        assert_eq!(
            added(path, b"", with.as_bytes(), now()),
            Ok(vec!["v1".into(), b.id.clone()])
        );
        assert!(rule(path, "", "# bindings\n").contains("`note-identity@2` header"));
    }

    #[test]
    fn use_log_events_are_stamped_at_a_plausible_time() {
        let event = |ts: &str| format!("{{\"ts\":\"{ts}\",\"kind\":\"librarian-recent\"}}");
        for ts in [
            "2000-01-01T00:00:00.000Z",
            "2026-11-30T12:00:00.000Z",
            "2026-12-01T12:00:00.000Z",
        ] {
            assert_eq!(use_event(&event(ts), now()), Ok(()), "{ts}");
        }
        let refused = [
            ("2026-12-01T12:00:00.001Z", "more than a day after"),
            ("9999-12-31T23:59:59.999Z", "more than a day after"),
            ("1999-12-31T23:59:59.999Z", "before 2000"),
            ("1764460800000", "not a time"),
            ("2026-11-30T12:00:00Z", "not a time"),
            ("2026-13-30T12:00:00.000Z", "not a time"),
        ];
        for (ts, why) in refused {
            let got = use_event(&event(ts), now()).unwrap_err();
            assert!(got.contains(why), "{ts}: {got}");
        }
        for l in [
            "[]",
            "{\"ts\":\"2026-11-30T12:00:00.000Z\"}",
            "{\"kind\":\"x\"}",
            "x",
        ] {
            assert!(use_event(l, now()).is_err(), "{l}");
        }
        let log = format!("{}\n", event("2026-11-30T11:00:00.000Z"));
        assert_eq!(added(USE, b"", log.as_bytes(), now()), Ok(vec![]));
        let future = format!("{log}{}\n", event("9999-12-31T23:59:59.999Z"));
        assert!(rule(USE, &log, &future).starts_with("line 2: its `ts` 9999-12-31"));
    }

    #[test]
    fn acknowledgements_and_positions() {
        let acks = crate::records::paths::ACKS;
        let ack = format!(
            "{}\n",
            paths::ack_line("2026-11-30T12:00:00.000Z", "a:b:c", "ok")
        );
        assert_eq!(added(acks, b"", ack.as_bytes(), now()), Ok(vec![]));
        assert!(rule(acks, "", "{\"finding\":\"x\"}\n").contains("not an acknowledgement"));
        let position = "_librarian/positions/2026-11.md";
        assert_eq!(added(position, b"", b"# anything\n\n", now()), Ok(vec![]));
        let huge = format!("{}\n", "x".repeat(line::MAX_LINE_BYTES + 1));
        assert!(rule(position, "", &huge).contains("a record line may hold"));
    }

    /// A field as a client may send it: hostile text, or long runs, before capture's cut.
    fn raw_field() -> impl Strategy<Value = String> {
        prop_oneof![
            hostile_text(&[line::MARKER, retraction::MARKER, ledger::MARKER]),
            ("[a-zé😀 ]{1,4}", 0..1200usize).prop_map(|(s, n)| s.repeat(n)),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        /// What a capture, `retract`, `identity`, `verify --ack` and the MCP server write is
        /// always taken, in a new file or appended (after a torn tail too): an honest machine
        /// is never refused.
        #[test]
        fn what_the_writers_write_is_always_taken(
            summary in raw_field(), cwd in raw_field(), project in raw_field(),
            path in raw_field(), reason in raw_field(), torn in any::<bool>(),
        ) {
            let mut e = entry("20261130T073141112Z", &inert_line(&summary, SUMMARY_MAX_CHARS));
            prop_assume!(!e.summary.is_empty());
            e.workspace = Some(Workspace::new(
                inert_line(&cwd, PROVENANCE_MAX_CHARS),
                inert_line(&project, PROVENANCE_MAX_CHARS),
                Some(inert_line(&cwd, PROVENANCE_MAX_CHARS)),
            ));
            e.refs.push(NoteRef::new(path.clone(), "sha256:x", None));
            let r = Retraction {
                id: "20261130T080000000Z".into(),
                retracts: e.id.clone(),
                time: "2026-11-30T08:00:00.000Z".into(),
                reason: inert_line(&reason, SUMMARY_MAX_CHARS),
                extra: Default::default(),
            };
            let header = dayfile::header(DAY);
            let mut text = crate::records::append_bytes(0, true, &header, &line::render(&e));
            prop_assert!(added(PATH, b"", text.as_bytes(), now()).is_ok());
            if torn {
                text.push_str("- torn");
            }
            let old = text.clone();
            text += &crate::records::append_bytes(
                old.len() as u64, !torn, &header, &retraction::render(&r),
            );
            prop_assert_eq!(
                added(PATH, old.as_bytes(), text.as_bytes(), now()),
                Ok(vec![r.id.clone()])
            );
            let b = Binding {
                id: "1".into(), from: path.clone(), to: path, hash: "sha256:x".into(),
                detected: "confirmed".into(), ts: "2026-11-30T08:00:00.000Z".into(),
                extra: Default::default(),
            };
            let ledger = crate::records::append_bytes(0, true, &ledger::header(), &ledger::render(&b));
            prop_assert!(added(ledger::LEDGER_PATH, b"", ledger.as_bytes(), now()).is_ok());
            let ack = format!("{}\n", paths::ack_line(&now().iso(), &summary, &reason));
            prop_assert!(added(paths::ACKS, b"", ack.as_bytes(), now()).is_ok());
            let event = format!(
                "{}\n",
                crate::recall::uselog::line(now(), crate::recall::uselog::Kind::Recent)
            );
            prop_assert!(added(USE, b"", event.as_bytes(), now()).is_ok());
        }

        /// Arbitrary lines appended to a day file are either taken, and then every one of them
        /// is a record line the readers read within the bounds, or refused; never a panic.
        #[test]
        fn arbitrary_additions_are_record_lines_in_bounds_or_refused(
            lines in prop::collection::vec(prop_oneof![
                raw_field(),
                raw_field().prop_map(|s| line::render(&entry("x", &s))),
                (raw_field(), 0..20usize).prop_map(|(s, n)| {
                    let mut e = entry("x", "replaces");
                    e.supersedes = Some(vec![s; n]);
                    line::render(&e)
                }),
                raw_field().prop_map(|s| retraction::render(&Retraction {
                    id: "r".into(), retracts: "x".into(), time: "t".into(), reason: s,
                    extra: Default::default(),
                })),
            ], 1..4),
            kind in prop::sample::select(vec![PATH, USE, ledger::LEDGER_PATH, paths::ACKS]),
        ) {
            let old = file(&[line::render(&entry("0", "first"))]);
            let new = format!("{old}{}\n", lines.join("\n"));
            match added(kind, old.as_bytes(), new.as_bytes(), now()) {
                Err(b) => prop_assert!(b.line > 8, "{}", b),
                Ok(_) if kind == PATH => {
                    let tail = dayfile::parse_v2_tail(&new.as_bytes()[old.len()..]);
                    let records = tail.entries.len() + tail.retractions.len();
                    prop_assert_eq!(records, new[old.len()..].matches('\n').count());
                    for e in &tail.entries {
                        prop_assert!(entry_bounds(e).is_ok());
                        let ids = e.supersedes.as_deref().unwrap_or_default();
                        prop_assert!(crate::records::supersede::check(ids).is_ok());
                    }
                    for r in &tail.retractions {
                        prop_assert!(r.reason.chars().count() <= SUMMARY_MAX_CHARS);
                    }
                }
                Ok(_) => {}
            }
            let _ = added(kind, b"", new.as_bytes(), now());
        }
    }
}
