//! The `--json` outputs of `status`, `verify`, `recent`, `log` and `cited-by`, and the data of the
//! timeline's page, decoded into typed structs
//! as ripgrep's tests decode its `--json` messages: a test reads fields instead of looking keys
//! up, so a key renamed, retyped or dropped fails where the output is decoded.
//!
//! A key the command always writes, a value or `null`, is required even when it may be null
//! ([`present`]: serde would read a missing one as `None`); a key the command leaves out when it
//! has nothing to say is `#[serde(default)]`. Where the shape is the command's own, the struct
//! denies unknown keys, so a new key is added here on purpose. An entry and its refs keep the
//! fields a newer writer added (spec/record-format.md), so theirs are collected in `extra`.

use serde::{de::DeserializeOwned, Deserialize, Deserializer};
use serde_json::Value;
use std::collections::BTreeMap;

/// A key that is always there, holding a value or `null`: a missing one is an error.
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    Option::<T>::deserialize(d)
}

/// `text` (a command's stdout) decoded as `T`; the test fails with the text when it is not one.
pub fn decode<T: DeserializeOwned>(text: &str) -> T {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

// ---------------------------------------------------------------------------------------------
// `git rutter status --json` (spec/status.md).

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Status {
    #[serde(deserialize_with = "present")]
    pub vault: Option<StatusVault>,
    #[serde(deserialize_with = "present")]
    pub vault_error: Option<String>,
    #[serde(deserialize_with = "present")]
    pub hooks_vault: Option<VaultRef>,
    #[serde(deserialize_with = "present")]
    pub hooks_vault_error: Option<String>,
    #[serde(deserialize_with = "present")]
    pub record: Option<Record>,
    #[serde(deserialize_with = "present")]
    pub index: Option<Index>,
    pub clients: Vec<Client>,
    pub runs_logged: usize,
    pub last_runs: Vec<Run>,
    #[serde(deserialize_with = "present")]
    pub runs_acked: Option<String>,
    pub findings: Vec<StatusFinding>,
    pub healthy: bool,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatusVault {
    pub path: String,
    pub source: String,
    pub reason: String,
    pub git: bool,
    #[serde(default)]
    pub linked_from: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VaultRef {
    pub path: String,
    pub source: String,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkingChange {
    pub kind: String,
    pub path: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    #[serde(rename = "ref")]
    pub ref_exists: bool,
    #[serde(deserialize_with = "present")]
    pub tip: Option<String>,
    #[serde(deserialize_with = "present")]
    pub tip_time: Option<String>,
    #[serde(deserialize_with = "present")]
    pub tip_subject: Option<String>,
    pub reflog: bool,
    pub pending: usize,
    pub pending_unreadable: usize,
    pub aside: usize,
    pub use_log_waiting: usize,
    #[serde(deserialize_with = "present")]
    pub verified_tip: Option<String>,
    #[serde(deserialize_with = "present")]
    pub commits_since_verify: Option<usize>,
    #[serde(deserialize_with = "present")]
    pub error: Option<String>,
    #[serde(deserialize_with = "present")]
    pub sync: Option<Sync>,
    /// With no sync remote set: the remotes whose records the vault has fetched.
    pub record_remotes: Vec<String>,
    /// The record files that differ from their commit in the working tree, as verify finds them.
    pub working_changes: Vec<WorkingChange>,
    /// `rutter.watch` as set, and why it is no idle time.
    #[serde(deserialize_with = "present")]
    pub watch: Option<String>,
    #[serde(deserialize_with = "present")]
    pub watch_error: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sync {
    pub remote: String,
    #[serde(deserialize_with = "present")]
    pub url: Option<String>,
    pub fetches_records: bool,
    #[serde(default)]
    pub set_up_remotes: Vec<String>,
    #[serde(deserialize_with = "present")]
    pub machine: Option<String>,
    pub relation: String,
    #[serde(default)]
    pub refused: Option<Refused>,
    pub exposure: String,
    #[serde(default)]
    pub host: Option<String>,
    #[serde(default)]
    pub auto_sync: Option<String>,
    #[serde(default)]
    pub auto_sync_error: Option<String>,
    #[serde(default)]
    pub last_sync: Option<String>,
    #[serde(default)]
    pub running: Option<Running>,
    pub stuck_after_secs: u64,
    pub checkout_unfinished: bool,
}

/// What the last sync refused of what a remote sent.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Refused {
    pub remote: String,
    #[serde(deserialize_with = "present")]
    pub tip: Option<String>,
    #[serde(deserialize_with = "present")]
    pub commit: Option<String>,
    #[serde(deserialize_with = "present")]
    pub path: Option<String>,
    #[serde(default)]
    pub kind: Option<String>,
    pub rule: String,
    pub time: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Running {
    pub pid: u32,
    pub since: String,
    pub alive: bool,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Index {
    pub path: String,
    pub exists: bool,
    #[serde(deserialize_with = "present")]
    pub notes: Option<usize>,
    #[serde(deserialize_with = "present")]
    pub entries: Option<usize>,
    #[serde(deserialize_with = "present")]
    pub updated: Option<String>,
    pub vault_notes: usize,
    #[serde(deserialize_with = "present")]
    pub stale: Option<Stale>,
    pub watched: bool,
    pub watch_suggested: bool,
    #[serde(deserialize_with = "present")]
    pub problem: Option<String>,
    #[serde(deserialize_with = "present")]
    pub problem_detail: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stale {
    pub new: usize,
    pub changed: usize,
    pub removed: usize,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Client {
    pub client: String,
    pub label: String,
    pub installed: bool,
    pub hook: Hook,
    pub mcp: Mcp,
    #[serde(deserialize_with = "present")]
    pub session_start: Option<String>,
    pub up_to_date: bool,
    pub would_change: Vec<String>,
    pub commands: Vec<String>,
    pub refusals: Vec<String>,
    #[serde(deserialize_with = "present")]
    pub project_hook: Option<String>,
    #[serde(deserialize_with = "present")]
    pub last_run: Option<Run>,
    #[serde(deserialize_with = "present")]
    pub last_capture: Option<Run>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hook {
    pub state: String,
    #[serde(deserialize_with = "present")]
    pub file: Option<String>,
    #[serde(deserialize_with = "present")]
    pub command: Option<String>,
    #[serde(deserialize_with = "present")]
    pub vault: Option<String>,
    #[serde(deserialize_with = "present")]
    pub program: Option<String>,
    pub program_ok: bool,
    #[serde(deserialize_with = "present")]
    pub reference: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mcp {
    pub state: String,
    #[serde(deserialize_with = "present")]
    pub place: Option<String>,
}

/// One hook run (as the hook-run log holds it).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Run {
    pub time: String,
    #[serde(deserialize_with = "present")]
    pub client: Option<String>,
    #[serde(deserialize_with = "present")]
    pub session: Option<String>,
    pub outcome: String,
    pub entries: usize,
    pub reason: String,
    #[serde(deserialize_with = "present")]
    pub vault: Option<String>,
    #[serde(default)]
    pub masked: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatusFinding {
    pub kind: String,
    #[serde(deserialize_with = "present")]
    pub client: Option<String>,
    pub message: String,
    pub todo: String,
}

impl Status {
    /// The vault in use; the test fails when there is none.
    pub fn vault(&self) -> &StatusVault {
        self.vault
            .as_ref()
            .unwrap_or_else(|| panic!("no vault: {self:#?}"))
    }

    /// The record's state; the test fails when there is none.
    pub fn record(&self) -> &Record {
        self.record
            .as_ref()
            .unwrap_or_else(|| panic!("no record: {self:#?}"))
    }

    /// The sync settings; the test fails when there are none.
    pub fn sync(&self) -> &Sync {
        let record = self.record();
        record
            .sync
            .as_ref()
            .unwrap_or_else(|| panic!("no sync: {record:#?}"))
    }

    /// The index's state; the test fails when there is none.
    pub fn index(&self) -> &Index {
        self.index
            .as_ref()
            .unwrap_or_else(|| panic!("no index: {self:#?}"))
    }

    /// The kinds of the findings, in order.
    pub fn kinds(&self) -> Vec<&str> {
        self.findings.iter().map(|f| f.kind.as_str()).collect()
    }

    /// The first finding of `kind`; the test fails when there is none.
    pub fn finding(&self, kind: &str) -> &StatusFinding {
        self.findings
            .iter()
            .find(|f| f.kind == kind)
            .unwrap_or_else(|| panic!("no {kind} finding in {:#?}", self.findings))
    }

    /// The client named `name`; the test fails when it is not listed.
    pub fn client(&self, name: &str) -> &Client {
        self.clients
            .iter()
            .find(|c| c.client == name)
            .unwrap_or_else(|| panic!("no client {name}"))
    }
}

// ---------------------------------------------------------------------------------------------
// `git rutter verify --json` (spec/verify.md).

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Verify {
    pub clean: bool,
    #[serde(deserialize_with = "present")]
    pub tip: Option<String>,
    pub commits_checked: usize,
    pub findings: Vec<Finding>,
    /// What to do about a known finding: empty when verify is clean.
    pub hints: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Finding {
    pub kind: String,
    pub id: String,
    #[serde(deserialize_with = "present")]
    pub path: Option<String>,
    #[serde(deserialize_with = "present")]
    pub entry: Option<String>,
    #[serde(deserialize_with = "present")]
    pub day: Option<String>,
    #[serde(deserialize_with = "present")]
    pub commit: Option<String>,
    pub detail: String,
    #[serde(deserialize_with = "present")]
    pub diff: Option<String>,
    #[serde(deserialize_with = "present")]
    pub acknowledged: Option<String>,
}

impl Verify {
    /// `(kind, path)` of each finding, in order.
    pub fn kinds(&self) -> Vec<(String, Option<String>)> {
        self.findings
            .iter()
            .map(|f| (f.kind.clone(), f.path.clone()))
            .collect()
    }

    /// The first finding of `kind`; the test fails when there is none.
    pub fn finding(&self, kind: &str) -> &Finding {
        self.findings
            .iter()
            .find(|f| f.kind == kind)
            .unwrap_or_else(|| panic!("no {kind} finding in {self:#?}"))
    }
}

// ---------------------------------------------------------------------------------------------
// `git rutter recent --json` (spec/recall.md).

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Recent {
    pub vault: String,
    /// What recall says instead of sessions (`null` when it shows some).
    #[serde(deserialize_with = "present")]
    pub empty: Option<String>,
    pub sessions: Vec<Session>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Session {
    #[serde(deserialize_with = "present")]
    pub session_id: Option<String>,
    #[serde(deserialize_with = "present")]
    pub project: Option<String>,
    pub steps: Vec<Step>,
    pub total_steps: usize,
    pub omitted: usize,
}

/// An entry of a session with the day of its file, its status and its supersede links.
#[derive(Debug, Clone, Deserialize)]
pub struct Step {
    pub day: String,
    pub id: String,
    #[serde(deserialize_with = "present")]
    pub session_id: Option<String>,
    pub time: String,
    pub summary: String,
    pub refs: Vec<Ref>,
    #[serde(deserialize_with = "present")]
    pub workspace: Option<Workspace>,
    #[serde(deserialize_with = "present")]
    pub client: Option<String>,
    #[serde(deserialize_with = "present")]
    pub supersedes: Option<Vec<String>>,
    pub status: String,
    pub superseded_by: Vec<String>,
    pub supersedes_unknown: Vec<String>,
    pub supersedes_set_aside: Vec<String>,
    /// The fields of the entry this version does not name (a newer writer's, `masked`).
    #[serde(flatten)]
    pub extra: BTreeMap<String, Value>,
}

/// A cited note: `shown` is how `recent` shows it (`log` leaves it out).
#[derive(Debug, Clone, Deserialize)]
pub struct Ref {
    pub path: String,
    pub hash: String,
    #[serde(deserialize_with = "present")]
    pub blob: Option<String>,
    #[serde(default)]
    pub shown: Option<String>,
    #[serde(flatten)]
    pub extra: BTreeMap<String, Value>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Workspace {
    pub cwd: String,
    pub project: String,
    #[serde(deserialize_with = "present")]
    pub repo: Option<String>,
    #[serde(flatten)]
    pub extra: BTreeMap<String, Value>,
}

impl Recent {
    /// Every step of every session, in the order shown.
    pub fn steps(&self) -> impl Iterator<Item = &Step> {
        self.sessions.iter().flat_map(|s| &s.steps)
    }

    /// The summaries of every step, in the order shown.
    pub fn summaries(&self) -> Vec<&str> {
        self.steps().map(|s| s.summary.as_str()).collect()
    }

    /// The step whose summary is `summary`; the test fails when there is none.
    pub fn step(&self, summary: &str) -> &Step {
        self.steps()
            .find(|s| s.summary == summary)
            .unwrap_or_else(|| panic!("no step {summary:?} in {:#?}", self.sessions))
    }
}

// ---------------------------------------------------------------------------------------------
// `git rutter log --json` (spec/verify.md, "log"): one row per entry, newest first.

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogRow {
    pub id: String,
    pub day: String,
    pub time: String,
    pub summary: String,
    pub status: String,
    #[serde(deserialize_with = "present")]
    pub commit: Option<String>,
    pub file: String,
    #[serde(deserialize_with = "present")]
    pub project: Option<String>,
    #[serde(deserialize_with = "present")]
    pub client: Option<String>,
    pub refs: Vec<Ref>,
    #[serde(deserialize_with = "present")]
    pub retraction: Option<Retraction>,
    #[serde(deserialize_with = "present")]
    pub diff: Option<String>,
    #[serde(deserialize_with = "present")]
    pub supersedes: Option<Vec<String>>,
    pub superseded_by: Vec<String>,
}

/// The retraction that took an entry back.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Retraction {
    pub id: String,
    pub day: String,
    pub time: String,
    pub reason: String,
    #[serde(deserialize_with = "present")]
    pub commit: Option<String>,
}

/// The row whose summary is `summary`; the test fails when there is none.
pub fn log_row<'a>(rows: &'a [LogRow], summary: &str) -> &'a LogRow {
    rows.iter()
        .find(|r| r.summary == summary)
        .unwrap_or_else(|| panic!("no row {summary:?} in {rows:#?}"))
}

// ---------------------------------------------------------------------------------------------
// `git rutter cited-by --json` (spec/cited-by.md).

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CitedBy {
    pub path: String,
    pub sha256: String,
    pub changed_since: usize,
    pub decisions: Vec<CitedDecision>,
    pub unresolved: Vec<Candidacy>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CitedDecision {
    pub id: String,
    pub day: String,
    pub time: String,
    pub summary: String,
    #[serde(deserialize_with = "present")]
    pub project: Option<String>,
    #[serde(deserialize_with = "present")]
    pub client: Option<String>,
    pub status: String,
    pub cited: CitedRef,
    pub renamed: bool,
    pub changed: bool,
    #[serde(deserialize_with = "present")]
    pub cited_version: Option<String>,
    #[serde(deserialize_with = "present")]
    pub diff: Option<String>,
    #[serde(deserialize_with = "present")]
    pub supersedes: Option<Vec<String>>,
    pub superseded_by: Vec<String>,
}

/// The ref a decision recorded (a newer writer's fields in `extra`).
#[derive(Debug, Clone, Deserialize)]
pub struct CitedRef {
    pub path: String,
    pub hash: String,
    #[serde(deserialize_with = "present")]
    pub blob: Option<String>,
    #[serde(flatten)]
    pub extra: BTreeMap<String, Value>,
}

/// A gone cited path this note may be.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Candidacy {
    pub from: String,
    #[serde(deserialize_with = "present")]
    pub evidence: Option<String>,
}

impl CitedBy {
    /// The summaries of the decisions, newest first.
    pub fn summaries(&self) -> Vec<&str> {
        self.decisions.iter().map(|d| d.summary.as_str()).collect()
    }
}

// ---------------------------------------------------------------------------------------------
// The data block of `git rutter timeline`'s page (spec/timeline.md, "The page's data"). The page
// leaves a key out when it has nothing to say (10,000 decisions keep it small), so those are
// `#[serde(default)]`; every shape is the page's own, so an unknown key is refused.

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimelineData {
    pub vault: String,
    pub written: String,
    #[serde(deserialize_with = "present")]
    pub empty: Option<String>,
    #[serde(deserialize_with = "present")]
    pub hint: Option<String>,
    pub notes: Vec<String>,
    pub decisions: Vec<TimelineDecision>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimelineDecision {
    pub id: String,
    pub day: String,
    pub time: String,
    #[serde(default)]
    pub project: Option<String>,
    #[serde(default)]
    pub client: Option<String>,
    pub summary: String,
    #[serde(default)]
    pub mark: Option<String>,
    #[serde(default)]
    pub superseded: Option<String>,
    #[serde(default)]
    pub refs: Vec<TimelineRef>,
    #[serde(default)]
    pub more_refs: Option<usize>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimelineRef {
    pub path: String,
    pub hash: String,
    #[serde(default)]
    pub drift: Option<String>,
}

impl TimelineData {
    /// The decision whose summary is `summary`; the test fails when there is none.
    pub fn decision(&self, summary: &str) -> &TimelineDecision {
        self.decisions
            .iter()
            .find(|d| d.summary == summary)
            .unwrap_or_else(|| panic!("no decision {summary:?} in {:#?}", self.decisions))
    }
}

/// The data block of a timeline page (`html`), decoded.
pub fn timeline_data(html: &str) -> TimelineData {
    let open = "<script type=\"application/json\" id=\"data\">";
    let start = html.find(open).expect("a data block") + open.len();
    let len = html[start..].find("</script>").expect("the block ends");
    decode(&html[start..start + len])
}

#[test]
fn a_key_written_as_null_is_required_and_a_new_key_is_refused() {
    let ok = r#"{"vault":"/v","empty":null,"sessions":[]}"#;
    assert_eq!(decode::<Recent>(ok).empty, None);
    let missing = r#"{"vault":"/v","sessions":[]}"#;
    assert!(serde_json::from_str::<Recent>(missing).is_err());
    let more = r#"{"vault":"/v","empty":null,"sessions":[],"new":1}"#;
    assert!(serde_json::from_str::<Recent>(more).is_err());
}
