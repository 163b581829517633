//! Checkpoint schema versions and their forward migrations.
//!
//! * Version 1: checkpoints written before the `schemaVersion` key existed. Depending on the
//!   build that wrote them they may lack `todos`, `nameSource`, `usage` and `costUsd`.
//! * Version 2: `schemaVersion` is written; `usage` always holds the session's totals.
//! * Version 3: the same fields, written as compact JSON (no indentation) by a background
//!   writer; a version 2 file needs no change but its version, and is rewritten compactly
//!   when its session is next opened for a run.
//!
//! A migration works on the raw JSON so that old files never have to fit today's types, and
//! a file from a newer Cairn is refused with a clear error instead of being rewritten.

use serde_json::{Map, Value};

/// The schema version this build writes.
pub const SCHEMA_VERSION: u32 = 3;

/// Why a checkpoint cannot be brought to the current schema.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MigrateError {
    /// Written by a newer Cairn; loading it here could lose fields.
    #[error(
        "written by a newer Cairn (schema version {found}; this build reads up to {supported}): update Cairn to open it"
    )]
    Newer { found: u64, supported: u32 },
    /// The file is JSON but not a checkpoint object.
    #[error("not a session checkpoint: expected a JSON object")]
    NotAnObject,
}

/// The schema version a raw checkpoint declares (1 when it has none).
pub fn version_of(value: &Value) -> u64 {
    value
        .get("schemaVersion")
        .and_then(Value::as_u64)
        .unwrap_or(1)
}

/// Whether migrating a checkpoint of version `found` changes its content (not only its
/// layout or version number): then the original is worth keeping beside it.
pub fn changes_content(found: u64) -> bool {
    found < 2
}

/// Brings a raw checkpoint to [`SCHEMA_VERSION`] in place; returns the version it had.
pub fn migrate(value: &mut Value) -> Result<u64, MigrateError> {
    let found = version_of(value);
    if found > u64::from(SCHEMA_VERSION) {
        return Err(MigrateError::Newer {
            found,
            supported: SCHEMA_VERSION,
        });
    }
    let obj = value.as_object_mut().ok_or(MigrateError::NotAnObject)?;
    if found < 2 {
        v1_to_v2(obj);
    }
    // 2 → 3 changed the file's layout only (compact JSON): nothing to convert.
    obj.insert("schemaVersion".into(), Value::from(SCHEMA_VERSION));
    Ok(found)
}

/// Version 1 → 2: fills the fields older builds did not write; usage totals are recovered
/// from the per-reply usage recorded on assistant messages.
fn v1_to_v2(obj: &mut Map<String, Value>) {
    obj.entry("todos")
        .or_insert_with(|| Value::Array(Vec::new()));
    obj.entry("nameSource")
        .or_insert_with(|| Value::String(String::new()));
    obj.entry("costUsd").or_insert_with(|| Value::from(0.0));
    if !obj.contains_key("usage") {
        let usage = usage_from_messages(obj.get("messages"));
        obj.insert("usage".into(), usage);
    }
}

fn usage_from_messages(messages: Option<&Value>) -> Value {
    const KEYS: [&str; 5] = [
        "input_tokens",
        "output_tokens",
        "cached_input_tokens",
        "reasoning_tokens",
        "cache_write_tokens",
    ];
    let mut sums = [0u64; 5];
    for m in messages.and_then(Value::as_array).into_iter().flatten() {
        if m.get("role").and_then(Value::as_str) != Some("assistant") {
            continue;
        }
        if let Some(u) = m.get("usage") {
            for (sum, key) in sums.iter_mut().zip(KEYS) {
                *sum += u.get(key).and_then(Value::as_u64).unwrap_or(0);
            }
        }
    }
    let mut out = Map::new();
    for (sum, key) in sums.iter().zip(KEYS) {
        out.insert(key.into(), Value::from(*sum));
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn version_one_gains_usage_totals_from_its_replies() {
        let mut v = json!({"messages": [
            {"role": "user", "content": []},
            {"role": "assistant", "content": [], "usage": {"input_tokens": 10, "output_tokens": 2}},
            {"role": "assistant", "content": [], "usage": {"input_tokens": 5, "output_tokens": 1, "reasoning_tokens": 4}}
        ]});
        assert_eq!(migrate(&mut v).unwrap(), 1);
        assert_eq!(v["schemaVersion"], SCHEMA_VERSION);
        assert_eq!(v["usage"]["input_tokens"], 15);
        assert_eq!(v["usage"]["output_tokens"], 3);
        assert_eq!(v["usage"]["reasoning_tokens"], 4);
        assert_eq!(v["todos"], json!([]));
    }

    #[test]
    fn current_files_are_left_alone_and_newer_ones_refused() {
        let mut v = json!({"schemaVersion": 3, "usage": {"input_tokens": 1, "output_tokens": 1}});
        let before = v.clone();
        assert_eq!(migrate(&mut v).unwrap(), 3);
        assert_eq!(v, before);
        // Version 2 only gains its new number.
        let mut v2 = json!({"schemaVersion": 2, "usage": {"input_tokens": 1, "output_tokens": 1}});
        assert_eq!(migrate(&mut v2).unwrap(), 2);
        assert_eq!(v2, before);
        let mut newer = json!({"schemaVersion": 9});
        let err = migrate(&mut newer).unwrap_err();
        assert!(err.to_string().contains("newer Cairn"));
        assert_eq!(newer, json!({"schemaVersion": 9}));
        assert_eq!(migrate(&mut json!([1])), Err(MigrateError::NotAnObject));
    }
}
