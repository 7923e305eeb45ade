//! Running the `git` CLI, for the few things libgit2 does not do here (transport with the
//! user's credentials, `commit-tree -S`, `verify-commit`, `gc --auto`).
//!
//! `git` is always run by the absolute path found on `PATH`, skipping relative entries (a
//! relative `PATH` entry would let the current directory, often a vault holding untrusted
//! files, choose the program), with `GIT_TERMINAL_PROMPT=0` and stdin closed, so it never
//! waits on a prompt the user cannot see (a hook has no terminal).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// The absolute path of `git` on `PATH`, skipping relative entries.
pub(crate) fn git_program() -> Option<PathBuf> {
    program("git")
}

/// The absolute path of the program `name` on `PATH`, skipping relative entries (so the
/// current folder never chooses it; `man` for help is found this way too).
pub(crate) fn program(name: &str) -> Option<PathBuf> {
    find_on(&std::env::var_os("PATH")?, name)
}

fn find_on(path: &std::ffi::OsStr, name: &str) -> Option<PathBuf> {
    std::env::split_paths(path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// A `git` command that never prompts (stdin closed), or `None` when git is not on `PATH`.
pub(crate) fn git() -> Option<Command> {
    let mut cmd = Command::new(git_program()?);
    cmd.env("GIT_TERMINAL_PROMPT", "0").stdin(Stdio::null());
    Some(cmd)
}

/// `git -C <root>`, as [`git`].
pub(crate) fn git_in(root: &Path) -> Option<Command> {
    let mut cmd = git()?;
    cmd.arg("-C").arg(root);
    Some(cmd)
}

/// Runs `cmd` to its end, its output captured, stopping it when it runs longer than `wall`
/// (`Ok(None)`): a remote that hangs (a stalled connection, a hook that never returns) holds
/// up no sync for longer than that. Without a terminal to prompt on, git and what it starts
/// (ssh, a remote helper) run in a process group of their own and the whole group is stopped;
/// on a terminal they stay in the foreground, where ssh may ask for a passphrase, and only git
/// itself is stopped.
pub(crate) fn output_within(
    mut cmd: Command,
    wall: Option<Duration>,
) -> std::io::Result<Option<Output>> {
    use std::io::IsTerminal;
    use std::os::unix::process::CommandExt;
    let grouped = !std::io::stderr().is_terminal();
    if grouped {
        cmd.process_group(0);
    }
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
    let out = drain(child.stdout.take());
    let err = drain(child.stderr.take());
    let deadline = wall.map(|w| std::time::Instant::now() + w);
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if deadline.is_some_and(|d| std::time::Instant::now() >= d) {
            stop(&mut child, grouped);
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    // A grandchild that outlives git may hold the pipes open: wait a moment, no more.
    let collect =
        |rx: mpsc::Receiver<Vec<u8>>| rx.recv_timeout(Duration::from_secs(2)).unwrap_or_default();
    Ok(Some(Output {
        status,
        stdout: collect(out),
        stderr: collect(err),
    }))
}

/// Reads a pipe to its end on a thread of its own.
fn drain(pipe: Option<impl Read + Send + 'static>) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    if let Some(mut pipe) = pipe {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = pipe.read_to_end(&mut buf);
            let _ = tx.send(buf);
        });
    }
    rx
}

/// Stops a child that ran too long (its whole process group when it has one) and reaps it.
fn stop(child: &mut Child, grouped: bool) {
    let pid = rustix::process::Pid::from_raw(child.id() as i32);
    match (grouped, pid) {
        (true, Some(pid)) => {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
        _ => {
            let _ = child.kill();
        }
    }
    let _ = child.wait();
}

/// The lines of `git diff --name-status` (without `-z`): `(status letter, path)`, the path
/// unquoted as git quotes one holding a `"`, a backslash, a control or (with
/// `core.quotePath`) a non-ASCII byte. A line git would not print is skipped.
pub(crate) fn name_status(text: &str) -> Vec<(char, String)> {
    text.lines()
        .filter_map(|line| {
            let (status, path) = line.split_once('\t')?;
            let letter = status.chars().next()?;
            Some((letter, unquote(path)?))
        })
        .collect()
}

/// A path as git prints it: bare, or in double quotes with C escapes (`\t`, `\"`, `\\`,
/// `\NNN` octal for each byte). `None` for a quoted path that does not end its quote.
fn unquote(path: &str) -> Option<String> {
    let Some(inner) = path.strip_prefix('"') else {
        return Some(path.to_string());
    };
    let inner = inner.strip_suffix('"')?;
    let mut out: Vec<u8> = Vec::with_capacity(inner.len());
    let mut bytes = inner.bytes().peekable();
    while let Some(b) = bytes.next() {
        if b != b'\\' {
            out.push(b);
            continue;
        }
        let e = bytes.next()?;
        out.push(match e {
            b'a' => 7,
            b'b' => 8,
            b't' => b'\t',
            b'n' => b'\n',
            b'v' => 11,
            b'f' => 12,
            b'r' => b'\r',
            b'0'..=b'7' => {
                let mut n = u32::from(e - b'0');
                for _ in 0..2 {
                    let d = bytes.next().filter(|d| (b'0'..=b'7').contains(d))?;
                    n = n * 8 + u32::from(d - b'0');
                }
                u8::try_from(n).ok()?
            }
            other => other,
        });
    }
    Some(String::from_utf8_lossy(&out).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn name_status_reads_the_paths_git_quotes() {
        let text = "M\tNotes/a.md\nD\t\"Notes/tab\\there.md\"\nA\t\"Notes/caf\\303\\251 \\\"q\\\" \\\\.md\"\nT\tx\nbroken\n";
        assert_eq!(
            name_status(text),
            [
                ('M', "Notes/a.md".to_string()),
                ('D', "Notes/tab\there.md".to_string()),
                ('A', "Notes/café \"q\" \\.md".to_string()),
                ('T', "x".to_string()),
            ]
        );
        assert_eq!(unquote("\"open"), None);
        assert_eq!(unquote("\"bad\\9\""), Some("bad9".to_string()));
        assert_eq!(unquote("\"\\477\""), None, "not a byte");
    }

    #[test]
    fn only_absolute_path_entries_are_searched() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let fake = bin.join("git");
        std::fs::write(&fake, "#!/bin/sh\nexit 0\n").unwrap();
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        // A relative entry that would resolve to the fake git from the current directory.
        let cwd = std::env::current_dir().unwrap();
        let up = "../".repeat(cwd.components().count() - 1);
        let rel = format!("{up}{}", bin.display().to_string().trim_start_matches('/'));
        assert!(Path::new(&rel).join("git").exists(), "test setup: {rel}");
        assert_eq!(
            find_on(rel.as_ref(), "git"),
            None,
            "a relative PATH entry must not be used"
        );
        let both = format!("{rel}:{}", bin.display());
        assert_eq!(find_on(both.as_ref(), "git"), Some(fake));
    }

    #[test]
    fn a_non_executable_git_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("git"), "not a program").unwrap();
        assert_eq!(find_on(dir.path().as_os_str(), "git"), None);
    }
}
