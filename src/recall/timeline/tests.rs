use super::*;
use crate::recall::recent::Session;
use crate::records::{Entry, NoteRef, Step, Workspace};
use proptest::prelude::*;

fn step(day: &str, time: &str, project: Option<&str>, summary: &str, status: Status) -> Step {
    Step {
        supersede: Default::default(),
        status,
        day: day.into(),
        entry: Entry {
            id: format!("{}T{}000Z", day.replace('-', ""), time.replace(':', "")),
            session_id: None,
            time: format!("{day}T{time}.000Z"),
            summary: summary.into(),
            refs: vec![],
            workspace: project.map(|p| Workspace::new("/w", p, None)),
            client: Some("claude".into()),
            supersedes: None,
            extra: Default::default(),
        },
    }
}

fn sessions(steps: Vec<Step>) -> Recent {
    Recent::Sessions(
        steps
            .into_iter()
            .map(|s| Session {
                session_id: None,
                project: s.entry.project().map(str::to_string),
                steps: vec![s],
                total_steps: 1,
                omitted: 0,
            })
            .collect(),
    )
}

/// What a page showed: its HTML and its counts.
struct Shown {
    html: String,
    decisions: usize,
    days: usize,
    projects: usize,
}

/// The page of `recent`, refs shown as `path@hash` plus a drift mark for `moved.md`.
fn page_of(recent: &Recent, uses: &[(String, String)]) -> Shown {
    let refs = &|out: &mut String, path: &str, hash: &str| {
        out.push_str(path);
        out.push('@');
        out.push_str(short_hash(hash));
        if path == "moved.md" {
            out.push_str(" (renamed to there.md)");
        }
    };
    let input = Input {
        vault: Path::new("/v<ault>"),
        decisions: Source::Answer(recent),
        marks: true,
        refs,
        ids: &|id: &str| id[..15].to_string(),
        clock: &Clock::Utc,
        uses,
        bounds: &EntryFilter::default(),
        now: crate::clock::parse_instant("2026-12-01T09:00:00.000Z").unwrap(),
        notes: vec![],
    };
    let page = page(&input).unwrap();
    Shown {
        html: page.html(),
        decisions: page.decisions,
        days: page.days,
        projects: page.projects,
    }
}

/// The text between `open` and the next `</script>`, for each block that starts with `open`.
fn blocks<'a>(html: &'a str, open: &str) -> Vec<&'a str> {
    html.match_indices(open)
        .map(|(i, _)| {
            let rest = &html[i + open.len()..];
            &rest[..rest.find("</script>").unwrap()]
        })
        .collect()
}

/// The page's data, decoded as the script's `JSON.parse` reads it.
fn data(html: &str) -> serde_json::Value {
    let json = blocks(html, "<script type=\"application/json\" id=\"data\">");
    assert_eq!(json.len(), 1);
    serde_json::from_str(json[0]).unwrap()
}

#[test]
fn base64_and_the_policy_hash_what_the_page_holds() {
    assert_eq!(base64(b""), "");
    assert_eq!(base64(b"f"), "Zg==");
    assert_eq!(base64(b"fo"), "Zm8=");
    assert_eq!(base64(b"foo"), "Zm9v");
    assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    assert_eq!(
        csp_hash(""),
        "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='"
    );
    // The browser hashes the text of the block as the page holds it: the one script and the
    // one stylesheet of the page are the ones the policy names.
    let html = page_of(&Recent::NothingRecorded, &[]).html;
    let scripts = blocks(&html, "<script>");
    assert_eq!(scripts.len(), 1);
    let style = &html[html.find("<style>").unwrap() + 7..html.find("</style>").unwrap()];
    let policy = format!(
        "default-src 'none'; script-src {}; style-src {};",
        csp_hash(scripts[0]),
        csp_hash(style)
    );
    assert!(html.contains(&policy), "{policy}");
    assert!(html.starts_with("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta http-equiv=\"Content-Security-Policy\""));
    assert!(html.contains(GENERATOR));
    assert!(
        !html.contains("style=\""),
        "the policy allows no style attribute"
    );
}

#[test]
fn only_a_file_that_starts_with_the_pages_own_head_is_a_page() {
    let html = page_of(&Recent::NothingRecorded, &[]).html;
    let generator_ends = html.find(GENERATOR).unwrap() + GENERATOR.len() + 1;
    assert!(generator_ends <= HEAD_BYTES, "the head is read whole");
    assert!(starts_as_page(&html.as_bytes()[..HEAD_BYTES]));
    assert!(starts_as_page(&html.as_bytes()[..generator_ends]));
    assert!(!starts_as_page(&html.as_bytes()[..generator_ends - 1]));
    // A note quoting the generator line, or the whole head after a line of its own.
    for note in [
        format!("# About rutter\n\n{GENERATOR}\n"),
        format!("{GENERATOR}\n{html}"),
        format!("# A page\n{html}"),
        format!(" {html}"),
    ] {
        assert!(!starts_as_page(note.as_bytes()), "{note:.60}");
    }
    // The policy line must be the one this module writes, with any two hashes.
    let policy = policy();
    let with = |p: &str| html.replacen(&policy, p, 1);
    let other = policy.replace(&csp_hash(SCRIPT), &csp_hash("another script"));
    assert!(
        starts_as_page(with(&other).as_bytes()),
        "a page an older version wrote"
    );
    for p in [
        "",
        "default-src 'none'",
        &policy.replace("'none'; script", "*; script"),
        &policy.replace(&csp_hash(STYLE), "'sha256-'"),
        &policy.replace(&csp_hash(STYLE), "'sha256-a\">x'"),
        &format!("{policy}; img-src *"),
    ] {
        assert!(!starts_as_page(with(p).as_bytes()), "{p}");
    }
}

#[test]
fn the_script_never_parses_text_as_markup() {
    for sink in [
        "innerHTML",
        "outerHTML",
        "insertAdjacentHTML",
        "document.write",
        "eval(",
    ] {
        assert!(!SCRIPT.contains(sink), "page.js uses {sink}");
    }
    assert!(
        !SCRIPT.contains("</script"),
        "the script cannot close its own block"
    );
    assert!(
        !STYLE.contains("</style"),
        "the stylesheet cannot close its own block"
    );
}

#[test]
fn decisions_run_by_day_newest_first_then_project_then_time() {
    let recent = sessions(vec![
        step(
            "2026-11-30",
            "10:00:00",
            Some("beta"),
            "b late",
            Status::Committed,
        ),
        step(
            "2026-11-30",
            "09:00:00",
            Some("beta"),
            "b early",
            Status::Committed,
        ),
        step(
            "2026-11-30",
            "08:00:00",
            None,
            "no project",
            Status::Committed,
        ),
        step("2026-11-30", "11:00:00", Some("Alpha"), "a", Status::Edited),
        step(
            "2026-12-01",
            "01:00:00",
            Some("beta"),
            "newest day",
            Status::Deleted,
        ),
    ]);
    let page = page_of(&recent, &[]);
    assert_eq!((page.decisions, page.days, page.projects), (5, 2, 2));
    let data = data(&page.html);
    let summaries: Vec<&str> = data["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["summary"].as_str().unwrap())
        .collect();
    assert_eq!(
        summaries,
        ["newest day", "a", "b early", "b late", "no project"]
    );
    let first = &data["decisions"][0];
    assert_eq!(first["mark"], "[deleted from the working tree]");
    assert_eq!(first["time"], "01:00:00");
    assert_eq!(first["id"], "20261201T010000");
    assert_eq!(first["client"], "claude");
    assert_eq!(data["decisions"][1]["mark"], "[edited after commit]");
    assert!(data["decisions"][2].get("mark").is_none());
    assert_eq!(data["hint"], RESTORE_HINT);
    assert_eq!(data["vault"], "/v<ault>");
    assert_eq!(data["written"], "2026-12-01 09:00:00");
    assert!(data["empty"].is_null());
}

#[test]
fn cited_notes_carry_recalls_drift_marks() {
    let mut s = step("2026-11-30", "10:00:00", None, "cites", Status::Committed);
    let hash = format!("sha256:{}", "ab".repeat(32));
    s.entry.refs = vec![
        NoteRef::new("kept.md", &hash, None),
        NoteRef::new("moved.md", &hash, None),
    ];
    let data = data(&page_of(&sessions(vec![s]), &[]).html);
    assert_eq!(
        data["decisions"][0]["refs"],
        serde_json::json!([
            {"path": "kept.md", "hash": "sha256:abababa"},
            {"path": "moved.md", "hash": "sha256:abababa", "drift": "(renamed to there.md)"},
        ])
    );
}

#[test]
fn an_empty_answer_says_what_recent_says() {
    let data = data(&page_of(&Recent::NoProject("p".into()), &[]).html);
    assert_eq!(data["empty"], "No sessions recorded for project \"p\".");
    assert_eq!(data["decisions"], serde_json::json!([]));
}

#[test]
fn the_chart_counts_the_uses_within_the_bounds() {
    let recent = sessions(vec![step(
        "2026-11-30",
        "10:00:00",
        None,
        "x",
        Status::Committed,
    )]);
    let ev = |ts: &str, kind: &str| (ts.to_string(), kind.to_string());
    let uses = [
        ev("2026-11-30T10:00:00.000Z", "librarian-recent"),
        ev("2026-12-01T10:00:00.000Z", "search-signal"),
        ev("2026-12-01T11:00:00.000Z", "something-else"),
        ev("2026-10-01T11:00:00.000Z", "librarian-recent"),
    ];
    let html = |bounds: &EntryFilter| {
        page(&Input {
            vault: Path::new("/v"),
            decisions: Source::Answer(&recent),
            marks: true,
            refs: &|_: &mut String, _: &str, _: &str| {},
            ids: &|id: &str| id.to_string(),
            clock: &Clock::Utc,
            uses: &uses,
            bounds,
            now: crate::clock::parse_instant("2026-12-01T09:00:00.000Z").unwrap(),
            notes: vec![],
        })
        .unwrap()
        .html()
    };
    let all = html(&EntryFilter::default());
    assert!(all.contains("2026-W49 (from 2026-11-30): 2 uses"), "{all}");
    assert!(all.contains("2026-W40 (from 2026-09-28): 1 use"));
    let since = html(&EntryFilter {
        from: Some("2026-11-01T00:00:00.000Z".into()),
        ..Default::default()
    });
    assert!(since.contains("2026-W49 (from 2026-11-30): 2 uses"));
    assert!(!since.contains("2026-W40"));
}

/// The bidi controls and invisible format characters the terminal shows as `\u{XXXX}`.
const HIDDEN: &[char] = &[
    '\u{202A}', '\u{202B}', '\u{202C}', '\u{202D}', '\u{202E}', '\u{2066}', '\u{2067}', '\u{2068}',
    '\u{2069}', '\u{200E}', '\u{200F}', '\u{061C}', '\u{200B}', '\u{2060}', '\u{FEFF}', '\n', '\r',
    '\u{2028}', '\u{1b}',
];

#[test]
fn every_field_is_shown_as_data_as_the_terminal_shows_it() {
    let mut s = step(
        "2026-11-30",
        "10:00:00",
        Some("\u{202E}proj"),
        "summary\u{2066} with\nbreaks",
        Status::Committed,
    );
    s.entry.client = Some("claude\u{202E}".into());
    s.entry.refs = vec![NoteRef::new(
        "d/\u{202E}dm.exe.md",
        format!("sha256:{}", "48".repeat(32)),
        None,
    )];
    let hidden: String = HIDDEN.iter().collect();
    let mut forged = step(
        "2026-11-29",
        "10:00:00",
        Some(&hidden),
        &hidden,
        Status::Unverified,
    );
    forged.entry.client = Some(hidden.clone());
    forged.entry.refs = vec![NoteRef::new(&hidden, format!("sha256:{hidden}"), None)];
    let html = page_of(&sessions(vec![s, forged]), &[]).html;
    for c in HIDDEN.iter().filter(|&&c| c != '\n') {
        assert!(!html.contains(*c), "the page holds U+{:04X}", *c as u32);
    }
    let data = data(&html);
    let d = &data["decisions"][0];
    assert_eq!(d["project"], "\\u{202E}proj");
    assert_eq!(d["client"], "claude\\u{202E}");
    assert_eq!(d["summary"], "summary\\u{2066} with\\u{000A}breaks");
    assert_eq!(d["refs"][0]["path"], "d/\\u{202E}dm.exe.md");
    assert_eq!(d["refs"][0]["hash"], "sha256:4848484");
    let f = &data["decisions"][1];
    let shown = crate::records::text::field_safe(&hidden).into_owned();
    for v in [
        &f["project"],
        &f["client"],
        &f["summary"],
        &f["refs"][0]["path"],
    ] {
        assert_eq!(v, &serde_json::Value::String(shown.clone()));
    }
    // The script puts each field in a <bdi> of its own; the path and the hash are two.
    for f in [
        "time", "id", "client", "summary", "mark", "path", "hash", "drift",
    ] {
        assert!(SCRIPT.contains(&format!("field('{f}', ")), "{f}");
    }
    assert!(STYLE.contains("bdi { unicode-bidi: isolate; }"));
}

#[test]
fn no_field_of_the_page_is_unbounded() {
    let summary = "B".repeat(5 << 20);
    let mut s = step(
        "2026-11-30",
        "10:00:00",
        Some(&"p".repeat(100_000)),
        &summary,
        Status::Unverified,
    );
    s.entry.client = Some("c".repeat(100_000));
    s.entry.refs = (0..1000)
        .map(|i| NoteRef::new(format!("{i}{}.md", "n".repeat(10_000)), "sha256:00", None))
        .collect();
    let html = page_of(&sessions(vec![s]), &[]).html;
    assert!(html.len() < 3 << 20, "{} bytes", html.len());
    let d = &data(&html)["decisions"][0];
    let summary = d["summary"].as_str().unwrap();
    assert!(
        summary.ends_with("B… [cut: 5240880 more characters]"),
        "{:.80}",
        &summary[2000..]
    );
    assert_eq!(summary.chars().filter(|&c| c == 'B').count(), 2000);
    assert!(d["project"]
        .as_str()
        .unwrap()
        .ends_with("… [cut: 99488 more characters]"));
    assert!(d["client"].as_str().unwrap().contains("[cut: "));
    assert_eq!(d["refs"].as_array().unwrap().len(), 256);
    assert_eq!(d["more_refs"], 744);
    assert!(d["refs"][0]["path"]
        .as_str()
        .unwrap()
        .contains("[cut: 8980 more characters]"));
    assert!(SCRIPT.contains("d.more_refs"));
}

#[test]
fn a_use_or_a_decision_no_clock_could_have_dated_is_not_drawn_and_is_named() {
    let recent = sessions(vec![
        step("2026-11-30", "10:00:00", None, "real", Status::Committed),
        step("9999-12-31", "10:00:00", None, "forged", Status::Unverified),
    ]);
    let ev = |ts: &str| (ts.to_string(), "librarian-recent".to_string());
    let uses = [
        ev("9999-12-31T23:59:59.999Z"),
        ev("0001-01-01T00:00:00.000Z"),
        ev("2026-11-30T11:00:00.000Z"),
    ];
    let html = page_of(&recent, &uses).html;
    assert!(html.contains(">2026-W49<"), "the real week is drawn");
    assert!(html.contains("<title>2026-W49 (from 2026-11-30): 1 decision</title>"));
    assert!(html.contains("<title>2026-W49 (from 2026-11-30): 1 use</title>"));
    assert!(!html.contains("9999-W"));
    assert!(!html.contains("older weeks not drawn"));
    assert!(html.contains("<p class=\"lede\">1 decision outside 2006-11-28 to 2026-12-02, not drawn in the chart: dated after this machine&#39;s clock, or more than 20 years before it.</p>"), "{html:.0}");
    assert!(html.contains(
        "<p class=\"lede\">2 use events outside 2006-11-28 to 2026-12-02, not drawn in the chart:"
    ));
    // The decision itself is still listed.
    assert_eq!(data(&html)["decisions"].as_array().unwrap().len(), 2);
}

/// A summary that would be markup anywhere else.
const HOSTILE: &str = "<script>window.pwned=1</script><img src=x onerror=\"window.pwned=2\"> & </script><!-- \u{2028}\u{2029}";

#[test]
fn a_hostile_summary_is_a_string_in_the_data_and_nothing_else() {
    let mut s = step(
        "2026-11-30",
        "10:00:00",
        Some("<b>p</b>"),
        HOSTILE,
        Status::Committed,
    );
    s.entry.refs = vec![NoteRef::new("<img src=x>.md", "sha256:00", None)];
    let html = page_of(&sessions(vec![s]), &[]).html;
    assert_eq!(
        html.matches("<script").count(),
        2,
        "the data block and the script"
    );
    assert!(!html.contains("<img"));
    assert!(!html.contains("<b>"));
    assert!(!html.contains("pwned=1</"));
    let data = data(&html);
    // As text, with the line and paragraph separators shown as a terminal shows them.
    assert_eq!(
        data["decisions"][0]["summary"],
        HOSTILE
            .replace('\u{2028}', "\\u{2028}")
            .replace('\u{2029}', "\\u{2029}")
    );
    assert_eq!(data["decisions"][0]["project"], "<b>p</b>");
    assert_eq!(data["decisions"][0]["refs"][0]["path"], "<img src=x>.md");
}

proptest! {
    /// Whatever a summary holds, the data block is the JSON of it with no character that HTML
    /// or JavaScript would read as anything but the string.
    #[test]
    fn script_safe_json_reads_back_as_the_same_text(text in "(\\PC|[<>&/!\\-\u{2028}\u{2029}\u{2026}\u{20AC}\"'\\\\])*") {
        let json = serde_json::to_string(&text).unwrap();
        let safe = script_safe(&json);
        for c in ['<', '>', '&', '\u{2028}', '\u{2029}'] {
            prop_assert!(!safe.contains(c));
        }
        prop_assert_eq!(serde_json::from_str::<String>(&safe).unwrap(), text.clone());
        // The page streams its data through the same escaping, write by write.
        let mut streamed = Vec::new();
        serde_json::to_writer(ScriptSafe(&mut streamed), &text).unwrap();
        prop_assert_eq!(String::from_utf8(streamed).unwrap(), safe.clone());
        // And in one write, as the page's buffer hands it over.
        let mut whole = Vec::new();
        std::io::Write::write_all(&mut ScriptSafe(&mut whole), json.as_bytes()).unwrap();
        prop_assert_eq!(String::from_utf8(whole).unwrap(), safe);
    }

    /// Any bytes are judged without a panic, and a page's head with one byte changed, outside
    /// the two hashes (which change with each version), is no page.
    #[test]
    fn the_head_check_reads_any_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..1200), at in 0usize..1024, byte in any::<u8>()) {
        prop_assert!(!starts_as_page(&bytes) || bytes.starts_with(HEAD.as_bytes()));
        let html = page_of(&Recent::NothingRecorded, &[]).html;
        let generator_ends = html.find(GENERATOR).unwrap() + GENERATOR.len() + 1;
        let at = at % generator_ends;
        let in_hash = [csp_hash(SCRIPT), csp_hash(STYLE)].iter().any(|h| {
            let start = html.find(h.as_str()).unwrap() + "'sha256-".len();
            (start..start + h.len() - "'sha256-'".len()).contains(&at)
        });
        let mut changed = html.as_bytes()[..generator_ends].to_vec();
        if changed[at] != byte && !in_hash {
            changed[at] = byte;
            prop_assert!(!starts_as_page(&changed), "byte {} made {:?}", at, byte as char);
        }
    }

    #[test]
    fn any_summary_adds_no_element(summary in "(\\PC|[<>&/!\\-\"'])*", project in "[<>a-z/ ]{1,12}") {
        let recent = sessions(vec![step("2026-11-30", "10:00:00", Some(&project), &summary, Status::Committed)]);
        let html = page_of(&recent, &[]).html;
        let template = page_of(&sessions(vec![step("2026-11-30", "10:00:00", Some("p"), "s", Status::Committed)]), &[]).html;
        prop_assert_eq!(html.matches('<').count(), template.matches('<').count());
        let data = data(&html);
        let shown = crate::records::text::field_safe(&summary);
        prop_assert_eq!(data["decisions"][0]["summary"].as_str(), Some(shown.as_ref()));
    }
}
