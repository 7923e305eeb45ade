//! The three MCP tools as plain functions: their definitions (names, descriptions, strict input
//! schemas, read-only hints), argument validation, and bodies that wrap the same library
//! functions the CLI uses. A miss is a normal result; invalid arguments are an [`ArgError`],
//! which the server turns into a protocol error (`-32602`).

use super::recent::{self, Query};
use super::{cited, refs, render, search};
use crate::index::search::Filters;
use crate::index::{Index, IndexError};
use crate::records::filter::EntryFilter;
use crate::vault::Vault;
use serde_json::{json, Map, Value};

/// Search results when no limit is given.
pub(crate) const DEFAULT_LIMIT: u64 = 8;

/// Invalid tool arguments (reported as a JSON-RPC invalid-params error).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct ArgError(pub String);

/// One tool as the server lists it.
#[derive(Debug, Clone)]
pub(crate) struct ToolDef {
    pub name: &'static str,
    pub title: &'static str,
    pub description: String,
    pub input_schema: Value,
}

/// The tools, their descriptions naming `label`'s work.
pub(crate) fn definitions(label: &str) -> Vec<ToolDef> {
    vec![
        ToolDef {
            name: "librarian-search",
            title: "Search the vault",
            description: format!("Search {label}'s notes vault, ranked by relevance. Every word of the query must match; when no note holds them all, the answer says so and lists the notes that hold most of them, each naming its words (search again with other words for the same idea). Each result has its path, type/status/created and a matching snippet; a note past sessions cited also carries a quiet prior-engagement note: how many decisions cited it, and the date and summary of the one closest to the query. Read-only."),
            input_schema: json!({"type": "object", "additionalProperties": false, "required": ["query"], "properties": {
                "query": {"type": "string", "description": "Words to find; all of them must match (else the notes holding most of them are offered)."},
                "limit": {"type": "integer", "minimum": 1, "maximum": 50, "description": "Most results to return (default 8)."},
                "type": {"type": "string", "description": "Only notes whose frontmatter type is exactly this."},
                "status": {"type": "string", "description": "Only notes whose frontmatter status is exactly this."},
                "domain": {"type": "string", "description": "Only notes whose frontmatter domain is exactly this."}}}),
        },
        ToolDef {
            name: "librarian-get-note",
            title: "Read one note",
            description: format!("The full content of one note in {label}'s vault, by the path librarian-search returned. Read-only."),
            input_schema: json!({"type": "object", "additionalProperties": false, "required": ["path"], "properties": {
                "path": {"type": "string", "description": "The note's vault-relative path, exactly as search returned it."}}}),
        },
        ToolDef {
            name: "librarian-recent",
            title: "Recent sessions",
            description: format!("What was {label} working on lately? Recorded session summaries, newest first, each with its date, project and the notes it cited; the steps of one session are grouped, oldest first. A step marked [edited after commit], [deleted from the working tree], [not committed yet] or [unverified] says how far the record backs it. Report each session as ONE account, in plain language. Read-only."),
            input_schema: json!({"type": "object", "additionalProperties": false, "properties": {
                "window": {"type": "integer", "minimum": 1, "description": "Only the last N days (today counts)."},
                "count": {"type": "integer", "minimum": 1, "description": "Most sessions to return (default 20)."},
                "project": {"type": "string", "description": "Only this project (case-insensitive, whole name)."},
                "detail": {"type": "string", "enum": ["increments", "brief"], "description": "brief: only the first and last step of longer sessions."},
                "query": {"type": "string", "description": "Only sessions whose summary, project or cited paths hold every word (case-insensitive), e.g. \"cadence newsletter\" for \"what did we decide about the cadence?\"."}}}),
        },
    ]
}

/// Checks `args` against a tool's schema by hand: only known keys, the right types, ranges.
fn check(args: &Map<String, Value>, allowed: &[&str], required: &[&str]) -> Result<(), ArgError> {
    if let Some(k) = args.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(ArgError(format!("unknown argument `{k}`")));
    }
    if let Some(k) = required.iter().find(|k| !args.contains_key(**k)) {
        return Err(ArgError(format!("missing required argument `{k}`")));
    }
    Ok(())
}

fn string(args: &Map<String, Value>, key: &str) -> Result<Option<String>, ArgError> {
    match args.get(key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(ArgError(format!("`{key}` must be a string"))),
    }
}

/// An integer in `min..=max`; an integral float (`3.0`) is accepted, a string is not.
fn integer(
    args: &Map<String, Value>,
    key: &str,
    min: u64,
    max: u64,
) -> Result<Option<u64>, ArgError> {
    let Some(v) = args.get(key) else {
        return Ok(None);
    };
    let n = v.as_u64().or_else(|| {
        v.as_f64()
            .filter(|f| f.fract() == 0.0 && *f >= 0.0)
            .map(|f| f as u64)
    });
    match n {
        Some(n) if (min..=max).contains(&n) => Ok(Some(n)),
        _ if max == u64::MAX => Err(ArgError(format!("`{key}` must be an integer >= {min}"))),
        _ => Err(ArgError(format!(
            "`{key}` must be an integer from {min} to {max}"
        ))),
    }
}

/// Validated `librarian-search` arguments.
#[derive(Debug, Clone)]
pub(crate) struct SearchArgs {
    pub query: String,
    pub limit: u64,
    pub filters: Filters,
}

/// Validates `librarian-search`'s arguments.
pub(crate) fn search_args(args: &Map<String, Value>) -> Result<SearchArgs, ArgError> {
    check(
        args,
        &["query", "limit", "type", "status", "domain"],
        &["query"],
    )?;
    Ok(SearchArgs {
        query: string(args, "query")?.unwrap_or_default(),
        limit: integer(args, "limit", 1, 50)?.unwrap_or(DEFAULT_LIMIT),
        filters: Filters {
            note_type: string(args, "type")?,
            status: string(args, "status")?,
            domain: string(args, "domain")?,
        },
    })
}

/// `librarian-search`: hits with enrichment, and whether it surfaced a prior engagement.
pub fn search(index: &Index, a: &SearchArgs) -> Result<(String, bool), IndexError> {
    search::ensure_loaded(index)?;
    let (query, cut) = search::bounded(&a.query);
    let answer = search::search(index, query, a.limit as usize, &a.filters)?;
    let mut text = search::render(query, &answer);
    if let Some(cut) = cut {
        text.push_str(&format!("\n\n({cut})"));
    }
    Ok((text, search::signals(&answer) > 0))
}

/// Validates `librarian-get-note`'s arguments: the path.
pub(crate) fn note_path(args: &Map<String, Value>) -> Result<String, ArgError> {
    check(args, &["path"], &["path"])?;
    Ok(string(args, "path")?.unwrap_or_default())
}

/// `librarian-get-note`: the note, or `None` when the index has no note at `path`. A note that
/// recorded decisions cited ends with their facts in one short, bounded block
/// ([`cited::block`]); the record cache is refreshed quickly first, as `librarian-recent` does,
/// so a decision captured a moment ago counts (when the record cannot be read, the cache as the
/// last refresh left it answers: the note itself never waits on the record).
pub fn get_note(
    vault: &Vault,
    index: &mut Index,
    path: &str,
) -> Result<Option<String>, IndexError> {
    let _ = super::source::refresh(vault, index, crate::index::entries::Scope::Quick(&[]));
    index.read(|index| {
        let Some(note) = index.note(path)? else {
            return Ok(None);
        };
        let text = search::render_note(path, Some(&note));
        Ok(Some(match cited::of_note(index, path)? {
            Some(c) => cited::with_block(text, &c),
            None => text,
        }))
    })
}

/// Validates `librarian-recent`'s arguments (a valid call is logged even if it then fails).
pub(crate) fn recent_query(args: &Map<String, Value>) -> Result<Query, ArgError> {
    check(
        args,
        &["window", "count", "project", "detail", "query"],
        &[],
    )?;
    let window = integer(args, "window", 1, u64::MAX)?;
    let count = integer(args, "count", 1, u64::MAX)?;
    let brief = match string(args, "detail")?.as_deref() {
        None | Some("increments") => false,
        Some("brief") => true,
        Some(other) => {
            return Err(ArgError(format!(
                "`detail` must be \"increments\" or \"brief\", not {other:?}"
            )))
        }
    };
    let query = string(args, "query")?.unwrap_or_default();
    Ok(Query {
        window_days: window.map(|w| w.min(u32::MAX as u64) as u32),
        count: Some(count.map_or(recent::DEFAULT_COUNT, |c| c.min(usize::MAX as u64) as usize)),
        project: string(args, "project")?,
        brief,
        filter: query_filter(&query),
        // The tool's days are UTC days, as the reference's.
        clock: crate::clock::Clock::Utc,
    })
}

/// Most words of a `query` that are matched, and the longest word: what lies beyond is left out,
/// so any query is answered in bounded time.
const QUERY_MAX_WORDS: usize = 16;
const QUERY_MAX_WORD_CHARS: usize = 64;

/// The filter of `librarian-recent`'s `query`: the words `git rutter log --grep` would match.
fn query_filter(query: &str) -> EntryFilter {
    let words: Vec<String> = query
        .split_whitespace()
        .take(QUERY_MAX_WORDS)
        .map(|w| w.chars().take(QUERY_MAX_WORD_CHARS).collect())
        .collect();
    EntryFilter::default().with_words(&words)
}

/// The most bytes one `librarian-recent` answer holds (spec/mcp.md, "librarian-recent"): some
/// 16,000 tokens of an AI client's context, a month of an ordinary user's sessions. Its fields
/// are bounded one by one (`served`); this bounds how many of them one call hands out.
pub(crate) const RECENT_MAX_BYTES: usize = 64 << 10;

/// Room kept under [`RECENT_MAX_BYTES`] for the note that says an answer was cut.
const CUT_NOTE_BYTES: usize = 512;

/// `librarian-recent`'s text for a validated query: the record cache refreshed, then the steps
/// as the record holds them, each marked with its status, at most [`RECENT_MAX_BYTES`].
pub fn recent(vault: &Vault, index: &mut Index, q: &Query) -> Result<String, IndexError> {
    let now = crate::clock::now();
    let answer = recent::read(vault, index, q, now)?;
    // One read of the index for every ref's and id's lookups: one snapshot, one lock.
    let text = index.read(|index| {
        let describer = refs::Shown::new(index);
        let short = crate::index::short_ids::ShortIds::lookups(index);
        Ok(bounded(
            &answer.recent,
            &|out: &mut String, path: &str, hash: &str| describer.write(out, path, hash),
            answer.record,
            Some(&|id: &str| short.short(id)),
        ))
    })?;
    Ok(match super::sync_state::line_if_set_up(vault, now) {
        Some(sync) => format!("{text}\n\n[This machine's record: {sync}.]"),
        None => text,
    })
}

/// The tool's text of `r`, or, when that is longer than [`RECENT_MAX_BYTES`], of as many of
/// its newest sessions as fit (the start of the newest alone, cut at a line, when not even it
/// fits), and a note that says so and how to ask for the rest.
fn bounded(
    r: &recent::Recent,
    refs: render::RefText<'_>,
    marks: bool,
    ids: Option<render::IdText<'_>>,
) -> String {
    let text = render::tool(r, refs, marks, ids);
    let recent::Recent::Sessions(all) = r else {
        return text;
    };
    if text.len() <= RECENT_MAX_BYTES {
        return text;
    }
    let budget = RECENT_MAX_BYTES - CUT_NOTE_BYTES;
    let first = |k: usize| {
        render::tool(
            &recent::Recent::Sessions(all[..k].to_vec()),
            refs,
            marks,
            ids,
        )
    };
    // The most leading sessions whose text fits: more sessions never make a shorter text.
    let (mut fits, mut over) = (0, all.len());
    while over - fits > 1 {
        let mid = fits + (over - fits) / 2;
        match first(mid).len() <= budget {
            true => fits = mid,
            false => over = mid,
        }
    }
    let ask = "Ask for less to see the rest: a smaller `count`, a `window` of fewer days, one `project`, a `query`, or `detail: \"brief\"`.";
    if fits > 0 {
        return format!(
            "{}\n\n[This answer was cut to {} KiB: the newest {fits} of {} sessions are shown. {ask}]",
            first(fits),
            RECENT_MAX_BYTES >> 10,
            all.len()
        );
    }
    let one = first(1);
    let mut end = budget.min(one.len());
    while !one.is_char_boundary(end) {
        end -= 1;
    }
    let end = one[..end].rfind('\n').unwrap_or(end);
    format!(
        "{}\n\n[This answer was cut to {} KiB: the newest of {} sessions is longer, and only its start is shown. {ask}]",
        &one[..end],
        RECENT_MAX_BYTES >> 10,
        all.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn recent_arguments_are_checked_by_hand() {
        assert!(recent_query(&args(json!({}))).is_ok());
        assert_eq!(
            recent_query(&args(json!({"window": 0}))).unwrap_err().0,
            "`window` must be an integer >= 1"
        );
        assert!(recent_query(&args(json!({"count": -1}))).is_err());
        assert!(recent_query(&args(json!({"count": "3"}))).is_err());
        assert!(recent_query(&args(json!({"detail": "full"}))).is_err());
        assert!(recent_query(&args(json!({"extra": 1}))).is_err());
        let q = recent_query(&args(json!({"window": 7, "count": 3.0, "detail": "brief"}))).unwrap();
        assert_eq!((q.window_days, q.count, q.brief), (Some(7), Some(3), true));
        assert_eq!(recent_query(&args(json!({}))).unwrap().count, Some(20));
    }

    fn sessions(n: usize, steps: usize, summary: &str) -> recent::Recent {
        use crate::records::{standing::Status, Entry, Step};
        let step = |i: usize, j: usize| Step {
            supersede: Default::default(),
            status: Status::Committed,
            day: "2026-11-30".into(),
            entry: Entry {
                id: format!("{i}-{j}"),
                session_id: Some(format!("s{i}")),
                time: "2026-11-30T07:31:41.112Z".into(),
                summary: summary.into(),
                refs: vec![],
                workspace: None,
                client: None,
                supersedes: None,
                extra: Default::default(),
            },
        };
        recent::Recent::Sessions(
            (0..n)
                .map(|i| recent::Session {
                    session_id: Some(format!("s{i}")),
                    project: None,
                    steps: (0..steps).map(|j| step(i, j)).collect(),
                    total_steps: steps,
                    omitted: 0,
                })
                .collect(),
        )
    }

    /// An answer over 64 KiB keeps as many of its newest sessions as fit, whole, and says it
    /// was cut and how to ask for the rest; one that fits is the tool's text unchanged.
    #[test]
    fn a_long_answer_is_cut_to_its_newest_sessions_and_says_so() {
        let refs = &|out: &mut String, path: &str, _: &str| out.push_str(path);
        let small = sessions(3, 2, "short");
        assert_eq!(
            bounded(&small, refs, true, None),
            render::tool(&small, refs, true, None)
        );
        let big = sessions(100, 3, &"w".repeat(1000));
        let text = bounded(&big, refs, true, None);
        assert!(text.len() <= RECENT_MAX_BYTES, "{}", text.len());
        let recent::Recent::Sessions(all) = &big else {
            panic!()
        };
        let shown = text.matches("one session, 3 steps").count();
        assert!(shown > 10 && shown < 100, "{shown}");
        let whole = render::tool(
            &recent::Recent::Sessions(all[..shown].to_vec()),
            refs,
            true,
            None,
        );
        assert!(text.starts_with(&whole));
        assert!(text.ends_with(&format!("the newest {shown} of 100 sessions are shown. Ask for less to see the rest: a smaller `count`, a `window` of fewer days, one `project`, a `query`, or `detail: \"brief\"`.]")));
        // One session longer than the bound: its start, cut at a line.
        let one = sessions(1, 200, &"é".repeat(2000));
        let text = bounded(&one, refs, true, None);
        assert!(text.len() <= RECENT_MAX_BYTES, "{}", text.len());
        assert!(text.contains("the newest of 1 sessions is longer, and only its start is shown"));
        let shown = text.split("\n\n[This answer").next().unwrap();
        assert!(render::tool(&one, refs, true, None).starts_with(&format!("{shown}\n")));
    }

    #[test]
    fn schemas_forbid_additional_properties() {
        for d in definitions("Ada") {
            assert_eq!(
                d.input_schema["additionalProperties"],
                json!(false),
                "{}",
                d.name
            );
            assert!(
                d.description.contains("Ada")
                    || d.name == "librarian-get-note" && d.description.contains("Ada's vault")
            );
        }
    }

    fn json_value() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            "\\PC{0,12}|[\\x00-\\x1f]{0,4}".prop_map(Value::from),
        ];
        leaf.prop_recursive(2, 12, 3, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..3).prop_map(Value::from),
                proptest::collection::btree_map("\\PC{0,4}", inner, 0..3)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    fn arguments() -> impl proptest::strategy::Strategy<Value = Map<String, Value>> {
        use proptest::prelude::*;
        let key = prop_oneof![
            Just("query".to_string()),
            Just("limit".to_string()),
            Just("type".to_string()),
            Just("path".to_string()),
            Just("window".to_string()),
            Just("count".to_string()),
            Just("detail".to_string()),
            Just("project".to_string()),
            "\\PC{0,6}",
        ];
        proptest::collection::btree_map(key, json_value(), 0..5)
            .prop_map(|m| m.into_iter().collect())
    }

    proptest::proptest! {
        /// Any arguments get a decision from every validator, never a panic; what is accepted
        /// holds exactly the values given and within their ranges.
        #[test]
        fn any_arguments_get_a_decision(a in arguments()) {
            if let Ok(s) = search_args(&a) {
                proptest::prop_assert_eq!(Some(&Value::from(s.query.clone())), a.get("query"));
                proptest::prop_assert!((1..=50).contains(&s.limit));
            }
            if let Ok(p) = note_path(&a) {
                proptest::prop_assert_eq!(Some(&Value::from(p)), a.get("path"));
            }
            if let Ok(q) = recent_query(&a) {
                proptest::prop_assert!(q.window_days.is_none_or(|w| w >= 1));
                proptest::prop_assert!(q.count.is_none_or(|c| c >= 1));
            }
        }

        /// Any query text (NUL, controls, any length) is a valid `query`.
        #[test]
        fn any_query_text_is_valid(q in "\\PC{0,200}|[\\x00-\\x1f\\x7f]{0,50}") {
            let a = args(json!({ "query": q.clone() }));
            proptest::prop_assert_eq!(search_args(&a).map(|s| s.query), Ok(q));
        }
    }
}
