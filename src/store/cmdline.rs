//! The settings of `git -c KEY=VALUE rutter …`: git hands them to an extension command in
//! `GIT_CONFIG_PARAMETERS`, which libgit2 does not read. They win over every config file, as
//! they do for git itself; every config read of this tool goes through [`string`] and
//! [`boolean`] (or [`override_of`] first), so `git -c color.ui=always`, `git -c core.pager=…` and
//! `git -c rutter.vault=…` act as they would on a git command. Child `git` processes inherit the
//! variable and honour it themselves.

use git2::Config;

/// The variable git sets for the commands it runs.
pub(crate) const ENV: &str = "GIT_CONFIG_PARAMETERS";

/// `(key, value)` of each setting in a `GIT_CONFIG_PARAMETERS` value, in order (a later one
/// wins). `None` as the value is `git -c key` without `=` (a boolean true). Both of git's forms
/// are read: `'key'='value'` (git 2.31 on) and `'key=value'`; quoting is git's `sq_quote`
/// (`'` … `'`, with `'\''` and `'\!'` for a quote or `!` inside). Keys are lowercased in their
/// section and name, as git compares them; a subsection keeps its case. Text that is not in
/// that form ends the list there.
pub(crate) fn parse(value: &str) -> Vec<(String, Option<String>)> {
    let mut out = Vec::new();
    let mut rest = value;
    loop {
        rest = rest.trim_start();
        let Some((word, after)) = sq_word(rest) else {
            return out;
        };
        rest = after;
        let (key, value) = match rest.strip_prefix('=') {
            Some(after_eq) => match sq_word(after_eq) {
                Some((v, after)) => {
                    rest = after;
                    (word, Some(v))
                }
                None => {
                    rest = after_eq;
                    (word, Some(String::new()))
                }
            },
            None => match word.split_once('=') {
                Some((k, v)) => (k.to_string(), Some(v.to_string())),
                None => (word, None),
            },
        };
        out.push((normal_key(&key), value));
    }
}

/// One `sq_quote`d word at the start of `s`, and what follows it.
fn sq_word(s: &str) -> Option<(String, &str)> {
    let mut rest = s.strip_prefix('\'')?;
    let mut word = String::new();
    loop {
        let end = rest.find('\'')?;
        word.push_str(&rest[..end]);
        rest = &rest[end + 1..];
        // `'\''` or `'\!'`: a quoted character between two quoted runs.
        match rest.as_bytes() {
            [b'\\', c @ (b'\'' | b'!'), b'\'', ..] => {
                word.push(*c as char);
                rest = &rest[3..];
            }
            _ => return Some((word, rest)),
        }
    }
}

/// `section.name` lowercased; `section.subsection.name` with its subsection as written.
fn normal_key(key: &str) -> String {
    match (key.find('.'), key.rfind('.')) {
        (Some(first), Some(last)) if first != last => format!(
            "{}{}{}",
            key[..first].to_ascii_lowercase(),
            &key[first..last],
            key[last..].to_ascii_lowercase()
        ),
        _ => key.to_ascii_lowercase(),
    }
}

/// The command line's setting of `key`, if it has one: `Some(None)` for a bare `git -c key`.
pub(crate) fn override_of(key: &str) -> Option<Option<String>> {
    let value = std::env::var(ENV).ok()?;
    let key = normal_key(key);
    parse(&value)
        .into_iter()
        .rev()
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v)
}

/// `key` as git resolves it for this command: the command line's `-c`, else `config`.
pub(crate) fn string(config: Option<&Config>, key: &str) -> Option<String> {
    match override_of(key) {
        Some(v) => Some(v.unwrap_or_else(|| "true".to_string())),
        None => config?.get_string(key).ok(),
    }
}

/// `key` as a boolean, as git reads one: the command line's `-c` (a bare `-c key` is true),
/// else `config`. `None` when unset or not a boolean.
pub(crate) fn boolean(config: Option<&Config>, key: &str) -> Option<bool> {
    match override_of(key) {
        Some(None) => Some(true),
        Some(Some(v)) => parse_bool(&v),
        None => config?.get_bool(key).ok(),
    }
}

/// git's boolean words.
pub(crate) fn parse_bool(v: &str) -> Option<bool> {
    match v.to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" | "1" => Some(true),
        "false" | "no" | "off" | "0" | "" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn both_of_gits_forms_are_read() {
        assert_eq!(
            parse("'color.ui'='always' 'core.pager'='sed s/^/P:/'"),
            [
                ("color.ui".to_string(), Some("always".to_string())),
                ("core.pager".to_string(), Some("sed s/^/P:/".to_string())),
            ]
        );
        assert_eq!(
            parse("'rutter.vault=/n o' 'rutter.sign'"),
            [
                ("rutter.vault".to_string(), Some("/n o".to_string())),
                ("rutter.sign".to_string(), None),
            ]
        );
        assert_eq!(
            parse(r"'user.name'='it'\''s me'\!''"),
            [("user.name".to_string(), Some("it's me!".to_string()))]
        );
        assert_eq!(
            parse("'Remote.Origin.URL'='x'"),
            [("remote.Origin.url".to_string(), Some("x".to_string()))]
        );
        assert_eq!(parse("not quoted"), []);
        assert_eq!(parse(""), []);
        assert_eq!(parse_bool("On"), Some(true));
        assert_eq!(parse_bool("maybe"), None);
    }

    /// git's own quoting of a setting, as `git -c` writes the variable.
    fn sq(s: &str) -> String {
        format!("'{}'", s.replace('\'', r"'\''").replace('!', r"'\!'"))
    }

    proptest! {
        /// Whatever the value, what git writes reads back; and any text parses without panic.
        #[test]
        fn what_git_writes_reads_back(value in "\\PC{0,20}", junk in "\\PC{0,40}") {
            let env = format!("{}={} {}={}", sq("rutter.vault"), sq(&value), sq("color.ui"), sq("never"));
            let got = parse(&env);
            prop_assert_eq!(got[0].1.as_deref(), Some(value.as_str()));
            prop_assert_eq!(got[1].1.as_deref(), Some("never"));
            let _ = parse(&junk);
        }
    }
}
