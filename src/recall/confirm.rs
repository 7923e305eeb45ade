//! `identity confirm`: a person binds a dead cited path to its new path (anchor §11). Terminal
//! only, never an MCP tool; appended to the ledger, committed, and effective at once.

use super::reindex::{self, Mode};
use crate::capture::resolve::normalize_ref_path;
use crate::clock;
use crate::index::{Index, IndexError};
use crate::recorder::Recorder;
use crate::records::ledger::Binding;
use crate::vault::Vault;

/// The outcome: the message for stderr and whether it succeeded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Outcome {
    pub ok: bool,
    pub message: String,
}

fn refuse(message: String) -> Result<Outcome, IndexError> {
    Ok(Outcome { ok: false, message })
}

/// Confirms `from` (optionally only the ref with `hash`) as now living at `to`.
pub(crate) fn confirm(
    vault: &Vault,
    index: &mut Index,
    from: &str,
    hash: Option<&str>,
    to: &str,
) -> Result<Outcome, IndexError> {
    reindex::refresh(vault, index, Mode::Auto, false)?;
    let dead: Vec<String> = index
        .dead_refs()?
        .into_iter()
        .filter(|d| d.from == from)
        .map(|d| d.hash)
        .collect();
    if dead.is_empty() {
        return refuse(format!("no unresolved reference recorded for \"{from}\" -- it either resolves already, was never referenced, or is already bound (nothing to confirm)."));
    }
    let hash = match (hash, dead.as_slice()) {
        (Some(h), _) if dead.iter().any(|d| d == h) => h.to_string(),
        (Some(h), _) => return refuse(format!("no unresolved reference for \"{from}\" carries hash {h}. Recorded unresolved hash(es): {}", dead.join(", "))),
        (None, [only]) => only.clone(),
        (None, many) => {
            let lines: Vec<String> = many.iter().map(|h| format!("  git rutter identity confirm {from} {h} {to}")).collect();
            return refuse(format!("\"{from}\" has {} distinct unresolved hashes -- disambiguate with:\n{}", many.len(), lines.join("\n")));
        }
    };
    let Some(to) = normalize_ref_path(to) else {
        return refuse(format!("\"{to}\" is not a valid vault-relative path."));
    };
    if index.note(&to)?.is_none() {
        return refuse(format!("\"{to}\" does not resolve to a current vault note -- refusing to confirm a binding to it."));
    }
    record(vault, index, from, &hash, &to)
}

fn record(
    vault: &Vault,
    index: &mut Index,
    from: &str,
    hash: &str,
    to: &str,
) -> Result<Outcome, IndexError> {
    let done = format!("{from} -> {to} ({hash})");
    let lock = Recorder::lock_vault(vault, crate::lock::INTERACTIVE_WAIT);
    let Ok(session) = lock else {
        return refuse("the capture lock is busy; nothing was confirmed, try again.".to_string());
    };
    let ledger = reindex::read_ledger(vault);
    let latest = crate::records::ledger::latest_bindings(&ledger);
    let current = latest.get(&(from.to_string(), hash.to_string()));
    if current.is_some_and(|b| b.detected == "confirmed" && b.to == to) {
        return Ok(Outcome {
            ok: true,
            message: format!("already confirmed: {done}"),
        });
    }
    let now = clock::now();
    let b = Binding {
        id: format!("{}-1", now.compact()),
        from: from.to_string(),
        to: to.to_string(),
        hash: hash.to_string(),
        detected: "confirmed".to_string(),
        ts: now.iso(),
        extra: Default::default(),
    };
    if let Err(e) = reindex::append_bindings(&session, &[b], now) {
        return refuse(format!("could not record the binding: {e}"));
    }
    drop(session);
    reindex::identity_pass(vault, index)?;
    Ok(Outcome {
        ok: true,
        message: format!("confirmed: {done}"),
    })
}
