//! `git rutter install-hook` and `uninstall-hook`: register git-rutter with one AI client (its
//! Stop hook, the instruction file it needs, its MCP server) or take that registration out again.
//! The plan comes from [`crate::clients`]; this file prints it (a diff per file with
//! `--dry-run`, JSON with `--json`) or applies it.

use super::{user_error, CommandError, CommandResult, ErrorKind, Exit, Ui};
use crate::clients::change::Change;
use crate::clients::{self, files, Context, Error, Mode, Plan};
use std::path::{Path, PathBuf};

/// Register git-rutter with an AI client: the Stop hook, its instructions and the MCP server.
///
/// Writes the client's hook config with this binary's absolute path (`<path> capture --client
/// NAME`; for OpenCode, a plugin that runs it), the session-start brief where the client reads
/// one (Claude Code, Codex, Gemini CLI, Cursor), the instruction or rule file the client needs
/// to follow the capture contract, and the
/// MCP server `rutter` where the client keeps servers in a file of yours; where the client keeps
/// them in its own state file, prints the exact `… mcp add …` command to run instead. Running it
/// again changes nothing; after moving the binary, run it again and the path is replaced in place.
/// A TypeScript rutter hook is replaced (its writer rewrites whole day files), saying so.
///
/// Only git-rutter's own entries and its marked block (`<!-- BEGIN git-rutter -->`) are edited;
/// a symbolic link, an unparseable file or a file git-rutter did not write is refused, and then
/// nothing is written for that client. With --vault, the vault is written into the hook (and
/// the server entry); otherwise the hook finds it through LIBRARIAN_VAULT_PATH or rutter.vault,
/// except for clients that clear the environment or start from a desktop (Muse Code, agy,
/// Cursor, Windsurf), which get the configured vault written in. Exit status: 0 done or nothing to do, 1 refused, 2 could not run.
#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    #[command(flatten)]
    pub common: Common,
}

/// Remove git-rutter's registration from an AI client.
///
/// Removes exactly what install-hook added: our hook entry, our marked block, our server entry.
/// Everything else in those files stays byte for byte; a file left with nothing in it is removed.
/// A TypeScript rutter hook is left where it is (git-rutter did not write it). Where the server
/// was registered with the client's own command, prints the `… mcp remove …` line to run.
#[derive(Debug, clap::Args)]
pub struct UninstallArgs {
    #[command(flatten)]
    pub common: Common,
}

/// The options both commands take.
#[derive(Debug, clap::Args)]
pub struct Common {
    /// The client: claude, codex, grok, copilot, agy (or antigravity), muse, cursor, gemini,
    /// opencode, windsurf.
    #[arg(long, value_name = "NAME", value_parser = client_names())]
    pub client: String,
    /// Print what would change, as a diff per file, and write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Print the outcome as JSON.
    #[arg(long)]
    pub json: bool,
}

fn client_names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(
        clients::CLIENTS
            .iter()
            .map(|c| clap::builder::PossibleValue::new(c.name).aliases(c.aliases.iter().copied())),
    )
}

/// Runs `install-hook` or `uninstall-hook`.
pub fn run(ui: &mut Ui, vault: Option<PathBuf>, args: Common, mode: Mode) -> CommandResult {
    let ctx = context(vault)?;
    let spec = clients::find(&args.client)
        .ok_or_else(|| anyhow::anyhow!("unknown client {}", args.client))?;
    let plan = match (spec.plan)(&ctx, mode) {
        Ok(plan) => plan,
        Err(Error::Refused(why)) => return Err(user_error(why)),
        Err(e) => return Err(e.into()),
    };
    if !plan.refusals.is_empty() {
        report(ui, &plan, &args, Outcome::Refused)?;
        return Ok(Exit::Findings);
    }
    if plan.mode == Mode::Install && !plan.looks_installed() && !args.json {
        // Said before anything is written: the folders made next are for a client to come.
        let folder = plan
            .home_folder(&ctx)
            .map_or(String::new(), |f| format!(" (no {f})"));
        let prepared = match args.dry_run {
            true => "install-hook would prepare its files anyway",
            false => "its files are prepared anyway",
        };
        ui.warn(format_args!(
            "git-rutter: {} does not look installed here{folder}; {prepared}, for when it is. Install {} to use them.",
            plan.client.label, plan.client.label
        ));
    }
    if let Some(root) = ctx
        .vault_flag
        .as_deref()
        .filter(|_| plan.mode == Mode::Install)
    {
        if !is_prepared_vault(root) {
            ui.warn(format_args!(
                "git-rutter: warning: {} is no git-rutter vault yet (no refs/rutter/records, no _librarian/): the hook will write its records there all the same. Run `git rutter init {}` to prepare it, or name your notes vault with --vault.",
                crate::records::text::one_line_safe(&root.display().to_string()),
                crate::records::text::one_line_safe(&crate::argv::quote(&root.display().to_string()))
            ));
        }
    }
    if args.dry_run {
        // A dry run promises only what the run can do: a file it cannot write stops it alike.
        writable(&plan)?;
        report(ui, &plan, &args, Outcome::DryRun)?;
    } else {
        apply(ui, &ctx, &plan)?;
        report(ui, &plan, &args, Outcome::Done)?;
    }
    // What uninstall had to leave needs the user's hand.
    Ok(Exit::findings_if(!plan.left(true).is_empty()))
}

/// Writes a plan's files (each checked writable first, so a read-only or immutable file stops
/// it with nothing half-done); a failure part way says what was already changed and how to
/// finish or undo it.
pub(crate) fn apply(ui: &mut Ui, ctx: &Context, plan: &Plan) -> Result<(), CommandError> {
    writable(plan)?;
    let mut done: Vec<&str> = Vec::new();
    for edit in &plan.edits {
        let why = match files::apply(ctx, edit) {
            Ok(()) => {
                if edit.changed() {
                    done.push(&edit.shown);
                }
                continue;
            }
            Err(Error::Refused(why)) => (why, ErrorKind::User),
            Err(Error::Io { path, source }) => (
                format!("{}: {source}", ctx.show(&path)),
                ErrorKind::CannotRun,
            ),
        };
        ui.warn(format_args!("git-rutter: {}", why.0));
        return Err(CommandError::new(
            why.1,
            part_way(plan.client.label, &done, plan.mode),
        ));
    }
    Ok(())
}

/// Whether every file the plan changes can be written (nothing is changed); the error names the
/// first that cannot and why.
fn writable(plan: &Plan) -> Result<(), CommandError> {
    match plan.edits.iter().find_map(|e| files::writable(e).err()) {
        Some(why) => Err(CommandError::new(
            ErrorKind::CannotRun,
            format!("{why}; nothing was changed for {}.", plan.client.label),
        )),
        None => Ok(()),
    }
}

/// What a run that stopped part-way had already changed, and how to finish or undo it.
fn part_way(label: &str, done: &[&str], mode: Mode) -> String {
    if done.is_empty() {
        return format!("nothing was changed for {label}.");
    }
    let again = match mode {
        Mode::Install => "run the command again once that is fixed (it completes the registration), or `git rutter uninstall-hook` for this client to take them out",
        Mode::Uninstall => "run the command again once that is fixed",
    };
    format!("already changed for {label}: {}; {again}.", done.join(", "))
}

/// Whether `root` is a vault `init` prepared (it has the record ref) or one that holds
/// records already (`_librarian/`, the TypeScript version's too).
fn is_prepared_vault(root: &std::path::Path) -> bool {
    let has_ref = crate::vault::open(root, crate::vault::VaultSource::Flag)
        .ok()
        .and_then(|v| crate::store::Store::open(&v).ok())
        .is_some_and(|s| s.tip().is_ok_and(|t| t.is_some()));
    has_ref || root.join(crate::vault::OVERLAY_DIR).is_dir()
}

/// Gathers the environment a plan depends on.
pub(crate) fn context(vault: Option<PathBuf>) -> anyhow::Result<Context> {
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| anyhow::anyhow!("HOME is not set, so the clients' configuration cannot be found; set HOME and run again"))?;
    let exe = std::env::current_exe()?.canonicalize()?;
    let bin = exe
        .to_str()
        .filter(|s| !s.contains('\n'))
        .ok_or_else(|| anyhow::anyhow!("the path of this binary ({}) is not plain UTF-8 text on one line; install git-rutter elsewhere", exe.display()))?
        .to_string();
    let vault_flag = match vault {
        Some(p) => Some(crate::vault::open(&p, crate::vault::VaultSource::Flag)?.root),
        None => None,
    };
    let vars = clients::HOME_VARS
        .iter()
        .filter_map(|k| {
            let v = std::env::var_os(k).filter(|v| !v.is_empty())?;
            Some((k.to_string(), PathBuf::from(v)))
        })
        .collect();
    Ok(Context {
        home,
        vars,
        bin,
        vault_flag,
        configured: clients::configured_vault(),
        user_label: crate::contract::user_label(),
        follow_links: false,
    })
}

/// How a run ended, for the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Done,
    DryRun,
    Refused,
}

/// Prints the plan's outcome as text (with diffs for a dry run) or JSON.
fn report(ui: &mut Ui, plan: &Plan, args: &Common, outcome: Outcome) -> anyhow::Result<()> {
    if args.json {
        return ui.print_json(&json_report(plan, outcome));
    }
    let label = plan.client.label;
    let mut out = Vec::new();
    if outcome == Outcome::Refused {
        for why in &plan.refusals {
            ui.warn(format_args!("git-rutter: {why}"));
        }
        ui.warn(format_args!("git-rutter: nothing was changed for {label}."));
        return Ok(());
    }
    let tense = match outcome {
        Outcome::DryRun => Tense::Planned,
        _ => Tense::Done,
    };
    for edit in &plan.edits {
        out.push(format!("  {}", describe(edit, plan.mode, tense)));
        if outcome == Outcome::DryRun && edit.changed() {
            out.push(diff(edit));
        }
    }
    for cmd in &plan.commands {
        out.push(format!("  run by hand: {cmd}"));
    }
    for note in &plan.notes {
        out.push(format!("  {note}"));
    }
    let verb = match plan.mode {
        Mode::Install => "install-hook",
        Mode::Uninstall => "uninstall-hook",
    };
    let head = match (outcome, plan.changes_files(), plan.left(true).is_empty()) {
        (Outcome::DryRun, _, _) => format!("{label} ({verb} --dry-run; nothing was written):"),
        (_, true, _) | (_, false, false) => format!("{label}:"),
        (_, false, true) => format!("{label}: nothing to change."),
    };
    ui.print(&format!("{head}\n{}", out.join("\n")))?;
    // Written as asked, yet not working: said apart, where it is seen.
    for p in &plan.problems {
        ui.warn(format_args!("git-rutter: {} {}", p.message, p.todo));
    }
    Ok(())
}

/// Whether a report says what was done or what a plan would do.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tense {
    Done,
    Planned,
}

/// One sentence about one file: what was done to it, or what the plan would do.
pub(crate) fn describe(edit: &files::FileEdit, mode: Mode, tense: Tense) -> String {
    let shown = &edit.shown;
    let say = match tense {
        Tense::Done => Change::done,
        Tense::Planned => Change::planned,
    };
    let what = edit.changes.iter().map(say).collect::<Vec<_>>().join("; ");
    if let Some(left) = &edit.left {
        return left.said(shown, tense == Tense::Done);
    }
    match (&edit.before, &edit.after, edit.changed(), tense) {
        (None, None, _, _) => format!("{shown}: absent, nothing to remove."),
        (_, _, false, _) if mode == Mode::Install => format!("{shown} is up to date."),
        (_, _, false, _) => format!("{shown} holds no git-rutter entry; left as it is."),
        (None, Some(_), true, Tense::Done) => format!("created {shown}: {what}."),
        (None, Some(_), true, Tense::Planned) => format!("would create {shown}: {what}."),
        (Some(_), None, true, Tense::Done) => {
            format!("removed {shown} ({what}; nothing else was in it).")
        }
        (Some(_), None, true, Tense::Planned) => {
            format!("would remove {shown} ({what}; nothing else is in it).")
        }
        (Some(_), Some(_), true, Tense::Done) => format!("{shown}: {what}."),
        (Some(_), Some(_), true, Tense::Planned) => format!("would change {shown}: {what}."),
    }
}

/// A unified diff of one file's change.
fn diff(edit: &files::FileEdit) -> String {
    let name = |exists: bool| match exists {
        true => edit.shown.clone(),
        false => "/dev/null".into(),
    };
    crate::records::text::unified_diff(
        edit.before.as_deref().unwrap_or_default(),
        edit.after.as_deref().unwrap_or_default(),
        3,
        (&name(edit.before.is_some()), &name(edit.after.is_some())),
    )
    .trim_end()
    .to_string()
}

/// The `--json` form of a report.
fn json_report(plan: &Plan, outcome: Outcome) -> serde_json::Value {
    let say = match outcome {
        Outcome::DryRun => Change::planned,
        _ => Change::done,
    };
    let files: Vec<serde_json::Value> = plan
        .edits
        .iter()
        .map(|e| {
            let action = match (&e.before, &e.after, e.changed()) {
                (_, _, false) => "none",
                (None, Some(_), _) => "create",
                (Some(_), None, _) => "remove",
                _ => "update",
            };
            serde_json::json!({
                "path": path_text(&e.path),
                "action": action,
                "changes": e.changes.iter().map(say).collect::<Vec<_>>(),
            })
        })
        .collect();
    let status = match (outcome, plan.changes_files()) {
        (Outcome::Refused, _) => "refused",
        (Outcome::DryRun, true) => "would-change",
        (_, true) => "changed",
        (_, false) => "unchanged",
    };
    serde_json::json!({
        "client": plan.client.name,
        "label": plan.client.label,
        "mode": match plan.mode { Mode::Install => "install", Mode::Uninstall => "uninstall" },
        "dry_run": outcome == Outcome::DryRun,
        "installed": plan.looks_installed(),
        "status": status,
        "files": files,
        "commands": plan.commands,
        "notes": plan.notes,
        "refusals": plan.refusals,
        "left": plan.left(outcome != Outcome::DryRun),
        "problems": plan.problems.iter().map(|p| serde_json::json!({
            "kind": p.kind,
            "message": p.message,
            "todo": p.todo,
        })).collect::<Vec<_>>(),
    })
}

fn path_text(p: &Path) -> String {
    p.display().to_string()
}
