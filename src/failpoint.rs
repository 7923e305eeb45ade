//! Test-only fail points: `RUTTER_FAILPOINTS=journal-write,day-append` makes the named steps of a
//! write fail as a full disk would (`ENOSPC`), so tests can prove that no capture is lost at any
//! step (spec/capture.md, "Fail points"). Read in debug builds only, like `RUTTER_LOCK_WAIT_MS`;
//! a release build never consults the variable.
//!
//! The points, in the order a capture meets them: `lock`, `sessions-dir`, `journal-open`,
//! `journal-write`, `day-header`, `day-append`, `day-append-torn`, `dedupe-write`, `commit`,
//! `ref-update-killed` (not a full disk: the process dies holding the ref's lock, as a kill
//! inside libgit2's update would leave it), `journal-sync`, `tips-write`, `aside-write`,
//! `fallback-write`; and in `install-hook`, `client-write:<file name>` (the check that every
//! file can be written fails for that file, as for an immutable one) and `client-apply:<file name>` (writing that file fails part-way
//! through an install); in building a new index, `index-side-build` (the record cache built
//! beside the notes fails), `index-side-copy` (copying it in fails after its first table),
//! `index-side-stop` (not a failure: the notes are in before the side build's first day, so it
//! stops after that day and the building thread fills the rest) and `index-side-rest` (filling
//! that rest fails);
//! in sync, `sync-checkout` (bringing the working files along fails right after the ref moved,
//! as a kill or a full disk there would leave it); in the session-start hook, `context-slow`
//! (the brief takes longer than the hook's time bound); in the MCP server's watcher,
//! `watch-overflow` (every change event counts as a lost queue), `watch-cookie-lost` (no
//! cookie is ever heard) and `watch-remote-fs` (the vault counts as lying on NFS).
//! A test checks this list against the code.

use std::io;

/// The variable naming the active fail points, comma-separated.
pub(crate) const ENV: &str = "RUTTER_FAILPOINTS";

/// Whether `point` is active (always false in a release build).
pub(crate) fn active(point: &str) -> bool {
    cfg!(debug_assertions)
        && std::env::var(ENV).is_ok_and(|v| v.split(',').any(|p| p.trim() == point))
}

/// Fails as a full disk would when `point` is active.
pub(crate) fn check(point: &str) -> io::Result<()> {
    match active(point) {
        true => Err(full(point)),
        false => Ok(()),
    }
}

/// The error an active fail point returns.
pub(crate) fn full(point: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::StorageFull,
        format!("No space left on device (fail point {point})"),
    )
}

#[cfg(test)]
mod tests {
    /// Every fail point the code names is in the module doc's list, and every listed one is in
    /// the code (the review found the list stale once).
    #[test]
    fn the_documented_points_are_the_points_in_the_code() {
        /// Every fail point, in the order a capture meets them.
        const POINTS: &[&str] = &[
            "lock",
            "sessions-dir",
            "journal-open",
            "journal-write",
            "day-header",
            "day-append",
            "day-append-torn",
            "dedupe-write",
            "commit",
            "ref-update-killed",
            "journal-sync",
            "tips-write",
            "aside-write",
            "fallback-write",
            "index-side-build",
            "index-side-copy",
            "index-side-stop",
            "index-side-rest",
            "sync-checkout",
            "context-slow",
            "watch-overflow",
            "watch-cookie-lost",
            "watch-remote-fs",
        ];
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut text = String::new();
        let mut dirs = vec![src];
        while let Some(d) = dirs.pop() {
            for e in std::fs::read_dir(d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    dirs.push(p);
                } else if p.extension().is_some_and(|x| x == "rs") && !p.ends_with("failpoint.rs") {
                    text.push_str(&std::fs::read_to_string(&p).unwrap());
                }
            }
        }
        let doc = include_str!("failpoint.rs");
        for p in POINTS {
            assert!(
                text.contains(&format!("\"{p}\"")),
                "{p} is listed but no code checks it"
            );
            assert!(
                doc.contains(&format!("`{p}`")),
                "{p} is missing from the module doc"
            );
        }
        let named = text
            .match_indices("failpoint::check(\"")
            .chain(text.match_indices("failpoint::active(\""));
        for (i, m) in named {
            let rest = &text[i + m.len()..];
            let name = &rest[..rest.find('"').unwrap()];
            assert!(POINTS.contains(&name), "{name} is checked but not listed");
        }
    }
}
