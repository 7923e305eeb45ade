//! A count with its noun, singular for one and plural otherwise (`1 entry`, `3 entries`, `0
//! notes`): how output says how many.

/// `n` and its noun: `one` when `n` is 1, else `many`.
pub(crate) fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", noun(n, one, many))
}

/// `one` when `n` is 1, else `many` (the words around a count that agree with it).
pub(crate) fn noun<'a>(n: usize, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 {
        one
    } else {
        many
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_is_singular_and_every_other_count_plural() {
        assert_eq!(count(1, "entry", "entries"), "1 entry");
        assert_eq!(count(0, "note", "notes"), "0 notes");
        assert_eq!(count(2, "entry", "entries"), "2 entries");
        assert_eq!(noun(1, "its", "their"), "its");
        assert_eq!(noun(21, "its", "their"), "their");
    }
}
