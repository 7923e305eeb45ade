//! The MCP server entry `rutter` in a client's JSON config (`mcpServers.rutter`; OpenCode's
//! `mcp.rutter`, whose `command` is an array of program and arguments), and the
//! `… mcp add …` lines printed for clients whose server list lives in a file the client itself
//! rewrites. Our entry is recognised by its command (`…/git-rutter`); the TypeScript reference's
//! (`rutter-memory`, `dist/stdio.js`) is replaced, saying so; anything else called `rutter` is
//! somebody else's and is refused.

use super::change::{Change, Verb};
use super::command::{is_our_server, is_reference_server, shell_word};
use super::json::Json;
use super::jsonedit::{key, Doc};
use super::EditError;

/// The name the server is registered under.
pub(crate) const NAME: &str = "rutter";
/// The environment variable that names the vault to the server.
pub(crate) const VAULT_ENV: &str = crate::vault::VAULT_ENV;

/// The usual entry (`mcpServers.rutter`): this binary's `mcp`, with the vault in its
/// environment when one is given.
pub(crate) fn fields(bin: &str, vault: Option<&str>) -> Vec<(&'static str, Json)> {
    let mut fields = vec![
        ("command", Json::str(bin)),
        ("args", Json::Array(vec![Json::str("mcp")])),
    ];
    if let Some(v) = vault {
        let env = Json::Object(vec![(VAULT_ENV.into(), Json::str(v))]);
        fields.push(("env", env));
    }
    fields
}

/// The program an entry runs: its `command` string, or the first word of a `command` array.
pub(crate) fn program(entry: &Json) -> &str {
    match entry.get("command") {
        Some(Json::Array(words)) => words.first().and_then(Json::as_str).unwrap_or_default(),
        Some(c) => c.as_str().unwrap_or_default(),
        None => "",
    }
}

/// The program and arguments of an entry, as one line of shell words (a path with a space
/// quoted, as a hook's command line shows it).
pub(crate) fn command_line(entry: &Json) -> String {
    if let Some(Json::Array(words)) = entry.get("command") {
        let mut words = words.iter().filter_map(Json::as_str);
        let first = shell_word(words.next().unwrap_or_default());
        return std::iter::once(first)
            .chain(words.map(shell_word))
            .collect::<Vec<_>>()
            .join(" ");
    }
    let mut words = vec![shell_word(program(entry))];
    if let Some(args) = entry.get("args").and_then(Json::as_array) {
        words.extend(args.iter().filter_map(Json::as_str).map(shell_word));
    }
    words.join(" ")
}

/// Makes `doc[servers][NAME]` our server with `fields` (an `env` object is merged into the
/// entry's, other fields are set); the user's other fields are kept.
pub(crate) fn set_server(
    doc: &mut Doc,
    servers: &str,
    fields: Vec<(&str, Json)>,
) -> Result<Vec<Change>, EditError> {
    let fresh = || {
        let mut e = Json::object();
        for (k, v) in &fields {
            e.set(k, v.clone());
        }
        e
    };
    let line = command_line(&fresh());
    let existing = match doc.get(&[key(servers)]) {
        None => {
            let mut list = Json::object();
            list.set(NAME, fresh());
            doc.set(&[], servers, list);
            return Ok(vec![added(&line)]);
        }
        Some(l) if !l.is_object() => {
            return Err(EditError::NotA {
                key: servers.to_string(),
                what: "an object",
            })
        }
        Some(l) => l.get(NAME).cloned(),
    };
    let Some(entry) = existing else {
        doc.set(&[key(servers)], NAME, fresh());
        return Ok(vec![added(&line)]);
    };
    let was = command_line(&entry);
    if is_reference_server(&was) {
        doc.set(&[key(servers)], NAME, fresh());
        return Ok(vec![replaced_reference(&was)]);
    }
    if !is_our_server(program(&entry)) || !entry.is_object() {
        return Err(EditError::NotOurs {
            key: format!("{servers}.{NAME}"),
            was,
            what: "entry",
        });
    }
    let at = [key(servers), key(NAME)];
    let (mut env_changed, mut other_changed) = (Vec::new(), false);
    for (k, v) in fields {
        let before = doc.ops.len();
        match (k, v, entry.get("env")) {
            ("env", Json::Object(vars), Some(env)) if env.is_object() => {
                for (name, value) in vars {
                    let was = doc.ops.len();
                    let shown = value.as_str().map(str::to_string);
                    doc.set(&[key(servers), key(NAME), key("env")], &name, value);
                    if doc.ops.len() > was {
                        env_changed.push(format!("{name}={}", shown.unwrap_or_default()));
                    }
                }
            }
            (k, v, _) => {
                doc.set(&at, k, v);
                other_changed |= doc.ops.len() > before;
            }
        }
    }
    Ok(match (other_changed, env_changed.is_empty()) {
        (true, _) => vec![updated(&line)],
        // Only its environment moved (a vault switch): said as such, not as a new command.
        (false, false) => vec![Change::new(
            Verb::Update,
            format!(
                "the MCP server `{NAME}`'s environment to {}",
                env_changed.join(" ")
            ),
        )],
        (false, true) => Vec::new(),
    })
}

/// Removes our server entry (never another's), and `servers` when that leaves it empty.
pub(crate) fn remove_server(doc: &mut Doc, servers: &str) -> Vec<Change> {
    let ours = doc
        .get(&[key(servers), key(NAME)])
        .is_some_and(|e| is_our_server(program(e)));
    if !ours {
        return Vec::new();
    }
    doc.remove(&[key(servers), key(NAME)]);
    if doc
        .get(&[key(servers)])
        .is_some_and(Json::is_empty_container)
    {
        doc.remove(&[key(servers)]);
    }
    vec![removed()]
}

/// The changes to our server entry, as every client's config says them.
pub(crate) fn added(line: &str) -> Change {
    Change::new(
        Verb::Register,
        format!("the MCP server `{NAME}` (`{line}`)"),
    )
}

pub(crate) fn updated(line: &str) -> Change {
    Change::new(Verb::Update, format!("the MCP server `{NAME}` to `{line}`"))
}

pub(crate) fn replaced_reference(was: &str) -> Change {
    Change::new(
        Verb::Replace,
        format!("the TypeScript rutter MCP server `{was}` with git-rutter's"),
    )
}

/// The TypeScript reference's server registered under another name, removed beside ours.
pub(crate) fn removed_reference(name: &str, was: &str) -> Change {
    Change::new(
        Verb::Remove,
        format!("the TypeScript rutter MCP server `{name}` (`{was}`)"),
    )
}

pub(crate) fn removed() -> Change {
    Change::new(Verb::Remove, format!("the MCP server `{NAME}`"))
}

/// Whether `doc[servers][NAME]` is our server running `bin`.
pub(crate) fn registered(doc: &Json, servers: &str, bin: &str) -> bool {
    doc.get(servers)
        .and_then(|l| l.get(NAME))
        .is_some_and(|e| program(e) == bin)
}

#[cfg(test)]
mod tests {
    use super::super::json::parse;
    use super::*;

    fn fields(bin: &str) -> Vec<(&'static str, Json)> {
        vec![
            ("command", Json::str(bin)),
            ("args", Json::Array(vec![Json::str("mcp")])),
            (
                "env",
                Json::Object(vec![(VAULT_ENV.into(), Json::str("/v"))]),
            ),
        ]
    }

    #[test]
    fn registers_updates_and_removes_only_ours() {
        let before = r#"{"mcpServers": {"other": {"command": "x"}}}"#;
        let mut doc = Doc::new(parse(before).unwrap());
        assert_eq!(
            set_server(&mut doc, "mcpServers", fields("/a/git-rutter"))
                .unwrap()
                .len(),
            1
        );
        assert!(set_server(&mut doc, "mcpServers", fields("/a/git-rutter"))
            .unwrap()
            .is_empty());
        assert!(registered(&doc.json, "mcpServers", "/a/git-rutter"));
        let c = set_server(&mut doc, "mcpServers", fields("/b/git-rutter")).unwrap();
        assert!(c[0].done().starts_with("updated"), "{c:?}");
        assert_eq!(remove_server(&mut doc, "mcpServers").len(), 1);
        assert_eq!(doc.json, parse(before).unwrap());
        let mut empty = Doc::new(Json::object());
        set_server(&mut empty, "mcpServers", fields("/a/git-rutter")).unwrap();
        remove_server(&mut empty, "mcpServers");
        assert_eq!(empty.json, Json::object());
    }

    #[test]
    fn a_command_array_is_a_program_and_its_arguments() {
        let fields = vec![
            ("type", Json::str("local")),
            (
                "command",
                Json::Array(vec![Json::str("/a b/git-rutter"), Json::str("mcp")]),
            ),
        ];
        let mut doc = Doc::new(parse(r#"{"mcp": {"docs": {"type": "remote"}}}"#).unwrap());
        let c = set_server(&mut doc, "mcp", fields.clone()).unwrap();
        assert_eq!(
            c.iter().map(Change::done).collect::<Vec<_>>(),
            ["registered the MCP server `rutter` (`'/a b/git-rutter' mcp`)"]
        );
        assert!(set_server(&mut doc, "mcp", fields).unwrap().is_empty());
        assert!(registered(&doc.json, "mcp", "/a b/git-rutter"));
        assert_eq!(remove_server(&mut doc, "mcp").len(), 1);
        let foreign = r#"{"mcp": {"rutter": {"command": ["/opt/other", "mcp"]}}}"#;
        let mut doc = Doc::new(parse(foreign).unwrap());
        assert!(set_server(&mut doc, "mcp", vec![("command", Json::Array(vec![]))]).is_err());
        assert!(remove_server(&mut doc, "mcp").is_empty());
    }

    #[test]
    fn the_reference_server_is_replaced_and_foreign_ones_refused() {
        let mut doc = Doc::new(parse(r#"{"mcpServers": {"rutter": {"command": "npx", "args": ["-y", "rutter-memory"], "env": {"X": "1"}}}}"#).unwrap());
        let c = set_server(&mut doc, "mcpServers", fields("/a/git-rutter")).unwrap();
        assert!(c[0].done().contains("TypeScript"), "{c:?}");
        assert_eq!(
            doc.json
                .get("mcpServers")
                .and_then(|l| l.get("rutter"))
                .and_then(|e| e.get("env")),
            Some(&Json::Object(vec![(VAULT_ENV.into(), Json::str("/v"))]))
        );
        let foreign = r#"{"mcpServers": {"rutter": {"command": "/opt/other-rutter"}}}"#;
        let mut doc = Doc::new(parse(foreign).unwrap());
        assert!(set_server(&mut doc, "mcpServers", fields("/a/git-rutter")).is_err());
        assert!(remove_server(&mut doc, "mcpServers").is_empty());
    }
}
