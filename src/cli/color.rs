//! Colour on a terminal, as git decides it: on when stdout is a terminal (or goes to the pager
//! on one), unless `NO_COLOR` is set or git config `color.ui` says `never`/`false`; `always`
//! colours piped output too. Only the CLI's human output is painted, after it was made safe for
//! a terminal (`records::text::terminal_safe`), so a stored summary can never carry an escape
//! sequence of its own; JSON, the MCP server and hooks never see colour.
//!
//! What is painted: record states (`edited after commit`, `deleted`, `unverified` in red;
//! `pending`, `not committed yet`, `retracted` in yellow; `committed` in green), commit ids in
//! yellow as `git log` shows them, diff lines, verify's verdict and findings, status findings.

use anstyle::{AnsiColor, Style};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

/// Whether stdout was a terminal when the command started (before the pager took it).
static TERMINAL: AtomicBool = AtomicBool::new(false);
/// The decision, made the first time something is painted: a command that paints nothing
/// (JSON, a hook) never reads git's config for it.
static ON: OnceLock<bool> = OnceLock::new();

pub const RED: Style = AnsiColor::Red.on_default();
pub const GREEN: Style = AnsiColor::Green.on_default();
pub const YELLOW: Style = AnsiColor::Yellow.on_default();
pub const CYAN: Style = AnsiColor::Cyan.on_default();
pub const BOLD_RED: Style = AnsiColor::Red.on_default().bold();

/// `--color=WHEN`, as git's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum When {
    Auto,
    Always,
    Never,
}

/// The `--color` the command was given.
static FLAG: OnceLock<Option<When>> = OnceLock::new();

/// Notes, before the pager takes stdout, whether stdout is a terminal, and `--color`.
pub fn init(stdout_is_terminal: bool, flag: Option<When>) {
    TERMINAL.store(stdout_is_terminal, Ordering::Relaxed);
    let _ = FLAG.set(flag);
}

fn on() -> bool {
    *ON.get_or_init(|| {
        let terminal = TERMINAL.load(Ordering::Relaxed);
        let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty() && v != "0");
        match FLAG.get().copied().flatten() {
            Some(When::Always) => true,
            Some(When::Never) => false,
            Some(When::Auto) => terminal,
            // NO_COLOR decides alone (git's config is not read), then CLICOLOR_FORCE.
            None if std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()) => false,
            None if set("CLICOLOR_FORCE") => true,
            None => decide(false, color_ui().as_deref(), terminal),
        }
    })
}

/// `NO_COLOR` wins; then `color.ui` as git reads it (`always`; `never`/`false`; `auto`, `true`
/// or unset follow the terminal).
fn decide(no_color: bool, color_ui: Option<&str>, terminal: bool) -> bool {
    if no_color {
        return false;
    }
    match color_ui.map(str::to_ascii_lowercase).as_deref() {
        Some("always") => true,
        Some("never" | "false" | "no" | "off" | "0") => false,
        _ => terminal,
    }
}

/// `color.ui` from git's config (the repository around the current directory, then global).
fn color_ui() -> Option<String> {
    crate::store::gitenv::config_string_here("color.ui")
}

/// `text` in `style` when colour is on.
pub fn paint(style: Style, text: &str) -> String {
    if on() {
        format!("{style}{text}{style:#}")
    } else {
        text.to_string()
    }
}

/// The style of a record state, as `log` and recall name them.
pub fn state_style(state: &str) -> Style {
    match state {
        "committed" => GREEN,
        "pending" | "not committed yet" | "retracted" => YELLOW,
        _ => RED,
    }
}

/// Recall's bracketed marks (`[edited after commit]`, `[UNRESOLVED …`) painted where they occur.
pub fn marks(text: &str) -> String {
    const MARKS: [(&str, Style); 6] = [
        ("[edited after commit]", RED),
        ("[deleted from the working tree]", RED),
        ("[unverified]", RED),
        ("[UNRESOLVED", RED),
        ("[not committed yet]", YELLOW),
        ("[STALE", YELLOW),
    ];
    if !on() {
        return text.to_string();
    }
    let mut out = text.to_string();
    for (mark, style) in MARKS {
        out = out.replace(mark, &paint(style, mark));
    }
    out
}

/// A unified diff (any indentation) with removed lines red, added green, hunks cyan.
pub fn diff(text: &str) -> String {
    if !on() {
        return text.to_string();
    }
    let lines: Vec<String> = text.lines().map(diff_line).collect();
    lines.join("\n")
}

fn diff_line(line: &str) -> String {
    let body = line.trim_start();
    let style = if body.starts_with("---") || body.starts_with("+++") {
        Style::new().bold()
    } else if body.starts_with("@@") {
        CYAN
    } else if body.starts_with('-') {
        RED
    } else if body.starts_with('+') {
        GREEN
    } else {
        return line.to_string();
    };
    let indent = &line[..line.len() - body.len()];
    format!("{indent}{}", paint(style, body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_color_wins_and_color_ui_is_read_as_git_reads_it() {
        assert!(!decide(true, Some("always"), true));
        assert!(decide(false, None, true));
        assert!(!decide(false, None, false));
        assert!(decide(false, Some("always"), false));
        assert!(decide(false, Some("auto"), true));
        assert!(
            decide(false, Some("true"), true),
            "true means auto, as in git"
        );
        assert!(!decide(false, Some("true"), false));
        assert!(!decide(false, Some("never"), true));
        assert!(!decide(false, Some("False"), true));
    }
}
