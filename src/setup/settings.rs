//! `git rutter config`'s facts: every `rutter.*` key git-rutter reads, its default and what it
//! does. Where each value set comes from is git's to say (`store::settings::read`).

/// A key git-rutter reads, and what it does.
pub(crate) struct Known {
    pub key: &'static str,
    pub default: &'static str,
    pub does: &'static str,
}

/// Every `rutter.*` key git-rutter reads.
pub(crate) const KNOWN: &[Known] = &[
    Known {
        key: "rutter.vault",
        default: "(none)",
        does: "The notes vault hooks, the MCP server and commands use when LIBRARIAN_VAULT_PATH and --vault are not given (set it with `git rutter init --global`).",
    },
    Known {
        key: "rutter.capture",
        default: "true",
        does: "false in a repository's config: sessions in that repository are never captured.",
    },
    Known {
        key: "rutter.sign",
        default: "false",
        does: "true: record commits are signed with git's own signing setup (gpg.format, user.signingKey).",
    },
    Known {
        key: "rutter.syncRemote",
        default: "(none)",
        does: "The remote `git rutter sync` exchanges records with (set by `git rutter sync --setup REMOTE`).",
    },
    Known {
        key: "rutter.autoSync",
        default: "off",
        does: "An interval (15m, 1h): after a capture, at a session start and while the MCP server runs, when the last sync started longer ago, a sync with rutter.syncRemote starts by itself in the background.",
    },
    Known {
        key: "rutter.watch",
        default: "off",
        does: "An idle time (30m; true: 30m): a command that finds no watcher keeping the index current (no MCP server running) starts `git rutter watch --idle` with it in the background, so the next commands stat no note.",
    },
    Known {
        key: "rutter.context",
        default: "true",
        does: "false: the SessionStart hook hands sessions no brief (`git rutter context` still prints one).",
    },
    Known {
        key: "rutter.contextBytes",
        default: "2048",
        does: "The most bytes the session-start brief (`git rutter context`) takes, 512 to 65536.",
    },
    Known {
        key: "rutter.syncTimeout",
        default: "5m",
        does: "How long one git process of a sync (a fetch, a push) may run before it is stopped (90s, 15m; off: no bound).",
    },
    Known {
        key: "rutter.keepCited",
        default: "true",
        does: "false: captures keep no copy of the notes they cite under _librarian/cited/, and sync sends none.",
    },
];

/// `rutter.watch`: the idle time of the `git rutter watch` a command starts when it finds no
/// watcher (spec/index.md, "A watcher of its own").
pub(crate) const WATCH_KEY: &str = "rutter.watch";
/// The idle time `rutter.watch = true` means.
pub(crate) const WATCH_DEFAULT_IDLE: std::time::Duration = std::time::Duration::from_secs(30 * 60);

/// `rutter.watch`'s value read: an interval, `true` (and git's other words for it) the default
/// idle time, `off` (and git's other words for false) none.
pub(crate) fn watch_idle(
    raw: &str,
) -> Result<Option<std::time::Duration>, crate::clock::IntervalError> {
    match raw.trim().to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" | "1" => Ok(Some(WATCH_DEFAULT_IDLE)),
        _ => crate::clock::parse_interval(raw),
    }
}

/// The known key `key` names, compared as git compares names (section and key case-blind).
pub(crate) fn known(key: &str) -> Option<&'static Known> {
    KNOWN.iter().find(|k| k.key.eq_ignore_ascii_case(key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rutter_watch_reads_as_an_interval_or_as_git_writes_true_and_false() {
        use std::time::Duration;
        assert_eq!(watch_idle("15m"), Ok(Some(Duration::from_secs(900))));
        for on in ["true", "Yes", "on", "1"] {
            assert_eq!(watch_idle(on), Ok(Some(WATCH_DEFAULT_IDLE)), "{on}");
        }
        for off in ["false", "off", "no", "0", ""] {
            assert_eq!(watch_idle(off), Ok(None), "{off}");
        }
        assert!(watch_idle("banana").is_err());
    }

    #[test]
    fn a_key_is_found_as_git_compares_names() {
        assert_eq!(
            known("RUTTER.SyncRemote").map(|k| k.key),
            Some("rutter.syncRemote")
        );
    }
}
