//! Command lines as words, the one implementation every writer and reader of a command line
//! uses: POSIX shell quoting and splitting (the `shlex` crate), and a flag's value among words.
//! Quoting is for the command lines git-rutter writes (hooks, hints); splitting only recognises a
//! command, it never runs one.

/// `s` as one POSIX shell word: bare when it holds only characters no shell treats specially,
/// else quoted. A NUL byte, which no shell word can hold, is dropped.
pub(crate) fn quote(s: &str) -> String {
    match shlex::try_quote(s) {
        Ok(q) => q.into_owned(),
        Err(_) => quote(&s.replace('\0', "")),
    }
}

/// `s` always in single quotes (a `'` inside as `'\''`), for a value a script assigns whatever it
/// holds: the git hooks' binary path, so a hook written before stays byte-identical. It splits
/// back to `s` as [`quote`]'s words do.
pub(crate) fn quote_always(s: &str) -> String {
    format!("'{}'", s.replace('\0', "").replace('\'', r"'\''"))
}

/// Splits a command line into words as a POSIX shell would (quotes and backslashes; no
/// expansion). A line with an unclosed quote splits at whitespace, so it is still recognised.
pub(crate) fn split(command: &str) -> Vec<String> {
    shlex::split(command)
        .unwrap_or_else(|| command.split_whitespace().map(str::to_string).collect())
}

/// The value of `--flag V` or `--flag=V` among `words`.
pub(crate) fn flag_value(words: &[String], flag: &str) -> Option<String> {
    let eq = format!("{flag}=");
    words
        .iter()
        .enumerate()
        .find_map(|(i, w)| match w.strip_prefix(&eq) {
            Some(v) => Some(v.to_string()),
            None if w == flag => words.get(i + 1).cloned(),
            None => None,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn plain_words_stay_bare_and_others_are_quoted() {
        assert_eq!(quote("/home/a/b-c_d.e"), "/home/a/b-c_d.e");
        assert_eq!(quote("/x y"), "'/x y'");
        assert_eq!(quote(""), "''");
        assert_eq!(quote("$HOME"), "'$HOME'");
        assert_eq!(split(&quote("/a b/it's")), ["/a b/it's"]);
        assert_eq!(quote("a\0b"), "ab");
        assert_eq!(quote_always("/a b/it's"), r"'/a b/it'\''s'");
        assert_eq!(quote_always("/plain"), "'/plain'");
    }

    #[test]
    fn flags_are_found_in_both_spellings() {
        let w = |s: &str| split(s);
        assert_eq!(
            flag_value(&w("x --vault /v y"), "--vault").as_deref(),
            Some("/v")
        );
        assert_eq!(
            flag_value(&w("x --vault=/v"), "--vault").as_deref(),
            Some("/v")
        );
        assert_eq!(flag_value(&w("x --vault"), "--vault"), None);
        assert_eq!(flag_value(&w("x --vaults /v"), "--vault"), None);
    }

    #[test]
    fn an_unclosed_quote_still_splits() {
        assert_eq!(split("git-rutter 'capture"), ["git-rutter", "'capture"]);
    }

    proptest! {
        #[test]
        fn quoted_words_split_back(words in proptest::collection::vec("[^\\x00]{0,12}", 1..5)) {
            let line = words.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ");
            prop_assert_eq!(split(&line), words.clone());
            let line = words.iter().map(|w| quote_always(w)).collect::<Vec<_>>().join(" ");
            prop_assert_eq!(split(&line), words);
        }
    }
}
