//! `git rutter status`: is the setup working, and if not, what to do (spec/status.md). Gathers,
//! without writing anything, which vault and why, the record ref and pending journal, the
//! index and whether the notes changed since, each client's registration (through
//! `install-hook`'s plan as a dry run) and the hook-run log; then turns what is wrong into
//! findings, each saying what to do. Shared by the command line (text and `--json`).

pub(crate) mod clients;
pub(crate) mod findings;
pub(crate) mod project;
pub(crate) mod ref_state;
pub(crate) mod runs;

use crate::capture::runlog::{self, Run};
use crate::clock::Instant;
use crate::index::health::{self as index_status, IndexState, Problem};
use crate::vault::{self, Vault, VaultSource};
use findings::Finding;
use ref_state::{self as store_status, RecordState};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Runs shown in `last_runs`.
pub(crate) const SHOWN_RUNS: usize = 10;

/// From this many markdown notes, `status` suggests `rutter.watch` when no watcher keeps the
/// index current: every `search`, `show`, `log` and `status` then stats each note first, a cost
/// that grows with the vault (docs/performance.md, "Stop 52").
pub(crate) const WATCH_SUGGESTED_NOTES: usize = 20_000;

/// Everything `status` found. Its serialisation is the `--json` shape.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Status {
    pub vault: Option<VaultInfo>,
    /// Why no vault could be used, when none could.
    pub vault_error: Option<String>,
    /// What to do about it, when the error says (a setting that names no usable folder).
    #[serde(skip)]
    pub vault_hint: Option<String>,
    /// The vault hooks and the MCP server find on their own (environment, then git config).
    pub hooks_vault: Option<VaultRef>,
    /// Why they find none, when they do not.
    pub hooks_vault_error: Option<String>,
    pub record: Option<RecordInfo>,
    pub index: Option<IndexInfo>,
    pub clients: Vec<ClientInfo>,
    /// Runs in the logs read.
    pub runs_logged: usize,
    /// The newest runs, newest first.
    pub last_runs: Vec<Run>,
    /// Failed runs up to this instant were acknowledged (`status --ack-runs`).
    pub runs_acked: Option<String>,
    pub findings: Vec<Finding>,
    /// No findings: exit status 0.
    pub healthy: bool,
}

/// The vault in use and why.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct VaultInfo {
    pub path: String,
    /// `flag`, `env`, `current-repository`, `local-config` or `git-config`.
    pub source: &'static str,
    /// The same, as people read it (`git config rutter.vault`, …).
    pub reason: &'static str,
    pub git: bool,
    /// The linked worktree that was named, when the vault is its main worktree.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub linked_from: Option<String>,
    /// The tool's folder in the git directory (`.git/rutter`), when something that is not a
    /// folder stands there: the `state-unusable` finding names it.
    #[serde(skip)]
    pub state_blocked: Option<String>,
}

/// A vault named by a setting.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct VaultRef {
    pub path: String,
    pub source: &'static str,
    pub reason: &'static str,
}

/// The record ref, its reflog and the pending journal.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct RecordInfo {
    #[serde(rename = "ref")]
    pub ref_exists: bool,
    pub tip: Option<String>,
    pub tip_time: Option<String>,
    pub tip_subject: Option<String>,
    pub reflog: bool,
    pub pending: usize,
    pub pending_unreadable: usize,
    /// Lines written aside and not yet placed in their day files.
    pub aside: usize,
    /// Use-log lines the next commit takes (no finding: they wait for it by design).
    pub use_log_waiting: usize,
    pub verified_tip: Option<String>,
    /// Commits since the last clean verify (`None`: never, or long ago).
    pub commits_since_verify: Option<usize>,
    /// Why the record could not be read.
    pub error: Option<String>,
    /// `git rutter sync`'s settings (`None`: no sync remote set).
    pub sync: Option<SyncInfo>,
    /// With no sync remote set, the remotes whose records this vault has fetched (`init` on a
    /// clone): a sync `--setup` away. Empty otherwise.
    pub record_remotes: Vec<String>,
    /// The committed record files that differ from their commit in the working tree, as
    /// `verify` would report them now (`[]`: none).
    pub working_changes: Vec<ref_state::WorkingChange>,
    /// `rutter.watch` as set (`None`: unset), and why it is no idle time, when it is not.
    pub watch: Option<String>,
    pub watch_error: Option<String>,
    /// `rutter.sign` as set, when it is no boolean git reads (the `sign-invalid` finding).
    #[serde(skip)]
    pub sign_invalid: Option<String>,
}

/// The sync remote and where it stood at the last fetch.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct SyncInfo {
    pub remote: String,
    pub url: Option<String>,
    pub fetches_records: bool,
    /// When `remote` names no remote: the remotes that fetch `refs/rutter/*` under another
    /// name (renamed, most likely).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub set_up_remotes: Vec<String>,
    pub machine: Option<String>,
    /// `up-to-date`, `ahead`, `behind`, `diverged` or `never-fetched`, as of the last fetch.
    pub relation: &'static str,
    /// The last sync refused what the remote sent: nothing of it was taken.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused: Option<crate::sync::refused::Noted>,
    /// Who can read the remote's copy: `encrypted` (a `gcrypt::` remote), `local` (a path on
    /// this machine) or `plaintext` (another host: `host`).
    pub exposure: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// `rutter.autoSync` as set, and why it is no interval when it is not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auto_sync: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auto_sync_error: Option<String>,
    /// When the last sync started, by hand or by itself.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_sync: Option<String>,
    /// The sync that runs now (`alive`), or one that was stopped before it ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub running: Option<crate::sync::running::Held>,
    /// Seconds a sync may run before it is a finding (`sync-stuck`).
    pub stuck_after_secs: u64,
    /// A sync moved the ref and stopped before it wrote the working files (the next sync does).
    pub checkout_unfinished: bool,
}

/// The index.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct IndexInfo {
    pub path: String,
    pub exists: bool,
    pub notes: Option<usize>,
    pub entries: Option<usize>,
    pub updated: Option<String>,
    /// Markdown notes in the vault now.
    pub vault_notes: usize,
    pub stale: Option<Stale>,
    /// A running watcher (an MCP server's, or `git rutter watch`) keeps it current.
    pub watched: bool,
    /// The vault holds at least [`WATCH_SUGGESTED_NOTES`] notes, no watcher keeps the index
    /// current, and `rutter.watch` is unset: setting it would spare each command the stat of
    /// every note.
    pub watch_suggested: bool,
    /// Why it cannot be used as it is: `other-vault`, `foreign` or `not-a-file` (findings),
    /// `moved` or `outdated` (rebuilt at its next use).
    pub problem: Option<&'static str>,
    pub problem_detail: Option<String>,
}

/// Notes that differ from the index.
#[derive(Debug, Clone, Copy, Serialize)]
pub(crate) struct Stale {
    pub new: usize,
    pub changed: usize,
    pub removed: usize,
}

/// One client, with its newest runs.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ClientInfo {
    #[serde(flatten)]
    pub state: clients::ClientState,
    /// Claude Code only: the settings file of the project `status` runs in that holds our
    /// Stop hook ([`project::claude_hook`]).
    pub project_hook: Option<String>,
    pub last_run: Option<Run>,
    pub last_capture: Option<Run>,
}

/// What `gather` needs from the caller.
pub(crate) struct Inputs<'a> {
    /// `--vault`.
    pub flag: Option<&'a Path>,
    /// The clients' environment (`None` without a home directory: clients are skipped).
    pub clients: Option<&'a crate::clients::Context>,
    pub now: Instant,
    /// How times are shown (the local zone, or UTC with `--utc`).
    pub clock: crate::clock::Clock,
}

/// Looks at everything and lists what is wrong.
pub(crate) fn gather(inputs: &Inputs) -> Status {
    let resolved = vault::resolve(inputs.flag, true);
    // What is wrong only: the findings say what to do (`no-vault`, `hook-no-vault`).
    let (hooks_vault, hooks_vault_error) = match vault::resolve(None, false) {
        Ok(v) => (Some(v), None),
        Err(e) => (None, Some(e.to_string())),
    };
    let (vault, vault_error, vault_hint) = match resolved {
        Ok(v) => (Some(v), None, None),
        Err(e) => (
            None,
            Some(e.to_string()),
            crate::hint::Hinted::hint(&e)
                .filter(|_| matches!(e, vault::VaultError::Unusable { .. })),
        ),
    };
    let record = vault.as_ref().and_then(record_info);
    let index_state = vault.as_ref().map(index_status::inspect);
    let client_states = inputs.clients.map(clients::inspect).unwrap_or_default();
    let all_runs = runs::collect(&log_dirs(
        vault.as_ref(),
        hooks_vault.as_ref(),
        &client_states,
    ));
    let project_hook = (inputs.clients.zip(std::env::current_dir().ok()))
        .and_then(|(ctx, cwd)| project::claude_hook(ctx, &cwd))
        .map(|p| p.display().to_string());
    let clients = client_states
        .into_iter()
        .map(|state| ClientInfo {
            project_hook: project_hook.clone().filter(|_| state.client == "claude"),
            last_run: runs::last_of(&all_runs, state.client, None).cloned(),
            last_capture: runs::last_of(&all_runs, state.client, Some(runlog::Kind::Captured))
                .cloned(),
            state,
        })
        .collect();
    let mut status = Status {
        vault: vault.as_ref().map(|v| VaultInfo {
            path: v.root.display().to_string(),
            source: source_key(v.source),
            reason: v.source.describe(),
            git: v.git_dir.is_some(),
            linked_from: v.linked_from.as_ref().map(|p| p.display().to_string()),
            state_blocked: state_blocked(v),
        }),
        vault_error,
        vault_hint,
        hooks_vault: hooks_vault.as_ref().map(|v| VaultRef {
            path: v.root.display().to_string(),
            source: source_key(v.source),
            reason: v.source.describe(),
        }),
        hooks_vault_error,
        record,
        index: index_state.as_ref().map(index_info),
        clients,
        runs_logged: all_runs.len(),
        last_runs: all_runs.iter().rev().take(SHOWN_RUNS).cloned().collect(),
        runs_acked: runs::acked_until(),
        findings: Vec::new(),
        healthy: false,
    };
    if let (Some(ix), Some(r)) = (status.index.as_mut(), status.record.as_ref()) {
        ix.watch_suggested = suggests_watch(ix, r);
    }
    status.findings = findings::all(&status, &all_runs, inputs);
    status.healthy = status.findings.is_empty();
    status
}

/// Whether `status` suggests `rutter.watch`: a usable index of a vault of at least
/// [`WATCH_SUGGESTED_NOTES`] notes that no watcher keeps current, in a repository whose
/// `rutter.watch` is unset (set, a command starts a watcher, or `watch-invalid` says why not).
fn suggests_watch(ix: &IndexInfo, r: &RecordInfo) -> bool {
    ix.exists
        && ix.problem.is_none()
        && !ix.watched
        && ix.vault_notes >= WATCH_SUGGESTED_NOTES
        && r.error.is_none()
        && r.watch.is_none()
}

/// An ISO instant as `status` shows times: in the local zone with its offset
/// (`2026-11-30 17:31:41 -0800`), or `2026-12-01 01:31:41 UTC` with `--utc`.
pub(crate) fn show_time(iso: &str, clock: &crate::clock::Clock) -> String {
    match (clock, iso.get(..19)) {
        (_, None) => iso.to_string(),
        (crate::clock::Clock::Utc, Some(t)) => format!("{} UTC", t.replacen('T', " ", 1)),
        (zone, Some(_)) => {
            let (day, time) = zone.day_time(iso.get(..10).unwrap_or(""), iso);
            format!("{day} {time}")
        }
    }
}

/// The stable name of a vault source, for `--json`.
pub(crate) fn source_key(s: VaultSource) -> &'static str {
    match s {
        VaultSource::Flag => "flag",
        VaultSource::Env => "env",
        VaultSource::CurrentRepository => "current-repository",
        VaultSource::LocalConfig => "local-config",
        VaultSource::GitConfig => "git-config",
    }
}

fn record_info(v: &Vault) -> Option<RecordInfo> {
    v.git_dir.as_ref()?;
    Some(match store_status::record_state(v) {
        Ok(s) => from_record(s),
        Err(e) => RecordInfo {
            error: Some(e.to_string()),
            ..Default::default()
        },
    })
}

fn from_record(s: RecordState) -> RecordInfo {
    RecordInfo {
        ref_exists: s.tip.is_some(),
        tip_time: s
            .tip
            .as_ref()
            .map(|t| crate::clock::from_seconds(t.time).iso()),
        tip_subject: s.tip.as_ref().map(|t| t.subject.clone()),
        tip: s.tip.map(|t| t.id),
        reflog: s.reflog,
        pending: s.pending,
        pending_unreadable: s.pending_unreadable,
        aside: s.aside,
        use_log_waiting: s.use_log_waiting,
        verified_tip: s.verified_tip,
        commits_since_verify: s.since_verified,
        error: None,
        record_remotes: s.record_remotes,
        working_changes: s.working,
        watch: s.watch,
        watch_error: s.watch_error,
        sign_invalid: s.sign_invalid,
        sync: s.sync.map(|y| SyncInfo {
            remote: y.remote,
            url: y.url,
            fetches_records: y.fetches_records,
            set_up_remotes: y.set_up_remotes,
            machine: y.machine,
            relation: y.relation,
            refused: y.refused,
            exposure: y.exposure,
            host: y.host,
            auto_sync: y.auto_sync,
            auto_sync_error: y.auto_sync_error,
            last_sync: y.last_sync,
            running: y.running,
            stuck_after_secs: y.stuck_after.as_secs(),
            checkout_unfinished: y.checkout_unfinished,
        }),
    }
}

fn index_info(s: &IndexState) -> IndexInfo {
    let (problem, detail) = match &s.problem {
        None => (None, None),
        Some(Problem::OtherVault(v)) => (Some("other-vault"), Some(v.clone())),
        Some(Problem::Moved(v)) => (Some("moved"), Some(v.clone())),
        Some(Problem::NotAFile { path, what }) => {
            (Some("not-a-file"), Some(format!("{path} is {what}")))
        }
        Some(Problem::Foreign) => (Some("foreign"), None),
        Some(Problem::Outdated(why)) => (Some("outdated"), Some(why.clone())),
        Some(Problem::Unwritable(why)) => (Some("unwritable"), Some(why.clone())),
    };
    IndexInfo {
        path: s.path.display().to_string(),
        exists: s.exists,
        notes: s.notes,
        entries: s.entries,
        updated: s.updated_ms.map(|ms| Instant(ms).iso()),
        vault_notes: s.vault_notes,
        stale: s.stale.map(|st| Stale {
            new: st.new,
            changed: st.changed,
            removed: st.removed,
        }),
        watched: s.watched,
        watch_suggested: false,
        problem,
        problem_detail: detail,
    }
}

/// Every log folder a capture for this setup could have written to.
fn log_dirs(
    vault: Option<&Vault>,
    hooks_vault: Option<&Vault>,
    clients: &[clients::ClientState],
) -> Vec<PathBuf> {
    let baked = clients
        .iter()
        .filter_map(|c| c.hook.vault.as_deref())
        .filter_map(|p| vault::open(Path::new(p), VaultSource::Flag).ok());
    vault
        .cloned()
        .into_iter()
        .chain(hooks_vault.cloned())
        .chain(baked)
        .map(|v| v.state_dir())
        .chain(runlog::no_vault_dir())
        .collect()
}

/// The vault's `.git/rutter` when something that is not a folder (a file, a symlink) stands
/// there: every command that keeps state (the index, the journal, the capture lock) fails on it.
fn state_blocked(v: &crate::vault::Vault) -> Option<String> {
    v.git_dir.as_ref()?;
    let dir = v.state_dir();
    let meta = std::fs::symlink_metadata(&dir).ok()?;
    (!meta.is_dir()).then(|| dir.display().to_string())
}
