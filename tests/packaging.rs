//! What a user installs from, checked against what each channel documents: the Claude Code
//! plugin and its marketplace (Claude Code's manifest and marketplace references), the MCP
//! Registry entry (`server.json` against the registry's schema), the published crate
//! (Cargo.toml's metadata and `include` list) and the prebuilt archives (the release workflow
//! against `[package.metadata.binstall]`). The documented shapes are fixtures under
//! `tests/fixtures/claude_plugin/` and `tests/fixtures/mcp_registry/`, each naming the page it was
//! read from; a small checker below reads the JSON Schema subset they are written in and fails
//! on any keyword it does not know, so a fixture cannot say more than is checked.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(repo().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn json_file(rel: &str) -> Value {
    serde_json::from_str(&read(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn cargo_toml() -> toml_edit::DocumentMut {
    read("Cargo.toml").parse().expect("Cargo.toml parses")
}

fn package_str(key: &str) -> String {
    cargo_toml()["package"][key]
        .as_str()
        .unwrap_or_else(|| panic!("Cargo.toml has package.{key}"))
        .to_string()
}

/// True when these tests run in the published crate rather than a clone (cargo writes
/// `Cargo.toml.orig` into every package): the repository's own CI files are not in it.
fn packaged() -> bool {
    repo().join("Cargo.toml.orig").exists()
}

// ---------------------------------------------------------------------------------------------
// A JSON Schema (draft-07) subset checker.

/// Every way `value` breaks `schema` (resolved against `root`), each as `path: why`.
fn violations(root: &Value, schema: &Value, value: &Value) -> Vec<String> {
    let mut out = Vec::new();
    check(root, schema, value, "$", &mut out);
    out
}

fn check(root: &Value, schema: &Value, value: &Value, at: &str, out: &mut Vec<String>) {
    let Some(rules) = schema.as_object() else {
        assert!(
            schema == &json!(true),
            "{at}: a schema must be an object: {schema}"
        );
        return;
    };
    for (key, rule) in rules {
        match key.as_str() {
            "$comment" | "$id" | "$schema" | "description" | "title" | "example" | "examples"
            | "default" | "definitions" => {}
            "$ref" => {
                let name = rule
                    .as_str()
                    .and_then(|r| r.strip_prefix("#/definitions/"))
                    .unwrap_or_else(|| panic!("{at}: only #/definitions/ refs: {rule}"));
                let target = &root["definitions"][name];
                assert!(!target.is_null(), "{at}: no definition {name}");
                check(root, target, value, at, out);
            }
            "type" => {
                let types: Vec<&str> = match rule {
                    Value::String(t) => vec![t.as_str()],
                    Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
                    _ => panic!("{at}: type {rule}"),
                };
                if !types.iter().any(|t| is_type(value, t)) {
                    out.push(format!("{at}: expected {types:?}, found {value}"));
                }
            }
            "enum" => {
                if !rule.as_array().expect("enum is a list").contains(value) {
                    out.push(format!("{at}: {value} is not one of {rule}"));
                }
            }
            "const" => {
                if rule != value {
                    out.push(format!("{at}: {value} is not {rule}"));
                }
            }
            "required" => {
                if let Some(obj) = value.as_object() {
                    for name in rule.as_array().expect("required is a list") {
                        let name = name.as_str().expect("required names");
                        if !obj.contains_key(name) {
                            out.push(format!("{at}: {name} is required"));
                        }
                    }
                }
            }
            "properties" => {
                if let Some(obj) = value.as_object() {
                    for (name, sub) in rule.as_object().expect("properties is a map") {
                        if let Some(v) = obj.get(name) {
                            check(root, sub, v, &format!("{at}.{name}"), out);
                        }
                    }
                }
            }
            "additionalProperties" => {
                let known = rules.get("properties").and_then(Value::as_object);
                if let Some(obj) = value.as_object() {
                    for (name, v) in obj {
                        if known.is_some_and(|k| k.contains_key(name)) {
                            continue;
                        }
                        match rule {
                            Value::Bool(false) => {
                                out.push(format!("{at}: {name} is not a documented field"))
                            }
                            Value::Bool(true) => {}
                            sub => check(root, sub, v, &format!("{at}.{name}"), out),
                        }
                    }
                }
            }
            "items" => {
                if let Some(items) = value.as_array() {
                    for (i, v) in items.iter().enumerate() {
                        check(root, rule, v, &format!("{at}[{i}]"), out);
                    }
                }
            }
            "minItems" => {
                let min = rule.as_u64().expect("minItems") as usize;
                if value.as_array().is_some_and(|a| a.len() < min) {
                    out.push(format!("{at}: fewer than {min} items"));
                }
            }
            "minLength" | "maxLength" => {
                let n = rule.as_u64().expect("a length") as usize;
                if let Some(s) = value.as_str() {
                    let len = s.chars().count();
                    if (key == "minLength" && len < n) || (key == "maxLength" && len > n) {
                        out.push(format!("{at}: {len} characters breaks {key} {n}"));
                    }
                }
            }
            "pattern" => {
                let pattern = rule.as_str().expect("a pattern");
                if value.as_str().is_some_and(|s| !regex_is_match(pattern, s)) {
                    out.push(format!("{at}: {value} does not match {pattern}"));
                }
            }
            "format" => {
                assert!(
                    rule == "uri",
                    "{at}: only the uri format is checked: {rule}"
                );
                if value
                    .as_str()
                    .is_some_and(|s| !(s.starts_with("https://") || s.starts_with("http://")))
                {
                    out.push(format!("{at}: {value} is not a URL"));
                }
            }
            "anyOf" | "oneOf" | "allOf" => {
                let results: Vec<Vec<String>> = rule
                    .as_array()
                    .expect("a list of schemas")
                    .iter()
                    .map(|s| violations_at(root, s, value, at))
                    .collect();
                let passed = results.iter().filter(|r| r.is_empty()).count();
                let ok = match key.as_str() {
                    "anyOf" => passed > 0,
                    "oneOf" => passed == 1,
                    _ => passed == results.len(),
                };
                if !ok {
                    let why: Vec<String> = results.into_iter().flatten().collect();
                    out.push(format!("{at}: {key} not met ({passed} passed): {why:?}"));
                }
            }
            "not" => {
                if violations_at(root, rule, value, at).is_empty() {
                    out.push(format!("{at}: {value} matches what is ruled out: {rule}"));
                }
            }
            other => panic!("{at}: the checker does not know the keyword {other}"),
        }
    }
}

fn violations_at(root: &Value, schema: &Value, value: &Value, at: &str) -> Vec<String> {
    let mut out = Vec::new();
    check(root, schema, value, at, &mut out);
    out
}

fn is_type(value: &Value, t: &str) -> bool {
    match t {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "number" => value.is_number(),
        "integer" => value.is_i64() || value.is_u64(),
        "null" => value.is_null(),
        other => panic!("unknown type {other}"),
    }
}

/// One element of a pattern: a set of characters (a literal is a set of one).
#[derive(Debug)]
struct Atom {
    ranges: Vec<(char, char)>,
    negated: bool,
    min: usize,
    max: usize,
}

impl Atom {
    fn matches(&self, c: char) -> bool {
        self.ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi) != self.negated
    }
}

/// The regular expressions the fixtures use: `^`, `$`, literals, `\` escapes (`\d` too),
/// classes with ranges and `^`, and the quantifiers `*`, `+`, `?` and `{n}`. Anything else
/// panics, so a fixture cannot use a pattern this reads wrong.
fn regex_is_match(pattern: &str, text: &str) -> bool {
    let mut chars = pattern.chars().peekable();
    let anchored_start = chars.peek() == Some(&'^');
    if anchored_start {
        chars.next();
    }
    let mut atoms = Vec::new();
    let mut anchored_end = false;
    let escape = |c: char| -> Vec<(char, char)> {
        match c {
            'd' => vec![('0', '9')],
            c if "\\./-^$[]{}()*+?|".contains(c) => vec![(c, c)],
            c => panic!("unsupported escape \\{c} in {pattern}"),
        }
    };
    while let Some(c) = chars.next() {
        let (ranges, negated) = match c {
            '$' if chars.peek().is_none() => {
                anchored_end = true;
                break;
            }
            '\\' => (escape(chars.next().expect("an escaped character")), false),
            '[' => {
                let negated = chars.peek() == Some(&'^');
                if negated {
                    chars.next();
                }
                let mut ranges = Vec::new();
                loop {
                    let c = chars
                        .next()
                        .unwrap_or_else(|| panic!("unclosed [ in {pattern}"));
                    let lo = match c {
                        ']' => break,
                        '\\' => escape(chars.next().expect("an escaped character"))[0].0,
                        c => c,
                    };
                    let mut ahead = chars.clone();
                    if ahead.next() == Some('-') && ahead.peek().is_some_and(|&n| n != ']') {
                        chars.next();
                        let hi = chars.next().expect("a range end");
                        ranges.push((lo, hi));
                    } else {
                        ranges.push((lo, lo));
                    }
                }
                (ranges, negated)
            }
            '.' => (vec![], true),
            c if "(){}*+?|".contains(c) => panic!("unsupported {c} in {pattern}"),
            c => (vec![(c, c)], false),
        };
        let (min, max) = match chars.peek() {
            Some('*') => (0, usize::MAX),
            Some('+') => (1, usize::MAX),
            Some('?') => (0, 1),
            Some('{') => {
                chars.next();
                let n: String = chars.by_ref().take_while(|&c| c != '}').collect();
                let n = n
                    .parse()
                    .unwrap_or_else(|_| panic!("only {{n}} in {pattern}"));
                atoms.push(Atom {
                    ranges,
                    negated,
                    min: n,
                    max: n,
                });
                continue;
            }
            _ => (1, 1),
        };
        if (min, max) != (1, 1) {
            chars.next();
        }
        atoms.push(Atom {
            ranges,
            negated,
            min,
            max,
        });
    }
    let text: Vec<char> = text.chars().collect();
    let starts = if anchored_start {
        0..=0
    } else {
        0..=text.len()
    };
    starts
        .into_iter()
        .any(|s| match_here(&atoms, &text[s..], anchored_end))
}

fn match_here(atoms: &[Atom], text: &[char], anchored_end: bool) -> bool {
    let Some((atom, rest)) = atoms.split_first() else {
        return !anchored_end || text.is_empty();
    };
    let most = text
        .iter()
        .take(atom.max)
        .take_while(|&&c| atom.matches(c))
        .count();
    (atom.min..=most)
        .rev()
        .any(|n| match_here(rest, &text[n..], anchored_end))
}

fn schema(rel: &str) -> Value {
    let s = json_file(rel);
    assert!(
        s["$comment"]
            .as_str()
            .is_some_and(|c| c.contains("https://")),
        "{rel} names the page it was read from"
    );
    s
}

fn assert_valid(schema_rel: &str, value: &Value, what: &str) {
    let s = schema(schema_rel);
    let found = violations(&s, &s, value);
    assert!(found.is_empty(), "{what} against {schema_rel}: {found:#?}");
}

#[test]
fn the_checker_reads_its_patterns_as_regular_expressions_do() {
    let name = "^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$";
    assert!(regex_is_match(name, "io.github.rutter-dev/git-rutter"));
    assert!(!regex_is_match(name, "io.github.rutter-dev/git/rutter"));
    assert!(!regex_is_match(name, "no-slash"));
    assert!(regex_is_match("^[a-f0-9]{64}$", &"ab".repeat(32)));
    assert!(!regex_is_match("^[a-f0-9]{64}$", &"ab".repeat(33)));
    assert!(regex_is_match("\\.\\.", "./a/../b") && !regex_is_match("\\.\\.", "./a/.b"));
    assert!(regex_is_match("^\\./[^\\\\]*$", "./plugins/claude-code"));
    assert!(!regex_is_match("^\\./[^\\\\]*$", "./plugins\\claude-code"));
    assert!(
        regex_is_match("^[a-z0-9][a-z0-9-]*$", "rutter")
            && !regex_is_match("^[a-z0-9][a-z0-9-]*$", "Rutter")
    );
}

// ---------------------------------------------------------------------------------------------
// The Claude Code plugin and its marketplace.

const PLUGIN_SCHEMA: &str = "tests/fixtures/claude_plugin/plugin.schema.json";
const MARKETPLACE_SCHEMA: &str = "tests/fixtures/claude_plugin/marketplace.schema.json";
const PLUGIN_DIR: &str = "plugins/claude-code";

#[test]
fn the_plugin_manifest_is_what_claude_code_documents_and_names_everything() {
    let manifest = json_file(&format!("{PLUGIN_DIR}/.claude-plugin/plugin.json"));
    assert_valid(PLUGIN_SCHEMA, &manifest, "plugin.json");
    // Hooks and the server are named in the manifest itself: plugins whose hooks only sat in
    // the conventional file have been seen not to fire.
    let hooks = manifest["hooks"]
        .as_object()
        .expect("hooks declared inline");
    let events: Vec<&str> = hooks.keys().map(String::as_str).collect();
    assert_eq!(
        events,
        ["SessionStart", "Stop"],
        "the brief and the capture"
    );
    let servers = manifest["mcpServers"]
        .as_object()
        .expect("servers declared inline");
    assert_eq!(servers.keys().collect::<Vec<_>>(), ["rutter"]);
    for event in ["Stop", "SessionStart"] {
        let command = hooks[event][0]["hooks"][0]["command"].as_str().unwrap();
        assert!(
            command.contains("command -v git-rutter"),
            "{event} checks PATH first"
        );
    }
    let server = &servers["rutter"];
    let script = server["args"].as_array().unwrap().last().unwrap();
    assert!(
        script.as_str().unwrap().ends_with("exec git-rutter mcp"),
        "{server}"
    );
    // Claude Code also loads hooks/hooks.json and .mcp.json by convention: a manifest that
    // names what they hold again runs each hook twice, or fails the plugin with "Duplicate
    // hooks file detected" (anthropics/claude-code#10871).
    for conventional in ["hooks/hooks.json", ".mcp.json"] {
        assert!(
            !repo().join(PLUGIN_DIR).join(conventional).exists(),
            "{conventional} would load the manifest's hooks or server a second time"
        );
    }
    assert_eq!(manifest["version"], package_str("version").as_str());
    assert_eq!(manifest["repository"], package_str("repository").as_str());
}

#[test]
fn the_marketplace_lists_the_plugin_as_claude_code_documents() {
    let market = json_file(".claude-plugin/marketplace.json");
    assert_valid(MARKETPLACE_SCHEMA, &market, "marketplace.json");
    let entries = market["plugins"].as_array().unwrap();
    assert_eq!(entries.len(), 1);
    for entry in entries {
        // A relative source resolves from the marketplace root (the folder holding
        // .claude-plugin/), and the plugin found there carries the entry's name.
        let source = entry["source"].as_str().expect("a relative source");
        let dir = repo().join(source.trim_start_matches("./"));
        let manifest = json_file(&format!(
            "{}/.claude-plugin/plugin.json",
            source.trim_start_matches("./")
        ));
        assert!(dir.is_dir() && manifest["name"] == entry["name"], "{entry}");
    }
}

#[test]
fn the_plugin_schemas_refuse_what_claude_code_refuses() {
    let plugin = schema(PLUGIN_SCHEMA);
    let good = json_file(&format!("{PLUGIN_DIR}/.claude-plugin/plugin.json"));
    let broken = |edit: &dyn Fn(&mut Value)| {
        let mut v = good.clone();
        edit(&mut v);
        violations(&plugin, &plugin, &v)
    };
    assert!(!broken(&|v| {
        v.as_object_mut().unwrap().remove("name");
    })
    .is_empty());
    assert!(
        !broken(&|v| v["hook"] = json!("./hooks.json")).is_empty(),
        "a typo"
    );
    assert!(
        !broken(&|v| v["hooks"] = json!("hooks/extra.json")).is_empty(),
        "no ./"
    );
    assert!(
        !broken(&|v| v["hooks"] = json!("./../x.json")).is_empty(),
        "escapes"
    );
    assert!(!broken(&|v| v["hooks"]["Stopp"] = v["hooks"]["Stop"].clone()).is_empty());
    assert!(
        !broken(&|v| v["hooks"]["Stop"][0]["hooks"][0] = json!({"type": "command"})).is_empty()
    );
    assert!(!broken(&|v| v["mcpServers"]["rutter"] = json!({"args": ["mcp"]})).is_empty());
    assert!(!broken(&|v| v["author"] = json!({"email": "a@b"})).is_empty());
    let market = schema(MARKETPLACE_SCHEMA);
    let good = json_file(".claude-plugin/marketplace.json");
    for (field, bad) in [
        ("name", json!("claude-plugins-official")),
        ("name", json!("cargo")),
        ("name", json!("my market")),
        ("owner", json!("rutter-dev")),
    ] {
        let mut v = good.clone();
        v[field] = bad.clone();
        assert!(
            !violations(&market, &market, &v).is_empty(),
            "{field}: {bad}"
        );
    }
    let mut v = good.clone();
    v["plugins"][0]["source"] = json!("plugins/claude-code");
    assert!(
        !violations(&market, &market, &v).is_empty(),
        "a source without ./"
    );
}

// ---------------------------------------------------------------------------------------------
// The MCP Registry entry.

const SERVER_SCHEMA: &str = "tests/fixtures/mcp_registry/server.schema.json";

#[test]
fn server_json_is_the_registrys_shape_and_names_this_crate() {
    let server = json_file("server.json");
    assert_valid(SERVER_SCHEMA, &server, "server.json");
    let s = schema(SERVER_SCHEMA);
    // The excerpt leaves some of the schema out; server.json uses none of it.
    let defined = |def: &str| -> Vec<String> {
        s["definitions"][def]["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect()
    };
    for key in server.as_object().unwrap().keys() {
        assert!(
            defined("ServerDetail").contains(key),
            "{key} is outside the excerpt"
        );
    }
    let packages = server["packages"].as_array().unwrap();
    for key in packages.iter().flat_map(|p| p.as_object().unwrap().keys()) {
        assert!(
            defined("Package").contains(key),
            "{key} is outside the excerpt"
        );
    }
    assert_eq!(
        server["$schema"], s["$id"],
        "server.json names the schema version the excerpt is of"
    );
    // The name is the GitHub namespace of the repository Cargo.toml names.
    let repository = package_str("repository");
    let owner = repository
        .strip_prefix("https://github.com/")
        .and_then(|r| r.split('/').next())
        .expect("a GitHub repository");
    let name = format!("io.github.{owner}/{}", package_str("name"));
    assert_eq!(server["name"], name.as_str());
    assert_eq!(server["repository"]["url"], repository.as_str());
    // One package: this crate on crates.io, at this version, run as `git-rutter mcp`.
    let version = package_str("version");
    assert_eq!(server["version"], version.as_str());
    let [package] = packages.as_slice() else {
        panic!("one package: {packages:?}")
    };
    assert_eq!(package["registryType"], "cargo");
    assert_eq!(package["identifier"], package_str("name").as_str());
    assert_eq!(package["version"], version.as_str());
    assert_eq!(package["transport"]["type"], "stdio");
    assert_eq!(package["packageArguments"][0]["value"], "mcp");
    // The registry proves the crate is ours by `mcp-name: NAME` in the README that crates.io
    // shows, which drops HTML comments: the line must be visible text, ended by a boundary.
    let readme = read(&package_str("readme"));
    let token = format!("mcp-name: {name}");
    let line = readme
        .lines()
        .find(|l| l.contains(&token))
        .unwrap_or_else(|| panic!("README has a visible `{token}` line"));
    assert!(!line.contains("<!--"), "{line}");
    let after = line[line.find(&token).unwrap() + token.len()..]
        .chars()
        .next();
    assert!(
        after.is_none_or(|c| c.is_whitespace() || c == '`' || c == '<'),
        "{line}"
    );
}

#[test]
fn the_registry_schema_refuses_what_the_registry_refuses() {
    let s = schema(SERVER_SCHEMA);
    let good = json_file("server.json");
    for (pointer, bad) in [
        ("/name", json!("io.github.rutter-dev/git/rutter")),
        ("/description", json!("x".repeat(101))),
        ("/packages/0/version", json!("latest")),
        ("/packages/0/transport", json!({"type": "pipe"})),
        (
            "/packages/0/packageArguments/0",
            json!({"type": "positional"}),
        ),
        (
            "/repository",
            json!({"url": "https://github.com/rutter-dev/git-rutter"}),
        ),
    ] {
        let mut v = good.clone();
        *v.pointer_mut(pointer).unwrap() = bad.clone();
        assert!(!violations(&s, &s, &v).is_empty(), "{pointer}: {bad}");
    }
    let mut v = good.clone();
    v.as_object_mut().unwrap().remove("version");
    assert!(!violations(&s, &s, &v).is_empty(), "version is required");
}

// ---------------------------------------------------------------------------------------------
// The crate and the README's Install section.

#[test]
fn the_crate_carries_what_publishing_and_building_need() {
    let doc = cargo_toml();
    let package = &doc["package"];
    for key in [
        "repository",
        "homepage",
        "readme",
        "rust-version",
        "license",
        "description",
    ] {
        assert!(
            package[key].as_str().is_some_and(|v| !v.is_empty()),
            "package.{key}"
        );
    }
    // crates.io takes at most five keywords of at most 20 ASCII characters each.
    let keywords: Vec<&str> = package["keywords"]
        .as_array()
        .expect("keywords")
        .iter()
        .map(|k| k.as_str().unwrap())
        .collect();
    assert!((1..=5).contains(&keywords.len()), "{keywords:?}");
    for k in &keywords {
        assert!(
            k.len() <= 20
                && k.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'),
            "{k}"
        );
    }
    assert!(package["categories"]
        .as_array()
        .is_some_and(|c| !c.is_empty()));
    let include: Vec<String> = package["include"]
        .as_array()
        .expect("an include list")
        .iter()
        .map(|p| p.as_str().unwrap().to_string())
        .collect();
    let included = |rel: &str| {
        include.iter().any(|p| match p.strip_suffix("/**") {
            Some(dir) => rel.starts_with(&format!("{}/", dir.trim_start_matches('/'))),
            None => p.trim_start_matches('/') == rel,
        })
    };
    assert!(included(&package_str("readme")));
    // Every file the sources compile in, outside their tests, is in the package.
    let mut sources = Vec::new();
    rust_files(&repo().join("src"), &mut sources);
    let mut compiled_in = 0;
    for file in &sources {
        let text = std::fs::read_to_string(file).unwrap();
        let code = crate::architecture::code_outside_tests(&text).join("\n");
        for part in code.split("include_str!(\"").skip(1) {
            let rel = &part[..part.find('"').unwrap()];
            let target = file.parent().unwrap().join(rel);
            let target = target
                .canonicalize()
                .unwrap_or_else(|e| panic!("{rel}: {e}"));
            let rel = target.strip_prefix(repo().canonicalize().unwrap()).unwrap();
            let rel = rel.to_string_lossy();
            assert!(
                included(&rel),
                "{} compiles in {rel}, which is not included",
                file.display()
            );
            compiled_in += 1;
        }
    }
    assert!(compiled_in >= 4, "the walk found the compiled-in files");
    // And what the tests and benchmarks read beside the sources.
    for rel in [
        "tools/gen_vault.py",
        "hooks/claude.json",
        "server.json",
        "tests/packaging.rs",
    ] {
        assert!(included(rel), "{rel}");
    }
    // The one test binary (autotests off) and the files it declares as modules.
    assert_eq!(doc["package"]["autotests"].as_bool(), Some(false));
    let tests: Vec<&str> = doc["test"]
        .as_array_of_tables()
        .expect("[[test]]")
        .iter()
        .map(|t| t["path"].as_str().unwrap())
        .collect();
    assert_eq!(tests, ["tests/tests.rs"]);
    assert!(included("tests/tests.rs"));
    let runner = read("tests/tests.rs");
    for module in runner
        .lines()
        .filter_map(|l| l.strip_prefix("mod ")?.strip_suffix(';'))
    {
        let file = format!("tests/{module}.rs");
        let dir = format!("tests/{module}/mod.rs");
        assert!(included(&file) || included(&dir), "{module}");
    }
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

#[test]
fn the_readme_starts_with_install_and_names_the_true_minimum_rust() {
    let readme = read("README.md");
    let first = readme.lines().find(|l| l.starts_with("## ")).unwrap();
    assert_eq!(first, "## Install");
    let install = &readme[readme.find("## Install").unwrap()..];
    let install = &install[..install[3..].find("\n## ").map_or(install.len(), |i| i + 3)];
    let rust = package_str("rust-version");
    assert!(
        install.contains(&format!("Rust {rust}")),
        "Install names Rust {rust}"
    );
    for command in [
        "cargo install --locked git-rutter",
        "cargo binstall git-rutter",
        "cargo install --locked --path .",
    ] {
        assert!(install.contains(command), "Install shows `{command}`");
    }
    assert!(install.contains("docs/platforms.md"));
    assert!(repo().join("docs/platforms.md").exists() || packaged());
}

// ---------------------------------------------------------------------------------------------
// The prebuilt archives.

const WORKFLOW: &str = ".github/workflows/release.yml";

#[test]
fn the_release_archives_are_the_ones_cargo_binstall_asks_for() {
    if packaged() && !repo().join(WORKFLOW).exists() {
        eprintln!("skipped: the published crate does not carry the repository's workflows");
        return;
    }
    let workflow: Value = yaml_serde::from_str(&read(WORKFLOW)).expect("the workflow parses");
    let build = &workflow["jobs"]["build"];
    let targets: Vec<&str> = build["strategy"]["matrix"]["include"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["target"].as_str().unwrap())
        .collect();
    assert_eq!(
        targets,
        [
            "x86_64-unknown-linux-gnu",
            "aarch64-unknown-linux-gnu",
            "x86_64-apple-darwin",
            "aarch64-apple-darwin"
        ]
    );
    let archive = build["env"]["ARCHIVE"].as_str().unwrap();
    let steps: String = build["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["run"].as_str())
        .collect();
    // The archive holds the binary in a folder of the archive's own name.
    assert!(
        steps.contains(r#"release/git-rutter" README.md "$ARCHIVE/""#),
        "{steps}"
    );
    assert!(
        steps.contains(r#"tar -czf "$ARCHIVE.tar.gz" "$ARCHIVE""#),
        "{steps}"
    );
    assert!(
        steps.contains(r#"> "$ARCHIVE.tar.gz.sha256""#),
        "a checksum per archive"
    );
    let tags = workflow["on"]["push"]["tags"][0].as_str().unwrap();
    assert!(
        tags.starts_with('v'),
        "releases are tagged v{{version}}: {tags}"
    );

    let doc = cargo_toml();
    let binstall = &doc["package"]["metadata"]["binstall"];
    assert_eq!(binstall["pkg-fmt"].as_str(), Some("tgz"));
    let (name, version, repository) = (
        package_str("name"),
        package_str("version"),
        package_str("repository"),
    );
    for target in targets {
        let folder = archive.replace("${{ matrix.target }}", target);
        let render = |template: &str| {
            template
                .replace("{ repo }", &repository)
                .replace("{ version }", &version)
                .replace("{ name }", &name)
                .replace("{ target }", target)
                .replace("{ archive-suffix }", ".tar.gz")
                .replace("{ bin }", "git-rutter")
                .replace("{ binary-ext }", "")
        };
        assert_eq!(
            render(binstall["pkg-url"].as_str().unwrap()),
            format!("{repository}/releases/download/v{version}/{folder}.tar.gz")
        );
        assert_eq!(
            render(binstall["bin-dir"].as_str().unwrap()),
            format!("{folder}/git-rutter")
        );
    }
}
