//! Abbreviated object ids, the one place their lengths are chosen: [`short`] (7 hex digits, as
//! `git log --oneline` shows them) where a line names a commit among others (findings, `log`,
//! an acknowledgement), [`long`] (12) in sentences a user may paste into a git command, which
//! stay unambiguous in a long history. Whole ids stay in `--json`.

/// Hex digits of a [`short`] id.
pub(crate) const SHORT: usize = 7;
/// Hex digits of a [`long`] id.
pub(crate) const LONG: usize = 12;

/// The first [`SHORT`] characters of an id (all of a shorter one).
pub(crate) fn short(id: &(impl ToString + ?Sized)) -> String {
    cut(id.to_string(), SHORT)
}

/// The first [`LONG`] characters of an id (all of a shorter one).
pub(crate) fn long(id: &(impl ToString + ?Sized)) -> String {
    cut(id.to_string(), LONG)
}

fn cut(mut id: String, n: usize) -> String {
    if id.is_char_boundary(n.min(id.len())) {
        id.truncate(n.min(id.len()));
    }
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_cut_to_their_length_and_shorter_ones_kept() {
        let id = "0123456789abcdef0123456789abcdef01234567";
        assert_eq!(short(&id), "0123456");
        assert_eq!(long(&id), "0123456789ab");
        assert_eq!(short(&"abc"), "abc");
        assert_eq!(long(&String::new()), "");
        // Never panics on text that is no id.
        assert_eq!(short(&"ééééééé"), "ééééééé");
    }
}
