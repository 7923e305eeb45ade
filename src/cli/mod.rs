//! The command line: one file per subcommand, each a clap `Args` whose doc comments are the help
//! text, plus one `run` function that writes through a [`Ui`] and returns a [`CommandResult`]
//! ([`error`]), turned into the exit status in one place, [`dispatch`]. The only place `anyhow`
//! is used.

pub mod capture;
pub(crate) mod cited_by;
pub(crate) mod color;
pub(crate) mod commit;
pub mod complete;
pub(crate) mod config;
pub(crate) mod context;
pub(crate) mod demo;
pub(crate) mod diff;
pub(crate) mod error;
pub(crate) mod gate;
pub(crate) mod githooks;
pub mod help;
pub(crate) mod identity;
pub(crate) mod init;
pub(crate) mod install_hook;
pub(crate) mod log;
pub(crate) mod man;
pub(crate) mod mcp;
pub(crate) mod page_file;
pub(crate) mod pager;
pub(crate) mod progress;
pub(crate) mod purge;
pub(crate) mod recent;
pub(crate) mod reindex;
pub(crate) mod restore;
pub(crate) mod retract;
pub(crate) mod search;
pub(crate) mod setup;
pub(crate) mod show;
pub(crate) mod status;
pub(crate) mod sync;
pub(crate) mod timeline;
pub(crate) mod ui;
pub(crate) mod verify;
pub(crate) mod watch;

pub use error::{
    cannot_run, user_error, CommandError, CommandResult, ErrorKind, Exit, EXIT_CANNOT_RUN,
    EXIT_FINDING, EXIT_OK,
};
pub use ui::Ui;

use clap::{Parser, Subcommand};
use std::path::PathBuf;

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

    /// Never send output through a pager (by default recent, log, search, show, cited-by and diff
    /// use one on a terminal: GIT_PAGER, core.pager, PAGER, else less).
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
    Context(context::Args),
    Timeline(timeline::Args),
    Reindex(reindex::Args),
    Search(search::Args),
    Show(show::Args),
    CitedBy(cited_by::Args),
    Identity(identity::Args),
    Retract(retract::Args),
    Purge(purge::Args),
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
    Setup(setup::Args),
    Status(status::Args),
    Watch(watch::Args),
    Config(config::Args),
    Man(man::Args),
    Completions(man::CompletionsArgs),
    #[command(hide = true)]
    Hook(githooks::HookArgs),
}

/// Runs a parsed command on the process's stdout and stderr (through the pager for the
/// commands whose output may be long) and returns the process exit status.
pub fn run(cli: Cli) -> i32 {
    let mut ui = Ui::for_process(cli.color);
    if pages(&cli.command) {
        ui.start_pager(cli.no_pager);
    }
    // A watcher never starts another (nor does a server, which watches itself).
    let may_start_watcher = !matches!(cli.command, Command::Watch(_) | Command::Mcp(_));
    let code = dispatch(&mut ui, cli);
    if may_start_watcher {
        watch::start_if_wanted();
    }
    code
    // Dropping `ui` closes the pager's input and waits for it.
}

/// The commands whose output goes through a pager on a terminal.
fn pages(command: &Command) -> bool {
    matches!(
        command,
        Command::Recent(_)
            | Command::Log(_)
            | Command::Search(_)
            | Command::Show(_)
            | Command::CitedBy(_)
            | Command::Diff(_)
    )
}

/// Runs a parsed command writing through `ui`, and returns the exit status: the one place a
/// [`CommandResult`] becomes one (a [`CommandError`] is reported on `ui`'s stderr). `capture`,
/// `mcp` and `hook` keep their own rules (capture always exits 0 and prints nothing on stdout,
/// a git hook allows what it cannot check, mcp's stdout carries only JSON-RPC) and write to the
/// process's stdio themselves.
pub fn dispatch(ui: &mut Ui, cli: Cli) -> i32 {
    let vault = cli.vault;
    let result = match cli.command {
        Command::Capture(args) => return capture::run(vault, args),
        Command::Mcp(args) => return mcp::run(vault, args),
        Command::Hook(args) => return githooks::run_hook(args),
        Command::Context(context::Args {
            hook: Some(client), ..
        }) => return context::run_hook(vault, &client),
        Command::Init(args) => init::run(ui, vault, args),
        Command::Commit(args) => commit::run(ui, vault, args),
        Command::Recent(args) => recent::run(ui, vault, args),
        Command::Context(args) => context::run(ui, vault, args),
        Command::Timeline(args) => timeline::run(ui, vault, args),
        Command::Reindex(args) => reindex::run(ui, vault, args),
        Command::Search(args) => search::run(ui, vault, args),
        Command::Show(args) => show::run(ui, vault, args),
        Command::CitedBy(args) => cited_by::run(ui, vault, args),
        Command::Identity(args) => identity::run(ui, vault, args),
        Command::Retract(args) => retract::run(ui, vault, args),
        Command::Purge(args) => purge::run(ui, vault, args),
        Command::Gate(args) => gate::run(ui, vault, args),
        Command::Verify(args) => verify::run(ui, vault, args),
        Command::Log(args) => log::run(ui, vault, args),
        Command::Diff(args) => diff::run(ui, vault, args),
        Command::Restore(args) => restore::run(ui, vault, args),
        Command::Sync(args) => sync::run(ui, vault, args),
        Command::Setup(args) => setup::run(ui, vault, args),
        Command::Demo(args) => demo::run(ui, args),
        Command::InstallHook(a) => {
            install_hook::run(ui, vault, a.common, crate::clients::Mode::Install)
        }
        Command::UninstallHook(a) => {
            install_hook::run(ui, vault, a.common, crate::clients::Mode::Uninstall)
        }
        Command::InstallGitHooks(args) => githooks::run(ui, vault, args),
        Command::Status(args) => status::run(ui, vault, args),
        Command::Watch(args) => watch::run(ui, vault, args),
        Command::Config(args) => config::run(ui, vault, args),
        Command::Man(args) => man::run(ui, args),
        Command::Completions(args) => man::completions(ui, args),
    };
    match result {
        Ok(exit) => exit.code(),
        Err(e) => {
            e.report(ui);
            e.exit_code()
        }
    }
}

/// Opens the vault's record store; an error is "could not run" (exit 2) and shows the store's
/// own message (for commands whose exit 1 means "findings").
pub fn open_store(vault: &crate::vault::Vault) -> Result<crate::store::Store, CommandError> {
    Ok(crate::store::Store::open(vault)?)
}

/// The filter flags `recent`, `log` and `timeline` share.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct FilterArgs {
    /// Only entries whose summary, project or cited paths hold every word of TEXT
    /// (case-insensitive); repeatable, and every word of every --grep must match.
    #[arg(long, value_name = "TEXT")]
    pub grep: Vec<String>,
    /// Only entries from this date on, as `git log --since` reads it: a day (YYYY-MM-DD, the
    /// whole day), a day and time, Nd / Nw for N days or weeks ago (`0d` is today only), or
    /// git's words (`yesterday`, `"3 days ago"`, `2.weeks.ago`). Days are local unless --utc.
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
    /// Only entries up to this date (a day counts whole); the forms of --since.
    #[arg(long, value_name = "DATE")]
    pub until: Option<String>,
}

impl FilterArgs {
    /// The filter of `--grep`, `--since` and `--until`; a bad date is a usage error naming the
    /// forms it takes.
    pub(crate) fn filter(
        &self,
        now: crate::clock::Instant,
        clock: &crate::clock::Clock,
    ) -> Result<crate::records::filter::EntryFilter, CommandError> {
        let f = crate::records::filter::parse_bounds(
            self.since.as_deref(),
            self.until.as_deref(),
            now,
            clock,
        )
        .map_err(cannot_run)?;
        Ok(f.with_words(&self.grep))
    }
}

/// Opens the vault's index for an interactive command, building it if needed. The progress line
/// of a first build comes back with it: the caller keeps it until its first read of the index
/// is done (that read fills what the build left). An index rebuilt because the vault was moved
/// or copied is said on stderr.
pub(crate) fn open_index(
    ui: &mut ui::Ui,
    vault: &crate::vault::Vault,
) -> Result<(crate::index::Index, Option<progress::Progress>), crate::index::IndexError> {
    let building = progress::Progress::index_build(ui, vault);
    let index = crate::index::Index::open(vault, false)?;
    if let Some(note) = moved_note(&index, vault) {
        ui.warn(format_args!("git-rutter: {note}"));
    }
    Ok((index, building))
}

/// What to say when the index was rebuilt because it named the vault under another path.
pub(crate) fn moved_note(
    index: &crate::index::Index,
    vault: &crate::vault::Vault,
) -> Option<String> {
    let safe = crate::records::text::one_line_safe;
    index.moved_from.as_deref().map(|old| {
        format!(
            "the index was built when this vault was at {} (moved or copied since); rebuilt it for {}. Nothing to do: the index holds only what the notes and the record hold.",
            safe(old),
            safe(&vault.root.to_string_lossy())
        )
    })
}

/// Resolves the vault for an interactive command (may use the current repository), naming it on
/// stderr when the user, standing in another repository, may not expect it.
pub(crate) fn interactive_vault(
    ui: &mut Ui,
    flag: Option<&std::path::Path>,
) -> anyhow::Result<crate::vault::Vault> {
    let vault = crate::vault::resolve(flag, true)?;
    if let Some(notice) = crate::vault::surprise_notice(&vault) {
        ui.warn(notice);
    }
    Ok(vault)
}
