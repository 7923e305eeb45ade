//! Claude Code: the Stop hook in `~/.claude/settings.json` (or `$CLAUDE_CONFIG_DIR`), a
//! `hooks.Stop[]` group like every Claude-style client. Its MCP servers live in `~/.claude.json`,
//! a state file Claude Code rewrites while it runs, so the server is registered by the
//! `claude mcp add` line printed here (read-only, the file tells whether it already is). No
//! instruction file: Claude Code puts the server's instructions in the prompt.

use super::hooks::Shape;
use super::{files, json, mcp, shell, Context, Error, Mode, Plan, Spec};
use std::path::PathBuf;

pub(crate) const SPEC: Spec = Spec {
    name: "claude",
    label: "Claude Code",
    aliases: &[],
    plan,
};

pub(crate) const SHAPE: Shape = Shape::Grouped { event: "Stop" };

/// `settings.json`, where the hook goes.
pub(crate) fn settings(ctx: &Context) -> PathBuf {
    ctx.dir("CLAUDE_CONFIG_DIR", ".claude")
        .join("settings.json")
}

/// `.claude.json`, where `claude mcp add --scope user` keeps servers.
pub(crate) fn state_file(ctx: &Context) -> PathBuf {
    match ctx.vars.iter().find(|(k, _)| k == "CLAUDE_CONFIG_DIR") {
        Some((_, dir)) => dir.join(".claude.json"),
        None => ctx.home.join(".claude.json"),
    }
}

fn plan(ctx: &Context, mode: Mode) -> Result<Plan, Error> {
    let mut plan = Plan::new(&SPEC, mode);
    let path = settings(ctx);
    let vault = ctx.baked_vault(super::existing_hook_vault(ctx, &path, SHAPE), false);
    let v = vault.as_ref().map(|b| b.path.as_str());
    super::hook_file(
        ctx,
        &mut plan,
        &path,
        files::Ownership::Shared,
        SHAPE,
        v,
        &[],
    )?;
    let state = files::read(ctx, &state_file(ctx))
        .ok()
        .flatten()
        .and_then(|b| json::parse(&String::from_utf8_lossy(&b)).ok());
    let registered = state
        .as_ref()
        .is_some_and(|d| mcp::registered(d, "mcpServers", &ctx.bin));
    let present = state
        .as_ref()
        .and_then(|d| d.get("mcpServers"))
        .and_then(|l| l.get(mcp::NAME))
        .is_some();
    let remove = "claude mcp remove rutter --scope user".to_string();
    match mode {
        Mode::Install => {
            plan.notes.push(ctx.vault_note(vault.as_ref()));
            match registered {
                true => plan.notes.push(format!(
                    "the MCP server `rutter` is registered in {}.",
                    ctx.show(&state_file(ctx))
                )),
                false => {
                    let env = v
                        .map(|v| format!("-e {}={} ", mcp::VAULT_ENV, shell(v)))
                        .unwrap_or_default();
                    let add = format!(
                        "claude mcp add rutter --scope user {env}-- {} mcp",
                        shell(&ctx.bin)
                    );
                    plan.commands.push(match present {
                        true => format!("{remove} && {add}"),
                        false => add,
                    });
                }
            }
            // A restart only reads what this run changes.
            if plan.changes_files() {
                plan.notes.push(
                    "restart Claude Code: it reads hooks when a session starts (`/hooks` lists \
                     them, `/mcp` shows the server)."
                        .into(),
                );
            }
        }
        Mode::Uninstall if registered => plan.commands.push(remove),
        Mode::Uninstall => {}
    }
    Ok(plan)
}
