//! The design essay's example replayed: renames followed by hash, edited renames offered with
//! git's evidence and confirmed by a person, confirmations sticky against later matches.

use crate::common;
use common::*;

const CADENCE: &str = "# Publishing cadence\n\nA fictional draft. Three options:\n\n1. Stay weekly, with a shorter roundup.\n2. Go fortnightly, one long essay per issue.\n3. Go monthly, with a digest.\n\nEach has costs for readers and for the writer.\n";

fn essay_vault() -> Env {
    let env = Env::git_vault();
    env.write("Notes/cadence.md", CADENCE);
    env.git(&["add", "Notes"]);
    env.git(&["commit", "-qm", "cadence note"]);
    let r = env.rutter(&[
        "capture",
        "--summary",
        "Decided to go fortnightly.",
        "--ref",
        "Notes/a.md",
        "--ref",
        "Notes/cadence.md",
        "--session",
        "S",
    ]);
    assert!(r.stderr.contains("committed"), "{}", r.stderr);
    env
}

fn recent(env: &Env) -> String {
    let r = env.rutter(&["recent"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    r.stdout
}

fn reindex(env: &Env) -> Run {
    let r = env.rutter(&["reindex"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    r
}

fn edit_and_move_cadence(env: &Env) {
    env.write(
        "Notes/cadence-decision.md",
        &format!("{CADENCE}\nDecision: going fortnightly from November.\n"),
    );
    std::fs::remove_file(env.vault.join("Notes/cadence.md")).unwrap();
}

#[test]
fn an_unedited_rename_is_bound_by_its_hash() {
    let env = essay_vault();
    std::fs::create_dir_all(env.vault.join("Research")).unwrap();
    std::fs::rename(
        env.vault.join("Notes/a.md"),
        env.vault.join("Research/a-renamed.md"),
    )
    .unwrap();
    let r = reindex(&env);
    assert!(
        r.stderr.contains(
            "identity pass: 1 dead ref(s) checked, 1 bound, 0 unresolved, 1 ledger entry appended"
        ),
        "{}",
        r.stderr
    );
    assert!(
        recent(&env).contains("Notes/a.md@sha256:")
            && recent(&env).contains("(renamed to Research/a-renamed.md)")
    );
    let again = reindex(&env);
    assert!(
        again.stderr.contains("0 ledger entries appended"),
        "a second reindex appends nothing: {}",
        again.stderr
    );
    let log = env.git(&["log", "--format=%s", "refs/rutter/records"]);
    assert!(log.starts_with("rutter: identity\n"), "{log}");
    let ledger = env.git(&["show", "refs/rutter/records:_librarian/note-identity.md"]);
    assert_eq!(ledger, env.read("_librarian/note-identity.md"));
    assert!(ledger.contains("exact-hash: Notes/a.md -> Research/a-renamed.md"));
}

/// `recent` right after a rename, with no `reindex`, `search` or `show` between: the cited path
/// is gone where the index last saw a note, so `recent` makes the notes fresh first and shows
/// the rename (it read `[UNRESOLVED -- candidates: none]` until another command refreshed).
#[test]
fn recent_right_after_a_rename_follows_it() {
    let env = essay_vault();
    assert!(!recent(&env).contains("renamed"), "the index is built");
    env.git(&["mv", "Notes/a.md", "Notes/a-moved.md"]);
    let shown = recent(&env);
    assert!(shown.contains("(renamed to Notes/a-moved.md)"), "{shown}");
    assert!(!shown.contains("UNRESOLVED"), "{shown}");
    // The note it became deleted in turn: the rename is said, and that it is gone.
    std::fs::remove_file(env.vault.join("Notes/a-moved.md")).unwrap();
    let shown = recent(&env);
    assert!(
        shown.contains("(renamed to Notes/a-moved.md; deleted since)"),
        "{shown}"
    );
}

/// The new-user trial of 2026-12-04, finding 1: a note renamed unedited (bound by its hash) and
/// then edited reads as renamed *and* changed in every view, not as a mere rename.
#[test]
fn a_note_renamed_and_then_edited_shows_both_everywhere() {
    let env = essay_vault();
    env.git(&["mv", "Notes/cadence.md", "Notes/cadence-bins.md"]);
    env.git(&["commit", "-qm", "rename"]);
    reindex(&env);
    let renamed = "(renamed to Notes/cadence-bins.md)";
    assert!(recent(&env).contains(renamed), "{}", recent(&env));
    let quiet = env.rutter(&["verify", "--notes", "--json"]);
    assert_eq!(
        finding_kinds(&quiet.stdout),
        Vec::<String>::new(),
        "unchanged: nothing to say"
    );
    env.write(
        "Notes/cadence-bins.md",
        &format!("{CADENCE}\nDecision: fortnightly.\n"),
    );
    let both = "(renamed to Notes/cadence-bins.md; changed since capture)";
    assert!(recent(&env).contains(both), "{}", recent(&env));
    let all = env.rutter(&["recent", "--all"]);
    assert!(all.stdout.contains(both), "{}", all.stdout);
    let page = env.rutter(&["timeline"]);
    assert!(
        page.stdout.contains(both),
        "the page's cited note carries it"
    );
    let v = env.rutter(&["verify", "--notes", "--json"]);
    assert_eq!(v.code, 0, "a changed note is information: {}", v.stdout);
    let report: common::json::Verify = common::json::decode(&v.stdout);
    let f = &report.findings[0];
    assert_eq!(f.kind, "note-changed", "{report:#?}");
    assert_eq!(f.path.as_deref(), Some("Notes/cadence-bins.md"));
    assert!(
        f.detail.starts_with(
            "Notes/cadence.md was renamed to Notes/cadence-bins.md and changed since entry "
        ),
        "{f:?}"
    );
    assert!(
        f.diff
            .as_deref()
            .unwrap()
            .contains("+Decision: fortnightly."),
        "against the kept copy: {f:?}"
    );
}

#[test]
fn edited_and_renamed_in_one_commit_is_a_git_candidate() {
    let env = essay_vault();
    edit_and_move_cadence(&env);
    env.git(&["add", "-A", "Notes"]);
    env.git(&["commit", "-qm", "settle cadence"]);
    let short = env.git(&["rev-parse", "--short=7", "HEAD"]);
    reindex(&env);
    let out = recent(&env);
    let want = format!(
        "[UNRESOLVED -- candidates: Notes/cadence-decision.md (git: renamed in {}, edited)]",
        short.trim()
    );
    assert!(out.contains(&want), "{out}");
}

#[test]
fn edited_then_renamed_in_two_commits_is_a_git_candidate() {
    let env = essay_vault();
    env.write(
        "Notes/cadence.md",
        &format!("{CADENCE}\nDecision: going fortnightly from November.\n"),
    );
    env.git(&["commit", "-qam", "decide"]);
    env.git(&["mv", "Notes/cadence.md", "Notes/cadence-decision.md"]);
    env.git(&["commit", "-qm", "rename"]);
    let short = env.git(&["rev-parse", "--short=7", "HEAD"]);
    reindex(&env);
    let out = recent(&env);
    assert!(
        out.contains(&format!(
            "Notes/cadence-decision.md (git: renamed in {}, edited)",
            short.trim()
        )),
        "{out}"
    );
}

#[test]
fn edited_and_renamed_but_never_committed_is_a_git_candidate() {
    let env = essay_vault();
    edit_and_move_cadence(&env);
    reindex(&env);
    let out = recent(&env);
    assert!(out.contains("[UNRESOLVED -- candidates: Notes/cadence-decision.md (git: renamed in working tree, edited)]"), "{out}");
}

#[test]
fn a_confirmation_binds_at_once_and_survives_a_later_exact_match() {
    let env = essay_vault();
    edit_and_move_cadence(&env);
    reindex(&env);
    let r = env.rutter(&[
        "identity",
        "confirm",
        "Notes/cadence.md",
        "Notes/cadence-decision.md",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr
            .starts_with("confirmed: Notes/cadence.md -> Notes/cadence-decision.md (sha256:"),
        "{}",
        r.stderr
    );
    assert!(
        recent(&env).contains("(renamed to Notes/cadence-decision.md; changed since capture)"),
        "effective without a reindex, and the confirmed note was edited"
    );
    let again = env.rutter(&[
        "identity",
        "confirm",
        "Notes/cadence.md",
        "Notes/cadence-decision.md",
    ]);
    assert!(
        again.stderr.starts_with("already confirmed: "),
        "{}",
        again.stderr
    );
    env.write("Archive/cadence-copy.md", CADENCE);
    reindex(&env);
    let out = recent(&env);
    assert!(
        out.contains(
            "(confirmed Notes/cadence-decision.md; the hash now matches Archive/cadence-copy.md)"
        ),
        "{out}"
    );
    let ledger = env.read("_librarian/note-identity.md");
    assert_eq!(ledger.matches("confirmed:").count(), 1, "{ledger}");
    assert!(
        !ledger.contains("Archive/cadence-copy.md"),
        "a confirmed binding is never overridden"
    );
}

#[test]
fn confirm_refuses_what_it_cannot_bind() {
    let env = essay_vault();
    let usage = env.rutter(&["identity", "confirm", "only-one"]);
    assert_eq!(usage.code, 1);
    assert!(usage
        .stderr
        .starts_with("usage: git rutter identity confirm"));
    let live = env.rutter(&["identity", "confirm", "Notes/a.md", "Notes/b.md"]);
    assert_eq!(live.code, 1);
    assert!(
        live.stderr
            .contains("no unresolved reference recorded for \"Notes/a.md\""),
        "{}",
        live.stderr
    );
    edit_and_move_cadence(&env);
    let bad_hash = env.rutter(&[
        "identity",
        "confirm",
        "Notes/cadence.md",
        "sha256:00",
        "Notes/cadence-decision.md",
    ]);
    assert!(
        bad_hash
            .stderr
            .contains("carries hash sha256:00. Recorded unresolved hash(es): sha256:"),
        "{}",
        bad_hash.stderr
    );
    let not_note = env.rutter(&[
        "identity",
        "confirm",
        "Notes/cadence.md",
        "Notes/missing.md",
    ]);
    assert!(
        not_note
            .stderr
            .contains("does not resolve to a current vault note"),
        "{}",
        not_note.stderr
    );
    let invalid = env.rutter(&["identity", "confirm", "Notes/cadence.md", "../outside.md"]);
    assert!(
        invalid
            .stderr
            .contains("is not a valid vault-relative path"),
        "{}",
        invalid.stderr
    );
    assert!(
        !env.vault.join("_librarian/note-identity.md").exists(),
        "nothing appended on refusal"
    );
}

#[test]
fn a_note_changed_in_place_is_flagged() {
    let env = essay_vault();
    env.write("Notes/a.md", "# Alpha\n\nThe alpha note, now rewritten.\n");
    let out = recent(&env);
    assert!(
        out.contains("Notes/a.md@sha256:") && out.contains("(changed since capture)"),
        "{out}"
    );
    assert!(
        !out.contains("Notes/cadence.md@sha256:")
            || !out
                .lines()
                .any(|l| l.contains("cadence.md") && l.contains("changed"))
    );
}

#[test]
fn duplicates_stay_unresolved_with_every_candidate() {
    let env = essay_vault();
    std::fs::rename(env.vault.join("Notes/a.md"), env.vault.join("Notes/a1.md")).unwrap();
    env.write("Notes/a2.md", NOTE_A);
    let r = reindex(&env);
    assert!(r.stderr.contains("0 bound, 1 unresolved"), "{}", r.stderr);
    let out = recent(&env);
    assert!(
        out.contains("[UNRESOLVED -- candidates: Notes/a1.md"),
        "{out}"
    );
    assert!(out.contains("Notes/a2.md"), "{out}");
}

/// A pass that could not append its exact-hash binding (the capture lock was busy) runs again
/// on the next refresh, though nothing else changed, and the binding reaches the ledger.
#[test]
fn a_binding_the_lock_kept_out_of_the_ledger_is_appended_next_time() {
    let env = essay_vault();
    std::fs::create_dir_all(env.vault.join("Research")).unwrap();
    std::fs::rename(
        env.vault.join("Notes/a.md"),
        env.vault.join("Research/a-renamed.md"),
    )
    .unwrap();
    let held =
        rutter::lock::Lock::acquire(&env.vault.join(".git/rutter"), std::time::Duration::ZERO)
            .unwrap();
    let busy: Run = env
        .cmd()
        .env("RUTTER_LOCK_WAIT_MS", "50")
        .arg("reindex")
        .output()
        .unwrap()
        .into();
    assert!(
        busy.stderr.contains("0 ledger entries appended"),
        "{}",
        busy.stderr
    );
    assert!(!env
        .read("_librarian/note-identity.md")
        .contains("a-renamed"));
    drop(held);
    let r = reindex(&env);
    assert!(
        r.stderr.contains("1 ledger entry appended"),
        "the pass runs again: {}",
        r.stderr
    );
    assert!(env
        .read("_librarian/note-identity.md")
        .contains("exact-hash: Notes/a.md -> Research/a-renamed.md"));
}
