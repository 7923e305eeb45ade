//! The AI clients git-rutter registers with (`install-hook` / `uninstall-hook`): one module per
//! client holding its data (file locations, honouring the client's own `$…_HOME` variable; the
//! hook entry; the instruction text it needs; where its MCP server is registered), one const
//! table of them ([`CLIENTS`], atuin's habit), and a small shared layer: JSON configs edited in
//! place ([`json`], [`hooks`], [`mcp`]), marked blocks in instruction files ([`files`] over
//! [`crate::textblock`]), and how our own and the TypeScript reference's commands are recognised
//! ([`command`]).
//!
//! Planning never writes: a client's plan is the list of file edits (bytes before and after),
//! commands for the user to run, and refusals. The command line prints or applies it.

pub(crate) mod agy;
pub(crate) mod change;
pub(crate) mod claude;
pub(crate) mod codex;
pub(crate) mod command;
pub(crate) mod copilot;
pub(crate) mod cursor;
pub(crate) mod files;
pub(crate) mod gemini;
pub(crate) mod githooks;
pub(crate) mod grok;
pub(crate) mod guard;
pub(crate) mod hooks;
pub(crate) mod json;
pub(crate) mod jsonedit;
pub(crate) mod mcp;
pub(crate) mod muse;
pub(crate) mod opencode;
pub(crate) mod windsurf;

use crate::vault::{self, VaultSource};
use change::Change;
use std::path::{Path, PathBuf};

pub(crate) use command::shell_word as shell;
pub(crate) use files::FileEdit;

/// A supported client.
#[derive(Debug)]
pub(crate) struct Spec {
    /// The label capture records (`--client NAME`).
    pub name: &'static str,
    /// The client's name as people know it.
    pub label: &'static str,
    /// Other names accepted on the command line.
    pub aliases: &'static [&'static str],
    /// Plans an install or an uninstall.
    pub plan: fn(&Context, Mode) -> Result<Plan, Error>,
}

/// Every client `install-hook` knows, in the order the docs list them.
pub(crate) const CLIENTS: [Spec; 10] = [
    claude::SPEC,
    codex::SPEC,
    grok::SPEC,
    copilot::SPEC,
    agy::SPEC,
    muse::SPEC,
    cursor::SPEC,
    gemini::SPEC,
    opencode::SPEC,
    windsurf::SPEC,
];

/// The client called `name` (or one of its aliases).
pub(crate) fn find(name: &str) -> Option<&'static Spec> {
    CLIENTS
        .iter()
        .find(|c| c.name == name || c.aliases.contains(&name))
}

/// Install or uninstall.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Install,
    Uninstall,
}

/// Why a plan could not be made.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    /// A file git-rutter will not touch; the message says why and what to do.
    #[error("{0}")]
    Refused(String),
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Why a client's config document cannot take our edit: a key holds what the client's own
/// format does not, or our name is taken. The file's refusal wraps it (`FILE: WHY; fix it by
/// hand, then run again (nothing was changed).`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum EditError {
    /// A key holds a value of another type than the client expects.
    #[error("`{0}` is not of the type the client expects")]
    WrongType(String),
    /// A key holds no table (TOML) or no object (JSON).
    #[error("`{key}` is not {what}")]
    NotA { key: String, what: &'static str },
    /// The entry of our name runs another program.
    #[error("`{key}` runs `{was}`, which is not git-rutter; rename or remove that {what}")]
    NotOurs {
        key: String,
        was: String,
        what: &'static str,
    },
}

/// Everything a plan depends on, gathered once from the environment.
#[derive(Debug, Clone)]
pub(crate) struct Context {
    pub home: PathBuf,
    /// The client home variables that are set (`CODEX_HOME`, …), by name.
    pub vars: Vec<(String, PathBuf)>,
    /// The absolute path of this binary, as the hooks will run it.
    pub bin: String,
    /// `--vault`, canonicalised.
    pub vault_flag: Option<PathBuf>,
    /// The vault a hook would find on its own (environment, then git config), and from where.
    pub configured: Option<(PathBuf, VaultSource)>,
    /// Whose work the instruction files speak of (`LIBRARIAN_USER_LABEL`).
    pub user_label: String,
    /// Reads a client's file through a symbolic link (a dotfiles manager's), as the client
    /// does: `status` inspects, never writes. Install and uninstall never edit through one.
    pub follow_links: bool,
}

/// The client home variables a plan may honour (`GEMINI_CLI_HOME` stands for the home directory
/// Gemini CLI keeps `.gemini` in; `XDG_CONFIG_HOME` for the folder OpenCode keeps `opencode` in).
pub(crate) const HOME_VARS: [&str; 6] = [
    "CLAUDE_CONFIG_DIR",
    "CODEX_HOME",
    "GROK_HOME",
    "COPILOT_HOME",
    "GEMINI_CLI_HOME",
    "XDG_CONFIG_HOME",
];

impl Context {
    /// `$var` when set and non-empty, else `~/default`.
    pub(crate) fn dir(&self, var: &str, default: &str) -> PathBuf {
        self.var(var).unwrap_or_else(|| self.home.join(default))
    }

    /// `$var/sub` when `var` is set and non-empty, else `~/default/sub`: a client whose variable
    /// names the folder its own folder lives in.
    pub(crate) fn dir_under(&self, var: &str, default: &str, sub: &str) -> PathBuf {
        self.var(var)
            .unwrap_or_else(|| self.home.join(default))
            .join(sub)
    }

    fn var(&self, var: &str) -> Option<PathBuf> {
        self.vars
            .iter()
            .find(|(k, _)| k == var)
            .map(|(_, v)| v.clone())
    }

    /// A path as shown to the user: `~/…` under the home directory.
    pub(crate) fn show(&self, p: &Path) -> String {
        match p.strip_prefix(&self.home) {
            Ok(rest) => format!("~/{}", rest.display()),
            Err(_) => p.display().to_string(),
        }
    }

    /// The vault to bake into a hook: `--vault`; else, when our hook already names one, the
    /// vault configured now if there is one (so a vault switch, `init --global` elsewhere, moves
    /// the hook with it), else the one it names; else (when `required`) the configured one.
    /// `None` leaves the vault to the hook's environment.
    pub(crate) fn baked_vault(&self, existing: Option<String>, required: bool) -> Option<Baked> {
        if let Some(v) = &self.vault_flag {
            return Some(Baked::new(v.display().to_string(), "from --vault".into()));
        }
        let configured = self.configured.as_ref().map(|(p, src)| {
            Baked::new(p.display().to_string(), format!("from {}", src.describe()))
        });
        match (existing, configured) {
            (Some(old), Some(now)) if !same_vault(&old, &now.path) => Some(Baked {
                moved_from: Some(old),
                ..now
            }),
            (Some(old), _) => Some(Baked::new(old, "kept from the installed hook".into())),
            (None, Some(now)) if required => Some(now),
            _ => None,
        }
    }

    /// The note that says which vault a hook will use.
    pub(crate) fn vault_note(&self, baked: Option<&Baked>) -> String {
        match (baked, &self.configured) {
            (
                Some(Baked {
                    path,
                    why,
                    moved_from: Some(old),
                }),
                _,
            ) => format!(
                "vault: {path} ({why}), written into the hook command in place of {old}, the \
                 vault the installed hook named: captures now go to {path}. To keep {old}, run \
                 this again with `--vault {}`.",
                crate::argv::quote(old)
            ),
            (Some(b), _) => format!(
                "vault: {} ({}), written into the hook command.",
                b.path, b.why
            ),
            (None, Some((p, src))) => format!(
                "vault: the hook finds {} through {} when it runs.",
                p.display(),
                src.describe()
            ),
            (None, None) => "no vault is configured yet: the hook will capture nothing until you \
                             run `git rutter init --global` in your notes vault (or run this \
                             again with --vault PATH)."
                .into(),
        }
    }
}

/// The vault written into a hook command, why that one, and the vault the installed hook named
/// when this one replaces it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Baked {
    pub path: String,
    pub why: String,
    pub moved_from: Option<String>,
}

impl Baked {
    fn new(path: String, why: String) -> Baked {
        Baked {
            path,
            why,
            moved_from: None,
        }
    }
}

/// What `install-hook` or `uninstall-hook` would do for one client.
#[derive(Debug)]
pub(crate) struct Plan {
    pub client: &'static Spec,
    pub mode: Mode,
    /// Files to write or remove (and those already as they should be).
    pub edits: Vec<FileEdit>,
    /// Commands the user runs by hand (MCP registrations kept in files the client owns).
    pub commands: Vec<String>,
    /// What else the user should know: the vault, trust steps, restarts.
    pub notes: Vec<String>,
    /// Files left alone, with why and what to do; a plan with any writes nothing.
    pub refusals: Vec<String>,
    /// What keeps the registration from working once written, that writing cannot mend (the
    /// user's Windsurf rules pushing our block past what Windsurf reads); `status` reports each.
    pub problems: Vec<Problem>,
    /// The hook file and the Stop handlers it held before the plan, for `status`.
    pub hook: Option<HookFile>,
    /// What exists once the client has run here, when its hook file's folder says nothing
    /// (Gemini CLI shares `~/.gemini` with agy).
    pub presence: Option<PathBuf>,
}

impl Plan {
    /// Whether the client looks installed here: its hook file's folder (the folder above
    /// `hooks/` for clients with a hooks folder, or [`Plan::presence`]) or any of its files
    /// exists.
    pub(crate) fn looks_installed(&self) -> bool {
        let marker = match &self.presence {
            Some(p) => p.exists(),
            None => self.config_dir().is_some_and(Path::is_dir),
        };
        marker || self.edits.iter().any(|e| e.before.is_some())
    }

    /// The folder the client's configuration lives in, as the user reads it (for a message).
    pub(crate) fn home_folder(&self, ctx: &Context) -> Option<String> {
        match &self.presence {
            Some(p) => Some(ctx.show(p)),
            None => self.config_dir().map(|d| ctx.show(d)),
        }
    }

    /// The hook file's folder, or the one above `hooks/` for clients with a hooks folder.
    fn config_dir(&self) -> Option<&Path> {
        let parent = self.hook.as_ref()?.path.parent()?;
        match parent.file_name() {
            Some(n) if n == "hooks" => parent.parent(),
            _ => Some(parent),
        }
    }
}

/// Something that keeps a written registration from working, as a status finding says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Problem {
    /// The finding's stable name.
    pub kind: &'static str,
    pub message: String,
    pub todo: String,
}

/// A client's hook file as found.
#[derive(Debug, Clone)]
pub(crate) struct HookFile {
    pub path: PathBuf,
    /// Every Stop handler in it (ours, the TypeScript reference's, others'), with its command.
    pub handlers: Vec<(command::Kind, String)>,
    /// Every SessionStart handler in it, for a client whose brief git-rutter registers there
    /// (`None`: the client has no session-start hook git-rutter uses).
    pub start_handlers: Option<Vec<(command::Kind, String)>>,
    /// It could be read and parsed (a refused file lists no handlers).
    pub readable: bool,
}

impl Plan {
    pub(crate) fn new(client: &'static Spec, mode: Mode) -> Plan {
        Plan {
            client,
            mode,
            edits: Vec::new(),
            commands: Vec::new(),
            notes: Vec::new(),
            refusals: Vec::new(),
            problems: Vec::new(),
            hook: None,
            presence: None,
        }
    }

    /// Adds a file edit, or its refusal; `Io` errors stop the plan.
    pub(crate) fn push(&mut self, edit: Result<FileEdit, Error>) -> Result<(), Error> {
        match edit {
            Ok(e) => self.edits.push(e),
            Err(Error::Refused(why)) => self.refusals.push(why),
            Err(e) => return Err(e),
        }
        Ok(())
    }

    /// What uninstall leaves for the user to take out by hand, one sentence each.
    pub(crate) fn left(&self, done: bool) -> Vec<String> {
        self.edits
            .iter()
            .filter_map(|e| Some(e.left.as_ref()?.said(&e.shown, done)))
            .collect()
    }

    /// Whether applying the plan would change any file.
    pub(crate) fn changes_files(&self) -> bool {
        self.edits.iter().any(FileEdit::changed)
    }
}

/// A JSON hook file to plan: where it is, who else writes in it, where it keeps its Stop
/// handlers, and the fields a new Stop handler gets (a timeout).
#[derive(Clone, Copy)]
pub(crate) struct HookTarget<'a> {
    pub path: &'a Path,
    pub owner: files::Ownership,
    pub shape: hooks::Shape,
    pub extra: &'a [(&'a str, json::Json)],
}

/// Plans our Stop hook in the JSON file `path`, running this binary with `vault` baked in (or
/// not); on uninstall, removes it and says when a TypeScript-reference hook stays behind.
pub(crate) fn hook_file(
    ctx: &Context,
    plan: &mut Plan,
    path: &Path,
    owner: files::Ownership,
    shape: hooks::Shape,
    vault: Option<&str>,
    extra: &[(&str, json::Json)],
) -> Result<(), Error> {
    let target = HookTarget {
        path,
        owner,
        shape,
        extra,
    };
    hook_file_and(ctx, plan, target, vault, |_| Ok(Vec::new()))
}

/// [`hook_file`], with `more` edits of the same document in the same plan (the MCP server of a
/// client that keeps it beside its hooks).
pub(crate) fn hook_file_and(
    ctx: &Context,
    plan: &mut Plan,
    target: HookTarget,
    vault: Option<&str>,
    more: impl FnOnce(&mut jsonedit::Doc) -> Result<Vec<Change>, EditError>,
) -> Result<(), Error> {
    let (mode, client) = (plan.mode, plan.client.name);
    let HookTarget {
        path,
        owner,
        shape,
        extra,
    } = target;
    let mut reference_left = false;
    let mut handlers = Vec::new();
    let start = hooks::start_shape(client);
    let mut start_handlers = start.map(|_| Vec::new());
    let edit = files::json_file(ctx, path, owner, |doc| {
        handlers = hooks::handlers(&doc.json, shape);
        let mut changes = match mode {
            Mode::Install => {
                let cmd = command::hook_command(&ctx.bin, client, vault);
                hooks::install(doc, shape, &cmd, extra)?
            }
            Mode::Uninstall => hooks::uninstall(doc, shape, false),
        };
        if let Some(start) = start {
            start_handlers = Some(hooks::handlers(&doc.json, start));
            changes.extend(match mode {
                Mode::Install => {
                    let cmd = command::start_command(&ctx.bin, client, vault);
                    hooks::install(doc, start, &cmd, &[])?
                }
                Mode::Uninstall => hooks::uninstall(doc, start, false),
            });
        }
        reference_left = hooks::has_reference(&doc.json, shape);
        let mut changes: Vec<Change> = changes.iter().map(hooks::Change::said).collect();
        changes.extend(more(doc)?);
        Ok(changes)
    });
    let customised = handlers
        .iter()
        .chain(start_handlers.iter().flatten())
        .find(|(k, c)| matches!(k, command::Kind::Ours { .. }) && command::is_customised(c))
        .map(|(_, c)| c.clone());
    plan.hook = Some(HookFile {
        path: path.to_path_buf(),
        handlers,
        start_handlers,
        readable: edit.is_ok(),
    });
    if let (Some(c), Mode::Install) = (customised, mode) {
        plan.notes.push(format!(
            "{} holds your own version of the hook command ({c}); it is kept as you wrote it. \
             For git-rutter's own, delete that entry and run again.",
            ctx.show(path)
        ));
    }
    if reference_left {
        plan.notes.push(format!(
            "{} still registers the TypeScript rutter hook; git-rutter did not write it, so it \
             stays. Remove that entry by hand if you no longer use the TypeScript version.",
            ctx.show(path)
        ));
    }
    plan.push(edit)
}

/// The vault already written into our hook in the JSON file `path`, if any.
pub(crate) fn existing_hook_vault(
    ctx: &Context,
    path: &Path,
    shape: hooks::Shape,
) -> Option<String> {
    hooks::existing_vault(&json_doc(ctx, path)?, shape)
}

/// A client's JSON file as [`files::read`] reads it, parsed; `None` when it is absent, refused
/// or not JSON.
pub(crate) fn json_doc(ctx: &Context, path: &Path) -> Option<json::Json> {
    let bytes = files::read(ctx, path).ok()??;
    json::parse(std::str::from_utf8(&bytes).ok()?).ok()
}

/// Whether two vault paths name the same folder (a path that no longer resolves is another
/// vault, as a hook would find nothing there).
pub(crate) fn same_vault(a: &str, b: &str) -> bool {
    match (Path::new(a).canonicalize(), Path::new(b).canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

/// The text of our block in a client's instruction file: `when` (a line saying when it applies,
/// which some clients need to follow it) and the capture contract the MCP server sends, from
/// its one source.
pub(crate) fn instructions_body(ctx: &Context, when: &str) -> String {
    format!(
        "{when}\n\n{}",
        crate::contract::instructions_in_file(&ctx.user_label)
    )
}

/// The vault a hook would find by itself (`LIBRARIAN_VAULT_PATH`, then `rutter.vault`); never
/// the current directory, as capture never looks there.
pub(crate) fn configured_vault() -> Option<(PathBuf, VaultSource)> {
    vault::resolve(None, false).ok().map(|v| (v.root, v.source))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_matches_the_capture_labels() {
        let names: Vec<&str> = CLIENTS.iter().map(|c| c.name).collect();
        assert_eq!(names, crate::capture::CLIENTS.to_vec());
        assert_eq!(find("antigravity").map(|c| c.name), Some("agy"));
        assert!(find("vscode").is_none());
    }
}
