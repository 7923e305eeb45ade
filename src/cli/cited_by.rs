//! `git rutter cited-by`: every recorded decision that cited a note, newest first, through
//! renames, and whether the note changed since each capture.

use super::color::Palette;
use super::{cannot_run, user_error, CommandError, CommandResult, Exit, Ui};
use crate::clock::Clock;
use crate::index::cited::NoNote;
use crate::index::short_ids::ShortIds;
use crate::recall::cited::{self, CitedBy, CitedVersion, Decision, Lookup};
use crate::recall::render::{self, Look};
use crate::recall::row::JsonRef;
use crate::records::standing::Status;
use crate::store::Store;
use serde::Serialize;
use std::collections::HashMap;
use std::path::PathBuf;

/// List the recorded decisions that cited a note, newest first, through renames.
///
/// Before you rewrite or retire a note, see which decisions leaned on it. Each decision shows
/// its short id (the form `log` and `retract` take), day and time, project, client and summary,
/// as `recent` shows a step (with its mark when it is not simply committed), then the path and
/// hash it cited and whether the note changed since that capture: "(changed since capture)" when
/// the note's sha256 now differs from the cited one, else "(unchanged since capture)".
///
/// A decision that cited the note under an older path is listed too, "cited as OLD (renamed to
/// NOTE; …)", when the identity ledger binds that path to this note: a rename `reindex`,
/// `search`, `show` or this command noticed (same content, another path), or one `git rutter
/// identity confirm` bound. A note renamed and edited at once is only a candidate until you
/// confirm it: the answer then ends with the command that does. Asked by the name of a symlink
/// to a note, it answers for the note, with the decisions that cited the link: "cited as LINK
/// (a link to NOTE; …)".
///
/// With -p, a decision whose note changed since is followed by the diff from the version it
/// cited to the note now (once per version). refs/rutter/records keeps that version under cited/
/// when the capture could copy it (else git's history may have it, by the blob id the entry
/// recorded); when neither has it (rutter.keepCited=false, a note over 1 MiB or one git
/// ignores), it says so.
///
/// Retracted decisions are left out, as `recent` leaves them out (`git rutter log` lists them).
/// Exit status: 0, also when no decision cited the note; 1 when PATH is no note of the vault.
///
/// Examples: `git rutter cited-by Notes/cadence.md`; `git rutter cited-by -p cadence.md` from
/// inside Notes/; `git rutter cited-by --json Notes/cadence.md | jq -r '.decisions[].id'`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The note: vault-relative as search shows it, or relative to the current folder when you
    /// stand inside the vault, or absolute inside it.
    #[arg(add = clap_complete::engine::ArgValueCompleter::new(super::complete::note_paths))]
    pub path: String,
    /// Under each decision whose note changed since, show the diff from the version it cited
    /// to the note now.
    #[arg(short = 'p', long = "patch")]
    pub patch: bool,
    /// Show times and days in UTC, as recorded (by default in your time zone, with its offset;
    /// JSON times are always UTC).
    #[arg(long)]
    pub utc: bool,
    /// Print the note and its decisions as JSON (each with `changed` and `renamed`; with -p,
    /// `diff` and `cited_version`).
    #[arg(long)]
    pub json: bool,
}

/// Runs the command.
pub fn run(ui: &mut Ui, vault: Option<PathBuf>, args: Args) -> CommandResult {
    let vault = super::interactive_vault(ui, vault.as_deref())?;
    let (mut index, building) = super::open_index(ui, &vault)?;
    // As `show`: from a folder inside the vault a path is relative to it; the vault-relative
    // path search shows still works there.
    let here = super::show::vault_relative(&vault.root, &args.path);
    let mut asked = vec![here];
    if asked[0] != args.path {
        asked.push(args.path.clone());
    }
    let found = cited::read(&vault, &mut index, &asked)?;
    drop(building);
    let found = match found {
        Lookup::Note(c) => c,
        Lookup::NoNote(path, known) => return Err(no_note(&path, &known)),
    };
    if !found.record && !found.decisions.is_empty() {
        ui.warn(super::recent::no_record_note(&vault));
    }
    let versions = match args.patch {
        true => Versions::read(&vault, &found)?,
        false => Versions::default(),
    };
    if args.json {
        ui.print_json(&json(&found, &versions))?;
        return Ok(Exit::Clean);
    }
    let short = ShortIds::lookups(&index);
    let look = Look {
        clock: Clock::for_flag(args.utc),
        ids: Some(&|id| short.short(id)),
    };
    ui.print(&cited::cli_header(&found, &look))?;
    if !found.decisions.is_empty() {
        ui.print("")?;
    }
    let mut deleted = false;
    // The diff from one cited version is shown once, under the newest decision that cited it.
    let mut shown: HashMap<&str, String> = HashMap::new();
    for d in &found.decisions {
        let mut text = String::new();
        cited::cli_decision(&mut text, d, &found, &look);
        deleted |= d.step.status == Status::Deleted;
        ui.print_painted(&text, Palette::marks)?;
        let Some(patch) = versions.patch_text(d) else {
            continue;
        };
        let patch = match shown.get(d.cited.hash.as_str()) {
            Some(first) => format!("(The same cited version as {first}, above.)"),
            None => {
                shown.insert(&d.cited.hash, short.short(&d.step.entry.id));
                patch
            }
        };
        let indented: Vec<String> = patch.lines().map(|l| format!("    {l}")).collect();
        ui.print_painted(&indented.join("\n"), |p, t| p.diff(t, 4))?;
    }
    for line in cited::cli_unresolved(&found) {
        ui.print("")?;
        ui.print(&line)?;
    }
    let mut hint = String::new();
    render::push_cli_hint(&mut hint, deleted, found.record);
    if let Some(hint) = hint.strip_prefix("\n\n") {
        ui.print("")?;
        ui.print(hint)?;
    }
    Ok(Exit::Clean)
}

/// The refusal for a path that is no note, saying what the record knows of it.
fn no_note(path: &str, known: &NoNote) -> CommandError {
    let safe = crate::records::text::one_line_safe(path);
    if !known.bound_to.is_empty() {
        let to: Vec<String> = known
            .bound_to
            .iter()
            .map(|p| crate::records::text::one_line_safe(p))
            .collect();
        let first = crate::argv::quote(&known.bound_to[0]);
        return user_error(format!(
            "{safe} is no note now; the identity ledger binds it to {}.",
            to.join(", ")
        ))
        .hinted(format!(
            "`git rutter cited-by {}` lists the decisions that cited it.",
            crate::records::text::one_line_safe(&first)
        ));
    }
    if known.cited {
        return user_error(format!(
            "{safe} is no note now, and which note it became is unresolved."
        ))
        .hinted(format!(
            "`git rutter recent --grep {}` shows the decisions that cited it with candidates; `git rutter identity confirm` binds it.",
            crate::records::text::one_line_safe(&crate::argv::quote(path))
        ));
    }
    user_error(format!("Note not found: {safe}"))
        .hinted("`git rutter search WORDS` finds notes by their content.")
}

/// The cited versions `-p` diffs against, read once per hash, and the note as it is now.
#[derive(Default)]
struct Versions {
    /// The note's bytes now (`None`: it could not be read).
    now: Option<Vec<u8>>,
    /// Per cited hash: the version found, or why there is none.
    found: HashMap<String, Found>,
    path: String,
}

/// A cited version, or why it cannot be shown.
#[derive(Clone)]
enum Found {
    Version(CitedVersion),
    /// The vault has no record to read it from.
    NoRecord,
}

impl Versions {
    /// Reads the version each changed decision cited.
    fn read(vault: &crate::vault::Vault, c: &CitedBy) -> Result<Versions, CommandError> {
        let store = match vault.git_dir {
            Some(_) => Some(Store::open(vault)?),
            None => None,
        };
        let now = crate::store::read_working(&vault.root, &c.path)
            .ok()
            .flatten();
        let mut found = HashMap::new();
        for d in c.decisions.iter().filter(|d| d.changed) {
            if found.contains_key(&d.cited.hash) {
                continue;
            }
            let v = match &store {
                Some(s) => Found::Version(cited::cited_version(s, &d.cited).map_err(cannot_run)?),
                None => Found::NoRecord,
            };
            found.insert(d.cited.hash.clone(), v);
        }
        Ok(Versions {
            now,
            found,
            path: c.path.clone(),
        })
    }

    /// What `-p` shows under `d`: the diff, or why there is none; `None` when the note did not
    /// change since (or `-p` was not given).
    fn patch_text(&self, d: &Decision) -> Option<String> {
        let found = self.found.get(&d.cited.hash)?;
        if let Some(diff) = self.diff(d) {
            return Some(diff);
        }
        Some(match (found, &self.now) {
            (Found::Version(CitedVersion::Missing), _) => {
                // The index keeps a ref's path, hash and blob; the entry keeps the rest.
                let withheld = d
                    .step
                    .entry
                    .refs
                    .iter()
                    .find(|r| r.path == d.cited.path && r.hash == d.cited.hash)
                    .and_then(|r| r.extra.get("withheld"))
                    .and_then(|v| v.as_str());
                match crate::audit::notes::withheld_why(withheld) {
                    Some(why) => format!("(No copy of the cited version was kept: {why}.)"),
                    None => NOT_KEPT.to_string(),
                }
            }
            (Found::NoRecord, _) => NO_RECORD.to_string(),
            _ => format!(
                "({} cannot be read now.)",
                crate::records::text::field_safe(&self.path)
            ),
        })
    }

    /// The diff under `d`, when both its cited version and the note now could be read.
    fn diff(&self, d: &Decision) -> Option<String> {
        match (self.found.get(&d.cited.hash)?, &self.now) {
            (Found::Version(CitedVersion::Kept(old) | CitedVersion::InHistory(old)), Some(now)) => {
                Some(cited::diff(d, &self.path, old, now))
            }
            _ => None,
        }
    }

    /// Where the cited version came from, for JSON.
    fn source(&self, d: &Decision) -> Option<&'static str> {
        Some(match self.found.get(&d.cited.hash)? {
            Found::Version(CitedVersion::Kept(_)) => "kept",
            Found::Version(CitedVersion::InHistory(_)) => "history",
            Found::Version(CitedVersion::Missing) | Found::NoRecord => "missing",
        })
    }
}

/// `-p` when no copy of the cited version exists.
const NOT_KEPT: &str = "(No copy of the cited version was kept: rutter.keepCited was false, or the note was over 1 MiB or ignored by git when it was captured, and git's history does not have it.)";
/// `-p` in a vault without a record.
const NO_RECORD: &str =
    "(No record to read the cited version from: the vault is not a git repository.)";

/// One decision in `--json`: every key always written (`null` or `[]` when it has no value;
/// spec/cited-by.md, "--json").
#[derive(Serialize)]
struct JsonDecision<'a> {
    id: &'a str,
    day: &'a str,
    time: &'a str,
    summary: &'a str,
    project: Option<&'a str>,
    client: Option<&'a str>,
    status: Status,
    cited: JsonRef<'a>,
    renamed: bool,
    changed: bool,
    cited_version: Option<&'static str>,
    diff: Option<String>,
    /// The ids this decision names as the ones it replaces (spec/recall.md, "Supersede").
    supersedes: Option<&'a [String]>,
    /// The decisions that replace this one, newest first.
    superseded_by: &'a [String],
}

fn json(c: &CitedBy, versions: &Versions) -> serde_json::Value {
    let decisions: Vec<JsonDecision<'_>> = c
        .decisions
        .iter()
        .map(|d| {
            let (e, cited) = (&d.step.entry, &d.cited);
            JsonDecision {
                id: &e.id,
                day: &d.step.day,
                time: &e.time,
                summary: &e.summary,
                project: e.project(),
                client: e.client.as_deref(),
                status: d.step.status,
                cited: JsonRef::of(cited, None),
                renamed: d.renamed(&c.path),
                changed: d.changed,
                cited_version: versions.source(d),
                diff: versions.diff(d),
                supersedes: e.supersedes.as_deref(),
                superseded_by: &d.step.supersede.superseded_by,
            }
        })
        .collect();
    serde_json::json!({
        "path": c.path,
        "sha256": c.sha256,
        "changed_since": c.changed(),
        "decisions": decisions,
        "unresolved": c.unresolved,
    })
}
