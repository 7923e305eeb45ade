//! Layering rules checked on the source itself (issues 11 and 21). The crate map in `src/lib.rs`
//! is a table of layers; every `crate::X` a module's code names (outside its tests) must be on a
//! lower layer, so no module imports one beside or above it and the graph has no cycle. External
//! crates stay where the map puts them: git2 in `store` (its `Oid` too: the layers above name
//! objects by `objectid::ObjectId`), rusqlite in `index`, tokio, rmcp and
//! notify in `mcp`, anyhow and clap in `cli` (and `main.rs`). Only `recorder` takes the capture
//! lock or writes the pending journal (issue 36), but for the writers still on their way there.
//! `store` reads no journal: it is the git adapter and nothing more.
//! Test-only code may use anything as an oracle: each `#[cfg(test)]` item (the test module, a
//! test-only method or helper) is left out, and the code after it is read.
//! `tools/modgraph.py` prints the same graph.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// A source file: its path under `src/`, its top-level module, and its code outside tests with
/// comment lines blanked (so line numbers stay right).
struct Source {
    rel: String,
    module: String,
    code: Vec<String>,
}

fn sources() -> Vec<Source> {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    assert!(files.len() > 50, "the walk found the sources");
    files.sort();
    files
        .into_iter()
        .map(|f| {
            let rel = f
                .strip_prefix(src())
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let first = rel.split('/').next().unwrap();
            let module = first.strip_suffix(".rs").unwrap_or(first).to_string();
            let text = std::fs::read_to_string(&f).unwrap();
            let code = code_outside_tests(&text);
            Source { rel, module, code }
        })
        .collect()
}

/// The lines of a source file with what only tests compile blanked (so line numbers stay
/// right): each `#[cfg(test)]` item from its attribute to its end (the test module, inline or
/// `mod tests;`, and a test-only `use`, method, helper or module anywhere in the file), and
/// comment lines. The code after a test-only item is read like any other (issue 36, F1: cutting
/// at the first `#[cfg(test)]` left 2,175 lines of 11 files unread).
pub(crate) fn code_outside_tests(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let line_of = |at: usize| text[..at].matches('\n').count();
    for (start, end) in test_only_items(text) {
        for line in &mut lines[line_of(start)..=line_of(end)] {
            line.clear();
        }
    }
    for line in &mut lines {
        if line.trim_start().starts_with("//") {
            line.clear();
        }
    }
    lines
}

/// The byte spans of the `#[cfg(test)]` items of `text`: from the attribute through the `;`
/// that ends the item or the `}` that closes its body (or up to the bracket that closes what
/// holds it: a test-only field or variant). Strings, characters and comments are skipped, so a
/// brace or a `#[cfg(test)]` inside one counts for nothing.
fn test_only_items(text: &str) -> Vec<(usize, usize)> {
    const ATTR: &str = "#[cfg(test)]";
    let tokens = significant(text);
    let mut spans = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let (start, _) = tokens[i];
        if !text[start..].starts_with(ATTR) {
            i += 1;
            continue;
        }
        // The attribute's own brackets (and those of any attribute after it) open and close
        // before the item's body does.
        let mut depth = 0usize;
        let mut end = text.len() - 1;
        let mut j = i + 1;
        while j < tokens.len() {
            let (at, c) = tokens[j];
            match c {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' if depth == 0 => {
                    end = at - 1;
                    break;
                }
                ')' | ']' => depth -= 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = at;
                        break;
                    }
                }
                ';' if depth == 0 => {
                    end = at;
                    break;
                }
                _ => {}
            }
            j += 1;
        }
        spans.push((start, end));
        i = j + 1;
    }
    spans
}

/// The brackets, `;` and `#` of `text` outside strings, characters and comments, with their
/// byte offsets.
fn significant(text: &str) -> Vec<(usize, char)> {
    let b = text.as_bytes();
    let ident = |at: usize| b[at].is_ascii_alphanumeric() || b[at] == b'_';
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let rest = &b[i..];
        if rest.starts_with(b"//") {
            i += rest.iter().position(|c| *c == b'\n').unwrap_or(rest.len());
            continue;
        }
        if rest.starts_with(b"/*") {
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            continue;
        }
        // A raw string, r"…" or r#"…"# (or br…), not the `r` ending a name.
        let prefix = match rest {
            [b'r', ..] => 1,
            [b'b', b'r', ..] => 2,
            _ => 0,
        };
        let hashes = rest[prefix.min(rest.len())..]
            .iter()
            .take_while(|c| **c == b'#')
            .count();
        if prefix > 0 && (i == 0 || !ident(i - 1)) && rest.get(prefix + hashes) == Some(&b'"') {
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            i += prefix + hashes + 1;
            while i < b.len() && !b[i..].starts_with(&close) {
                i += 1;
            }
            i += close.len();
            continue;
        }
        match b[i] {
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
            }
            // A character ('x', '\n', '{', '\u{1b}'), not a lifetime ('a).
            b'\'' => {
                if b.get(i + 1) == Some(&b'\\') {
                    i += 3;
                    while i < b.len() && b[i] != b'\'' {
                        i += 1;
                    }
                } else if let Some(c) = text[i + 1..].chars().next() {
                    if text[i + 1 + c.len_utf8()..].starts_with('\'') {
                        i += 1 + c.len_utf8();
                    }
                }
            }
            c @ (b'{' | b'}' | b'(' | b')' | b'[' | b']' | b';' | b'#') => out.push((i, c as char)),
            _ => {}
        }
        i += 1;
    }
    out
}

/// The layer table of the crate map in `src/lib.rs`: module → layer (1 is the bottom).
fn layers_in_crate_map() -> BTreeMap<String, u32> {
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    let mut layers = BTreeMap::new();
    for line in lib.lines() {
        let Some(row) = line.strip_prefix("//! | ") else {
            continue;
        };
        let mut cells = row.split(" | ");
        let Ok(layer) = cells.next().unwrap_or("").trim().parse::<u32>() else {
            continue;
        };
        for name in cells.next().unwrap_or("").split(", ") {
            let name = name.trim().trim_start_matches("[`").trim_end_matches("`]");
            let again = layers.insert(name.to_string(), layer);
            assert!(again.is_none(), "{name} is on two rows of the crate map");
        }
    }
    layers
}

/// The modules `src/lib.rs` declares.
fn declared_modules() -> BTreeSet<String> {
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    lib.lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod "))
        .chain(lib.lines().filter_map(|l| l.trim().strip_prefix("mod ")))
        .map(|m| m.trim_end_matches(';').to_string())
        .collect()
}

/// The top-level modules a line names through `crate::` (a `crate::{a, b::c}` group names each).
fn named_modules(line: &str) -> BTreeSet<String> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut found = BTreeSet::new();
    for (i, _) in line.match_indices("crate::") {
        let rest = &line[i + "crate::".len()..];
        match rest.strip_prefix('{') {
            Some(group) => {
                let group = group.split('}').next().unwrap_or("");
                found.extend(group.split(',').map(|p| ident(p.trim())));
            }
            None => {
                found.insert(ident(rest));
            }
        }
    }
    found.retain(|m| !m.is_empty());
    found
}

/// Joins a `use crate::{…}` group spread over lines into its first line.
fn joined(code: &[String]) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut open: Option<(usize, String)> = None;
    for (n, line) in code.iter().enumerate() {
        if let Some((start, mut acc)) = open.take() {
            acc.push(' ');
            acc.push_str(line.trim());
            match line.contains('}') {
                true => out.push((start, acc)),
                false => open = Some((start, acc)),
            }
        } else if line.contains("crate::{") && !line.contains('}') {
            open = Some((n, line.clone()));
        } else {
            out.push((n, line.clone()));
        }
    }
    out.extend(open);
    out
}

/// Every edge `module -> named module` with the place that makes it.
fn edges(sources: &[Source]) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for s in sources {
        if s.rel == "lib.rs" || s.rel == "main.rs" {
            continue;
        }
        for (n, line) in joined(&s.code) {
            for to in named_modules(&line) {
                if to != s.module {
                    let at = format!("src/{}:{}: {}", s.rel, n + 1, line.trim());
                    out.push((s.module.clone(), to, at));
                }
            }
        }
    }
    out
}

#[test]
fn the_crate_map_names_every_module_once() {
    let map: BTreeSet<String> = layers_in_crate_map().into_keys().collect();
    assert_eq!(
        map,
        declared_modules(),
        "the crate map in src/lib.rs and its `mod` lines differ"
    );
}

#[test]
fn every_module_uses_only_modules_on_lower_layers() {
    let layers = layers_in_crate_map();
    let mut offenders = Vec::new();
    for (from, to, at) in edges(&sources()) {
        let (Some(a), Some(b)) = (layers.get(&from), layers.get(&to)) else {
            offenders.push(format!(
                "{at}\n    ({from} or {to} is not in the crate map)"
            ));
            continue;
        };
        if b >= a {
            offenders.push(format!(
                "{at}\n    ({from}, layer {a}, uses {to}, layer {b})"
            ));
        }
    }
    assert!(
        offenders.is_empty(),
        "edges against the layers of src/lib.rs:\n{}",
        offenders.join("\n")
    );
}

/// The module graph has no cycle, checked on its own (the layer rule implies it; this names one).
#[test]
fn the_module_graph_has_no_cycle() {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (from, to, _) in edges(&sources()) {
        graph.entry(from).or_default().insert(to);
    }
    assert_eq!(find_cycle(&graph), None);
}

/// Edges the layers allow that the design does not: `store` is the git adapter and nothing more
/// (issue 36, part 2; the review's F3), so it reads no journal; what is pending is the journal's
/// to list (`Journal::pending_lines`) and the Recorder's to write back (`restore`).
const FORBIDDEN_EDGES: &[(&str, &str)] = &[("store", "journal")];

/// The edges among `edges` that [`FORBIDDEN_EDGES`] names, with the place that makes each.
fn forbidden(edges: &[(String, String, String)]) -> Vec<String> {
    edges
        .iter()
        .filter(|(from, to, _)| FORBIDDEN_EDGES.contains(&(from.as_str(), to.as_str())))
        .map(|(from, to, at)| format!("{at}\n    ({from} must not use {to})"))
        .collect()
}

#[test]
fn the_git_adapter_does_not_read_the_journal() {
    let offenders = forbidden(&edges(&sources()));
    assert!(offenders.is_empty(), "{}", offenders.join("\n"));
}

#[test]
fn the_forbidden_edge_rule_sees_a_breach() {
    let edge = |from: &str, to: &str| (from.to_string(), to.to_string(), format!("src/{from}"));
    let found = forbidden(&[edge("store", "journal"), edge("recorder", "journal")]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("store must not use journal"), "{found:?}");
}

fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == node) {
            let mut cycle = path[i..].to_vec();
            cycle.push(node.to_string());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(c) = visit(next, graph, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|n| visit(n, graph, &mut Vec::new(), &mut done))
}

#[test]
fn the_cycle_finder_finds_a_cycle() {
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (a, b) in [("cli", "store"), ("store", "vault"), ("vault", "store")] {
        g.entry(a.into()).or_default().insert(b.into());
    }
    assert_eq!(
        find_cycle(&g),
        Some(vec!["store".into(), "vault".into(), "store".into()])
    );
    g.remove("vault");
    assert_eq!(find_cycle(&g), None);
}

#[test]
fn a_use_group_names_each_module() {
    let code: Vec<String> = ["use crate::{", "    clock::Instant,", "    fsx::Dir,", "};"]
        .map(String::from)
        .to_vec();
    let lines = joined(&code);
    let names: BTreeSet<String> = lines.iter().flat_map(|(_, l)| named_modules(l)).collect();
    assert_eq!(names, BTreeSet::from(["clock".into(), "fsx".into()]));
    assert_eq!(
        named_modules("let x = crate::records::paths::OVERLAY_DIR; crate::store::Store"),
        BTreeSet::from(["records".into(), "store".into()])
    );
}

/// Whether a line of code names the crate `krate` (`krate::…` not inside a longer path or name,
/// or `use krate`).
fn names_crate(line: &str, krate: &str) -> bool {
    let l = line.trim_start();
    let part_of_more =
        |i: usize| l[..i].ends_with(|c: char| c.is_alphanumeric() || "_:".contains(c));
    l.match_indices(&format!("{krate}::"))
        .any(|(i, _)| !part_of_more(i))
        || l.starts_with(&format!("use {krate}"))
}

/// Lines outside `allowed` modules that use `krate` (`krate::` or `use krate`).
fn uses_of(krate: &str, allowed: &[&str]) -> Vec<String> {
    let mut offenders = Vec::new();
    for s in sources() {
        if allowed.contains(&s.module.as_str()) || allowed.contains(&s.rel.as_str()) {
            continue;
        }
        for (n, line) in s.code.iter().enumerate() {
            if names_crate(line, krate) {
                offenders.push(format!("src/{}:{}: {}", s.rel, n + 1, line.trim()));
            }
        }
    }
    offenders
}

#[test]
fn external_crates_are_used_only_where_the_crate_map_puts_them() {
    let rules: [(&str, &[&str]); 7] = [
        ("git2", &["store"]),
        ("rusqlite", &["index"]),
        ("tokio", &["mcp"]),
        ("rmcp", &["mcp"]),
        ("notify", &["mcp"]),
        ("anyhow", &["cli", "main.rs"]),
        ("clap", &["cli", "main.rs"]),
    ];
    let mut offenders = Vec::new();
    for (krate, allowed) in rules {
        for at in uses_of(krate, allowed) {
            offenders.push(format!("{krate} outside {allowed:?}: {at}"));
        }
    }
    assert!(offenders.is_empty(), "{}", offenders.join("\n"));
}

#[test]
fn the_crate_rule_sees_a_use() {
    assert!(names_crate("let r = git2::Repository::open(p);", "git2"));
    assert!(names_crate("use git2::{Oid, Repository};", "git2"));
    assert!(names_crate(
        "    .map_err(|e: rusqlite::Error| e)",
        "rusqlite"
    ));
    assert!(!names_crate("use my_git2::x;", "git2"));
    assert!(!names_crate("let x = crate::store::git2::y;", "git2"));
    assert!(!names_crate("let x = anyhowever::y;", "anyhow"));
}

/// Whether a line of code names `word` as a whole identifier (not inside a longer name).
fn names_word(line: &str, word: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    line.match_indices(word)
        .any(|(i, _)| !line[..i].ends_with(ident) && !line[i + word.len()..].starts_with(ident))
}

/// What [`libgit2_ids_stay_in_the_store`] finds in one file of `module`: outside `store`, a
/// line naming libgit2's `Oid` (through `git2::`, a re-export or an import); inside it, a line
/// that hands a git2 item on (`pub use git2…`, `pub type … = git2::…`).
fn git2_leaks(module: &str, code: &[String]) -> Vec<(usize, String)> {
    let hands_on = |l: &str| {
        let l = l.trim_start();
        l.starts_with("pub")
            && (l.contains(" use git2") || (l.contains(" type ") && l.contains("git2::")))
    };
    code.iter()
        .enumerate()
        .filter(|(_, l)| match module {
            "store" => hands_on(l),
            _ => names_word(l, "Oid"),
        })
        .map(|(n, l)| (n + 1, l.trim().to_string()))
        .collect()
}

/// Object ids above the git adapter are our own `objectid::ObjectId` (issue 36, part 2; the
/// review's F3): libgit2's `Oid` is named only inside `store`, which converts at its edge and
/// re-exports nothing of git2, so `store::Oid` cannot come back.
#[test]
fn libgit2_ids_stay_in_the_store() {
    let mut offenders = Vec::new();
    for s in sources() {
        for (n, line) in git2_leaks(&s.module, &s.code) {
            offenders.push(format!("src/{}:{n}: {line}", s.rel));
        }
    }
    assert!(
        offenders.is_empty(),
        "libgit2's ids outside src/store (use crate::objectid::ObjectId):\n{}",
        offenders.join("\n")
    );
}

#[test]
fn the_git2_rule_sees_a_leak() {
    let code = |l: &str| vec![l.to_string()];
    assert_eq!(
        git2_leaks("audit", &code("fn f(o: crate::store::Oid) {}")).len(),
        1
    );
    assert_eq!(
        git2_leaks("sync", &code("use crate::store::{Oid, Store};")).len(),
        1
    );
    assert_eq!(git2_leaks("store", &code("pub use git2::Oid;")).len(), 1);
    assert_eq!(
        git2_leaks("store", &code("pub(crate) use git2::Oid as Id;")).len(),
        1
    );
    assert_eq!(
        git2_leaks("store", &code("pub type Id = git2::Oid;")).len(),
        1
    );
    assert!(git2_leaks("audit", &code("fn f(o: ObjectId, p: Oids) {}")).is_empty());
    assert!(git2_leaks("store", &code("use git2::Oid;")).is_empty());
}

/// Lines of code outside `allowed` files or folders (paths under `src/`) that contain `needle`.
fn calls_outside(needle: &str, allowed: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    for s in sources() {
        if allowed.iter().any(|a| s.rel.starts_with(a)) {
            continue;
        }
        for (n, line) in s.code.iter().enumerate() {
            if line.contains(needle) {
                found.push(format!("src/{}:{}: {}", s.rel, n + 1, line.trim()));
            }
        }
    }
    found
}

/// One record-write path (issue 21, item 3): only `recorder` opens the pending journal to write
/// it and commits a record; readers list it with `Journal::pending`, which creates nothing.
#[test]
fn only_the_record_write_path_opens_the_journal_or_commits_a_record() {
    let mut offenders = calls_outside("Journal::open(", &["journal/", "recorder/"]);
    offenders.extend(calls_outside(
        "commit_planned(",
        &["recorder/", "store/commit.rs"],
    ));
    assert!(
        offenders.is_empty(),
        "the journal opened or a record committed outside src/recorder:\n{}",
        offenders.join("\n")
    );
}

/// The calls that take the capture lock (`crate::lock::Lock`; the aside folders' `on_dir` and
/// the other `named` locks are not it) or write the pending journal: open it to write (a
/// `Journal` comes from nowhere else, `Journal::pending` only reads) or change it through one
/// (a writer names it `journal`).
const LOCK_AND_JOURNAL_WRITES: &[&str] = &[
    "Lock::acquire(",
    "open_journal(",
    "Journal::open(",
    "journal.add(",
    "journal.rewrite(",
    "journal.remove(",
    "journal.reject(",
    "journal.sync(",
    // The store's writes of the record ref and its reflog, which a writer makes through its
    // Recorder's methods of the same names (a writer names its store `store`).
    "store.ensure_ref(",
    "store.ensure_ref_seeing(",
    "store.advance_ref(",
    "store.start_ref_at(",
    "store.configure_reflog(",
    "store.seed_evidence_if_fresh(",
    "store.seal(",
    "store.restore(",
];

/// How many times each file's code outside `allowed` (paths under `src/`) makes each of
/// `calls`: file → call → count.
fn calls_per_file(calls: &[&str], allowed: &[&str]) -> BTreeMap<(String, String), usize> {
    let mut found = BTreeMap::new();
    for s in sources() {
        if allowed.iter().any(|a| s.rel.starts_with(a)) {
            continue;
        }
        for line in &s.code {
            for call in calls {
                let n = line.matches(call).count();
                if n > 0 {
                    *found.entry((s.rel.clone(), call.to_string())).or_insert(0) += n;
                }
            }
        }
    }
    found
}

/// What [`only_the_recorder_takes_the_capture_lock_or_writes_the_journal`] finds against the
/// allow-list: a call it does not name (or more of them than it names), and a line of it that no
/// longer holds (the writer moved into the Recorder: drop its line).
fn against_allow_list(
    found: &BTreeMap<(String, String), usize>,
    allowed: &[(&str, &str, usize)],
) -> Vec<String> {
    let mut out = Vec::new();
    for ((file, call), n) in found {
        let listed = allowed
            .iter()
            .find(|(f, c, _)| f == file && c == call)
            .map_or(0, |(_, _, n)| *n);
        if *n > listed {
            out.push(format!(
                "src/{file}: {call}…) {n} time(s), {listed} allowed: only src/recorder/ takes the capture lock, writes the journal or moves the record ref"
            ));
        }
    }
    for (file, call, listed) in allowed {
        let n = found
            .get(&(file.to_string(), call.to_string()))
            .copied()
            .unwrap_or(0);
        if n < *listed {
            out.push(format!(
                "src/{file}: {call}…) {n} time(s), the allow-list says {listed}: lower its count or drop its line"
            ));
        }
    }
    out
}

/// Only `recorder` takes the capture lock and writes the pending journal or the record ref
/// (issue 36, part 1; the review's F4): every writer opens a `Recorder` and writes through it,
/// so the allow-list is empty and any such call elsewhere fails.
#[test]
fn only_the_recorder_takes_the_capture_lock_or_writes_the_journal() {
    let found = calls_per_file(
        LOCK_AND_JOURNAL_WRITES,
        &["recorder/", "journal/", "lock.rs"],
    );
    let offenders = against_allow_list(&found, &[]);
    assert!(offenders.is_empty(), "{}", offenders.join("\n"));
}

#[test]
fn the_recorder_rule_sees_a_new_writer_and_a_stale_line() {
    let key = |f: &str, c: &str| (f.to_string(), c.to_string());
    let found = BTreeMap::from([
        (key("cli/commit.rs", "Lock::acquire("), 1),
        (key("cli/new.rs", "journal.add("), 1),
    ]);
    let allowed = [
        ("cli/commit.rs", "Lock::acquire(", 1),
        ("sync/mod.rs", "open_journal(", 1),
    ];
    let said = against_allow_list(&found, &allowed);
    assert_eq!(said.len(), 2, "{said:?}");
    assert!(
        said[0].starts_with("src/cli/new.rs: journal.add("),
        "{said:?}"
    );
    assert!(
        said[1].starts_with("src/sync/mod.rs: open_journal("),
        "{said:?}"
    );
    let more = BTreeMap::from([(key("cli/commit.rs", "Lock::acquire("), 2)]);
    assert_eq!(against_allow_list(&more, &allowed[..1]).len(), 1);
}

#[test]
fn test_only_items_are_blanked_and_the_code_after_them_is_read() {
    let text = r##"use crate::clock;
#[cfg(test)]
use crate::cli::Ui;
impl X {
    #[cfg(test)]
    fn only_for_tests(&self) -> Result<Vec<u8>, crate::cli::Error> {
        let s = "}";
        let c = '}';
        let r = r#"{"#;
        Ok(vec![])
    }
    fn after(&self) -> crate::store::Store { todo!() }
}
#[cfg(test)]
#[allow(dead_code)]
struct S { a: [u8; 3] }
fn later() { crate::index::x(); }
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests {
    use crate::cli;
}
"##;
    let code = code_outside_tests(text);
    let named: Vec<(usize, BTreeSet<String>)> = code
        .iter()
        .enumerate()
        .map(|(n, l)| (n + 1, named_modules(l)))
        .filter(|(_, m)| !m.is_empty())
        .collect();
    let want = |n: usize, m: &str| (n, BTreeSet::from([m.to_string()]));
    assert_eq!(
        named,
        [want(1, "clock"), want(12, "store"), want(17, "index")]
    );
    assert_eq!(code.len(), text.lines().count());
}

/// The literal names of record files appear only where their constants are defined.
#[test]
fn record_file_names_are_spelled_once() {
    let mut offenders = Vec::new();
    for name in [
        "\"note-identity.md\"",
        "\"verify-acks.jsonl\"",
        "\"stateful-use.jsonl\"",
    ] {
        offenders.extend(calls_outside(name, &["records/paths.rs"]));
    }
    assert!(offenders.is_empty(), "{}", offenders.join("\n"));
}

/// A command that prints entries gets its rows from `recall` (issue 36, F6): `cli/log.rs`
/// parses, calls `recall::log` and prints, naming neither the audit nor the store nor the
/// index that the rows are built from.
#[test]
fn log_prints_the_rows_recall_builds() {
    let banned: BTreeSet<String> = ["audit", "store", "index"].map(String::from).into();
    let log = sources().into_iter().find(|s| s.rel == "cli/log.rs");
    let log = log.expect("the rule reads cli/log.rs");
    let mut offenders = Vec::new();
    for (n, line) in joined(&log.code) {
        for m in named_modules(&line).intersection(&banned) {
            offenders.push(format!(
                "src/cli/log.rs:{}: {} (uses {m})",
                n + 1,
                line.trim()
            ));
        }
    }
    assert!(offenders.is_empty(), "{}", offenders.join("\n"));
}

/// The `Result<…, String>` types a text names (issue 36, F9): each `Result<` of two arguments
/// whose last is `String`, with the byte offset of its `Result` (`anyhow::Result<String>` has
/// one). An arrow inside (`impl FnOnce(&mut Doc) -> Result<…>`) is not a bracket.
fn string_results(text: &str) -> Vec<usize> {
    let b = text.as_bytes();
    let mut found = Vec::new();
    for (at, _) in text.match_indices("Result<") {
        if at > 0 && (b[at - 1].is_ascii_alphanumeric() || b[at - 1] == b'_') {
            continue;
        }
        let open = at + "Result<".len();
        let (mut depth, mut last, mut i) = (1usize, open, open);
        while i < b.len() && depth > 0 {
            match b[i] {
                b'-' if b.get(i + 1) == Some(&b'>') => i += 1,
                b'<' | b'(' | b'[' => depth += 1,
                b'>' | b')' | b']' => {
                    depth -= 1;
                    if depth == 0 && last > open && text[last..i].trim() == "String" {
                        found.push(at);
                    }
                }
                b',' if depth == 1 => last = i + 1,
                _ => {}
            }
            i += 1;
        }
    }
    found
}

/// No function outside tests returns its error as a bare `String` (issue 36, part 5; the
/// review's F9): an error is a type (a `thiserror` enum, or the module's error), so a caller can
/// tell one kind from another and `cli` can give it a hint and an exit status.
#[test]
fn errors_are_types_not_strings() {
    let mut offenders = Vec::new();
    for s in sources().iter() {
        let text = s.code.join("\n");
        for at in string_results(&text) {
            let n = text[..at].matches('\n').count();
            offenders.push(format!("src/{}:{}: {}", s.rel, n + 1, s.code[n].trim()));
        }
    }
    assert!(
        offenders.is_empty(),
        "a `Result<…, String>` outside tests (give the error a type):\n{}",
        offenders.join("\n")
    );
}

#[test]
fn the_string_error_rule_sees_every_spelling() {
    let text = "fn a() -> Result<(), String> {}\n\
                type Res<T> = Result<T, String>;\n\
                fn b(f: impl FnOnce(&mut Doc) -> Result<Vec<String>, String>) {}\n\
                fn c() -> Result<Vec<(String, String)>,\n    String> {}\n\
                fn d() -> Result<String, Error> {}\n\
                fn e() -> io::Result<String> {}\n\
                fn f() -> Result<HashMap<String, String>, E> {}\n\
                fn g() -> MyResult<u8, String> {}\n";
    let lines: Vec<usize> = string_results(text)
        .into_iter()
        .map(|at| text[..at].matches('\n').count() + 1)
        .collect();
    assert_eq!(lines, [1, 2, 3, 4]);
}

/// The types `impl … Hinted for TYPE` gives a hint to, outside tests (by their last name).
fn hinted_types(sources: &[Source]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for s in sources {
        for line in &s.code {
            let Some((_, rest)) = line.split_once("Hinted for ") else {
                continue;
            };
            let ty: String = rest
                .trim()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            let name = ty.rsplit("::").next().unwrap_or_default().to_string();
            out.push((s.rel.clone(), name));
        }
    }
    out
}

/// Every library error that says what to do next (`impl crate::hint::Hinted for X`, issue 36,
/// F5) is one that `cli` looks for in an error's chain (`hinted` in src/cli/error.rs), else its
/// hint would never be printed.
#[test]
fn every_hinted_error_is_known_to_cli() {
    let sources = sources();
    let error_rs = sources
        .iter()
        .find(|s| s.rel == "cli/error.rs")
        .expect("src/cli/error.rs");
    let code = error_rs.code.join("\n");
    let (_, list) = code
        .split_once("first_of!(\n")
        .expect("the list of `hinted` in src/cli/error.rs");
    let list = &list[..list.find(");").expect("the end of that list")];
    let known: BTreeSet<&str> = list
        .split(',')
        .filter_map(|t| t.trim().rsplit("::").next())
        .filter(|t| !t.is_empty())
        .collect();
    let hinted = hinted_types(&sources);
    assert!(hinted.len() >= 3, "the scan found the impls: {hinted:?}");
    let missing: Vec<String> = hinted
        .iter()
        .filter(|(file, name)| file != "hint.rs" && !known.contains(name.as_str()))
        .map(|(file, name)| format!("src/{file}: {name}"))
        .collect();
    assert!(
        missing.is_empty(),
        "a Hinted error that src/cli/error.rs's `hinted` does not list (add it there):\n{}",
        missing.join("\n")
    );
}
