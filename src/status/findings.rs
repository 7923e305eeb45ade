//! What is wrong, each with what to do (spec/status.md, "Findings"). A finding is something
//! that stops captures or recall from working as the user expects and needs the user's action
//! to mend; what mends itself (an index behind the notes, one rebuilt at its next use) and
//! everything else `status` shows is information, so a healthy vault exits 0 however its notes
//! changed. The kinds are stable names for scripts.

use super::clients::ClientState;
use super::{ClientInfo, Status};
use crate::capture::runlog::{Kind, Run};
use crate::clients;
use crate::vault::{self, VaultSource};
use serde::Serialize;
use std::path::Path;

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Finding {
    /// A stable name: `no-vault`, `hook-missing`, `last-run-failed`, …
    pub kind: &'static str,
    /// The client it concerns, if one.
    pub client: Option<&'static str>,
    /// What is wrong, one sentence.
    pub message: String,
    /// What to do about it.
    pub todo: String,
}

fn finding(kind: &'static str, message: String, todo: String) -> Finding {
    Finding {
        kind,
        client: None,
        message,
        todo,
    }
}

/// Hook runs newer than this count as evidence that a hook is registered where `status` does
/// not look (a Claude Code plugin, a project's own settings).
const RECENT_RUN_DAYS: i64 = 7;

/// Every finding, in the order the sections are shown.
pub(crate) fn all(s: &Status, runs: &[Run], inputs: &super::Inputs) -> Vec<Finding> {
    let mut out = Vec::new();
    vault(s, &mut out);
    record(s, inputs, &mut out);
    index(s, &mut out);
    let since = inputs.now.plus_days(-RECENT_RUN_DAYS).iso();
    let hooked_elsewhere = runs.iter().any(|r| r.client.is_some() && r.time >= since);
    hooks(s, hooked_elsewhere, &mut out);
    last_runs(s, runs, &inputs.clock, &mut out);
    out
}

fn vault(s: &Status, out: &mut Vec<Finding>) {
    if let Some(e) = &s.vault_error {
        out.push(finding(
            "no-vault",
            format!("No vault: {e}."),
            s.vault_hint.clone().unwrap_or_else(|| {
                "Run `git rutter init --global` in the folder that holds your notes, or pass \
                 --vault PATH."
                    .into()
            }),
        ));
    }
    let Some(v) = &s.vault else { return };
    if let Some(dir) = &v.state_blocked {
        let shown = crate::records::text::field_safe(dir);
        out.push(finding(
            "state-unusable",
            format!("{shown} is not a folder: git-rutter keeps its index, pending journal and capture lock there, so nothing can be searched or committed."),
            {
                let quoted = |p: &str| crate::records::text::field_safe(&crate::argv::quote(p)).into_owned();
                format!("Move it away (`mv {} {}`), then run `git rutter status` again.", quoted(dir), quoted(&format!("{dir}.moved")))
            },
        ));
    }
    if !v.git {
        out.push(finding(
            "not-git",
            format!("The vault {} is not a git repository: captures land in the day files but have no history to verify.", v.path),
            format!("Run `git rutter init {}`.", v.path),
        ));
    }
    if let Some(ix) = &s.index {
        if ix.vault_notes == 0 {
            out.push(finding(
                "no-notes",
                format!("The vault {} holds no markdown notes: probably the wrong folder (the TypeScript version reported \"0 notes\" here without an error).", v.path),
                "Point the vault at the folder that holds your notes: `git rutter init --global` \
                 in it, or fix LIBRARIAN_VAULT_PATH or `git config rutter.vault`."
                    .into(),
            ));
        }
    }
}

fn record(s: &Status, inputs: &super::Inputs, out: &mut Vec<Finding>) {
    let (Some(v), Some(r)) = (&s.vault, &s.record) else {
        return;
    };
    if let Some(e) = &r.error {
        out.push(finding(
            "record-unreadable",
            format!("The record in {} cannot be read: {e}.", v.path),
            "Run `git rutter verify` to see what is wrong with the repository.".into(),
        ));
        return;
    }
    aside(r, out);
    working(r, out);
    if !r.ref_exists {
        out.push(finding(
            "no-record-ref",
            format!(
                "{} has no refs/rutter/records yet: captures are not committed.",
                v.path
            ),
            format!("Run `git rutter init {}`.", v.path),
        ));
    }
    if let Some(y) = &r.sync {
        sync(y, &inputs.clock, out);
        stuck(y, inputs, out);
    }
    if let (Some(raw), Some(why)) = (&r.watch, &r.watch_error) {
        out.push(finding(
            "watch-invalid",
            format!("git config rutter.watch is {raw:?}, which is no idle time ({why}); commands start no watcher."),
            {
                let idle = crate::clock::show_interval(crate::setup::settings::WATCH_DEFAULT_IDLE);
                format!("Set it with `git config rutter.watch {idle}` (s, m, h or d; true is {idle}), or turn it off with `git config --unset rutter.watch`.")
            },
        ));
    }
    if let Some(raw) = &r.sign_invalid {
        out.push(finding(
            "sign-invalid",
            format!("git config rutter.sign is {raw:?}, which git reads as no boolean; record commits are not signed."),
            "Set it with `git config rutter.sign true` (or false), or unset it with `git config --unset rutter.sign`.".into(),
        ));
    }
    if r.pending + r.pending_unreadable > 0 {
        let n = r.pending + r.pending_unreadable;
        let noun = if n == 1 { "line waits" } else { "lines wait" };
        out.push(finding(
            "pending",
            format!(
                "{n} captured {noun} to be committed (no commit took it when captured: the lock \
                 was held, the commit failed, or the day file could not take the line)."
            ),
            "Run `git rutter commit`: it says what stops it. If it names a `.lock` file and no \
             git command is running, delete that file first; a day file it cannot write, make \
             writable."
                .into(),
        ));
    }
}

/// Captured lines written aside: in no day file, so in no recall and no commit, until placed.
fn aside(r: &super::RecordInfo, out: &mut Vec<Finding>) {
    if r.aside == 0 {
        return;
    }
    let n = r.aside;
    let (noun, its, it) = match n {
        1 => ("line waits", "its", "it"),
        _ => ("lines wait", "their", "them"),
    };
    out.push(finding(
        "aside",
        format!(
            "{n} captured {noun} aside (neither {its} day file nor the pending journal could take {it} when captured); recall and the record do not have {it} yet."
        ),
        "Run `git rutter commit` (the next capture does it too): it moves what waits aside into the day files and commits it, or says what still stops it.".into(),
    ));
}

/// Committed record files that differ from their commit in the working tree: what `verify`
/// would report now, so a check that runs `status` sees it too.
fn working(r: &super::RecordInfo, out: &mut Vec<Finding>) {
    let Some(first) = r.working_changes.first() else {
        return;
    };
    let n = files_changed(r);
    let named = match n {
        1 => format!("{} ({})", first.path, working_kind(first.kind)),
        _ => format!(
            "{} ({}) and {} more",
            first.path,
            working_kind(first.kind),
            n - 1
        ),
    };
    out.push(finding(
        "record-files-changed",
        format!("The working tree's record files differ from their commit: {named}; the record itself is intact."),
        "Run `git rutter verify` to see each finding; `git rutter restore` puts the committed versions back (a changed file is moved aside first), or `git rutter verify --ack ID --reason TEXT` keeps a change you meant.".into(),
    ));
}

/// How many record files [`working`] names (a file can differ in several ways).
pub(crate) fn files_changed(r: &super::RecordInfo) -> usize {
    let mut paths: Vec<&str> = r.working_changes.iter().map(|c| c.path.as_str()).collect();
    paths.sort_unstable();
    paths.dedup();
    paths.len()
}

/// How a record file differs from its commit, in words, by `verify`'s kind.
fn working_kind(kind: &str) -> &'static str {
    match kind {
        "deleted" => "deleted",
        "edited" => "edited after commit",
        "truncated" => "lost its tail",
        "symlink" => "replaced by a link or something that is not a file",
        "unverified" => "holds a line no capture wrote",
        "unparseable" => "holds a line that is no record entry",
        _ => "unreadable as a record",
    }
}

/// A sync remote that is gone or not set up; being behind is not a finding (sync when you like).
fn sync(y: &super::SyncInfo, clock: &crate::clock::Clock, out: &mut Vec<Finding>) {
    let remote = &y.remote;
    if y.url.is_none() {
        let fix = match y.set_up_remotes.first() {
            Some(other) => crate::sync::renamed_hint(&y.set_up_remotes, other),
            None => format!(
                "Add it with `git remote add {remote} URL` and run `git rutter sync --setup {remote}`, or unset it with `git config --unset rutter.syncRemote`."
            ),
        };
        out.push(finding(
            "sync-remote-missing",
            format!("rutter.syncRemote names {remote:?}, which is not a remote of this vault."),
            fix,
        ));
    } else if !y.fetches_records {
        out.push(finding(
            "sync-not-set-up",
            format!("The sync remote {remote} does not fetch refs/rutter/* (sync refuses it)."),
            format!("Run `git rutter sync --setup {remote}`."),
        ));
    }
    if let (Some(raw), Some(why)) = (&y.auto_sync, &y.auto_sync_error) {
        out.push(finding(
            "auto-sync-invalid",
            format!("git config rutter.autoSync is {raw:?}, which is not an interval ({why}); captures do not start a sync."),
            "Set it with `git config rutter.autoSync 15m` (s, m, h or d), or turn it off with `git config --unset rutter.autoSync`.".to_string(),
        ));
    }
    if let Some(n) = &y.refused {
        out.push(finding(
            "sync-refused",
            format!(
                "The last sync refused the records of {remote} ({}): {}. Nothing of them was taken.",
                crate::records::text::terminal_safe(&super::show_time(&n.time, clock)),
                n.refusal
            ),
            format!(
                "Look at them with `git log --stat {}`. If a machine of yours wrote them, its history was rewritten: stop syncing there and see docs/sync.md, \"A refused remote\". The next sync that takes the remote's records in clears this.",
                crate::store::transport::tracking_ref(remote)
            ),
        ));
    }
}

/// A sync that still runs far longer than any should: its git processes are bounded, so
/// something else holds it (a disk that hangs, a stopped process). One that was stopped, or
/// that left the working files behind, is information: the next sync finishes its work.
fn stuck(y: &super::SyncInfo, inputs: &super::Inputs, out: &mut Vec<Finding>) {
    let Some(r) = y.running.as_ref().filter(|r| r.alive) else {
        return;
    };
    let ran_ms = inputs.now.0.saturating_sub(r.since.0);
    if ran_ms < 0 || (ran_ms as u128) < u128::from(y.stuck_after_secs) * 1000 {
        return;
    }
    out.push(finding(
        "sync-stuck",
        format!(
            "A sync of this vault (process {}) has been running since {}, far longer than any should: its git processes are stopped after rutter.syncTimeout.",
            r.pid,
            crate::records::text::terminal_safe(&super::show_time(&r.since.iso(), &inputs.clock)),
        ),
        format!(
            "Captures commit meanwhile and nothing is lost. If it does not end, stop it (`kill {}`); the next `git rutter sync` finishes what it left.",
            r.pid
        ),
    ));
}

/// Only what recall cannot get past by itself. An index behind the notes (the next search or
/// MCP call reads them), an outdated one, and one in the vault's own `.git/` that names a former
/// path of the vault (moved or copied) are rebuilt or caught up at their next use: the index
/// line shows them, they are not findings.
fn index(s: &Status, out: &mut Vec<Finding>) {
    let Some(ix) = &s.index else { return };
    let detail = ix.problem_detail.as_deref().unwrap_or("unknown");
    match ix.problem {
        Some("other-vault") => out.push(finding(
            "index-other-vault",
            format!(
                "The index {} was built for another vault ({detail}).",
                ix.path,
            ),
            "Run `git rutter reindex --force` to take it over, or point LIBRARIAN_DB_PATH \
             elsewhere."
                .into(),
        )),
        Some("foreign") => out.push(finding(
            "index-foreign",
            format!("LIBRARIAN_DB_PATH names {}, which is not an index git-rutter made (the TypeScript version's librarian.db is never used or written).", ix.path),
            "Unset LIBRARIAN_DB_PATH (the index then lives in .git/rutter/index.sqlite), or \
             point it at a new file."
                .into(),
        )),
        Some("unwritable") => out.push(finding(
            "index-unwritable",
            format!("The index {} cannot be written ({detail}): search, recent, cited-by and the MCP server's tools fail until it can, since each brings it up to date first.", ix.path),
            crate::index::UNWRITABLE_HINT.into(),
        )),
        Some("not-a-file") => out.push(finding(
            "index-not-a-file",
            format!("{detail}, where the index belongs: git-rutter refuses to open it, so search, recent, cited-by and the MCP server's tools fail until it is gone."),
            "Look at what put it there, then remove it; the next search or `git rutter reindex` \
             rebuilds the index."
                .into(),
        )),
        _ => {}
    }
}

/// How to register `client`.
fn install(client: &str) -> String {
    format!("git rutter install-hook --client {client}")
}

fn hooks(s: &Status, hooked_elsewhere: bool, out: &mut Vec<Finding>) {
    if s.clients.is_empty() {
        return;
    }
    let registered = s
        .clients
        .iter()
        .any(|c| c.state.hook.state == "registered" || c.project_hook.is_some());
    if !registered && !hooked_elsewhere {
        let installed: Vec<&str> = s
            .clients
            .iter()
            .filter(|c| c.state.installed)
            .map(|c| c.state.client)
            .collect();
        let todo = match installed.as_slice() {
            [] => format!(
                "Run `{}` for the client you use (claude, codex, grok, copilot, agy, muse, cursor, gemini, opencode or windsurf).",
                install("NAME")
            ),
            names => format!(
                "Run `git rutter setup` (it registers every client found here), or {} for the client you use.",
                names
                    .iter()
                    .map(|n| format!("`{}`", install(n)))
                    .collect::<Vec<_>>()
                    .join(" or ")
            ),
        };
        out.push(finding(
            "hook-missing",
            "No AI client runs git-rutter's Stop hook, so nothing is captured.".into(),
            todo,
        ));
    }
    for c in &s.clients {
        client(s, c, out);
    }
}

/// The findings about one client: a TypeScript hook, a file install-hook would refuse, and for
/// our registered hook its program, its vault, and what install-hook would still change.
fn client(s: &Status, c: &ClientInfo, out: &mut Vec<Finding>) {
    let st = &c.state;
    let mut push = |kind, message: String, todo: String| {
        out.push(Finding {
            kind,
            client: Some(st.client),
            message,
            todo,
        })
    };
    if let Some(r) = &st.hook.reference {
        push(
            "reference-hook",
            format!("{} still runs the TypeScript rutter hook `{r}`: its writer rewrites whole day files and would drop the lines git-rutter appends.", st.label),
            format!("Run `{}`: it replaces that hook.", install(st.client)),
        );
    }
    let registered = st.hook.state == "registered";
    let unreadable = st.hook.state == "unreadable" && st.installed;
    if (registered || unreadable) && !st.refusals.is_empty() {
        push(
            "client-config-refused",
            format!(
                "{}'s configuration cannot be checked: {}",
                st.label,
                st.refusals.join(" ")
            ),
            format!("Fix that file, then run `{}`.", install(st.client)),
        );
        return;
    }
    if registered {
        let moved = hook_findings(s, st, &mut push);
        registration_findings(st, moved, &mut push);
        for p in &st.problems {
            push(p.kind, p.message.clone(), p.todo.clone());
        }
    }
}

type Push<'a> = dyn FnMut(&'static str, String, String) + 'a;

/// Our hook's program and vault; `true` when the hook names another vault than the one
/// configured (install-hook would move it, which that finding says).
fn hook_findings(s: &Status, st: &ClientState, push: &mut Push) -> bool {
    let (label, client) = (st.label, st.client);
    if !st.hook.program_ok {
        push(
            "hook-program-missing",
            format!(
                "{label}'s hook runs {}, which is not an executable file, so the hook fails silently.",
                st.hook.program.as_deref().unwrap_or("?")
            ),
            format!("Run `{}` to point it at this git-rutter.", install(client)),
        );
    }
    match &st.hook.vault {
        Some(v) if vault::open(Path::new(v), VaultSource::Flag).is_err() => push(
            "hook-vault-unusable",
            format!("{label}'s hook captures into {v}, which is not a usable folder."),
            format!(
                "Run `{} --vault PATH` with your notes vault.",
                install(client)
            ),
        ),
        None if s.hooks_vault.is_none() => push(
            "hook-no-vault",
            format!(
                "{label}'s hook names no vault and finds none when it runs: {}.",
                s.hooks_vault_error
                    .as_deref()
                    .unwrap_or("none is configured")
                    .trim_end_matches('.')
            ),
            format!(
                "Run `git rutter init --global` in your notes vault, or `{} --vault PATH`.",
                install(client)
            ),
        ),
        Some(v) => {
            if let Some(h) = s
                .hooks_vault
                .as_ref()
                .filter(|h| !clients::same_vault(v, &h.path))
            {
                push(
                    "hook-vault-differs",
                    format!(
                        "{label}'s hook captures into {v}, not into {}, the vault {} names: its captures do not reach that vault's record or recall.",
                        h.path, h.reason
                    ),
                    format!(
                        "Run `{}` to move the hook (and its MCP server) to {}; to keep {v}, point the configuration at it instead (`git rutter init --global` there).",
                        install(client),
                        h.path
                    ),
                );
                return true;
            }
        }
        _ => {}
    }
    false
}

/// What install-hook would still change (unless the vault finding already says to run it), and
/// a server it would not write.
fn registration_findings(st: &ClientState, moved: bool, push: &mut Push) {
    let (label, client) = (st.label, st.client);
    if !st.up_to_date && !st.would_change.is_empty() && !moved {
        push(
            "registration-incomplete",
            format!(
                "{label}'s registration is incomplete; install-hook would still change: {}.",
                st.would_change.join("; ")
            ),
            format!("Run `{}`.", install(client)),
        );
    }
    // A server install-hook would write itself is covered by the finding above.
    if matches!(st.mcp.state, "missing" | "reference") && st.would_change.is_empty() {
        let todo = match st.commands.iter().find(|c| c.contains(" mcp add ")) {
            Some(cmd) => format!("Run `{cmd}`."),
            None => format!(
                "Run `{} --vault PATH` with your notes vault: the server entry needs it.",
                install(client)
            ),
        };
        push(
            "mcp-missing",
            format!("{label} has no git-rutter MCP server: recall is unavailable, and a client that learns the directive line from the server's instructions captures nothing."),
            todo,
        );
    }
}

/// A logged reason as the end of a sentence: one final full stop, none after a cut (`…`).
fn sentence(reason: &str) -> String {
    match reason.ends_with('…') {
        true => reason.to_string(),
        false => format!("{}.", reason.trim_end_matches('.')),
    }
}

/// The failed newest run of each client, unless acknowledged (`status --ack-runs`).
fn last_runs(s: &Status, runs: &[Run], clock: &crate::clock::Clock, out: &mut Vec<Finding>) {
    for last in super::runs::last_per_client(runs) {
        let acked = s
            .runs_acked
            .as_deref()
            .is_some_and(|a| last.time.as_str() <= a);
        if !last.outcome.failed() || acked {
            continue;
        }
        if last.outcome == Kind::SyncFailed {
            out.push(Finding {
                kind: "auto-sync-failed",
                client: None,
                message: format!(
                    "The last sync that started by itself (rutter.autoSync), at {}, failed: {}",
                    super::show_time(&last.time, clock),
                    sentence(&last.reason)
                ),
                todo: "Run `git rutter sync` to see it fail in full; captures are kept either way, and the next capture after the interval tries again. `git rutter status --ack-runs` hides this once it is dealt with.".into(),
            });
            continue;
        }
        let client = last
            .client
            .as_deref()
            .and_then(|c| s.clients.iter().find(|x| x.state.client == c));
        let run = client.map_or_else(
            || "The last hook run that named no client".to_string(),
            |c| format!("{}'s last hook run", c.state.label),
        );
        let name = client.map_or("NAME", |c| c.state.client);
        // The variable outranks `rutter.vault`: `init --global` would not reach that hook.
        let from_env = last
            .reason
            .contains(&format!("(from {})", crate::vault::VAULT_ENV));
        let todo = match last.outcome {
            Kind::NoVault if from_env => format!("The hook sees {env} naming no usable vault, and it outranks `git rutter init --global`: point it at your notes vault or remove it where the hook gets it (the client's settings `env`, your shell profile), then end a turn in the client and run `git rutter status` again.", env = crate::vault::VAULT_ENV),
            Kind::NoVault => format!("Run `git rutter init --global` in your notes vault (or `{} --vault PATH`), then end a turn in the client and run `git rutter status` again.", install(name)),
            Kind::Malformed => format!("The hook got input it could not read (the message says what). Check the registration with `{} --dry-run`.", install(name)),
            _ => "Fix what the reason says (docs/troubleshooting.md lists every message), then end a turn in the client and run `git rutter status` again.".into(),
        };
        out.push(Finding {
            kind: "last-run-failed",
            client: client.map(|c| c.state.client),
            message: format!(
                "{run}, at {}, failed ({}): {}",
                super::show_time(&last.time, clock),
                last.outcome.as_str(),
                sentence(&last.reason)
            ),
            todo,
        });
    }
}
