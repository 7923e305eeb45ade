//! Hostile notes (issue 11, class 5: bounded work for every input): a capture citing a note too
//! large to hash in the hook's time budget still captures the entry, without that note, says so
//! on stderr, and finishes promptly; search over a vault holding such a note answers promptly
//! and leaves it out of the index. Time bounds are generous (a loaded 2-core
//! machine): they tell "skipped" from "read for minutes".

use crate::common;

use common::{in_ref, Env};
use std::time::{Duration, Instant};

const DAY: &str = "_librarian/sessions/2026-11-30.md";

#[test]
fn a_note_too_large_to_hash_is_left_out_with_a_message_and_the_entry_is_captured() {
    let env = Env::git_vault();
    // Sparse: 100 GiB of zeroes, which reading would take minutes.
    let huge = std::fs::File::create(env.vault.join("Notes/huge.md")).unwrap();
    huge.set_len(100 << 30).unwrap();
    let started = Instant::now();
    let r = env.capture_at(
        "2026-11-30T10:00:00.000Z",
        "Decided with a huge note beside.",
        &["Notes/huge.md", "Notes/a.md"],
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!((r.code, r.stdout.as_str()), (0, ""), "{}", r.stderr);
    assert!(
        r.stderr.contains(
            "[librarian-capture] cited note Notes/huge.md is 102400 MiB, over the 64 MiB a capture reads; it was left out of the entry. Cite a smaller note (or a part of it split into its own note).\n"
        ),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("committed "), "{}", r.stderr);
    let committed = env.git(&["show", &format!("refs/rutter/records:{}", in_ref(DAY))]);
    let line = committed
        .lines()
        .find(|l| l.contains("Decided with a huge note beside."))
        .unwrap_or_else(|| panic!("{committed}"));
    assert!(line.contains("\"path\":\"Notes/a.md\""), "{line}");
    assert!(!line.contains("huge.md"), "{line}");
}

#[test]
fn a_note_just_over_the_limit_is_left_out_and_one_under_it_is_cited() {
    let env = Env::git_vault();
    let limit: u64 = 64 << 20;
    let over = std::fs::File::create(env.vault.join("Notes/over.md")).unwrap();
    over.set_len(limit + 1).unwrap();
    let under = std::fs::File::create(env.vault.join("Notes/under.md")).unwrap();
    under.set_len(1 << 20).unwrap();
    let r = env.capture_at(
        "2026-11-30T10:00:00.000Z",
        "Decided at the limit.",
        &["Notes/over.md", "Notes/under.md"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("cited note Notes/over.md is 65 MiB, over the 64 MiB a capture reads"),
        "{}",
        r.stderr
    );
    let committed = env.git(&["show", &format!("refs/rutter/records:{}", in_ref(DAY))]);
    assert!(
        committed.contains("\"path\":\"Notes/under.md\""),
        "{committed}"
    );
    assert!(!committed.contains("over.md"), "{committed}");
}

#[test]
fn search_over_a_vault_with_a_huge_note_answers_promptly_without_it() {
    let env = Env::git_vault();
    let huge = std::fs::File::create(env.vault.join("Notes/huge-alpha.md")).unwrap();
    huge.set_len(100 << 30).unwrap();
    let started = Instant::now();
    let r = env.rutter(&["search", "--json", "alpha"]);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let paths: Vec<&str> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["path"].as_str().unwrap())
        .collect();
    assert!(paths.contains(&"Notes/a.md"), "{paths:?}");
    assert!(!paths.contains(&"Notes/huge-alpha.md"), "{paths:?}");
}
