//! Edits of a JSON config that leave every byte we did not change where it was. An edit is a
//! list of [`Op`]s (set a member, append an element, remove one), recorded by [`Doc`] while it
//! changes the value, then replayed on the file's text: each op splices only the span it
//! touches, and new values are laid out like their neighbours (indent, one line or many). So a
//! hand-formatted file keeps its formatting, and uninstall, removing exactly what install
//! appended, gives the original bytes back. When a replay does not reproduce the value (a file
//! this scanner reads differently), the document is printed whole instead.

use super::json::{self, Json, Layout};

/// A step of a path into a document.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Seg {
    Key(String),
    Idx(usize),
}

/// A path step naming an object member.
pub(crate) fn key(k: &str) -> Seg {
    Seg::Key(k.to_string())
}

/// One change to a document.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Op {
    /// Sets member `key` of the object at `path` (in place when present, else appended).
    Set {
        path: Vec<Seg>,
        key: String,
        value: Json,
    },
    /// Appends `value` to the array at `path`.
    Push { path: Vec<Seg>, value: Json },
    /// Removes the member or element at `path`.
    Remove { path: Vec<Seg> },
}

/// The value at `path`.
pub(crate) fn at<'a>(v: &'a Json, path: &[Seg]) -> Option<&'a Json> {
    path.iter().try_fold(v, |v, s| match s {
        Seg::Key(k) => v.get(k),
        Seg::Idx(i) => v.as_array()?.get(*i),
    })
}

fn at_mut<'a>(v: &'a mut Json, path: &[Seg]) -> Option<&'a mut Json> {
    path.iter().try_fold(v, |v, s| match s {
        Seg::Key(k) => v.get_mut(k),
        Seg::Idx(i) => v.as_array_mut()?.get_mut(*i),
    })
}

/// A document being edited: its value, and the ops that made it from the original.
#[derive(Debug, Clone)]
pub(crate) struct Doc {
    pub json: Json,
    pub ops: Vec<Op>,
}

impl Doc {
    pub(crate) fn new(json: Json) -> Doc {
        Doc {
            json,
            ops: Vec::new(),
        }
    }

    pub(crate) fn get(&self, path: &[Seg]) -> Option<&Json> {
        at(&self.json, path)
    }

    /// Sets `key` in the object at `path` unless it already holds `value`; `false` when there
    /// is no object there.
    pub(crate) fn set(&mut self, path: &[Seg], key: &str, value: Json) -> bool {
        let Some(obj) = at_mut(&mut self.json, path).filter(|o| o.is_object()) else {
            return false;
        };
        if obj.get(key) != Some(&value) {
            obj.set(key, value.clone());
            self.ops.push(Op::Set {
                path: path.to_vec(),
                key: key.to_string(),
                value,
            });
        }
        true
    }

    /// Appends to the array at `path`; `false` when there is no array there.
    pub(crate) fn push(&mut self, path: &[Seg], value: Json) -> bool {
        let Some(items) = at_mut(&mut self.json, path).and_then(Json::as_array_mut) else {
            return false;
        };
        items.push(value.clone());
        self.ops.push(Op::Push {
            path: path.to_vec(),
            value,
        });
        true
    }

    /// Removes the member or element at `path`, if it is there.
    pub(crate) fn remove(&mut self, path: &[Seg]) {
        let Some((last, parent)) = path.split_last() else {
            return;
        };
        let removed = match (at_mut(&mut self.json, parent), last) {
            (Some(Json::Object(kv)), Seg::Key(k)) => match kv.iter().rposition(|(x, _)| x == k) {
                Some(i) => {
                    kv.remove(i);
                    true
                }
                None => false,
            },
            (Some(Json::Array(items)), Seg::Idx(i)) if *i < items.len() => {
                items.remove(*i);
                true
            }
            _ => false,
        };
        if removed {
            self.ops.push(Op::Remove {
                path: path.to_vec(),
            });
        }
    }
}

/// The text of `original` with `ops` applied in place, checked against `expected`; `None` when
/// an op could not be placed or the result does not read back as `expected`.
pub(crate) fn replay(original: &str, ops: &[Op], expected: &Json) -> Option<String> {
    let layout = Layout::of(original);
    let mut text = original.to_string();
    for op in ops {
        text = apply(&text, op, &layout)?;
    }
    (json::parse(&text).ok()? == *expected).then_some(text)
}

/// A parsed value's position in the text.
#[derive(Debug)]
struct Node {
    start: usize,
    end: usize,
    kind: Kind,
}

#[derive(Debug)]
enum Kind {
    Scalar,
    Array(Vec<Node>),
    /// Members: key, the key's start and end, the value.
    Object(Vec<(String, usize, usize, Node)>),
}

/// A scanner for text serde_json has already accepted: it finds where each value lies.
struct Scanner<'a> {
    s: &'a [u8],
    pos: usize,
}

impl Scanner<'_> {
    fn ws(&mut self) {
        while self.pos < self.s.len() && self.s[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    fn value(&mut self) -> Option<Node> {
        self.ws();
        let start = self.pos;
        let kind = match *self.s.get(self.pos)? {
            b'{' => {
                self.pos += 1;
                let mut members = Vec::new();
                loop {
                    self.ws();
                    match *self.s.get(self.pos)? {
                        b'}' => break,
                        b',' => self.pos += 1,
                        _ => {
                            let key_start = self.pos;
                            self.string()?;
                            let key_end = self.pos;
                            let key: String =
                                serde_json::from_slice(&self.s[key_start..key_end]).ok()?;
                            self.ws();
                            (self.s.get(self.pos) == Some(&b':')).then_some(())?;
                            self.pos += 1;
                            members.push((key, key_start, key_end, self.value()?));
                        }
                    }
                }
                self.pos += 1;
                Kind::Object(members)
            }
            b'[' => {
                self.pos += 1;
                let mut items = Vec::new();
                loop {
                    self.ws();
                    match *self.s.get(self.pos)? {
                        b']' => break,
                        b',' => self.pos += 1,
                        _ => items.push(self.value()?),
                    }
                }
                self.pos += 1;
                Kind::Array(items)
            }
            b'"' => {
                self.string()?;
                Kind::Scalar
            }
            _ => {
                while self.pos < self.s.len() && !b",]} \t\r\n".contains(&self.s[self.pos]) {
                    self.pos += 1;
                }
                Kind::Scalar
            }
        };
        Some(Node {
            start,
            end: self.pos,
            kind,
        })
    }

    fn string(&mut self) -> Option<()> {
        (self.s.get(self.pos) == Some(&b'"')).then_some(())?;
        self.pos += 1;
        loop {
            match *self.s.get(self.pos)? {
                b'\\' => self.pos += 2,
                b'"' => {
                    self.pos += 1;
                    return Some(());
                }
                _ => self.pos += 1,
            }
        }
    }
}

/// The node at `path`.
fn find<'a>(root: &'a Node, path: &[Seg]) -> Option<&'a Node> {
    path.iter().try_fold(root, |n, s| match (&n.kind, s) {
        (Kind::Object(m), Seg::Key(k)) => m.iter().rev().find(|(x, ..)| x == k).map(|(.., v)| v),
        (Kind::Array(items), Seg::Idx(i)) => items.get(*i),
        _ => None,
    })
}

/// The whitespace that starts the line holding byte `p`.
fn line_indent(text: &str, p: usize) -> &str {
    let line = text[..p].rfind('\n').map_or(0, |i| i + 1);
    let rest = &text[line..];
    &rest[..rest.len() - rest.trim_start_matches([' ', '\t']).len()]
}

/// `value` as text for a place whose line is indented by `indent`: over several lines when
/// `multiline` and the file has an indent, else on one line.
fn render(value: &Json, layout: &Layout, indent: &str, multiline: bool) -> String {
    let flat = Layout {
        indent: layout.indent.clone().filter(|_| multiline),
        final_newline: false,
    };
    json::print(value, &flat).replace('\n', &format!("\n{indent}"))
}

/// Applies one op to the text.
fn apply(text: &str, op: &Op, layout: &Layout) -> Option<String> {
    let root = Scanner {
        s: text.as_bytes(),
        pos: 0,
    }
    .value()?;
    let splice =
        |from: usize, to: usize, with: &str| format!("{}{with}{}", &text[..from], &text[to..]);
    match op {
        Op::Set { path, key, value } => {
            let obj = find(&root, path)?;
            let Kind::Object(members) = &obj.kind else {
                return None;
            };
            if let Some((.., v)) = members.iter().rev().find(|(k, ..)| k == key) {
                let multiline = text[v.start..v.end].contains('\n');
                let new = render(value, layout, line_indent(text, v.start), multiline);
                return Some(splice(v.start, v.end, &new));
            }
            let name = serde_json::to_string(key).ok()?;
            let items: Vec<(usize, usize)> =
                members.iter().map(|(_, ks, _, v)| (*ks, v.end)).collect();
            let colon = members
                .last()
                .map_or(": ", |(_, _, ke, v)| &text[*ke..v.start]);
            append(text, obj, &items, layout, |indent, multiline| {
                format!("{name}{colon}{}", render(value, layout, indent, multiline))
            })
        }
        Op::Push { path, value } => {
            let arr = find(&root, path)?;
            let Kind::Array(items) = &arr.kind else {
                return None;
            };
            let items: Vec<(usize, usize)> = items.iter().map(|n| (n.start, n.end)).collect();
            append(text, arr, &items, layout, |indent, multiline| {
                render(value, layout, indent, multiline)
            })
        }
        Op::Remove { path } => {
            let (last, parent) = path.split_last()?;
            let container = find(&root, parent)?;
            let items: Vec<(usize, usize)> = match &container.kind {
                Kind::Object(m) => m.iter().map(|(_, ks, _, v)| (*ks, v.end)).collect(),
                Kind::Array(a) => a.iter().map(|n| (n.start, n.end)).collect(),
                Kind::Scalar => return None,
            };
            let i = match (&container.kind, last) {
                (Kind::Object(m), Seg::Key(k)) => m.iter().rposition(|(x, ..)| x == k)?,
                (Kind::Array(_), Seg::Idx(i)) => *i,
                _ => return None,
            };
            let (from, to) = match (items.len(), i) {
                (1, 0) => (container.start + 1, container.end - 1),
                (n, i) if i + 1 < n => (items[i].0, items[i + 1].0),
                (_, i) if i > 0 => (items[i - 1].1, items[i].1),
                _ => return None,
            };
            Some(splice(from, to, ""))
        }
    }
}

/// Appends an item (made by `item(indent, multiline)`) to a container whose items span
/// `items` (start, end), with the separator the container already uses.
fn append(
    text: &str,
    container: &Node,
    items: &[(usize, usize)],
    layout: &Layout,
    item: impl Fn(&str, bool) -> String,
) -> Option<String> {
    let open = container.start + 1;
    let close = container.end - 1;
    let Some(&(last_start, last_end)) = items.last() else {
        // An empty container opens up as the layout says.
        let inner = match &layout.indent {
            Some(unit) => {
                let base = line_indent(text, container.start);
                let indent = format!("{base}{unit}");
                format!("\n{indent}{}\n{base}", item(&indent, true))
            }
            None => item("", false),
        };
        return Some(format!("{}{inner}{}", &text[..open], &text[close..]));
    };
    let sep_from = match items.len() {
        1 => open,
        n => text[items[n - 2].1..last_start]
            .find(',')
            .map(|c| items[n - 2].1 + c + 1)?,
    };
    let sep = &text[sep_from..last_start];
    let multiline = text[container.start..container.end].contains('\n');
    let new = item(line_indent(text, last_start), multiline);
    Some(format!(
        "{},{sep}{new}{}",
        &text[..last_end],
        &text[last_end..]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn edited(text: &str, edit: impl FnOnce(&mut Doc)) -> (String, Doc) {
        let mut doc = Doc::new(json::parse(text).unwrap());
        edit(&mut doc);
        let out = replay(text, &doc.ops, &doc.json).expect("replayed");
        (out, doc)
    }

    #[test]
    fn appends_follow_the_neighbours_and_removals_give_the_bytes_back() {
        let text = "{\n    \"model\": \"opus\",\n    \"hooks\": {\n        \"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"say\"}]}]\n    }\n}\n";
        let group = json::parse(r#"{"hooks": [{"type": "command", "command": "x"}]}"#).unwrap();
        let (once, _) = edited(text, |d| {
            assert!(d.push(&[key("hooks"), key("Stop")], group.clone()));
        });
        assert_eq!(
            once,
            "{\n    \"model\": \"opus\",\n    \"hooks\": {\n        \"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"say\"}]},{\"hooks\":[{\"type\":\"command\",\"command\":\"x\"}]}]\n    }\n}\n"
        );
        let (back, _) = edited(&once, |d| {
            d.remove(&[key("hooks"), key("Stop"), Seg::Idx(1)])
        });
        assert_eq!(back, text);
    }

    #[test]
    fn members_are_added_set_and_removed_in_place() {
        let text = "{\"a\":1,\"b\":[]}";
        let (t, _) = edited(text, |d| {
            d.set(&[], "c", Json::str("x"));
            d.push(&[key("b")], Json::Bool(true));
            d.set(&[], "a", Json::Number(2.into()));
        });
        assert_eq!(t, "{\"a\":2,\"b\":[true],\"c\":\"x\"}");
        let (t2, _) = edited(&t, |d| {
            d.remove(&[key("c")]);
            d.remove(&[key("b"), Seg::Idx(0)]);
        });
        assert_eq!(t2, "{\"a\":2,\"b\":[]}");
        let (t3, _) = edited("{\n  \"x\": {}\n}\n", |d| {
            d.set(&[key("x")], "k", json::parse("{\"y\": [1]}").unwrap());
        });
        assert_eq!(
            t3,
            "{\n  \"x\": {\n    \"k\": {\n      \"y\": [\n        1\n      ]\n    }\n  }\n}\n"
        );
        let (t4, _) = edited(&t3, |d| d.remove(&[key("x"), key("k")]));
        assert_eq!(t4, "{\n  \"x\": {}\n}\n");
    }

    fn member_text() -> impl Strategy<Value = (String, Json)> {
        // Members in assorted layouts: spacing around colons and commas, nested arrays.
        (
            proptest::collection::vec(("[a-z]{1,4}", 0..3i32, "( |\n  |)", "(: |:)"), 0..4),
            any::<bool>(),
        )
            .prop_map(|(members, nl)| {
                let body: Vec<String> = members
                    .iter()
                    .map(|(k, n, ws, colon)| {
                        format!(
                            "{ws}\"{k}\"{colon}[{}]",
                            (0..*n)
                                .map(|i| i.to_string())
                                .collect::<Vec<_>>()
                                .join(", ")
                        )
                    })
                    .collect();
                let text = format!(
                    "{{{}{}}}{}",
                    body.join(","),
                    if nl { "\n" } else { "" },
                    if nl { "\n" } else { "" }
                );
                let v = json::parse(&text).unwrap();
                (text, v)
            })
    }

    proptest! {
        #[test]
        fn install_then_uninstall_gives_the_original_bytes((text, _) in member_text(), k in "[A-Z]{1,3}") {
            let added = json::parse(r#"{"hooks": [{"type": "command", "command": "c"}]}"#).unwrap();
            let (once, doc) = edited(&text, |d| { d.set(&[], &k, added.clone()); });
            prop_assert_eq!(json::parse(&once).unwrap(), doc.json);
            let (back, _) = edited(&once, |d| d.remove(&[key(&k)]));
            if json::parse(&text).unwrap().is_empty_container() {
                prop_assert_eq!(json::parse(&back).unwrap(), json::parse(&text).unwrap());
            } else {
                prop_assert_eq!(back, text);
            }
        }
    }
}
