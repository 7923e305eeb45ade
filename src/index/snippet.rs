//! A search hit's snippet when its note is too large for FTS5's `snippet()`: that function
//! scores every phrase instance against every other and builds its text by copying it again on
//! each append, so its time grows with the square of the matches in a note (a 360 KB log
//! export whose every line held the query's words kept a search, and the MCP server, busy for
//! a minute; 14 MB for more than ten). Notes up to [`SNIPPET_MAX_BYTES`] keep FTS5's snippet;
//! a larger one gets [`of_large`]: the same 14-token window and marks, chosen in one pass over
//! the note's words (spec/index.md, "Search").

/// The largest note (its file's bytes) whose snippet FTS5 makes: at most a few tens of
/// milliseconds even when every line holds a dozen of the query's words.
pub(crate) const SNIPPET_MAX_BYTES: u64 = 16 * 1024;

/// The tokens a snippet shows, as FTS5's `snippet(…, 14)` does.
const WINDOW: usize = 14;

/// At most this many matches are weighed for the window: the answer then stays in the first
/// part of a note whose words match throughout.
const MATCHES_WEIGHED: usize = 256;

/// The snippet of a large note's `body` for the query words `terms` (lowercased, as
/// `query_terms` makes them): the 14-word window that holds most of the distinct words (the
/// first such window), each match marked `«…»`, and `…` where the body goes on; the body's
/// first words when no word matches as written (FTS5 matched a stemmed form). Two passes over
/// the words, nothing kept per word: a 14 MB note is answered in a fraction of a second.
pub(crate) fn of_large(body: &str, terms: &[String]) -> String {
    // A phrase's parts (`follow up` of `follow-up`) are matched as words of their own.
    let roots: Vec<&str> = terms.iter().flat_map(|t| t.split(' ')).map(root).collect();
    let mut hits: Vec<(usize, usize)> = Vec::new();
    for (i, w) in words(body).enumerate() {
        if let Some(t) = roots.iter().position(|r| starts_with(&body[w.0..w.1], r)) {
            hits.push((i, t));
            if hits.len() == MATCHES_WEIGHED {
                break;
            }
        }
    }
    let start = best_start(&hits);
    let mut shown = words(body).enumerate().skip(start);
    let mut out = String::new();
    let mut at = None;
    for (i, (from, to)) in shown.by_ref().take(WINDOW) {
        match at {
            None if i > 0 => out.push('…'),
            None => {}
            Some(at) => out.push_str(&body[at..from]),
        }
        let hit = hits.iter().any(|(j, _)| *j == i);
        if hit {
            out.push('«');
        }
        out.push_str(&body[from..to]);
        if hit {
            out.push('»');
        }
        at = Some(to);
    }
    match (shown.next(), at) {
        (Some(_), _) => out.push('…'),
        // The window reaches the body's end: the text after its last word is kept.
        (None, Some(at)) => out.push_str(&body[at..]),
        (None, None) => {}
    }
    out
}

/// Whether `word` starts with `root` (lowercase), ignoring case.
fn starts_with(word: &str, root: &str) -> bool {
    if word.is_ascii() {
        return word.len() >= root.len()
            && word.as_bytes()[..root.len()].eq_ignore_ascii_case(root.as_bytes());
    }
    word.to_lowercase().starts_with(root)
}

/// The first word of the window that holds most distinct terms among `hits` (`(word index,
/// term)`, in order), the window starting at a match; 0 without one.
fn best_start(hits: &[(usize, usize)]) -> usize {
    let mut best = (0, 0);
    for (k, &(i, _)) in hits.iter().enumerate() {
        let seen = hits[k..]
            .iter()
            .take_while(|(j, _)| *j < i + WINDOW)
            .fold(0u64, |seen, (_, t)| seen | 1 << (t % 64));
        let distinct = seen.count_ones();
        if distinct > best.0 {
            best = (distinct, i);
        }
    }
    best.1
}

/// The byte spans of `body`'s words: runs of letters and digits, as FTS5's unicode61 tokenizer
/// keeps them.
fn words(body: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut chars = body.char_indices().peekable();
    std::iter::from_fn(move || {
        let (from, _) = chars.find(|(_, c)| c.is_alphanumeric())?;
        let mut to = body.len();
        while let Some(&(i, c)) = chars.peek() {
            if !c.is_alphanumeric() {
                to = i;
                break;
            }
            chars.next();
        }
        Some((from, to))
    })
}

/// A query word without a common English ending, so a word of the note that starts with it
/// is taken for a match (`latency` finds `latencies`, `decisions` finds `decision`), as the
/// porter stemmer FTS5 matched with would; never shorter than three characters.
fn root(term: &str) -> &str {
    const ENDINGS: [&str; 8] = ["ies", "es", "ing", "ed", "ly", "s", "y", "e"];
    for end in ENDINGS {
        if let Some(stem) = term.strip_suffix(end) {
            if stem.chars().count() >= 3 {
                return stem;
            }
        }
    }
    term
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(t: &[&str]) -> Vec<String> {
        t.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_window_holding_most_words_is_shown_with_marks_and_ellipses() {
        let body = "one two three four five six seven eight nine ten eleven twelve thirteen \
                    fourteen fifteen alpha sixteen seventeen eighteen nineteen twenty alpha beta \
                    gamma end";
        let s = of_large(body, &terms(&["alpha", "beta"]));
        assert_eq!(
            s,
            "…«alpha» sixteen seventeen eighteen nineteen twenty «alpha» «beta» gamma end"
        );
        let first = of_large(body, &terms(&["one"]));
        assert!(first.starts_with("«one» two"), "{first}");
        assert!(first.ends_with('…'), "{first}");
    }

    #[test]
    fn stemmed_forms_match_and_a_word_found_nowhere_shows_the_start() {
        let body = "Latencies of the ledger were measured; decision made.";
        let s = of_large(body, &terms(&["latency", "decisions"]));
        assert_eq!(
            s,
            "«Latencies» of the ledger were measured; «decision» made."
        );
        let none = of_large(body, &terms(&["zebra"]));
        assert_eq!(
            none,
            "Latencies of the ledger were measured; decision made."
        );
        assert_eq!(of_large("", &terms(&["x"])), "");
    }

    #[test]
    fn a_note_whose_every_line_matches_is_answered_in_one_pass() {
        let line = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu\n";
        let body = line.repeat(200_000);
        let t: Vec<String> = line.split_whitespace().map(String::from).collect();
        let started = std::time::Instant::now();
        let s = of_large(&body, &t);
        assert!(s.starts_with("«alpha» «beta»"), "{s}");
        assert!(started.elapsed() < std::time::Duration::from_secs(10));
    }
}
