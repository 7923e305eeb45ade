//! The index: search semantics, hostile queries, confinement of `show`, corrupt and foreign
//! index files, and rebuild equivalence.

use crate::common;
use common::*;

fn notes_vault() -> Env {
    let env = Env::git_vault();
    env.write("Notes/blue.md", "---\ntype: note\nstatus: draft\ncreated: 2026-01-02\ntags: [music, live]\n---\n# Blue Man Group\n\nThe blue man group plays drums.\n");
    env.write(
        "Notes/blue-only.md",
        "# Blue\n\nOnly blue here, and a man, but no band.\n",
    );
    for i in 0..15 {
        env.write(
            &format!("Many/n{i:02}.md"),
            &format!(
                "---\ntype: {}\n---\n# Garden {i}\n\nThe garden ledger entry {i}.\n",
                if i % 3 == 0 { "idea" } else { "note" }
            ),
        );
    }
    let r = env.rutter(&["reindex"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    env
}

fn search(env: &Env, args: &[&str]) -> Run {
    let mut a = vec!["search"];
    a.extend_from_slice(args);
    env.rutter(&a)
}

#[test]
fn search_is_and_across_terms_with_snippets_and_badges() {
    let env = notes_vault();
    let r = search(&env, &["blue", "man", "group"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .starts_with("1. Blue Man Group — note · draft · 2026-01-02\n   Notes/blue.md\n   "),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("«blue» «man» «group»"), "{}", r.stdout);
    assert!(!r.stdout.contains("blue-only"), "AND, not OR");
    let none = search(&env, &["zebra"]);
    assert_eq!(none.stdout.trim(), "No notes matched \"zebra\".");
}

#[test]
fn filters_run_in_sql_and_fill_the_limit() {
    let env = notes_vault();
    let r = search(
        &env,
        &["--type", "note", "--limit", "5", "--json", "garden"],
    );
    let v: decoded::Search = json::decode(&r.stdout);
    assert_eq!(v.results.len(), 5, "{}", r.stdout);
    assert!(v.results.iter().all(|h| h.note_type == "note"));
    assert_eq!(v.query, "garden");
}

/// The ranking is bm25's across processes: each search's order is the one `bm25()` gives on
/// the same index, the count a search stored (as digests, no query text) is used by the next
/// and renewed once a note changes (spec/index.md, "Search", the ranking).
#[test]
fn the_ranking_is_bm25s_before_and_after_a_note_changes() {
    use sha2::{Digest, Sha256};
    let env = notes_vault();
    let db = env.vault.join(".git/rutter/index.sqlite");
    let by_bm25 = || -> Vec<String> {
        let conn = rusqlite::Connection::open(&db).unwrap();
        let mut stmt = conn
            .prepare("SELECT path FROM notes_fts WHERE notes_fts MATCH '\"garden\" \"ledger\"' ORDER BY bm25(notes_fts), rowid LIMIT 50")
            .unwrap();
        let rows = stmt.query_map([], |r| r.get(0)).unwrap();
        rows.map(Result::unwrap).collect()
    };
    let stored = || -> Vec<(Vec<u8>, i64)> {
        let conn = rusqlite::Connection::open(&db).unwrap();
        let mut stmt = conn
            .prepare("SELECT term, hits FROM search_counts ORDER BY hits")
            .unwrap();
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
        rows.map(Result::unwrap).collect()
    };
    let paths = |env: &Env| -> Vec<String> {
        let r = search(env, &["--json", "--limit", "50", "garden", "ledger"]);
        let v: decoded::Search = json::decode(&r.stdout);
        v.results.into_iter().map(|h| h.path).collect()
    };
    let key = |t: &str| Sha256::digest(t.as_bytes()).to_vec();
    for _ in 0..2 {
        assert_eq!(paths(&env), by_bm25());
        assert_eq!(stored(), [(key("garden"), 15), (key("ledger"), 15)]);
    }
    // A note where both words weigh more: its count changes and it ranks first.
    env.write(
        "Notes/ledger.md",
        "# Garden ledger\n\ngarden ledger garden ledger\n",
    );
    let now = paths(&env);
    assert_eq!(now[0], "Notes/ledger.md", "{now:?}");
    assert_eq!(now, by_bm25());
    assert_eq!(stored(), [(key("garden"), 16), (key("ledger"), 16)]);
}

#[test]
fn any_query_text_is_safe() {
    let env = notes_vault();
    for q in [
        "\"",
        "\"unbalanced",
        "*",
        "NEAR(blue man)",
        "^blue",
        "title:blue",
        "a:b:c",
        "-blue",
        "blue OR man",
        "'; DROP TABLE notes; --",
        "ünïcödé 日本語",
        "()",
        ".",
        "AND",
        "NOT",
        "{col}",
        "[x]",
    ] {
        let r = search(&env, &["--", q]);
        // 0 with hits, 1 when no note holds every word (as git grep): never an error (2).
        assert!(r.code == 0 || r.code == 1, "query {q:?}: {}", r.stderr);
        assert_eq!(
            r.code == 1,
            r.stdout.starts_with("No notes matched")
                || r.stdout.starts_with("No note holds every word"),
            "query {q:?}"
        );
        assert!(r.stderr.is_empty(), "query {q:?}: {}", r.stderr);
    }
    let r = search(&env, &["--", "-blue"]);
    assert!(
        r.stdout.contains("Notes/blue.md"),
        "a leading dash works after --: {}",
        r.stdout
    );
}

/// A word written with `-` or `:` finds the note that holds it as written: the index split it
/// into its parts, so the query looks for them as a phrase (it looked for `followup`, which no
/// note can hold). The parts must be adjacent: a note holding them apart is not a hit.
#[test]
fn a_word_with_a_hyphen_or_colon_finds_the_note_that_holds_it() {
    let env = notes_vault();
    env.write(
        "Notes/vendor.md",
        "# Vendor\n\nA follow-up with the e-mail vendor about ADR-002, col:val.\n",
    );
    env.write(
        "Notes/apart.md",
        "# Apart\n\nFollow the plan; up to you. ADR then 002.\n",
    );
    for q in ["follow-up", "ADR-002", "col:val", "e-mail vendor"] {
        let r = search(&env, &["--", q]);
        assert_eq!(r.code, 0, "query {q:?}: {}{}", r.stdout, r.stderr);
        assert!(
            r.stdout.contains("Notes/vendor.md"),
            "query {q:?}: {}",
            r.stdout
        );
        assert!(
            !r.stdout.contains("Notes/apart.md"),
            "query {q:?}: {}",
            r.stdout
        );
    }
}

#[test]
fn show_reads_only_indexed_notes() {
    let env = notes_vault();
    let r = env.rutter(&["show", "Notes/blue.md"]);
    assert_eq!(r.code, 0);
    assert!(
        r.stdout
            .starts_with("note · draft · 2026-01-02\nNotes/blue.md\n\n---\n\n# Blue Man Group"),
        "{}",
        r.stdout
    );
    std::fs::write(env.root().join("outside.md"), "secret").unwrap();
    for p in [
        "../outside.md",
        "/etc/passwd",
        ".git/config",
        "_librarian/sessions",
        "Notes/../../outside.md",
    ] {
        let r = env.rutter(&["show", p]);
        assert_eq!(r.code, 1, "{p}");
        assert_eq!(r.stdout, "", "a miss is not output");
        assert_eq!(
            r.stderr.trim(),
            format!("git-rutter: Note not found: {p}. `git rutter search WORDS` finds notes by their content.")
        );
    }
}

#[test]
fn show_takes_a_path_relative_to_the_current_folder() {
    let env = notes_vault();
    let notes = env.vault.join("Notes");
    let from_notes = |p: &str| -> Run {
        let mut c = env.cmd();
        c.current_dir(&notes).args(["show", p]);
        common::run_with_stdin(&mut c, b"")
    };
    for p in ["blue.md", "./blue.md", "../Notes/blue.md", "Notes/blue.md"] {
        let r = from_notes(p);
        assert_eq!(r.code, 0, "{p}: {}", r.stderr);
        assert!(r.stdout.contains("Notes/blue.md\n"), "{p}: {}", r.stdout);
    }
    let abs = notes.join("blue.md");
    let r = from_notes(abs.to_str().unwrap());
    assert_eq!(r.code, 0, "an absolute path inside the vault: {}", r.stderr);
    let r = from_notes("--json");
    assert_ne!(r.code, 0, "a flag is not a path");
    std::fs::write(env.root().join("outside.md"), "secret").unwrap();
    for p in ["../../outside.md", "../.git/config"] {
        let r = from_notes(p);
        assert_eq!(r.code, 1, "{p}");
        assert_eq!(r.stdout, "", "{p}");
    }
    // At the vault's root and from outside it (`--vault`), `./` and `..` resolve the same way;
    // a path that leaves the vault is still no note.
    let from = |dir: &std::path::Path, p: &str| -> Run {
        let mut c = env.cmd();
        c.current_dir(dir).args(["show", p]);
        common::run_with_stdin(&mut c, b"")
    };
    for dir in [env.vault.clone(), env.root()] {
        for p in ["./Notes/blue.md", "Notes/../Notes/blue.md"] {
            let r = from(&dir, p);
            assert_eq!(r.code, 0, "{dir:?} {p}: {}", r.stderr);
            assert!(r.stdout.contains("Notes/blue.md\n"), "{p}: {}", r.stdout);
        }
        let r = from(&dir, "../outside.md");
        assert_eq!(r.code, 1, "{dir:?}");
        assert!(
            r.stderr.contains("`git rutter search WORDS`"),
            "{}",
            r.stderr
        );
    }
}

#[test]
fn a_corrupt_index_is_rebuilt_and_a_foreign_one_refused() {
    let env = notes_vault();
    let db = env.vault.join(".git/rutter/index.sqlite");
    std::fs::write(&db, b"this is not a database at all").unwrap();
    let r = search(&env, &["blue"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("Notes/blue.md"));
    let foreign = env.root().join("foreign.db");
    std::fs::write(&foreign, b"SQLite format 3\0 but garbage").unwrap();
    let mut c = env.cmd();
    c.env("LIBRARIAN_DB_PATH", &foreign)
        .args(["search", "blue"]);
    let r: Run = c.output().unwrap().into();
    assert_eq!(r.code, 1, "a refusal the user can fix (spec/output.md)");
    assert!(
        r.stderr.contains("is not an index git-rutter made"),
        "{}",
        r.stderr
    );
    assert_eq!(
        std::fs::read(&foreign).unwrap(),
        b"SQLite format 3\0 but garbage",
        "never clobbered"
    );
}

#[test]
fn an_index_serves_only_its_own_vault_unless_forced() {
    let a = notes_vault();
    let b = Env::git_vault();
    let db = a.vault.join(".git/rutter/index.sqlite");
    let run = |extra: &[&str]| -> Run {
        let mut c = b.cmd();
        c.env("LIBRARIAN_DB_PATH", &db).args(extra);
        c.output().unwrap().into()
    };
    let r = run(&["search", "blue"]);
    assert_eq!(r.code, 1, "a refusal the user can fix (spec/output.md)");
    assert!(
        r.stderr.contains("was built for the vault") && r.stderr.contains("reindex --force"),
        "{}",
        r.stderr
    );
    let r = run(&["reindex", "--force"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(run(&["search", "blue"]).stdout.contains("No notes matched"));
}

#[test]
fn deleting_the_index_changes_no_answer() {
    let env = notes_vault();
    env.rutter(&[
        "capture",
        "--summary",
        "Picked the blue band.",
        "--ref",
        "Notes/blue.md",
        "--session",
        "S",
    ]);
    std::fs::rename(
        env.vault.join("Notes/a.md"),
        env.vault.join("Notes/a-moved.md"),
    )
    .unwrap();
    env.rutter(&[
        "capture",
        "--summary",
        "Cited a moved note.",
        "--ref",
        "Notes/b.md",
        "--session",
        "T",
    ]);
    env.rutter(&["reindex"]);
    let answers = |env: &Env| -> Vec<String> {
        [
            vec!["recent", "--all"],
            vec!["search", "blue", "man"],
            vec!["search", "--json", "garden"],
            vec!["show", "Notes/blue.md"],
        ]
        .iter()
        .map(|a| env.rutter(a).stdout)
        .collect()
    };
    let before = answers(&env);
    assert!(before[1].contains("↩ prior engagement"), "{}", before[1]);
    std::fs::remove_file(env.vault.join(".git/rutter/index.sqlite")).unwrap();
    let _ = std::fs::remove_file(env.vault.join(".git/rutter/index.sqlite-wal"));
    let _ = std::fs::remove_file(env.vault.join(".git/rutter/index.sqlite-shm"));
    env.rutter(&["reindex"]);
    assert_eq!(answers(&env), before);
    env.rutter(&["reindex", "--force"]);
    assert_eq!(answers(&env), before);
}

#[test]
fn reindex_rereads_only_what_changed() {
    let env = notes_vault();
    let r = env.rutter(&["reindex"]);
    assert!(
        r.stdout
            .contains("changed: 0 note(s) re-read, 0 removed, 0 day file(s) re-read"),
        "{}",
        r.stdout
    );
    env.write("Notes/blue.md", "# Blue\n\nrewritten with zebra\n");
    std::fs::remove_file(env.vault.join("Notes/blue-only.md")).unwrap();
    let r = env.rutter(&["reindex"]);
    assert!(
        r.stdout.contains("changed: 1 note(s) re-read, 1 removed"),
        "{}",
        r.stdout
    );
    assert!(search(&env, &["zebra"]).stdout.contains("Notes/blue.md"));
}

#[test]
fn enrichment_never_shows_a_candidate_as_engagement() {
    let env = notes_vault();
    env.rutter(&[
        "capture",
        "--summary",
        "Studied the blue band.",
        "--ref",
        "Notes/blue.md",
        "--session",
        "S",
    ]);
    env.write("Notes/blue-copy.md", &env.read("Notes/blue.md"));
    std::fs::rename(
        env.vault.join("Notes/blue.md"),
        env.vault.join("Notes/blue-moved.md"),
    )
    .unwrap();
    env.rutter(&["reindex"]);
    let r = search(&env, &["blue", "man", "group"]);
    assert!(!r.stdout.contains("↩ prior engagement"), "{}", r.stdout);
    assert!(r.stdout.contains("? [UNRESOLVED reference Notes/blue.md -- candidates: Notes/blue-copy.md, Notes/blue-moved.md"), "{}", r.stdout);
}

#[test]
fn readers_never_see_an_empty_index_during_a_forced_rebuild() {
    let env = notes_vault();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let stop = stop.clone();
        let mut cmd = env.cmd();
        cmd.args(["search", "garden"]);
        std::thread::spawn(move || {
            let mut empty = 0;
            let mut runs = 0;
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                let out = cmd.output().unwrap();
                runs += 1;
                if !String::from_utf8_lossy(&out.stdout).contains("Many/") {
                    empty += 1;
                }
            }
            (runs, empty)
        })
    };
    for _ in 0..5 {
        assert_eq!(env.rutter(&["reindex", "--force"]).code, 0);
    }
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let (runs, empty) = reader.join().unwrap();
    assert!(runs > 0);
    assert_eq!(empty, 0, "{empty} of {runs} searches saw an empty index");
}

#[test]
fn a_non_git_vault_keeps_its_index_in_the_xdg_folder() {
    let env = Env::bare();
    env.write("Notes/blue.md", "# Blue\n\nblue notes\n");
    env.rutter(&[
        "capture",
        "--summary",
        "Noted the blue.",
        "--ref",
        "Notes/blue.md",
        "--session",
        "S",
    ]);
    let r = env.rutter(&["reindex"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let xdg = env.home.join(".local/share/rutter");
    let ids: Vec<_> = std::fs::read_dir(&xdg)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(ids.len(), 1);
    assert!(ids[0].join("index.sqlite").is_file());
    assert!(
        r.stdout
            .contains(&format!("index: {}", ids[0].join("index.sqlite").display())),
        "{}",
        r.stdout
    );
    assert!(!env.vault.join(".git").exists());
    assert!(search(&env, &["blue"])
        .stdout
        .contains("↩ prior engagement"));
}

/// The new-user trial, §5: no reindex between a change and the command that must see it.
#[test]
fn search_and_show_see_every_change_since_the_last_reindex() {
    let env = notes_vault();
    let found = |q: &[&str]| search(&env, q).stdout;

    // An edit appended in place.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(env.vault.join("Notes/blue.md"))
        .unwrap();
    std::io::Write::write_all(&mut f, b"Also consider zucchini.\n").unwrap();
    drop(f);
    assert!(found(&["zucchini"]).contains("Notes/blue.md"));
    let shown = env.rutter(&["show", "Notes/blue.md"]);
    assert!(
        shown
            .stdout
            .contains("plays drums.\nAlso consider zucchini.\n"),
        "{}",
        shown.stdout
    );

    // A new note in a new folder, found by search and by show.
    env.write(
        "Notes/new/deeper/kohlrabi.md",
        "---\ntitle: Kohlrabi\n---\nKohlrabi planting\n",
    );
    assert!(found(&["kohlrabi"]).starts_with("1. Kohlrabi\n   Notes/new/deeper/kohlrabi.md"));
    let r = env.rutter(&["show", "Notes/new/deeper/kohlrabi.md"]);
    assert_eq!(r.code, 0, "{}", r.stdout);

    // A rename: found at the new path only.
    std::fs::rename(env.vault.join("Notes/new"), env.vault.join("Notes/renamed")).unwrap();
    let r = found(&["kohlrabi"]);
    assert!(
        r.contains("Notes/renamed/deeper/kohlrabi.md") && !r.contains("Notes/new/"),
        "{r}"
    );

    // A delete: no longer served.
    std::fs::remove_file(env.vault.join("Notes/blue.md")).unwrap();
    assert_eq!(
        found(&["zucchini"]).trim(),
        "No notes matched \"zucchini\"."
    );
    let r = env.rutter(&["show", "Notes/blue.md"]);
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.trim()),
        (
            1,
            "",
            "git-rutter: Note not found: Notes/blue.md. `git rutter search WORDS` finds notes by their content."
        )
    );

    // What search and show refreshed is what a reindex finds: nothing left to do.
    let r = env.rutter(&["reindex"]);
    assert!(
        r.stdout.contains("changed: 0 note(s) re-read, 0 removed"),
        "{}",
        r.stdout
    );
}

#[test]
fn concurrent_searches_after_a_change_all_see_it_and_none_fails() {
    let env = notes_vault();
    env.write(
        "Late/quokka.md",
        "# Quokka\n\nA quokka note written after the reindex.\n",
    );
    let runs: Vec<Run> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..6)
            .map(|i| {
                let env = &env;
                scope.spawn(move || {
                    let args = if i % 2 == 0 {
                        vec!["search", "quokka"]
                    } else {
                        vec!["show", "Late/quokka.md"]
                    };
                    env.rutter(&args)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for r in &runs {
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(r.stderr.is_empty(), "{}", r.stderr);
        assert!(r.stdout.contains("quokka"), "{}", r.stdout);
    }
}

/// The new-user trial of 2026-12-04, finding 4: the prior-engagement line counts every decision
/// that cited the note (retracted ones left out) and shows the one that shares most of the
/// query's words, in another form too (`drummers` for `drums`); the newest when none does, or
/// among equals.
#[test]
fn prior_engagement_counts_every_citing_decision_and_shows_the_closest() {
    let env = notes_vault();
    for (ts, summary) in [
        (
            "2026-11-02T09:00:00.000Z",
            "Booked two drummers for the spring show.",
        ),
        (
            "2026-11-20T09:00:00.000Z",
            "Moved the band's rehearsal to Thursdays.",
        ),
        ("2026-12-01T09:00:00.000Z", "Printed the blue posters."),
        ("2026-12-03T09:00:00.000Z", "Chose a mistaken venue."),
    ] {
        let r = env.capture_at(ts, summary, &["Notes/blue.md"]);
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    let mistaken = env.entries().last().unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let r = env.rutter(&["retract", &mistaken, "--reason", "wrong venue"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let line = |q: &[&str]| {
        let out = search(&env, q).stdout;
        out.lines()
            .find(|l| l.contains("↩ prior engagement"))
            .unwrap_or_else(|| panic!("no engagement line: {out}"))
            .trim()
            .to_string()
    };
    assert_eq!(
        line(&["drums"]),
        "↩ prior engagement 2026-11-02: \"Booked two drummers for the spring show.\" (of 3 decisions citing this note, the one closest to the query; the newest is from 2026-12-01)"
    );
    assert_eq!(
        line(&["blue", "group"]),
        "↩ prior engagement 2026-12-01: \"Printed the blue posters.\" (the newest of 3 decisions citing this note)"
    );
    let json = search(&env, &["group", "drums", "--json"]).stdout;
    let v: decoded::Search = json::decode(&json);
    let e = v.results[0].engagement.as_ref().expect("the engagement");
    assert_eq!(e.decisions, 3, "{e:?}");
    assert_eq!(e.newest, "2026-12-01");
    assert!(e.closest);
    assert_eq!(e.summary, "Booked two drummers for the spring show.");
}

#[test]
fn a_cited_note_renamed_since_the_reindex_keeps_its_prior_engagement() {
    let env = notes_vault();
    let r = env.rutter(&[
        "capture",
        "--summary",
        "Picked the blue band.",
        "--ref",
        "Notes/blue.md",
        "--session",
        "S",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    env.rutter(&["reindex"]);
    std::fs::create_dir_all(env.vault.join("Archive")).unwrap();
    std::fs::rename(
        env.vault.join("Notes/blue.md"),
        env.vault.join("Archive/blue-band.md"),
    )
    .unwrap();
    // No reindex: search rescans, sees a cited path gone, and the identity pass binds it.
    let r = search(&env, &["blue", "man", "group"]);
    assert!(
        r.stdout.contains("Archive/blue-band.md")
            && r.stdout.contains("↩ prior engagement")
            && r.stdout.contains("Picked the blue band."),
        "{}",
        r.stdout
    );
    assert!(env
        .read("_librarian/note-identity.md")
        .contains("exact-hash: Notes/blue.md -> Archive/blue-band.md"));
}

/// One YAML entry of a day file (the `@1` format `init` adopts).
fn yaml_entry(id: &str, session: Option<&str>, time: &str, summary: &str, project: &str) -> String {
    let session = session.map_or(String::new(), |s| format!("    session_id: {s}\n"));
    format!(
        "  - id: {id}\n{session}    time: '{time}'\n    summary: {summary}\n    refs:\n      - path: Notes/blue.md\n        hash: 'sha256:{}'\n    workspace:\n      cwd: /w/{project}\n      project: {project}\n",
        "0".repeat(64)
    )
}

/// `recent --all` streams the sessions after its first screen as each is read whole: a session
/// that spans every day (open while all the others are read), sessions that interleave,
/// session-less entries at the same time as another session's step, a retracted entry, an
/// edited and a deleted day file; with filters, `--brief`, and in a zone with a half-hour
/// offset. Each prints what one answer of every session prints.
#[test]
fn recent_all_streams_what_one_answer_prints_whatever_the_sessions_and_marks() {
    let env = Env::bare();
    env.write("Notes/blue.md", "# Blue\n\nBlue now.\n");
    env.git(&["init", "-q", "-b", "main"]);
    for d in 1..=20 {
        let day = format!("2026-03-{d:02}");
        let compact = day.replace('-', "");
        let project = if d % 2 == 0 { "alpha" } else { "beta" };
        let mut text = format!(
            "---\ncollection: librarian.sessions\nschema: session-record@1\nday: '{day}'\nsessions:\n"
        );
        for (id, session, time, summary) in [
            (
                "080000000",
                Some("long".to_string()),
                "08:00:00",
                format!("Long step {d}."),
            ),
            (
                "100000000",
                Some(format!("s{}", d % 4)),
                "10:00:00",
                format!("Shared step {d}."),
            ),
            ("120000000", None, "12:00:00", format!("Alone {d}.")),
            (
                "120000001",
                Some(format!("tie-{d}")),
                "12:00:00",
                format!("Tied {d}."),
            ),
        ] {
            let id = format!("{compact}T{id}Z");
            let time = format!("{day}T{time}.000Z");
            // The long session keeps one project, so it stays one session over every day.
            let project = if summary.starts_with("Long") {
                "alpha"
            } else {
                project
            };
            text.push_str(&yaml_entry(
                &id,
                session.as_deref(),
                &time,
                &summary,
                project,
            ));
        }
        text.push_str("---\n");
        env.write(&format!("_librarian/sessions/{day}.md"), &text);
    }
    let init = env.rutter(&["init"]);
    assert_eq!(init.code, 0, "{}{}", init.stdout, init.stderr);
    let retract = env.rutter(&[
        "retract",
        "20260307T080000000Z",
        "--reason",
        "Not a decision.",
    ]);
    assert_eq!(retract.code, 0, "{}", retract.stderr);
    let edited = env
        .read("_librarian/sessions/2026-03-10.md")
        .replace("Shared step 10.", "Rewritten.");
    env.write("_librarian/sessions/2026-03-10.md", &edited);
    std::fs::remove_file(env.vault.join("_librarian/sessions/2026-03-12.md")).unwrap();

    let run = |tz: &str, args: &[&str]| -> Run {
        let mut c = env.cmd();
        c.env("TZ", tz)
            .arg("--vault")
            .arg(&env.vault)
            .arg("recent")
            .args(args);
        c.output().unwrap().into()
    };
    let plain = run("UTC", &["--all"]);
    assert_eq!(plain.code, 0, "{}", plain.stderr);
    for want in [
        "Shared step 10. [edited after commit]",
        "Long step 12. [deleted from the working tree]",
        "one session, 19 steps:",
        "git rutter restore",
    ] {
        assert!(plain.stdout.contains(want), "{want}: {}", plain.stdout);
    }
    assert!(!plain.stdout.contains("Long step 7."), "{}", plain.stdout);
    assert!(!plain.stdout.contains("Rewritten"), "{}", plain.stdout);
    for tz in ["UTC", "Asia/Kolkata"] {
        for args in [
            &[][..],
            &["--brief"],
            &["--utc"],
            &["--grep", "step"],
            &["--project", "alpha"],
            &["--since", "2026-03-05", "--until", "2026-03-15"],
        ] {
            let all = run(tz, &[&["--all"][..], args].concat());
            let every = run(tz, &[&["-n", "100000"][..], args].concat());
            assert_eq!(all.code, 0, "{}", all.stderr);
            assert_eq!(all.stdout, every.stdout, "TZ={tz} {args:?}");
            assert_eq!(all.stderr, every.stderr, "TZ={tz} {args:?}");
        }
    }
}

/// `recent --all` prints its first screen before it reads every session: what it prints is
/// what one answer of every session prints, marks, changed refs and the restore hint included.
#[test]
fn recent_all_prints_what_a_count_of_every_session_prints() {
    let env = Env::bare();
    env.write("Notes/blue.md", "# Blue\n\nBlue now.\n");
    env.git(&["init", "-q", "-b", "main"]);
    for d in 1..=28 {
        let day = format!("2026-02-{d:02}");
        let mut text = format!(
            "---\ncollection: librarian.sessions\nschema: session-record@1\nday: '{day}'\nsessions:\n"
        );
        for (s, hh) in [("a", 9), ("b", 15)] {
            text.push_str(&format!(
                "  - id: {}T{hh:02}0000000Z\n    session_id: {s}-{d}\n    time: '{day}T{hh:02}:00:00.000Z'\n    summary: Step {s} of day {d}.\n    refs:\n      - path: Notes/blue.md\n        hash: 'sha256:{}'\n",
                day.replace('-', ""),
                "0".repeat(64)
            ));
        }
        text.push_str("---\n");
        env.write(&format!("_librarian/sessions/{day}.md"), &text);
    }
    let init = env.rutter(&["init"]);
    assert!(
        init.stdout.contains("adopting 28"),
        "{}{}",
        init.stdout,
        init.stderr
    );
    std::fs::remove_file(env.vault.join("_librarian/sessions/2026-02-27.md")).unwrap();
    let all = env.rutter(&["recent", "--all"]);
    let every = env.rutter(&["recent", "-n", "100000"]);
    assert_eq!(all.stdout, every.stdout);
    assert_eq!(all.stderr, every.stderr);
    assert_eq!(all.stdout.matches(" — ").count(), 56, "{}", all.stdout);
    assert!(
        all.stdout.contains("(changed since capture)"),
        "{}",
        all.stdout
    );
    assert!(all.stdout.contains("git rutter restore"), "{}", all.stdout);
}

/// Issue 20: `reindex --force` replaces only an index git-rutter made. The TypeScript version's
/// `librarian.db` behind `LIBRARIAN_DB_PATH` (it has a `meta` table of its own) is never
/// written, and the message says to unset the variable.
#[test]
fn reindex_force_never_writes_a_database_it_did_not_make() {
    let env = Env::git_vault();
    let db = env.root().join("ts/data/librarian.db");
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch(
            "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT); INSERT INTO meta VALUES('fingerprint', 'abc');
             CREATE TABLE notes(path TEXT, body TEXT);",
        )
        .unwrap();
    }
    let before = std::fs::read(&db).unwrap();
    for args in [&["reindex"][..], &["reindex", "--force"]] {
        let r = run_with_stdin(env.cmd().env("LIBRARIAN_DB_PATH", &db).args(args), b"");
        assert_ne!(r.code, 0, "{args:?}: {}{}", r.stdout, r.stderr);
        assert!(
            r.stderr.contains("is not an index git-rutter made")
                && r.stderr.contains("Unset LIBRARIAN_DB_PATH"),
            "{args:?}: {}",
            r.stderr
        );
        assert_eq!(
            std::fs::read(&db).unwrap(),
            before,
            "{args:?}: the TypeScript database is untouched"
        );
    }
    // An index git-rutter made there is replaced by --force as before.
    let ours = env.root().join("ours.sqlite");
    let r = run_with_stdin(
        env.cmd().env("LIBRARIAN_DB_PATH", &ours).arg("reindex"),
        b"",
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = run_with_stdin(
        env.cmd()
            .env("LIBRARIAN_DB_PATH", &ours)
            .args(["reindex", "--force"]),
        b"",
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
}

/// Issue 23: past its first screen, `recent --all` takes a cited note's hash from the index once
/// the freshness check has run, instead of reading the note. The marks agree with `recent -n`,
/// which reads every note: none while the note is as cited, `(changed since capture)` on every
/// ref right after an edit in place the index has not seen yet.
#[test]
fn recent_all_marks_from_the_fresh_index_what_reading_each_note_marks() {
    let env = Env::bare();
    let blue = "# Blue\n\nBlue now.\n";
    env.write("Notes/blue.md", blue);
    let hash = {
        use sha2::Digest;
        let digest = sha2::Sha256::digest(blue.as_bytes());
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        format!("sha256:{hex}")
    };
    env.git(&["init", "-q", "-b", "main"]);
    for d in 1..=28 {
        let day = format!("2026-02-{d:02}");
        let mut text = format!(
            "---\ncollection: librarian.sessions\nschema: session-record@1\nday: '{day}'\nsessions:\n"
        );
        text.push_str(&format!(
            "  - id: {}T090000000Z\n    session_id: s-{d}\n    time: '{day}T09:00:00.000Z'\n    summary: Step of day {d}.\n    refs:\n      - path: Notes/blue.md\n        hash: '{hash}'\n",
            day.replace('-', "")
        ));
        text.push_str("---\n");
        env.write(&format!("_librarian/sessions/{day}.md"), &text);
    }
    assert_eq!(env.rutter(&["init"]).code, 0);
    assert_eq!(env.rutter(&["reindex"]).code, 0);
    let check = |changed: usize| {
        // `--all --json` takes the hashes from the index made fresh too (run first, so no
        // other run has freshened it), and marks the same.
        let all_json = env.rutter(&["recent", "--all", "--json"]);
        assert_eq!(
            all_json.stdout.matches("(changed since capture)").count(),
            changed,
            "{}",
            all_json.stdout
        );
        let every_json = env.rutter(&["recent", "-n", "100000", "--json"]);
        assert_eq!(all_json.stdout, every_json.stdout);
        let all = env.rutter(&["recent", "--all"]);
        let every = env.rutter(&["recent", "-n", "100000"]);
        assert_eq!(all.code, 0, "{}", all.stderr);
        assert_eq!(all.stdout, every.stdout);
        assert_eq!(all.stdout.matches(" — ").count(), 28, "{}", all.stdout);
        assert_eq!(
            all.stdout.matches("(changed since capture)").count(),
            changed,
            "{}",
            all.stdout
        );
    };
    check(0);
    // An edit in place: the index still holds the cited hash until the check finds the stamp.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(env.vault.join("Notes/blue.md"))
        .unwrap();
    std::io::Write::write_all(&mut f, b"Edited.\n").unwrap();
    drop(f);
    check(28);
}

/// `recent --all` takes a cited note's hash from the fresh index only for a note the index
/// holds (reached through real folders); a path through a linked folder, a symlinked note
/// inside or outside the vault, and a note gone read as reading each note (`recent -n`) reads
/// them.
#[test]
fn recent_all_resolves_what_the_index_does_not_hold_as_reading_each_note_does() {
    use std::os::unix::fs::symlink;
    let env = Env::bare();
    let outside = tempfile::tempdir().unwrap();
    let blue = "# Blue\n\nBlue now.\n";
    env.write("Notes/blue.md", blue);
    std::fs::write(outside.path().join("out.md"), blue).unwrap();
    symlink(outside.path(), env.vault.join("Linked")).unwrap();
    symlink("blue.md", env.vault.join("Notes/alias.md")).unwrap();
    symlink(
        outside.path().join("out.md"),
        env.vault.join("Notes/away.md"),
    )
    .unwrap();
    let hash = {
        use sha2::Digest;
        let digest = sha2::Sha256::digest(blue.as_bytes());
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        format!("sha256:{hex}")
    };
    let cited = [
        "Notes/blue.md",
        "Linked/out.md",
        "Notes/alias.md",
        "Notes/away.md",
        "Notes/gone.md",
    ];
    env.git(&["init", "-q", "-b", "main"]);
    for (d, path) in cited.iter().enumerate() {
        let day = format!("2026-02-{:02}", d + 1);
        let text = format!(
            "---\ncollection: librarian.sessions\nschema: session-record@1\nday: '{day}'\nsessions:\n  - id: {}T090000000Z\n    session_id: s-{d}\n    time: '{day}T09:00:00.000Z'\n    summary: Step citing {path}.\n    refs:\n      - path: {path}\n        hash: '{hash}'\n---\n",
            day.replace('-', "")
        );
        env.write(&format!("_librarian/sessions/{day}.md"), &text);
    }
    assert_eq!(env.rutter(&["init"]).code, 0);
    assert_eq!(env.rutter(&["reindex"]).code, 0);
    let all = env.rutter(&["recent", "--all"]);
    let every = env.rutter(&["recent", "-n", "100000"]);
    assert_eq!(all.code, 0, "{}", all.stderr);
    assert_eq!(all.stdout, every.stdout);
    let all_json = env.rutter(&["recent", "--all", "--json"]);
    let every_json = env.rutter(&["recent", "-n", "100000", "--json"]);
    assert_eq!(all_json.code, 0, "{}", all_json.stderr);
    assert_eq!(all_json.stdout, every_json.stdout);
    assert_eq!(
        all_json
            .stdout
            .matches("(renamed to Notes/blue.md)")
            .count(),
        3,
        "{}",
        all_json.stdout
    );
    let shown = |path: &str| {
        let at = all
            .stdout
            .find(&format!("{path}@"))
            .unwrap_or_else(|| panic!("{path}: {}", all.stdout));
        all.stdout[at..].lines().next().unwrap().to_string()
    };
    for inside in ["Notes/blue.md", "Notes/alias.md"] {
        assert!(!shown(inside).contains(['(', '[']), "{}", shown(inside));
    }
    // Not inside the vault: resolved through the identity projection (here a rename to the
    // note that holds the cited bytes), never shown as the note it cites.
    for away in ["Linked/out.md", "Notes/away.md", "Notes/gone.md"] {
        assert!(
            shown(away).ends_with("(renamed to Notes/blue.md)"),
            "{}",
            shown(away)
        );
    }
}

/// A note larger than FTS5's snippet bound (spec/index.md, "Search"), every line of it full of
/// the query's words (a log export): FTS5's `snippet()` took minutes on such a note (its time
/// grows with the square of the matches), so its snippet is made from its text, and the search
/// answers at once, with the window and the marks; an ordinary note keeps FTS5's snippet, and
/// the some-of-the-words answer takes the same way.
#[test]
fn a_large_note_full_of_matches_is_answered_at_once_with_its_own_snippet() {
    let env = notes_vault();
    let line = "2026-11-01T00:00:00Z INFO request ledger status=200 garden entry ms=5\n";
    env.write(
        "Logs/export.md",
        &format!("# Export\n\n{}", line.repeat(60_000)),
    );
    let started = std::time::Instant::now();
    let mut c = env.cmd();
    c.args(["search", "--no-pager", "garden", "ledger", "entry"]);
    let child = c
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait_with_output().unwrap()));
    let out = rx
        .recv_timeout(std::time::Duration::from_secs(120))
        .unwrap_or_else(|_| panic!("search still running after {:?}", started.elapsed()));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains(
            "   Logs/export.md\n   …«ledger» status=200 «garden» «entry» ms=5 2026-11-01T00:00:00Z INFO request…"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("   # «Garden» 0 The «garden» «ledger» «entry» 0."),
        "an ordinary note keeps FTS5's snippet: {stdout}"
    );
    let some = search(&env, &["garden", "ledger", "zebra"]);
    assert_eq!(some.code, 1, "no note holds every word: {}", some.stderr);
    assert!(
        some.stdout
            .contains("   Logs/export.md\n   …«ledger» status=200 «garden» entry"),
        "{}",
        some.stdout
    );
}
