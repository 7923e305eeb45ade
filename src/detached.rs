//! This program started again in the background, for work nothing waits for (`sync --auto`
//! after a capture, `watch` for `rutter.watch`): the running binary, `--vault ROOT` and the
//! arguments, in its own process group (a Ctrl-C to the client or the hook's end does not
//! reach it) with its standard streams closed.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// Starts `git-rutter --vault ROOT ARGS` detached; `None` when it cannot be started. The
/// caller reaps the child if it outlives it (a long-lived process), or leaves it to init.
pub(crate) fn start(root: &Path, args: &[&str]) -> Option<Child> {
    let exe = std::env::current_exe().ok()?;
    Command::new(exe)
        .arg("--vault")
        .arg(root)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .ok()
}
