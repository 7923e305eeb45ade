//! `git rutter retract`: take a mistaken entry out of recall without rewriting the record.

use crate::capture::sanitize::{inert_line, SUMMARY_MAX_CHARS};
use crate::clock;
use crate::index::entries::Scope;
use crate::index::short_ids::{self, Resolved};
use crate::index::Index;
use crate::lock::{self, Lock};
use crate::recall::record;
use crate::records::status::Status;
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

/// Runs the command.
pub fn run(vault: Option<PathBuf>, args: Args) -> anyhow::Result<i32> {
    let given = args.entry.as_str();
    if !is_entry_id(given) && !short_ids::is_short_id(given) {
        eprintln!("git-rutter: {given:?} is not an entry id (one looks like 20261130T073141112Z, or its first 15 characters as `recent` shows it); `git rutter log` lists them.");
        return Ok(super::EXIT_FINDING);
    }
    let reason = inert_line(&args.reason, SUMMARY_MAX_CHARS);
    anyhow::ensure!(
        !reason.is_empty(),
        "the reason is empty; say why the entry is retracted with --reason TEXT."
    );
    let vault = super::interactive_vault(vault.as_deref())?;
    let store = Store::open(&vault)?;
    let _lock = Lock::acquire(store.state_dir(), lock::INTERACTIVE_WAIT)?;
    let building = super::progress::Progress::index_build(&vault);
    let mut index = Index::open(&vault, false)?;
    record::refresh(&vault, &mut index, Scope::Quick(&[]))?;
    drop(building);
    let id = match short_ids::resolve(&index, given)? {
        Resolved::One(id) => id,
        Resolved::None => {
            eprintln!("git-rutter: no entry id starts with {given}; nothing was retracted. `git rutter log` lists the entries.");
            return Ok(super::EXIT_FINDING);
        }
        Resolved::Many(ids) => {
            eprintln!("git-rutter: {given} is the start of several entry ids ({}); nothing was retracted. Give more of the id.", ids.join(", "));
            return Ok(super::EXIT_FINDING);
        }
    };
    let id = id.as_str();
    let Some(found) = index.entry_by_id(id)? else {
        eprintln!("git-rutter: no entry {id} in refs/rutter/records or the pending journal; nothing was retracted. `git rutter log` lists the entries.");
        return Ok(super::EXIT_FINDING);
    };
    let holders = index.entries_with_id(id)?;
    if holders.len() > 1 {
        let named: Vec<String> = holders
            .iter()
            .map(|(file, summary)| format!("{file}.md: {summary:?}"))
            .collect();
        eprintln!("git-rutter: {} recorded entries carry the id {id} ({}); a retraction names one id, so it would take back all of them. Nothing was retracted. `git rutter log {id}` shows which commit added each.", holders.len(), named.join("; "));
        return Ok(super::EXIT_FINDING);
    }
    if found.status == Status::Unverified {
        eprintln!("git-rutter: entry {id} is only in the working day file {}.md, not in the record (unverified); nothing was retracted. `git rutter verify` shows how it got there.", found.day);
        return Ok(super::EXIT_FINDING);
    }
    if let Some(by) = &found.retracted_by {
        eprintln!(
            "git-rutter: entry {id} is already retracted (by {} on {}: {}); nothing changed.",
            by.id, by.day, by.reason
        );
        return Ok(super::EXIT_FINDING);
    }
    let done = crate::recorder::retract::retract(&store, id, &reason, clock::now())?;
    for path in &done.diverged {
        eprintln!("git-rutter: {path} was edited after it was committed; the commit keeps the committed bytes. Run `git rutter verify`.");
    }
    if let Some(why) = &done.pending {
        eprintln!("git-rutter: the retraction is written and journalled but not committed yet ({why}); recall honours it already, and `git rutter commit` commits it.");
    }
    let commit = done.commit.map(|c| c.to_string());
    if args.json {
        super::print_json(&serde_json::json!({
            "entry": id,
            "summary": found.entry.summary,
            "retraction": done.retraction.id,
            "day": done.day,
            "reason": done.retraction.reason,
            "commit": commit,
        }))?;
    } else {
        let at = commit
            .as_deref()
            .map_or("the pending journal".to_string(), |c| {
                format!("refs/rutter/records as {}", &c[..12])
            });
        super::print(&format!(
            "retracted {id} ({} {}: {}); recorded in {at}",
            found.day,
            found.entry.hhmmss(),
            found.entry.summary
        ))?;
    }
    Ok(super::EXIT_OK)
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
