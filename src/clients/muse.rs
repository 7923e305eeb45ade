//! Muse Code: the Stop hook and the server entry in `~/.config/muse/settings.json` (Claude-style
//! hook groups and an `mcpServers` map: the public documentation is silent, so this follows the
//! reference's README; docs/clients.md says so), and our block in `~/.config/muse/AGENTS.md`
//! (Muse's models do not write the line from server instructions alone). Muse clears the
//! environment of hooks and servers, so the vault is written into both, and is required.

use super::hooks::{self, Shape};
use super::{command, files, json::Json, mcp, Context, Error, Mode, Plan, Spec};

pub(crate) const SPEC: Spec = Spec {
    name: "muse",
    label: "Muse Code",
    aliases: &[],
    plan,
};

const SHAPE: Shape = Shape::Grouped { event: "Stop" };
const WHEN: &str = "git-rutter records the decisions of Muse Code sessions. These instructions \
                    apply to every session; Muse's Stop hook reads only your final reply, so put \
                    the directive line there.";

fn plan(ctx: &Context, mode: Mode) -> Result<Plan, Error> {
    let mut plan = Plan::new(&SPEC, mode);
    let dir = ctx.home.join(".config/muse");
    let settings = dir.join("settings.json");
    // Installed or not is its folder's to say, whether or not a vault is known.
    plan.presence = Some(dir.clone());
    let vault = ctx.baked_vault(super::existing_hook_vault(ctx, &settings, SHAPE), true);
    let v = match (mode, &vault) {
        (Mode::Install, None) => {
            plan.refusals.push(
                "Muse Code clears the environment of its hooks and servers, so git-rutter must \
                 write the vault into them: pass --vault PATH, or run `git rutter init --global` \
                 in your notes vault first."
                    .into(),
            );
            return Ok(plan);
        }
        (_, v) => v.as_ref().map(|b| b.path.clone()).unwrap_or_default(),
    };
    let bin = ctx.bin.clone();
    let mut handlers = Vec::new();
    let edit = files::json_file(ctx, &settings, files::Ownership::Shared, |doc| {
        handlers = hooks::handlers(&doc.json, SHAPE);
        let mut changes: Vec<_> = match mode {
            Mode::Install => {
                let cmd = command::hook_command(&bin, "muse", Some(&v));
                hooks::install(doc, SHAPE, &cmd, &[])?
                    .iter()
                    .map(hooks::Change::said)
                    .collect()
            }
            Mode::Uninstall => hooks::uninstall(doc, SHAPE, false)
                .iter()
                .map(hooks::Change::said)
                .collect(),
        };
        changes.extend(match mode {
            Mode::Install => {
                let args = ["mcp", "--vault", v.as_str()].map(Json::str).to_vec();
                let fields = vec![("command", Json::str(&bin)), ("args", Json::Array(args))];
                mcp::set_server(doc, "mcpServers", fields)?
            }
            Mode::Uninstall => mcp::remove_server(doc, "mcpServers"),
        });
        Ok(changes)
    });
    plan.hook = Some(super::HookFile {
        path: settings.clone(),
        handlers,
        start_handlers: None,
        readable: edit.is_ok(),
    });
    plan.push(edit)?;
    let body = super::instructions_body(ctx, WHEN);
    plan.push(files::markdown_file(
        ctx,
        &dir.join("AGENTS.md"),
        &body,
        mode,
        None,
    ))?;
    if mode == Mode::Install {
        plan.notes.push(ctx.vault_note(vault.as_ref()));
        plan.notes
            .push("start a new Muse session to load the hook and the server.".into());
    }
    Ok(plan)
}
