//! `cairn permissions` and rules in force during `cairn run`.

use std::path::Path;

use cairn_testkit::{MockLlmServer, Reply};
use serde_json::{json, Value};
use tokio::process::Command;

fn cairn(rules_file: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cairn"));
    c.env("CAIRN_PERMISSIONS_FILE", rules_file)
        .env_remove("CAIRN_SHELL_POLICY")
        .env("OPENAI_API_KEY", "k");
    c
}

#[tokio::test(flavor = "multi_thread")]
async fn rules_are_added_checked_listed_and_revoked() {
    let tmp = tempfile::tempdir().unwrap();
    let rules = tmp.path().join("permissions.toml");
    let out = cairn(&rules)
        .args([
            "permissions",
            "add",
            "run_shell(npm test:*)",
            "--decision",
            "allow",
        ])
        .args([
            "--match",
            "npm test -- --watch",
            "--not-match",
            "npm test; rm -rf /",
        ])
        .output()
        .await
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A rule whose example fails is rejected with a clear error and not written.
    let out = cairn(&rules)
        .args([
            "permissions",
            "add",
            "run_shell(npm test)",
            "--decision",
            "allow",
        ])
        .args(["--match", "npm test -- --watch"])
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("should match"));
    let out = cairn(&rules)
        .args(["permissions", "list", "--json", "--workspace"])
        .arg(tmp.path())
        .output()
        .await
        .unwrap();
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["rule"], "run_shell(npm test:*)");
    assert_eq!(lines[0]["decision"], "allow");
    let out = cairn(&rules)
        .args(["permissions", "revoke", "run_shell(npm test:*)"])
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let out = cairn(&rules)
        .args(["permissions", "list", "--workspace"])
        .arg(tmp.path())
        .output()
        .await
        .unwrap();
    assert!(out.stdout.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_deny_rule_blocks_even_in_auto_mode_and_a_repo_cannot_allow_itself() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    std::fs::create_dir_all(ws.join(".agent")).unwrap();
    let rules = tmp.path().join("permissions.toml");
    std::fs::write(
        &rules,
        "[[rule]]\nrule = \"run_shell(touch denied.txt)\"\ndecision = \"deny\"\n",
    )
    .unwrap();
    // The repository tries to allow itself `touch`: ignored.
    std::fs::write(
        ws.join(".agent/permissions.toml"),
        "[[rule]]\nrule = \"run_shell(touch:*)\"\ndecision = \"allow\"\n",
    )
    .unwrap();
    let state = tmp.path().join("state");
    let server = MockLlmServer::with_script(vec![
        Reply::tool_call("a", "run_shell", json!({"command": "touch denied.txt"})),
        Reply::tool_call("b", "run_shell", json!({"command": "touch other.txt"})),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let out = cairn(&rules)
        .args([
            "run",
            "--json",
            "--model",
            "m",
            "--mode",
            "auto",
            "--workspace",
        ])
        .arg(&ws)
        .arg("--state-dir")
        .arg(&state)
        .arg("--base-url")
        .arg(server.base_url())
        .arg("go")
        .output()
        .await
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let finished: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "tool_finished")
        .collect();
    assert_eq!(finished[0]["data"]["status"], "denied");
    assert!(finished[0]["data"]["reason"]
        .as_str()
        .unwrap()
        .contains("touch denied.txt"));
    assert!(!ws.join("denied.txt").exists());
    // Auto mode allows the other command; the repo's allow rule played no part.
    assert_eq!(finished[1]["data"]["status"], "ok");

    // In interactive mode with --approve deny, the repo's allow rule does not skip the prompt.
    server.push(Reply::tool_call(
        "c",
        "run_shell",
        json!({"command": "touch third.txt"}),
    ));
    server.push(Reply::text("ok"));
    let out = cairn(&rules)
        .args([
            "run",
            "--json",
            "--model",
            "m",
            "--approve",
            "deny",
            "--workspace",
        ])
        .arg(&ws)
        .arg("--state-dir")
        .arg(&state)
        .arg("--base-url")
        .arg(server.base_url())
        .arg("again")
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(!ws.join("third.txt").exists());
    // A broken rules file is a clear usage error.
    std::fs::write(
        &rules,
        "[[rule]]\nrule = \"run_shell(ls; rm)\"\ndecision = \"allow\"\n",
    )
    .unwrap();
    let out = cairn(&rules)
        .args(["run", "--model", "m", "--workspace"])
        .arg(&ws)
        .arg("--state-dir")
        .arg(&state)
        .arg("hi")
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("permission rules"));
}

/// `cairn permissions add "run_shell(rm:*)" --decision deny` stops rm in auto mode behind a
/// shell wrapper, in `exec_command` and as a background task, and the file survives.
#[tokio::test(flavor = "multi_thread")]
async fn a_deny_rule_on_rm_holds_behind_wrappers_and_in_every_command_tool() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("f"), "keep me\n").unwrap();
    let rules = tmp.path().join("permissions.toml");
    let out = cairn(&rules)
        .args([
            "permissions",
            "add",
            "run_shell(rm:*)",
            "--decision",
            "deny",
        ])
        .output()
        .await
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let calls = [
        ("run_shell", json!({"command": "bash -c 'rm f'"})),
        ("exec_command", json!({"command": "rm f"})),
        ("run_shell", json!({"command": "command rm f"})),
        (
            "run_shell",
            json!({"command": "/bin/rm f", "background": true}),
        ),
    ];
    let mut script: Vec<Reply> = calls
        .iter()
        .enumerate()
        .map(|(i, (tool, args))| Reply::tool_call(&format!("c{i}"), tool, args.clone()))
        .collect();
    script.push(Reply::text("done"));
    let server = MockLlmServer::with_script(script).await.unwrap();
    let out = cairn(&rules)
        .args(["run", "--json", "--model", "m", "--mode", "auto"])
        .arg("--workspace")
        .arg(&ws)
        .arg("--state-dir")
        .arg(tmp.path().join("state"))
        .arg("--base-url")
        .arg(server.base_url())
        .arg("go")
        .env("CAIRN_SANDBOX", "off")
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let finished: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["type"] == "tool_finished")
        .collect();
    assert_eq!(finished.len(), calls.len());
    for (f, (tool, args)) in finished.iter().zip(&calls) {
        assert_eq!(f["data"]["status"], "denied", "{tool} {args}: {f}");
        assert!(
            f["data"]["reason"]
                .as_str()
                .unwrap_or_default()
                .contains("run_shell(rm:*)"),
            "{tool} {args}: {f}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(ws.join("f")).unwrap(),
        "keep me\n",
        "the file survives"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rule_kept_for_a_project_is_listed_there_only_and_revoked_with_project() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let rules = tmp.path().join("permissions.toml");
    let key = cairn_runtime::permissions::project_key(&ws);
    std::fs::write(
        &rules,
        format!(
            "[[rule]]\nrule = \"run_shell(make:*)\"\ndecision = \"allow\"\nproject = {key:?}\n\n\
             [[rule]]\nrule = \"run_shell(make:*)\"\ndecision = \"allow\"\nproject = \"/elsewhere\"\n"
        ),
    )
    .unwrap();
    let list = |dir: &Path| {
        let mut c = cairn(&rules);
        c.args(["permissions", "list", "--json", "--workspace"])
            .arg(dir);
        c
    };
    let out = list(&ws).output().await.unwrap();
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["rule"], "run_shell(make:*)");
    assert_eq!(lines[0]["project"], json!(key));
    let out = list(tmp.path()).output().await.unwrap();
    assert!(out.stdout.is_empty(), "another folder sees none");
    // Without --project only a global rule is revoked: there is none.
    let out = cairn(&rules)
        .args(["permissions", "revoke", "run_shell(make:*)"])
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let out = cairn(&rules)
        .args(["permissions", "revoke", "run_shell(make:*)", "--project"])
        .arg(&ws)
        .output()
        .await
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let left = std::fs::read_to_string(&rules).unwrap();
    assert!(
        left.contains("/elsewhere") && !left.contains(&key),
        "{left}"
    );
}
