//! An MCP server's request for information, asked on the terminal: a form field by field
//! (defaults shown, Enter keeps them, choices numbered, required fields marked, a warning on
//! secret-like fields), or a page whose full address is shown and opened only if the user
//! says so. `cairn mcp call --elicit accept-defaults` answers every form with its defaults.

use std::io::Write;

use async_trait::async_trait;
use cairn_engine::Approver;
use cairn_protocol::{
    ApprovalDecision, ApprovalRequest, ElicitationAnswer, ElicitationMode, ElicitationRequested,
};
use serde_json::{Map, Value};

use crate::render::inert;

/// Tries per field before a field that will not parse is left out.
const TRIES: usize = 3;

/// Asks `request` on the controlling terminal.
pub fn ask(request: &ElicitationRequested) -> std::io::Result<ElicitationAnswer> {
    let (input, mut out) = crate::approve::tty()?;
    writeln!(
        out,
        "\n? MCP server `{}` asks: {}",
        inert(&request.server),
        inert(&request.message)
    )?;
    if request.mode == ElicitationMode::Url {
        let url = request.url.clone().unwrap_or_default();
        let origin = url::Url::parse(&url)
            .map(|u| u.origin().ascii_serialization())
            .unwrap_or_else(|_| "(not a valid address)".into());
        writeln!(out, "  It wants you to visit a page on {}", inert(&origin))?;
        writeln!(out, "  {}", inert(&url))?;
        write!(out, "  Open it in your browser? [y]es / [n]o / [c]ancel > ")?;
        let line = crate::approve::read_line_after_prompt(&input, &mut out)?;
        return Ok(
            match line.as_deref().map(str::to_ascii_lowercase).as_deref() {
                Some("y" | "yes") => {
                    if let Err(e) = cairn_mcp::auth::redirect::open_web_page(&url) {
                        writeln!(out, "  Could not open it ({e}); open it yourself: {url}")?;
                    }
                    ElicitationAnswer::Accept {
                        content: Map::new(),
                    }
                }
                Some("c" | "cancel") | None => ElicitationAnswer::Cancel,
                _ => ElicitationAnswer::Decline {
                    reason: "the user declined".into(),
                },
            },
        );
    }
    let schema = request.schema.clone().unwrap_or(Value::Null);
    let fields = fields_of(&schema);
    for f in &fields {
        writeln!(out, "  - {}", f.label())?;
    }
    write!(out, "  Fill in this form? [y]es / [n]o / [c]ancel > ")?;
    match crate::approve::read_line_after_prompt(&input, &mut out)?
        .map(|l| l.to_ascii_lowercase())
        .as_deref()
    {
        Some("y" | "yes" | "") => {}
        Some("c" | "cancel") | None => return Ok(ElicitationAnswer::Cancel),
        _ => {
            return Ok(ElicitationAnswer::Decline {
                reason: "the user declined".into(),
            })
        }
    }
    let mut content = Map::new();
    for f in &fields {
        if f.secret_like() {
            writeln!(
                out,
                "  ! `{}` looks like a secret: servers must not ask for secrets in forms; \
                 leave it empty unless you trust this server",
                inert(&f.name)
            )?;
        }
        for (i, c) in f.choices.iter().enumerate() {
            writeln!(out, "      {}. {}", i + 1, inert(&c.1))?;
        }
        let mut tries = 0;
        loop {
            write!(out, "  {} > ", f.prompt())?;
            let Some(line) = crate::approve::read_line_after_prompt(&input, &mut out)? else {
                return Ok(ElicitationAnswer::Cancel);
            };
            if line.is_empty() {
                if f.required && f.default.is_none() && tries < TRIES {
                    writeln!(out, "  This field is required.")?;
                    tries += 1;
                    continue;
                }
                break;
            }
            match f.parse(&line) {
                Ok(v) => {
                    content.insert(f.name.clone(), v);
                    break;
                }
                Err(why) if tries < TRIES => {
                    writeln!(out, "  {why}")?;
                    tries += 1;
                }
                Err(_) => break,
            }
        }
    }
    Ok(ElicitationAnswer::Accept { content })
}

/// One form field.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// The property's name.
    pub name: String,
    title: Option<String>,
    description: Option<String>,
    kind: String,
    format: Option<String>,
    /// Whether the schema requires it.
    pub required: bool,
    /// The schema's default.
    pub default: Option<Value>,
    /// (value, label) of each choice.
    pub choices: Vec<(String, String)>,
    /// Whether several choices may be picked.
    pub multi: bool,
}

/// The fields of a requested schema, in the schema's order.
pub fn fields_of(schema: &Value) -> Vec<Field> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    props
        .iter()
        .map(|(name, p)| {
            let kind = p.get("type").and_then(Value::as_str).unwrap_or("string");
            let multi = kind == "array";
            let choice_src = if multi {
                p.get("items").unwrap_or(p)
            } else {
                p
            };
            Field {
                name: name.clone(),
                title: p.get("title").and_then(Value::as_str).map(str::to_string),
                description: p
                    .get("description")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                kind: kind.to_string(),
                format: p.get("format").and_then(Value::as_str).map(str::to_string),
                required: required.contains(&name.as_str()),
                default: p.get("default").cloned(),
                choices: choices(choice_src),
                multi,
            }
        })
        .collect()
}

/// (value, label) of an `enum` (labels from `enumNames`), `oneOf`/`anyOf` of `const`s.
fn choices(p: &Value) -> Vec<(String, String)> {
    if let Some(values) = p.get("enum").and_then(Value::as_array) {
        let names = p.get("enumNames").and_then(Value::as_array);
        return values
            .iter()
            .enumerate()
            .filter_map(|(i, v)| {
                let v = v.as_str()?.to_string();
                let label = names
                    .and_then(|n| n.get(i))
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .unwrap_or_else(|| v.clone());
                Some((v, label))
            })
            .collect();
    }
    let list = p
        .get("oneOf")
        .or_else(|| p.get("anyOf"))
        .and_then(Value::as_array);
    list.map(|l| {
        l.iter()
            .filter_map(|c| {
                let v = c.get("const")?.as_str()?.to_string();
                let label = c
                    .get("title")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .unwrap_or_else(|| v.clone());
                Some((v, label))
            })
            .collect()
    })
    .unwrap_or_default()
}

impl Field {
    fn label(&self) -> String {
        let mut s = inert(self.title.as_deref().unwrap_or(&self.name)).into_owned();
        if let Some(d) = &self.description {
            s.push_str(&format!(": {}", inert(d)));
        }
        if self.required {
            s.push_str(" (required)");
        }
        s
    }

    fn prompt(&self) -> String {
        let mut s = inert(&self.name).into_owned();
        let hint = match (self.kind.as_str(), self.choices.is_empty()) {
            (_, false) if self.multi => "numbers separated by commas",
            (_, false) => "a number or the value",
            ("boolean", _) => "y/n",
            ("integer", _) => "a whole number",
            ("number", _) => "a number",
            _ => "text",
        };
        s.push_str(&format!(" ({hint}"));
        if let Some(d) = &self.default {
            s.push_str(&format!("; Enter keeps {}", inert(&d.to_string())));
        } else if !self.required {
            s.push_str("; Enter leaves it out");
        }
        s.push(')');
        s
    }

    /// Whether the field seems to ask for a secret (a password, token or key).
    pub fn secret_like(&self) -> bool {
        let n = self.name.to_ascii_lowercase();
        self.format.as_deref() == Some("password")
            || [
                "password", "passwd", "secret", "token", "apikey", "api_key", "pin",
            ]
            .iter()
            .any(|w| n.contains(w))
    }

    /// `line` as this field's value, or why not.
    pub fn parse(&self, line: &str) -> Result<Value, String> {
        let pick = |t: &str| -> Result<String, String> {
            let t = t.trim();
            if let Ok(n) = t.parse::<usize>() {
                if let Some(c) = n.checked_sub(1).and_then(|i| self.choices.get(i)) {
                    return Ok(c.0.clone());
                }
            }
            self.choices
                .iter()
                .find(|c| c.0 == t || c.1.eq_ignore_ascii_case(t))
                .map(|c| c.0.clone())
                .ok_or_else(|| format!("`{t}` is not one of the choices"))
        };
        if !self.choices.is_empty() {
            if self.multi {
                let picked: Result<Vec<Value>, String> = line
                    .split(',')
                    .map(|t| pick(t).map(Value::String))
                    .collect();
                return picked.map(Value::Array);
            }
            return pick(line).map(Value::String);
        }
        match self.kind.as_str() {
            "boolean" => match line.to_ascii_lowercase().as_str() {
                "y" | "yes" | "true" => Ok(Value::Bool(true)),
                "n" | "no" | "false" => Ok(Value::Bool(false)),
                _ => Err("answer y or n".into()),
            },
            "integer" => line
                .parse::<i64>()
                .map(Value::from)
                .map_err(|_| "a whole number, please".into()),
            "number" => line
                .parse::<f64>()
                .ok()
                .and_then(|n| serde_json::Number::from_f64(n).map(Value::Number))
                .ok_or_else(|| "a number, please".into()),
            _ => Ok(Value::String(line.to_string())),
        }
    }
}

/// Answers every form with its defaults (`cairn mcp call --elicit accept-defaults`) and
/// declines pages; approvals are denied (there are none outside a session).
pub struct AcceptDefaults;

#[async_trait]
impl Approver for AcceptDefaults {
    async fn approve(&self, _request: ApprovalRequest) -> ApprovalDecision {
        ApprovalDecision::Deny
    }

    fn asks_a_person(&self) -> bool {
        false
    }

    async fn elicit(&self, request: ElicitationRequested) -> ElicitationAnswer {
        match request.mode {
            ElicitationMode::Form => ElicitationAnswer::Accept {
                content: Map::new(),
            },
            ElicitationMode::Url => ElicitationAnswer::Decline {
                reason: "--elicit accept-defaults opens no pages".into(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_parse_by_their_type_and_choices() {
        let schema = json!({"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string"},
            "age": {"type": "integer", "default": 30},
            "ok": {"type": "boolean"},
            "hero": {"type": "string", "oneOf": [{"const": "h1", "title": "Superman"}]},
            "fish": {"type": "array", "items": {"anyOf": [{"const": "f1", "title": "Tuna"}, {"const": "f2", "title": "Salmon"}]}},
            "api_token": {"type": "string"},
        }});
        let fields = fields_of(&schema);
        let f = |n: &str| fields.iter().find(|f| f.name == n).unwrap().clone();
        assert!(f("name").required && !f("age").required);
        assert_eq!(f("age").parse("41").unwrap(), json!(41));
        assert!(f("age").parse("forty").is_err());
        assert_eq!(f("ok").parse("y").unwrap(), json!(true));
        assert_eq!(f("hero").parse("1").unwrap(), json!("h1"));
        assert_eq!(f("hero").parse("superman").unwrap(), json!("h1"));
        assert_eq!(f("fish").parse("2, 1").unwrap(), json!(["f2", "f1"]));
        assert!(f("api_token").secret_like() && !f("name").secret_like());
    }

    #[test]
    fn a_servers_labels_cannot_drive_the_terminal() {
        let schema = json!({"type": "object", "properties": {
            "x\u{1b}[2J": {"type": "string", "title": "Name\u{1b}]0;pwned\u{7}",
                "description": "clears\u{1b}[2J the screen"},
        }});
        let f = &fields_of(&schema)[0];
        for shown in [f.label(), f.prompt()] {
            assert!(
                !shown.contains('\u{1b}') && !shown.contains('\u{7}'),
                "{shown:?}"
            );
        }
    }
}
