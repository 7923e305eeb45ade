//! The stderr lines of a capture: what was captured, already recorded, written aside or left
//! pending, and which directives were not valid JSON (spec/capture.md, "Messages").

use super::directive::Directives;
use super::{sanitize, write, P};
use crate::count::noun;
use crate::vault::Vault;
use std::path::PathBuf;

/// Says how many directives were not valid JSON (or longer than a directive may be), and
/// whether anything is captured at all.
pub(super) fn malformed(scan: &Directives, out: &mut Vec<String>) {
    let (n, good, long) = (scan.malformed, scan.found.len(), scan.too_long);
    let who = match n {
        0 => return,
        1 if good == 0 => "the session directive of this turn is".to_string(),
        1 => "1 session directive of this turn is".to_string(),
        n if good == 0 => format!("the {n} session directives of this turn are"),
        n => format!("{n} session directives of this turn are"),
    };
    let what = match long {
        0 => "not valid JSON".to_string(),
        k if k == n => format!("longer than the {LONGEST} of JSON a directive may hold"),
        k => format!("not valid JSON ({k} of them longer than {LONGEST})"),
    };
    let outcome = match good {
        0 => "nothing captured",
        _ => "the others are captured",
    };
    // The advice names no directive shape: a client that echoes hook output must not be
    // handed a line that could be captured.
    out.push(format!("{P} {who} {what}; {outcome}. Each needs one JSON object with a string \"summary\" and, if any, \"refs\" as an array of strings and \"supersedes\" as an array of at most 16 entry ids."));
}

/// The most JSON one directive holds, as the messages say it.
const LONGEST: &str = "64 KiB";

/// How long a draft's summary was as written: its words, and whether the entry keeps only
/// its first [`sanitize::SUMMARY_MAX_CHARS`] characters.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Length {
    pub words: usize,
    pub cut: bool,
}

/// The lines for what was written. `words` holds each draft's length, in order.
pub(super) fn written(
    vault: &Vault,
    w: &write::Written,
    project: Option<&str>,
    words: &[Length],
    out: &mut Vec<String>,
) {
    let appended = w.count(|o| matches!(o, write::Outcome::Appended { .. }));
    if let Some(day) = w.outcomes.iter().find_map(|o| match o {
        write::Outcome::Appended { day, .. } => Some(day),
        _ => None,
    }) {
        let proj = project.map(|p| format!(" [{p}]")).unwrap_or_default();
        let entries = noun(appended, "entry", "entries");
        out.push(format!(
            "{P} captured {appended} {entries}{proj} into {day} session record."
        ));
    }
    duplicates(w, out);
    journalled(w, out);
    aside(w, out);
    earlier(w, out);
    if let Some(e) = &w.failed {
        let left = words.len() - w.outcomes.len();
        let directives = noun(left, "directive", "directives");
        out.push(format!("{P} error: {e}; the last {left} {directives} of this turn could not be written. Fix the cause, then capture them with `git rutter capture --summary`."));
    }
    if appended + w.earlier.placed + w.earlier.in_memory.len() == 0 {
        return;
    }
    for (k, (outcome, len)) in w.outcomes.iter().zip(words).enumerate() {
        let long = len.words > sanitize::WORD_CEILING;
        if !matches!(outcome, write::Outcome::Appended { .. }) || !(long || len.cut) {
            continue;
        }
        let which = match words.len() {
            1 => "summary".to_string(),
            total => format!("summary {} of {total}", k + 1),
        };
        let stored = match len.cut {
            true => format!(
                "Cut to its first {} characters, the most an entry keeps",
                sanitize::SUMMARY_MAX_CHARS
            ),
            false => "Stored verbatim as written".to_string(),
        };
        let n = crate::count::count(len.words, "word", "words");
        out.push(format!("{P} {which} is {n}; the style contract asks for about {} and no more than {}. {stored} -- if a session did several separable things, emit a line per thing as you finish it.", sanitize::WORD_TARGET, sanitize::WORD_CEILING));
    }
    for path in &w.diverged {
        let these = noun(appended, "this entry", "these entries");
        out.push(format!("{P} {path} was edited after it was committed; the commit keeps the committed bytes plus {these}. Run `git rutter verify` to see the finding."));
    }
    let saved = match appended {
        1 => "the entry is saved",
        _ => "the entries are saved",
    };
    if let (Some(why), Some(_)) = (&w.journal_problem, &w.commit) {
        out.push(format!("{P} the pending journal cannot be used ({why}); the commit takes the lines from memory."));
    }
    let kept = match w.kept_aside.first() {
        Some(p) => format!(
            " in the day file and, as the pending journal could not take it, aside in {}",
            p.display()
        ),
        None => " and journalled".to_string(),
    };
    match (&vault.git_dir, &w.commit, &w.pending) {
        (None, _, _) => out.push(format!("{P} hint: the vault is not a git repository; run `git rutter init` in it to keep a verifiable history.")),
        (Some(_), _, Some(why)) => {
            out.push(format!("{P} not committed yet ({why}); {saved}{kept}, and `git rutter commit` or the next capture will commit it."));
            if let Some(problem) = &w.journal_problem {
                out.push(format!("{P} {problem}."));
            }
        }
        (Some(_), Some(c), None) => {
            out.push(format!("{P} committed {} to refs/rutter/records.", crate::shortid::long(c)));
            if let Some(problem) = &w.unwitnessed {
                out.push(format!("{P} {problem}."));
            }
        }
        _ => {}
    }
}

/// Directives already recorded for this session (the Stop hook fired again, or a turn repeated
/// an earlier line).
fn duplicates(w: &write::Written, out: &mut Vec<String>) {
    let total = w.outcomes.len();
    match w.count(|o| matches!(o, write::Outcome::Duplicate)) {
        0 => {}
        1 if total == 1 => out.push(format!(
            "{P} directive unchanged for this session; already recorded, nothing appended."
        )),
        d if d == total => out.push(format!(
            "{P} all {d} directives of this turn are unchanged for this session; already recorded, nothing appended."
        )),
        1 => out.push(format!(
            "{P} 1 of the {total} directives of this turn was already recorded for this session; it was not appended again."
        )),
        d => out.push(format!(
            "{P} {d} of the {total} directives of this turn were already recorded for this session; they were not appended again."
        )),
    }
}

/// Entries the day file could not take, waiting in the pending journal.
fn journalled(w: &write::Written, out: &mut Vec<String>) {
    let held: Vec<&String> = w
        .outcomes
        .iter()
        .filter_map(|o| match o {
            write::Outcome::Journalled { why, .. } => Some(why),
            _ => None,
        })
        .collect();
    let Some(why) = held.first() else {
        return;
    };
    let (what, it) = match held.len() {
        1 => ("the entry is".to_string(), "it"),
        n => (format!("the {n} entries are"), "them"),
    };
    let place = w
        .journal
        .as_ref()
        .map_or("the pending journal".to_string(), |p| {
            p.display().to_string()
        });
    out.push(format!(
        "{P} the day file could not take the session record ({why}); {what} saved in {place}, and `git rutter commit` or the next capture will append and commit {it} once the file is writable."
    ));
}

/// Earlier captures this one completed, found recorded already, or left waiting; journal
/// files the commit refused.
fn earlier(w: &write::Written, out: &mut Vec<String>) {
    let e = &w.earlier;
    let moved = e.placed;
    if moved > 0 {
        let what = noun(moved, "entry that was", "entries that were");
        out.push(format!(
            "{P} moved {moved} earlier {what} waiting in the pending journal or aside into {}.",
            noun(moved, "its day file", "their day files")
        ));
    }
    if e.duplicates > 0 {
        let d = e.duplicates;
        out.push(format!(
            "{P} {d} waiting {} already recorded for {} session; dropped.",
            noun(d, "entry was", "entries were"),
            noun(d, "its", "their")
        ));
    }
    out.extend(e.waiting.iter().map(|m| format!("{P} {m}")));
    out.extend(e.refused.iter().map(|m| format!("{P} {m}")));
    for (name, why) in &w.refused {
        let place = w.journal.as_ref().map_or(String::new(), |p| {
            format!(" {}", p.join(crate::journal::REJECTED_DIR).display())
        });
        out.push(format!(
            "{P} refused the pending record {name} ({why}); it was moved to{place} and is never committed. Look at it; if it holds a line you want, capture it again with `git rutter capture --summary`."
        ));
    }
}

/// Entries written aside because the record path is a symlink or not a regular file.
fn aside(w: &write::Written, out: &mut Vec<String>) {
    let aside: Vec<(&PathBuf, &String)> = w
        .outcomes
        .iter()
        .filter_map(|o| match o {
            write::Outcome::Aside { path, why } => Some((path, why)),
            _ => None,
        })
        .collect();
    let Some((path, why)) = aside.first() else {
        return;
    };
    let (what, it) = match aside.len() {
        1 => ("the entry was".to_string(), "it"),
        n => (format!("the {n} entries were"), "them"),
    };
    let verb = match aside.iter().any(|(_, why)| {
        why.contains("symbolic link")
            || why.contains("hard link")
            || why.contains("not a regular file")
    }) {
        true => "refused to write",
        false => "could not write",
    };
    out.push(format!(
        "{P} {verb} the session record ({why}); {what} written aside to {}, and `git rutter commit` or the next capture will move {it} into the vault once it can.",
        path.display()
    ));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vault::VaultSource;
    use write::Outcome;

    fn appended(n: usize) -> Outcome {
        Outcome::Appended {
            day: "2026-12-01".into(),
            entry_id: format!("id{n}"),
        }
    }

    fn lines(outcomes: Vec<Outcome>, failed: Option<&str>, words: &[usize]) -> Vec<String> {
        let lengths: Vec<Length> = words
            .iter()
            .map(|&words| Length { words, cut: false })
            .collect();
        said(outcomes, failed, &lengths)
    }

    /// The lines (without their prefix) for `outcomes`, the batch's error and each draft's
    /// length.
    fn said(outcomes: Vec<Outcome>, failed: Option<&str>, lengths: &[Length]) -> Vec<String> {
        let vault = Vault {
            root: "/v".into(),
            git_dir: Some("/v/.git".into()),
            source: VaultSource::Flag,
            linked_from: None,
        };
        let w = write::Written {
            outcomes,
            commit: Some("0123456789abcdef".into()),
            pending: None,
            diverged: vec![],
            failed: failed.map(str::to_string),
            ..Default::default()
        };
        let mut out = Vec::new();
        written(&vault, &w, Some("proj"), lengths, &mut out);
        out.iter()
            .map(|l| l.trim_start_matches(P).trim().to_string())
            .collect()
    }

    /// Outcomes, the batch's error, each draft's word count, and the lines wanted.
    type Case<'a> = (Vec<Outcome>, Option<&'a str>, Vec<usize>, Vec<&'a str>);

    #[test]
    fn what_a_turn_reports() {
        let aside = |n: usize| Outcome::Aside {
            path: PathBuf::from(format!("/s/aside/{n}.md")),
            why: "symbolic link".into(),
        };
        let committed = "committed 0123456789ab to refs/rutter/records.";
        let cases: Vec<Case> = vec![
            (vec![appended(1)], None, vec![5], vec!["captured 1 entry [proj] into 2026-12-01 session record.", committed]),
            (vec![appended(1), appended(2), appended(3)], None, vec![5, 5, 5], vec!["captured 3 entries [proj] into 2026-12-01 session record.", committed]),
            (vec![Outcome::Duplicate], None, vec![5], vec!["directive unchanged for this session; already recorded, nothing appended."]),
            (vec![Outcome::Duplicate, Outcome::Duplicate], None, vec![5, 5], vec!["all 2 directives of this turn are unchanged for this session; already recorded, nothing appended."]),
            (
                vec![Outcome::Duplicate, appended(2), Outcome::Duplicate],
                None,
                vec![5, 61, 5],
                vec![
                    "captured 1 entry [proj] into 2026-12-01 session record.",
                    "2 of the 3 directives of this turn were already recorded for this session; they were not appended again.",
                    "summary 2 of 3 is 61 words; the style contract asks for about 40 and no more than 60. Stored verbatim as written -- if a session did several separable things, emit a line per thing as you finish it.",
                    committed,
                ],
            ),
            (vec![aside(1), aside(2)], None, vec![5, 5], vec!["refused to write the session record (symbolic link); the 2 entries were written aside to /s/aside/1.md, and `git rutter commit` or the next capture will move them into the vault once it can."]),
            (
                vec![appended(1)],
                Some("disk full"),
                vec![5, 5, 5],
                vec![
                    "captured 1 entry [proj] into 2026-12-01 session record.",
                    "error: disk full; the last 2 directives of this turn could not be written. Fix the cause, then capture them with `git rutter capture --summary`.",
                    committed,
                ],
            ),
        ];
        for (outcomes, failed, words, want) in cases {
            assert_eq!(
                lines(outcomes.clone(), failed, &words),
                want,
                "{outcomes:?}"
            );
        }
    }

    #[test]
    fn a_summary_cut_to_the_most_an_entry_keeps_is_said_so() {
        let of = |summary: &str| Length {
            words: sanitize::word_count(summary),
            cut: sanitize::inert_line_cut(summary, sanitize::SUMMARY_MAX_CHARS).1,
        };
        let long = "word ".repeat(12_000);
        let one_token = "x".repeat(3_000);
        assert!(of(&long).cut && of(&one_token).cut);
        assert!(!of(&"word ".repeat(70)).cut && !of(&"y".repeat(2_000)).cut);
        let lengths = [of(&long), of(&one_token)];
        let out = said(vec![appended(1), appended(2)], None, &lengths);
        let cut: Vec<&String> = out
            .iter()
            .filter(|l| l.contains("Cut to its first 2000 characters, the most an entry keeps"))
            .collect();
        assert_eq!(cut.len(), 2, "{out:#?}");
        assert!(
            cut[0].contains("summary 1 of 2 is 12000 words"),
            "{}",
            cut[0]
        );
        assert!(cut[1].contains("summary 2 of 2 is 1 word;"), "{}", cut[1]);
        assert!(!out.iter().any(|l| l.contains("verbatim")), "{out:#?}");
    }

    #[test]
    fn malformed_directives_are_counted() {
        let scan = |found: usize, malformed: usize| {
            let mut d = Directives {
                malformed,
                ..Directives::default()
            };
            for _ in 0..found {
                d.found.push(crate::capture::directive::Directive {
                    summary: "s".into(),
                    refs: vec![],
                    supersedes: vec![],
                });
            }
            let mut out = Vec::new();
            super::malformed(&d, &mut out);
            out
        };
        assert!(scan(3, 0).is_empty());
        let mut long = Directives {
            malformed: 1,
            too_long: 1,
            ..Directives::default()
        };
        let mut said = Vec::new();
        super::malformed(&long, &mut said);
        assert!(said[0].contains("the session directive of this turn is longer than the 64 KiB of JSON a directive may hold; nothing captured."), "{said:?}");
        long.malformed = 3;
        said.clear();
        super::malformed(&long, &mut said);
        assert!(said[0].contains("the 3 session directives of this turn are not valid JSON (1 of them longer than 64 KiB); nothing captured."), "{said:?}");
        let tail = "Each needs one JSON object with a string \"summary\" and, if any, \"refs\" as an array of strings and \"supersedes\" as an array of at most 16 entry ids.";
        for (found, bad, want) in [
            (
                0,
                1,
                "the session directive of this turn is not valid JSON; nothing captured.",
            ),
            (
                2,
                1,
                "1 session directive of this turn is not valid JSON; the others are captured.",
            ),
            (
                0,
                2,
                "the 2 session directives of this turn are not valid JSON; nothing captured.",
            ),
            (
                1,
                3,
                "3 session directives of this turn are not valid JSON; the others are captured.",
            ),
        ] {
            assert_eq!(scan(found, bad), vec![format!("{P} {want} {tail}")]);
        }
        // The advice itself is never a directive.
        let out = scan(0, 1).concat();
        assert_eq!(
            crate::capture::directive::directives_in(&out),
            Directives::default()
        );
    }
}
