#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use super::*;
use crate::config::expand::NoSecrets;

fn env() -> BTreeMap<String, String> {
    [
        ("TOKEN".to_string(), "t0k".to_string()),
        ("DATA".to_string(), "/data dir".to_string()),
    ]
    .into()
}

fn parse(text: &str) -> LoadedConfig {
    let env = env();
    let cx = VarContext {
        env: &env,
        secrets: &NoSecrets,
        workspace: Some(Path::new("/ws")),
    };
    parse_config_text(text, Path::new("/ws/.agent/mcp.json"), &cx)
}

fn stdio(s: &ServerConfig) -> (&str, &[String], &BTreeMap<String, String>) {
    match s.transport.as_ref().unwrap() {
        TransportConfig::Stdio {
            program, args, env, ..
        } => (program, args, env),
        other => panic!("not stdio: {other:?}"),
    }
}

#[test]
fn bare_array_with_every_transport() {
    let c = parse(
        r#"[
          { "name": "filesystem", "type": "stdio", "command": ["npx", "-y", "@mcp/fs", "${DATA}"] },
          { "name": "remote", "type": "http", "url": "https://example.com/mcp", "headers": { "Authorization": "Bearer ${TOKEN}" } },
          { "name": "old", "url": "http://127.0.0.1:9/sse" },
          { "name": "ocr", "builtin": true }
        ]"#,
    );
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    assert_eq!(c.servers.len(), 4);
    let (p, a, _) = stdio(&c.servers[0]);
    assert_eq!(p, "npx");
    assert_eq!(a, ["-y", "@mcp/fs", "/data dir"]);
    assert_eq!(
        c.servers[1].transport,
        Some(TransportConfig::Http {
            url: "https://example.com/mcp".into(),
            headers: [("Authorization".to_string(), "Bearer t0k".to_string())].into(),
        })
    );
    assert!(matches!(
        c.servers[2].transport,
        Some(TransportConfig::Sse { .. })
    ));
    assert_eq!(
        c.servers[3].transport,
        Some(TransportConfig::Builtin { kind: "ocr".into() })
    );
}

#[test]
fn mcp_servers_form_splits_command_strings_with_shell_words() {
    let c = parse(
        r#"{ "mcpServers": { "gh": { "command": "npx -y 'pkg with space'", "args": ["--x"], "env": { "K": "${TOKEN}", "N": 3 } } } }"#,
    );
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    let (p, a, e) = stdio(&c.servers[0]);
    assert_eq!(p, "npx");
    assert_eq!(a, ["-y", "pkg with space", "--x"]);
    assert_eq!(e.get("K").unwrap(), "t0k");
    assert_eq!(e.get("N").unwrap(), "3");
}

#[test]
fn servers_as_list_and_as_map() {
    let list = parse(r#"{ "servers": [ { "name": "a", "command": "a" } ] }"#);
    let map = parse(r#"{ "servers": { "a": { "type": "stdio", "command": "a" } }, "inputs": [] }"#);
    assert_eq!(list.servers.len(), 1);
    assert_eq!(map.servers.len(), 1);
    assert!(list.warnings.is_empty() && map.warnings.is_empty());
}

#[test]
fn type_inferred_builtin_then_url_then_command() {
    let c = parse(
        r#"[ { "name": "x", "builtin": "ocr", "url": "http://h/mcp", "command": "c" },
                       { "name": "y", "url": "http://h/mcp", "command": "c" } ]"#,
    );
    assert_eq!(c.servers[0].transport.as_ref().unwrap().kind(), "builtin");
    assert_eq!(c.servers[1].transport.as_ref().unwrap().kind(), "http");
}

#[test]
fn enabled_false_and_disabled_true() {
    let c = parse(
        r#"[ { "name": "a", "command": "a", "enabled": false },
                       { "name": "b", "command": "b", "disabled": true },
                       { "name": "ocr", "enabled": false },
                       { "name": "c", "command": "c" } ]"#,
    );
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    let enabled: Vec<bool> = c.servers.iter().map(|s| s.enabled).collect();
    assert_eq!(enabled, [false, false, false, true]);
    assert!(c.servers[2].transport.is_none());
}

#[test]
fn bad_entries_warn_with_file_entry_and_field_and_the_rest_loads() {
    let c = parse(
        r#"{ "mcpServers": {
            "good": { "command": "ok" },
            "noargs": { "command": "x", "args": "--a 'b" },
            "badcmd": { "command": 42 },
            "nothing": { "env": {} },
            "badurl": { "url": "ftp://h/x" },
            "hdr": { "url": "http://h/mcp", "headers": { "Accept": "x", "bad name": "v", "X-Ok": "${MISSING}" } },
            "slow": { "command": "s", "startupTimeoutMs": "soon", "callTimeoutMs": 1500 },
            "weird": { "command": "w", "type": "carrier-pigeon", "enabled": "yes" }
        } }"#,
    );
    let names: Vec<&str> = c.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["good", "hdr", "noargs", "slow", "weird"]);
    let has = |entry: &str, field: Option<&str>, needle: &str| {
        c.warnings.iter().any(|w| {
            w.entry.as_deref() == Some(entry)
                && w.field.as_deref() == field
                && w.message.contains(needle)
                && w.file == Path::new("/ws/.agent/mcp.json")
        })
    };
    assert!(
        has("noargs", Some("args"), "cannot split"),
        "{:#?}",
        c.warnings
    );
    assert!(has(
        "badcmd",
        Some("command"),
        "expected a string or a list"
    ));
    assert!(has("nothing", None, "nothing to start"));
    assert!(has("badurl", Some("url"), "scheme"));
    assert!(has("hdr", Some("headers.Accept"), "set by the transport"));
    assert!(has(
        "hdr",
        Some("headers.bad name"),
        "not a valid header name"
    ));
    assert!(has("hdr", Some("headers.X-Ok"), "MISSING"));
    assert!(has("slow", Some("startupTimeoutMs"), "milliseconds"));
    assert!(has("weird", Some("type"), "carrier-pigeon"));
    assert!(has("weird", Some("enabled"), "true or false"));
    let slow = c.get("slow").unwrap();
    assert_eq!(slow.call_timeout, Some(Duration::from_millis(1500)));
    assert_eq!(slow.startup_timeout, None);
    let w = c
        .warnings
        .iter()
        .find(|w| w.entry.as_deref() == Some("hdr"))
        .unwrap();
    let text = w.to_string();
    assert!(
        text.starts_with("/ws/.agent/mcp.json: server `hdr`, field `headers."),
        "{text}"
    );
}

#[test]
fn invalid_json_is_one_warning_with_position() {
    let c = parse("{ \"mcpServers\": { \"a\": { \"command\": } } }");
    assert!(c.servers.is_empty());
    assert_eq!(c.warnings.len(), 1);
    assert!(c.warnings[0].message.contains("line 1"), "{:?}", c.warnings);
}

#[test]
fn comments_trailing_commas_and_duplicates() {
    let c = parse(
        "// servers\n[ { \"name\": \"a\", \"command\": \"one\" }, /* again */ { \"name\": \"a\", \"command\": \"two\" }, ]",
    );
    assert_eq!(c.servers.len(), 1);
    assert_eq!(stdio(&c.servers[0]).0, "one");
    assert_eq!(c.warnings.len(), 1);
    assert!(c.warnings[0].message.contains("first one is kept"));
}

#[test]
fn unknown_shapes_warn() {
    assert_eq!(parse("42").warnings.len(), 1);
    assert_eq!(parse(r#"{ "other": 1 }"#).warnings.len(), 1);
    assert_eq!(parse(r#"[ 1, { "command": "x" } ]"#).warnings.len(), 2);
}
