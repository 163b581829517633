//! Argument parsing helpers: clear errors, and leniency for numbers/booleans sent as strings.

use std::fmt;

use cairn_engine::ToolError;
use serde::de::{self, Deserializer, Visitor};

/// Parses `args` into `T`, prefixing errors with the tool name.
pub(crate) fn parse<T: serde::de::DeserializeOwned>(
    tool: &str,
    args: serde_json::Value,
) -> Result<T, ToolError> {
    let args = match args {
        // Some models send no arguments at all for tools whose arguments are all optional.
        serde_json::Value::Null => serde_json::Value::Object(Default::default()),
        other => other,
    };
    if !args.is_object() {
        return Err(ToolError::InvalidArguments(format!(
            "{tool}: arguments must be a JSON object, got {}",
            json_kind(&args)
        )));
    }
    cairn_engine::parse_args(args).map_err(|e| match e {
        ToolError::InvalidArguments(msg) => ToolError::InvalidArguments(format!("{tool}: {msg}")),
        other => other,
    })
}

fn json_kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// Deserialises an optional non-negative integer, also accepting `"42"` and `42.0`.
pub(crate) fn opt_u64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    d.deserialize_any(OptU64)
}

struct OptU64;

impl<'de> Visitor<'de> for OptU64 {
    type Value = Option<u64>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a non-negative integer")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(OptU64)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Some(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        u64::try_from(v)
            .map(Some)
            .map_err(|_| E::custom(format!("expected a non-negative integer, got {v}")))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        if v.fract() == 0.0 && v >= 0.0 && v <= u64::MAX as f64 {
            Ok(Some(v as u64))
        } else {
            Err(E::custom(format!(
                "expected a non-negative integer, got {v}"
            )))
        }
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        let t = v.trim();
        if t.is_empty() {
            return Ok(None);
        }
        t.parse::<u64>()
            .map(Some)
            .map_err(|_| E::custom(format!("expected a non-negative integer, got \"{v}\"")))
    }
}

/// Deserialises an optional boolean, also accepting `"true"` / `"false"`.
pub(crate) fn opt_bool<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    d.deserialize_any(OptBool)
}

struct OptBool;

impl<'de> Visitor<'de> for OptBool {
    type Value = Option<bool>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a boolean")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(OptBool)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(Some(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        match v.trim().to_ascii_lowercase().as_str() {
            "true" => Ok(Some(true)),
            "false" => Ok(Some(false)),
            "" => Ok(None),
            _ => Err(E::custom(format!(
                "expected a boolean (true or false), got \"{v}\""
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize)]
    struct A {
        path: String,
        #[serde(default, deserialize_with = "opt_u64")]
        n: Option<u64>,
        #[serde(default, deserialize_with = "opt_bool")]
        b: Option<bool>,
    }

    #[test]
    fn accepts_numbers_and_numeric_strings() {
        let a: A = parse("t", json!({"path": "x", "n": "12", "b": "true"})).unwrap();
        assert_eq!((a.n, a.b), (Some(12), Some(true)));
        let a: A = parse("t", json!({"path": "x", "n": 3.0, "b": null})).unwrap();
        assert_eq!((a.n, a.b), (Some(3), None));
        let a: A = parse("t", json!({"path": "x"})).unwrap();
        assert_eq!((a.path.as_str(), a.n, a.b), ("x", None, None));
    }

    #[test]
    fn errors_name_the_tool_and_the_problem() {
        let e = parse::<A>("read_file", json!({})).unwrap_err();
        assert!(
            matches!(&e, ToolError::InvalidArguments(m) if m.contains("read_file") && m.contains("path")),
            "{e}"
        );
        let e = parse::<A>("t", json!({"path": "x", "n": -1})).unwrap_err();
        assert!(e.to_string().contains("non-negative"), "{e}");
        let e = parse::<A>("t", json!({"path": "x", "n": "ten"})).unwrap_err();
        assert!(e.to_string().contains("ten"), "{e}");
        let e = parse::<A>("t", json!({"path": 5})).unwrap_err();
        assert!(e.to_string().contains("invalid type"), "{e}");
        let e = parse::<A>("t", json!("x")).unwrap_err();
        assert!(e.to_string().contains("JSON object"), "{e}");
    }
}
