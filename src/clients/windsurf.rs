//! Windsurf: the capture hook on Cascade's `post_cascade_response` (its payload carries the
//! whole response since the user's last prompt) in `~/.codeium/windsurf/hooks.json` (flat lists
//! of `{command}`, no `type`; docs.windsurf.com/windsurf/cascade/hooks), the server as
//! `mcpServers.rutter` in `~/.codeium/windsurf/mcp_config.json`, and our block in the global
//! rules file `~/.codeium/windsurf/memories/global_rules.md`, which Cascade applies in every
//! workspace. Windsurf has no session-start hook whose output reaches the model. It is an editor
//! started from a desktop, whose hooks and servers do not see the shell's environment, so the
//! configured vault is written into both.

use super::hooks::Shape;
use super::{files, mcp, Context, Error, Mode, Plan, Spec};

pub(crate) const SPEC: Spec = Spec {
    name: "windsurf",
    label: "Windsurf",
    aliases: &["cascade"],
    plan,
};

const SHAPE: Shape = Shape::Plain {
    event: "post_cascade_response",
};
const WHEN: &str = "These rules apply to every Cascade conversation, in every workspace: \
                    git-rutter's post_cascade_response hook records the directive lines they \
                    ask for from each response.";

fn plan(ctx: &Context, mode: Mode) -> Result<Plan, Error> {
    let mut plan = Plan::new(&SPEC, mode);
    let home = ctx.home.join(".codeium/windsurf");
    let hooks = home.join("hooks.json");
    let vault = ctx.baked_vault(super::existing_hook_vault(ctx, &hooks, SHAPE), true);
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
    let config = home.join("mcp_config.json");
    let edit = files::json_file(ctx, &config, files::Ownership::Shared, |doc| match mode {
        Mode::Install => mcp::set_server(doc, "mcpServers", mcp::fields(&ctx.bin, v)),
        Mode::Uninstall => Ok(mcp::remove_server(doc, "mcpServers")),
    });
    plan.push(edit)?;
    let body = super::instructions_body(ctx, WHEN);
    let rules = home.join("memories/global_rules.md");
    plan.push(files::markdown_file(ctx, &rules, &body, mode, None))?;
    if mode == Mode::Install {
        plan.notes.push(ctx.vault_note(vault.as_ref()));
        plan.notes.push(
            "reload Windsurf (or refresh the MCP panel): Cascade's hooks run with the \
             workspace as their directory, which names the project; global rules are capped at \
             6,000 characters, so keep your own rules in that file short."
                .into(),
        );
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    /// Windsurf reads only the first 6,000 characters of `global_rules.md`: our block leaves the
    /// user room for rules of their own.
    #[test]
    fn the_block_fits_in_windsurfs_global_rules_with_room_to_spare() {
        let body = format!(
            "{}\n\n{}",
            super::WHEN,
            crate::contract::instructions_in_file("the user")
        );
        assert!(body.chars().count() < 4_500, "{}", body.chars().count());
    }
}
