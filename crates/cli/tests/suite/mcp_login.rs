//! `cairn mcp login/logout/test/remove` against the testkit authorization server on 127.0.0.1
//! guarding the Streamable HTTP test server: the browser step driven over HTTP
//! (`--browser http`) or pasted on stdin, refresh, revocation, and no token in any file or
//! log at trace level.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use axum::Router;
use cairn_testkit::oauth::{OAuthFaults, OAuthServer};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;

async fn protected(faults: OAuthFaults) -> OAuthServer {
    let svc = cairn_mcp::testing::http_service(cairn_mcp::testing::Faults::default());
    OAuthServer::start(faults, Router::new().route_service("/", svc))
        .await
        .unwrap()
}

/// `cairn` with private config, data and state folders, no keyring (the encrypted file) and
/// logs at trace level.
fn cairn(home: &Path, ws: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cairn"));
    c.arg("mcp")
        .args(args)
        .arg("-w")
        .arg(ws)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("XDG_STATE_HOME", home.join(".local/state"))
        .env("CAIRN_STATE_DIR", home.join("state"))
        .env("CAIRN_MCP_CONFIG", home.join("no-user-mcp.json"))
        .env("CAIRN_MCP_NO_KEYRING", "1")
        .env("CAIRN_KEYSTORE", "memory")
        .env("CAIRN_LOG", "trace")
        .env_remove("CAIRN_MCP")
        .env_remove("CAIRN_MCP_LAZY")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    c
}

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

async fn run(mut c: Command) -> Out {
    let o = tokio::time::timeout(Duration::from_secs(60), c.output())
        .await
        .expect("cairn finished in time")
        .expect("cairn ran");
    Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).to_string(),
        stderr: String::from_utf8_lossy(&o.stderr).to_string(),
    }
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            files_under(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// No issued token in any output seen or any file under `dirs`.
fn no_token_anywhere(s: &OAuthServer, outputs: &str, dirs: &[&Path]) {
    let tokens = s.issued();
    assert!(!tokens.is_empty());
    let mut files = Vec::new();
    for d in dirs {
        files_under(d, &mut files);
    }
    assert!(
        files.iter().any(|f| f.ends_with("mcp-logins.enc")),
        "the encrypted login file: {files:?}"
    );
    for t in &tokens {
        assert!(!outputs.contains(t.as_str()), "a token in the output");
        for f in &files {
            let bytes = std::fs::read(f).unwrap();
            let text = String::from_utf8_lossy(&bytes);
            assert!(!text.contains(t.as_str()), "a token in {}", f.display());
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn login_test_refresh_logout_and_remove_through_the_cli() {
    let s = protected(OAuthFaults::default()).await;
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let (h, w) = (home.path(), ws.path());
    let mut seen = String::new();
    let mut keep = |o: &Out| seen.push_str(&format!("{}\n{}\n", o.stdout, o.stderr));

    let o = run(cairn(h, w, &["add", "hosted", "--url", &s.mcp_url()])).await;
    assert_eq!(o.code, 0, "{}", o.stderr);

    let o = run(cairn(h, w, &["test", "hosted"])).await;
    keep(&o);
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert!(
        o.stdout
            .contains("the server needs a login: run `cairn mcp login hosted`"),
        "{}",
        o.stdout
    );

    let o = run(cairn(h, w, &["login", "hosted", "--browser", "http"])).await;
    keep(&o);
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    assert!(o.stderr.contains("Open this URL to log in"), "{}", o.stderr);
    assert!(o.stderr.contains("no OS keyring here"), "{}", o.stderr);
    assert!(
        o.stdout.contains(&format!(
            "logged in to `hosted` at {}, scopes: mcp:read",
            s.base()
        )),
        "{}",
        o.stdout
    );

    let o = run(cairn(h, w, &["test", "hosted"])).await;
    keep(&o);
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    assert!(o.stdout.contains("hosted: ready"), "{}", o.stdout);
    assert!(o.stdout.contains("echo"), "{}", o.stdout);

    // The server drops the access token: the connection refreshes once and goes on.
    s.expire_access_tokens();
    let o = run(cairn(h, w, &["test", "hosted"])).await;
    keep(&o);
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    assert_eq!(s.refreshes(), 1);

    let o = run(cairn(h, w, &["logout", "hosted"])).await;
    keep(&o);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(o.stdout.trim(), "`hosted`: login revoked and forgotten");
    assert_eq!(s.revoked().len(), 1);
    let o = run(cairn(h, w, &["test", "hosted"])).await;
    keep(&o);
    assert_eq!(o.code, 1, "{}", o.stdout);

    // A removed server's login is revoked and forgotten with it.
    let o = run(cairn(h, w, &["login", "hosted", "--browser", "http"])).await;
    keep(&o);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let o = run(cairn(h, w, &["remove", "hosted"])).await;
    keep(&o);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout.contains("`hosted`: login revoked and forgotten"),
        "{}",
        o.stdout
    );
    assert_eq!(s.revoked().len(), 2);

    // The logs were at trace level (the HTTP client's and the MCP library's too).
    assert!(seen.contains("TRACE"), "no trace lines were logged");
    no_token_anywhere(&s, &seen, &[h, w]);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_redirect_url_pasted_on_stdin_completes_the_login() {
    let s = protected(OAuthFaults::default()).await;
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let (h, w) = (home.path(), ws.path());
    let o = run(cairn(h, w, &["add", "hosted", "--url", &s.mcp_url()])).await;
    assert_eq!(o.code, 0, "{}", o.stderr);

    let mut c = cairn(h, w, &["login", "hosted", "--browser", "none"]);
    c.stdin(Stdio::piped()).env("CAIRN_LOG", "warn");
    let mut child = c.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    // The line after "Open this URL to log in:" is the URL.
    let url = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(l) = lines.next_line().await.unwrap() {
            if let Some(u) = l.trim().strip_prefix(s.base()) {
                return format!("{}{u}", s.base());
            }
        }
        panic!("no authorization URL on stderr");
    })
    .await
    .unwrap();
    // "The browser on another machine": the redirect never reaches the listener.
    let landed = cairn_mcp::auth::redirect::follow_to_callback(&url::Url::parse(&url).unwrap())
        .await
        .unwrap();
    stdin
        .write_all(format!("{landed}\n").as_bytes())
        .await
        .unwrap();
    let out = tokio::time::timeout(Duration::from_secs(30), child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("logged in to `hosted`"), "{stdout}");
    let o = run(cairn(h, w, &["test", "hosted"])).await;
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_whose_server_needs_a_login_emits_mcp_login_needed() {
    let s = protected(OAuthFaults::default()).await;
    let llm = cairn_testkit::MockLlmServer::with_script(vec![cairn_testkit::Reply::text("ok")])
        .await
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let user_mcp = home.path().join("user-mcp.json");
    std::fs::write(
        &user_mcp,
        serde_json::json!({"mcpServers": {"hosted": {"type": "http", "url": s.mcp_url()}}})
            .to_string(),
    )
    .unwrap();
    let mut c = crate::common::json_run::cmd(ws.path(), state.path(), &llm, &["--json"]);
    c.arg("hello")
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join(".config"))
        .env("XDG_DATA_HOME", home.path().join(".local/share"))
        .env("CAIRN_MCP_CONFIG", &user_mcp)
        .env("CAIRN_MCP_NO_KEYRING", "1")
        .env("CAIRN_KEYSTORE", "memory")
        .env("CAIRN_SANDBOX", "off");
    let r = crate::common::json_run::run(c).await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    let needed = crate::common::json_run::of_type(&r.events, "mcp_login_needed");
    assert_eq!(needed.len(), 1, "{}", r.stdout);
    assert_eq!(needed[0]["data"]["server"], "hosted");
    assert_eq!(
        needed[0]["data"]["message"],
        "the server needs a login: run `cairn mcp login hosted`"
    );
    // Before the turn's events.
    assert_eq!(r.events[0]["type"], "mcp_login_needed", "{}", r.stdout);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_refused_for_a_missing_scope_steps_up_through_mcp_call() {
    let s = protected(OAuthFaults {
        call_scope: Some("mcp:write".into()),
        ..OAuthFaults::default()
    })
    .await;
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let (h, w) = (home.path(), ws.path());
    let mut seen = String::new();
    let mut keep = |o: &Out| seen.push_str(&format!("{}\n{}\n", o.stdout, o.stderr));
    let o = run(cairn(h, w, &["add", "hosted", "--url", &s.mcp_url()])).await;
    assert_eq!(o.code, 0, "{}", o.stderr);
    let o = run(cairn(h, w, &["login", "hosted", "--browser", "http"])).await;
    keep(&o);
    assert_eq!(o.code, 0, "{}", o.stderr);

    // Without --browser the refused call is said in words, and nothing else happens.
    let args = r#"{"text": "needs write"}"#;
    let o = run(cairn(h, w, &["call", "hosted", "echo", args])).await;
    keep(&o);
    assert_eq!(o.code, 1, "{}\n{}", o.stdout, o.stderr);
    assert!(
        o.stderr
            .contains("lacks the permission it needs (scopes: mcp:write)")
            && o.stderr.contains("run `cairn mcp login hosted`"),
        "{}",
        o.stderr
    );
    assert!(!o.stderr.contains("Open this URL"), "{}", o.stderr);

    // With it, the call logs in again for the union of the scopes and goes through.
    let o = run(cairn(
        h,
        w,
        &[
            "call",
            "hosted",
            "echo",
            args,
            "--browser",
            "http",
            "--json",
        ],
    ))
    .await;
    keep(&o);
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    assert!(
        o.stderr.contains("wants more permissions for `echo`"),
        "{}",
        o.stderr
    );
    assert!(
        o.stdout.contains("scopes: mcp:read mcp:write"),
        "{}",
        o.stdout
    );
    let last: serde_json::Value =
        serde_json::from_str(o.stdout.lines().last().unwrap_or_default()).unwrap();
    assert_eq!(last["ok"], true, "{last}");
    assert!(last["content"]
        .as_str()
        .unwrap_or_default()
        .contains("needs write"));

    // The stepped-up login is kept: the next call needs no login.
    let o = run(cairn(h, w, &["call", "hosted", "echo", args])).await;
    keep(&o);
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    no_token_anywhere(&s, &seen, &[h, w]);
}
