//! Test-only fail points: `RUTTER_FAILPOINTS=journal-write,day-append` makes the named steps of a
//! write fail as a full disk would (`ENOSPC`), so tests can prove that no capture is lost at any
//! step (spec/capture.md, "Fail points"). Read in debug builds only, like `RUTTER_LOCK_WAIT_MS`;
//! a release build never consults the variable.

use std::io;

/// The variable naming the active fail points, comma-separated.
pub const ENV: &str = "RUTTER_FAILPOINTS";

/// Every fail point, in the order a capture meets them.
pub const POINTS: &[&str] = &[
    "lock",
    "sessions-dir",
    "journal-open",
    "journal-write",
    "day-header",
    "day-append",
    "day-append-torn",
    "dedupe-write",
    "commit",
    "journal-sync",
    "tips-write",
    "aside-write",
    "fallback-write",
];

/// Besides [`POINTS`], `install-hook` has `client-write:<file name>` (the check that every file
/// can be written fails for that file, as for an immutable one) and `client-apply:<file name>`
/// (writing that file fails part-way through an install).
///
/// Whether `point` is active (always false in a release build).
pub fn active(point: &str) -> bool {
    cfg!(debug_assertions)
        && std::env::var(ENV).is_ok_and(|v| v.split(',').any(|p| p.trim() == point))
}

/// Fails as a full disk would when `point` is active.
pub fn check(point: &str) -> io::Result<()> {
    match active(point) {
        true => Err(full(point)),
        false => Ok(()),
    }
}

/// The error an active fail point returns.
pub fn full(point: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::StorageFull,
        format!("No space left on device (fail point {point})"),
    )
}
