//! `git rutter man` and `git rutter completions`: the manual pages, generated from the clap
//! definition (clap_mangen), and shell completion scripts (clap_complete), so `git rutter --help`
//! and `git help rutter` (which run `man git-rutter`) open a real manual.

use super::{user_error, CommandResult, Exit, Ui};
use clap::CommandFactory;
use clap_mangen::roff::{roman, Roff};
use clap_mangen::Man;
use std::path::{Path, PathBuf};

/// Print the manual page, or install every page where `man` finds them.
///
/// Without arguments, prints git-rutter(1) in roff on stdout (`git rutter man | man -l -`).
/// With COMMAND, prints that command's page, git-rutter-COMMAND(1). With --install, writes
/// git-rutter(1) and one page per command into --dir DIR, by default the share/man/man1 folder beside
/// the binary's own folder (for `cargo install`, ~/.cargo/share/man/man1), where man-db looks for
/// every folder on your PATH; `git rutter --help` then opens the manual.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The command whose page to print (default: the whole tool).
    #[arg(value_name = "COMMAND", conflicts_with = "install")]
    pub command: Option<String>,
    /// Write every page where man finds them, instead of printing one.
    #[arg(long)]
    pub install: bool,
    /// With --install, the folder to write into (default: <binary's folder>/../share/man/man1).
    #[arg(long, value_name = "DIR", requires = "install")]
    pub dir: Option<PathBuf>,
}

/// Print a shell completion script on stdout.
///
/// The script asks git-rutter at each TAB, so it completes the data too: note paths of the
/// index for `show` and `cited-by`, entry ids for `retract` and `log` (with their summaries),
/// remotes for `sync`. A TAB never writes and never builds the index. The script names this binary by its
/// path: run `completions` again after moving it.
///
/// bash: `git rutter completions bash > ~/.local/share/bash-completion/completions/git-rutter`
/// (it also completes `git rutter …` when git's own completion is loaded);
/// zsh: `git rutter completions zsh > ~/.zfunc/_git-rutter` (with ~/.zfunc on your fpath);
/// fish: `git rutter completions fish > ~/.config/fish/completions/git-rutter.fish`.
#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell.
    pub shell: clap_complete::Shell,
}

/// The `.TH` date field: clap_mangen writes an empty one unquoted, which shifts the source and
/// manual fields left, so it is never empty.
const PAGE_DATE: &str = " ";

/// The binary's name as git runs it (`git rutter` → `git-rutter`).
const BIN: &str = "git-rutter";

/// Runs `man`.
pub fn run(ui: &mut Ui, args: Args) -> CommandResult {
    let pages = pages()?;
    if args.install {
        return install(ui, &pages, args.dir);
    }
    let name = match &args.command {
        Some(c) => format!("{BIN}-{c}"),
        None => BIN.to_string(),
    };
    let Some((_, text)) = pages.iter().find(|(n, _)| *n == name) else {
        return Err(user_error(format!(
            "no command {:?}; `git rutter --help` lists them.",
            args.command.unwrap_or_default()
        )));
    };
    if !super::help::render_on_terminal(text.as_bytes()) {
        ui.write_raw(text.as_bytes())?;
    }
    Ok(Exit::Clean)
}

/// Runs `completions`.
pub fn completions(ui: &mut Ui, args: CompletionsArgs) -> CommandResult {
    // The script asks this very binary at each TAB (by its absolute path, so it works off
    // PATH too; run `completions` again after moving the binary).
    let exe = std::env::current_exe()?;
    let completer = exe.to_str().unwrap_or(BIN);
    let mut out = super::complete::registration(args.shell, completer)?;
    if args.shell == clap_complete::Shell::Bash {
        out.extend_from_slice(GIT_BASH_GLUE.as_bytes());
    }
    ui.write_raw(&out)?;
    Ok(Exit::Clean)
}

/// git's bash completion calls `_git_<command>` for `git <command> …`; this hands those words to
/// the generated `_git__rutter` function as if `git-rutter …` had been typed.
const GIT_BASH_GLUE: &str = r#"
# `git rutter <TAB>` through git's own completion.
_git_rutter() {
    local i shift_by=0
    for ((i = 0; i < ${#words[@]}; i++)); do
        if [[ "${words[i]}" == rutter ]]; then shift_by=$i; break; fi
    done
    COMP_WORDS=("git-rutter" "${words[@]:shift_by+1}")
    COMP_CWORD=$((cword - shift_by))
    _clap_complete_git_rutter "git-rutter" "${cur}" "${prev}"
}
"#;

/// Every page: `(name, roff text)`, the tool's own first.
fn pages() -> anyhow::Result<Vec<(String, String)>> {
    let mut cmd = super::Cli::command()
        .display_name(BIN)
        .bin_name(BIN)
        .disable_help_subcommand(true);
    cmd.build();
    let mut pages = vec![(BIN.to_string(), main_page(&cmd)?)];
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = format!("{BIN}-{}", sub.get_name());
        let shown = format!("git rutter {}", sub.get_name());
        let usage = synopsis(sub, &shown);
        let sub = sub
            .clone()
            .display_name(name.clone())
            .bin_name(shown)
            .override_usage(usage);
        let mut text = Vec::new();
        Man::new(sub)
            .title(name.to_uppercase())
            .date(PAGE_DATE)
            .source(format!("{BIN} {}", env!("CARGO_PKG_VERSION")))
            .manual("Git Rutter Manual")
            .render(&mut text)?;
        see_also(&mut text, &[BIN]);
        pages.push((name, String::from_utf8(text)?));
    }
    Ok(pages)
}

/// git-rutter(1): clap's sections, then the environment, files, exit status and the pages of
/// each command.
fn main_page(cmd: &clap::Command) -> anyhow::Result<String> {
    let mut text = Vec::new();
    let usage = format!(
        "{}\ngit rutter COMMAND [OPTIONS]",
        synopsis(cmd, "git rutter")
    );
    // The about starts with the tool's name ("git-rutter keeps …"): NAME says it once.
    let about = cmd.get_about().map(|a| a.to_string()).unwrap_or_default();
    let about = about
        .strip_prefix("git-rutter keeps ")
        .map_or(about.clone(), |rest| format!("keep {rest}"));
    Man::new(cmd.clone().override_usage(usage).about(about))
        .title("GIT-RUTTER")
        .date(PAGE_DATE)
        .source(format!("{BIN} {}", env!("CARGO_PKG_VERSION")))
        .manual("Git Rutter Manual")
        .render(&mut text)?;
    let mut roff = Roff::default();
    section(&mut roff, "ENVIRONMENT", ENVIRONMENT);
    section(&mut roff, "FILES", FILES);
    section(&mut roff, "EXIT STATUS", EXIT_STATUS);
    append(&mut text, &roff);
    let subs: Vec<String> = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(|s| format!("{BIN}-{}", s.get_name()))
        .collect();
    let subs: Vec<&str> = subs.iter().map(String::as_str).collect();
    see_also(&mut text, &subs);
    Ok(String::from_utf8(text)?)
}

/// The SYNOPSIS line of `cmd` run as `shown`: every option with the value it takes
/// (`[-n|--count N]`, `[--color[=WHEN]]`), then the positional arguments.
fn synopsis(cmd: &clap::Command, shown: &str) -> String {
    let mut line = shown.to_string();
    let visible = cmd
        .get_arguments()
        .filter(|a| !a.is_hide_set() && !matches!(a.get_id().as_str(), "help" | "version"));
    let (positional, options): (Vec<&clap::Arg>, Vec<&clap::Arg>) =
        visible.partition(|a| a.is_positional());
    for a in options {
        let flag = match (a.get_short(), a.get_long()) {
            (Some(s), Some(l)) => format!("-{s}|--{l}"),
            (Some(s), None) => format!("-{s}"),
            (None, Some(l)) => format!("--{l}"),
            (None, None) => continue,
        };
        let value = value_name(a);
        let optional = a.get_num_args().is_some_and(|n| n.min_values() == 0);
        let part = match (a.get_action().takes_values(), optional) {
            (false, _) => flag,
            (true, true) => format!("{flag}[={value}]"),
            (true, false) => format!("{flag} {value}"),
        };
        let repeat =
            matches!(a.get_action(), clap::ArgAction::Append) && a.get_action().takes_values();
        let part = if repeat { format!("{part}...") } else { part };
        line.push_str(&match a.is_required_set() {
            true => format!(" {part}"),
            false => format!(" [{part}]"),
        });
    }
    for a in positional {
        let value = value_name(a);
        line.push_str(&match a.is_required_set() {
            true => format!(" {value}"),
            false => format!(" [{value}]"),
        });
    }
    line
}

/// The name of the value an argument takes (`N`, `DATE`), as its help shows it.
fn value_name(a: &clap::Arg) -> String {
    a.get_value_names()
        .and_then(|v| v.first())
        .map(|v| v.to_string())
        .unwrap_or_else(|| a.get_id().as_str().to_uppercase())
}

const ENVIRONMENT: &[(&str, &str)] = &[
    (
        "LIBRARIAN_VAULT_PATH",
        "The vault, after --vault and before the current repository and git config rutter.vault.",
    ),
    (
        "LIBRARIAN_DB_PATH",
        "Where the disposable search index lives (default .git/rutter/index.sqlite).",
    ),
    (
        "LIBRARIAN_USER_LABEL",
        "Whose work the MCP server's instructions name (default: the user).",
    ),
    (
        "XDG_DATA_HOME",
        "State of a vault that is not a git repository: $XDG_DATA_HOME/rutter/<id>/.",
    ),
];

const FILES: &[(&str, &str)] = &[
    (
        "<vault>/_librarian/sessions/YYYY-MM-DD.md",
        "Day files (UTC): one appended line per recorded decision.",
    ),
    (
        "<vault>/_librarian/note-identity.md",
        "Where renamed notes went: an append-only ledger.",
    ),
    (
        "<vault>/.git/refs/rutter/records",
        "The record chain: git log refs/rutter/records.",
    ),
    (
        "<vault>/.git/rutter/",
        "The capture lock, pending journal, tip witness log, dedupe cache and index.",
    ),
    (
        "<vault>/.git/rutter/timeline.html",
        "The page git rutter timeline --open writes when no -o FILE is given.",
    ),
];

const EXIT_STATUS: &[(&str, &str)] = &[
    (
        "0",
        "Success. git rutter capture always exits 0, so a hook never breaks its client.",
    ),
    (
        "1",
        "A finding (verify) or a user error: the message says what to do.",
    ),
    (
        "2",
        "The command could not run, or its arguments were wrong.",
    ),
];

fn section(roff: &mut Roff, title: &str, items: &[(&str, &str)]) {
    roff.control("SH", [title]);
    for (term, text) in items {
        roff.control("TP", [])
            .text([roman(*term)])
            .text([roman(*text)]);
    }
}

fn see_also(out: &mut Vec<u8>, pages: &[&str]) {
    let refs: Vec<String> = pages.iter().map(|p| format!("{p}(1)")).collect();
    let mut roff = Roff::default();
    roff.control("SH", ["SEE ALSO"]);
    roff.text([roman(format!("{}, git(1)", refs.join(", ")))]);
    append(out, &roff);
}

/// Appends `roff` to a page, without the apostrophe preamble the page already starts with.
fn append(page: &mut Vec<u8>, roff: &Roff) {
    let text = roff.render();
    let body = text
        .split_once(".el .ds Aq '\n")
        .map_or(text.as_str(), |(_, b)| b);
    page.extend_from_slice(body.as_bytes());
}

/// Writes every page into `dir` (default: beside the binary) and says where.
fn install(ui: &mut Ui, pages: &[(String, String)], dir: Option<PathBuf>) -> CommandResult {
    let dir = match dir {
        Some(d) => d,
        None => default_dir()?,
    };
    write_pages(&dir, pages)?;
    ui.print(&format!(
        "Wrote {} manual pages to {}.",
        pages.len(),
        dir.display()
    ))?;
    ui.print("`git rutter [COMMAND] --help` and `git help rutter[-COMMAND]` now open the manual when man searches that folder (man-db does for share/man beside every folder on your PATH; else add it to MANPATH).")?;
    Ok(Exit::Clean)
}

/// Writes every page into `dir`, made if needed (the folder the user named, or beside the
/// binary: outside any vault).
fn write_pages(dir: &Path, pages: &[(String, String)]) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)
        .map_err(|e| anyhow::anyhow!("cannot make the folder {}: {e}", dir.display()))?;
    for (name, text) in pages {
        write_page(dir, name, text)?;
        // `git help rutter-recent` looks for a guide, gitrutter-recent(7 or 1), since
        // git-rutter-recent is no program of its own: one line sends man to the page.
        if let Some(cmd) = name.strip_prefix("git-rutter-") {
            write_page(
                dir,
                &format!("gitrutter-{cmd}"),
                &format!(".so man1/{name}.1\n"),
            )?;
        }
    }
    Ok(())
}

/// Where `setup` installs the manual when `git rutter --help` would not find it: the folder
/// beside the binary ([`default_dir`]), when `man` runs here, finds no git-rutter(1), and the
/// binary's folder is on `PATH` (man-db then searches `../share/man` beside it, as it does for
/// `~/.cargo/bin`). `None` when there is nothing to do or nothing that would help.
pub(crate) fn missing_manual() -> Option<PathBuf> {
    if super::help::installed(BIN)? {
        return None;
    }
    let exe = std::env::current_exe().ok()?;
    let bin_dir = exe.parent()?;
    let on_path =
        std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d == bin_dir));
    match on_path {
        true => default_dir().ok(),
        false => None,
    }
}

/// Installs every page into `dir` for `setup`: how many pages, and whether `man` finds the
/// tool's own page now.
pub(crate) fn install_for_setup(dir: &Path) -> anyhow::Result<(usize, bool)> {
    let pages = pages()?;
    write_pages(dir, &pages)?;
    Ok((pages.len(), super::help::installed(BIN) == Some(true)))
}

/// Writes `text` as `dir/name.1`, whole or not at all, readable by everyone as the pages of
/// any package are (`0644`: a temporary file is made `0600`, and a page installed into a shared
/// folder must be readable by the other users of the machine).
fn write_page(dir: &Path, name: &str, text: &str) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::NamedTempFile::new_in(dir)
        .map_err(|e| anyhow::anyhow!("cannot write in {}: {e}", dir.display()))?;
    std::fs::write(tmp.path(), text)?;
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o644))?;
    tmp.persist(dir.join(format!("{name}.1")))?;
    Ok(())
}

/// `<folder of the running binary>/../share/man/man1`.
fn default_dir() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe()?;
    let bin_dir = exe.parent().unwrap_or(Path::new("."));
    let prefix = bin_dir.parent().unwrap_or(bin_dir);
    Ok(prefix.join("share/man/man1"))
}
