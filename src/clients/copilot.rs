//! Copilot CLI: the `agentStop` hook in a file of its own, `~/.copilot/hooks/rutter.json` (or
//! `$COPILOT_HOME`; Copilot's `version: 1` format with a `bash` command), an instruction file
//! `instructions/rutter.instructions.md` (Copilot loads a server's instructions only after one of
//! its tools is called, so the contract must also be an instruction that says up front when it
//! applies), and the server in `mcp-config.json` with the vault in its environment (Copilot
//! passes only `PATH` to servers).

use super::hooks::Shape;
use super::{files, json::Json, mcp, Context, Error, Mode, Plan, Spec};

pub(crate) const SPEC: Spec = Spec {
    name: "copilot",
    label: "Copilot CLI",
    aliases: &[],
    plan,
};

const SHAPE: Shape = Shape::Flat {
    event: "agentStop",
    field: "bash",
};
const FRONT_MATTER: &str = "---\napplyTo: \"**\"\n---\n\n";
const WHEN: &str = "These instructions apply to every Copilot CLI session, in every repository: \
                    git-rutter's hook records the directive lines they ask for.";

/// The vault our server entry in `mcp-config.json` names (`env.LIBRARIAN_VAULT_PATH`).
fn server_vault_of(ctx: &Context, config: &std::path::Path) -> Option<String> {
    let bytes = files::read(ctx, config).ok()??;
    let doc = super::json::parse(std::str::from_utf8(&bytes).ok()?).ok()?;
    let server = doc.get("mcpServers")?.get(mcp::NAME)?;
    let env = server.get("env")?.get(mcp::VAULT_ENV)?;
    env.as_str().map(str::to_string)
}

fn plan(ctx: &Context, mode: Mode) -> Result<Plan, Error> {
    let mut plan = Plan::new(&SPEC, mode);
    let home = ctx.dir("COPILOT_HOME", ".copilot");
    let hooks = home.join("hooks/rutter.json");
    let existing = super::existing_hook_vault(ctx, &hooks, SHAPE);
    let hook_vault = ctx.baked_vault(existing.clone(), false);
    let hv = hook_vault.as_ref().map(|b| b.path.as_str());
    let owner = files::Ownership::Whole {
        shape: SHAPE,
        skeleton: &["version"],
    };
    super::hook_file(ctx, &mut plan, &hooks, owner, SHAPE, hv, &[])?;
    let body = super::instructions_body(ctx, WHEN);
    let instructions = home.join("instructions/rutter.instructions.md");
    plan.push(files::markdown_file(
        ctx,
        &instructions,
        &body,
        mode,
        Some(FRONT_MATTER),
    ))?;
    let config = home.join("mcp-config.json");
    // The vault the server entry already names stands for the hook's when the hook names none
    // (with no vault configured, an installed server is still seen, and kept).
    let existing = existing.or_else(|| server_vault_of(ctx, &config));
    let server_vault = ctx.baked_vault(existing, true);
    match (mode, &server_vault) {
        (Mode::Install, Some(crate::clients::Baked { path: v, .. })) => {
            let fields = vec![
                ("type", Json::str("local")),
                ("command", Json::str(&ctx.bin)),
                ("args", Json::Array(vec![Json::str("mcp")])),
                (
                    "env",
                    Json::Object(vec![(mcp::VAULT_ENV.into(), Json::str(v))]),
                ),
                ("tools", Json::Array(vec![Json::str("*")])),
            ];
            let edit = files::json_file(ctx, &config, files::Ownership::Shared, |doc| {
                mcp::set_server(doc, "mcpServers", fields)
            });
            plan.push(edit)?;
        }
        (Mode::Install, None) => plan.notes.push(
            "the MCP server is not registered yet: Copilot passes only PATH to servers, so the \
             server needs the vault named. Run this again with --vault PATH (or after \
             `git rutter init --global` in your notes vault)."
                .into(),
        ),
        (Mode::Uninstall, _) => {
            let edit = files::json_file(ctx, &config, files::Ownership::Shared, |doc| {
                Ok(mcp::remove_server(doc, "mcpServers"))
            });
            plan.push(edit)?;
        }
    }
    if mode == Mode::Install {
        plan.notes.push(ctx.vault_note(hook_vault.as_ref()));
        plan.notes
            .push("start a new Copilot CLI session to load the hook and the server.".into());
    }
    Ok(plan)
}
