//! Tenants (`--tenants`): tokens select tenants, sessions of others do not exist for them,
//! workspaces stay inside the root, and a sandboxed command cannot read another tenant's
//! key file or root.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use cairn_testkit::{MockLlmServer, Reply};
use serde_json::{json, Value};

use super::harness::{read_all, types};

struct Fixture {
    _top: tempfile::TempDir,
    file: PathBuf,
    dirs: Vec<(PathBuf, PathBuf)>,
}

fn sha256_hex(s: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(s.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Two tenants, `a` (token "token-a…") and `b`, both on `mock`.
fn fixture(mock: &MockLlmServer) -> Fixture {
    // Not under /tmp: sandboxed commands get a private /tmp, which would hide the other
    // tenant's files whatever the hidden list says.
    let top = tempfile::Builder::new()
        .prefix("cairn-tenants-")
        .tempdir_in("/var/tmp")
        .unwrap();
    let mut tenants = Vec::new();
    let mut dirs = Vec::new();
    for id in ["a", "b"] {
        let base = top.path().join(id);
        for d in ["ws", "state", "home", "worktrees"] {
            std::fs::create_dir_all(base.join(d)).unwrap();
        }
        let key = base.join("key");
        std::fs::write(&key, format!("secret-of-{id}\n")).unwrap();
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
        tenants.push(json!({
            "id": id,
            "tokenSha256": sha256_hex(&token(id)),
            "root": base.join("ws"),
            "stateDir": base.join("state"),
            "homeDir": base.join("home"),
            "worktreesDir": base.join("worktrees"),
            "providers": {"openai": {"baseUrl": mock.base_url(), "apiKeyFile": key}},
        }));
        dirs.push((base.join("ws"), key));
    }
    let file = top.path().join("tenants.json");
    std::fs::write(&file, json!({"tenants": tenants}).to_string()).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    Fixture {
        _top: top,
        file,
        dirs,
    }
}

fn token(id: &str) -> String {
    format!("token-{id}-{}", "x".repeat(40))
}

async fn start(file: &Path) -> Result<cairn_serve::Running, cairn_serve::ServeError> {
    cairn_serve::start(cairn_serve::ServeConfig {
        listen: Some("127.0.0.1:0".into()),
        tenants: Some(file.to_path_buf()),
        model: Some("m".into()),
        ..cairn_serve::ServeConfig::default()
    })
    .await
}

#[tokio::test]
async fn two_tenants_cannot_see_or_touch_each_other() {
    let mock = MockLlmServer::start().await.unwrap();
    let fx = fixture(&mock);
    let running = start(&fx.file).await.unwrap();
    assert_eq!(running.token_file, None);
    let base = format!("http://{}", running.listen);
    let http = reqwest::Client::new();
    let as_ = |who: &str, m: reqwest::Method, path: &str| {
        http.request(m, format!("{base}{path}"))
            .bearer_auth(token(who))
    };
    // The server's own token file is not a thing here; unknown tokens are refused.
    let r = as_("c", reqwest::Method::GET, "/v1/sessions")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    // a opens a session in its root (relative to it).
    let r = as_("a", reqwest::Method::POST, "/v1/sessions")
        .json(&json!({"workspace": ".", "mode": "auto"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201, "{:?}", r.text().await);
    let a_id = r.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    // Outside the root, or b's root: forbidden; a baseUrl of its own: refused.
    for ws in [json!("/tmp"), json!(fx.dirs[1].0), json!("../../b/ws")] {
        let r = as_("a", reqwest::Method::POST, "/v1/sessions")
            .json(&json!({"workspace": ws}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 403, "{ws}");
        assert_eq!(
            r.json::<Value>().await.unwrap()["error"]["code"],
            "workspace_forbidden"
        );
    }
    let r = as_("a", reqwest::Method::POST, "/v1/sessions")
        .json(&json!({"workspace": ".", "baseUrl": "http://127.0.0.1:9/v1"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    // b sees nothing of a's.
    let list: Value = as_("b", reqwest::Method::GET, "/v1/sessions")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(list["sessions"], json!([]));
    for (m, path) in [
        (reqwest::Method::GET, format!("/v1/sessions/{a_id}")),
        (
            reqwest::Method::GET,
            format!("/v1/sessions/{a_id}/messages"),
        ),
        (reqwest::Method::GET, format!("/v1/sessions/{a_id}/turns")),
        (
            reqwest::Method::POST,
            format!("/v1/sessions/{a_id}/interrupt"),
        ),
        (reqwest::Method::POST, format!("/v1/sessions/{a_id}/close")),
    ] {
        let r = as_("b", m.clone(), &path).send().await.unwrap();
        assert_eq!(r.status(), 404, "{m} {path}");
        assert_eq!(
            r.json::<Value>().await.unwrap()["error"]["code"],
            "session_not_found"
        );
    }
    let r = as_(
        "b",
        reqwest::Method::POST,
        &format!("/v1/sessions/{a_id}/messages"),
    )
    .json(&json!({"text": "hijack"}))
    .send()
    .await
    .unwrap();
    assert_eq!(r.status(), 404);

    // a's sandboxed command cannot read b's key file nor list b's root; its own model
    // requests carry its own key only.
    let b_key = fx.dirs[1].1.display().to_string();
    let b_root = fx.dirs[0]
        .0
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("b")
        .join("ws");
    std::fs::write(b_root.join("b-secret.txt"), "b's file").unwrap();
    mock.push(Reply::tool_call(
        "c1",
        "run_shell",
        json!({"command": format!("cat {b_key}; ls {}; echo end", b_root.display())}),
    ));
    mock.push(Reply::text("done"));
    let r = as_(
        "a",
        reqwest::Method::POST,
        &format!("/v1/sessions/{a_id}/messages"),
    )
    .json(&json!({"text": "look around"}))
    .send()
    .await
    .unwrap();
    assert_eq!(r.status(), 200);
    let events = read_all(r).await;
    let fin = events
        .iter()
        .find(|e| e.event == "tool_finished")
        .unwrap_or_else(|| panic!("{:?}", types(&events)));
    let out = fin.data.to_string();
    assert!(out.contains("end"), "the command ran: {out}");
    assert!(!out.contains("secret-of-b"), "{out}");
    assert!(!out.contains("b-secret.txt"), "{out}");
    let sent = mock.requests();
    assert!(
        sent.iter().all(|r| r.api_key() == Some("secret-of-a")),
        "only a's key"
    );
    assert!(
        !serde_json::to_string(&sent.iter().map(|r| &r.body).collect::<Vec<_>>())
            .unwrap()
            .contains("secret-of-a"),
        "the key is never in a prompt"
    );
    running.shutdown().await;
}

/// A change that makes a tenants file invalid.
type Breaks = Box<dyn Fn(&mut Value)>;

#[tokio::test]
async fn a_bad_tenants_file_is_a_usage_error() {
    let mock = MockLlmServer::start().await.unwrap();
    let fx = fixture(&mock);
    let good: Value = serde_json::from_str(&std::fs::read_to_string(&fx.file).unwrap()).unwrap();
    let broken: Vec<Breaks> = vec![
        Box::new(|v| v["tenants"][0]["id"] = json!("Bad Id")),
        Box::new(|v| v["tenants"][0]["tokenSha256"] = json!("ABC")),
        Box::new(|v| v["tenants"][1]["root"] = v["tenants"][0]["root"].clone()),
        Box::new(|v| {
            v["tenants"][1]["homeDir"] = json!(format!(
                "{}/sub",
                v["tenants"][0]["stateDir"].as_str().unwrap()
            ))
        }),
        Box::new(|v| v["tenants"][0]["root"] = json!("relative/ws")),
        Box::new(|v| v["tenants"][0]["extra"] = json!(1)),
    ];
    for (i, f) in broken.iter().enumerate() {
        let mut v = good.clone();
        f(&mut v);
        std::fs::write(&fx.file, v.to_string()).unwrap();
        let err = start(&fx.file)
            .await
            .err()
            .unwrap_or_else(|| panic!("case {i} started"));
        assert_eq!(err.exit_code(), 2, "case {i}: {err}");
    }
    // A key file others can read; a tenants file others can write.
    std::fs::write(&fx.file, good.to_string()).unwrap();
    std::fs::set_permissions(&fx.dirs[0].1, std::fs::Permissions::from_mode(0o644)).unwrap();
    assert_eq!(start(&fx.file).await.err().unwrap().exit_code(), 2);
    std::fs::set_permissions(&fx.dirs[0].1, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::set_permissions(&fx.file, std::fs::Permissions::from_mode(0o666)).unwrap();
    assert_eq!(start(&fx.file).await.err().unwrap().exit_code(), 2);
    // Only the required sandbox goes with tenants.
    std::fs::set_permissions(&fx.file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let off = cairn_serve::start(cairn_serve::ServeConfig {
        listen: Some("127.0.0.1:0".into()),
        tenants: Some(fx.file.clone()),
        sandbox: Some(cairn_policy::sandbox::SandboxMode::Off),
        ..cairn_serve::ServeConfig::default()
    })
    .await;
    assert_eq!(off.err().unwrap().exit_code(), 2);
}
