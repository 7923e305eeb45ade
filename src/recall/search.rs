//! Search and get-note as the reader sees them (anchor §9): ranked hits, each with its path,
//! badges and snippet, plus the quiet prior-engagement note. Enrichment is additive only: it
//! never adds, drops or reorders a hit, and a mere candidate is never shown as engagement. The
//! engagement's text comes from the record, never a retracted entry, marked like `recent` marks
//! a step that is not simply committed.

use crate::index::entries::Scope;
use crate::index::identity::Candidate;
use crate::index::reads::{Engagement, Records};
use crate::index::search::{
    searched_part, Filters, Hit, Note, NoteHead, QUERY_MAX_BYTES, QUERY_MAX_TERMS,
};
use crate::index::{Index, IndexError};
use crate::records::standing::Status;
use crate::records::text::field_safe;
use serde::Serialize;

/// A hit with what past sessions say about it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Enriched {
    #[serde(flatten)]
    pub hit: Hit,
    /// The newest entry that cited this note (directly or through a binding).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engagement: Option<EngagementView>,
    /// Notes that now carry the hash of a ref confirmed to this one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub conflicts: Vec<String>,
    /// Unresolved refs that name this note as a candidate.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unresolved: Vec<Unresolved>,
}

/// Serialisable engagement.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct EngagementView {
    pub date: String,
    pub summary: String,
    /// The entry's status against the record (spec/recall.md).
    pub status: Status,
}

/// An unresolved ref and its candidates.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Unresolved {
    pub from: String,
    pub candidates: Vec<Candidate>,
}

/// Reads the record into an index built since it was last read (a new or rebuilt one), so
/// enrichment is never empty for want of it; otherwise the record cache is used as the last
/// refresh left it. Called before a search's read transaction (it writes).
pub fn ensure_records(index: &Index) -> Result<(), IndexError> {
    if index.records()? == Records::NotLoaded {
        let vault = crate::vault::open(index.root(), crate::vault::VaultSource::Flag)
            .map_err(|e| IndexError::Record(e.to_string()))?;
        let src = super::source::Source::open(&vault)?;
        index.refresh_records(&src, Scope::Full)?;
    }
    Ok(())
}

/// Searches and enriches; the order is the index's ranking. Call [`ensure_records`] first.
pub(crate) fn search(
    index: &Index,
    query: &str,
    limit: usize,
    filters: &Filters,
) -> Result<Vec<Enriched>, IndexError> {
    index.read(|index| enrich(index, index.search(query, limit, filters)?))
}

fn enrich(index: &Index, hits: Vec<Hit>) -> Result<Vec<Enriched>, IndexError> {
    hits.into_iter()
        .map(|hit| {
            let engagement = index.engagement(&hit.head.path)?.map(
                |Engagement {
                     day,
                     summary,
                     status,
                 }| EngagementView {
                    date: day,
                    summary,
                    status,
                },
            );
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
            })
        })
        .collect()
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
pub(crate) fn signals(results: &[Enriched]) -> usize {
    results.iter().filter(|r| r.engagement.is_some()).count()
}

/// The text form: numbered hits separated by a blank line, or the no-match line. Each field
/// (a title, a path, a summary, a frontmatter value) is written as one field: a line break in
/// it is shown as `\u{XXXX}` (spec/output.md).
pub(crate) fn render(query: &str, results: &[Enriched]) -> String {
    if results.is_empty() {
        return format!("No notes matched \"{}\".", field_safe(query));
    }
    results
        .iter()
        .enumerate()
        .map(|(i, r)| render_one(i + 1, r))
        .collect::<Vec<_>>()
        .join("\n\n")
}

fn render_one(n: usize, r: &Enriched) -> String {
    let h = &r.hit.head;
    let path = field_safe(&h.path);
    let mut out = format!("{n}. {}", field_safe(&h.title));
    if let Some(b) = badges(h) {
        out.push_str(&format!(" — {b}"));
    }
    out.push_str(&format!("\n   {path}\n   {}", field_safe(&r.hit.snippet)));
    if let Some(e) = &r.engagement {
        out.push_str(&format!(
            "\n   ↩ prior engagement {}: \"{}\"",
            field_safe(&e.date),
            field_safe(&e.summary)
        ));
        if let Some(mark) = e.status.mark() {
            out.push(' ');
            out.push_str(mark);
        }
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
