//! Each client's registration as `status` reports it, read through `install-hook`'s own plan
//! run as a dry run: the plan says which Stop handlers the hook file holds (ours, the TypeScript
//! reference's) and whether installing would still change any file; a client is registered
//! when it would not. The plan is made for the binary the hook already runs (when that one
//! exists), so running `status` from another copy of git-rutter does not count as stale.

use crate::clients::change::Change;
use crate::clients::command::{self, Kind};
use crate::clients::{self, json, Context, FileEdit, Mode, Plan, Spec};
use serde::Serialize;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Clients whose MCP server list only the client's own command shows (`… mcp list`).
const MCP_UNSEEN: [&str; 2] = ["grok", "agy"];

/// One client's registration.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ClientState {
    pub client: &'static str,
    pub label: &'static str,
    /// The client's configuration folder exists (it looks installed).
    pub installed: bool,
    pub hook: Hook,
    pub mcp: Mcp,
    /// The session-start brief's hook (spec/context.md): `registered` or `missing`; `null` for a
    /// client git-rutter registers none with.
    pub session_start: Option<&'static str>,
    /// `install-hook` would change no file (and refuses nothing).
    pub up_to_date: bool,
    /// What `install-hook` would still change, one line per file.
    pub would_change: Vec<String>,
    /// Commands `install-hook` asks the user to run (MCP registrations in the client's state).
    pub commands: Vec<String>,
    /// Why `install-hook` would refuse, if it would.
    pub refusals: Vec<String>,
    /// What keeps the registration from working that `install-hook` cannot mend (findings).
    #[serde(skip)]
    pub problems: Vec<clients::Problem>,
}

/// The Stop hook as found in the client's hook file.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Hook {
    /// `registered`, `missing`, `reference` (only the TypeScript reference's) or `unreadable`.
    pub state: &'static str,
    pub file: Option<String>,
    /// Our handler's command.
    pub command: Option<String>,
    /// The vault written into our command (`--vault`), if any.
    pub vault: Option<String>,
    /// The program our command runs, and whether it exists and is executable.
    pub program: Option<String>,
    pub program_ok: bool,
    /// The TypeScript reference's handler, when one is still registered.
    pub reference: Option<String>,
}

/// The MCP server `rutter` as found.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Mcp {
    /// `registered`, `missing`, `reference` (the TypeScript server), `foreign` (another
    /// program called `rutter`) or `unknown` (kept where git-rutter cannot read it).
    pub state: &'static str,
    /// Where it is (or would be) registered.
    pub place: Option<String>,
}

/// Inspects every client.
pub(crate) fn inspect(ctx: &Context) -> Vec<ClientState> {
    clients::CLIENTS.iter().map(|s| one(ctx, s)).collect()
}

fn one(ctx: &Context, spec: &'static Spec) -> ClientState {
    let first = match (spec.plan)(ctx, Mode::Install) {
        Ok(p) => p,
        Err(e) => return unreadable(spec, e.to_string()),
    };
    let ours = first.hook.as_ref().and_then(|h| {
        h.handlers
            .iter()
            .find(|(k, _)| matches!(k, Kind::Ours { .. }))
            .cloned()
    });
    let program = ours.as_ref().and_then(|(_, c)| program_of(c));
    // Judge the registration against the binary the hook runs, when it is a git-rutter.
    let rebased = program
        .as_ref()
        .filter(|p| p.is_absolute() && executable(p) && p.to_str() != Some(&ctx.bin))
        .filter(|p| p.file_name().is_some_and(|n| n == "git-rutter"))
        .and_then(|p| {
            let mut c = ctx.clone();
            c.bin = p.to_str()?.to_string();
            (spec.plan)(&c, Mode::Install).ok()
        });
    let plan = rebased.unwrap_or(first);
    let hook = hook_of(ctx, &plan, ours, program);
    let mcp = mcp_of(ctx, spec, &plan);
    let session_start = plan
        .hook
        .as_ref()
        .and_then(|h| h.start_handlers.as_ref())
        .map(
            |hs| match hs.iter().any(|(k, _)| matches!(k, Kind::Ours { .. })) {
                true => "registered",
                false => "missing",
            },
        );
    ClientState {
        client: spec.name,
        label: spec.label,
        installed: plan.looks_installed(),
        hook,
        mcp,
        session_start,
        up_to_date: plan.refusals.is_empty() && !plan.changes_files(),
        would_change: plan
            .edits
            .iter()
            .filter(|e| e.changed())
            .map(|e| {
                let plan: Vec<String> = e.changes.iter().map(Change::planned).collect();
                format!("{}: {}", e.shown, plan.join("; "))
            })
            .collect(),
        commands: plan.commands.clone(),
        refusals: plan.refusals.clone(),
        problems: plan.problems.clone(),
    }
}

fn unreadable(spec: &'static Spec, why: String) -> ClientState {
    ClientState {
        client: spec.name,
        label: spec.label,
        installed: true,
        hook: Hook {
            state: "unreadable",
            file: None,
            command: None,
            vault: None,
            program: None,
            program_ok: false,
            reference: None,
        },
        mcp: Mcp {
            state: "unknown",
            place: None,
        },
        session_start: None,
        up_to_date: false,
        would_change: Vec::new(),
        commands: Vec::new(),
        refusals: vec![why],
        problems: Vec::new(),
    }
}

fn hook_of(
    ctx: &Context,
    plan: &Plan,
    ours: Option<(Kind, String)>,
    program: Option<PathBuf>,
) -> Hook {
    let handlers = plan.hook.as_ref().map(|h| h.handlers.as_slice());
    let reference = handlers
        .unwrap_or_default()
        .iter()
        .find(|(k, _)| *k == Kind::Reference)
        .map(|(_, c)| c.clone());
    let file_refused = plan.hook.as_ref().is_some_and(|h| !h.readable);
    let state = match (&ours, &reference, file_refused) {
        (Some(_), _, _) => "registered",
        (None, Some(_), _) => "reference",
        (None, None, true) => "unreadable",
        (None, None, false) => "missing",
    };
    let (vault, command) = match ours {
        Some((Kind::Ours { vault }, c)) => (vault, Some(c)),
        _ => (None, None),
    };
    Hook {
        state,
        file: plan.hook.as_ref().map(|h| ctx.show(&h.path)),
        command,
        vault,
        program_ok: program.as_deref().is_some_and(executable),
        program: program.map(|p| p.display().to_string()),
        reference,
    }
}

/// The program a hook command of ours runs: the word naming git-rutter (or the
/// `rutter-stop.sh` wrapper, or `git` in `git rutter capture`), looked up on `PATH` when it
/// holds no `/`.
pub(crate) fn program_of(command: &str) -> Option<PathBuf> {
    let words = command::split(command);
    let base = command::base;
    let word = words
        .iter()
        .find(|w| matches!(base(w), "git-rutter" | "rutter-stop.sh"))
        .or_else(|| {
            words
                .windows(2)
                .find(|w| base(&w[0]) == "git" && w[1] == "rutter")
                .map(|w| &w[0])
        })
        // A command git-rutter wrote from a binary of another name: its first word.
        .or_else(|| {
            words
                .first()
                .filter(|_| matches!(command::classify(command), command::Kind::Ours { .. }))
        })?;
    if word.contains('/') {
        return Some(PathBuf::from(word));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join(word))
        .find(|p| executable(p))
        .or_else(|| Some(PathBuf::from(word)))
}

/// Whether `p` is a regular file someone may execute.
fn executable(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn mcp_of(ctx: &Context, spec: &Spec, plan: &Plan) -> Mcp {
    let found = plan.edits.iter().find_map(|e| server_in(e).map(|s| (s, e)));
    if let Some((state, edit)) = found {
        return Mcp {
            state,
            place: Some(edit.shown.clone()),
        };
    }
    if spec.name == "claude" {
        let file = clients::claude::state_file(ctx);
        let state = clients::files::read(ctx, &file)
            .ok()
            .flatten()
            .and_then(|b| json::parse(&String::from_utf8_lossy(&b)).ok())
            .and_then(|d| json_server(&d))
            .unwrap_or("missing");
        return Mcp {
            state,
            place: Some(ctx.show(&file)),
        };
    }
    let state = match MCP_UNSEEN.contains(&spec.name) {
        true => "unknown",
        false => "missing",
    };
    Mcp { state, place: None }
}

/// The state of the server `rutter` in a file of the plan, if the file names one.
fn server_in(edit: &FileEdit) -> Option<&'static str> {
    let text = String::from_utf8_lossy(edit.before.as_deref()?).into_owned();
    if edit.path.extension().is_some_and(|e| e == "toml") {
        let doc: toml_edit::DocumentMut = text.parse().ok()?;
        let servers = doc.get("mcp_servers")?.as_table_like()?;
        let state = |t: &toml_edit::Item| {
            let cmd = t
                .get("command")
                .and_then(|c| c.as_str())
                .unwrap_or_default();
            let args: Vec<&str> = t
                .get("args")
                .and_then(|a| a.as_array())
                .map(|a| a.iter().filter_map(|v| v.as_str()).collect())
                .unwrap_or_default();
            classify_server(cmd, &args.join(" "))
        };
        // Ours under `rutter`; else the TypeScript reference's under any name.
        return match servers.get("rutter") {
            Some(t) => Some(state(t)),
            None => servers
                .iter()
                .filter(|(k, _)| k.contains("rutter"))
                .map(|(_, t)| state(t))
                .find(|s| *s == "reference"),
        };
    }
    json_server(&json::parse(&text).ok()?)
}

/// The server `rutter` in a JSON config: `mcpServers.rutter`, or OpenCode's `mcp.rutter`.
fn json_server(doc: &json::Json) -> Option<&'static str> {
    let entry = ["mcpServers", "mcp"]
        .iter()
        .find_map(|k| doc.get(k)?.get(clients::mcp::NAME))?;
    let line = clients::mcp::command_line(entry);
    Some(classify_server(clients::mcp::program(entry), &line))
}

fn classify_server(command: &str, args: &str) -> &'static str {
    if command::is_our_server(command) {
        "registered"
    } else if command::is_reference_server(&format!("{command} {args}")) {
        "reference"
    } else {
        "foreign"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_program_of_a_hook_command() {
        assert_eq!(
            program_of("'/a b/git-rutter' capture --client claude"),
            Some(PathBuf::from("/a b/git-rutter"))
        );
        assert_eq!(
            program_of("LIBRARIAN_VAULT_PATH=/v /x/git-rutter capture"),
            Some(PathBuf::from("/x/git-rutter"))
        );
        // The plugin's command: the word naming git-rutter, looked up on PATH as the shell does.
        let plugin = program_of("command -v git-rutter >/dev/null && git-rutter capture").unwrap();
        assert_eq!(plugin.file_name().unwrap(), "git-rutter");
        assert_eq!(
            program_of("/r/hooks/rutter-stop.sh --client codex"),
            Some(PathBuf::from("/r/hooks/rutter-stop.sh"))
        );
        assert!(program_of("git rutter capture").is_some_and(|p| p.ends_with("git")));
        assert_eq!(program_of("afplay done.wav"), None);
        assert_eq!(program_of(""), None);
    }

    #[test]
    fn servers_are_told_apart() {
        assert_eq!(classify_server("/x/git-rutter", "mcp"), "registered");
        assert_eq!(classify_server("npx", "-y rutter-memory"), "reference");
        assert_eq!(classify_server("/opt/other", ""), "foreign");
    }
}
