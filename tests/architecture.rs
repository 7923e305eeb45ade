//! Layering rules checked on the source itself (issues 11 and 21). The crate map in `src/lib.rs`
//! is a table of layers; every `crate::X` a module's code names (outside its tests) must be on a
//! lower layer, so no module imports one beside or above it and the graph has no cycle. External
//! crates stay where the map puts them: git2 in `store`, rusqlite in `index`, tokio, rmcp and
//! notify in `mcp`, anyhow and clap in `cli` (and `main.rs`). Test modules may use anything as
//! an oracle (after their `#[cfg(test)]`). `tools/modgraph.py` prints the same graph.

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
            let code = text.split("#[cfg(test)]").next().unwrap_or("");
            let code = code
                .lines()
                .map(|l| match l.trim_start().starts_with("//") {
                    true => String::new(),
                    false => l.to_string(),
                })
                .collect();
            Source { rel, module, code }
        })
        .collect()
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
        named_modules("let x = crate::records::paths::OVERLAY_DIR; crate::store::Oid"),
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
