//! Adds and removes servers in a config file, keeping the file's shape (bare array,
//! `servers` list or map, `mcpServers` map). Writes atomically; never drops comments silently.

use std::path::Path;

use serde_json::{Map, Value};

use super::jsonc;

/// Why a config file could not be edited; the file is left as it was.
#[derive(Debug, thiserror::Error)]
pub enum EditError {
    /// Reading or writing failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not JSON or not one of the accepted shapes.
    #[error("{path}: {message}; edit it by hand")]
    Shape {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// A server of that name already exists.
    #[error("{path}: a server named `{name}` already exists; remove it first")]
    Exists {
        /// The file.
        path: String,
        /// The name.
        name: String,
    },
}

/// Adds `entry` (an object without `name`) as server `name`; a missing file is created in the
/// `{"mcpServers": {…}}` form.
pub fn add_server(path: &Path, name: &str, entry: Map<String, Value>) -> Result<(), EditError> {
    let mut doc = match read(path)? {
        Some(v) => v,
        None => Value::Object(Map::from_iter([(
            "mcpServers".to_string(),
            Value::Object(Map::new()),
        )])),
    };
    if find(&doc, name, path)?.is_some() {
        return Err(EditError::Exists {
            path: path.display().to_string(),
            name: name.to_string(),
        });
    }
    let with_name = || {
        let mut e = Map::new();
        e.insert("name".into(), Value::String(name.to_string()));
        e.extend(entry.clone());
        Value::Object(e)
    };
    match &mut doc {
        Value::Array(items) => items.push(with_name()),
        Value::Object(top) => {
            let key = if top.contains_key("mcpServers") || !top.contains_key("servers") {
                "mcpServers"
            } else {
                "servers"
            };
            match top.entry(key).or_insert_with(|| Value::Object(Map::new())) {
                Value::Object(m) => {
                    m.insert(name.to_string(), Value::Object(entry));
                }
                Value::Array(items) => items.push(with_name()),
                _ => {
                    return Err(shape(
                        path,
                        &format!("`{key}` is neither a list nor an object"),
                    ))
                }
            }
        }
        _ => return Err(shape(path, "not a list or an object")),
    }
    write(path, &doc)
}

/// Removes server `name`; `Ok(false)` when it is not in the file.
pub fn remove_server(path: &Path, name: &str) -> Result<bool, EditError> {
    let Some(mut doc) = read(path)? else {
        return Ok(false);
    };
    let Some(loc) = find(&doc, name, path)? else {
        return Ok(false);
    };
    match (&mut doc, loc) {
        (Value::Array(items), Loc::Top(i)) => {
            items.remove(i);
        }
        (Value::Object(top), Loc::InKey(key, idx)) => match (top.get_mut(key), idx) {
            (Some(Value::Object(m)), _) => {
                m.remove(name);
            }
            (Some(Value::Array(items)), Some(i)) => {
                items.remove(i);
            }
            _ => return Ok(false),
        },
        _ => return Ok(false),
    }
    write(path, &doc)?;
    Ok(true)
}

enum Loc {
    Top(usize),
    InKey(&'static str, Option<usize>),
}

fn find(doc: &Value, name: &str, path: &Path) -> Result<Option<Loc>, EditError> {
    let in_list = |items: &[Value]| {
        items
            .iter()
            .position(|it| it.get("name").and_then(Value::as_str).map(str::trim) == Some(name))
    };
    match doc {
        Value::Array(items) => Ok(in_list(items).map(Loc::Top)),
        Value::Object(top) => {
            for key in ["mcpServers", "servers"] {
                match top.get(key) {
                    Some(Value::Object(m)) if m.contains_key(name) => {
                        return Ok(Some(Loc::InKey(key, None)))
                    }
                    Some(Value::Array(items)) => {
                        if let Some(i) = in_list(items) {
                            return Ok(Some(Loc::InKey(key, Some(i))));
                        }
                    }
                    _ => {}
                }
            }
            Ok(None)
        }
        _ => Err(shape(path, "not a list or an object")),
    }
}

fn read(path: &Path) -> Result<Option<Value>, EditError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(EditError::Io {
                path: path.display().to_string(),
                source,
            })
        }
    };
    if text.trim().is_empty() {
        return Ok(None);
    }
    let plain = jsonc::strip(&text);
    // A byte-order mark is not lost content (the rewrite leaves it out).
    if plain != text.strip_prefix('\u{feff}').unwrap_or(&text) {
        return Err(shape(
            path,
            "the file has comments or trailing commas, which rewriting it would drop",
        ));
    }
    serde_json::from_str(&plain)
        .map(Some)
        .map_err(|e| shape(path, &format!("not valid JSON ({e})")))
}

fn write(path: &Path, doc: &Value) -> Result<(), EditError> {
    let io = |source| EditError::Io {
        path: path.display().to_string(),
        source,
    };
    let text = serde_json::to_string_pretty(doc)
        .map_err(|e| shape(path, &format!("cannot serialise ({e})")))?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let tmp = path.with_extension(format!("json.tmp-{}", std::process::id()));
    std::fs::write(&tmp, format!("{text}\n")).map_err(io)?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io(e)
    })
}

fn shape(path: &Path, message: &str) -> EditError {
    EditError::Shape {
        path: path.display().to_string(),
        message: message.to_string(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use serde_json::json;

    use super::*;

    fn entry() -> Map<String, Value> {
        json!({ "command": "echo", "args": ["hi"] })
            .as_object()
            .unwrap()
            .clone()
    }

    #[test]
    fn add_creates_mcp_servers_then_remove_empties_it() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join(".agent/mcp.json");
        add_server(&p, "e", entry()).unwrap();
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        assert_eq!(v["mcpServers"]["e"]["command"], "echo");
        assert!(matches!(
            add_server(&p, "e", entry()),
            Err(EditError::Exists { .. })
        ));
        assert!(remove_server(&p, "e").unwrap());
        assert!(!remove_server(&p, "e").unwrap());
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        assert_eq!(v, json!({ "mcpServers": {} }));
    }

    #[test]
    fn keeps_the_bare_array_and_servers_list_shapes() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("a.json");
        std::fs::write(&a, r#"[ { "name": "x", "command": "x" } ]"#).unwrap();
        add_server(&a, "y", entry()).unwrap();
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&a).unwrap()).unwrap();
        assert_eq!(v[1]["name"], "y");
        assert!(remove_server(&a, "x").unwrap());
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&a).unwrap()).unwrap();
        assert_eq!(v.as_array().unwrap().len(), 1);

        let b = d.path().join("b.json");
        std::fs::write(&b, r#"{ "servers": [] }"#).unwrap();
        add_server(&b, "y", entry()).unwrap();
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&b).unwrap()).unwrap();
        assert_eq!(v["servers"][0]["name"], "y");
    }

    #[test]
    fn refuses_files_with_comments_and_leaves_them_alone() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("c.json");
        let text = "// mine\n{ \"mcpServers\": {} }";
        std::fs::write(&p, text).unwrap();
        let err = add_server(&p, "y", entry()).unwrap_err();
        assert!(err.to_string().contains("comments"), "{err}");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), text);
    }
}
