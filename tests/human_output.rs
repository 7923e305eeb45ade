//! Snapshot tests of the human output of `recent`, `log`, `verify`, `status`, `diff`, `retract`,
//! `sync`, `cited-by`, `timeline` and `context`: stdout, stderr and exit status pinned together, so every text spec/
//! spells out is checked as the user sees it. Review a change with `cargo insta review` (or
//! `INSTA_UPDATE=always cargo test --test tests human_output::` and read the `.snap` diffs).
//!
//! Most run in-process through a `Ui` writing to buffers (`Env::here`); the few that depend on
//! their own process's HOME (the hook-run log `status` reads) run the binary (`Env::spawned`).
//! Captures that set a vault up go through the binary, each at its own pinned time.

use crate::common;

use common::{directive, run_with_stdin, Env};

mod cited_by;
mod context;
mod diff;
mod log;
mod recent;
mod retract;
mod status;
mod sync;
mod timeline;
mod verify;

/// A vault with two sessions: `S` (two manual steps on 2026-11-30, the second citing a note) and
/// `T` (one step Claude Code's Stop hook captured from its transcript on 2026-12-01, in the
/// project `myproj`).
pub fn two_sessions() -> Env {
    let env = Env::snap_vault();
    for (ts, summary, refs) in [
        (
            "2026-11-30T10:00:00.000Z",
            "Chose SQLite for the index.",
            &[][..],
        ),
        (
            "2026-11-30T10:20:00.000Z",
            "Kept the schema in one file.",
            &["Notes/a.md"][..],
        ),
    ] {
        let r = env.capture_at(ts, summary, refs);
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    let payload = env.transcript_payload(
        "t",
        "T",
        &directive("Moved the docs to one folder.", &["Notes/b.md"]),
    );
    let mut c = env.cmd();
    c.env("RUTTER_TIMESTAMP", "2026-12-01T08:00:00.000Z")
        .args(["capture", "--client", "claude"]);
    let r = run_with_stdin(&mut c, &payload);
    assert_eq!(r.code, 0, "{}", r.stderr);
    env
}

/// `two_sessions` with a line typed by hand at the end of 2026-11-30's day file: a copy of the
/// second entry with another summary and id, which no capture wrote.
pub fn with_a_hand_typed_line() -> Env {
    let env = two_sessions();
    let day = "_librarian/sessions/2026-11-30.md";
    let text = env.read(day);
    let line = text
        .lines()
        .find(|l| l.contains("Kept the schema"))
        .unwrap()
        .replace("Kept the schema in one file.", "Typed by hand.")
        .replace("20261130T102000000Z", "20261130T113000000Z");
    env.write(day, &format!("{text}{line}\n"));
    env
}
