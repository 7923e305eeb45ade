//! The command line: one file per subcommand, each a clap `Args` whose doc comments are the help
//! text, plus one `run` function. The only place `anyhow` is used.

pub mod capture;
pub mod color;
pub mod commit;
pub mod complete;
pub mod config;
pub mod demo;
pub mod diff;
pub mod gate;
pub mod githooks;
pub mod help;
pub mod identity;
pub mod init;
pub mod install_hook;
pub mod log;
pub mod man;
pub mod mcp;
pub mod pager;
pub mod progress;
pub mod recent;
pub mod reindex;
pub mod restore;
pub mod retract;
pub mod search;
pub mod show;
pub mod status;
pub mod sync;
pub mod verify;

use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// Exit status for success.
pub const EXIT_OK: i32 = 0;
/// Exit status for a finding or a user error.
pub const EXIT_FINDING: i32 = 1;
/// Exit status for a usage error or when the command could not run.
pub const EXIT_CANNOT_RUN: i32 = 2;

/// git-rutter keeps an append-only record of what your AI sessions decided, in dated markdown
/// files inside your notes vault, committed to the git ref refs/rutter/records.
///
/// The vault is found as git finds a repository: --vault, then LIBRARIAN_VAULT_PATH, then (for
/// commands you run by hand) the repository around the current directory when it holds rutter
/// data, then rutter.vault in that repository's config, then the global git config key
/// rutter.vault. `capture` and `mcp` never look at the current directory.
#[derive(Debug, Parser)]
#[command(
    name = "git-rutter",
    bin_name = "git rutter",
    version,
    max_term_width = 100
)]
pub struct Cli {
    /// The notes vault to use (overrides LIBRARIAN_VAULT_PATH and git config rutter.vault).
    #[arg(long, global = true, value_name = "PATH")]
    pub vault: Option<PathBuf>,

    /// Never send output through a pager (by default recent, log, search, show and diff use one
    /// on a terminal: GIT_PAGER, core.pager, PAGER, else less).
    #[arg(long, global = true)]
    pub no_pager: bool,

    /// When to colour human output, as git's --color: auto (on a terminal, or a pager on one),
    /// always, or never. Without it: NO_COLOR, then CLICOLOR_FORCE, then git config color.ui.
    #[arg(long, global = true, value_name = "WHEN", num_args = 0..=1, require_equals = true, default_missing_value = "always")]
    pub color: Option<color::When>,

    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    Init(init::Args),
    Capture(capture::Args),
    Commit(commit::Args),
    Recent(recent::Args),
    Reindex(reindex::Args),
    Search(search::Args),
    Show(show::Args),
    Identity(identity::Args),
    Retract(retract::Args),
    Gate(gate::Args),
    Verify(verify::Args),
    Log(log::Args),
    Diff(diff::Args),
    Restore(restore::Args),
    Sync(sync::Args),
    Demo(demo::Args),
    Mcp(mcp::Args),
    InstallHook(install_hook::InstallArgs),
    UninstallHook(install_hook::UninstallArgs),
    InstallGitHooks(githooks::Args),
    Status(status::Args),
    Config(config::Args),
    Man(man::Args),
    Completions(man::CompletionsArgs),
    #[command(hide = true)]
    Hook(githooks::HookArgs),
}

/// Runs a parsed command and returns the process exit status.
pub fn run(cli: Cli) -> i32 {
    color::init(
        std::io::IsTerminal::is_terminal(&std::io::stdout()),
        cli.color,
    );
    let pager = match cli.command {
        Command::Recent(_)
        | Command::Log(_)
        | Command::Search(_)
        | Command::Show(_)
        | Command::Diff(_) => pager::start(cli.no_pager),
        _ => None,
    };
    let code = dispatch(cli.vault, cli.command);
    if let Some(p) = pager {
        p.finish();
    }
    code
}

fn dispatch(vault: Option<PathBuf>, command: Command) -> i32 {
    let result = match command {
        Command::Capture(args) => return capture::run(vault, args),
        Command::Mcp(args) => return mcp::run(vault, args),
        Command::Hook(args) => return githooks::run_hook(args),
        Command::Init(args) => init::run(vault, args),
        Command::Commit(args) => commit::run(vault, args),
        Command::Recent(args) => recent::run(vault, args),
        Command::Reindex(args) => reindex::run(vault, args),
        Command::Search(args) => search::run(vault, args),
        Command::Show(args) => show::run(vault, args),
        Command::Identity(args) => identity::run(vault, args),
        Command::Retract(args) => retract::run(vault, args),
        Command::Gate(args) => gate::run(vault, args),
        Command::Verify(args) => verify::run(vault, args),
        Command::Log(args) => log::run(vault, args),
        Command::Diff(args) => diff::run(vault, args),
        Command::Restore(args) => restore::run(vault, args),
        Command::Sync(args) => sync::run(vault, args),
        Command::Demo(args) => demo::run(args),
        Command::InstallHook(a) => {
            install_hook::run(vault, a.common, crate::clients::Mode::Install)
        }
        Command::UninstallHook(a) => {
            install_hook::run(vault, a.common, crate::clients::Mode::Uninstall)
        }
        Command::InstallGitHooks(args) => githooks::run(vault, args),
        Command::Status(args) => status::run(vault, args),
        Command::Config(args) => config::run(vault, args),
        Command::Man(args) => man::run(args),
        Command::Completions(args) => man::completions(args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("git-rutter: {e:#}");
            EXIT_CANNOT_RUN
        }
    }
}

/// Opens the vault's record store, or says why not on stderr and gives the exit status 2
/// (for commands whose exit 1 means "findings").
pub fn open_store(vault: &crate::vault::Vault) -> Result<crate::store::Store, i32> {
    crate::store::Store::open(vault).map_err(|e| {
        eprintln!("git-rutter: {e}");
        EXIT_CANNOT_RUN
    })
}

/// Writes to stdout; a closed pipe (`git rutter recent | head`) is not an error.
pub fn print(text: &str) -> anyhow::Result<()> {
    write_stdout(&crate::records::text::terminal_safe(text))
}

/// As [`print`], with `paint` (from [`color`]) applied to the terminal-safe text, so only our
/// own escapes reach the terminal.
pub fn print_painted(text: &str, paint: impl Fn(&str) -> String) -> anyhow::Result<()> {
    write_stdout(&paint(&crate::records::text::terminal_safe(text)))
}

/// Prints `value` as pretty JSON, characters a terminal would act on written as `\uXXXX`.
pub fn print_json(value: &impl serde::Serialize) -> anyhow::Result<()> {
    let json = serde_json::to_string_pretty(value)?;
    write_stdout(&crate::records::text::json_terminal_safe(&json))
}

/// Like [`print_painted`], without the final newline: the first part of an answer printed in
/// parts (cut between whole items, so no mark and no `\r\n` is split).
pub fn print_part(text: &str, paint: impl Fn(&str) -> String) -> anyhow::Result<()> {
    write_out(&paint(&crate::records::text::terminal_safe(text)), "")
}

fn write_stdout(text: &str) -> anyhow::Result<()> {
    write_out(text, "\n")
}

fn write_out(text: &str, end: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match write!(out, "{text}{end}").and_then(|_| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

/// The filter of `--grep`, `--since` and `--until` (shared by `recent` and `log`); a bad date is
/// a usage error naming the forms it takes.
pub fn entry_filter(
    grep: &[String],
    since: Option<&str>,
    until: Option<&str>,
    now: crate::clock::Instant,
    clock: &crate::clock::Clock,
) -> anyhow::Result<crate::records::filter::EntryFilter> {
    let f = crate::records::filter::parse_bounds(since, until, now, clock)
        .map_err(anyhow::Error::msg)?;
    Ok(f.with_words(grep))
}

/// Resolves the vault for an interactive command (may use the current repository), naming it on
/// stderr when the user, standing in another repository, may not expect it.
pub fn interactive_vault(flag: Option<&std::path::Path>) -> anyhow::Result<crate::vault::Vault> {
    let vault = crate::vault::resolve(flag, true)?;
    if let Some(notice) = crate::vault::surprise_notice(&vault) {
        eprintln!("{notice}");
    }
    Ok(vault)
}
