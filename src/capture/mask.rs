//! Secrets never settle in the record (DESIGN invariant 12, spec/secrets.md "Where it applies"):
//! every text a capture stores (the summary and the workspace fields) is masked before the
//! first write, so the journal, the day file, an aside copy and the commit all hold
//! `[redacted:KIND]` and never the credential. The entry says what was masked (`masked`: the
//! kinds), and so do the hook's stderr, `librarian-record`'s answer and the hook-run log; none
//! of them ever holds the secret.

use crate::records::secrets;
use crate::records::{Entry, Workspace};
use serde_json::Value;

/// The key of an entry's machine part that lists the kinds masked in it.
pub(crate) const MASKED_KEY: &str = "masked";

/// `text` masked, with the kinds it held added to `kinds`.
fn masked(text: &str, kinds: &mut Vec<&'static str>) -> String {
    let m = secrets::mask(text);
    kinds.extend(m.kinds());
    m.text.into_owned()
}

/// The workspace with its fields masked.
fn workspace(w: &Workspace, kinds: &mut Vec<&'static str>) -> Workspace {
    let mut out = w.clone();
    out.cwd = masked(&w.cwd, kinds);
    out.project = masked(&w.project, kinds);
    out.repo = w.repo.as_deref().map(|r| masked(r, kinds));
    out
}

/// Masks the stored texts of `entry` in place; the kinds masked, sorted, each once (empty when
/// nothing was). The entry then lists them under [`MASKED_KEY`].
pub(crate) fn entry(entry: &mut Entry) -> Vec<&'static str> {
    let mut kinds = Vec::new();
    entry.summary = masked(&entry.summary, &mut kinds);
    entry.workspace = entry.workspace.as_ref().map(|w| workspace(w, &mut kinds));
    kinds.sort_unstable();
    kinds.dedup();
    if !kinds.is_empty() {
        let list = kinds.iter().map(|k| Value::String(k.to_string())).collect();
        entry.extra.insert(MASKED_KEY.into(), Value::Array(list));
    }
    kinds
}

/// The stderr line that says what was masked and why (the formats, never the secret).
pub(crate) fn message(kinds: &[&str]) -> String {
    format!(
        "masked {} in the entry ({}): a credential is stored as [redacted:KIND], never as written; rotate it if it was real.",
        match kinds.len() {
            1 => "a credential".to_string(),
            n => format!("credentials of {n} kinds"),
        },
        kinds.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_and_workspace_are_masked_and_the_entry_says_which_kinds() {
        let mut e = Entry {
            id: String::new(),
            session_id: None,
            time: String::new(),
            summary: "Set the deploy token to nfp_AbC123SecretTokenValue9999xyz in CI.".into(),
            refs: vec![],
            workspace: Some(Workspace::new(
                "/w/site",
                "site",
                Some("https://user:hunter2hunter2@example.com/site.git".into()),
            )),
            client: None,
            supersedes: None,
            extra: Default::default(),
        };
        let kinds = entry(&mut e);
        assert!(
            e.summary.contains("[redacted:netlify-token]"),
            "{}",
            e.summary
        );
        assert!(!e.summary.contains("nfp_AbC"));
        assert!(kinds.contains(&"netlify-token"), "{kinds:?}");
        assert_eq!(e.extra[MASKED_KEY], serde_json::json!(kinds));
        let mut clean = e.clone();
        clean.extra.clear();
        assert!(
            entry(&mut clean).is_empty(),
            "masking twice finds nothing new"
        );
        assert!(
            message(&kinds).starts_with("masked "),
            "{}",
            message(&kinds)
        );
        assert!(!message(&kinds).contains("nfp_"));
    }
}
