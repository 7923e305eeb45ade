//! Antigravity's `agy`: the Stop hook as a named hook `git-rutter` in
//! `~/.gemini/config/hooks.json` (agy's format: top-level hook names, each an object of events),
//! and the always-on rule `rules/rutter-capture.md` (agy keeps server instructions in a file
//! instead of the prompt, so the contract must be a rule). The hook has no environment of its
//! own, so the vault is written into it; the printed `agy mcp add` line names the same vault.

use super::hooks::Shape;
use super::{files, json::Json, mcp, shell, Context, Error, Mode, Plan, Spec};

pub(crate) const SPEC: Spec = Spec {
    name: "agy",
    label: "Antigravity (agy)",
    aliases: &["antigravity"],
    plan,
};

const SHAPE: Shape = Shape::Named {
    name: "git-rutter",
    event: "Stop",
};
const FRONT_MATTER: &str = "---\ntrigger: always_on\n---\n\n";
const WHEN: &str = "This rule applies to every turn: git-rutter's Stop hook records the directive \
                    lines it asks for, from anywhere in the current turn.";

fn plan(ctx: &Context, mode: Mode) -> Result<Plan, Error> {
    let mut plan = Plan::new(&SPEC, mode);
    let dir = ctx.home.join(".gemini/config");
    let hooks = dir.join("hooks.json");
    let vault = ctx.baked_vault(super::existing_hook_vault(ctx, &hooks, SHAPE), true);
    let v = vault.as_ref().map(|b| b.path.as_str());
    let timeout = [("timeout", Json::Number(30.into()))];
    super::hook_file(
        ctx,
        &mut plan,
        &hooks,
        files::Ownership::Shared,
        SHAPE,
        v,
        &timeout,
    )?;
    let body = super::instructions_body(ctx, WHEN);
    let rule = dir.join("rules/rutter-capture.md");
    plan.push(files::markdown_file(
        ctx,
        &rule,
        &body,
        mode,
        Some(FRONT_MATTER),
    ))?;
    match mode {
        Mode::Install => {
            let env = v
                .map(|v| format!("--env {}={} ", mcp::VAULT_ENV, shell(v)))
                .unwrap_or_default();
            plan.commands.push(format!(
                "agy mcp add rutter {env}-- {} mcp",
                shell(&ctx.bin)
            ));
            plan.notes.push(ctx.vault_note(vault.as_ref()));
            plan.notes.push(
                "start a new agy session; capture messages go to ~/.gemini/antigravity-cli/log/."
                    .into(),
            );
        }
        Mode::Uninstall => plan.commands.push("agy mcp remove rutter".into()),
    }
    Ok(plan)
}
