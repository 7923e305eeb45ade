//! The MCP server entry `rutter` in a client's JSON config (`mcpServers.rutter`), and the
//! `… mcp add …` lines printed for clients whose server list lives in a file the client itself
//! rewrites. Our entry is recognised by its command (`…/git-rutter`); the TypeScript reference's
//! (`rutter-memory`, `dist/stdio.js`) is replaced, saying so; anything else called `rutter` is
//! somebody else's and is refused.

use super::command::{is_our_server, is_reference_server, shell_word};
use super::json::Json;
use super::jsonedit::{key, Doc};

/// The name the server is registered under.
pub(crate) const NAME: &str = "rutter";
/// The environment variable that names the vault to the server.
pub(crate) const VAULT_ENV: &str = crate::vault::VAULT_ENV;

/// The program and arguments of an entry, as one line.
fn command_line(entry: &Json) -> String {
    let mut words = vec![entry
        .get("command")
        .and_then(Json::as_str)
        .unwrap_or_default()
        .to_string()];
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
) -> Result<Vec<String>, String> {
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
            return Ok(vec![format!(
                "registered the MCP server `{NAME}` (`{line}`)"
            )]);
        }
        Some(l) if !l.is_object() => return Err(format!("`{servers}` is not an object")),
        Some(l) => l.get(NAME).cloned(),
    };
    let Some(entry) = existing else {
        doc.set(&[key(servers)], NAME, fresh());
        return Ok(vec![format!(
            "registered the MCP server `{NAME}` (`{line}`)"
        )]);
    };
    let was = command_line(&entry);
    if is_reference_server(&was) {
        doc.set(&[key(servers)], NAME, fresh());
        return Ok(vec![format!(
            "replaced the TypeScript rutter MCP server `{was}` with git-rutter's"
        )]);
    }
    let command = entry
        .get("command")
        .and_then(Json::as_str)
        .unwrap_or_default();
    if !is_our_server(command) || !entry.is_object() {
        return Err(format!(
            "`{servers}.{NAME}` runs `{was}`, which is not git-rutter; rename or remove that entry"
        ));
    }
    let at = [key(servers), key(NAME)];
    let before = doc.ops.len();
    for (k, v) in fields {
        match (k, v, entry.get("env")) {
            ("env", Json::Object(vars), Some(env)) if env.is_object() => {
                for (name, value) in vars {
                    doc.set(&[key(servers), key(NAME), key("env")], &name, value);
                }
            }
            (k, v, _) => {
                doc.set(&at, k, v);
            }
        }
    }
    Ok(match doc.ops.len() > before {
        true => vec![format!("updated the MCP server `{NAME}` to `{line}`")],
        false => Vec::new(),
    })
}

/// Removes our server entry (never another's), and `servers` when that leaves it empty.
pub(crate) fn remove_server(doc: &mut Doc, servers: &str) -> Vec<String> {
    let ours = doc
        .get(&[key(servers), key(NAME), key("command")])
        .and_then(Json::as_str)
        .is_some_and(is_our_server);
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
    vec![format!("removed the MCP server `{NAME}`")]
}

/// Whether `doc[servers][NAME]` is our server running `bin`.
pub(crate) fn registered(doc: &Json, servers: &str, bin: &str) -> bool {
    doc.get(servers)
        .and_then(|l| l.get(NAME))
        .and_then(|e| e.get("command"))
        .and_then(Json::as_str)
        == Some(bin)
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
        assert!(c[0].starts_with("updated"), "{c:?}");
        assert_eq!(remove_server(&mut doc, "mcpServers").len(), 1);
        assert_eq!(doc.json, parse(before).unwrap());
        let mut empty = Doc::new(Json::object());
        set_server(&mut empty, "mcpServers", fields("/a/git-rutter")).unwrap();
        remove_server(&mut empty, "mcpServers");
        assert_eq!(empty.json, Json::object());
    }

    #[test]
    fn the_reference_server_is_replaced_and_foreign_ones_refused() {
        let mut doc = Doc::new(parse(r#"{"mcpServers": {"rutter": {"command": "npx", "args": ["-y", "rutter-memory"], "env": {"X": "1"}}}}"#).unwrap());
        let c = set_server(&mut doc, "mcpServers", fields("/a/git-rutter")).unwrap();
        assert!(c[0].contains("TypeScript"), "{c:?}");
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
