//! Secrets never settle in the record (issue 35, DESIGN invariant 12): a credential in what a
//! capture stores is masked before the first write (day file, journal, commit), the hook and
//! the hook-run log say what was masked and never the secret, and a cited note holding one, or
//! marked private, is cited by hash but never copied into the ref.

use crate::common;
use common::*;
use serde_json::json;

/// The trial's made-up token (new-user trial of 2026-12-04, finding 5), in a Codex payload.
const TOKEN: &str = "nfp_AbC123SecretTokenValue9999";

fn codex_turn(env: &Env, summary: &str, refs: &[&str]) -> Run {
    let directive = json!({ "summary": summary, "refs": refs });
    let payload = json!({
        "session_id": "s1",
        "cwd": env.vault,
        "hook_event_name": "Stop",
        "last_assistant_message": format!("Done.\n\n<!-- librarian-session {directive} -->"),
    });
    env.capture(payload.to_string().as_bytes(), &["--client", "codex"])
}

/// Everything under `.git/` and `_librarian/` of the vault, and every object git holds.
fn anywhere(env: &Env, needle: &str) -> Vec<String> {
    let mut hits = Vec::new();
    let mut todo = vec![env.vault.join(".git"), env.vault.join("_librarian")];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            let meta = std::fs::symlink_metadata(&p).unwrap();
            if meta.is_dir() {
                todo.push(p);
            } else if String::from_utf8_lossy(&std::fs::read(&p).unwrap()).contains(needle) {
                hits.push(p.display().to_string());
            }
        }
    }
    let out = std::process::Command::new("git")
        .args(["cat-file", "--batch-all-objects", "--batch"])
        .current_dir(&env.vault)
        .output()
        .unwrap();
    if String::from_utf8_lossy(&out.stdout).contains(needle) {
        hits.push("an object".into());
    }
    hits
}

#[test]
fn a_token_in_a_summary_is_masked_before_anything_is_written() {
    let env = Env::git_vault();
    let r = codex_turn(
        &env,
        &format!("Set the Netlify deploy token to {TOKEN} in the CI settings."),
        &[],
    );
    assert_eq!((r.code, r.stdout.as_str()), (0, ""));
    assert!(
        r.stderr
            .contains("masked a credential in the entry (netlify-token)"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains(TOKEN), "the hook never says the secret");
    let e = &env.entries()[0];
    assert_eq!(
        e["summary"],
        "Set the Netlify deploy token to [redacted:netlify-token] in the CI settings."
    );
    assert_eq!(e["masked"], json!(["netlify-token"]));
    assert_eq!(e["client"], "codex");
    assert_eq!(anywhere(&env, TOKEN), Vec::<String>::new());
    let log = std::fs::read_to_string(env.vault.join(".git/rutter/hook-runs.jsonl")).unwrap();
    let last: serde_json::Value = serde_json::from_str(log.lines().last().unwrap()).unwrap();
    assert_eq!(last["masked"], json!(["netlify-token"]), "{log}");
    // The journal holds the masked line too: a capture that could not commit keeps it there.
    let mut c = env.cmd();
    c.env("RUTTER_LOCK_WAIT_MS", "50").args([
        "capture",
        "--summary",
        "Rotated: the old key was ghp_0123456789abcdefghijABCDEFGHIJ012345.",
        "--session",
        "s2",
    ]);
    let _lock = LockHolder::hold(&env.vault.join(".git/rutter/lock"), 5);
    let held = run_with_stdin(&mut c, b"");
    assert!(
        held.stderr.contains("masked a credential"),
        "{}",
        held.stderr
    );
    assert_eq!(anywhere(&env, "ghp_0123456789abcdef"), Vec::<String>::new());
}

#[test]
fn a_cited_note_holding_a_secret_or_marked_private_is_cited_but_never_copied() {
    let env = Env::git_vault();
    env.write(
        "Ops/keys.md",
        "# Keys\n\nThe backup user is AKIAZ7Q3MXN2P5RT6WYB.\n",
    );
    env.write("Ops/plan.md", "---\nrutter: private\n---\n# Plan\n");
    env.write(".rutterignore", "# never copied\nJournal/\n");
    env.write("Journal/2026-12-01.md", "# A day\n");
    env.write("Notes/c.md", "# Plain\n");
    let r = codex_turn(
        &env,
        "Moved the backups to the new bucket.",
        &[
            "Ops/keys.md",
            "Ops/plan.md",
            "Journal/2026-12-01.md",
            "Notes/c.md",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let refs = env.entries()[0]["refs"].as_array().unwrap().clone();
    let withheld: Vec<_> = refs.iter().map(|r| r["withheld"].clone()).collect();
    assert_eq!(
        withheld,
        [
            json!("secret: aws-access-key-id"),
            json!("private"),
            json!("private"),
            serde_json::Value::Null
        ]
    );
    let tree = env.git(&["ls-tree", "-r", "--name-only", "refs/rutter/records"]);
    let copies = tree.lines().filter(|l| l.starts_with("cited/")).count();
    assert_eq!(copies, 1, "only the plain note is copied: {tree}");
    assert_eq!(anywhere(&env, "AKIAZ7Q3MXN2P5RT6WYB"), Vec::<String>::new());
    // Cited by hash all the same: an edit shows in recall and verify --notes.
    env.write("Ops/keys.md", "# Keys\n\nRotated.\n");
    let recent = env.rutter(&["recent"]).stdout;
    assert!(recent.contains("Ops/keys.md@sha256:"), "{recent}");
    assert!(recent.contains("(changed since capture)"), "{recent}");
    let p = env.rutter(&["cited-by", "-p", "Ops/keys.md"]);
    assert!(
        p.stdout.contains("(No copy of the cited version was kept: the note held a credential (aws-access-key-id) when it was cited.)"),
        "{}",
        p.stdout
    );
    let v = env.rutter(&["verify", "--notes"]);
    assert!(
        v.stdout
            .contains("no copy was kept: the note held a credential (aws-access-key-id)"),
        "{}",
        v.stdout
    );
}
