//! Who can read what sync sends to a remote, from its URL: an encrypted remote
//! (git-remote-gcrypt's `gcrypt::` URLs: the host stores only ciphertext), one on this machine
//! (a path or `file://`), or one on another host, whose operator can read every summary and
//! every cited note sync pushes (docs/sync.md, "An encrypted remote").

/// Where a remote's copy of the records lives, as far as reading them goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Exposure {
    /// A `gcrypt::` remote: encrypted before it leaves this machine.
    Encrypted,
    /// A path or `file://` URL: no other host holds it.
    Local,
    /// Plain git over the network: the named host can read it.
    Hosted(String),
}

impl Exposure {
    /// The word `status --json` uses: `encrypted`, `local` or `plaintext`.
    pub(crate) fn as_str(&self) -> &'static str {
        match self {
            Exposure::Encrypted => "encrypted",
            Exposure::Local => "local",
            Exposure::Hosted(_) => "plaintext",
        }
    }
}

/// The exposure of a remote URL (as git config holds it, credentials or not).
pub(crate) fn of_url(url: &str) -> Exposure {
    let url = url.trim();
    if url.starts_with("gcrypt::") {
        return Exposure::Encrypted;
    }
    if let Some((scheme, rest)) = url.split_once("://") {
        return match scheme.to_ascii_lowercase().as_str() {
            "file" => Exposure::Local,
            _ => Exposure::Hosted(host_of(rest)),
        };
    }
    // git's scp-like syntax, `[user@]host:path`, when no slash comes before the colon.
    match url.split_once(':') {
        Some((before, _)) if !before.contains('/') && !before.is_empty() => {
            Exposure::Hosted(host_of(before))
        }
        _ => Exposure::Local,
    }
}

/// The host of `[user[:password]@]host[:port][/path]`.
fn host_of(authority_and_path: &str) -> String {
    let authority = authority_and_path
        .split('/')
        .next()
        .unwrap_or(authority_and_path);
    let host = authority.rsplit('@').next().unwrap_or(authority);
    let host = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(v6),
        None => host.split(':').next().unwrap_or(host),
    };
    crate::records::text::one_line_safe(host)
}

/// The line `sync --setup` says of a plaintext remote on another host; `None` for others.
pub(crate) fn warning(remote: &str, url: &str) -> Option<String> {
    let Exposure::Hosted(host) = of_url(url) else {
        return None;
    };
    Some(format!(
        "git-rutter: {remote} is not encrypted: {host} can read everything sync sends it (every recorded summary and, unless rutter.keepCited is false, copies of the notes they cite). For a remote its host cannot read, see docs/sync.md, \"An encrypted remote\"."
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn urls_say_who_can_read_them() {
        let hosted = |h: &str| Exposure::Hosted(h.to_string());
        for (url, want) in [
            (
                "gcrypt::rsync://me@example.org/records",
                Exposure::Encrypted,
            ),
            ("gcrypt::/mnt/usb/records.git", Exposure::Encrypted),
            ("/srv/git/notes.git", Exposure::Local),
            ("../notes.git", Exposure::Local),
            ("file:///srv/git/notes.git", Exposure::Local),
            ("C/notes", Exposure::Local),
            ("git@github.com:me/notes.git", hosted("github.com")),
            (
                "ssh://me@host.example:2222/notes.git",
                hosted("host.example"),
            ),
            (
                "https://user:secret@git.example.org/me/notes",
                hosted("git.example.org"),
            ),
            ("https://[2001:db8::1]/notes", hosted("2001:db8::1")),
            ("git://example.net/notes", hosted("example.net")),
        ] {
            assert_eq!(of_url(url), want, "{url}");
        }
        assert!(warning("origin", "/srv/notes.git").is_none());
        assert!(warning("vault", "gcrypt::ssh://h/r").is_none());
        let w = warning("origin", "git@github.com:me/notes.git").unwrap();
        assert!(w.contains("github.com can read everything"), "{w}");
        assert!(!w.contains("secret"));
    }

    proptest! {
        #[test]
        fn any_url_is_classified_without_a_panic_or_a_control_character(s in "\\PC{0,60}") {
            if let Exposure::Hosted(h) = of_url(&s) {
                prop_assert!(!h.chars().any(char::is_control));
            }
        }
    }
}
