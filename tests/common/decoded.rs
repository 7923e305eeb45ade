//! More of the commands' own `--json` outputs decoded into typed structs (issue 36, part 4), as
//! `json.rs` decodes status, verify, recent and log: `sync`, `install-hook`, `setup`, `gate`,
//! `retract`, `search` (its hits, which the MCP server's `librarian-search` serves too). The rules are json.rs's: a
//! key always written is required even when `null` (`present`), one left out when empty is
//! `#[serde(default)]`, and every struct denies unknown keys, so a new key is added here on
//! purpose. Client config files are the clients' formats, not ours, and stay `Value`s.

use serde::{Deserialize, Deserializer};

fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    Option::<T>::deserialize(d)
}

// ---------------------------------------------------------------------------------------------
// `git rutter sync --json` of a sync that ran (spec/sync.md).

/// The record lines one side of a sync gained, by kind.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tally {
    pub entries: Vec<String>,
    pub retractions: Vec<String>,
    pub bindings: usize,
    pub acknowledgements: usize,
    pub purges: usize,
    pub use_events: usize,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SyncReport {
    pub remote: String,
    #[serde(deserialize_with = "present")]
    pub url: Option<String>,
    pub action: String,
    #[serde(deserialize_with = "present")]
    pub before: Option<String>,
    #[serde(deserialize_with = "present")]
    pub after: Option<String>,
    #[serde(deserialize_with = "present")]
    pub remote_tip: Option<String>,
    pub remote_emptied: bool,
    pub merges: Vec<String>,
    pub unrelated: bool,
    pub unioned: Vec<String>,
    pub split: Vec<(String, String)>,
    pub received: Vec<String>,
    pub sent: Vec<String>,
    pub received_lines: Tally,
    pub sent_lines: Tally,
    pub pushed: bool,
    #[serde(deserialize_with = "present")]
    pub refused: Option<String>,
    pub gave_up: bool,
    /// The remote's working tree, when it is a vault on this machine (nothing pushed into it).
    #[serde(deserialize_with = "present")]
    pub not_sent: Option<String>,
    pub updated: Vec<String>,
    pub left_alone: Vec<(String, String)>,
    pub committed_pending: usize,
    pub checked: usize,
    pub purges_taken: Vec<String>,
    pub purges_sent: Vec<String>,
    /// Only when a warning said what to do (spec/output.md).
    #[serde(default)]
    pub hints: Vec<String>,
}

// ---------------------------------------------------------------------------------------------
// `git rutter install-hook --json` / `uninstall-hook --json` (spec/clients.md).

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstallHook {
    pub client: String,
    pub label: String,
    pub mode: String,
    pub dry_run: bool,
    pub installed: bool,
    /// `changed`, `would-change` (a dry run), `unchanged` or `refused`.
    pub status: String,
    pub files: Vec<FileEdit>,
    pub commands: Vec<String>,
    pub notes: Vec<String>,
    pub refusals: Vec<String>,
    /// What uninstall left for the user to take out by hand (a block the user changed).
    pub left: Vec<String>,
    /// What keeps the registration from working once written (`{kind, message, todo}`).
    pub problems: Vec<serde_json::Value>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileEdit {
    pub path: String,
    /// `create`, `update`, `remove` or `none`.
    pub action: String,
    pub changes: Vec<String>,
}

impl InstallHook {
    pub fn actions(&self) -> Vec<&str> {
        self.files.iter().map(|f| f.action.as_str()).collect()
    }
}

// ---------------------------------------------------------------------------------------------
// `git rutter setup --json`.

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Setup {
    pub clients: Vec<SetupClient>,
    /// The manual's part, `null` when `man` finds it already (or there is no `man`).
    #[serde(deserialize_with = "present")]
    pub manual: Option<SetupManual>,
    pub healthy: bool,
    /// status's findings (`json::StatusFinding`).
    pub findings: Vec<super::json::StatusFinding>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetupClient {
    pub client: String,
    pub outcome: String,
    pub files: Vec<String>,
    pub commands: Vec<String>,
    pub ran: Vec<Ran>,
    pub refusals: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetupManual {
    pub dir: String,
    /// `would install`, `installed`, `failed`.
    pub outcome: String,
    pub pages: usize,
    /// Whether `man` finds git-rutter(1) once installed.
    pub found: bool,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ran {
    pub command: String,
    pub ok: bool,
}

// ---------------------------------------------------------------------------------------------
// `git rutter search --json` (spec/recall.md).

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Search {
    pub query: String,
    pub results: Vec<Hit>,
    #[serde(deserialize_with = "present")]
    pub partial: Option<Partial>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Partial {
    pub words: Vec<String>,
    pub missing: Vec<String>,
    pub notes: usize,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hit {
    pub path: String,
    pub title: String,
    #[serde(rename = "type")]
    pub note_type: String,
    pub status: String,
    pub created: String,
    pub snippet: String,
    #[serde(default)]
    pub engagement: Option<Engagement>,
    #[serde(default)]
    pub conflicts: Vec<String>,
    #[serde(default)]
    pub unresolved: Vec<Unresolved>,
    /// Only in a partial answer: the words this note holds.
    #[serde(default)]
    pub words: Option<Vec<String>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Unresolved {
    pub from: String,
    pub candidates: Vec<Candidate>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Candidate {
    pub path: String,
    #[serde(default)]
    pub evidence: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Engagement {
    pub date: String,
    pub summary: String,
    pub status: String,
    pub superseded_by: Vec<String>,
    pub decisions: usize,
    pub newest: String,
    pub closest: bool,
}

// ---------------------------------------------------------------------------------------------
// `git rutter gate --json` (spec/recall.md).

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gate {
    pub target: usize,
    pub weeks: Vec<Week>,
    pub logged: usize,
    pub outside: usize,
    pub counted_from: String,
    pub counted_until: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Week {
    pub week: String,
    pub from: String,
    pub count: usize,
    pub met: bool,
}

// ---------------------------------------------------------------------------------------------
// `git rutter retract --json` (spec/recall.md).

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Retract {
    pub entry: String,
    pub summary: String,
    pub retraction: String,
    pub day: String,
    pub reason: String,
    /// `null` while the retraction waits in the pending journal.
    #[serde(deserialize_with = "present")]
    pub commit: Option<String>,
    /// Only when stderr warned (spec/output.md).
    #[serde(default)]
    pub hints: Vec<String>,
}
