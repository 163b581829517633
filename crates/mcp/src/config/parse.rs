//! Parses the accepted config shapes into [`ServerConfig`]s, collecting warnings per field.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};

use super::expand::VarContext;
use super::{jsonc, ConfigWarning, LoadedConfig, ServerConfig, TransportConfig};

/// Headers the HTTP transport sets itself; a config may not override them.
const RESERVED_HEADERS: &[&str] = &["accept", "mcp-session-id", "last-event-id", "content-type"];

/// Parses one file's text: a bare array, `{"servers": [...]}`, `{"servers": {name: …}}` or
/// `{"mcpServers": {name: …}}` (comments and trailing commas allowed).
pub fn parse_config_text(text: &str, file: &Path, vars: &VarContext<'_>) -> LoadedConfig {
    let mut out = LoadedConfig::default();
    let value: Value = match serde_json::from_str(&jsonc::strip(text)) {
        Ok(v) => v,
        Err(e) => {
            out.warnings.push(ConfigWarning {
                file: file.to_path_buf(),
                entry: None,
                field: None,
                message: format!(
                    "not valid JSON at line {} column {}: {e}; no servers loaded from this file",
                    e.line(),
                    e.column()
                ),
            });
            return out;
        }
    };
    let mut p = Parser {
        file: file.to_path_buf(),
        vars,
        out: &mut out,
    };
    match &value {
        Value::Array(items) => p.list(items, None),
        Value::Object(top) => {
            let mut found = false;
            for key in ["mcpServers", "servers"] {
                match top.get(key) {
                    Some(Value::Object(map)) => {
                        found = true;
                        p.map(map);
                    }
                    Some(Value::Array(items)) => {
                        found = true;
                        p.list(items, Some(key));
                    }
                    Some(Value::Null) | None => {}
                    Some(other) => {
                        found = true;
                        p.warn(
                            None,
                            Some(key),
                            format!(
                                "expected an object or a list of servers, found {}",
                                kind(other)
                            ),
                        );
                    }
                }
            }
            if !found && !top.contains_key("import") {
                p.warn(
                    None,
                    None,
                    "no `mcpServers` or `servers` key: expected a list of servers, {\"servers\": …} or {\"mcpServers\": {name: …}}".into(),
                );
            }
        }
        other => p.warn(
            None,
            None,
            format!(
                "expected a list or an object of servers, found {}",
                kind(other)
            ),
        ),
    }
    out
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

struct Parser<'a, 'v> {
    file: PathBuf,
    vars: &'a VarContext<'v>,
    out: &'a mut LoadedConfig,
}

impl Parser<'_, '_> {
    fn warn(&mut self, entry: Option<&str>, field: Option<&str>, message: String) {
        self.out.warnings.push(ConfigWarning {
            file: self.file.clone(),
            entry: entry.map(str::to_string),
            field: field.map(str::to_string),
            message,
        });
    }

    fn list(&mut self, items: &[Value], key: Option<&str>) {
        for (i, item) in items.iter().enumerate() {
            let label = match key {
                Some(k) => format!("{k}[{i}]"),
                None => format!("[{i}]"),
            };
            let Value::Object(obj) = item else {
                self.warn(
                    Some(&label),
                    None,
                    format!("expected an object, found {}", kind(item)),
                );
                continue;
            };
            match obj.get("name") {
                Some(Value::String(n)) if !n.trim().is_empty() => {
                    let name = n.trim().to_string();
                    self.entry(&name, obj);
                }
                _ => self.warn(
                    Some(&label),
                    Some("name"),
                    "missing or empty `name`; entry skipped".into(),
                ),
            }
        }
    }

    fn map(&mut self, map: &Map<String, Value>) {
        // By name, whatever order serde_json keeps (its `preserve_order` feature may be on in
        // a build through another crate): which server's tool keeps a contested name must not
        // depend on the build.
        let mut entries: Vec<(&String, &Value)> = map.iter().collect();
        entries.sort_by(|a, b| a.0.cmp(b.0));
        for (name, item) in entries {
            let name = name.trim();
            if name.is_empty() {
                self.warn(None, None, "a server with an empty name; skipped".into());
                continue;
            }
            match item {
                Value::Object(obj) => self.entry(name, obj),
                other => self.warn(
                    Some(name),
                    None,
                    format!("expected an object, found {}; entry skipped", kind(other)),
                ),
            }
        }
    }

    fn entry(&mut self, name: &str, obj: &Map<String, Value>) {
        if self.out.servers.iter().any(|s| s.name == name) {
            self.warn(
                Some(name),
                None,
                "a second server with this name in the same file; the first one is kept".into(),
            );
            return;
        }
        if let Some(s) = self.server(name, obj) {
            self.out.servers.push(s);
        }
    }

    fn server(&mut self, name: &str, obj: &Map<String, Value>) -> Option<ServerConfig> {
        let enabled = self.bool_field(name, obj, "enabled").unwrap_or(true)
            && !self.bool_field(name, obj, "disabled").unwrap_or(false);
        let declared = match obj.get("type").or_else(|| obj.get("transport")) {
            None | Some(Value::Null) => None,
            Some(Value::String(t)) => match normalise_type(t) {
                Some(t) => Some(t),
                None => {
                    self.warn(
                        Some(name),
                        Some("type"),
                        format!("unknown type `{t}` (use stdio, http, sse or builtin); inferring it from the other fields"),
                    );
                    None
                }
            },
            Some(other) => {
                self.warn(
                    Some(name),
                    Some("type"),
                    format!(
                        "expected a string, found {}; inferring the type",
                        kind(other)
                    ),
                );
                None
            }
        };
        let builtin = match obj.get("builtin") {
            None | Some(Value::Null) | Some(Value::Bool(false)) => None,
            Some(Value::Bool(true)) => Some(name.to_string()),
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => {
                self.warn(
                    Some(name),
                    Some("builtin"),
                    format!("expected a string or true, found {}; ignored", kind(other)),
                );
                None
            }
        };
        let url = self.string_field(name, obj, "url");
        let has_command = obj.get("command").is_some_and(|c| !c.is_null());
        let ty = declared.or(if builtin.is_some() {
            Some("builtin")
        } else if let Some(u) = &url {
            Some(if looks_like_sse(u) { "sse" } else { "http" })
        } else if has_command {
            Some("stdio")
        } else {
            None
        });
        let transport = match ty {
            Some("builtin") => Some(TransportConfig::Builtin {
                kind: builtin.unwrap_or_else(|| name.to_string()),
            }),
            Some(t @ ("http" | "sse")) => match url {
                Some(u) => self.url_transport(name, obj, t, u),
                None => {
                    self.warn(
                        Some(name),
                        Some("url"),
                        format!("type `{t}` needs a `url`; entry skipped"),
                    );
                    None
                }
            },
            Some(_) => self.stdio(name, obj),
            None => None,
        };
        if transport.is_none() && enabled {
            if ty.is_none() {
                self.warn(
                    Some(name),
                    None,
                    "no `command`, `url` or `builtin`: nothing to start; entry skipped".into(),
                );
            }
            return None;
        }
        Some(ServerConfig {
            name: name.to_string(),
            transport,
            enabled,
            startup_timeout: self.ms_field(
                name,
                obj,
                &["startupTimeoutMs", "startup_timeout_ms", "startupTimeout"],
            ),
            call_timeout: self.ms_field(
                name,
                obj,
                &["callTimeoutMs", "call_timeout_ms", "timeout"],
            ),
            max_call_timeout: self.ms_field(
                name,
                obj,
                &["maxCallTimeoutMs", "max_call_timeout_ms"],
            ),
            source: self.file.clone(),
            held: None,
        })
    }

    fn url_transport(
        &mut self,
        name: &str,
        obj: &Map<String, Value>,
        ty: &str,
        url: String,
    ) -> Option<TransportConfig> {
        match reqwest::Url::parse(&url) {
            Ok(u) if matches!(u.scheme(), "http" | "https") => {}
            Ok(u) => {
                self.warn(
                    Some(name),
                    Some("url"),
                    format!(
                        "scheme `{}` is not http or https; entry skipped",
                        u.scheme()
                    ),
                );
                return None;
            }
            Err(e) => {
                self.warn(
                    Some(name),
                    Some("url"),
                    format!("not a valid URL ({e}); entry skipped"),
                );
                return None;
            }
        }
        let headers = self.headers(name, obj);
        Some(if ty == "sse" {
            TransportConfig::Sse { url, headers }
        } else {
            TransportConfig::Http { url, headers }
        })
    }

    fn stdio(&mut self, name: &str, obj: &Map<String, Value>) -> Option<TransportConfig> {
        let mut words: Vec<String> = match obj.get("command") {
            Some(Value::String(s)) => match shell_words::split(s) {
                Ok(w) => w,
                Err(e) => {
                    self.warn(
                        Some(name),
                        Some("command"),
                        format!("cannot split the command line ({e}); entry skipped"),
                    );
                    return None;
                }
            },
            Some(Value::Array(items)) => {
                let mut w = Vec::new();
                for (i, it) in items.iter().enumerate() {
                    match it {
                        Value::String(s) => w.push(s.clone()),
                        other => {
                            self.warn(
                                Some(name),
                                Some(&format!("command[{i}]")),
                                format!("expected a string, found {}; entry skipped", kind(other)),
                            );
                            return None;
                        }
                    }
                }
                w
            }
            None | Some(Value::Null) => {
                self.warn(
                    Some(name),
                    Some("command"),
                    "type `stdio` needs a `command`; entry skipped".into(),
                );
                return None;
            }
            Some(other) => {
                self.warn(
                    Some(name),
                    Some("command"),
                    format!(
                        "expected a string or a list, found {}; entry skipped",
                        kind(other)
                    ),
                );
                return None;
            }
        };
        match obj.get("args") {
            None | Some(Value::Null) => {}
            Some(Value::Array(items)) => {
                for (i, it) in items.iter().enumerate() {
                    match scalar(it) {
                        Some(s) => words.push(s),
                        None => self.warn(
                            Some(name),
                            Some(&format!("args[{i}]")),
                            format!("expected a string, found {}; argument dropped", kind(it)),
                        ),
                    }
                }
            }
            Some(Value::String(s)) => match shell_words::split(s) {
                Ok(w) => words.extend(w),
                Err(e) => self.warn(
                    Some(name),
                    Some("args"),
                    format!("cannot split ({e}); arguments dropped"),
                ),
            },
            Some(other) => self.warn(
                Some(name),
                Some("args"),
                format!("expected a list of strings, found {}; ignored", kind(other)),
            ),
        }
        let mut expanded = Vec::with_capacity(words.len());
        for (i, w) in words.iter().enumerate() {
            let field = if i == 0 {
                "command".to_string()
            } else {
                format!("args[{}]", i - 1)
            };
            expanded.push(self.expand(name, &field, w));
        }
        let mut it = expanded.into_iter();
        let program = it.next().filter(|p| !p.trim().is_empty());
        let Some(program) = program else {
            self.warn(
                Some(name),
                Some("command"),
                "the command is empty; entry skipped".into(),
            );
            return None;
        };
        let env = self.string_map(name, obj, "env");
        let cwd = self.string_field(name, obj, "cwd").map(PathBuf::from);
        Some(TransportConfig::Stdio {
            program,
            args: it.collect(),
            env,
            cwd,
        })
    }

    fn headers(&mut self, name: &str, obj: &Map<String, Value>) -> BTreeMap<String, String> {
        let raw = self.string_map(name, obj, "headers");
        let mut out = BTreeMap::new();
        for (k, v) in raw {
            let field = format!("headers.{k}");
            if RESERVED_HEADERS.iter().any(|r| r.eq_ignore_ascii_case(&k)) {
                self.warn(
                    Some(name),
                    Some(&field),
                    "set by the transport itself; header dropped".into(),
                );
                continue;
            }
            if reqwest::header::HeaderName::from_bytes(k.as_bytes()).is_err() {
                self.warn(
                    Some(name),
                    Some(&field),
                    "not a valid header name; header dropped".into(),
                );
                continue;
            }
            if reqwest::header::HeaderValue::from_str(&v).is_err() {
                self.warn(
                    Some(name),
                    Some(&field),
                    "not a valid header value (control characters?); header dropped".into(),
                );
                continue;
            }
            out.insert(k, v);
        }
        out
    }

    fn string_map(
        &mut self,
        name: &str,
        obj: &Map<String, Value>,
        key: &str,
    ) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        match obj.get(key) {
            None | Some(Value::Null) => {}
            Some(Value::Object(m)) => {
                for (k, v) in m {
                    let field = format!("{key}.{k}");
                    match scalar(v) {
                        Some(s) => {
                            let s = self.expand(name, &field, &s);
                            out.insert(k.clone(), s);
                        }
                        None => self.warn(
                            Some(name),
                            Some(&field),
                            format!("expected a string, found {}; dropped", kind(v)),
                        ),
                    }
                }
            }
            Some(other) => self.warn(
                Some(name),
                Some(key),
                format!("expected an object, found {}; ignored", kind(other)),
            ),
        }
        out
    }

    fn string_field(&mut self, name: &str, obj: &Map<String, Value>, key: &str) -> Option<String> {
        match obj.get(key) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(self.expand(name, key, s)),
            Some(other) => {
                self.warn(
                    Some(name),
                    Some(key),
                    format!("expected a string, found {}; ignored", kind(other)),
                );
                None
            }
        }
    }

    fn bool_field(&mut self, name: &str, obj: &Map<String, Value>, key: &str) -> Option<bool> {
        match obj.get(key) {
            None | Some(Value::Null) => None,
            Some(Value::Bool(b)) => Some(*b),
            Some(other) => {
                self.warn(
                    Some(name),
                    Some(key),
                    format!("expected true or false, found {}; ignored", kind(other)),
                );
                None
            }
        }
    }

    fn ms_field(
        &mut self,
        name: &str,
        obj: &Map<String, Value>,
        keys: &[&str],
    ) -> Option<Duration> {
        for key in keys {
            match obj.get(*key) {
                None | Some(Value::Null) => continue,
                Some(Value::Number(n)) => match n.as_u64().filter(|ms| *ms > 0) {
                    Some(ms) => return Some(Duration::from_millis(ms)),
                    None => self.warn(
                        Some(name),
                        Some(key),
                        "expected a positive whole number of milliseconds; the default applies"
                            .into(),
                    ),
                },
                Some(other) => self.warn(
                    Some(name),
                    Some(key),
                    format!(
                        "expected milliseconds, found {}; the default applies",
                        kind(other)
                    ),
                ),
            }
        }
        None
    }

    fn expand(&mut self, name: &str, field: &str, text: &str) -> String {
        let (value, problems) = self.vars.expand(text);
        for p in problems {
            self.warn(Some(name), Some(field), p);
        }
        value
    }
}

fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn normalise_type(t: &str) -> Option<&'static str> {
    match t
        .trim()
        .to_ascii_lowercase()
        .replace(['-', '_'], "")
        .as_str()
    {
        "stdio" | "local" | "command" => Some("stdio"),
        "http" | "streamablehttp" | "streamable" | "remote" => Some("http"),
        "sse" => Some("sse"),
        "builtin" => Some("builtin"),
        _ => None,
    }
}

/// A URL whose path ends in `/sse` is taken as a legacy SSE endpoint when no type is given.
fn looks_like_sse(url: &str) -> bool {
    reqwest::Url::parse(url)
        .map(|u| u.path().trim_end_matches('/').ends_with("/sse"))
        .unwrap_or(false)
}

#[cfg(test)]
#[path = "parse_tests.rs"]
mod tests;
