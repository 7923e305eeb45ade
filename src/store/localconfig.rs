//! One repository's own git config file read with libgit2, as git reads it (sections,
//! subsections, quoting, comments, `include.path`), for capture: the origin remote recorded as
//! provenance and the per-repository opt-out `rutter.capture`.
//!
//! The caller picks the file and checks that it is a small regular file first
//! (`capture::workspace`), so a hook never blocks on a FIFO swapped in for a config file.

use git2::ErrorCode;
use std::path::Path;

/// A config file opened on its own (no system, global or other repository levels).
pub(crate) struct LocalConfig(git2::Config);

/// A boolean key whose value is not one git accepts as a boolean.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NotABool(pub String);

impl LocalConfig {
    /// Opens `path`; `None` when it cannot be read or does not parse.
    pub fn open(path: &Path) -> Option<LocalConfig> {
        // libgit2 opens a missing file as an empty config; a missing file is no config here.
        if !path.is_file() {
            return None;
        }
        // The file is parsed here: one that does not parse is no config.
        git2::Config::open(path).ok().map(LocalConfig)
    }

    /// The value of `key` (the last one when it is set several times, as `git config` shows it).
    pub(crate) fn string(&self, key: &str) -> Option<String> {
        self.0.get_string(key).ok()
    }

    /// `key` as a boolean; `Ok(None)` when it is not set, `Err` with the raw value when it is
    /// not a boolean git accepts (`true`/`false`, `yes`/`no`, `on`/`off`, `1`/`0`, empty).
    pub(crate) fn bool(&self, key: &str) -> Result<Option<bool>, NotABool> {
        match self.0.get_bool(key) {
            Ok(b) => Ok(Some(b)),
            Err(e) if e.code() == ErrorCode::NotFound => Ok(None),
            Err(_) => Err(NotABool(self.string(key).unwrap_or_default())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(text: &str) -> (tempfile::TempDir, Option<LocalConfig>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config");
        std::fs::write(&path, text).unwrap();
        let c = LocalConfig::open(&path);
        (dir, c)
    }

    #[test]
    fn reads_values_as_git_does() {
        let (_d, c) = config(
            "[remote \"origin\"]\n\turl = \"https://h/x.git\" ; a comment\n[rutter]\n\tcapture = off\n",
        );
        let c = c.unwrap();
        assert_eq!(
            c.string("remote.origin.url").as_deref(),
            Some("https://h/x.git")
        );
        assert_eq!(c.bool("rutter.capture"), Ok(Some(false)));
        assert_eq!(c.bool("rutter.other"), Ok(None));
        let (_d, c) = config("[rutter]\n\tcapture = maybe\n");
        assert_eq!(
            c.unwrap().bool("rutter.capture"),
            Err(NotABool("maybe".into()))
        );
    }

    #[test]
    fn includes_are_followed() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("extra"), "[rutter]\n\tcapture = false\n").unwrap();
        let path = dir.path().join("config");
        std::fs::write(&path, "[include]\n\tpath = extra\n").unwrap();
        let c = LocalConfig::open(&path).unwrap();
        assert_eq!(c.bool("rutter.capture"), Ok(Some(false)));
    }

    #[test]
    fn unreadable_or_broken_files_are_no_config() {
        let (_d, c) = config("[rutter\n\tcapture = false\n");
        assert!(c.is_none());
        assert!(LocalConfig::open(Path::new("/nonexistent/rutter/config")).is_none());
    }
}
