//! `git rutter config`: every `rutter.*` setting, its value and where it comes from (as `git
//! config --show-origin` says), and what it does.

use super::{cannot_run, CommandResult, Exit, Ui};
use crate::setup::settings;
use crate::store::settings::Set;
use std::path::PathBuf;

/// List every rutter.* setting with its value, where git read it, and what it does.
///
/// Read by git itself in the vault (or, with no vault, in the current folder), so includes,
/// scopes and `git -c rutter.KEY=VALUE` count as they do for git's own commands. A key set
/// several times shows each value in the order git reads them; the last one is used. Keys
/// git-rutter does not read are listed too, so a typo shows. Change a setting with `git config
/// [--global] rutter.KEY VALUE`. rutter.capture is read in the repository a session runs in,
/// not the vault: run `git rutter config` there to see it.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print the settings as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs the command.
pub fn run(ui: &mut Ui, vault: Option<PathBuf>, args: Args) -> CommandResult {
    let here = std::env::current_dir()?;
    let dir = match crate::vault::resolve(vault.as_deref(), true) {
        Ok(v) => v.root,
        Err(_) => here,
    };
    let set = crate::store::settings::read(&dir).map_err(cannot_run)?;
    if args.json {
        ui.print_json(&json(&dir, &set))?;
    } else {
        ui.print(&text(&dir, &set))?;
    }
    Ok(Exit::Clean)
}

fn json(dir: &std::path::Path, set: &[Set]) -> serde_json::Value {
    let known: Vec<serde_json::Value> = settings::KNOWN
        .iter()
        .map(|k| {
            let values: Vec<&Set> = set
                .iter()
                .filter(|s| s.key.eq_ignore_ascii_case(k.key))
                .collect();
            serde_json::json!({
                "key": k.key,
                "value": values.last().map(|s| &s.value),
                "default": k.default,
                "does": k.does,
                "set": values,
            })
        })
        .collect();
    let unknown: Vec<&Set> = set
        .iter()
        .filter(|s| settings::known(&s.key).is_none())
        .collect();
    serde_json::json!({ "read_in": dir.display().to_string(), "settings": known, "unknown": unknown })
}

fn text(dir: &std::path::Path, set: &[Set]) -> String {
    let mut out = vec![format!(
        "rutter settings, as git reads them in {}:",
        dir.display()
    )];
    for k in settings::KNOWN {
        let values: Vec<&Set> = set
            .iter()
            .filter(|s| s.key.eq_ignore_ascii_case(k.key))
            .collect();
        match values.as_slice() {
            [] if k.default == "(none)" => out.push(format!("  {} is not set", k.key)),
            [] => out.push(format!("  {} is not set (default {})", k.key, k.default)),
            several => {
                for (i, s) in several.iter().enumerate() {
                    let used = if i + 1 < several.len() {
                        ", overridden below"
                    } else {
                        ""
                    };
                    out.push(format!("  {} = {}   ({}{used})", k.key, s.value, origin(s)));
                }
            }
        }
        out.push(format!("      {}", k.does));
    }
    for s in set.iter().filter(|s| settings::known(&s.key).is_none()) {
        out.push(format!(
            "  {} = {}   ({}): not a setting git-rutter reads (a typo?)",
            s.key,
            s.value,
            origin(s)
        ));
    }
    out.join("\n")
}

/// Where a value comes from, as people read it: `global, file:/home/ada/.gitconfig`, or
/// `git -c` for the command line.
fn origin(s: &Set) -> String {
    match s.scope.as_str() {
        "command" => "git -c".to_string(),
        scope => format!("{scope}, {}", s.origin),
    }
}
