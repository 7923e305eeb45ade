//! Colour on a terminal, as git decides it: on when stdout is a terminal (or goes to the pager
//! on one), unless `NO_COLOR` is set or git config `color.ui` says `never`/`false`; `always`
//! colours piped output too. The decision is [`Rule::decide`], made once per
//! [`super::ui::Ui`]. Only the CLI's human output is painted, after it was made safe for a
//! terminal (`records::text::terminal_safe`), so a stored summary can never carry an escape
//! sequence of its own; JSON, the MCP server and hooks never see colour.
//!
//! What is painted: record states, by the tone their status declares
//! (`records::standing::Status::tone`, `recall::row::Standing::tone`: sound in green, a warning
//! in yellow, wrong in red), as `log` names them and as recall marks them; commit ids in yellow
//! as `git log` shows them, diff lines, verify's verdict and findings, status findings.

use crate::recall::row::Standing;
use crate::records::standing::{Status, Tone};
use anstyle::{AnsiColor, Style};

pub(crate) const RED: Style = AnsiColor::Red.on_default();
pub(crate) const GREEN: Style = AnsiColor::Green.on_default();
pub(crate) const YELLOW: Style = AnsiColor::Yellow.on_default();
pub(crate) const CYAN: Style = AnsiColor::Cyan.on_default();
pub(crate) const BOLD_RED: Style = AnsiColor::Red.on_default().bold();

/// `--color=WHEN`, as git's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum When {
    Auto,
    Always,
    Never,
}

/// What decides colour: whether stdout was a terminal when the command started (before the
/// pager took it), and `--color`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rule {
    pub terminal: bool,
    pub flag: Option<When>,
}

impl Rule {
    /// Whether to colour: `--color`, else `NO_COLOR`, then `CLICOLOR_FORCE`, then git's
    /// `color.ui` and the terminal.
    pub(crate) fn decide(self) -> bool {
        let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty() && v != "0");
        match self.flag {
            Some(When::Always) => true,
            Some(When::Never) => false,
            Some(When::Auto) => self.terminal,
            // NO_COLOR decides alone (git's config is not read), then CLICOLOR_FORCE.
            None if std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()) => false,
            None if set("CLICOLOR_FORCE") => true,
            None => decide(false, color_ui().as_deref(), self.terminal),
        }
    }
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

/// The style of a tone: sound green, a warning yellow, wrong red.
pub(crate) fn tone_style(tone: Tone) -> Style {
    match tone {
        Tone::Ok => GREEN,
        Tone::Warn => YELLOW,
        Tone::Bad => RED,
    }
}

/// The style of how an entry stands, as `log` names it.
pub(crate) fn state_style(standing: Standing) -> Style {
    tone_style(standing.tone())
}

/// Paints text, or leaves it plain when colour is off (from [`super::ui::Ui::palette`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Palette {
    on: bool,
}

impl Palette {
    /// A palette that paints (`on`) or leaves text as it is.
    pub(crate) fn new(on: bool) -> Palette {
        Palette { on }
    }

    /// `text` in `style` when colour is on.
    pub(crate) fn paint(&self, style: Style, text: &str) -> String {
        if self.on {
            format!("{style}{text}{style:#}")
        } else {
            text.to_string()
        }
    }

    /// Recall's bracketed marks painted where they occur: each status's mark
    /// (`[edited after commit]`, `[not committed yet]`…) by its tone, and a reference's
    /// `[UNRESOLVED …` in red and `[STALE …` in yellow.
    pub(crate) fn marks(&self, text: &str) -> String {
        const REFS: [(&str, Style); 2] = [("[UNRESOLVED", RED), ("[STALE", YELLOW)];
        if !self.on {
            return text.to_string();
        }
        let statuses = Status::ALL
            .into_iter()
            .filter_map(|s| Some((s.mark()?, tone_style(s.tone()))));
        let mut out = text.to_string();
        for (mark, style) in statuses.chain(REFS) {
            out = out.replace(mark, &self.paint(style, mark));
        }
        out
    }

    /// A unified diff whose every line is indented by `indent` spaces (0 for `diff`, 2 in
    /// verify's findings, 4 in `log -p`): removed lines red, added green, hunk heads cyan, file
    /// heads bold. The marker is the character after the indent, so a context line (a space,
    /// then the line) is never read as the `-` of the entry line it shows.
    pub(crate) fn diff(&self, text: &str, indent: usize) -> String {
        if !self.on {
            return text.to_string();
        }
        let lines: Vec<String> = text.lines().map(|l| self.diff_line(l, indent)).collect();
        lines.join("\n")
    }

    fn diff_line(&self, line: &str, indent: usize) -> String {
        let pad = line.bytes().take(indent).take_while(|b| *b == b' ').count();
        let (indent, body) = line.split_at(pad);
        let style = if body.starts_with("--- ") || body.starts_with("+++ ") {
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
        format!("{indent}{}", self.paint(style, body))
    }
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

    #[test]
    fn each_standing_and_mark_is_painted_by_its_tone() {
        let painted: Vec<(&str, Style)> = Status::ALL
            .into_iter()
            .map(Standing::Is)
            .chain([Standing::Retracted])
            .map(|s| (s.name(), state_style(s)))
            .collect();
        assert_eq!(
            painted,
            [
                ("committed", GREEN),
                ("pending", YELLOW),
                ("edited after commit", RED),
                ("deleted", RED),
                ("unverified", RED),
                ("purged", RED),
                ("retracted", YELLOW),
            ]
        );
        let p = Palette::new(true);
        let text = "a [not committed yet] b [edited after commit] c [deleted from the working tree] d [unverified] e [UNRESOLVED x] f [STALE y]";
        assert_eq!(
            p.marks(text),
            "a \u{1b}[33m[not committed yet]\u{1b}[0m b \u{1b}[31m[edited after commit]\u{1b}[0m c \u{1b}[31m[deleted from the working tree]\u{1b}[0m d \u{1b}[31m[unverified]\u{1b}[0m e \u{1b}[31m[UNRESOLVED\u{1b}[0m x] f \u{1b}[33m[STALE\u{1b}[0m y]"
        );
        assert_eq!(Palette::new(false).marks(text), text);
    }

    #[test]
    fn a_diff_is_painted_by_the_marker_after_its_indent() {
        let p = Palette::new(true);
        let diff = "--- a/day.md\n+++ b/day.md\n@@ -1,3 +1,3 @@\n ---\n - 10:00 kept\n-- 10:01 old\n+- 10:01 new\n----";
        let painted = p.diff(diff, 0);
        let lines: Vec<&str> = painted.lines().collect();
        assert_eq!(lines[0], "\u{1b}[1m--- a/day.md\u{1b}[0m");
        assert_eq!(lines[2], "\u{1b}[36m@@ -1,3 +1,3 @@\u{1b}[0m");
        assert_eq!(lines[3], " ---", "a context line is plain");
        assert_eq!(lines[4], " - 10:00 kept", "a context line is plain");
        assert_eq!(lines[5], "\u{1b}[31m-- 10:01 old\u{1b}[0m");
        assert_eq!(lines[6], "\u{1b}[32m+- 10:01 new\u{1b}[0m");
        assert_eq!(
            lines[7], "\u{1b}[31m----\u{1b}[0m",
            "a removed `---` line is red"
        );
        let indented = p.diff("   - 10:00 kept\n  -- 10:01 old", 2);
        assert_eq!(
            indented,
            "   - 10:00 kept\n  \u{1b}[31m-- 10:01 old\u{1b}[0m"
        );
        assert_eq!(Palette::new(false).diff(diff, 0), diff);
    }
}
