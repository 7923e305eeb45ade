//! `git rutter retract`: take a mistaken entry out of recall without rewriting the record.

use super::{cannot_run, user_error, CommandError, CommandResult, Exit, Ui};
use crate::capture::sanitize::{inert_line, SUMMARY_MAX_CHARS};
use crate::clock;
use crate::index::entries::Scope;
use crate::index::short_ids::{self, Resolved};
use crate::index::Index;
use crate::lock;
use crate::recall::source;
use crate::recorder::Recorder;
use crate::records::standing::Status;
use crate::store::Store;
use std::path::PathBuf;

/// Retract an entry: recall stops showing it, the record keeps it.
///
/// Appends a retraction line (the entry's id and your reason) to today's day file and commits it
/// to refs/rutter/records, as a capture is committed. `recent`, the MCP server and search's prior
/// engagement no longer show the entry; `git rutter log` lists it as retracted, with the reason
/// and the retraction's commit. The entry's own line is never changed, and `verify` stays clean.
///
/// Exit status 1 when nothing was retracted: the id is not an entry id, no committed or pending
/// entry has it, or it is retracted already.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The entry's id, as `git rutter log` shows it, or its short form as `recent` shows it
    /// (the start of the id, at least 15 characters, naming one entry).
    #[arg(value_name = "ENTRY-ID", add = clap_complete::engine::ArgValueCompleter::new(super::complete::entry_ids))]
    pub entry: String,
    /// Why it is retracted (kept in the record, on one line).
    #[arg(long, value_name = "TEXT")]
    pub reason: String,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// The hint of a refusal that names no entry the record holds.
const LOG_LISTS: &str = "`git rutter log` lists the entries.";

/// Runs the command.
pub fn run(ui: &mut Ui, vault: Option<PathBuf>, args: Args) -> CommandResult {
    let given = args.entry.as_str();
    looks_like_an_id(given)?;
    let reason = reason_of(&args.reason, SUMMARY_MAX_CHARS, "retracted")?;
    let vault = super::interactive_vault(ui, vault.as_deref())?;
    let store = Store::open(&vault)?;
    let recorder = Recorder::lock(&store, lock::INTERACTIVE_WAIT)?;
    let building = super::progress::Progress::index_build(ui, &vault);
    let mut index = Index::open(&vault, false)?;
    source::refresh(&vault, &mut index, Scope::Quick(&[]))?;
    drop(building);
    let id = whole_id(&index, given, "retracted")?;
    let id = id.as_str();
    let Some(found) = index.entry_by_id(id)? else {
        return Err(user_error(format!(
            "no entry {id} in refs/rutter/records or the pending journal; nothing was retracted."
        ))
        .hinted(LOG_LISTS));
    };
    let holders = index.entries_with_id(id)?;
    if holders.len() > 1 {
        let named: Vec<String> = holders
            .iter()
            .map(|(file, summary)| format!("{file}.md: {summary:?}"))
            .collect();
        return Err(user_error(format!("{} recorded entries carry the id {id} ({}); a retraction names one id, so it would take back all of them. Nothing was retracted.", holders.len(), named.join("; ")))
            .hinted(format!("`git rutter log {id}` shows which commit added each.")));
    }
    if found.status == Status::Unverified {
        return Err(user_error(format!("entry {id} is only in the working day file {}.md, not in the record (unverified); nothing was retracted.", found.day))
            .hinted("`git rutter verify` shows how it got there."));
    }
    if let Some(by) = &found.retracted_by {
        return Err(user_error(format!(
            "entry {id} is already retracted (by {} on {}: {}); nothing changed.",
            by.id,
            by.day,
            crate::records::text::field_safe(&by.reason)
        )));
    }
    let done = recorder.retract(id, &reason, clock::now())?;
    // What the warnings say to do next, also in --json.
    let mut hints: Vec<&str> = Vec::new();
    for path in &done.diverged {
        let hint = "Run `git rutter verify`.";
        ui.warn(format_args!("git-rutter: {path} was edited after it was committed; the commit keeps the committed bytes. {hint}"));
        if !hints.contains(&hint) {
            hints.push(hint);
        }
    }
    if let Some(why) = &done.pending {
        ui.warn(format_args!("git-rutter: the retraction is written and journalled but not committed yet ({why}); recall honours it already, and `git rutter commit` commits it."));
        hints.push("`git rutter commit` commits it.");
    }
    let commit = done.commit.map(|c| c.to_string());
    if args.json {
        let mut value = serde_json::json!({
            "entry": id,
            "summary": found.entry.summary,
            "retraction": done.retraction.id,
            "day": done.day,
            "reason": done.retraction.reason,
            "commit": commit,
        });
        if !hints.is_empty() {
            value["hints"] = serde_json::json!(hints);
        }
        ui.print_json(&value)?;
    } else {
        let at = commit
            .as_deref()
            .map_or("the pending journal".to_string(), |c| {
                format!("refs/rutter/records as {}", crate::shortid::long(c))
            });
        ui.print(&format!(
            "retracted {id} ({} {}: {}); recorded in {at}",
            found.day,
            found.entry.hhmmss(),
            crate::records::text::field_safe(&found.entry.summary)
        ))?;
    }
    Ok(Exit::Clean)
}

/// A `--reason` as the record stores it: one inert line of at most `max` characters, any
/// credential masked (spec/secrets.md); refused when empty. `done` says what the command does
/// ("retracted", "purged").
pub(super) fn reason_of(raw: &str, max: usize, done: &str) -> Result<String, CommandError> {
    let reason = inert_line(raw, max);
    let reason = crate::records::secrets::mask(&reason).text.into_owned();
    if reason.is_empty() {
        return Err(cannot_run(format!(
            "the reason is empty; say why the entry is {done} with --reason TEXT."
        )));
    }
    Ok(reason)
}

/// Refuses what is no entry id nor the short form of one, before anything is opened.
pub(super) fn looks_like_an_id(given: &str) -> Result<(), CommandError> {
    if is_entry_id(given) || short_ids::is_short_id(given) {
        return Ok(());
    }
    Err(user_error(format!("{given:?} is not an entry id (one looks like 20261130T073141112Z, or its start as `recent` shows it: at least 15 characters); `git rutter log` lists them.")))
}

/// The whole id `given` names (an id, or the short form `recent` shows, naming one entry of
/// the index); refused, saying nothing was `done`, otherwise.
pub(super) fn whole_id(index: &Index, given: &str, done: &str) -> Result<String, CommandError> {
    match short_ids::resolve(index, given)? {
        Resolved::One(id) => Ok(id),
        Resolved::None => Err(user_error(format!(
            "no entry id starts with {given}; nothing was {done}."
        ))
        .hinted(LOG_LISTS)),
        Resolved::Many(ids) => Err(user_error(format!(
            "{given} is the start of several entry ids ({}); nothing was {done}.",
            ids.join(", ")
        ))
        .hinted("Give more of the id.")),
    }
}

/// An entry id: a compact UTC instant (`20261130T073141112Z`), then any `-suffix` parts of
/// lowercase letters and digits (`-2`, `-p4242`), as spec/record-format.md writes them.
fn is_entry_id(id: &str) -> bool {
    let b = id.as_bytes();
    let instant = b.len() >= 19
        && b[..8].iter().all(u8::is_ascii_digit)
        && b[8] == b'T'
        && b[9..18].iter().all(u8::is_ascii_digit)
        && b[18] == b'Z';
    instant
        && id[19..].split('-').enumerate().all(|(i, part)| {
            (i == 0 && part.is_empty())
                || (i > 0
                    && !part.is_empty()
                    && part
                        .bytes()
                        .all(|c| c.is_ascii_digit() || c.is_ascii_lowercase()))
        })
}

#[cfg(test)]
mod tests {
    use super::is_entry_id;

    #[test]
    fn entry_ids_are_instants_with_optional_suffixes() {
        for ok in [
            "20261130T073141112Z",
            "20261130T073141112Z-2",
            "20261130T073141112Z-p4242",
            "20261130T073141112Z-p4242-3",
        ] {
            assert!(is_entry_id(ok), "{ok}");
        }
        for bad in [
            "",
            "x",
            "2026-11-30",
            "20261130T073141112",
            "20261130T073141112Zx",
            "20261130T073141112Z-",
            "20261130T073141112Z--2",
            "20261130T073141112Z-P1",
            "20261130T0731411120Z",
            "20261130T073141112Z-../x",
            "日本語20261130T073141112Z",
        ] {
            assert!(!is_entry_id(bad), "{bad}");
        }
    }
}
