//! Grok: the Stop hook in a file of its own, `~/.grok/hooks/rutter.json` (or `$GROK_HOME`;
//! Grok merges every `hooks/*.json`), with a timeout above Grok's 5-second default. The file is
//! written whole and refused when it holds anything else. The server is registered by the
//! printed `grok mcp add` line; Grok reads the capture contract from the server's instructions.

use super::hooks::Shape;
use super::{files, json::Json, shell, Context, Error, Mode, Plan, Spec};

pub(crate) const SPEC: Spec = Spec {
    name: "grok",
    label: "Grok",
    aliases: &[],
    plan,
};

const SHAPE: Shape = Shape::Grouped { event: "Stop" };

fn plan(ctx: &Context, mode: Mode) -> Result<Plan, Error> {
    let mut plan = Plan::new(&SPEC, mode);
    let path = ctx.dir("GROK_HOME", ".grok").join("hooks/rutter.json");
    let vault = ctx.baked_vault(super::existing_hook_vault(ctx, &path, SHAPE), false);
    let v = vault.as_ref().map(|b| b.path.as_str());
    let owner = files::Ownership::Whole {
        shape: SHAPE,
        skeleton: &[],
    };
    let timeout = [("timeout", Json::Number(30.into()))];
    super::hook_file(ctx, &mut plan, &path, owner, SHAPE, v, &timeout)?;
    match mode {
        Mode::Install => {
            let vault_arg = v
                .map(|v| format!(" --vault {}", shell(v)))
                .unwrap_or_default();
            plan.commands.push(format!(
                "grok mcp add rutter -- {} mcp{vault_arg}",
                shell(&ctx.bin)
            ));
            plan.notes.push(ctx.vault_note(vault.as_ref()));
            plan.notes.push(
                "Grok's hook reads only the final assistant message: the directive line belongs \
                 at the end of the final reply. Start a new Grok session to load the hook."
                    .into(),
            );
        }
        Mode::Uninstall => plan.commands.push("grok mcp remove rutter".into()),
    }
    Ok(plan)
}
