//! A verify finding: what kind of change, where, which entry, which commit added it, and a
//! stable id that `verify --ack` can acknowledge.

use serde::Serialize;
use std::path::Path;

/// The kinds of finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// A commit changed bytes an earlier commit had written.
    HistoryRewrite,
    /// A commit deleted a record file.
    HistoryDelete,
    /// A `cited/` copy whose content does not match its name.
    CitedMismatch,
    /// An entry of the record ref that is not a record file or folder: another path, or a
    /// hostile name (`..`, `.git`, …); readers skip it.
    UnexpectedPath,
    /// An entry of the record ref whose mode is not a regular file or folder (executable,
    /// symlink, gitlink); readers skip it.
    UnexpectedMode,
    /// A day file kept in another year's folder of the record ref; readers skip it.
    Misplaced,
    /// A commit added a line outside the record grammar: one that does not parse as its file's
    /// kind of line, or breaks the bounds a capture keeps (spec/record-format.md).
    OutOfGrammar,
    /// A merge that lost lines of one of its parents.
    MergeLostLines,
    /// A merge that holds a line (or a file) neither parent holds.
    MergeAddedLines,
    /// An object of the record history could not be read.
    CorruptObject,
    /// A signed commit whose signature git rejects.
    BadSignature,
    /// A signed commit whose signature git cannot check here (unknown key, no allowed
    /// signers file, no git).
    SignatureUnchecked,
    /// The reflog shows a move of the ref that is not a fast-forward.
    RefRewind,
    /// The tip does not descend from a tip this tool wrote.
    RefNotDescendant,
    /// The ref has no reflog, so its moves cannot be checked.
    RefUnverifiable,
    /// git substitutes an object of the vault (`refs/replace/`): `git show` and `git log` may
    /// display text the record does not hold.
    ReplacedObject,
    /// A committed entry was changed in the working tree.
    Edited,
    /// A committed record file is missing from the working tree.
    Deleted,
    /// A committed record file lost its tail.
    Truncated,
    /// A record file was replaced by a symlink or something that is not a regular file.
    Symlink,
    /// Bytes after the committed ones that are not complete record lines.
    Unparseable,
    /// Complete record lines not committed yet, journalled (not a failure).
    Pending,
    /// A complete record line after the committed bytes (or in a file the ref does not have)
    /// that no capture wrote: in no pending journal record. Recall marks it `[unverified]`.
    Unverified,
    /// A cited note changed in place since capture (`--notes`; not a failure of the record).
    NoteChanged,
    /// An entry removed by `git rutter purge`, as the purge ledger records it (information,
    /// never a failure: spec/purge.md).
    Purged,
}

impl Kind {
    /// The kebab-case name used in output and finding ids.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Kind::HistoryRewrite => "history-rewrite",
            Kind::HistoryDelete => "history-delete",
            Kind::CitedMismatch => "cited-mismatch",
            Kind::UnexpectedPath => "unexpected-path",
            Kind::UnexpectedMode => "unexpected-mode",
            Kind::Misplaced => "misplaced",
            Kind::OutOfGrammar => "out-of-grammar",
            Kind::MergeLostLines => "merge-lost-lines",
            Kind::MergeAddedLines => "merge-added-lines",
            Kind::CorruptObject => "corrupt-object",
            Kind::BadSignature => "bad-signature",
            Kind::SignatureUnchecked => "signature-unchecked",
            Kind::RefRewind => "ref-rewind",
            Kind::RefNotDescendant => "ref-not-descendant",
            Kind::RefUnverifiable => "ref-unverifiable",
            Kind::ReplacedObject => "replaced-object",
            Kind::Edited => "edited",
            Kind::Deleted => "deleted",
            Kind::Truncated => "truncated",
            Kind::Symlink => "symlink",
            Kind::Unparseable => "unparseable",
            Kind::Pending => "pending",
            Kind::Unverified => "unverified",
            Kind::NoteChanged => "note-changed",
            Kind::Purged => "purged",
        }
    }

    /// The check that reports it: `history`, `ref`, `working tree` or `notes`.
    pub(crate) fn area(self) -> &'static str {
        match self {
            Kind::HistoryRewrite
            | Kind::HistoryDelete
            | Kind::CitedMismatch
            | Kind::UnexpectedPath
            | Kind::UnexpectedMode
            | Kind::Misplaced
            | Kind::OutOfGrammar
            | Kind::MergeLostLines
            | Kind::MergeAddedLines
            | Kind::CorruptObject
            | Kind::BadSignature
            | Kind::SignatureUnchecked => "history",
            Kind::RefRewind
            | Kind::RefNotDescendant
            | Kind::RefUnverifiable
            | Kind::ReplacedObject => "ref",
            Kind::NoteChanged => "notes",
            Kind::Purged => "record",
            _ => "working tree",
        }
    }

    /// Whether it concerns the committed history or the ref (the verified-tip mark waits).
    pub(crate) fn is_history_or_ref(self) -> bool {
        matches!(self.area(), "history" | "ref")
    }
}

/// One finding; in JSON every key is written, `null` when it has no value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub kind: Kind,
    /// Stable id: `<kind>:<path or ref>:<entry id, commit or range>`.
    pub id: String,
    pub path: Option<String>,
    pub entry: Option<String>,
    pub day: Option<String>,
    /// The commit that added the entry (or, for history findings, the offending commit).
    pub commit: Option<String>,
    pub detail: String,
    pub diff: Option<String>,
    /// The reason given to `verify --ack`, when acknowledged.
    pub acknowledged: Option<String>,
}

impl Finding {
    /// A finding with an id built from its kind, `place` and `what`.
    pub fn new(kind: Kind, place: &str, what: &str, detail: impl Into<String>) -> Finding {
        Finding {
            kind,
            id: format!("{}:{place}:{what}", kind.as_str()),
            path: None,
            entry: None,
            day: None,
            commit: None,
            detail: detail.into(),
            diff: None,
            acknowledged: None,
        }
    }

    /// Whether it makes verify fail (pending lines, changed notes and acknowledged findings do
    /// not).
    pub(crate) fn counts(&self) -> bool {
        self.acknowledged.is_none()
            && !matches!(self.kind, Kind::Pending | Kind::NoteChanged | Kind::Purged)
    }
}

/// Marks each of `findings` acknowledged whose id the working log of the vault at `root` holds,
/// with the reason given.
pub(crate) fn acknowledge(findings: &mut [Finding], root: &Path) {
    let acks = read_acks(root);
    for f in findings {
        f.acknowledged = acks
            .iter()
            .find(|(id, _)| *id == f.id)
            .map(|(_, reason)| reason.clone());
    }
}

/// `(finding id, reason)` of every acknowledgement in the working log.
pub(crate) fn read_acks(root: &Path) -> Vec<(String, String)> {
    crate::store::read_jsonl_pairs(root, crate::records::paths::ACKS, "finding", "reason")
}
