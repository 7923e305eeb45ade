//! Which parts of an assistant's Markdown are code: fenced blocks and inline code spans, where a
//! session directive is an example, not a decision (spec/capture.md, "Code is not captured").
//!
//! Only as much CommonMark as that question needs. A fence is a line of three or more backticks
//! or tildes (after any indentation and `>` quote markers; a backtick fence's info string holds
//! no backtick), closed by a line of the same character at least as long with nothing after
//! it but whitespace; an unclosed fence runs to the end of the text. Outside fences, a run of
//! N backticks opens a code span closed by the next run of exactly N backticks in the same
//! paragraph (before a blank line); without one the run is literal text. Backslash escapes and
//! indented code blocks are not interpreted.
//!
//! [`for_each_outside_code`] walks the text left to right, so whichever starts first wins, as in
//! CommonMark: a directive that opens before a backtick run consumes the backticks inside its
//! JSON, and a code span that opens before a directive hides it.

use memchr::memmem;
use std::collections::HashMap;
use std::ops::Range;

/// Calls `visit(at, limit)` for every occurrence of `pattern` that lies outside fenced code
/// blocks and inline code spans, in order; `limit` is the end of the prose around it (the next
/// fence or the end of the text). `visit` returns `Some(end)` when it consumed the text up to
/// `end` (nothing before `end` is looked at again), `None` to go on after the pattern.
pub(crate) fn for_each_outside_code(
    text: &str,
    pattern: &str,
    mut visit: impl FnMut(usize, usize) -> Option<usize>,
) {
    if pattern.is_empty() {
        return;
    }
    let finder = memmem::Finder::new(pattern.as_bytes());
    for segment in prose_segments(text) {
        let mut code = InlineCode::new(text, segment.clone());
        let find = |from: usize| {
            finder
                .find(&text.as_bytes()[from..segment.end])
                .map_or(usize::MAX, |i| from + i)
        };
        let mut pos = segment.start;
        // The next match at or after `pos` (`usize::MAX`: none left), kept until the walk passes
        // it: searching again at every backtick run would make the walk quadratic.
        let mut hit = find(pos);
        while pos < segment.end {
            if hit < pos {
                hit = find(pos);
            }
            match code.next_run(pos) {
                Some((start, _)) if start < hit => pos = code.skip(start),
                _ if hit == usize::MAX => break,
                _ => {
                    let next = visit(hit, segment.end).unwrap_or(hit + pattern.len());
                    pos = next.max(hit + pattern.len());
                }
            }
        }
    }
}

/// The byte ranges of `text` outside fenced code blocks, in order.
pub(crate) fn prose_segments(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut prose_start = 0;
    let mut open: Option<(u8, usize)> = None;
    let mut line_start = 0;
    while line_start < text.len() {
        let line_end = memchr::memchr(b'\n', &text.as_bytes()[line_start..])
            .map_or(text.len(), |i| line_start + i + 1);
        let line = &text[line_start..line_end];
        match open {
            None => {
                if let Some(fence) = opening_fence(line) {
                    if prose_start < line_start {
                        out.push(prose_start..line_start);
                    }
                    open = Some(fence);
                }
            }
            Some(fence) => {
                if closes(line, fence) {
                    open = None;
                    prose_start = line_end;
                }
            }
        }
        line_start = line_end;
    }
    if open.is_none() && prose_start < text.len() {
        out.push(prose_start..text.len());
    }
    out
}

/// The line without its indentation and blockquote markers.
fn fence_body(line: &str) -> &str {
    line.trim_start_matches([' ', '\t', '>'])
}

/// `(char, length)` when `line` opens a fence.
fn opening_fence(line: &str) -> Option<(u8, usize)> {
    let body = fence_body(line);
    let ch = *body.as_bytes().first()?;
    if ch != b'`' && ch != b'~' {
        return None;
    }
    let len = body.bytes().take_while(|&b| b == ch).count();
    if len < 3 || (ch == b'`' && body[len..].contains('`')) {
        return None;
    }
    Some((ch, len))
}

/// Whether `line` closes a fence opened by `(ch, len)`.
fn closes(line: &str, (ch, len): (u8, usize)) -> bool {
    let body = fence_body(line);
    let run = body.bytes().take_while(|&b| b == ch).count();
    run >= len && body[run..].trim().is_empty()
}

/// The backtick runs of one prose segment and how they pair into code spans.
struct InlineCode {
    /// `(start, length)` of every maximal backtick run, in order.
    runs: Vec<(usize, usize)>,
    /// Index of the first run not yet behind the walk.
    next: usize,
    /// For each run length, the indices of runs of that length and a cursor into them.
    by_len: HashMap<usize, (Vec<usize>, usize)>,
    /// Starts of blank lines, which end a paragraph (a code span never crosses one).
    blank_lines: Vec<usize>,
}

impl InlineCode {
    fn new(text: &str, segment: Range<usize>) -> InlineCode {
        let bytes = &text.as_bytes()[segment.clone()];
        let mut runs = Vec::new();
        let mut i = 0;
        while let Some(off) = memchr::memchr(b'`', &bytes[i..]) {
            let start = i + off;
            let len = bytes[start..].iter().take_while(|&&b| b == b'`').count();
            runs.push((segment.start + start, len));
            i = start + len;
        }
        let mut by_len: HashMap<usize, (Vec<usize>, usize)> = HashMap::new();
        for (k, &(_, len)) in runs.iter().enumerate() {
            by_len.entry(len).or_default().0.push(k);
        }
        let blank_lines = if runs.is_empty() {
            Vec::new()
        } else {
            blank_line_starts(text, segment)
        };
        InlineCode {
            runs,
            next: 0,
            by_len,
            blank_lines,
        }
    }

    /// The first backtick run starting at or after `pos`.
    fn next_run(&mut self, pos: usize) -> Option<(usize, usize)> {
        while self.runs.get(self.next).is_some_and(|&(s, _)| s < pos) {
            self.next += 1;
        }
        self.runs.get(self.next).copied()
    }

    /// The walk reached the run starting at `start` (the current [`Self::next_run`]): returns
    /// where the walk goes on, after its code span, or after the run when nothing closes it.
    fn skip(&mut self, start: usize) -> usize {
        let k = self.next;
        let (_, len) = self.runs[k];
        let limit = self.paragraph_end(start);
        let Some((indices, cursor)) = self.by_len.get_mut(&len) else {
            return start + len;
        };
        while indices.get(*cursor).is_some_and(|&j| j <= k) {
            *cursor += 1;
        }
        match indices.get(*cursor).map(|&j| self.runs[j]) {
            Some((close, close_len)) if close < limit => close + close_len,
            _ => start + len,
        }
    }

    fn paragraph_end(&self, pos: usize) -> usize {
        let i = self.blank_lines.partition_point(|&b| b <= pos);
        self.blank_lines.get(i).copied().unwrap_or(usize::MAX)
    }
}

/// Starts of the lines of `segment` that hold only whitespace.
fn blank_line_starts(text: &str, segment: Range<usize>) -> Vec<usize> {
    let mut out = Vec::new();
    let mut start = segment.start;
    while start < segment.end {
        let end = memchr::memchr(b'\n', &text.as_bytes()[start..segment.end])
            .map_or(segment.end, |i| start + i + 1);
        if text[start..end].trim().is_empty() {
            out.push(start);
        }
        start = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The offsets of every `X` outside code.
    fn outside(text: &str) -> Vec<usize> {
        let mut seen = Vec::new();
        for_each_outside_code(text, "X", |at, _| {
            seen.push(at);
            None
        });
        seen
    }

    #[test]
    fn fences_and_spans() {
        let cases: &[(&str, &[usize])] = &[
            ("X", &[0]),
            ("a X b X", &[2, 6]),
            ("```\nX\n```\nX", &[10]),
            ("~~~~\nX\n~~~\nX\n~~~~\nX", &[18]),
            ("~~~~\nX\n~~~\nX\n~~~~~ \nX", &[20]),
            ("```rust\nX\n", &[]),
            ("  > ```\n  > X\n  > ```\nX", &[22]),
            ("````\nX\n```\nX\n````\nX", &[18]),
            ("``` a`b\nX\n```", &[8]),
            ("```\nX\n~~~\nX", &[]),
            ("`X` X", &[4]),
            ("``X`` X", &[6]),
            ("`` ` X ` `` X", &[12]),
            ("`X", &[1]),
            ("``X` X", &[2, 5]),
            ("`a\nX` X", &[6]),
            ("`a\n\nX` X", &[4, 7]),
            ("`a\n  \t\nX` X", &[7, 10]),
            ("X```\nX\n```", &[0, 5]),
            ("\r\n```\r\nX\r\n```\r\nX", &[15]),
        ];
        for (text, want) in cases {
            assert_eq!(outside(text), want.to_vec(), "text {text:?}");
        }
    }

    #[test]
    fn a_visit_consumes_backticks_it_covers() {
        // The visit says the match runs to the end of `X ` ... `Y`: the backtick inside is
        // consumed and opens nothing, so the last X is outside code.
        let text = "X ` Y X";
        let mut seen = Vec::new();
        for_each_outside_code(text, "X", |at, limit| {
            assert_eq!(limit, text.len());
            seen.push(at);
            (at == 0).then_some(5)
        });
        assert_eq!(seen, vec![0, 6]);
        // Without consuming, the backtick is literal (no closer) and both Xs are seen too.
        assert_eq!(outside(text), vec![0, 6]);
        assert_eq!(outside("` X `X"), vec![5]);
    }

    #[test]
    fn many_backtick_runs_stay_linear() {
        let text = format!("{}X", "` `` ``` ".repeat(200_000));
        let started = std::time::Instant::now();
        assert_eq!(outside(&text).len(), 1);
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }

    fn prose() -> impl Strategy<Value = String> {
        "[a-zX .<>!\n]{0,20}"
    }

    fn code() -> impl Strategy<Value = String> {
        prop_oneof![
            ("[a-z X.]{0,10}", 1usize..4).prop_map(|(body, n)| {
                let ticks = "`".repeat(n);
                format!("{ticks} {body} {ticks}")
            }),
            (
                "[a-z X\n]{0,20}",
                prop::sample::select(vec!["```", "~~~", "````"])
            )
                .prop_map(|(body, fence)| format!("\n{fence}\n{body}\n{fence}\n")),
        ]
    }

    proptest! {
        #[test]
        fn never_panics(text in any::<String>(), pattern in ".{0,3}") {
            for_each_outside_code(&text, &pattern, |_, _| None);
            for_each_outside_code(&text, &pattern, |at, _| Some(at + 1));
            for_each_outside_code(&text, &pattern, |_, limit| Some(limit));
            for_each_outside_code(&text, &pattern, |_, _| Some(0));
            let _ = prose_segments(&text);
        }

        #[test]
        fn never_panics_on_markdown_shaped_noise(parts in prop::collection::vec(prop::sample::select(vec![
            "`", "``", "```", "~~~", "\n", " ", "X", ">", "\n\n", "\r\n", "é",
        ]), 0..60)) {
            let text = parts.concat();
            let seen = outside(&text);
            prop_assert!(seen.windows(2).all(|w| w[0] < w[1]));
            prop_assert!(seen.iter().all(|&at| &text[at..at + 1] == "X"));
        }

        /// Prose and code interleaved: every X in prose is seen, none in code.
        #[test]
        fn xs_in_prose_are_seen_and_xs_in_code_are_not(
            parts in prop::collection::vec((prose(), code()), 0..6),
            tail in prose(),
        ) {
            let mut text = String::new();
            let mut want = Vec::new();
            let mut add_prose = |text: &mut String, p: &str| {
                want.extend(p.match_indices('X').map(|(i, _)| text.len() + i));
                text.push_str(p);
            };
            for (p, c) in &parts {
                add_prose(&mut text, p);
                // Blank lines around the code keep it apart from the prose's paragraphs.
                text.push_str("\n\n");
                text.push_str(c);
                text.push_str("\n\n");
            }
            add_prose(&mut text, &tail);
            prop_assert_eq!(outside(&text), want, "text {:?}", text);
        }
    }
}
