//! The fallback of the `@1` reader: any YAML, read with `yaml_serde` and mapped onto the record
//! model, with the reference's validation and its error messages.

use serde_json::Map;
use yaml_serde::Value as Yaml;

use super::{valid_day, Parsed, V1Error, SCHEMA_PREFIX};
use crate::records::text::{key_string, to_json, untag};
use crate::records::Broken;
use crate::records::{Entry, NoteRef, Workspace};

type Res<T> = Result<T, Broken>;

pub(super) fn parse(fm: &str) -> Result<Parsed, V1Error> {
    let mut doc: Yaml = yaml_serde::from_str(fm).map_err(|e| V1Error::Yaml(e.to_string()))?;
    doc.apply_merge()
        .map_err(|e| V1Error::Yaml(e.to_string()))?;
    let Yaml::Mapping(top) = untag(&doc) else {
        return Err(V1Error::Schema("frontmatter is not a mapping".into()));
    };
    let field = |key: &str| top.get(key).map(untag);
    let schema = match field("schema") {
        Some(Yaml::String(s)) if s.starts_with(SCHEMA_PREFIX) => s.clone(),
        _ => return Err(schema_error("`schema` is not `session-record@…`")),
    };
    let day = match field("day") {
        Some(Yaml::String(s)) if valid_day(s) => s.clone(),
        _ => return Err(schema_error("`day` is not a YYYY-MM-DD string")),
    };
    let sessions = match field("sessions") {
        Some(Yaml::Sequence(s)) if !s.is_empty() => s,
        _ => return Err(schema_error("`sessions` is not a non-empty sequence")),
    };
    let entries = sessions
        .iter()
        .enumerate()
        .map(|(i, v)| entry(v).map_err(|m| V1Error::Schema(format!("sessions[{i}]: {m}"))))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Parsed {
        day,
        schema,
        entries,
    })
}

fn schema_error(msg: &str) -> V1Error {
    V1Error::Schema(msg.to_owned())
}

fn entry(value: &Yaml) -> Res<Entry> {
    let Yaml::Mapping(map) = untag(value) else {
        return Err("entry is not a mapping".into());
    };
    let (mut id, mut time, mut summary, mut refs) = (None, None, None, None);
    let (mut session_id, mut workspace, mut client) = (None, None, None);
    let mut extra = Map::new();
    for (k, v) in map {
        let key = key_string(k)?;
        match key.as_str() {
            "id" => id = Some(string(v, "id")?),
            "time" => time = Some(string(v, "time")?),
            "summary" => summary = Some(string(v, "summary")?),
            "session_id" => session_id = opt_string(v, "session_id")?,
            "client" => client = opt_string(v, "client")?,
            "refs" => refs = Some(note_refs(v)?),
            "workspace" => workspace = opt_workspace(v)?,
            _ => {
                extra.insert(key, to_json(v)?);
            }
        }
    }
    Ok(Entry {
        id: id.ok_or("`id` is missing")?,
        session_id,
        time: time.ok_or("`time` is missing")?,
        summary: summary.ok_or("`summary` is missing")?,
        refs: refs.ok_or("`refs` is missing")?,
        workspace,
        client,
        supersedes: None,
        extra,
    })
}

fn note_refs(value: &Yaml) -> Res<Vec<NoteRef>> {
    let Yaml::Sequence(items) = untag(value) else {
        return Err("`refs` is not a sequence".into());
    };
    items.iter().map(note_ref).collect()
}

fn note_ref(value: &Yaml) -> Res<NoteRef> {
    let Yaml::Mapping(map) = untag(value) else {
        return Err("a ref is not a mapping".into());
    };
    let (mut path, mut hash, mut blob) = (None, None, None);
    let mut extra = Map::new();
    for (k, v) in map {
        let key = key_string(k)?;
        match key.as_str() {
            "path" => path = Some(string(v, "refs[].path")?),
            "hash" => hash = Some(string(v, "refs[].hash")?),
            "blob" => blob = opt_string(v, "refs[].blob")?,
            _ => {
                extra.insert(key, to_json(v)?);
            }
        }
    }
    Ok(NoteRef {
        path: path.ok_or("`refs[].path` is missing")?,
        hash: hash.ok_or("`refs[].hash` is missing")?,
        blob,
        extra,
    })
}

fn opt_workspace(value: &Yaml) -> Res<Option<Workspace>> {
    let map = match untag(value) {
        Yaml::Null => return Ok(None),
        Yaml::Mapping(map) => map,
        _ => return Err("`workspace` is not a mapping".into()),
    };
    let (mut cwd, mut project, mut repo) = (None, None, None);
    let mut extra = Map::new();
    for (k, v) in map {
        let key = key_string(k)?;
        match key.as_str() {
            "cwd" => cwd = Some(string(v, "workspace.cwd")?),
            "project" => project = Some(string(v, "workspace.project")?),
            "repo" => repo = opt_string(v, "workspace.repo")?,
            _ => {
                extra.insert(key, to_json(v)?);
            }
        }
    }
    Ok(Some(Workspace {
        cwd: cwd.ok_or("`workspace.cwd` is missing")?,
        project: project.ok_or("`workspace.project` is missing")?,
        repo,
        extra,
    }))
}

fn string(value: &Yaml, name: &str) -> Res<String> {
    match untag(value) {
        Yaml::String(s) => Ok(s.clone()),
        _ => Err(format!("`{name}` is not a string").into()),
    }
}

/// An optional string field: null counts as absent.
fn opt_string(value: &Yaml, name: &str) -> Res<Option<String>> {
    match untag(value) {
        Yaml::Null => Ok(None),
        _ => string(value, name).map(Some),
    }
}
