//! Stop-hook entries inside a client's JSON config: where each client keeps its list of hook
//! handlers ([`Shape`]), and the edits `install-hook` makes there. Install keeps exactly one of
//! our handlers (a stale path or a TypeScript-reference handler is rewritten in place, further
//! copies removed); uninstall removes ours and the containers that held only them. Other
//! handlers, and every other key, are left as they are.

use super::command::{classify, Kind};
use super::json::Json;
use super::jsonedit::{at, key, Doc, Seg};
use super::EditError;

/// Where a client keeps its Stop handlers.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Shape {
    /// `hooks.<event>[] = {matcher?, hooks: [{type, command}]}`: Claude Code, Codex, Grok, Muse.
    Grouped { event: &'static str },
    /// `version: 1`, `hooks.<event>[] = {type, <field>}`: Copilot CLI (`bash`).
    Flat {
        event: &'static str,
        field: &'static str,
    },
    /// `<name>.<event>[] = {type, command}`, one object per named hook: agy. Ours is `name`.
    Named {
        name: &'static str,
        event: &'static str,
    },
    /// `hooks.<event>[] = {command}`, no `type` and no `version`: Windsurf's Cascade hooks.
    Plain { event: &'static str },
}

/// The clients whose session-start hook git-rutter registers (tests/fixtures/session_start/
/// names the documentation each output shape was built against).
pub(crate) const START_CLIENTS: [&str; 4] = ["claude", "codex", "gemini", "cursor"];

/// Where `client` keeps the session-start handler that prints the brief (spec/context.md), if
/// git-rutter registers one: Claude Code, Codex and Gemini CLI read
/// `hookSpecificOutput.additionalContext` from a `SessionStart` group with no matcher (every
/// source: startup, resume, clear, compact); Cursor reads `additional_context` from a flat
/// `sessionStart` list. Copilot CLI ignores a sessionStart hook's output; the other clients have
/// no such hook.
pub(crate) fn start_shape(client: &str) -> Option<Shape> {
    match client {
        "claude" | "codex" | "gemini" => Some(Shape::Grouped {
            event: "SessionStart",
        }),
        "cursor" => Some(Shape::Flat {
            event: "sessionStart",
            field: "command",
        }),
        _ => None,
    }
}

/// One handler found in the document.
#[derive(Debug, Clone)]
struct Slot {
    list: Vec<Seg>,
    index: usize,
    kind: Kind,
    command: String,
}

impl Shape {
    /// The field holding the command line.
    fn field(self) -> &'static str {
        match self {
            Shape::Flat { field, .. } => field,
            _ => "command",
        }
    }

    /// Paths of the arrays of handler objects.
    fn lists(self, doc: &Json) -> Vec<Vec<Seg>> {
        match self {
            Shape::Grouped { event } => {
                let groups = at(doc, &[key("hooks"), key(event)]).and_then(Json::as_array);
                (0..groups.map_or(0, Vec::len))
                    .map(|i| vec![key("hooks"), key(event), Seg::Idx(i), key("hooks")])
                    .collect()
            }
            Shape::Flat { event, .. } | Shape::Plain { event } => {
                vec![vec![key("hooks"), key(event)]]
            }
            Shape::Named { event, .. } => match doc {
                Json::Object(kv) => kv.iter().map(|(k, _)| vec![key(k), key(event)]).collect(),
                _ => Vec::new(),
            },
        }
    }

    /// Every handler, classified.
    fn slots(self, doc: &Json) -> Vec<Slot> {
        let mut out = Vec::new();
        for list in self.lists(doc) {
            let Some(items) = at(doc, &list).and_then(Json::as_array) else {
                continue;
            };
            for (index, h) in items.iter().enumerate() {
                let command = h
                    .get(self.field())
                    .or_else(|| h.get("command"))
                    .and_then(Json::as_str)
                    .unwrap_or_default()
                    .to_string();
                out.push(Slot {
                    list: list.clone(),
                    index,
                    kind: classify(&command),
                    command,
                });
            }
        }
        out
    }
}

/// What a hook edit did, for the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Change {
    Added(String),
    Updated { from: String, to: String },
    ReplacedReference { from: String, to: String },
    RemovedDuplicate(String),
    RemovedReference(String),
    Removed(String),
}

impl Change {
    /// The change as a report says it, done or planned.
    pub(crate) fn said(&self) -> super::change::Change {
        use super::change::{Change as Said, Verb};
        match self {
            Change::Added(c) => Said::new(Verb::Register, format!("the {} `{c}`", event(c))),
            Change::Updated { from, to } => {
                Said::new(Verb::Update, format!("the hook from `{from}` to `{to}`"))
            }
            Change::ReplacedReference { from, to } => Said::new(
                Verb::Replace,
                format!(
                    "the TypeScript rutter hook `{from}` with `{to}` (its writer rewrites whole \
                     day files and would drop the lines git-rutter appends)"
                ),
            ),
            Change::RemovedDuplicate(c) => {
                Said::new(Verb::Remove, format!("a second copy of the hook `{c}`"))
            }
            Change::RemovedReference(c) => Said::new(
                Verb::Remove,
                format!("the TypeScript rutter hook `{c}` (git-rutter's hook replaces it)"),
            ),
            Change::Removed(c) => Said::new(Verb::Remove, format!("the {} `{c}`", event(c))),
        }
    }
}

/// Which of our hooks a command is, as a change message names it.
fn event(command: &str) -> &'static str {
    match super::command::is_start(command) {
        true => "SessionStart hook",
        false => "Stop hook",
    }
}

/// The vault baked into our existing handler, if any.
pub(crate) fn existing_vault(doc: &Json, shape: Shape) -> Option<String> {
    shape.slots(doc).into_iter().find_map(|s| match s.kind {
        Kind::Ours { vault } => vault,
        _ => None,
    })
}

/// Makes `doc` hold exactly one of our handlers, running `command`. `extra` are fields a new
/// handler gets (a timeout). `Err` names the key that is not of the type a config needs.
pub(crate) fn install(
    doc: &mut Doc,
    shape: Shape,
    command: &str,
    extra: &[(&str, Json)],
) -> Result<Vec<Change>, EditError> {
    let slots = shape.slots(&doc.json);
    let keep = slots
        .iter()
        .position(|s| matches!(s.kind, Kind::Ours { .. }))
        .or_else(|| slots.iter().position(|s| s.kind == Kind::Reference));
    let mut changes = Vec::new();
    let mut drop = Vec::new();
    for (i, s) in slots.iter().enumerate() {
        match (&s.kind, Some(i) == keep) {
            (Kind::Foreign, _) => {}
            (_, true) => {
                if let Some(c) = rewrite(doc, shape, s, command) {
                    changes.push(c);
                }
            }
            (Kind::Ours { .. }, false) => {
                changes.push(Change::RemovedDuplicate(s.command.clone()));
                drop.push(s.clone());
            }
            (Kind::Reference, false) => {
                changes.push(Change::RemovedReference(s.command.clone()));
                drop.push(s.clone());
            }
        }
    }
    remove_slots(doc, shape, &drop);
    if keep.is_none() {
        add(doc, shape, command, extra)?;
        changes.push(Change::Added(command.to_string()));
    }
    Ok(changes)
}

/// Removes our handlers (and, with `reference`, the TypeScript reference's).
pub(crate) fn uninstall(doc: &mut Doc, shape: Shape, reference: bool) -> Vec<Change> {
    let drop: Vec<Slot> = shape
        .slots(&doc.json)
        .into_iter()
        .filter(|s| matches!(s.kind, Kind::Ours { .. }) || (reference && s.kind == Kind::Reference))
        .collect();
    remove_slots(doc, shape, &drop);
    drop.into_iter()
        .map(|s| Change::Removed(s.command))
        .collect()
}

/// Every handler in the document, classified, with its command (what `status` reports).
pub(crate) fn handlers(doc: &Json, shape: Shape) -> Vec<(Kind, String)> {
    shape
        .slots(doc)
        .into_iter()
        .map(|s| (s.kind, s.command))
        .collect()
}

/// Whether the document still holds a TypeScript-reference handler.
pub(crate) fn has_reference(doc: &Json, shape: Shape) -> bool {
    shape.slots(doc).iter().any(|s| s.kind == Kind::Reference)
}

/// Points the kept handler at `command`; `None` when it already does.
fn rewrite(doc: &mut Doc, shape: Shape, s: &Slot, command: &str) -> Option<Change> {
    let mut path = s.list.clone();
    path.push(Seg::Idx(s.index));
    let h = doc.get(&path)?;
    let field = match h.get(shape.field()) {
        Some(_) => shape.field(),
        None => "command",
    };
    let typed = !matches!(shape, Shape::Plain { .. });
    if s.command == command && (!typed || h.get("type").and_then(Json::as_str) == Some("command")) {
        return None;
    }
    // The user's own version of our command (an environment prefix, a redirection) is theirs.
    if matches!(s.kind, Kind::Ours { .. }) && super::command::is_customised(&s.command) {
        return None;
    }
    if typed {
        doc.set(&path, "type", Json::str("command"));
    }
    doc.set(&path, field, Json::str(command));
    Some(match s.kind {
        Kind::Reference => Change::ReplacedReference {
            from: s.command.clone(),
            to: command.to_string(),
        },
        _ => Change::Updated {
            from: s.command.clone(),
            to: command.to_string(),
        },
    })
}

/// Appends a new handler where `shape` keeps them, creating the containers it needs.
fn add(
    doc: &mut Doc,
    shape: Shape,
    command: &str,
    extra: &[(&str, Json)],
) -> Result<(), EditError> {
    let mut handler = Json::object();
    if !matches!(shape, Shape::Plain { .. }) {
        handler.set("type", Json::str("command"));
    }
    handler.set(shape.field(), Json::str(command));
    for (k, v) in extra {
        handler.set(k, v.clone());
    }
    let (outer, event, item) = match shape {
        Shape::Grouped { event } => {
            let mut group = Json::object();
            group.set("hooks", Json::Array(vec![handler]));
            ("hooks", event, group)
        }
        Shape::Flat { event, .. } => {
            if doc.get(&[key("version")]).is_none() {
                doc.set(&[], "version", Json::Number(1.into()));
            }
            ("hooks", event, handler)
        }
        Shape::Plain { event } => ("hooks", event, handler),
        Shape::Named { name, event } => (name, event, handler),
    };
    let outer_kind = doc
        .get(&[key(outer)])
        .map(|o| (o.is_object(), o.get(event).is_some()));
    match outer_kind {
        None => {
            let mut obj = Json::object();
            obj.set(event, Json::Array(vec![item]));
            doc.set(&[], outer, obj);
        }
        Some((false, _)) => return Err(EditError::WrongType(outer.to_string())),
        Some((true, false)) => {
            doc.set(&[key(outer)], event, Json::Array(vec![item]));
        }
        Some((true, true)) => {
            if !doc.push(&[key(outer), key(event)], item) {
                return Err(EditError::WrongType(format!("{outer}.{event}")));
            }
        }
    }
    Ok(())
}

/// Removes handlers, then the groups, event lists and objects they leave empty.
fn remove_slots(doc: &mut Doc, shape: Shape, drop: &[Slot]) {
    let mut sorted = drop.to_vec();
    sorted.sort_by_key(|s| std::cmp::Reverse(s.index));
    let mut emptied: Vec<Vec<Seg>> = Vec::new();
    for s in &sorted {
        let mut path = s.list.clone();
        path.push(Seg::Idx(s.index));
        doc.remove(&path);
        let empty = doc.get(&s.list).is_some_and(Json::is_empty_container);
        if empty && !emptied.contains(&s.list) {
            emptied.push(s.list.clone());
        }
    }
    match shape {
        Shape::Grouped { event } => {
            let mut groups: Vec<usize> = emptied
                .iter()
                .filter_map(|p| match p.get(2) {
                    Some(Seg::Idx(i)) => Some(*i),
                    _ => None,
                })
                .collect();
            groups.sort_unstable_by(|a, b| b.cmp(a));
            for g in groups {
                doc.remove(&[key("hooks"), key(event), Seg::Idx(g)]);
            }
            prune(doc, &[key("hooks"), key(event)], !emptied.is_empty());
        }
        Shape::Flat { event, .. } | Shape::Plain { event } => {
            prune(doc, &[key("hooks"), key(event)], !emptied.is_empty())
        }
        Shape::Named { event, .. } => {
            for p in emptied {
                if let [Seg::Key(name), _] = p.as_slice() {
                    prune(doc, &[key(name), key(event)], true);
                }
            }
        }
    }
}

/// Removes the container at `path` when it is empty, then each parent it leaves empty.
fn prune(doc: &mut Doc, path: &[Seg], touched: bool) {
    if !touched {
        return;
    }
    for depth in (1..=path.len()).rev() {
        if !doc
            .get(&path[..depth])
            .is_some_and(Json::is_empty_container)
        {
            return;
        }
        doc.remove(&path[..depth]);
    }
}

#[cfg(test)]
mod tests {
    use super::super::json::{parse, print, Layout};
    use super::*;

    const CLAUDE: Shape = Shape::Grouped { event: "Stop" };
    const COPILOT: Shape = Shape::Flat {
        event: "agentStop",
        field: "bash",
    };
    const AGY: Shape = Shape::Named {
        name: "git-rutter",
        event: "Stop",
    };
    const CMD: &str = "/bin/git-rutter capture --client claude";

    fn text(doc: &Doc) -> String {
        print(&doc.json, &Layout::default())
    }

    fn doc(text: &str) -> Doc {
        Doc::new(parse(text).unwrap())
    }

    #[test]
    fn install_twice_keeps_one_handler_and_foreign_ones() {
        let before = r#"{"model": "x", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "afplay done.wav"}]}]}}"#;
        let mut doc = doc(before);
        let c = install(&mut doc, CLAUDE, CMD, &[]).unwrap();
        assert_eq!(c, vec![Change::Added(CMD.into())]);
        let once = text(&doc);
        assert!(install(&mut doc, CLAUDE, CMD, &[]).unwrap().is_empty());
        assert_eq!(text(&doc), once);
        assert_eq!(shape_count(&doc.json, CLAUDE), 1);
        let removed = uninstall(&mut doc, CLAUDE, false);
        assert_eq!(removed, vec![Change::Removed(CMD.into())]);
        assert_eq!(doc.json, parse(before).unwrap());
    }

    fn shape_count(doc: &Json, shape: Shape) -> usize {
        shape
            .slots(doc)
            .iter()
            .filter(|s| matches!(s.kind, Kind::Ours { .. }))
            .count()
    }

    #[test]
    fn stale_paths_and_reference_hooks_are_rewritten_in_place() {
        let mut doc = doc(r#"{"hooks": {"Stop": [
            {"hooks": [{"type": "command", "command": "/r/hooks/librarian-stop.sh"}]},
            {"matcher": "", "hooks": [{"type": "command", "command": "/old/git-rutter capture --client claude", "timeout": 9}]},
            {"hooks": [{"type": "command", "command": "git-rutter capture"}]}
        ]}}"#);
        let c = install(&mut doc, CLAUDE, CMD, &[]).unwrap();
        assert_eq!(c.len(), 3, "{c:?}");
        assert!(matches!(c[0], Change::RemovedReference(_)));
        assert!(matches!(c[1], Change::Updated { .. }));
        assert!(matches!(c[2], Change::RemovedDuplicate(_)));
        assert_eq!(
            doc.json,
            parse(&format!(r#"{{"hooks": {{"Stop": [{{"matcher": "", "hooks": [{{"type": "command", "command": "{CMD}", "timeout": 9}}]}}]}}}}"#)).unwrap()
        );
    }

    #[test]
    fn a_lone_reference_hook_becomes_ours() {
        let mut doc = doc(
            r#"{"version": 1, "hooks": {"agentStop": [{"type": "command", "bash": "/r/librarian-stop.sh"}]}}"#,
        );
        let c = install(&mut doc, COPILOT, CMD, &[]).unwrap();
        assert!(matches!(c[..], [Change::ReplacedReference { .. }]));
        assert_eq!(
            at(
                &doc.json,
                &[key("hooks"), key("agentStop"), Seg::Idx(0), key("bash")]
            ),
            Some(&Json::str(CMD))
        );
        uninstall(&mut doc, COPILOT, false);
        assert_eq!(text(&doc), "{\n  \"version\": 1\n}\n");
    }

    #[test]
    fn named_hooks_get_their_own_name_and_leave_no_trace() {
        let before = r#"{"lint": {"Stop": [{"command": "make lint"}]}}"#;
        let mut doc = doc(before);
        install(&mut doc, AGY, CMD, &[("timeout", Json::Number(30.into()))]).unwrap();
        assert!(text(&doc).contains(
            "\"git-rutter\": {\n    \"Stop\": [\n      {\n        \"type\": \"command\""
        ));
        assert_eq!(existing_vault(&doc.json, AGY), None);
        uninstall(&mut doc, AGY, false);
        assert_eq!(doc.json, parse(before).unwrap());
    }

    #[test]
    fn plain_hooks_have_no_type_and_no_version() {
        const WINDSURF: Shape = Shape::Plain {
            event: "post_cascade_response",
        };
        let before =
            r#"{"hooks": {"post_write_code": [{"command": "lint", "show_output": true}]}}"#;
        let mut doc = doc(before);
        install(&mut doc, WINDSURF, CMD, &[]).unwrap();
        assert_eq!(
            at(&doc.json, &[key("hooks"), key("post_cascade_response")]),
            Some(&parse(&format!(r#"[{{"command": "{CMD}"}}]"#)).unwrap())
        );
        assert!(install(&mut doc, WINDSURF, CMD, &[]).unwrap().is_empty());
        uninstall(&mut doc, WINDSURF, false);
        assert_eq!(doc.json, parse(before).unwrap());
    }

    #[test]
    fn wrong_types_are_refused_and_the_vault_is_read_back() {
        let mut doc = doc(r#"{"hooks": "none"}"#);
        assert!(install(&mut doc, CLAUDE, CMD, &[]).is_err());
        let mut doc = Doc::new(Json::object());
        install(
            &mut doc,
            CLAUDE,
            "git-rutter capture --client muse --vault /n",
            &[],
        )
        .unwrap();
        assert_eq!(existing_vault(&doc.json, CLAUDE).as_deref(), Some("/n"));
        uninstall(&mut doc, CLAUDE, false);
        assert_eq!(doc.json, Json::object());
    }
}
