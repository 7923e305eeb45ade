//! The output handle every command writes through, as jj's `Ui`: stdout (or the pager's input),
//! stderr, the colour decision and the pager. No command touches the process's stdout, so a
//! command runs in-process against buffers ([`Ui::with_buffers`]) exactly as it runs on a
//! terminal: tests/human_output/ pins its stdout, stderr and exit status that way.
//!
//! What is printed to stdout is made terminal-safe (`records::text::terminal_safe`) before any
//! colour is applied, so only our own escapes reach a terminal; a reader that stopped reading
//! (`git rutter recent | head`, a pager quit early) is not an error.

use super::color::{self, Palette};
use super::pager::Pager;
use crate::records::text;
use std::cell::{OnceCell, RefCell};
use std::fmt::Display;
use std::io::{self, IsTerminal, Write};
use std::rc::Rc;

/// Where a command's output goes, and how it looks.
pub struct Ui {
    out: Box<dyn Write>,
    err: Box<dyn Write>,
    /// The colour decision, made the first time something is painted: a command that paints
    /// nothing (JSON, a refusal) never reads git's config for it.
    color: OnceCell<bool>,
    rule: color::Rule,
    stdout_terminal: bool,
    stderr_terminal: bool,
    pager: Option<Pager>,
}

impl Ui {
    /// The process's stdout and stderr, colour decided by `--color` (`flag`), the environment
    /// and git's config, as git decides it (see [`color`]).
    pub fn for_process(flag: Option<color::When>) -> Ui {
        let stdout_terminal = io::stdout().is_terminal();
        Ui {
            out: Box::new(io::stdout()),
            err: Box::new(io::stderr()),
            color: OnceCell::new(),
            rule: color::Rule {
                terminal: stdout_terminal,
                flag,
            },
            stdout_terminal,
            stderr_terminal: io::stderr().is_terminal(),
            pager: None,
        }
    }

    /// A handle writing into two buffers (stdout, stderr), with colour on or off; neither is a
    /// terminal, so there is no pager and no progress line.
    pub fn with_buffers(color: bool) -> (Ui, Captured) {
        let captured = Captured::default();
        let ui = Ui {
            out: Box::new(captured.out.clone()),
            err: Box::new(captured.err.clone()),
            color: OnceCell::from(color),
            rule: color::Rule {
                terminal: false,
                flag: None,
            },
            stdout_terminal: false,
            stderr_terminal: false,
            pager: None,
        };
        (ui, captured)
    }

    /// Sends stdout through the pager from now on, when one applies (stdout is a terminal, no
    /// `--no-pager`, and git's rules name a pager; see [`super::pager`]).
    pub(crate) fn start_pager(&mut self, no_pager: bool) {
        if no_pager || !self.stdout_terminal || self.pager.is_some() {
            return;
        }
        if let Some((pager, input)) = super::pager::start() {
            let _ = self.out.flush();
            self.out = Box::new(input);
            self.pager = Some(pager);
        }
    }

    /// The colours to paint with (plain when colour is off).
    pub(crate) fn palette(&self) -> Palette {
        Palette::new(*self.color.get_or_init(|| self.rule.decide()))
    }

    /// Whether stdout is a terminal (before any pager took it).
    pub(crate) fn stdout_is_terminal(&self) -> bool {
        self.stdout_terminal
    }

    /// Whether stderr is a terminal (a progress line is shown only there).
    pub(crate) fn stderr_is_terminal(&self) -> bool {
        self.stderr_terminal
    }

    /// Prints `text` and a newline, made terminal-safe.
    pub(crate) fn print(&mut self, text: &str) -> io::Result<()> {
        let safe = text::terminal_safe(text);
        self.write_out(&safe, "\n")
    }

    /// As [`Ui::print`], with `paint` applied to the terminal-safe text, so only our own
    /// escapes reach the terminal.
    pub(crate) fn print_painted(
        &mut self,
        text: &str,
        paint: impl Fn(&Palette, &str) -> String,
    ) -> io::Result<()> {
        let painted = paint(&self.palette(), &text::terminal_safe(text));
        self.write_out(&painted, "\n")
    }

    /// Prints `value` as pretty JSON, characters a terminal would act on written as `\uXXXX`.
    /// Written as it is made, not held whole (an answer of the whole record is most of a
    /// gigabyte on a heavy vault).
    pub(crate) fn print_json(&mut self, value: &impl serde::Serialize) -> anyhow::Result<()> {
        let mut out = text::JsonSafe::buffered(&mut self.out);
        match serde_json::to_writer_pretty(&mut out, value) {
            Err(e) if !e.is_io() => {
                // A value that cannot be written as JSON (a path that is not UTF-8): what the
                // buffer holds is dropped, so stdout stays empty (spec/output.md).
                let _ = out.into_parts();
                Err(e.into())
            }
            written => {
                let written = written
                    .map_err(io::Error::from)
                    .and_then(|_| out.write_all(b"\n"))
                    .and_then(|_| out.flush());
                Ok(quiet_on_broken_pipe(written)?)
            }
        }
    }

    /// Writes bytes to stdout as they are (a manual page, a completion script).
    pub(crate) fn write_raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        quiet_on_broken_pipe(self.out.write_all(bytes).and_then(|_| self.out.flush()))
    }

    /// stdout itself, for output written in parts (`recent --all`); the caller sanitises and
    /// treats a broken pipe as success.
    pub fn stdout(&mut self) -> &mut dyn Write {
        &mut self.out
    }

    /// Writes one line to stderr, made terminal-safe as stdout is: a message or a hint that
    /// quotes what the user typed (a remote's name, a path) never writes an escape or a line
    /// break of its own. A message that cannot be written is dropped: it never turns a
    /// command's outcome into a panic.
    pub(crate) fn warn(&mut self, line: impl Display) {
        let line = line.to_string();
        let safe = text::terminal_safe(&line);
        let _ = writeln!(self.err, "{safe}").and_then(|_| self.err.flush());
    }

    /// stderr itself, for a message written in parts.
    pub fn stderr(&mut self) -> &mut dyn Write {
        &mut self.err
    }

    fn write_out(&mut self, text: &str, end: &str) -> io::Result<()> {
        let written = write!(self.out, "{text}{end}").and_then(|_| self.out.flush());
        quiet_on_broken_pipe(written)
    }
}

impl Drop for Ui {
    /// Closes the pager's input and waits for the user to quit it.
    fn drop(&mut self) {
        let _ = self.out.flush();
        if let Some(pager) = self.pager.take() {
            self.out = Box::new(io::sink());
            pager.wait();
        }
    }
}

/// A reader that stopped reading is not an error; anything else is.
pub(crate) fn quiet_on_broken_pipe(r: io::Result<()>) -> io::Result<()> {
    match r {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// What a [`Ui::with_buffers`] handle was given.
#[derive(Clone, Default)]
pub struct Captured {
    out: Buffer,
    err: Buffer,
}

impl Captured {
    /// Everything written to stdout so far.
    pub fn stdout(&self) -> String {
        self.out.text()
    }

    /// Everything written to stderr so far.
    pub fn stderr(&self) -> String {
        self.err.text()
    }
}

/// A shared, growing byte buffer.
#[derive(Clone, Default)]
struct Buffer(Rc<RefCell<Vec<u8>>>);

impl Buffer {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.borrow()).into_owned()
    }
}

impl Write for Buffer {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stdout_is_made_terminal_safe_before_it_is_painted() {
        let (mut ui, got) = Ui::with_buffers(true);
        ui.print_painted("a \u{1b}[31mred\u{1b}[0m [unverified]", |p, t| p.marks(t))
            .unwrap();
        let out = got.stdout();
        assert!(out.contains("\u{1b}[31m[unverified]"), "{out:?}");
        assert!(!out.contains("\u{1b}[31mred"), "{out:?}");
        ui.warn("to stderr");
        assert_eq!(got.stderr(), "to stderr\n");
    }

    #[test]
    fn colour_off_paints_nothing_and_json_is_escaped() {
        let (mut ui, got) = Ui::with_buffers(false);
        ui.print_painted("[unverified]", |p, t| p.marks(t)).unwrap();
        ui.print_json(&serde_json::json!({"s": "\u{1b}"})).unwrap();
        assert_eq!(got.stdout(), "[unverified]\n{\n  \"s\": \"\\u001b\"\n}\n");
    }

    /// stderr is made terminal-safe as stdout is: an escape is shown, line breaks stay.
    #[test]
    fn stderr_is_made_terminal_safe() {
        let (mut ui, got) = Ui::with_buffers(false);
        ui.warn("git-rutter: `git remote add NAME '/x\u{1b}[31m'`\nnext\tline");
        assert_eq!(
            got.stderr(),
            "git-rutter: `git remote add NAME '/x\\u{001B}[31m'`\nnext\tline\n"
        );
    }

    /// A document that cannot be written as JSON (here a map keyed by numbers pairs, which JSON
    /// has no key for) is an error, and stdout stays empty, though it is streamed.
    #[test]
    fn a_json_document_that_fails_leaves_stdout_empty() {
        let (mut ui, got) = Ui::with_buffers(false);
        let bad: std::collections::BTreeMap<(u8, u8), &str> = [((1, 2), "x")].into();
        let doc = serde_json::json!({"first": "written before the failure"});
        assert!(ui.print_json(&(doc, bad)).is_err());
        assert_eq!(got.stdout(), "");
        ui.print_json(&serde_json::json!({"a": 1})).unwrap();
        assert_eq!(got.stdout(), "{\n  \"a\": 1\n}\n");
    }
}
