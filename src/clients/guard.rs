//! The checks behind the protective git hooks: a commit on the user's branches may not change
//! committed record bytes (appending is fine), and a git-CLI transaction may not rewind or
//! delete `refs/rutter/records`. `git rutter install-git-hooks` installs the hooks that call them
//! ([`super::githooks`]); what they ask of the repository is the store's
//! (`store::hookrepo`).

use crate::objectid::{ObjectId, ParseObjectIdError};
use crate::records::line;
use crate::store::hookrepo::HookRepo;
use crate::store::{StoreError, RECORDS_REF};

/// The environment variable that lets a rewind of the record ref through.
pub const ALLOW_REWIND_ENV: &str = "RUTTER_ALLOW_REWIND";
/// How many changed entries a refusal lists by name.
const LIST_MAX: usize = 8;

/// What a hook decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    Allow,
    /// Allowed, with a warning to print.
    Warn(String),
    /// Refused, with the message to print.
    Refuse(String),
}

/// Why a hook could not check: the repository could not be read, or the hook's input names no
/// object id.
#[derive(Debug, thiserror::Error)]
pub(crate) enum GuardError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Id(#[from] ParseObjectIdError),
}

/// [`pre_commit`] on the repository git's environment names, as a hook runs: `GIT_DIR`, and the
/// `GIT_INDEX_FILE` that `git commit -a` and `git commit PATH` set.
pub(crate) fn pre_commit_here() -> Result<Verdict, GuardError> {
    pre_commit(&HookRepo::open_from_env()?)
}

/// [`reference_transaction`] on the repository git's environment names, as a hook runs.
pub(crate) fn reference_transaction_here(
    input: &str,
    allow_rewind: bool,
) -> Result<Verdict, GuardError> {
    reference_transaction(&HookRepo::open_from_env()?, input, allow_rewind)
}

/// Refuses a commit whose staged `_librarian/` files change committed record bytes. `repo`
/// must be opened from git's environment ([`HookRepo::open_from_env`]), which honours the
/// `GIT_INDEX_FILE` that `git commit -a` and `git commit PATH` set.
pub(crate) fn pre_commit(repo: &HookRepo) -> Result<Verdict, GuardError> {
    let mut problems = Vec::new();
    for change in repo.staged_record_changes()? {
        let Some(staged) = change.staged else {
            problems.push(format!("  {}: deleted", change.path));
            continue;
        };
        if !staged.starts_with(&change.committed) {
            problems.push(format!(
                "  {}: {}",
                change.path,
                changed_entries(&change.committed, &staged)
            ));
        }
    }
    Ok(match problems.is_empty() {
        true => Verdict::Allow,
        false => Verdict::Refuse(pre_commit_message(&problems)),
    })
}

fn pre_commit_message(problems: &[String]) -> String {
    format!(
        "git-rutter: commit refused: it changes records already committed to {RECORDS_REF}.\n\
         {}\n\
         Record files only grow: lines appended at the end can be committed, committed lines \
         cannot change.\n\
         To put the committed records back, run `git rutter restore` (a changed file is moved \
         aside, never deleted), then stage the file again.\n\
         To commit anyway, run `git commit --no-verify`; `git rutter verify` keeps reporting \
         the change.\n",
        problems.join("\n")
    )
}

/// Names the committed lines that `staged` no longer has, by entry id where they are entries.
fn changed_entries(before: &[u8], staged: &[u8]) -> String {
    let old = String::from_utf8_lossy(before);
    let new = String::from_utf8_lossy(staged);
    let diff = similar::TextDiff::from_lines(old.as_ref(), new.as_ref());
    let mut named = Vec::new();
    for change in diff.iter_all_changes() {
        if change.tag() != similar::ChangeTag::Delete {
            continue;
        }
        let text = change.value();
        named.push(match line::parse(text) {
            Ok(Some(entry)) => format!("entry {}", entry.id),
            _ => format!(
                "line {} ({})",
                change.old_index().map_or(0, |i| i + 1),
                clip(text.trim_end())
            ),
        });
    }
    let more = named.len().saturating_sub(LIST_MAX);
    named.truncate(LIST_MAX);
    let mut out = match named.is_empty() {
        true => "changed".to_string(),
        false => format!("changed {}", named.join(", ")),
    };
    if more > 0 {
        out.push_str(&format!(" and {more} more"));
    }
    out
}

fn clip(s: &str) -> String {
    match s.char_indices().nth(60) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// Refuses a git-CLI transaction that rewinds or deletes the record ref.
///
/// `input` is the hook's stdin (`<old> <new> <ref>` lines); `allow_rewind` is
/// `RUTTER_ALLOW_REWIND=1`.
pub(crate) fn reference_transaction(
    repo: &HookRepo,
    input: &str,
    allow_rewind: bool,
) -> Result<Verdict, GuardError> {
    let mut refusals = Vec::new();
    for l in input.lines() {
        let mut parts = l.splitn(3, ' ');
        let (Some(old), Some(new), Some(name)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        if name == RECORDS_REF {
            refusals.extend(check_move(repo, old, new)?);
        }
    }
    if refusals.is_empty() {
        return Ok(Verdict::Allow);
    }
    if allow_rewind {
        let lines: String = refusals
            .iter()
            .map(|r| format!("git-rutter: {ALLOW_REWIND_ENV}=1: allowed to {r}; `git rutter verify` will report it.\n"))
            .collect();
        return Ok(Verdict::Warn(lines));
    }
    let mut out: String = refusals
        .iter()
        .map(|r| format!("git-rutter: refused to {r}.\n"))
        .collect();
    out.push_str(&format!(
        "{RECORDS_REF} only moves forward, so no committed record drops out of its history.\n\
         To do it anyway, run the command again with {ALLOW_REWIND_ENV}=1 in the environment; \
         `git rutter verify` will report the rewind.\n"
    ));
    Ok(Verdict::Refuse(out))
}

/// Why one update of the record ref is refused, `None` when it is a creation, no-op or
/// fast-forward. An all-zero `old` means "whatever it is now" (git's force update).
fn check_move(repo: &HookRepo, old: &str, new: &str) -> Result<Option<String>, GuardError> {
    let (old, new) = (ObjectId::from_hex(old)?, ObjectId::from_hex(new)?);
    let old = match old.is_zero() {
        true => repo.records_tip()?,
        false => Some(old),
    };
    let Some(old) = old else {
        return Ok(None);
    };
    let short = |o: ObjectId| crate::shortid::long(&o);
    if new.is_zero() {
        if is_pack_prune(repo, old) {
            return Ok(None);
        }
        return Ok(Some(format!("delete {RECORDS_REF} (at {})", short(old))));
    }
    if new == old {
        return Ok(None);
    }
    if !repo.is_commit(new) {
        return Ok(Some(format!(
            "point {RECORDS_REF} at {}, which is not a commit",
            short(new)
        )));
    }
    Ok(match repo.descends(new, old)? {
        true => None,
        false => Some(format!(
            "move {RECORDS_REF} from {} to {}, which does not descend from it",
            short(old),
            short(new)
        )),
    })
}

/// Whether a deletion is `git pack-refs` removing the loose copy of a ref it just packed (git
/// 2.47, for one, runs the hook for that too). The packed copy holds the same value and, unlike a
/// real deletion of a packed ref, nobody holds `packed-refs.lock`.
fn is_pack_prune(repo: &HookRepo, old: ObjectId) -> bool {
    let dir = repo.common_dir();
    if dir.join("packed-refs.lock").exists() {
        return false;
    }
    let want = format!("{old} {RECORDS_REF}");
    std::fs::read_to_string(dir.join("packed-refs"))
        .map(|text| text.lines().any(|l| l == want))
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changed_entries_names_entry_ids_and_plain_lines() {
        let entry = r#"- 00:00:00 [tv] — Hello. <!-- rutter:entry {"id":"E1","time":"2026-01-01T00:00:00.000Z","summary":"Hello.","refs":[],"workspace":{"cwd":"/tmp/tv","project":"tv"}} -->"#;
        let before = format!("# Sessions\n\n{entry}\n");
        let after = "# Sessions, edited\n\n";
        let said = changed_entries(before.as_bytes(), after.as_bytes());
        assert_eq!(said, "changed line 1 (# Sessions), entry E1");
        let appended = format!("{before}- more\n");
        assert_eq!(
            changed_entries(before.as_bytes(), appended.as_bytes()),
            "changed"
        );
    }
}
