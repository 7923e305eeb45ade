//! The `git-rutter` binary: parse the command line, run it, map the result to an exit status.
//! `git rutter capture` always exits 0, whatever its arguments (a hook never breaks a client);
//! asked for help, or run by hand on a terminal with nothing to capture, it prints its help.
//! `CMD --help` on a terminal opens git-rutter-CMD(1), as git does (`cli::help`).

use clap::{CommandFactory, Parser};
use std::io::IsTerminal;

fn main() {
    tune_allocator();
    // A shell asking for completions (`git rutter completions SHELL` wrote the script that
    // does) is answered and the process exits; otherwise this returns at once.
    clap_complete::CompleteEnv::with_factory(rutter::cli::Cli::command)
        .var(rutter::cli::complete::VAR)
        .bin("git-rutter")
        .complete();
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let is_capture = subcommand(&args).as_deref() == Some("capture");
    if is_capture && capture_by_hand(&args) {
        print_capture_help();
        std::process::exit(0);
    }
    if let Some(page) = manual_page(&args) {
        if rutter::cli::help::open_installed(&page) {
            std::process::exit(0);
        }
    }
    let cli = match rutter::cli::Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) if is_capture && !e.use_stderr() => {
            let _ = e.print();
            std::process::exit(0);
        }
        Err(e) if is_capture => {
            let first = e.to_string();
            let first = first.lines().next().unwrap_or("invalid arguments");
            rutter::capture::runlog::record_bad_arguments(&args, first);
            rutter::cli::capture::say(&[format!("[librarian-capture] {first}; nothing captured.")]);
            std::process::exit(0);
        }
        Err(e) => {
            let code = if e.use_stderr() {
                rutter::cli::EXIT_CANNOT_RUN
            } else {
                0
            };
            let _ = e.print();
            std::process::exit(code);
        }
    };
    std::process::exit(rutter::cli::run(cli));
}

/// The manual page `CMD --help` asks for (`git-rutter-recent`), when it names a command; the
/// tool's own page is git's to open (`git rutter --help` runs `git help rutter`).
fn manual_page(args: &[std::ffi::OsString]) -> Option<String> {
    if !rutter::cli::help::asks_long_help(args) {
        return None;
    }
    let sub = subcommand(args)?;
    let cmd = rutter::cli::Cli::command();
    let found = cmd.find_subcommand(&sub)?;
    (found.get_name() != "capture" && !found.is_hide_set()).then(|| format!("git-rutter-{sub}"))
}

/// The subcommand's name: the first argument that is neither an option nor the value of the
/// global `--vault`.
fn subcommand(args: &[std::ffi::OsString]) -> Option<String> {
    let mut rest = args.iter().skip(1).map(|a| a.to_string_lossy());
    while let Some(arg) = rest.next() {
        match arg.as_ref() {
            "--vault" => {
                rest.next();
            }
            a if a.starts_with('-') => {}
            a => return Some(a.to_string()),
        }
    }
    None
}

/// `capture` run by a person rather than a hook: no `--summary` and stdin is a terminal (a hook
/// always pipes its payload), so there is nothing to read.
fn capture_by_hand(args: &[std::ffi::OsString]) -> bool {
    let manual = args
        .iter()
        .any(|a| a.to_string_lossy().starts_with("--summary"));
    !manual && std::io::stdin().is_terminal()
}

fn print_capture_help() {
    let mut cmd = rutter::cli::Cli::command();
    if let Some(capture) = cmd.find_subcommand_mut("capture") {
        let _ = capture.print_long_help();
    }
}

/// glibc's malloc gives memory back to the system whenever more than 128 KiB is free at the top
/// of the heap. libgit2 allocates and frees ~256 KiB of zlib state for each object it writes, so
/// a capture's six loose objects shrank and regrew the heap six times, each regrowth a fresh set
/// of pages to fault in (a quarter of a capture's page faults; docs/performance.md).
/// Keep up to 16 MiB free at the top, grow it 1 MiB at a time, and keep blocks under 4 MiB on
/// the heap (setting one threshold turns off glibc's own adjustment of the others).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn tune_allocator() {
    const MIB: libc::c_int = 1 << 20;
    for (param, value) in [
        (libc::M_TRIM_THRESHOLD, 16 * MIB),
        (libc::M_TOP_PAD, MIB),
        (libc::M_MMAP_THRESHOLD, 4 * MIB),
    ] {
        // SAFETY: mallopt only sets malloc's tuning parameters; it is called first thing on
        // the main thread, before any other thread exists, with values glibc documents.
        unsafe {
            libc::mallopt(param, value);
        }
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn tune_allocator() {}
