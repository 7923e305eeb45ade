//! `git rutter setup`: one guided setup that ends green (issue 34): the clients installed on
//! this machine found, what install-hook would write for each shown, installed on a yes (or
//! `--yes`, or `--clients a,b`), then `status`'s verdict.

use super::install_hook::{apply, context, describe, Tense};
use super::{user_error, CommandResult, Exit, Ui};
use crate::clients::{self, Context, Error, Mode, Plan};
use crate::status::{self, Inputs};
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;

/// Register git-rutter with every AI client on this machine, then check the result.
///
/// Looks for each supported client's configuration folder, and shows what `install-hook` would
/// write for each one found (its hook, instruction file and MCP server). When `man` finds no
/// git-rutter(1), so that `git rutter --help` would say "No manual entry", the manual is part
/// of the plan too: installed as `git rutter man --install` does, beside the binary. On a terminal it asks
/// before writing; `--yes` writes without asking; `--clients a,b` names the clients instead of
/// looking (they are installed even when they do not look installed yet). Without a terminal
/// and without either, it only shows the plan. Ends with `status`'s verdict. Running it again
/// changes nothing.
///
/// The vault must be set up first (`git rutter init --global` in your notes vault, or
/// --vault). Exit status: 0 set up and status finds nothing, 1 a client refused or status has
/// findings, 2 could not run.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Install without asking.
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Only these clients (comma-separated names as install-hook takes them), installed or not.
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    pub clients: Vec<String>,
    /// Show the plan, write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Print the outcome as JSON.
    #[arg(long)]
    pub json: bool,
}

/// The manual's part of the setup, when it is missing.
struct Manual {
    /// Where it goes: `share/man/man1` beside the binary's folder.
    dir: PathBuf,
    /// What happened: `would install`, `installed`, `failed`.
    outcome: &'static str,
    /// How many pages were written, and whether `man` finds git-rutter(1) then.
    pages: usize,
    found: bool,
}

/// One client's part of the setup.
struct Step {
    plan: Plan,
    /// What happened: `unchanged`, `would change`, `changed`, `refused`, `failed`.
    outcome: &'static str,
    /// The plan's commands (the client's own `… mcp add`) that setup ran, and how each ended.
    ran: Vec<(String, bool)>,
}

/// Runs the command.
pub fn run(ui: &mut Ui, vault: Option<PathBuf>, args: Args) -> CommandResult {
    let ctx = context(vault.clone())?;
    if ctx.vault_flag.is_none() && ctx.configured.is_none() {
        return Err(user_error("no vault is set up yet; nothing was changed.")
            .hinted("Run `git rutter init --global` in your notes vault (or pass --vault PATH), then `git rutter setup`."));
    }
    let mut steps = plans(&ctx, &args.clients)?;
    let mut manual = super::man::missing_manual().map(|dir| Manual {
        dir,
        outcome: "would install",
        pages: 0,
        found: false,
    });
    let writes = steps.iter().any(|s| s.plan.changes_files()) || manual.is_some();
    let go = !args.dry_run
        && writes
        && (args.yes || !args.clients.is_empty() || ask(ui, &ctx, &steps, manual.as_ref())?);
    if let (Some(m), true) = (&mut manual, go) {
        install_manual(ui, m);
    }
    for step in &mut steps {
        step.outcome = match (step.plan.refusals.is_empty(), step.plan.changes_files(), go) {
            (false, _, _) => "refused",
            (true, false, _) => "unchanged",
            (true, true, false) => "would change",
            (true, true, true) => match apply(ui, &ctx, &step.plan) {
                Ok(()) => "changed",
                Err(e) => {
                    ui.warn(format_args!("git-rutter: {}: {e}", step.plan.client.label));
                    "failed"
                }
            },
        };
        if go || args.yes {
            step.ran = run_commands(ui, &step.plan);
        }
    }
    let health = status::gather(&Inputs {
        flag: vault.as_deref(),
        clients: Some(&ctx),
        now: crate::clock::now(),
        clock: crate::clock::Clock::for_flag(false),
    });
    let bad = steps
        .iter()
        .any(|s| matches!(s.outcome, "refused" | "failed"));
    let shown = Shown {
        steps: &steps,
        manual: manual.as_ref(),
        ctx: &ctx,
    };
    print(ui, &shown, &health, args.json, writes && !go)?;
    Ok(Exit::findings_if(bad || !health.healthy))
}

/// The install plans of the clients asked for, or of every client that looks installed here.
fn plans(ctx: &Context, names: &[String]) -> anyhow::Result<Vec<Step>> {
    let wanted: Vec<&'static clients::Spec> = match names.is_empty() {
        true => clients::CLIENTS.iter().collect(),
        false => names
            .iter()
            .map(|n| {
                clients::find(n.trim()).ok_or_else(|| {
                    let known: Vec<&str> = clients::CLIENTS.iter().map(|c| c.name).collect();
                    anyhow::anyhow!(
                        "{n:?} is not a client git-rutter knows ({})",
                        known.join(", ")
                    )
                })
            })
            .collect::<Result<_, _>>()?,
    };
    let mut steps = Vec::new();
    for spec in wanted {
        let plan = match (spec.plan)(ctx, Mode::Install) {
            Ok(p) => p,
            Err(Error::Refused(why)) => anyhow::bail!("{}: {why}", spec.label),
            Err(e) => return Err(e.into()),
        };
        if names.is_empty() && !plan.looks_installed() {
            continue;
        }
        steps.push(Step {
            plan,
            outcome: "unchanged",
            ran: vec![],
        });
    }
    Ok(steps)
}

/// Runs the plan's commands whose program is on PATH (a client registers its MCP server with
/// its own command, `claude mcp add …`), each bounded in time; the others stay for the user.
fn run_commands(ui: &mut Ui, plan: &Plan) -> Vec<(String, bool)> {
    let mut ran = Vec::new();
    for cmd in &plan.commands {
        let Some(words) = shlex::split(cmd) else {
            continue;
        };
        // `a && b` (remove, then add again) is two commands: only single ones are run here.
        if words.iter().any(|w| w == "&&") {
            continue;
        }
        let Some(program) = words.first().and_then(|p| crate::store::gitcli::program(p)) else {
            continue;
        };
        let mut c = std::process::Command::new(program);
        c.args(&words[1..]).stdin(std::process::Stdio::null());
        let ok = crate::store::gitcli::output_within(c, Some(std::time::Duration::from_secs(60)))
            .ok()
            .flatten()
            .is_some_and(|o| o.status.success());
        if !ok {
            ui.warn(format_args!(
                "git-rutter: `{cmd}` did not succeed; run it by hand."
            ));
        }
        ran.push((cmd.clone(), ok));
    }
    ran
}

/// Writes the manual's pages, and says on stderr why not when that failed.
fn install_manual(ui: &mut Ui, m: &mut Manual) {
    match super::man::install_for_setup(&m.dir) {
        Ok((pages, found)) => (m.outcome, m.pages, m.found) = ("installed", pages, found),
        Err(e) => {
            ui.warn(format_args!("git-rutter: the manual: {e:#}"));
            m.outcome = "failed";
        }
    }
}

/// Shows what would change and asks on a terminal; `false` without one.
fn ask(
    ui: &mut Ui,
    ctx: &Context,
    steps: &[Step],
    manual: Option<&Manual>,
) -> anyhow::Result<bool> {
    if !std::io::stdin().is_terminal() || !std::io::stderr().is_terminal() {
        return Ok(false);
    }
    let shown = Shown { steps, manual, ctx };
    ui.print(&plan_text(&shown))?;
    eprint!("Write these files? [y/N] ");
    std::io::stderr().flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes" | "Yes"))
}

/// What setup did or would do, as printed.
struct Shown<'a> {
    steps: &'a [Step],
    manual: Option<&'a Manual>,
    ctx: &'a Context,
}

/// Each client and the files its plan changes, then the manual.
fn plan_text(shown: &Shown<'_>) -> String {
    let mut out = Vec::new();
    let acts = |s: &&Step| s.plan.changes_files() || !s.plan.refusals.is_empty();
    for s in shown.steps.iter().filter(acts) {
        out.push(format!("{}:", s.plan.client.label));
        for e in s.plan.edits.iter().filter(|e| e.changed()) {
            out.push(format!("  {}", describe(e, Mode::Install, Tense::Planned)));
        }
        for why in &s.plan.refusals {
            out.push(format!("  refused: {why}"));
        }
    }
    if let Some(m) = shown.manual {
        out.push(format!(
            "Manual:\n  write git-rutter(1) and a page per command into {}, so `git rutter --help` opens it.",
            shown.ctx.show(&m.dir)
        ));
    }
    out.join("\n")
}

/// The manual's line of the outcome.
fn manual_line(m: &Manual, ctx: &Context) -> String {
    let dir = ctx.show(&m.dir);
    match (m.outcome, m.found) {
        ("installed", true) => format!("Manual: installed ({} pages in {dir}); `git rutter --help` opens it.", m.pages),
        ("installed", false) => format!("Manual: installed ({} pages in {dir}), but man does not find it there: add {} to MANPATH.", m.pages, ctx.show(m.dir.parent().unwrap_or(&m.dir))),
        ("failed", _) => format!("Manual: not installed ({dir} could not be written); `git rutter man --install --dir DIR` with a folder man searches installs it."),
        (outcome, _) => format!("Manual: {outcome}"),
    }
}

fn print(
    ui: &mut Ui,
    shown: &Shown<'_>,
    health: &status::Status,
    json: bool,
    held_back: bool,
) -> anyhow::Result<()> {
    let steps = shown.steps;
    if json {
        let clients: Vec<serde_json::Value> = steps
            .iter()
            .map(|s| {
                serde_json::json!({
                    "client": s.plan.client.name,
                    "outcome": s.outcome,
                    "files": s.plan.edits.iter().filter(|e| e.changed()).map(|e| e.shown.clone()).collect::<Vec<_>>(),
                    "commands": s.plan.commands,
                    "ran": s.ran.iter().map(|(c, ok)| serde_json::json!({"command": c, "ok": ok})).collect::<Vec<_>>(),
                    "refusals": s.plan.refusals,
                })
            })
            .collect();
        let manual = shown.manual.map(|m| {
            serde_json::json!({
                "dir": m.dir.to_string_lossy(),
                "outcome": m.outcome,
                "pages": m.pages,
                "found": m.found,
            })
        });
        return ui.print_json(&serde_json::json!({
            "clients": clients,
            "manual": manual,
            "healthy": health.healthy,
            "findings": health.findings,
        }));
    }
    let mut out = Vec::new();
    if steps.is_empty() {
        out.push("No supported AI client looks installed here; name one with --clients (git rutter install-hook --help lists them).".to_string());
    }
    for s in steps {
        out.push(format!("{}: {}", s.plan.client.label, s.outcome));
        for cmd in &s.plan.commands {
            match s.ran.iter().find(|(c, _)| c == cmd) {
                Some((_, true)) => out.push(format!("  ran: {cmd}")),
                _ => out.push(format!("  run by hand: {cmd}")),
            }
        }
        for why in &s.plan.refusals {
            out.push(format!("  refused: {why}"));
        }
    }
    if let Some(m) = shown.manual.filter(|m| m.outcome != "would install") {
        out.push(manual_line(m, shown.ctx));
    }
    if held_back {
        out.push(plan_text(shown));
        out.push("Nothing was written: run `git rutter setup --yes` to write these files.".into());
    }
    out.push(match (health.healthy, health.findings.len()) {
        (true, _) => "status: no findings: everything status checks is working.".to_string(),
        (false, n) => format!("status: {n} finding(s); `git rutter status` shows them all."),
    });
    for f in &health.findings {
        out.push(format!("  - {} {}", f.message, f.todo));
    }
    Ok(ui.print(&out.join("\n"))?)
}
