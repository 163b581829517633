//! `cairn serve --tenants` as a process with a user config of its own: the server account's
//! user-level hooks, MCP servers and permission rules never apply to a tenant's session, and
//! the workspace's own hooks run only for a tenant with `trustProjectConfig` (serve.md,
//! Tenants).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use cairn_testkit::{MockLlmServer, Reply};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, BufReader};

use super::serve::call;

fn token(id: &str) -> String {
    format!("token-{id}-{}", "y".repeat(40))
}

fn sha256_hex(s: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(s.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn write_private(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
}

/// The JSON body of a raw HTTP/1.1 response (`Content-Length` or chunked, one chunk).
fn body_json(resp: &str) -> Value {
    let body = resp.split("\r\n\r\n").nth(1).unwrap_or("");
    let line = body.lines().find(|l| l.starts_with('{')).unwrap_or(body);
    serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {resp}"))
}

#[tokio::test]
async fn a_tenant_session_reads_no_user_config_and_project_files_only_when_trusted() {
    // Not under /tmp: sandboxed commands get a private /tmp.
    let top = tempfile::Builder::new()
        .prefix("cairn-serve-tenants-")
        .tempdir_in("/var/tmp")
        .unwrap();
    let top = top.path();
    let mock = MockLlmServer::start().await.unwrap();
    // The server account's own config: a hook, an MCP server and a rule that would each
    // leave a trace or deny the command.
    let user_home = top.join("server-home");
    let config = user_home.join(".config");
    let cairn_cfg = config.join("cairn");
    std::fs::create_dir_all(&cairn_cfg).unwrap();
    let user_hook_ran = top.join("user-hook-ran");
    let user_mcp_ran = top.join("user-mcp-ran");
    std::fs::write(
        cairn_cfg.join("hooks.json"),
        json!({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command",
            "command": format!("touch {}", user_hook_ran.display())}]}]}})
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        cairn_cfg.join("mcp.json"),
        json!({"mcpServers": {"spy": {"command": "sh",
            "args": ["-c", format!("touch {}; exec cat", user_mcp_ran.display())]}}})
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        cairn_cfg.join("permissions.toml"),
        "[[rule]]\nrule = \"run_shell\"\ndecision = \"deny\"\n",
    )
    .unwrap();

    // Tenant `t` trusts its project config, `u` does not; both workspaces have a hook.
    let mut tenants = Vec::new();
    let mut roots: Vec<PathBuf> = Vec::new();
    for (id, trust) in [("t", true), ("u", false)] {
        let base = top.join(id);
        for d in ["ws", "state", "home", "worktrees"] {
            std::fs::create_dir_all(base.join(d)).unwrap();
        }
        let ws = base.join("ws");
        std::fs::create_dir_all(ws.join(".agent")).unwrap();
        std::fs::write(
            ws.join(".agent/hooks.json"),
            json!({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command",
                "command": "touch project-hook-ran"}]}]}})
            .to_string(),
        )
        .unwrap();
        let key = base.join("key");
        write_private(&key, "k\n");
        tenants.push(json!({
            "id": id,
            "tokenSha256": sha256_hex(&token(id)),
            "root": ws,
            "stateDir": base.join("state"),
            "homeDir": base.join("home"),
            "worktreesDir": base.join("worktrees"),
            "providers": {"openai": {"baseUrl": mock.base_url(), "apiKeyFile": key}},
            "trustProjectConfig": trust,
        }));
        roots.push(ws);
    }
    let file = top.join("tenants.json");
    write_private(&file, &json!({"tenants": tenants}).to_string());

    let run_dir = top.join("run");
    let sock = run_dir.join("serve.sock");
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
        .arg("serve")
        .arg("--listen")
        .arg(format!("unix:{}", sock.display()))
        .arg("--tenants")
        .arg(&file)
        .args(["--model", "m"])
        .env("HOME", &user_home)
        .env("XDG_CONFIG_HOME", &config)
        .env_remove("CAIRN_HOOKS_FILE")
        .env_remove("CAIRN_MCP_CONFIG")
        .env_remove("CAIRN_PERMISSIONS_FILE")
        .env_remove("CAIRN_MCP")
        .env_remove("OPENAI_FORCE_API_MODE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    tokio::time::timeout(Duration::from_secs(30), lines.next_line())
        .await
        .expect("the start line in time")
        .unwrap()
        .expect("the server started (a working sandbox is needed for --tenants)");

    for (i, id) in ["t", "u"].into_iter().enumerate() {
        let created = call(
            &sock,
            "POST",
            "/v1/sessions",
            &token(id),
            &json!({"workspace": ".", "mode": "auto"}).to_string(),
        )
        .await;
        assert!(created.starts_with("HTTP/1.1 201"), "{created}");
        let sid = body_json(&created)["id"].as_str().unwrap().to_string();
        mock.push(Reply::tool_call(
            "c1",
            "run_shell",
            json!({"command": "echo ran > shell-ran.txt"}),
        ));
        mock.push(Reply::text("done"));
        let streamed = call(
            &sock,
            "POST",
            &format!("/v1/sessions/{sid}/messages"),
            &token(id),
            "{\"text\": \"go\"}",
        )
        .await;
        assert!(streamed.contains("event: run_end"), "{streamed}");
        // The user's deny rule does not apply: the command ran.
        assert!(
            roots[i].join("shell-ran.txt").exists(),
            "tenant {id}: the command ran despite the server account's deny rule:\n{streamed}"
        );
        assert!(!streamed.contains("\"denied\""), "{streamed}");
    }
    assert!(
        roots[0].join("project-hook-ran").exists(),
        "trustProjectConfig: true runs the workspace's hook"
    );
    assert!(
        !roots[1].join("project-hook-ran").exists(),
        "trustProjectConfig: false never runs it"
    );
    assert!(
        !user_hook_ran.exists(),
        "the server account's hook never runs"
    );
    assert!(
        !user_mcp_ran.exists(),
        "the server account's MCP server never starts"
    );
    let pid = nix::unistd::Pid::from_raw(child.id().unwrap() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("exited in time")
        .unwrap();
    assert_eq!(status.code(), Some(0));
}
