//! `git rutter timeline`: the decisions `recent --all` shows, as one self-contained HTML page
//! (spec/timeline.md). The page is a fixed template, its one stylesheet and its one script (this
//! folder's `page.css` and `page.js`), a chart of each week drawn here as SVG ([`chart`]), and
//! the decisions as JSON in a `<script type="application/json">` block that the script turns
//! into elements with `textContent` only. No text of the record is ever written as markup: a
//! summary holding `<script>` is a string in the JSON, escaped so it cannot close the block, and
//! text in the page. The Content-Security-Policy names the sha256 of the script and of the
//! stylesheet, so nothing else runs or styles, and fetches nothing (`default-src 'none'`).
//! Every field is shown as data and bounded ([`fields`]), and the script puts each in a bidi
//! isolate of its own.

mod chart;
mod fields;
mod read;

use super::recent::Query;
#[cfg(test)]
use super::recent::{Recent, Session, Step};
use super::render::{IdText, RefText, RESTORE_HINT};
use crate::clock::{Clock, Instant};
use crate::index::{Index, IndexError};
use crate::records::filter::EntryFilter;
use crate::records::fingerprint::short_hash;
use crate::records::standing::Status;
use crate::records::supersede::Links;
use fields::{shown, shown_opt};
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::borrow::Cow;
use std::path::Path;

/// The page's script, run as it is written here (its hash is in the policy).
const SCRIPT: &str = include_str!("page.js");
/// The page's stylesheet (its hash is in the policy).
const STYLE: &str = include_str!("page.css");

/// The page's generator line, the line after the policy's: with [`HEAD`] it marks a page this
/// command wrote ([`starts_as_page`]).
const GENERATOR: &str = r#"<meta name="generator" content="git-rutter timeline">"#;

/// The page's first lines, the same on every page since the first was written (only the
/// policy's hashes, after them, change with the script and the stylesheet).
const HEAD: &str = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta http-equiv=\"Content-Security-Policy\" content=\"";

/// The most bytes [`starts_as_page`] reads of a file: the head, a policy line, the generator.
pub(crate) const HEAD_BYTES: usize = 1024;

/// Whether a file whose first bytes are `start` (at most [`HEAD_BYTES`] of them) is a page this
/// command wrote, so `-o FILE` may replace it: it starts with [`HEAD`] exactly, its policy line
/// is one this module writes (the fixed policy around two hashes), and the next line is
/// [`GENERATOR`]. A note that merely quotes the generator line, anywhere, is not one.
pub(crate) fn starts_as_page(start: &[u8]) -> bool {
    let Some(rest) = start.strip_prefix(HEAD.as_bytes()) else {
        return false;
    };
    let Some(end) = rest.iter().position(|&b| b == b'\n') else {
        return false;
    };
    let (line, after) = (&rest[..end], &rest[end + 1..]);
    let generator = after.strip_prefix(GENERATOR.as_bytes());
    is_policy_line(line) && generator.is_some_and(|g| g.first() == Some(&b'\n'))
}

/// Whether `line` is the policy [`policy`] writes, with any two hashes, then `">`.
fn is_policy_line(line: &[u8]) -> bool {
    let policy = || {
        let value = std::str::from_utf8(line.strip_suffix(b"\">")?).ok()?;
        let rest = value.strip_prefix("default-src 'none'; script-src ")?;
        let (script, rest) = rest.split_once("; style-src ")?;
        let (style, tail) = rest.split_once("; ")?;
        Some(is_csp_hash(script) && is_csp_hash(style) && tail == POLICY_TAIL)
    };
    policy() == Some(true)
}

/// Whether `source` is a CSP hash source as [`csp_hash`] writes it.
fn is_csp_hash(source: &str) -> bool {
    let digest = source
        .strip_prefix("'sha256-")
        .and_then(|s| s.strip_suffix('\''));
    digest.is_some_and(|d| {
        !d.is_empty()
            && d.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='))
    })
}

/// The policy after its two hashes.
const POLICY_TAIL: &str =
    "base-uri 'none'; form-action 'none'; require-trusted-types-for 'script'; trusted-types 'none'";

/// What the page is made of.
pub(crate) struct Input<'a> {
    /// The vault's root, named in the page.
    pub vault: &'a Path,
    /// Where its decisions are read from.
    pub decisions: Source<'a>,
    /// The vault has a record, so each decision's status is marked (as `recent`).
    pub marks: bool,
    /// How a cited ref reads now ([`super::refs::Shown::write`]).
    pub refs: RefText<'a>,
    /// Each decision's short id, as `recent` leads with it.
    pub ids: IdText<'a>,
    /// Whose days and times the page shows: the local zone, or UTC (`--utc`).
    pub clock: &'a Clock,
    /// The use log's events `(ts, kind)`.
    pub uses: &'a [(String, String)],
    /// The time bounds (`--since`, `--until`); the chart counts the uses within them.
    pub bounds: &'a EntryFilter,
    /// When the page is written.
    pub now: Instant,
    /// Lines shown under the header (why the decisions are unverified).
    pub notes: Vec<String>,
}

/// Where the page's decisions are read from.
pub(crate) enum Source<'a> {
    /// `recent`'s answer with every session (no count, not brief), held whole.
    #[cfg(test)]
    Answer(&'a Recent),
    /// The record cache, in the page's order, a page day at a time ([`read`]): what `recent
    /// --all` shows with the query's filters (its count and `brief` are not read), from one
    /// snapshot of the cache (call [`page`] and [`Page::write_to`] inside one [`Index::read`]).
    Index { index: &'a Index, query: &'a Query },
}

/// The page and what it shows. Its HTML is written as it is made ([`Page::write_to`]): the
/// data's JSON goes straight to the output through the script-safe escaping, never held whole,
/// and the decisions are read as they are written, a page day at a time.
pub(crate) struct Page<'a> {
    input: &'a Input<'a>,
    head: Head,
    body: Body<'a>,
    chart: chart::Chart,
    pub decisions: usize,
    pub days: usize,
    pub projects: usize,
    /// What stopped the decisions being read while the page was written.
    failed: std::cell::RefCell<Option<IndexError>>,
}

/// The decisions of a page.
enum Body<'a> {
    /// An answer held whole, sorted when it is written.
    #[cfg(test)]
    Held(&'a Recent),
    /// Read as they are written.
    Read {
        index: &'a Index,
        query: &'a Query,
        tally: read::Tally,
    },
}

impl Page<'_> {
    /// Writes the page's HTML to `out`. An error reading the decisions stops it; it is the
    /// error [`Page::failure`] then gives.
    pub(crate) fn write_to(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        use std::io::Write as _;
        write_html(out, &self.chart, &|w: &mut dyn std::io::Write| {
            // serde_json writes in small pieces: they reach the escaping in large ones, each
            // piece whole (a buffer never splits a write), so a character is never split.
            let mut w = std::io::BufWriter::with_capacity(1 << 16, ScriptSafe(w));
            let head = serde_json::to_vec(&self.head).map_err(std::io::Error::from)?;
            // The head's object left open: its decisions follow, as serde_json writes a list.
            w.write_all(head.strip_suffix(b"}").unwrap_or(&head))?;
            w.write_all(b",\"decisions\":[")?;
            let mut first = true;
            let mut emit = |d: &Decision<'_>| -> Result<(), IndexError> {
                if !std::mem::take(&mut first) {
                    w.write_all(b",")?;
                }
                serde_json::to_writer(&mut w, d).map_err(std::io::Error::from)?;
                Ok(())
            };
            let read = match &self.body {
                #[cfg(test)]
                Body::Held(recent) => {
                    let parts = held_parts(recent);
                    sorted(self.input, &parts).iter().try_for_each(&mut emit)
                }
                Body::Read {
                    index,
                    query,
                    tally,
                } => read::each_decision(self.input, index, query, tally, &mut emit),
            };
            match read {
                Ok(()) => w.write_all(b"]}").and_then(|()| w.flush()),
                Err(IndexError::Io(e)) => Err(e),
                Err(e) => {
                    let text = e.to_string();
                    *self.failed.borrow_mut() = Some(e);
                    Err(std::io::Error::other(text))
                }
            }
        })
    }

    /// Adds a line under the header (why the decisions are unverified).
    pub(crate) fn note(&mut self, line: &str) {
        self.head.notes.push(shown(line, fields::PATH).into_owned());
    }

    /// What stopped the decisions being read while the page was written, if anything.
    pub(crate) fn failure(&self) -> Option<IndexError> {
        self.failed.borrow_mut().take()
    }

    /// The page's HTML as one string.
    #[cfg(test)]
    pub(crate) fn html(&self) -> String {
        let mut out = Vec::new();
        // Writing to a Vec cannot fail; the JSON of the page's own types cannot either.
        let _ = self.write_to(&mut out);
        String::from_utf8_lossy(&out).into_owned()
    }
}

/// A writer that makes the JSON written through it safe inside a `<script>` block, as
/// [`script_safe`] does to a whole string: serde_json hands over whole characters, so the
/// three bytes of U+2028 or U+2029 are never split between two writes.
struct ScriptSafe<'w>(&'w mut dyn std::io::Write);

impl std::io::Write for ScriptSafe<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        // The next `<`, `>` or `&`, and the next byte that may start U+2028 or U+2029, each
        // searched for again only once passed: most of the JSON needs no escape.
        let punct = |from: usize| {
            memchr::memchr3(b'<', b'>', b'&', &buf[from..]).map_or(buf.len(), |at| from + at)
        };
        let lead =
            |from: usize| memchr::memchr(0xE2, &buf[from..]).map_or(buf.len(), |at| from + at);
        let (mut next_punct, mut next_lead) = (punct(0), lead(0));
        let (mut start, mut i) = (0, 0);
        loop {
            if next_punct < i {
                next_punct = punct(i);
            }
            if next_lead < i {
                next_lead = lead(i);
            }
            i = next_punct.min(next_lead);
            if i >= buf.len() {
                break;
            }
            let escape: Option<(&[u8], usize)> = match buf[i] {
                b'<' => Some((b"\\u003c", 1)),
                b'>' => Some((b"\\u003e", 1)),
                b'&' => Some((b"\\u0026", 1)),
                _ if buf.get(i + 1..i + 3) == Some(&[0x80, 0xA8]) => Some((b"\\u2028", 3)),
                _ if buf.get(i + 1..i + 3) == Some(&[0x80, 0xA9]) => Some((b"\\u2029", 3)),
                _ => None,
            };
            match escape {
                Some((text, len)) => {
                    self.0.write_all(&buf[start..i])?;
                    self.0.write_all(text)?;
                    i += len;
                    start = i;
                }
                None => i += 1,
            }
        }
        self.0.write_all(&buf[start..])?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// The JSON the script reads, before its `decisions` (written after it, in the same object).
/// Every text in it is [`fields::shown`].
#[derive(Serialize)]
struct Head {
    vault: String,
    written: String,
    /// The empty state `recent` prints, when nothing is shown.
    empty: Option<String>,
    /// [`RESTORE_HINT`], when a decision shown is marked deleted.
    hint: Option<&'static str>,
    notes: Vec<String>,
}

/// One decision as the page shows it.
#[derive(Serialize)]
struct Decision<'a> {
    /// The project's sort key ([`crate::index::entries::project_key`]), not shown.
    #[serde(skip)]
    project_key: &'a str,
    /// The time as recorded, to sort by; not shown.
    #[serde(skip)]
    at: &'a str,
    /// The short id.
    id: String,
    /// The day (of the page's clock).
    day: String,
    /// The time of day, with its offset outside UTC.
    time: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    project: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    client: Option<Cow<'a, str>>,
    summary: Cow<'a, str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    mark: Option<&'static str>,
    /// `[superseded by ID]` (short ids), when later decisions replace it.
    #[serde(skip_serializing_if = "Option::is_none")]
    superseded: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    refs: Vec<Cited<'a>>,
    /// Cited notes past the [`fields::REFS`] shown (only a forged line cites so many).
    #[serde(skip_serializing_if = "Option::is_none")]
    more_refs: Option<usize>,
}

/// A cited note as recall shows it, in its parts: `path@hash`, then how it reads now.
#[derive(Serialize)]
struct Cited<'a> {
    path: Cow<'a, str>,
    /// The short hash, as the day files write it.
    hash: Cow<'a, str>,
    /// `(changed since capture)`, `(renamed to X)`, `[UNRESOLVED -- …]`…, when it drifted.
    #[serde(skip_serializing_if = "Option::is_none")]
    drift: Option<String>,
}

/// The page of `input`: what it writes before its decisions, read (from the index, a first
/// pass that holds no decision) or held (an answer, sorted whole).
pub(crate) fn page<'a>(input: &'a Input<'a>) -> Result<Page<'a>, IndexError> {
    let (body, empty, deleted, days, projects, decisions, chart) = match input.decisions {
        #[cfg(test)]
        Source::Answer(recent) => {
            let parts = held_parts(recent);
            let deleted = parts.iter().any(|p| p.status == Status::Deleted);
            let decisions = sorted(input, &parts);
            let days = count_distinct(decisions.iter().map(|d| d.day.as_str()));
            let projects = count_distinct(decisions.iter().filter_map(|d| d.project.as_deref()));
            let chart = drawn(input, decisions.iter().map(|d| d.day.as_str()));
            let n = decisions.len();
            let empty = super::render::empty_state(recent);
            (Body::Held(recent), empty, deleted, days, projects, n, chart)
        }
        Source::Index { index, query } => {
            let tally = read::tally(input, index, query)?;
            let empty = match tally.decisions {
                0 => super::render::empty_state(&super::recent::nothing_shown(index, query)?),
                _ => None,
            };
            let by_day = tally.days.iter();
            let chart = drawn(
                input,
                by_day.flat_map(|(d, n)| std::iter::repeat_n(d.as_str(), *n)),
            );
            let (deleted, days, projects, n) = (
                tally.deleted,
                tally.days.len(),
                tally.projects,
                tally.decisions,
            );
            (
                Body::Read {
                    index,
                    query,
                    tally,
                },
                empty,
                deleted,
                days,
                projects,
                n,
                chart,
            )
        }
    };
    let mut written = String::new();
    let now = input.now.iso();
    input.clock.push_day_time(&mut written, &now[..10], &now);
    let text = |t: &str| shown(t, fields::PATH).into_owned();
    let head = Head {
        vault: text(&input.vault.display().to_string()),
        written,
        empty: empty.map(|e| text(&e)),
        hint: (input.marks && deleted).then_some(RESTORE_HINT),
        notes: input.notes.iter().map(|n| text(n)).collect(),
    };
    Ok(Page {
        input,
        head,
        body,
        chart,
        decisions,
        days,
        projects,
        failed: Default::default(),
    })
}

/// The parts of every step of an answer.
#[cfg(test)]
fn held_parts(recent: &Recent) -> Vec<Parts<'_>> {
    let sessions: &[Session] = match recent {
        Recent::Sessions(s) => s,
        _ => &[],
    };
    sessions
        .iter()
        .flat_map(|s| &s.steps)
        .map(Parts::of)
        .collect()
}

/// The decisions of `parts`, by day (newest first), then as [`order`] says.
#[cfg(test)]
fn sorted<'a>(input: &Input<'_>, parts: &'a [Parts<'a>]) -> Vec<Decision<'a>> {
    let mut decisions: Vec<Decision<'_>> = parts.iter().map(|p| decision(input, p)).collect();
    decisions.sort_by(|a, b| b.day.cmp(&a.day).then_with(|| order(a, b)));
    decisions
}

/// The chart of the decisions on `days` (one day a decision) and the uses within the bounds.
fn drawn<'a>(input: &Input<'_>, days: impl Iterator<Item = &'a str>) -> chart::Chart {
    chart::drawn(
        input.clock,
        input.now,
        days,
        input.uses.iter().filter_map(|(ts, kind)| {
            let at = crate::clock::parse_instant(ts)?;
            (super::gate::counted(kind) && within(input.bounds, at)).then_some(at)
        }),
    )
}

/// The order of two decisions of one day: by project (by name, case-insensitive, those without
/// one last), then time (oldest first), then id.
fn order(a: &Decision<'_>, b: &Decision<'_>) -> std::cmp::Ordering {
    a.project
        .is_none()
        .cmp(&b.project.is_none())
        .then_with(|| a.project_key.cmp(b.project_key))
        .then_with(|| a.project.cmp(&b.project))
        .then_with(|| a.at.cmp(b.at))
        .then_with(|| a.id.cmp(&b.id))
}

/// What a decision is made of: a step's fields as recall serves them.
pub(super) struct Parts<'a> {
    /// The day of its day file.
    pub day: &'a str,
    pub time: Cow<'a, str>,
    pub id: Cow<'a, str>,
    pub project: Option<Cow<'a, str>>,
    /// The project's sort key ([`crate::index::entries::project_key`]; empty without one).
    pub project_key: String,
    pub client: Option<Cow<'a, str>>,
    pub summary: Cow<'a, str>,
    /// Every cited note as `(path, hash)` (the page shows the first [`fields::REFS`]).
    pub refs: Vec<(Cow<'a, str>, Cow<'a, str>)>,
    pub status: Status,
    pub supersede: Links,
}

#[cfg(test)]
impl<'a> Parts<'a> {
    /// The parts of `step`.
    fn of(step: &'a Step) -> Parts<'a> {
        let e = &step.entry;
        let refs = e.refs.iter();
        Parts {
            day: &step.day,
            time: Cow::Borrowed(&e.time),
            id: Cow::Borrowed(&e.id),
            project: e.project().map(Cow::Borrowed),
            project_key: e
                .project()
                .map(crate::index::entries::project_key)
                .unwrap_or_default(),
            client: e.client.as_deref().map(Cow::Borrowed),
            summary: Cow::Borrowed(&e.summary),
            refs: refs
                .map(|r| {
                    (
                        Cow::Borrowed(r.path.as_str()),
                        Cow::Borrowed(r.hash.as_str()),
                    )
                })
                .collect(),
            status: step.status,
            supersede: step.supersede.clone(),
        }
    }
}

/// One step as the page shows it, after its sort key (the project's) and its recorded time.
fn decision<'a>(input: &Input<'_>, p: &'a Parts<'a>) -> Decision<'a> {
    let (day, time) = input.clock.day_time(p.day, &p.time);
    let project = p.project.as_deref();
    let mut text = String::new();
    let refs = p
        .refs
        .iter()
        .take(fields::REFS)
        .map(|(path, hash)| cited(input.refs, path, hash, &mut text))
        .collect();
    Decision {
        project_key: &p.project_key,
        at: &p.time,
        id: fields::shown_owned((input.ids)(&p.id), fields::SHORT),
        day: fields::shown_owned(day, fields::SHORT),
        time: fields::shown_owned(time, fields::SHORT),
        project: shown_opt(project, fields::NAME),
        client: shown_opt(p.client.as_deref(), fields::NAME),
        summary: shown(&p.summary, fields::SUMMARY),
        mark: super::row::mark(p.status, input.marks),
        superseded: superseded(input, &p.supersede),
        refs,
        more_refs: p.refs.len().checked_sub(fields::REFS).filter(|&n| n > 0),
    }
}

/// The step's `[superseded by …]` mark, as recall writes it, when it has one.
fn superseded(input: &Input<'_>, links: &Links) -> Option<String> {
    let mut out = String::new();
    super::row::push_supersede(&mut out, links, Some(input.ids));
    let text = out.trim_start();
    (!text.is_empty()).then(|| shown(text, fields::SUMMARY).into_owned())
}

/// Whether `at` is within the time bounds (`--since`, `--until`).
fn within(bounds: &EntryFilter, at: crate::clock::Instant) -> bool {
    let iso = at.iso();
    bounds.from.as_deref().is_none_or(|f| iso.as_str() >= f)
        && bounds.until.as_deref().is_none_or(|u| iso.as_str() <= u)
}

/// A ref in its parts, from the text recall shows for it (`path@hash` and what follows, written
/// over `text`), so the drift marks are recall's own.
fn cited<'a>(refs: RefText<'_>, path: &'a str, hash: &'a str, text: &mut String) -> Cited<'a> {
    text.clear();
    refs(text, path, hash);
    let short = short_hash(hash);
    let drift = text
        .strip_prefix(path)
        .and_then(|s| s.strip_prefix('@'))
        .and_then(|s| s.strip_prefix(short))
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(|t| shown(t, fields::PATH).into_owned());
    Cited {
        path: shown(path, fields::PATH),
        hash: shown(short, fields::SHORT),
        drift,
    }
}

#[cfg(test)]
fn count_distinct<'a>(names: impl Iterator<Item = &'a str>) -> usize {
    names.collect::<std::collections::BTreeSet<_>>().len()
}

/// JSON made safe inside a `<script>` block: `<`, `>` and `&` written as `\u003c`, `\u003e` and
/// `\u0026` (so no `</script>` or `<!--` can end or change the block), and U+2028 and U+2029 as
/// escapes too. serde_json writes these characters only inside strings, where the escape is
/// the same string, so the JSON's value is unchanged.
#[cfg(test)]
pub(crate) fn script_safe(json: &str) -> String {
    let mut out = String::with_capacity(json.len() + json.len() / 32);
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// A CSP source for an inline block: `'sha256-<base64 of the sha256 of its text>'`.
pub(crate) fn csp_hash(text: &str) -> String {
    format!("'sha256-{}'", base64(&Sha256::digest(text.as_bytes())))
}

/// The policy: nothing may load, only the page's own script and stylesheet (by their hashes)
/// may run and style, no `<base>`, no form submission, and no string may reach an HTML sink
/// (Trusted Types: `innerHTML` and its kind throw).
pub(crate) fn policy() -> String {
    format!(
        "default-src 'none'; script-src {}; style-src {}; {POLICY_TAIL}",
        csp_hash(SCRIPT),
        csp_hash(STYLE)
    )
}

/// The page around its data (written by `data`, script-safe JSON) and its chart (SVG this
/// module wrote), to `w`.
fn write_html(
    w: &mut dyn std::io::Write,
    chart: &chart::Chart,
    data: &dyn Fn(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut out = String::with_capacity(chart.svg.len() + SCRIPT.len() + STYLE.len() + 4096);
    out.push_str(HEAD);
    out.push_str(&policy());
    out.push_str("\">\n");
    out.push_str(GENERATOR);
    out.push_str("\n<meta name=\"referrer\" content=\"no-referrer\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    out.push_str("<title>git rutter timeline</title>\n<style>");
    out.push_str(STYLE);
    out.push_str("</style>\n</head>\n<body>\n");
    out.push_str(BODY);
    out.push_str("<section id=\"use\" aria-labelledby=\"use-title\">\n");
    out.push_str("<h2 id=\"use-title\">Each week</h2>\n");
    out.push_str(CHART_LEDE);
    out.push_str("<div class=\"chart\">");
    out.push_str(&chart.svg);
    out.push_str("</div>\n");
    for line in &chart.left_out {
        out.push_str("<p class=\"lede\">");
        out.push_str(&escape_html(line));
        out.push_str("</p>\n");
    }
    out.push_str("</section>\n<main id=\"timeline\"></main>\n");
    out.push_str("<script type=\"application/json\" id=\"data\">");
    w.write_all(out.as_bytes())?;
    data(w)?;
    let mut tail = String::with_capacity(SCRIPT.len() + 64);
    tail.push_str("</script>\n<script>");
    tail.push_str(SCRIPT);
    tail.push_str("</script>\n</body>\n</html>\n");
    w.write_all(tail.as_bytes())
}

/// The header: title, scope, notes, the filter and the count (filled in by the script).
const BODY: &str = r#"<header>
<h1>Decisions</h1>
<p id="scope"></p>
<div id="notes"></div>
<div class="filters" role="search">
<label for="text">Words (every one, in the summary, project or a cited path)<input id="text" type="search" autocomplete="off" spellcheck="false"></label>
<label for="project">Project<select id="project"><option value="">every project</option></select></label>
<label for="client">Client<select id="client"><option value="">every client</option></select></label>
</div>
<p id="count" aria-live="polite"></p>
<noscript><p>This page shows the decisions with its own script; allow JavaScript for this file to see them.</p></noscript>
</header>
"#;

/// What the chart shows.
const CHART_LEDE: &str = "<p class=\"lede\">ISO weeks, Monday to Sunday: the decisions recorded, and the uses of the memory the MCP server logged (each librarian-recent call and each search that found an earlier decision; 3 or more a week means it is in use).</p>\n";

/// Standard base64 with padding.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Text made safe as HTML character data or a quoted attribute value.
pub(crate) fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests;
