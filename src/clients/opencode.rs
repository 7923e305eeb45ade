//! OpenCode: no hook command of its own, so capture runs from the smallest plugin that can
//! call it, `~/.config/opencode/plugins/git-rutter.js` (`$XDG_CONFIG_HOME/opencode`; OpenCode
//! loads every file of that folder at startup, opencode.ai/docs/plugins): at `session.idle` it
//! hands the turn's assistant text to `git-rutter capture --client opencode`
//! (`opencode-plugin.js`, written whole and sealed like our markdown blocks). The server is
//! `mcp.rutter` in `opencode.json` there (`type: local`, `command` an array), the capture
//! contract our block in the global `AGENTS.md` there. OpenCode documents no way for a plugin
//! to add context at session start (only compaction's), so no brief is registered. OpenCode runs
//! in the shell, so the vault is written in only with `--vault`.

use super::command::{self, classify};
use super::{files, json::Json, mcp, Context, Error, HookFile, Mode, Plan, Spec};
use std::path::Path;

pub(crate) const SPEC: Spec = Spec {
    name: "opencode",
    label: "OpenCode",
    aliases: &[],
    plan,
};

/// The plugin as shipped: its `COMMAND` line names a placeholder program.
pub(crate) const PLUGIN: &str = include_str!("opencode-plugin.js");
/// The line of the plugin that holds the capture command, as a JSON array.
const COMMAND_LINE: &str = "const COMMAND = ";
const HEAD: &str =
    "// git-rutter plugin for OpenCode: `git rutter install-hook --client opencode` \
                    wrote this file and `git rutter uninstall-hook --client opencode` removes it; \
                    edited, neither touches it.";
const WHEN: &str = "git-rutter records the decisions of OpenCode sessions. These instructions \
                    apply to every session; its plugin reads your replies since the last prompt \
                    when the session goes idle.";

fn plan(ctx: &Context, mode: Mode) -> Result<Plan, Error> {
    let mut plan = Plan::new(&SPEC, mode);
    let home = ctx.dir_under("XDG_CONFIG_HOME", ".config", "opencode");
    let plugin = home.join("plugins/git-rutter.js");
    plan.presence = Some(home.clone());
    let found = installed_command(ctx, &plugin);
    let existing = found.as_ref().and_then(|c| match classify(c) {
        command::Kind::Ours { vault } => vault,
        _ => None,
    });
    let vault = ctx.baked_vault(existing, false);
    let v = vault.as_ref().map(|b| b.path.as_str());
    let edit = files::script_file(ctx, &plugin, HEAD, &body(&ctx.bin, v), mode);
    plan.hook = Some(HookFile {
        path: plugin.clone(),
        handlers: found.map(|c| (classify(&c), c)).into_iter().collect(),
        start_handlers: None,
        readable: edit.is_ok(),
    });
    plan.push(edit)?;
    let config = home.join("opencode.json");
    let edit = files::json_file(ctx, &config, files::Ownership::Shared, |doc| match mode {
        Mode::Install => mcp::set_server(doc, "mcp", server_fields(&ctx.bin, v)),
        Mode::Uninstall => Ok(mcp::remove_server(doc, "mcp")),
    });
    plan.push(edit)?;
    let body = super::instructions_body(ctx, WHEN);
    plan.push(files::markdown_file(
        ctx,
        &home.join("AGENTS.md"),
        &body,
        mode,
        None,
    ))?;
    if mode == Mode::Install {
        plan.notes.push(ctx.vault_note(vault.as_ref()));
        if plan.changes_files() {
            plan.notes.push(
                "start OpenCode again: it loads plugins and servers at startup (`opencode mcp \
                 list` shows the server)."
                    .into(),
            );
        }
    }
    Ok(plan)
}

/// The plugin's text after its two head lines, running `bin` with `vault`.
fn body(bin: &str, vault: Option<&str>) -> String {
    let mut words = vec![bin, "capture", "--client", SPEC.name];
    if let Some(v) = vault {
        words.extend(["--vault", v]);
    }
    let array = serde_json::to_string(&words).unwrap_or_default();
    PLUGIN
        .lines()
        .map(|l| match l.starts_with(COMMAND_LINE) {
            true => format!("{COMMAND_LINE}{array}"),
            false => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// The capture command of the plugin at `path` as one shell line, when it is ours.
fn installed_command(ctx: &Context, path: &Path) -> Option<String> {
    let bytes = files::read(ctx, path).ok()??;
    let text = String::from_utf8(bytes).ok()?;
    if !text.starts_with(files::SCRIPT_HEAD) {
        return None;
    }
    let line = text.lines().find_map(|l| l.strip_prefix(COMMAND_LINE))?;
    let words: Vec<String> = serde_json::from_str(line.trim().trim_end_matches(';')).ok()?;
    Some(
        words
            .iter()
            .map(|w| command::shell_word(w))
            .collect::<Vec<_>>()
            .join(" "),
    )
}

/// `mcp.rutter`: a local server whose command is this binary's `mcp`, the vault in its
/// environment when one is known.
fn server_fields(bin: &str, vault: Option<&str>) -> Vec<(&'static str, Json)> {
    let mut fields = vec![
        ("type", Json::str("local")),
        (
            "command",
            Json::Array(vec![Json::str(bin), Json::str("mcp")]),
        ),
        ("enabled", Json::Bool(true)),
    ];
    if let Some(v) = vault {
        let env = Json::Object(vec![(mcp::VAULT_ENV.into(), Json::str(v))]);
        fields.push(("environment", env));
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plugin_runs_this_binary_and_reads_back() {
        let text = body("/a b/git-rutter", Some("/v"));
        assert!(
            text.contains(r#"const COMMAND = ["/a b/git-rutter","capture","--client","opencode","--vault","/v"]"#),
            "{text}"
        );
        assert_eq!(text.matches(COMMAND_LINE).count(), 1);
        assert!(!text.contains("/ABSOLUTE/PATH/TO"));
    }
}
