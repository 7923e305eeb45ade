//! What shell completion offers from the index: note paths and entry ids starting with what
//! was typed. Read-only and never building: a TAB must not start a first index build, so with
//! no index (or one that is not a current git-rutter index) it offers nothing.

use crate::vault::Vault;
use rusqlite::{Connection, OpenFlags};

/// The most candidates one TAB offers.
const MAX: i64 = 200;

/// Opens the vault's index read-only, if it exists, is current and is this vault's: one
/// connection, which reads the schema version and the vault it was built for first (a TAB and
/// the pre-commit hook pay for one open, not two). A name of the wrong kind there (a FIFO
/// would block the TAB or the commit for good) offers nothing.
pub(super) fn open(vault: &Vault) -> Option<Connection> {
    let (path, place) = super::locate(vault);
    let conn = super::open_db(
        &path,
        place,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .ok()?;
    conn.busy_timeout(std::time::Duration::from_millis(200))
        .ok()?;
    let (version, owner): (Option<String>, Option<String>) = conn
        .query_row(super::META_SQL, [], |r| Ok((r.get(0)?, r.get(1)?)))
        .ok()?;
    let ours = vault.root.to_string_lossy();
    (version.as_deref() == Some(super::schema::SCHEMA_VERSION) && owner.as_deref() == Some(&ours))
        .then_some(conn)
}

/// `prefix` with SQLite's GLOB wildcards escaped, then `*`.
fn glob_prefix(prefix: &str) -> String {
    let mut out = String::with_capacity(prefix.len() + 1);
    for c in prefix.chars() {
        match c {
            '*' | '?' | '[' => {
                out.push('[');
                out.push(c);
                out.push(']');
            }
            c => out.push(c),
        }
    }
    out.push('*');
    out
}

/// Whether a candidate can be offered to a shell: no control characters (a note named with an
/// escape sequence or the shell's separator is not completed, never printed raw).
fn offerable(text: &str) -> bool {
    !text.chars().any(char::is_control)
}

/// Indexed note paths starting with `prefix`, sorted.
pub fn note_paths(vault: &Vault, prefix: &str) -> Vec<String> {
    let Some(conn) = open(vault) else {
        return Vec::new();
    };
    query(
        &conn,
        "SELECT path FROM notes WHERE path GLOB ?1 ORDER BY path LIMIT ?2",
        prefix,
    )
    .into_iter()
    .map(|(p, _)| p)
    .filter(|p| offerable(p))
    .collect()
}

/// Entry ids starting with `prefix`, newest first, each with its summary.
pub fn entry_ids(vault: &Vault, prefix: &str) -> Vec<(String, String)> {
    let Some(conn) = open(vault) else {
        return Vec::new();
    };
    query(
        &conn,
        "SELECT id, json_extract(json, '$.summary') FROM entries WHERE id GLOB ?1 GROUP BY id ORDER BY id DESC LIMIT ?2",
        prefix,
    )
    .into_iter()
    .filter(|(id, _)| offerable(id))
    .collect()
}

fn query(conn: &Connection, sql: &str, prefix: &str) -> Vec<(String, String)> {
    let Ok(mut stmt) = conn.prepare(sql) else {
        return Vec::new();
    };
    let rows = stmt.query_map(rusqlite::params![glob_prefix(prefix), MAX], |r| {
        let first: String = r.get(0)?;
        let second: Option<String> = r.get(1).ok().flatten();
        Ok((first, second.unwrap_or_default()))
    });
    match rows {
        Ok(rows) => rows.filter_map(Result::ok).collect(),
        Err(_) => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_with_a_control_character_is_never_offered() {
        assert!(offerable("Notes/a b.md"));
        assert!(!offerable("Notes/\u{1b}[31mred.md"));
        assert!(!offerable("Notes/a\u{b}b.md"));
    }

    #[test]
    fn glob_wildcards_in_what_was_typed_match_themselves() {
        assert_eq!(glob_prefix("Notes/a"), "Notes/a*");
        assert_eq!(glob_prefix("a*b?[c"), "a[*]b[?][[]c*");
    }
}
