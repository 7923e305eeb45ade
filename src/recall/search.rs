//! Search and get-note as the reader sees them (anchor §9): ranked hits, each with its path,
//! badges and snippet, plus the quiet prior-engagement note. Enrichment is additive only: it
//! never adds, drops or reorders a hit, and a mere candidate is never shown as engagement. The
//! engagement's text comes from the record, never a retracted entry, marked like `recent` marks
//! a step that is not simply committed. It counts every decision that cited the note and shows
//! the one that shares most of the query's words (the newest among equals), so a note cited by
//! many decisions shows the one the question is about, not only the latest.

use crate::index::cited::{Engaged, Engagements};
use crate::index::entries::Scope;
use crate::index::identity::Candidate;
use crate::index::reads::Records;
use crate::index::search::{
    searched_part, Filters, Hit, Note, NoteHead, QUERY_MAX_BYTES, QUERY_MAX_TERMS,
};
use crate::index::supersede::Supersedes;
use crate::index::{Index, IndexError};
use crate::records::standing::Status;
use crate::records::text::field_safe;
use serde::Serialize;

/// A hit with what past sessions say about it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Enriched {
    #[serde(flatten)]
    pub hit: Hit,
    /// The recorded decisions that cited this note (directly or through a binding): how many,
    /// and the one closest to the query.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engagement: Option<EngagementView>,
    /// Notes that now carry the hash of a ref confirmed to this one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub conflicts: Vec<String>,
    /// Unresolved refs that name this note as a candidate.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unresolved: Vec<Unresolved>,
    /// When no note holds every word of the query: the words this one holds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub words: Option<Vec<String>>,
}

/// A search's answer: the notes that hold every word, or, when none does, the ones that hold
/// most of them.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Answer {
    pub results: Vec<Enriched>,
    /// Set when no note holds every word and the results hold some of them.
    pub partial: Option<PartialView>,
}

/// What the notes hold of a query none holds whole.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct PartialView {
    /// The query's words.
    pub words: Vec<String>,
    /// The words no note holds.
    pub missing: Vec<String>,
    /// How many notes hold at least one word (the results are the best of them).
    pub notes: usize,
}

/// Serialisable engagement: the decision shown, and how many cite the note.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct EngagementView {
    /// The day of the decision shown.
    pub date: String,
    pub summary: String,
    /// The entry's status against the record (spec/recall.md).
    pub status: Status,
    /// The entries that replace the one shown (spec/recall.md, "Supersede").
    pub superseded_by: Vec<String>,
    /// How many recorded decisions cited the note (retracted ones left out).
    pub decisions: usize,
    /// The day of the newest of them.
    pub newest: String,
    /// The one shown shares more of the query's words than the newest, so it is shown instead.
    pub closest: bool,
}

/// An unresolved ref and its candidates.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Unresolved {
    pub from: String,
    pub candidates: Vec<Candidate>,
}

/// Brings the record cache up to date before a search's read transaction (it writes), so the
/// engagement counts a decision captured or retracted a moment ago: an index built since the
/// record was last read (a new or rebuilt one) reads it whole, so enrichment is never empty for
/// want of it; otherwise the quick refresh `recent` and get-note make (spec/recall.md), and when
/// that cannot run the cache answers as the last refresh left it.
pub fn ensure_records(index: &Index) -> Result<(), IndexError> {
    refresh_records(index, true)
}

/// [`ensure_records`] for the MCP server: the record is read when the index has not loaded it,
/// and otherwise the cache answers as the last refresh left it (each `librarian-recent` and
/// `librarian-get-note` call refreshes it), so a `librarian-search` call opens no repository.
pub fn ensure_loaded(index: &Index) -> Result<(), IndexError> {
    refresh_records(index, false)
}

fn refresh_records(index: &Index, quick: bool) -> Result<(), IndexError> {
    let loaded = index.records()? != Records::NotLoaded;
    if loaded && !quick {
        return Ok(());
    }
    let vault = match crate::vault::open(index.root(), crate::vault::VaultSource::Flag) {
        Ok(v) => v,
        Err(_) if loaded => return Ok(()),
        Err(e) => return Err(IndexError::Record(Box::new(e))),
    };
    let refreshed = super::source::Source::open(&vault).and_then(|src| {
        let scope = if loaded {
            Scope::Quick(&[])
        } else {
            Scope::Full
        };
        index.refresh_records(&src, scope)
    });
    match refreshed {
        Err(_) if loaded => Ok(()),
        other => other.map(drop),
    }
}

/// Searches and enriches; the order is the index's ranking. When no note holds every word of a
/// query of two or more, the notes that hold most of them answer instead (spec/index.md, "Some
/// of the words"). Call [`ensure_records`] first.
pub(crate) fn search(
    index: &Index,
    query: &str,
    limit: usize,
    filters: &Filters,
) -> Result<Answer, IndexError> {
    index.read(|index| {
        let hits = index.search(query, limit, filters)?;
        if !hits.is_empty() {
            let results = enrich(index, query, hits.into_iter().map(|h| (h, None)))?;
            return Ok(Answer {
                results,
                partial: None,
            });
        }
        let Some(some) = index.search_some(query, limit, filters)? else {
            return Ok(Answer {
                results: vec![],
                partial: None,
            });
        };
        let hits = some.hits.into_iter().map(|p| (p.hit, Some(p.words)));
        let results = enrich(index, query, hits)?;
        let partial = (!results.is_empty()).then_some(PartialView {
            words: some.words,
            missing: some.missing,
            notes: some.notes,
        });
        Ok(Answer { results, partial })
    })
}

fn enrich(
    index: &Index,
    query: &str,
    hits: impl Iterator<Item = (Hit, Option<Vec<String>>)>,
) -> Result<Vec<Enriched>, IndexError> {
    let words = query_words(query);
    let claims = index.supersedes()?;
    hits.map(|(hit, held)| {
        let cites = index.engagements(&hit.head.path)?;
        let engagement = engagement(&cites, &words, &claims);
        let conflicts = index.conflicts_for(&hit.head.path)?;
        let unresolved = index
            .unresolved_naming(&hit.head.path)?
            .into_iter()
            .map(|(from, candidates)| Unresolved { from, candidates })
            .collect();
        Ok(Enriched {
            hit,
            engagement,
            conflicts,
            unresolved,
            words: held,
        })
    })
    .collect()
}

/// The engagement of a note its citing entries `cites` give: the decision that shares most of
/// `words` (of the newest read), a current one before one superseded, the newest among equals.
fn engagement(
    cites: &Engagements,
    words: &[String],
    claims: &Supersedes,
) -> Option<EngagementView> {
    let newest = cites.newest.first()?;
    let score = |c: &Engaged| {
        let current = claims.links(&c.id).superseded_by.is_empty();
        (shared_words(&c.summary, words), current)
    };
    let (mut shown, mut best) = (newest, score(newest));
    for c in &cites.newest[1..] {
        let s = score(c);
        if s > best {
            (shown, best) = (c, s);
        }
    }
    Some(EngagementView {
        date: shown.day.clone(),
        summary: shown.summary.clone(),
        status: shown.status,
        superseded_by: claims.links(&shown.id).superseded_by,
        decisions: cites.total,
        newest: newest.day.clone(),
        closest: !std::ptr::eq(shown, newest),
    })
}

/// The distinct words of a query, lowercased (letters and digits).
fn query_words(query: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for w in query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .take(QUERY_MAX_TERMS)
    {
        let w = w.to_lowercase();
        if !words.contains(&w) {
            words.push(w);
        }
    }
    words
}

/// How many of `words` a summary holds, a word counting when the summary has it or a form of it
/// ([`alike`]).
fn shared_words(summary: &str, words: &[String]) -> usize {
    if words.is_empty() {
        return 0;
    }
    let tokens: Vec<String> = summary
        .split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(str::to_lowercase)
        .collect();
    words
        .iter()
        .filter(|w| tokens.iter().any(|t| alike(w, t)))
        .count()
}

/// Whether two lowercased words are one word in another form, as the search's stemmer would
/// take them (`tomatos` and `tomatoes`, `cadence` and `cadences`): equal, or sharing a stem of
/// at least four characters that leaves at most two of the shorter one.
fn alike(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    let common = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    let shorter = a.chars().count().min(b.chars().count());
    common >= 4 && common + 2 >= shorter
}

/// What a search of `raw` reads of it ([`searched_part`]), and, when that is not all of it,
/// the sentence that says so.
pub(crate) fn bounded(raw: &str) -> (&str, Option<String>) {
    let part = searched_part(raw);
    let cut = (part.len() < raw.len()).then(|| {
        format!(
            "Only the first {QUERY_MAX_TERMS} words (at most {QUERY_MAX_BYTES} bytes) of the query were searched."
        )
    });
    (part, cut)
}

/// How many results carry a prior engagement (a search with any is one gate signal).
pub(crate) fn signals(answer: &Answer) -> usize {
    answer
        .results
        .iter()
        .filter(|r| r.engagement.is_some())
        .count()
}

/// The text form: numbered hits separated by a blank line, or the no-match line; when no note
/// holds every word, a first paragraph says so and the hits say which words they hold. Each
/// field (a title, a path, a summary, a frontmatter value) is written as one field: a line
/// break in it is shown as `\u{XXXX}` (spec/output.md).
pub(crate) fn render(query: &str, answer: &Answer) -> String {
    if answer.results.is_empty() {
        return format!("No notes matched \"{}\".", field_safe(query));
    }
    let hits = answer
        .results
        .iter()
        .enumerate()
        .map(|(i, r)| render_one(i + 1, r))
        .collect::<Vec<_>>()
        .join("\n\n");
    match &answer.partial {
        Some(p) => format!("{}\n\n{hits}", partial_head(query, p)),
        None => hits,
    }
}

/// `No note holds every word of "QUERY"[; none holds "W", "V"]. N notes hold some of them, most
/// words first: …`, with what to do next.
fn partial_head(query: &str, p: &PartialView) -> String {
    let mut out = format!("No note holds every word of \"{}\"", field_safe(query));
    if !p.missing.is_empty() {
        let missing: Vec<String> = p
            .missing
            .iter()
            .map(|w| format!("\"{}\"", field_safe(w)))
            .collect();
        out.push_str(&format!("; none holds {}", missing.join(", ")));
    }
    let (n, s) = match p.notes {
        1 => (1, "note holds"),
        n => (n, "notes hold"),
    };
    out.push_str(&format!(
        ". {n} {s} some of them, most words first. Search matches words, not meaning: to find more, search again with other words for the same idea."
    ));
    out
}

fn render_one(n: usize, r: &Enriched) -> String {
    let h = &r.hit.head;
    let path = field_safe(&h.path);
    let mut out = format!("{n}. {}", field_safe(&h.title));
    if let Some(b) = badges(h) {
        out.push_str(&format!(" — {b}"));
    }
    out.push_str(&format!("\n   {path}\n   {}", field_safe(&r.hit.snippet)));
    if let Some(words) = &r.words {
        out.push_str(&format!(
            "\n   holds {}: {}",
            match words.len() {
                1 => "1 word".to_string(),
                n => format!("{n} words"),
            },
            field_safe(&words.join(", "))
        ));
    }
    if let Some(e) = &r.engagement {
        push_engagement(&mut out, e);
    }
    for to in &r.conflicts {
        out.push_str(&format!(
            "\n   ⚠ confirmed {path}; the hash now matches {}",
            field_safe(to)
        ));
    }
    for u in &r.unresolved {
        out.push_str(&format!(
            "\n   ? [UNRESOLVED reference {} -- candidates: {}]",
            field_safe(&u.from),
            field_safe(&super::refs::candidate_list(&u.candidates))
        ));
    }
    out
}

/// `↩ prior engagement DAY: "SUMMARY"` (the reference's line), its status and supersede marks,
/// then, when more than one decision cited the note, how many and which one this is.
fn push_engagement(out: &mut String, e: &EngagementView) {
    out.push_str(&format!(
        "\n   ↩ prior engagement {}: \"{}\"",
        field_safe(&e.date),
        field_safe(&e.summary)
    ));
    super::row::push_mark(out, e.status, true);
    if !e.superseded_by.is_empty() {
        out.push_str(&format!(
            " [superseded by {}]",
            field_safe(&e.superseded_by.join(", "))
        ));
    }
    let n = e.decisions;
    match (n, e.closest) {
        (0 | 1, _) => {}
        (_, false) => out.push_str(&format!(" (the newest of {n} decisions citing this note)")),
        (_, true) => out.push_str(&format!(
            " (of {n} decisions citing this note, the one closest to the query; the newest is from {})",
            field_safe(&e.newest)
        )),
    }
}

/// `type · status · created` without the empty ones (each one field); `None` when all are
/// empty.
fn badges(h: &NoteHead) -> Option<String> {
    let parts: Vec<_> = [&h.note_type, &h.status, &h.created]
        .into_iter()
        .filter(|p| !p.is_empty())
        .map(|p| field_safe(p))
        .collect();
    (!parts.is_empty()).then(|| parts.join(" · "))
}

/// get-note's text: `# Title`, the badges, the path, a rule, the body (as the note holds it);
/// or the miss line.
pub(crate) fn render_note(requested: &str, note: Option<&Note>) -> String {
    let Some(n) = note else {
        return format!("Note not found: {}", field_safe(requested));
    };
    let mut out = format!("# {}\n", field_safe(&n.head.title));
    if let Some(b) = badges(&n.head) {
        out.push_str(&format!("{b}\n"));
    }
    out.push_str(&format!(
        "{}\n\n---\n\n{}",
        field_safe(&n.head.path),
        n.body
    ));
    out
}
