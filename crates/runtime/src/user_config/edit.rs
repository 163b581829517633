//! Writes one key of a settings file, keeping the rest as the user wrote it (comments,
//! order): temp file, checked, then renamed over the file.

use std::path::Path;

use toml_edit::{Document, Item, Table, Value};

use super::schema::{FileId, KeySpec, Kind};
use super::ConfigError;

fn err(path: &Path, why: impl std::fmt::Display) -> ConfigError {
    ConfigError::File {
        path: path.display().to_string(),
        why: why.to_string(),
    }
}

fn read(path: &Path) -> Result<Document, ConfigError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(err(path, e)),
    };
    text.parse::<Document>().map_err(|e| err(path, e))
}

/// The value as the file stores it, typed by the key's kind (`value` already checked).
fn typed(spec: &KeySpec, value: &str) -> Value {
    match spec.kind {
        Kind::Number => value
            .parse::<i64>()
            .map(Value::from)
            .unwrap_or_else(|_| Value::from(value)),
        Kind::Fraction => value
            .parse::<f64>()
            .map(Value::from)
            .unwrap_or_else(|_| Value::from(value)),
        Kind::Bool => Value::from(value == "true"),
        Kind::List => {
            let mut a = toml_edit::Array::new();
            for w in value.split(',').filter(|w| !w.is_empty()) {
                a.push(w);
            }
            Value::Array(a)
        }
        Kind::Text | Kind::Choice(_) | Kind::Secret(_) => Value::from(value),
    }
}

/// The dotted path of `key` in its file.
fn file_path<'a>(spec: &'a KeySpec, key: &'a str) -> Vec<&'a str> {
    match spec.file {
        FileId::Sandbox => vec![spec.file_key.unwrap_or(key)],
        FileId::Config => key.split('.').collect(),
    }
}

/// Sets `key` (of `spec`) to the checked `value` in the file at `path`.
pub fn set_in(path: &Path, spec: &KeySpec, key: &str, value: &str) -> Result<(), ConfigError> {
    let mut doc = read(path)?;
    let parts = file_path(spec, key);
    let Some((last, tables)) = parts.split_last() else {
        return Err(ConfigError::Unknown(key.to_string()));
    };
    let mut cur: &mut Table = doc.as_table_mut();
    for (i, part) in tables.iter().enumerate() {
        let item = cur.entry(part).or_insert_with(|| {
            let mut t = Table::new();
            // `[tools]` above `[tools.read_file]` is not written out.
            t.set_implicit(i + 1 < tables.len());
            Item::Table(t)
        });
        cur = item.as_table_mut().ok_or_else(|| {
            err(
                path,
                format!("`{part}` is not a table; fix the file by hand"),
            )
        })?;
    }
    cur.insert(last, Item::Value(typed(spec, value)));
    write(path, &doc.to_string())
}

/// Removes `key` from the file at `path`; false when it was not there.
pub fn unset_in(path: &Path, spec: &KeySpec, key: &str) -> Result<bool, ConfigError> {
    let mut doc = read(path)?;
    let parts = file_path(spec, key);
    let Some((last, tables)) = parts.split_last() else {
        return Ok(false);
    };
    let mut cur: &mut Table = doc.as_table_mut();
    for part in tables {
        match cur.get_mut(part).and_then(Item::as_table_mut) {
            Some(t) => cur = t,
            None => return Ok(false),
        }
    }
    if cur.remove(last).is_none() {
        return Ok(false);
    }
    write(path, &doc.to_string())?;
    Ok(true)
}

/// Writes `text` over `path` once it reads back as TOML.
fn write(path: &Path, text: &str) -> Result<(), ConfigError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| err(dir, e))?;
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    std::fs::write(&tmp, text).map_err(|e| err(&tmp, e))?;
    // The value itself was checked against the schema (for the sandbox's keys: the words
    // its loader takes); the file must still read as TOML.
    let checked = toml::from_str::<toml::Table>(text)
        .map(|_| ())
        .map_err(|e| err(path, e));
    if let Err(e) = checked {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    std::fs::rename(&tmp, path).map_err(|e| err(path, e))
}
