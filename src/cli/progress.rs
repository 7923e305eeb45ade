//! A progress line on stderr for work that may take more than a second (the first index build,
//! `init` adopting years of day files, `verify --full`): nothing for quick work, one line saying
//! what is happening once a second has passed, and how long it took at the end. Only on a
//! terminal (the command's [`Ui`] says whether stderr is one); scripts, hooks and tests see
//! nothing. The line is written to the process's stderr from a thread of its own.

use super::ui::Ui;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long work may run before the line appears.
const AFTER: Duration = Duration::from_secs(1);

/// Debug builds only: replaces [`AFTER`] (milliseconds), so a test sees the line for quick work.
const AFTER_ENV: &str = "RUTTER_PROGRESS_AFTER_MS";

fn after() -> Duration {
    let pinned = cfg!(debug_assertions)
        .then(|| std::env::var(AFTER_ENV).ok()?.parse().ok())
        .flatten();
    pinned.map_or(AFTER, Duration::from_millis)
}

/// A running progress line; dropping it ends the line (with the time taken, if it was shown).
pub(crate) struct Progress {
    done: Option<mpsc::Sender<()>>,
    shown: Option<JoinHandle<bool>>,
    started: Instant,
}

impl Progress {
    /// Starts watching: `what` ("building the search index (first run)") is printed to stderr
    /// if the work is still running a second from now and stderr is a terminal.
    pub fn start(ui: &Ui, what: &str) -> Progress {
        let started = Instant::now();
        if !ui.stderr_is_terminal() {
            return Progress {
                done: None,
                shown: None,
                started,
            };
        }
        let (tx, rx) = mpsc::channel::<()>();
        let what = what.to_string();
        let wait = after();
        if wait.is_zero() {
            // No delay (a test's pinned one): the line is shown whatever the threads' order.
            eprint!("git-rutter: {what}…");
            return Progress {
                done: None,
                shown: Some(std::thread::spawn(|| true)),
                started,
            };
        }
        let shown = std::thread::spawn(move || match rx.recv_timeout(wait) {
            Err(RecvTimeoutError::Timeout) => {
                eprint!("git-rutter: {what}…");
                true
            }
            _ => false,
        });
        Progress {
            done: Some(tx),
            shown: Some(shown),
            started,
        }
    }

    /// Starts watching a first index build when `vault` has no index yet.
    pub fn index_build(ui: &Ui, vault: &crate::vault::Vault) -> Option<Progress> {
        let (path, _) = crate::index::location(vault);
        (!path.exists()).then(|| Progress::start(ui, "building the search index (first run)"))
    }

    /// The line for a search by words, whose first run indexes the words of every recorded
    /// entry once (about two seconds for ten years of records).
    pub fn words_index(ui: &Ui) -> Progress {
        Progress::start(
            ui,
            "indexing the words of the record (first search by words)",
        )
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(tx) = self.done.take() {
            let _ = tx.send(());
        }
        let shown = self.shown.take().is_some_and(|h| h.join().unwrap_or(false));
        if shown {
            eprintln!(" done in {:.1} s.", self.started.elapsed().as_secs_f64());
        }
    }
}
