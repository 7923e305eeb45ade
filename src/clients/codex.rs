//! Codex: the Stop hook in `~/.codex/hooks.json` (or `$CODEX_HOME`; Claude-style groups; Codex
//! runs it only after the user trusts it with `/hooks`), our block in `~/.codex/AGENTS.md`
//! (Codex does not show server instructions to the model), and the server as
//! `[mcp_servers.rutter]` in `~/.codex/config.toml`, edited with toml_edit so the rest of the
//! file keeps its comments and layout.

use super::change::Change;
use super::command::{is_our_server, is_reference_server};
use super::hooks::Shape;
use super::{files, Context, EditError, Error, FileEdit, Mode, Plan, Spec};
use crate::textblock::Eol;
use std::path::Path;
use toml_edit::{DocumentMut, InlineTable, Item, Table, TableLike};

pub(crate) const SPEC: Spec = Spec {
    name: "codex",
    label: "Codex",
    aliases: &[],
    plan,
};

/// The UTF-8 byte-order mark an editor may put before the first line.
const BOM: &str = "\u{feff}";
const SHAPE: Shape = Shape::Grouped { event: "Stop" };
const WHEN: &str = "git-rutter records the decisions of Codex sessions. These instructions apply \
                    to every session; Codex's Stop hook reads only your final reply, so put the \
                    directive line there.";

fn plan(ctx: &Context, mode: Mode) -> Result<Plan, Error> {
    let mut plan = Plan::new(&SPEC, mode);
    let home = ctx.dir("CODEX_HOME", ".codex");
    let hooks = home.join("hooks.json");
    let vault = ctx.baked_vault(super::existing_hook_vault(ctx, &hooks, SHAPE), false);
    let v = vault.as_ref().map(|b| b.path.as_str());
    super::hook_file(
        ctx,
        &mut plan,
        &hooks,
        files::Ownership::Shared,
        SHAPE,
        v,
        &[],
    )?;
    let body = super::instructions_body(ctx, WHEN);
    let agents = files::markdown_file(ctx, &home.join("AGENTS.md"), &body, mode, None);
    plan.push(agents)?;
    plan.push(config(ctx, &home.join("config.toml"), mode, v))?;
    if mode == Mode::Install {
        plan.notes.push(ctx.vault_note(vault.as_ref()));
        plan.notes.push(
            "trust the hook in Codex with `/hooks`: Codex never runs a hook you have not \
             reviewed. Then start a new session."
                .into(),
        );
    }
    Ok(plan)
}

/// Plans `[mcp_servers.rutter]` in `config.toml`.
fn config(ctx: &Context, path: &Path, mode: Mode, vault: Option<&str>) -> Result<FileEdit, Error> {
    let shown = ctx.show(path);
    let before = files::read(ctx, path)?;
    let raw = String::from_utf8(before.clone().unwrap_or_default()).map_err(|_| {
        Error::Refused(format!(
            "{shown} is not UTF-8 text; fix or move it, then run again (nothing was changed)."
        ))
    })?;
    // toml_edit writes LF and drops a byte-order mark: both are put back as the file had them.
    let (bom, unmarked) = match raw.strip_prefix(BOM) {
        Some(rest) => (BOM, rest),
        None => ("", raw.as_str()),
    };
    let eol = Eol::of(unmarked.as_bytes());
    if eol == Eol::Mixed {
        return Err(Error::Refused(format!(
            "{shown} mixes CRLF and LF line endings, which git-rutter's TOML editor would make all \
             LF; give the file one kind of line ending, or add the `[mcp_servers.rutter]` table \
             by hand (hooks/codex-config.toml in the git-rutter repository has it), then run \
             again (nothing was changed)."
        )));
    }
    let text = eol.to_lf(unmarked).into_owned();
    let mut doc: DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
        Error::Refused(format!(
            "{shown} is not valid TOML ({}); fix or move it, then run again (nothing was changed).",
            e.message()
        ))
    })?;
    let refuse = |why: EditError| {
        Error::Refused(format!(
            "{shown}: {why}; fix it by hand, then run again (nothing was changed)."
        ))
    };
    let changes = match mode {
        Mode::Install => set_server(&mut doc, &ctx.bin, vault).map_err(refuse)?,
        Mode::Uninstall => remove_server(&mut doc),
    };
    let new = doc.to_string();
    let after = match (new == text, new.trim().is_empty() && bom.is_empty()) {
        (true, _) => before.clone(),
        (false, true) => None,
        (false, false) => Some(format!("{bom}{}", eol.restore(new)).into_bytes()),
    };
    Ok(FileEdit {
        path: path.to_path_buf(),
        shown,
        before,
        after,
        changes,
        left: None,
    })
}

fn not_a_table(key: &str) -> EditError {
    EditError::NotA {
        key: key.to_string(),
        what: "a table",
    }
}

/// The program and arguments of a server table, as one line.
fn line(t: &dyn TableLike) -> String {
    let mut words = vec![super::shell(
        t.get("command").and_then(Item::as_str).unwrap_or_default(),
    )];
    if let Some(args) = t.get("args").and_then(Item::as_array) {
        words.extend(args.iter().filter_map(|a| a.as_str()).map(super::shell));
    }
    words.join(" ")
}

fn set_server(
    doc: &mut DocumentMut,
    bin: &str,
    vault: Option<&str>,
) -> Result<Vec<Change>, EditError> {
    let servers = doc.entry("mcp_servers").or_insert_with(|| {
        let mut t = Table::new();
        t.set_implicit(true);
        Item::Table(t)
    });
    let servers = servers
        .as_table_like_mut()
        .ok_or_else(|| not_a_table("mcp_servers"))?;
    let mut changes = Vec::new();
    // The TypeScript reference's server under a name of its own (`codex mcp add rutter-memory
    // -- npx -y rutter-memory`): two memory servers would answer side by side.
    // Only under a name of the reference's own (`rutter-memory`): a server of the user's whose
    // arguments merely mention it is theirs.
    let reference: Vec<(String, String)> = servers
        .iter()
        .filter(|(k, _)| *k != "rutter" && k.contains("rutter"))
        .filter_map(|(k, item)| Some((k.to_string(), line(item.as_table_like()?))))
        .filter(|(_, was)| is_reference_server(was))
        .collect();
    for (key, was) in reference {
        servers.remove(&key);
        changes.push(super::mcp::removed_reference(&key, &was));
    }
    let mut replaced = false;
    if let Some(existing) = servers.get("rutter") {
        let t = existing
            .as_table_like()
            .ok_or_else(|| not_a_table("mcp_servers.rutter"))?;
        let was = line(t);
        if is_reference_server(&was) {
            servers.remove("rutter");
            replaced = true;
            changes.push(super::mcp::replaced_reference(&was));
        } else if !is_our_server(t.get("command").and_then(Item::as_str).unwrap_or_default()) {
            return Err(EditError::NotOurs {
                key: "mcp_servers.rutter".into(),
                was,
                what: "table",
            });
        }
    }
    let fresh = servers.get("rutter").is_none();
    let entry = servers
        .entry("rutter")
        .or_insert_with(|| Item::Table(Table::new()));
    let t = entry
        .as_table_like_mut()
        .ok_or_else(|| not_a_table("mcp_servers.rutter"))?;
    let before = line(t);
    let env_before = t.get("env").map(|e| e.to_string());
    if t.get("command").and_then(Item::as_str) != Some(bin) {
        t.insert("command", toml_edit::value(bin));
    }
    let args: Vec<&str> = t
        .get("args")
        .and_then(Item::as_array)
        .map(|a| a.iter().filter_map(|v| v.as_str()).collect())
        .unwrap_or_default();
    if args != ["mcp"] {
        t.insert(
            "args",
            toml_edit::value(toml_edit::Array::from_iter(["mcp"])),
        );
    }
    if let Some(v) = vault {
        let env = t
            .entry("env")
            .or_insert_with(|| toml_edit::value(InlineTable::new()));
        let env = env
            .as_table_like_mut()
            .ok_or_else(|| not_a_table("mcp_servers.rutter.env"))?;
        if env.get(super::mcp::VAULT_ENV).and_then(Item::as_str) != Some(v) {
            env.insert(super::mcp::VAULT_ENV, toml_edit::value(v));
        }
    }
    let now = line(t);
    let changed_env = t.get("env").map(|e| e.to_string()) != env_before;
    if fresh {
        lead_with_trailing_comments(doc);
    }
    if !replaced && (fresh || now != before || changed_env) {
        changes.push(match fresh {
            true => super::mcp::added(&now),
            false => super::mcp::updated(&now),
        });
    }
    Ok(changes)
}

/// Our table, when it is a `[mcp_servers.rutter]` table (not an inline or dotted one).
fn our_table(doc: &mut DocumentMut) -> Option<&mut Table> {
    doc.get_mut("mcp_servers")?
        .as_table_like_mut()?
        .get_mut("rutter")?
        .as_table_mut()
}

/// The comments that end the file (toml_edit writes them after every table) are put above the
/// table install appends, followed by one newline: a key the user comments out there and later
/// back in stays in the table it was written under, never ours. [`remove_server`] gives them
/// back to the end of the file without that newline, byte for byte.
fn lead_with_trailing_comments(doc: &mut DocumentMut) {
    let trailing = doc.trailing().as_str().unwrap_or_default().to_string();
    if trailing.trim().is_empty() {
        return;
    }
    if let Some(t) = our_table(doc) {
        t.decor_mut().set_prefix(format!("{trailing}\n"));
        doc.set_trailing("");
    }
}

fn remove_server(doc: &mut DocumentMut) -> Vec<Change> {
    let Some(servers) = doc.get_mut("mcp_servers").and_then(Item::as_table_like_mut) else {
        return Vec::new();
    };
    let ours = servers
        .get("rutter")
        .and_then(Item::as_table_like)
        .and_then(|t| t.get("command"))
        .and_then(Item::as_str)
        .is_some_and(is_our_server);
    if !ours {
        return Vec::new();
    }
    // The comments above our table are the user's (install put the file's last ones there).
    let above = our_table(doc)
        .and_then(|t| t.decor().prefix()?.as_str().map(str::to_string))
        .filter(|p| !p.trim().is_empty());
    if let Some(servers) = doc.get_mut("mcp_servers").and_then(Item::as_table_like_mut) {
        servers.remove("rutter");
        if servers.is_empty() {
            doc.remove("mcp_servers");
        }
    }
    if let Some(above) = above {
        let above = above.strip_suffix('\n').unwrap_or(&above);
        let rest = doc.trailing().as_str().unwrap_or_default().to_string();
        doc.set_trailing(format!("{above}{rest}"));
    }
    vec![super::mcp::removed()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_table_is_added_updated_and_removed_keeping_the_rest() {
        let before =
            "# my settings\nmodel = \"o4\"  # fast\n\n[mcp_servers.other]\ncommand = \"x\"\n";
        let mut doc: DocumentMut = before.parse().unwrap();
        assert_eq!(
            set_server(&mut doc, "/a/git-rutter", Some("/v"))
                .unwrap()
                .len(),
            1
        );
        let once = doc.to_string();
        assert!(once.starts_with(before), "{once}");
        assert!(once.contains("[mcp_servers.rutter]\ncommand = \"/a/git-rutter\"\nargs = [\"mcp\"]\nenv = { LIBRARIAN_VAULT_PATH = \"/v\" }\n"), "{once}");
        assert!(set_server(&mut doc, "/a/git-rutter", Some("/v"))
            .unwrap()
            .is_empty());
        assert_eq!(doc.to_string(), once);
        assert_eq!(
            set_server(&mut doc, "/b/git-rutter", None).unwrap().len(),
            1
        );
        assert_eq!(remove_server(&mut doc).len(), 1);
        assert_eq!(doc.to_string(), before);
        let mut empty = DocumentMut::new();
        set_server(&mut empty, "/a/git-rutter", None).unwrap();
        remove_server(&mut empty);
        assert_eq!(empty.to_string(), "");
    }

    /// A file of comments only, or whose last table ends in comments (a key commented out):
    /// they stay above our table, so a key uncommented later is not ours; uninstall gives every
    /// byte back.
    #[test]
    fn comments_that_end_the_file_stay_above_our_table() {
        for before in [
            "# Codex settings, kept by hand\n# model = \"o4\"\n",
            "# no final newline",
            "[profiles.fast]\nmodel = \"o4\"\n# effort = \"low\"\n",
            "model = \"o4\"\n\n# [mcp_servers.docs]\n# command = \"docs\"\n\n",
            "[mcp_servers.docs]\ncommand = \"docs\"\n# args = [\"--port\", \"0\"]\n",
        ] {
            let mut doc: DocumentMut = before.parse().unwrap();
            set_server(&mut doc, "/a/git-rutter", None).unwrap();
            let once = doc.to_string();
            let table = "[mcp_servers.rutter]\ncommand = \"/a/git-rutter\"\nargs = [\"mcp\"]\n";
            assert!(once.starts_with(before), "{once:?}");
            assert!(once.ends_with(table), "{once:?}");
            let mut again: DocumentMut = once.parse().unwrap();
            assert!(set_server(&mut again, "/a/git-rutter", None)
                .unwrap()
                .is_empty());
            assert_eq!(again.to_string(), once);
            remove_server(&mut again);
            assert_eq!(again.to_string(), before);
        }
    }

    #[test]
    fn reference_servers_are_replaced_and_foreign_ones_refused() {
        let mut doc: DocumentMut =
            "[mcp_servers.rutter]\ncommand = \"npx\"\nargs = [\"-y\", \"rutter-memory\"]\n"
                .parse()
                .unwrap();
        let c = set_server(&mut doc, "/a/git-rutter", None).unwrap();
        assert!(c[0].done().contains("TypeScript"), "{c:?}");
        let mut doc: DocumentMut = "[mcp_servers.rutter]\ncommand = \"/opt/x\"\n"
            .parse()
            .unwrap();
        assert!(set_server(&mut doc, "/a/git-rutter", None).is_err());
        assert!(remove_server(&mut doc).is_empty());
    }
}
