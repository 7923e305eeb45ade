//! Windsurf: the capture hook on Cascade's `post_cascade_response` (its payload carries the
//! whole response since the user's last prompt) in `~/.codeium/windsurf/hooks.json` (flat lists
//! of `{command}`, no `type`; docs.windsurf.com/windsurf/cascade/hooks), the server as
//! `mcpServers.rutter` in `~/.codeium/windsurf/mcp_config.json`, and our block in the global
//! rules file `~/.codeium/windsurf/memories/global_rules.md`, which Cascade applies in every
//! workspace. Windsurf has no session-start hook whose output reaches the model. It is an editor
//! started from a desktop, whose hooks and servers do not see the shell's environment, so the
//! configured vault is written into both.

use super::hooks::Shape;
use super::{files, mcp, Context, Error, FileEdit, Mode, Plan, Problem, Spec};

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
    let edit = files::markdown_file(ctx, &rules, &body, mode, None);
    if let (Ok(e), Mode::Install) = (&edit, mode) {
        plan.problems.extend(past_the_cap(e));
    }
    plan.push(edit)?;
    if mode == Mode::Install {
        plan.notes.push(ctx.vault_note(vault.as_ref()));
        if plan.changes_files() {
            plan.notes
                .push("reload Windsurf (or refresh the MCP panel).".into());
        }
        plan.notes.push(
            "Cascade's hooks run with the workspace as their directory, which names the project; \
             global rules are capped at 6,000 characters, so keep your own rules in that file \
             short."
                .into(),
        );
    }
    Ok(plan)
}

/// How many characters of `global_rules.md` Windsurf reads.
const RULES_CAP: usize = 6_000;

/// Our block in the rules file as written, when it ends past [`RULES_CAP`]: Cascade then sees
/// the capture instructions cut short, or not at all.
fn past_the_cap(edit: &FileEdit) -> Option<Problem> {
    let after = edit.after.as_deref()?;
    let (start, end) = crate::textblock::find(after, files::MD_MARKERS).ok()??;
    let chars = |b: &[u8]| String::from_utf8_lossy(b).chars().count();
    let (from, to) = (chars(&after[..start]), chars(&after[..end]));
    if to <= RULES_CAP {
        return None;
    }
    let seen = match from >= RULES_CAP {
        true => "none",
        false => "only the first part",
    };
    Some(Problem {
        kind: "rules-past-cap",
        message: format!(
            "{} is {} characters with git-rutter's block, which runs from character {} to {}, \
             and Windsurf reads only the first {}: Cascade sees {seen} of the capture \
             instructions, so it writes no directive lines and nothing is captured.",
            edit.shown,
            thousands(chars(after)),
            thousands(from + 1),
            thousands(to),
            thousands(RULES_CAP)
        ),
        todo: format!(
            "Shorten your own rules in that file to at most {} characters (the block takes {}), \
             or move some to workspace rules (`.windsurf/rules/` in a project); `git rutter \
             status` then finds the block whole within what Windsurf reads.",
            thousands(RULES_CAP.saturating_sub(to - from + 1)),
            thousands(to - from)
        ),
    })
}

/// `n` with a comma between thousands, as the message's numbers read best.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
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

    #[test]
    fn a_block_past_the_cap_is_a_problem_saying_how_much_room_to_make() {
        use super::super::files::{FileEdit, MD_MARKERS};
        let block = format!("{}\nbody\n{}\n", MD_MARKERS.start, MD_MARKERS.end);
        let edit = |user: &str| FileEdit {
            path: "r.md".into(),
            shown: "~/r.md".into(),
            before: None,
            after: Some(format!("{user}\n{block}").into_bytes()),
            changes: Vec::new(),
            left: None,
        };
        assert_eq!(super::past_the_cap(&edit("short\n")), None);
        let p = super::past_the_cap(&edit(&"x".repeat(5_990))).unwrap();
        assert!(p.message.contains("only the first part"), "{}", p.message);
        let p = super::past_the_cap(&edit(&"é".repeat(7_000))).unwrap();
        assert!(
            p.message.contains("is 7,056 characters") && p.message.contains("sees none"),
            "{}",
            p.message
        );
        assert_eq!(super::thousands(999), "999");
        assert_eq!(super::thousands(1_234_567), "1,234,567");
    }
}
