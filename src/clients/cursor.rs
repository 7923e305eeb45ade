//! Cursor: the capture hook on `afterAgentResponse` (its payload carries the agent's final text)
//! and the session-start hook on `sessionStart` (Cursor adds its `additional_context` to the
//! conversation), both in `~/.cursor/hooks.json` (`version: 1`, flat lists of `{type, command}`;
//! cursor.com/docs/hooks), and the server as `mcpServers.rutter` in `~/.cursor/mcp.json`.
//!
//! Cursor reads no rule file outside a project (its global User Rules live in its settings, and
//! `~/.cursor/rules` is not loaded), so there is no instruction file: the session-start hook
//! hands every new conversation the capture instructions ([`session_instructions`]) ahead of the
//! brief. Cursor is an editor started from a desktop, whose hooks and servers do not see the
//! shell's `LIBRARIAN_VAULT_PATH`, so the configured vault is written into both.

use super::hooks::Shape;
use super::{files, json::Json, mcp, Context, Error, Mode, Plan, Spec};

pub(crate) const SPEC: Spec = Spec {
    name: "cursor",
    label: "Cursor",
    aliases: &[],
    plan,
};

const SHAPE: Shape = Shape::Flat {
    event: "afterAgentResponse",
    field: "command",
};
const WHEN: &str = "These instructions apply to every Cursor conversation: git-rutter's \
                    afterAgentResponse hook records the directive lines they ask for from each \
                    of your replies.";

/// The capture instructions the session-start hook hands a Cursor conversation, with `label`'s
/// name for whose work it is.
pub(crate) fn session_instructions(label: &str) -> String {
    format!("{WHEN}\n\n{}", crate::contract::instructions_in_file(label))
}

fn plan(ctx: &Context, mode: Mode) -> Result<Plan, Error> {
    let mut plan = Plan::new(&SPEC, mode);
    let home = ctx.home.join(".cursor");
    let hooks = home.join("hooks.json");
    let existing = super::existing_hook_vault(ctx, &hooks, SHAPE);
    let vault = ctx.baked_vault(existing, true);
    let v = vault.as_ref().map(|b| b.path.as_str());
    let timeout = [("timeout", Json::Number(30.into()))];
    // `version: 1` comes with our handler when the file had none; alone, it goes with it.
    let owner = files::Ownership::SharedFormat {
        skeleton: &["version"],
    };
    super::hook_file(ctx, &mut plan, &hooks, owner, SHAPE, v, &timeout)?;
    let config = home.join("mcp.json");
    let edit = files::json_file(ctx, &config, files::Ownership::Shared, |doc| match mode {
        Mode::Install => mcp::set_server(doc, "mcpServers", mcp::fields(&ctx.bin, v)),
        Mode::Uninstall => Ok(mcp::remove_server(doc, "mcpServers")),
    });
    plan.push(edit)?;
    if mode == Mode::Install {
        plan.notes.push(ctx.vault_note(vault.as_ref()));
        plan.notes.push(
            "Cursor reads no rule file outside a project: its sessionStart hook hands each new \
             conversation the capture instructions with the brief. Cursor reloads hooks.json by \
             itself; Settings → Hooks lists both hooks, Settings → MCP shows the server."
                .into(),
        );
    }
    Ok(plan)
}
