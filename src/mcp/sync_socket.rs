//! The socket a running server answers commands on: "is the index current?" (spec/index.md,
//! "Freshness": "The watcher's answer"; the client is `crate::index::watcher`).
//!
//! It sits beside the index (`<index>.watch`), so only a command that opens the same index
//! finds it, and it lives as long as the server: a server that stopped, or was killed, leaves
//! at most a socket file nothing listens on, which refuses the connection at once. One request
//! at a time, each answered by one line; a client that sends nothing within `CLIENT_WAIT` is
//! dropped. A server bound there before is replaced (the newest serves); on exit, the server
//! removes the socket only if it is still its own.

use crate::index::watcher;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a connected client has to send its request.
const CLIENT_WAIT: Duration = Duration::from_secs(1);
/// The most read of a request.
const REQUEST_MAX: u64 = 256;

/// A bound socket; dropping it removes the socket file if it is still this one.
pub(crate) struct Listening {
    path: PathBuf,
    ino: u64,
}

/// Binds the socket beside the index at `db` and answers each request with `answer` on a
/// thread of its own, for as long as the process runs. `None` (and stderr says why) when the
/// socket cannot be made: commands then check the notes themselves.
pub(crate) fn listen(db: &Path, answer: impl Fn() -> String + Send + 'static) -> Option<Listening> {
    let path = watcher::socket_path(db);
    match bind(&path) {
        Ok((listener, ino)) => {
            let spawned = std::thread::Builder::new()
                .name("rutter-sync".into())
                .spawn(move || serve(&listener, &answer));
            match spawned {
                Ok(_) => Some(Listening { path, ino }),
                Err(e) => {
                    eprintln!("[rutter] commands will check the notes themselves: {e}");
                    None
                }
            }
        }
        Err(e) => {
            eprintln!(
                "[rutter] commands will check the notes themselves: cannot listen at {}: {e}",
                path.display()
            );
            None
        }
    }
}

/// Removes a socket left at `path` (by a server that stopped or is replaced; never a file of
/// another kind), binds a new one readable by the owner only, and returns it with its inode.
fn bind(path: &Path) -> std::io::Result<(UnixListener, u64)> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_socket() => std::fs::remove_file(path)?,
        Ok(_) => {
            return Err(std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                "something other than a socket is there",
            ))
        }
        Err(_) => {}
    }
    let listener = UnixListener::bind(path)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    let ino = std::fs::symlink_metadata(path)?.ino();
    Ok((listener, ino))
}

fn serve(listener: &UnixListener, answer: &dyn Fn() -> String) {
    for stream in listener.incoming() {
        match stream {
            Ok(stream) => {
                let _ = answer_one(stream, answer);
            }
            // A failed accept (the process is out of descriptors): the next may work.
            Err(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
}

/// Reads one request line and writes the answer to a `sync`; anything else is dropped.
fn answer_one(stream: UnixStream, answer: &dyn Fn() -> String) -> std::io::Result<()> {
    stream.set_read_timeout(Some(CLIENT_WAIT))?;
    stream.set_write_timeout(Some(CLIENT_WAIT))?;
    let mut line = String::new();
    BufReader::new((&stream).take(REQUEST_MAX)).read_line(&mut line)?;
    if line.trim_end() != watcher::REQUEST {
        return Ok(());
    }
    (&stream).write_all(answer().as_bytes())
}

impl Listening {
    /// The socket file's inode: while the file at its path has it, it is this one.
    pub(crate) fn ino(&self) -> u64 {
        self.ino
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        let ours = std::fs::symlink_metadata(&self.path).is_ok_and(|m| m.ino() == self.ino);
        if ours {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}
