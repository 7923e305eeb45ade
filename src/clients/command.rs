//! The hook command line: the one git-rutter writes (`<abs path> capture --client NAME`, plus
//! `--vault P` when the vault is baked in), and how a command found in a client's config is
//! recognised as ours (any path to `git-rutter capture`, or the `hooks/rutter-stop.sh` wrapper),
//! as the TypeScript reference's (its writer rewrites whole day files and would drop lines this
//! tool appended, so it is replaced), or as somebody else's (never touched).

/// Whose hook a command is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kind {
    /// git-rutter's capture hook; `vault` is the vault baked into it, if any.
    Ours { vault: Option<String> },
    /// The TypeScript reference's hook (`librarian-stop.sh`, `capture-cli.js`, its npm paths).
    Reference,
    /// Anything else.
    Foreign,
}

/// Marks of the TypeScript reference in a hook command.
const REFERENCE_MARKS: [&str; 4] = [
    "librarian-stop.sh",
    "capture-cli.js",
    "node_modules/rutter-memory",
    "node_modules/rutter/",
];

/// The command git-rutter registers for `client`.
pub(crate) fn hook_command(bin: &str, client: &str, vault: Option<&str>) -> String {
    let mut words = vec![
        shell_word(bin),
        "capture".into(),
        "--client".into(),
        client.into(),
    ];
    if let Some(v) = vault {
        words.push("--vault".into());
        words.push(shell_word(v));
    }
    words.join(" ")
}

/// The session-start command git-rutter registers for `client` (spec/context.md).
pub(crate) fn start_command(bin: &str, client: &str, vault: Option<&str>) -> String {
    let mut words = vec![
        shell_word(bin),
        "context".into(),
        "--hook".into(),
        client.into(),
    ];
    if let Some(v) = vault {
        words.push("--vault".into());
        words.push(shell_word(v));
    }
    words.join(" ")
}

/// Whether a command of ours is the session-start hook (`context --hook`), not the Stop hook.
pub(crate) fn is_start(command: &str) -> bool {
    split(command)
        .windows(2)
        .any(|w| w[0] == "context" && w[1] == "--hook")
}

/// The running binary's own path (canonical), as `install-hook` writes it into every command:
/// a copy of git-rutter under another name still knows its own entries.
fn own_binary() -> Option<&'static str> {
    static OWN: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    OWN.get_or_init(|| {
        let exe = std::env::current_exe().ok()?.canonicalize().ok()?;
        exe.to_str().map(str::to_string)
    })
    .as_deref()
}

/// Whether `words` are a hook command [`hook_command`] or [`start_command`] writes, whatever
/// the program is called: `<program> capture --client <a client git-rutter registers> [--vault
/// V]`, or `<program> context --hook <client> [--vault V]`.
fn is_written_shape(words: &[String]) -> bool {
    let known = |c: &str| super::CLIENTS.iter().any(|s| s.name == c);
    match words {
        [_, verb, flag, client] | [_, verb, flag, client, _, _] => {
            let pair = (verb.as_str(), flag.as_str());
            matches!(pair, ("capture", "--client") | ("context", "--hook"))
                && known(client)
                && (words.len() == 4 || words[4] == "--vault")
        }
        _ => false,
    }
}

/// A command word's file name (`/x/git-rutter` → `git-rutter`).
pub(crate) fn base(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// Classifies a hook command found in a client's config.
pub(crate) fn classify(command: &str) -> Kind {
    if REFERENCE_MARKS.iter().any(|m| command.contains(m)) {
        return Kind::Reference;
    }
    let words = split(command);
    let own = words
        .first()
        .is_some_and(|w| Some(w.as_str()) == own_binary());
    if own || is_written_shape(&words) {
        return Kind::Ours {
            vault: flag_value(&words, "--vault"),
        };
    }
    let Some(i) = words.iter().position(|w| {
        let b = base(w);
        b == "git-rutter" || b == "rutter-stop.sh"
    }) else {
        return match words.windows(3).any(|w| {
            base(&w[0]) == "git"
                && w[1] == "rutter"
                && matches!(w[2].as_str(), "capture" | "context")
        }) {
            true => Kind::Ours {
                vault: flag_value(&words, "--vault"),
            },
            false => Kind::Foreign,
        };
    };
    let rest = &words[i + 1..];
    let wrapper = base(&words[i]) == "rutter-stop.sh";
    let verb = rest.iter().any(|w| w == "capture") || is_start(command);
    match wrapper || verb {
        true => Kind::Ours {
            vault: flag_value(rest, "--vault"),
        },
        false => Kind::Foreign,
    }
}

/// Whether a command of ours was customised by hand: words before the program (an environment
/// assignment, a wrapper such as `nice`), or after what [`hook_command`] and [`start_command`]
/// write (a redirection, `&&`, a flag of the user's). Install keeps such a command as it is
/// (spec/install-hook.md); one that only lacks words, or names an old path, is rewritten.
pub(crate) fn is_customised(command: &str) -> bool {
    let words = split(command);
    if is_written_shape(&words) {
        return false;
    }
    let program = |w: &String| Some(w.as_str()) == own_binary() || base(w) == "git-rutter";
    let Some(i) = words.iter().position(program) else {
        // `git rutter capture …` is typed by hand (install never writes it); the wrapper script
        // of old versions is rewritten.
        return words.first().is_none_or(|w| base(w) != "rutter-stop.sh");
    };
    let mut rest = words[i + 1..].iter().map(String::as_str);
    let verb = rest.next();
    let mut tail: Vec<&str> = rest.collect();
    if let [flag, _, ..] = tail[..] {
        if matches!(flag, "--client" | "--hook") {
            tail.drain(..2);
        }
    }
    if let ["--vault", _, ..] = tail[..] {
        tail.drain(..2);
    }
    i > 0 || !matches!(verb, Some("capture" | "context") | None) || !tail.is_empty()
}

/// Whether an MCP server command (a program, or a program and arguments on one line) is
/// git-rutter's server: a program called `git-rutter`, or this very binary under whatever name
/// it was installed from. A program path is taken whole first, so one with a space is known.
pub(crate) fn is_our_server(command: &str) -> bool {
    let ours = |w: &str| w.rsplit('/').next() == Some("git-rutter") || Some(w) == own_binary();
    ours(command) || split(command).first().is_some_and(|w| ours(w))
}

/// Whether an MCP server command line is the TypeScript reference's server.
pub(crate) fn is_reference_server(command_line: &str) -> bool {
    command_line.contains("rutter-memory")
        || (command_line.contains("rutter") && command_line.contains("stdio.js"))
}

pub(crate) use crate::argv::{flag_value, quote as shell_word, split};

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ours(vault: Option<&str>) -> Kind {
        Kind::Ours {
            vault: vault.map(str::to_string),
        }
    }

    #[test]
    fn our_commands_are_recognised_with_any_path_and_vault() {
        for (cmd, vault) in [
            (
                "/home/a/.cargo/bin/git-rutter capture --client claude",
                None,
            ),
            ("git-rutter capture --client claude", None),
            (
                "'/x y/git-rutter' capture --client muse --vault '/n o'",
                Some("/n o"),
            ),
            ("git-rutter --vault=/v capture", Some("/v")),
            ("/r/hooks/rutter-stop.sh --client codex", None),
            ("git rutter capture --vault /v", Some("/v")),
            ("LIBRARIAN_VAULT_PATH=/v git-rutter capture", None),
        ] {
            assert_eq!(classify(cmd), ours(vault), "{cmd}");
        }
        let ours_now = hook_command("/a b/git-rutter", "agy", Some("/it's"));
        assert_eq!(
            ours_now,
            r#"'/a b/git-rutter' capture --client agy --vault "/it's""#
        );
        assert_eq!(classify(&ours_now), ours(Some("/it's")));
        // What install-hook writes is ours whatever the binary is called (the trial's F-8).
        let renamed = hook_command("/opt/bin/rutter-bin", "claude", None);
        assert_eq!(classify(&renamed), ours(None));
        let renamed = hook_command("/opt/gr", "codex", Some("/v"));
        assert_eq!(classify(&renamed), ours(Some("/v")));
        let start = start_command("/opt/gr", "claude", Some("/v"));
        assert_eq!(start, "/opt/gr context --hook claude --vault /v");
        assert_eq!(classify(&start), ours(Some("/v")));
        assert!(is_start(&start) && !is_start(&renamed));
        assert_eq!(classify("git-rutter context --hook codex"), ours(None));
        let own = own_binary().unwrap();
        assert_eq!(classify(&format!("{own} capture")), ours(None));
        assert!(is_our_server(own));
    }

    #[test]
    fn customised_commands_are_told_from_written_and_incomplete_ones() {
        for cmd in [
            "LIBRARIAN_VAULT_PATH=/v /x/git-rutter capture --client claude",
            "/x/git-rutter capture --client claude 2>>/tmp/rutter.log",
            "nice -n 5 git-rutter capture --client codex",
            "git-rutter capture --client claude && afplay done.wav",
            "git rutter capture --client claude",
        ] {
            assert!(is_customised(cmd), "{cmd}");
        }
        for cmd in [
            hook_command("/a b/git-rutter", "claude", Some("/v w")),
            start_command("/x/git-rutter", "codex", None),
            "/old/git-rutter capture --client claude".into(),
            "git-rutter capture".into(),
            "/r/hooks/rutter-stop.sh --client codex".into(),
            hook_command("/opt/bin/rutter-bin", "claude", None),
        ] {
            assert!(!is_customised(&cmd), "{cmd}");
        }
    }

    #[test]
    fn reference_and_foreign_commands() {
        for cmd in [
            "/home/a/rutter/hooks/librarian-stop.sh",
            "node /home/a/rutter/dist/capture-cli.js",
            "/usr/lib/node_modules/rutter-memory/hooks/librarian-stop.sh --client grok",
        ] {
            assert_eq!(classify(cmd), Kind::Reference, "{cmd}");
        }
        for cmd in [
            "",
            "afplay done.wav",
            "git-rutter mcp",
            "echo git-rutter",
            "/x/not-git-rutter capture",
            "/x/tool capture --client someone-else",
            "/x/tool capture --client claude --verbose",
            "/x/tool context --hook claude --verbose",
            "git-rutter context",
        ] {
            assert_eq!(classify(cmd), Kind::Foreign, "{cmd}");
        }
        assert!(is_our_server("/a/git-rutter"));
        assert!(is_our_server("/Applications/My Tools/git-rutter"));
        assert!(is_our_server("git-rutter mcp"));
        assert!(!is_our_server("rutter-memory"));
        assert!(is_reference_server("npx -y rutter-memory"));
        assert!(is_reference_server("node /x/rutter/dist/stdio.js"));
    }

    proptest! {
        #[test]
        fn quoted_words_split_back(words in proptest::collection::vec("\\PC{0,12}", 1..5)) {
            let line = words.iter().map(|w| shell_word(w)).collect::<Vec<_>>().join(" ");
            prop_assert_eq!(split(&line), words);
        }

        #[test]
        fn splitting_and_classifying_never_panic(s in "\\PC{0,60}") {
            let _ = classify(&s);
        }
    }
}
