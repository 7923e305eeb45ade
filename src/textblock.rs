//! Marked blocks in text files: the one region of a user's file that git-rutter manages, between a
//! start and an end marker line (git-branchless's habit; `<!-- BEGIN git-rutter -->` in
//! markdown, `… git-rutter START …` in git hooks). Everything outside the markers is the
//! user's and is never changed: inserting, replacing and removing a block keep the rest of the
//! file byte for byte. Used for git hooks (`install-git-hooks`) and for the instruction files of AI
//! clients (`install-hook`).

/// The marker lines that open and close a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Markers {
    pub start: &'static str,
    pub end: &'static str,
    /// Markdown: a marker line inside a fenced code block (a user quoting our block in their
    /// own instructions) is the user's text, not a marker.
    pub fences: bool,
}

/// Where a new block goes in a file that has none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Placement {
    /// Right after a `#!` line (at the top when there is none), with no separator: hook files.
    AfterShebang,
    /// At the end, after one empty line when the file has content: markdown instruction files.
    /// Removing the block also removes that empty line.
    End,
}

/// What to do about a [`BlockError`].
pub(crate) const FIX: &str = "Fix the file by hand.";

/// Why the markers of a file cannot be trusted, naming the marker lines as the file has them
/// (what to do, [`FIX`], is the caller's to say).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum BlockError {
    #[error("more than one `{}` line", .0.start)]
    TwoStarts(Markers),
    #[error("a `{}` line without a `{}` line before it", .0.end, .0.start)]
    EndWithoutStart(Markers),
    #[error("a `{}` line without a `{}` line after it", .0.start, .0.end)]
    StartWithoutEnd(Markers),
}

/// The lines of `text` with their byte offsets (start, end including the `\n`).
pub(crate) fn lines(text: &[u8]) -> impl Iterator<Item = (usize, usize, &[u8])> {
    let mut pos = 0;
    std::iter::from_fn(move || {
        if pos >= text.len() {
            return None;
        }
        let start = pos;
        let end = memchr::memchr(b'\n', &text[pos..]).map_or(text.len(), |i| pos + i + 1);
        pos = end;
        Some((start, end, &text[start..end]))
    })
}

/// Whether `line` is `marker` (trailing whitespace, a `\r` included, is ignored).
fn is_marker(line: &[u8], marker: &str) -> bool {
    line.trim_ascii_end() == marker.as_bytes()
}

/// The byte range of the block (START line through END line), if there is one.
pub(crate) fn find(text: &[u8], m: Markers) -> Result<Option<(usize, usize)>, BlockError> {
    let mut start = None;
    let mut found = None;
    let quoted = match m.fences {
        true => fenced(text),
        false => Vec::new(),
    };
    for (s, e, l) in lines(text) {
        if quoted.iter().any(|(a, b)| (*a..*b).contains(&s)) {
            continue;
        }
        if is_marker(l, m.start) {
            if start.is_some() || found.is_some() {
                return Err(BlockError::TwoStarts(m));
            }
            start = Some(s);
        } else if is_marker(l, m.end) {
            match start.take() {
                Some(st) => found = Some((st, e)),
                None => return Err(BlockError::EndWithoutStart(m)),
            }
        }
    }
    match start {
        Some(_) => Err(BlockError::StartWithoutEnd(m)),
        None => Ok(found),
    }
}

/// The fence a markdown line opens or may close a code block with: its character (`` ` `` or
/// `~`) and how many of it, after at most three spaces (CommonMark).
fn fence_of(line: &[u8]) -> Option<(u8, usize)> {
    let indent = line.iter().take_while(|b| **b == b' ').count();
    let rest = line.get(indent..).filter(|_| indent <= 3)?;
    let c = *rest.first().filter(|c| matches!(c, b'`' | b'~'))?;
    let n = rest.iter().take_while(|b| **b == c).count();
    (n >= 3).then_some((c, n))
}

/// The byte ranges of markdown's closed fenced code blocks, fence lines included. A fence never
/// closed is left out: what follows it is read as it is (a block appended after it stays ours).
fn fenced(text: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut open: Option<(u8, usize, usize)> = None;
    for (s, e, l) in lines(text) {
        match (open, fence_of(l)) {
            (None, Some((c, n))) => open = Some((c, n, s)),
            (Some((c, n, at)), Some((c2, n2))) if c == c2 && n2 >= n && closes(l) => {
                out.push((at, e));
                open = None;
            }
            _ => {}
        }
    }
    out
}

/// Whether a fence line can close a block: nothing but the fence and whitespace.
fn closes(line: &[u8]) -> bool {
    let t = line.trim_ascii();
    t.iter().all(|b| *b == t[0])
}

/// How a text file ends its lines: the one rule for every file git-rutter edits (client
/// configs, instruction files, git hooks). Edits see LF text: a file whose every line break is
/// CRLF (an editor's or `core.autocrlf`'s) is edited as LF and written back with CRLF, so the
/// lines git-rutter adds take the file's ending and removing them gives its bytes back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Eol {
    /// No CRLF at all.
    Lf,
    /// Every line break is CRLF.
    Crlf,
    /// Both kinds: edited as it is, new lines with LF (JSON, whose splices keep every other
    /// byte; marked blocks), or refused where the editor would rewrite them (TOML).
    Mixed,
}

impl Eol {
    pub(crate) fn of(text: &[u8]) -> Eol {
        let crlf = memchr::memmem::find_iter(text, b"\r\n").count();
        match (crlf, memchr::memchr_iter(b'\n', text).count()) {
            (0, _) => Eol::Lf,
            (c, n) if c == n => Eol::Crlf,
            _ => Eol::Mixed,
        }
    }

    /// The line break new lines take.
    pub(crate) fn ending(self) -> &'static [u8] {
        match self {
            Eol::Crlf => b"\r\n",
            _ => b"\n",
        }
    }

    /// `text` as the edit sees it.
    pub(crate) fn to_lf(self, text: &str) -> std::borrow::Cow<'_, str> {
        match self {
            Eol::Crlf => text.replace("\r\n", "\n").into(),
            _ => text.into(),
        }
    }

    /// An edit's LF text with the file's line ending.
    pub(crate) fn restore(self, text: String) -> String {
        match self {
            Eol::Crlf => text.replace('\n', "\r\n"),
            _ => text,
        }
    }
}

/// The line ending a block written into `text` takes ([`Eol`]).
pub(crate) fn line_ending(text: &[u8]) -> &'static [u8] {
    Eol::of(text).ending()
}

/// `text` with `block` in place of its block, or placed as `p` says when it has none. The block
/// is written with the file's [`line_ending`] (callers give it with `\n`), so installing into a
/// CRLF file keeps it CRLF and a second install finds the block up to date.
pub(crate) fn with_block(
    text: &[u8],
    block: &[u8],
    m: Markers,
    p: Placement,
) -> Result<Vec<u8>, BlockError> {
    let eol = line_ending(text);
    let (at, to, separator) = match (find(text, m)?, p) {
        (Some((s, e)), _) => (s, e, false),
        (None, Placement::AfterShebang) if text.starts_with(b"#!") => {
            let end = lines(text).next().map_or(0, |(_, e, _)| e);
            (end, end, false)
        }
        (None, Placement::AfterShebang) => (0, 0, false),
        // After an empty line; a file without a final newline gains only that newline, and
        // no empty line, so [`without_block`] can tell and give the file back byte for byte.
        (None, Placement::End) => (text.len(), text.len(), text.ends_with(b"\n")),
    };
    let mut out = text[..at].to_vec();
    if !out.is_empty() && !out.ends_with(b"\n") {
        out.extend_from_slice(eol);
    }
    if separator {
        out.extend_from_slice(eol);
    }
    for (_, _, line) in lines(block) {
        match line.strip_suffix(b"\n") {
            Some(l) => {
                out.extend_from_slice(l.strip_suffix(b"\r").unwrap_or(l));
                out.extend_from_slice(eol);
            }
            None => out.extend_from_slice(line),
        }
    }
    out.extend_from_slice(&text[to..]);
    Ok(out)
}

/// `text` without its block and, for [`Placement::End`], what [`with_block`] put before it: the
/// empty line, or, for a block that ends the file right after a line of text, the newline that
/// line gained; `None` when it has no block.
pub(crate) fn without_block(
    text: &[u8],
    m: Markers,
    p: Placement,
) -> Result<Option<Vec<u8>>, BlockError> {
    let Some((mut s, e)) = find(text, m)? else {
        return Ok(None);
    };
    let eol = line_ending(text);
    let gained_newline = e == text.len() && s > 0 && text[..s].ends_with(eol);
    if p == Placement::End && (empty_line_before(text, s, eol) || gained_newline) {
        s -= eol.len();
    }
    Ok(Some([&text[..s], &text[e..]].concat()))
}

/// Whether the line before byte `s` (a line's start) is empty, in the file's line ending `eol`.
fn empty_line_before(text: &[u8], s: usize, eol: &[u8]) -> bool {
    text[..s].ends_with(eol) && (s == eol.len() || text[..s - eol.len()].ends_with(b"\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const M: Markers = Markers {
        start: "<!-- BEGIN x -->",
        end: "<!-- END x -->",
        fences: true,
    };
    const B: &str = "<!-- BEGIN x -->\nbody\n<!-- END x -->\n";

    #[test]
    fn appended_blocks_come_after_an_empty_line_and_leave_with_it() {
        let user = b"# Mine\n\ntext\n";
        let once = with_block(user, B.as_bytes(), M, Placement::End).unwrap();
        assert_eq!(once, format!("# Mine\n\ntext\n\n{B}").into_bytes());
        assert_eq!(
            with_block(&once, B.as_bytes(), M, Placement::End).unwrap(),
            once
        );
        let back = without_block(&once, M, Placement::End).unwrap().unwrap();
        assert_eq!(back, user.to_vec());
        assert_eq!(
            with_block(b"", B.as_bytes(), M, Placement::End).unwrap(),
            B.as_bytes()
        );
        assert_eq!(
            without_block(B.as_bytes(), M, Placement::End)
                .unwrap()
                .unwrap(),
            b""
        );
    }

    #[test]
    fn broken_markers_are_named_as_the_file_has_them() {
        let said = |t: &str| find(t.as_bytes(), M).unwrap_err().to_string();
        assert_eq!(
            said("<!-- BEGIN x -->\n"),
            "a `<!-- BEGIN x -->` line without a `<!-- END x -->` line after it"
        );
        assert_eq!(
            said("<!-- END x -->\n"),
            "a `<!-- END x -->` line without a `<!-- BEGIN x -->` line before it"
        );
        assert_eq!(
            said(&format!("{B}{B}")),
            "more than one `<!-- BEGIN x -->` line"
        );
    }

    #[test]
    fn a_file_without_a_final_newline_gains_only_that_newline_and_loses_it_again() {
        let once = with_block(b"abc", B.as_bytes(), M, Placement::End).unwrap();
        assert_eq!(once, format!("abc\n{B}").into_bytes());
        assert_eq!(
            with_block(&once, B.as_bytes(), M, Placement::End).unwrap(),
            once
        );
        assert_eq!(
            without_block(&once, M, Placement::End).unwrap().unwrap(),
            b"abc"
        );
        // A block an earlier version appended after an empty line leaves with that line.
        let earlier = format!("abc\n\n{B}");
        assert_eq!(
            without_block(earlier.as_bytes(), M, Placement::End)
                .unwrap()
                .unwrap(),
            b"abc\n"
        );
    }

    #[test]
    fn text_after_the_block_is_kept_where_it_is() {
        let text = format!("a\n\n{B}after\n");
        let other = B.replace("body", "new");
        let updated = with_block(text.as_bytes(), other.as_bytes(), M, Placement::End).unwrap();
        assert_eq!(updated, format!("a\n\n{other}after\n").into_bytes());
        let gone = without_block(&updated, M, Placement::End).unwrap().unwrap();
        assert_eq!(gone, b"a\nafter\n");
    }

    #[test]
    fn a_crlf_file_gets_a_crlf_block_and_loses_it_byte_for_byte() {
        let user = b"# Mine\r\n\r\ntext\r\n";
        let once = with_block(user, B.as_bytes(), M, Placement::End).unwrap();
        let crlf = B.replace('\n', "\r\n");
        assert_eq!(
            once,
            format!("# Mine\r\n\r\ntext\r\n\r\n{crlf}").into_bytes()
        );
        assert_eq!(
            with_block(&once, B.as_bytes(), M, Placement::End).unwrap(),
            once
        );
        let back = without_block(&once, M, Placement::End).unwrap().unwrap();
        assert_eq!(back, user.to_vec());
        let no_final = with_block(b"abc\r\nxyz", B.as_bytes(), M, Placement::End).unwrap();
        assert_eq!(no_final, format!("abc\r\nxyz\r\n{crlf}").into_bytes());
        assert_eq!(
            without_block(&no_final, M, Placement::End)
                .unwrap()
                .unwrap(),
            b"abc\r\nxyz"
        );
    }

    #[test]
    fn markers_quoted_in_a_fenced_code_block_are_the_users_text() {
        let user = format!("# Mine\n\n~~~~\n{B}~~~~\n\n```\n{B}```\n");
        assert_eq!(find(user.as_bytes(), M), Ok(None));
        let once = with_block(user.as_bytes(), B.as_bytes(), M, Placement::End).unwrap();
        assert_eq!(once, format!("{user}\n{B}").into_bytes());
        let back = without_block(&once, M, Placement::End).unwrap().unwrap();
        assert_eq!(back, user.into_bytes());
        // A fence never closed quotes nothing: the block after it is still ours.
        let open = format!("```\nnot closed\n\n{B}");
        let at = open.find("<!--").unwrap();
        assert_eq!(find(open.as_bytes(), M).unwrap(), Some((at, open.len())));
        // Without fences (a shell script), a marker line is a marker wherever it is.
        let plain = Markers { fences: false, ..M };
        assert_eq!(
            find(b"```\n<!-- BEGIN x -->\n```\n", plain),
            Err(BlockError::StartWithoutEnd(plain))
        );
    }

    /// Lines that are never marker lines, so generated files start without a block; some quote
    /// a block in a fenced code block (a user's own documentation of it), which is not one. With
    /// `unended`, some lack a final newline.
    fn text(unended: bool) -> impl Strategy<Value = Vec<u8>> {
        let quote = format!("```md\n{B}  ```\n");
        let lines = proptest::collection::vec("[a-z #!<>-]{0,12}\r?", 0..8);
        let cut = any::<bool>().prop_map(move |c| c && unended);
        (lines, proptest::option::of(0..8usize), cut).prop_map(move |(mut ls, at, cut)| {
            if let Some(at) = at {
                ls.insert(at.min(ls.len()), quote.trim_end().to_string());
            }
            let mut t = ls.join("\n");
            if !t.is_empty() && !cut {
                t.push('\n');
            }
            t.into_bytes()
        })
    }

    fn block() -> impl Strategy<Value = Vec<u8>> {
        "[a-z \n]{0,30}".prop_map(|body| {
            let body = if body.is_empty() || body.ends_with('\n') {
                body
            } else {
                format!("{body}\n")
            };
            format!("{}\n{body}{}\n", M.start, M.end).into_bytes()
        })
    }

    proptest! {
        #[test]
        /// Every byte of the file is given back, a missing final newline included (at the
        /// end; after a shebang line without one, the line needs the newline it gains).
        fn insert_replace_remove_keep_the_rest((end, t) in any::<bool>().prop_flat_map(|end| (Just(end), text(end))),
                                                b1 in block(), b2 in block()) {
            let p = if end { Placement::End } else { Placement::AfterShebang };
            let once = with_block(&t, &b1, M, p).unwrap();
            let written = match line_ending(&t) {
                b"\r\n" => String::from_utf8_lossy(&b1).replace('\n', "\r\n").into_bytes(),
                _ => b1.clone(),
            };
            prop_assert_eq!(find(&once, M).unwrap().map(|(s, e)| once[s..e].to_vec()), Some(written));
            prop_assert_eq!(&with_block(&once, &b1, M, p).unwrap(), &once);
            let replaced = with_block(&once, &b2, M, p).unwrap();
            prop_assert_eq!(&replaced, &with_block(&t, &b2, M, p).unwrap());
            prop_assert_eq!(without_block(&replaced, M, p).unwrap(), Some(t.clone()));
            prop_assert_eq!(without_block(&t, M, p).unwrap(), None);
        }
    }
}
