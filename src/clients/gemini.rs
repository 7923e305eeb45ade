//! Gemini CLI: everything in `~/.gemini/settings.json` (`$GEMINI_CLI_HOME/.gemini` when that
//! variable names another home, as Gemini's own `homedir()` does): the capture hook as an
//! `AfterAgent` group (its payload carries the turn's response, `prompt_response`), the
//! session-start brief as a `SessionStart` group (Gemini reads
//! `hookSpecificOutput.additionalContext`), and the server as `mcpServers.rutter`, all in one
//! edit of that file; and our block in `~/.gemini/GEMINI.md`, the global context file Gemini
//! loads into every session. Gemini starts hooks and servers with the environment of its shell,
//! so the vault is written in only with `--vault`. (google-gemini/gemini-cli,
//! docs/hooks/reference.md, packages/core/src/utils/paths.ts.)

use super::hooks::Shape;
use super::{files, json::Json, mcp, Context, Error, HookTarget, Mode, Plan, Spec};

pub(crate) const SPEC: Spec = Spec {
    name: "gemini",
    label: "Gemini CLI",
    aliases: &["gemini-cli"],
    plan,
};

const SHAPE: Shape = Shape::Grouped {
    event: "AfterAgent",
};
const WHEN: &str = "git-rutter records the decisions of Gemini CLI sessions. These instructions \
                    apply to every session; Gemini's AfterAgent hook reads the whole response of \
                    each turn, so a directive line anywhere in it is recorded.";

/// `~/.gemini`, or `$GEMINI_CLI_HOME/.gemini`.
pub(crate) fn home(ctx: &Context) -> std::path::PathBuf {
    ctx.dir_under("GEMINI_CLI_HOME", "", ".gemini")
}

fn plan(ctx: &Context, mode: Mode) -> Result<Plan, Error> {
    let mut plan = Plan::new(&SPEC, mode);
    let home = home(ctx);
    let settings = home.join("settings.json");
    plan.presence = Some(settings.clone());
    let vault = ctx.baked_vault(super::existing_hook_vault(ctx, &settings, SHAPE), false);
    let v = vault.as_ref().map(|b| b.path.as_str());
    let extra = [
        ("name", Json::str("git-rutter")),
        ("timeout", Json::Number(30_000.into())),
    ];
    let target = HookTarget {
        path: &settings,
        owner: files::Ownership::Shared,
        shape: SHAPE,
        extra: &extra,
    };
    let bin = ctx.bin.clone();
    super::hook_file_and(ctx, &mut plan, target, v, |doc| match mode {
        Mode::Install => mcp::set_server(doc, "mcpServers", mcp::fields(&bin, v)),
        Mode::Uninstall => Ok(mcp::remove_server(doc, "mcpServers")),
    })?;
    let body = super::instructions_body(ctx, WHEN);
    let context = files::markdown_file(ctx, &home.join("GEMINI.md"), &body, mode, None);
    plan.push(context)?;
    if mode == Mode::Install {
        plan.notes.push(ctx.vault_note(vault.as_ref()));
        plan.notes.push(
            "start a new Gemini CLI session: `/hooks` lists the AfterAgent and SessionStart \
             hooks, `/mcp` shows the server."
                .into(),
        );
    }
    Ok(plan)
}
