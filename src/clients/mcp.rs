//! The MCP server entry `rutter` in a client's JSON config (`mcpServers.rutter`), and the
//! `… mcp add …` lines printed for clients whose server list lives in a file the client itself
//! rewrites. Our entry is recognised by its command (`…/git-rutter`); the TypeScript reference's
//! (`rutter-memory`, `dist/stdio.js`) is replaced, saying so; anything else called `rutter` is
//! somebody else's and is refused.

use super::command::{is_our_server, is_reference_server, shell_word};
use super::json::Json;

/// The name the server is registered under.
pub const NAME: &str = "rutter";
/// The environment variable that names the vault to the server.
pub const VAULT_ENV: &str = crate::vault::VAULT_ENV;

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
pub fn set_server(
    doc: &mut Json,
    servers: &str,
    fields: Vec<(&str, Json)>,
) -> Result<Vec<String>, String> {
    let list = doc
        .entry(servers, Json::object())
        .ok_or_else(|| format!("`{servers}` is not an object"))?;
    let mut changes = Vec::new();
    let existing = list.get(NAME).cloned();
    let mut entry = match &existing {
        None => Json::object(),
        Some(e) => {
            let line = command_line(e);
            let command = e.get("command").and_then(Json::as_str).unwrap_or_default();
            if is_reference_server(&line) {
                changes.push(format!(
                    "replaced the TypeScript rutter MCP server `{line}` with git-rutter's"
                ));
                Json::object()
            } else if is_our_server(command) {
                e.clone()
            } else {
                return Err(format!(
                    "`{servers}.{NAME}` runs `{line}`, which is not git-rutter; rename or remove \
                     that entry"
                ));
            }
        }
    };
    for (k, v) in fields {
        match (k, v) {
            ("env", Json::Object(vars)) => {
                let env = entry
                    .entry("env", Json::object())
                    .ok_or("`env` is not an object")?;
                for (name, value) in vars {
                    env.set(&name, value);
                }
            }
            (k, v) => {
                entry.set(k, v);
            }
        }
    }
    if existing.as_ref() != Some(&entry) {
        if changes.is_empty() {
            changes.push(match existing {
                None => format!(
                    "registered the MCP server `{NAME}` (`{}`)",
                    command_line(&entry)
                ),
                Some(_) => format!(
                    "updated the MCP server `{NAME}` to `{}`",
                    command_line(&entry)
                ),
            });
        }
        list.set(NAME, entry);
    }
    Ok(changes)
}

/// Removes our server entry (never another's), and `servers` when that leaves it empty.
pub fn remove_server(doc: &mut Json, servers: &str) -> Vec<String> {
    let Some(list) = doc.get_mut(servers) else {
        return Vec::new();
    };
    let ours = list
        .get(NAME)
        .and_then(|e| e.get("command"))
        .and_then(Json::as_str)
        .is_some_and(is_our_server);
    if !ours {
        return Vec::new();
    }
    list.remove(NAME);
    if list.is_empty_container() {
        doc.remove(servers);
    }
    vec![format!("removed the MCP server `{NAME}`")]
}

/// Whether `doc[servers][NAME]` is our server running `bin`.
pub fn registered(doc: &Json, servers: &str, bin: &str) -> bool {
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
        let mut doc = parse(before).unwrap();
        assert_eq!(
            set_server(&mut doc, "mcpServers", fields("/a/git-rutter"))
                .unwrap()
                .len(),
            1
        );
        assert!(set_server(&mut doc, "mcpServers", fields("/a/git-rutter"))
            .unwrap()
            .is_empty());
        assert!(registered(&doc, "mcpServers", "/a/git-rutter"));
        let c = set_server(&mut doc, "mcpServers", fields("/b/git-rutter")).unwrap();
        assert!(c[0].starts_with("updated"), "{c:?}");
        assert_eq!(remove_server(&mut doc, "mcpServers").len(), 1);
        assert_eq!(doc, parse(before).unwrap());
        let mut empty = Json::object();
        set_server(&mut empty, "mcpServers", fields("/a/git-rutter")).unwrap();
        remove_server(&mut empty, "mcpServers");
        assert_eq!(empty, Json::object());
    }

    #[test]
    fn the_reference_server_is_replaced_and_foreign_ones_refused() {
        let mut doc = parse(r#"{"mcpServers": {"rutter": {"command": "npx", "args": ["-y", "rutter-memory"], "env": {"X": "1"}}}}"#).unwrap();
        let c = set_server(&mut doc, "mcpServers", fields("/a/git-rutter")).unwrap();
        assert!(c[0].contains("TypeScript"), "{c:?}");
        assert_eq!(
            doc.get("mcpServers")
                .and_then(|l| l.get("rutter"))
                .and_then(|e| e.get("env")),
            Some(&Json::Object(vec![(VAULT_ENV.into(), Json::str("/v"))]))
        );
        let mut doc =
            parse(r#"{"mcpServers": {"rutter": {"command": "/opt/other-rutter"}}}"#).unwrap();
        assert!(set_server(&mut doc, "mcpServers", fields("/a/git-rutter")).is_err());
        assert!(remove_server(&mut doc, "mcpServers").is_empty());
    }
}
