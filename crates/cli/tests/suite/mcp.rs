//! `cairn run` and `cairn mcp …` with a real stdio MCP server: started with
//! `CAIRN_CLI_TEST_MCP_SERVER=1` and only `stdio_mcp_server` selected, this test binary *is*
//! the MCP server (rmcp's server side, `cairn_mcp::testing`), so `.agent/mcp.json` can point at it.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use cairn_testkit::process::processes_with;
use cairn_testkit::{MockLlmServer, Reply};
use serde_json::{json, Value};
use tokio::process::Command;

const KEY: &str = "sk-test-SECRET-key-0123456789abcdef";
const SERVER_ENV: &str = "CAIRN_CLI_TEST_MCP_SERVER";

/// The stdio MCP server the tests configure: this test binary, started again with only this
/// (ignored) test selected and `CAIRN_CLI_TEST_MCP_SERVER=1`. libtest's own lines go to
/// /dev/null (`entry` starts it through `sh` with stdout moved to fd 3), and the server speaks
/// on that fd 3, made its stdout, then exits with the server's status before libtest prints.
#[test]
#[ignore = "the stdio MCP server the other tests start; does nothing on its own"]
fn stdio_mcp_server() {
    if !std::env::var(SERVER_ENV).is_ok_and(|v| v == "1") {
        return;
    }
    let protocol_out = std::fs::OpenOptions::new()
        .write(true)
        .open("/proc/self/fd/3")
        .unwrap();
    nix::unistd::dup2_stdout(&protocol_out).unwrap();
    drop(protocol_out);
    std::process::exit(serve());
}

fn serve() -> i32 {
    let faults = cairn_mcp::testing::Faults::from_args_and_env(&[]);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    match rt.block_on(cairn_mcp::testing::serve_stdio(
        cairn_mcp::testing::TestServer::new(faults),
    )) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("test server: {e}");
            1
        }
    }
}

/// A server entry in the `mcpServers` form pointing at this binary.
fn entry(marker: &str, faults: &str) -> Value {
    let exe = std::env::current_exe().unwrap();
    // `marker` is one more test-name filter, matching no test.
    let server_test = cairn_testkit::child::test_name(module_path!(), "stdio_mcp_server");
    json!({
        "command": "sh",
        "args": [
            "-c",
            "exec \"$0\" \"$@\" 3>&1 >/dev/null",
            exe.display().to_string(),
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
            server_test,
            marker,
        ],
        "env": { SERVER_ENV: "1", "CAIRN_TEST_MCP_FAULTS": faults }
    })
}

fn write_config(ws: &Path, servers: Value) {
    std::fs::create_dir_all(ws.join(".agent")).unwrap();
    std::fs::write(
        ws.join(".agent/mcp.json"),
        serde_json::to_string_pretty(&json!({ "mcpServers": servers })).unwrap(),
    )
    .unwrap();
}

/// `cairn` with a private config dir, so no user-level MCP file or keyring leaks in. A
/// project's servers run inside the sandbox, whose home is empty: the sandbox settings
/// name this test binary's folder readable, so the server (this binary) can start there.
fn cairn(home: &Path) -> Command {
    let settings = home.join(".config/cairn/sandbox.toml");
    if !settings.exists() {
        let exe = std::env::current_exe().unwrap();
        std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
        std::fs::write(
            &settings,
            format!(
                "extraReadable = [{:?}]\n",
                exe.parent().unwrap().display().to_string()
            ),
        )
        .unwrap();
    }
    let mut c = Command::new(env!("CARGO_BIN_EXE_cairn"));
    c.env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("CAIRN_MCP_CONFIG", home.join("no-user-mcp.json"))
        .env("CAIRN_MCP_NO_KEYRING", "1")
        .env_remove("CAIRN_MCP")
        .env_remove("CAIRN_MCP_LAZY")
        .env_remove(SERVER_ENV)
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

async fn output(mut c: Command) -> Out {
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

/// `cairn run --json` in auto mode, every approval allowed, no snapshots, against `server`.
async fn run_auto(
    home: &Path,
    ws: &Path,
    state: &Path,
    server: &MockLlmServer,
    prompt: &str,
    envs: &[(&str, &str)],
) -> Out {
    let mut c = cairn(home);
    c.arg("run")
        .arg("--workspace")
        .arg(ws)
        .arg("--state-dir")
        .arg(state)
        .arg("--base-url")
        .arg(server.base_url())
        .args([
            "--model",
            "mock-model",
            "--mode",
            "auto",
            "--approve",
            "allow",
        ])
        .args(["--vcs", "off", "--json", prompt])
        .env_remove("OPENAI_BASE_URL")
        .env_remove("OPENAI_MODEL")
        .env_remove("CAIRN_MODEL")
        .env("OPENAI_API_KEY", KEY)
        .envs(envs.iter().copied());
    output(c).await
}

fn marker(tag: &str) -> String {
    format!("marker=cairn-cli-mcp-{tag}-{}", std::process::id())
}

/// The user trusts the workspace's project servers (as they are defined now).
async fn trust_project(home: &Path, ws: &Path) {
    let mut c = cairn(home);
    c.args(["mcp", "trust", "-w"]).arg(ws);
    let r = output(c).await;
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
}

/// `--json` output as events.
fn parsed(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn run_calls_a_tool_of_an_mcp_servers_config_server() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let m = marker("run");
    write_config(ws.path(), json!({ "probe": entry(&m, "") }));
    let server = MockLlmServer::with_script(vec![
        Reply::tool_call(
            "c1",
            "mcp__probe__echo",
            json!({"text": "PING-FROM-MCP-77"}),
        ),
        Reply::text("The server answered."),
    ])
    .await
    .unwrap();
    // The repository's server starts only once the user trusted it.
    let mut c = cairn(home.path());
    c.args(["mcp", "trust", "-w"]).arg(ws.path());
    let r = output(c).await;
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    assert!(r.stdout.contains("trusted `probe`"), "{}", r.stdout);
    let r = run_auto(
        home.path(),
        ws.path(),
        state.path(),
        &server,
        "call the probe",
        &[],
    )
    .await;
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    let events: Vec<Value> = r
        .stdout
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let finished: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "tool_finished")
        .collect();
    assert_eq!(finished.len(), 1, "{events:?}");
    assert_eq!(finished[0]["data"]["name"], "mcp__probe__echo");
    assert_eq!(finished[0]["data"]["status"], "ok", "{:?}", finished[0]);
    assert_eq!(events.last().unwrap()["data"]["status"], "completed");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    let offered = reqs[0].body["tools"].to_string();
    assert!(
        offered.contains("mcp__probe__echo"),
        "the first request offers the MCP tools: {offered}"
    );
    let tool_msg = reqs[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .expect("a tool message")
        .clone();
    assert_eq!(tool_msg["content"], "PING-FROM-MCP-77", "{tool_msg}");
    assert!(
        processes_with(&m).is_empty(),
        "the MCP server outlived `cairn run`"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn mcp_list_test_add_remove() {
    let ws = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let m = marker("list");
    write_config(
        ws.path(),
        json!({ "probe": entry(&m, ""), "broken": entry(&m, "exit-initialize"), "bad": { "command": 42 } }),
    );
    // Defined by the repository and not trusted yet: nothing starts, and it says why.
    let mut c = cairn(home.path());
    c.args(["mcp", "list", "--json", "-w"]).arg(ws.path());
    let r = output(c).await;
    assert!(r.stdout.contains("not trusted"), "{}", r.stdout);
    assert!(processes_with(&m).is_empty(), "an untrusted server ran");
    let mut c = cairn(home.path());
    c.args(["mcp", "test", "probe", "-w"]).arg(ws.path());
    let r = output(c).await;
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("cairn mcp trust probe"), "{}", r.stderr);
    let mut c = cairn(home.path());
    c.args(["mcp", "trust", "probe", "broken", "-w"])
        .arg(ws.path());
    assert_eq!(output(c).await.code, 0);

    let mut c = cairn(home.path());
    c.args(["mcp", "list", "--json", "-w"]).arg(ws.path());
    let r = output(c).await;
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    assert!(
        r.stderr.contains("server `bad`, field `command`"),
        "config warning: {}",
        r.stderr
    );
    let rows: Vec<Value> = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let row = |n: &str| {
        rows.iter()
            .find(|r| r["name"] == n)
            .unwrap_or_else(|| panic!("{n} in {rows:?}"))
            .clone()
    };
    assert_eq!(
        row("probe")["status"],
        json!({"state": "ready", "tools": 13})
    );
    assert_eq!(row("broken")["status"]["state"], "failed");
    assert!(row("broken")["status"]["reason"]
        .as_str()
        .unwrap()
        .contains("exit status 3"));
    assert_eq!(
        row("ocr")["status"]["state"]
            .as_str()
            .map(|s| s == "disabled" || s == "ready"),
        Some(true)
    );

    let mut c = cairn(home.path());
    c.args(["mcp", "test", "probe", "-w"]).arg(ws.path());
    let r = output(c).await;
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    assert!(r.stdout.contains("probe: ready in "), "{}", r.stdout);
    assert!(r.stdout.contains("  echo"), "{}", r.stdout);

    let mut c = cairn(home.path());
    c.args(["mcp", "test", "broken", "--json", "-w"])
        .arg(ws.path());
    let r = output(c).await;
    assert_eq!(r.code, 1, "stderr: {}", r.stderr);
    let v: Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert_eq!(v["ok"], false);
    assert!(
        v["status"]["reason"]
            .as_str()
            .unwrap()
            .contains("TEST_API_KEY"),
        "{v}"
    );

    let mut c = cairn(home.path());
    c.args(["mcp", "test", "nope", "-w"]).arg(ws.path());
    assert_eq!(output(c).await.code, 2);

    let mut c = cairn(home.path());
    c.args(["mcp", "add", "extra", "--env", "K=${TOKEN}", "-w"])
        .arg(ws.path())
        .args(["--", "npx", "-y", "some-server"]);
    let r = output(c).await;
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    let cfg: Value =
        serde_json::from_str(&std::fs::read_to_string(ws.path().join(".agent/mcp.json")).unwrap())
            .unwrap();
    assert_eq!(
        cfg["mcpServers"]["extra"],
        json!({"command": "npx", "args": ["-y", "some-server"], "env": {"K": "${TOKEN}"}})
    );
    assert_eq!(
        cfg["mcpServers"]["probe"]["env"][SERVER_ENV], "1",
        "other entries kept"
    );

    let mut c = cairn(home.path());
    c.args([
        "mcp",
        "add",
        "extra",
        "--url",
        "http://127.0.0.1:9/mcp",
        "-w",
    ])
    .arg(ws.path());
    assert_eq!(output(c).await.code, 2, "duplicate names are refused");

    let mut c = cairn(home.path());
    c.args(["mcp", "remove", "extra", "-w"]).arg(ws.path());
    assert_eq!(output(c).await.code, 0);
    let cfg: Value =
        serde_json::from_str(&std::fs::read_to_string(ws.path().join(".agent/mcp.json")).unwrap())
            .unwrap();
    assert!(cfg["mcpServers"].get("extra").is_none());
    assert!(
        processes_with(&m).is_empty(),
        "no server outlived `cairn mcp`"
    );

    // A server the user added is trusted as added; a change to a trusted definition (here
    // by the repository) withdraws the trust.
    let mut c = cairn(home.path());
    c.args(["mcp", "list", "--no-start", "--json", "-w"])
        .arg(ws.path());
    let r = output(c).await;
    assert!(!r.stdout.contains("not trusted"), "{}", r.stdout);
    let mut changed = cfg.clone();
    changed["mcpServers"]["probe"]["args"]
        .as_array_mut()
        .unwrap()
        .push(json!("--extra"));
    std::fs::write(
        ws.path().join(".agent/mcp.json"),
        serde_json::to_string(&changed).unwrap(),
    )
    .unwrap();
    let mut c = cairn(home.path());
    c.args(["mcp", "list", "--no-start", "--json", "-w"])
        .arg(ws.path());
    let r = output(c).await;
    let probe = r
        .stdout
        .lines()
        .find(|l| l.contains("\"probe\""))
        .unwrap_or_default()
        .to_string();
    assert!(probe.contains("not trusted"), "{probe}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_trusted_repositorys_server_starts_in_its_worktrees_too() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("repo");
    cairn_testkit::git::repo_with(&ws, &[("x", "x\n")]);
    let state = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let m = marker("worktree");
    write_config(&ws, json!({ "probe": entry(&m, "") }));
    cairn_testkit::git::git(&ws, &["add", "-A"]);
    cairn_testkit::git::git(&ws, &["commit", "-q", "-m", "mcp"]);
    let mut c = cairn(home.path());
    c.args(["mcp", "trust", "-w"]).arg(&ws);
    let r = output(c).await;
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    let server = MockLlmServer::with_script(vec![Reply::text("ok")])
        .await
        .unwrap();
    let mut c = cairn(home.path());
    c.arg("run")
        .arg("--workspace")
        .arg(&ws)
        .arg("--state-dir")
        .arg(state.path())
        .arg("--base-url")
        .arg(server.base_url())
        .args(["--model", "mock-model", "--worktree", "w", "--json", "hi"])
        .env("CAIRN_WORKTREES_DIR", dir.path().join("trees"))
        .env_remove("OPENAI_BASE_URL")
        .env_remove("OPENAI_MODEL")
        .env_remove("CAIRN_MODEL")
        .env("OPENAI_API_KEY", KEY);
    let r = output(c).await;
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    assert!(
        !r.stderr.contains("not trusted"),
        "the worktree's copy of the same definitions is trusted: {}",
        r.stderr
    );
    let offered = server.requests()[0].body["tools"].to_string();
    assert!(
        offered.contains("mcp__probe__echo"),
        "the trusted server started in the worktree: {offered}"
    );
}

/// A trusted project's stdio server runs inside the session's sandbox (issue 35): what its
/// command runs before it serves cannot write outside the workspace nor read a hidden file,
/// and the server still starts and answers.
#[tokio::test(flavor = "multi_thread")]
async fn a_projects_stdio_server_runs_inside_the_sandbox() {
    if !(cairn_policy::sandbox::bwrap_path().is_some() && cairn_policy::sandbox::bwrap_works()) {
        assert!(
            std::env::var("CAIRN_SANDBOX_TEST").as_deref() != Ok("1"),
            "CAIRN_SANDBOX_TEST=1 but bubblewrap cannot run here"
        );
        println!("SKIPPED: bubblewrap cannot run here");
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir_in("/var/tmp").unwrap();
    let outside = outside.path().canonicalize().unwrap();
    let secret = outside.join("secret.txt");
    std::fs::write(&secret, "hidden-secret-value\n").unwrap();
    let exe = std::env::current_exe().unwrap();
    let settings = home.path().join(".config/cairn/sandbox.toml");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(
        &settings,
        format!(
            "extraReadable = [{:?}]\nhidden = [{:?}]\n",
            exe.parent().unwrap().display().to_string(),
            secret.display().to_string()
        ),
    )
    .unwrap();
    let m = marker("sandboxed");
    let mut probe = entry(&m, "");
    let before = format!(
        "touch {o}/escaped; cat {s} > mcp-read.txt; echo started > mcp-ran.txt; ",
        o = outside.display(),
        s = secret.display()
    );
    let script = format!("{before}{}", probe["args"][1].as_str().unwrap());
    probe["args"][1] = json!(script);
    write_config(ws.path(), json!({ "probe": probe }));
    let mut c = cairn(home.path());
    c.args(["mcp", "trust", "-w"]).arg(ws.path());
    assert_eq!(output(c).await.code, 0);
    let server = MockLlmServer::with_script(vec![
        Reply::tool_call("c1", "mcp__probe__echo", json!({"text": "PING-INSIDE"})),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let mut c = cairn(home.path());
    c.arg("run")
        .arg("--workspace")
        .arg(ws.path())
        .arg("--state-dir")
        .arg(state.path())
        .arg("--base-url")
        .arg(server.base_url())
        .args(["--model", "m", "--mode", "auto", "--sandbox", "required"])
        .args(["--approve", "allow", "--vcs", "off", "--json", "go"])
        .env_remove("OPENAI_BASE_URL")
        .env("OPENAI_API_KEY", KEY);
    let r = output(c).await;
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    assert!(r.stdout.contains("\"status\":\"ok\""), "{}", r.stdout);
    assert_eq!(
        std::fs::read_to_string(ws.path().join("mcp-ran.txt")).unwrap_or_default(),
        "started\n"
    );
    assert!(
        !outside.join("escaped").exists(),
        "the server wrote outside"
    );
    let read = std::fs::read_to_string(ws.path().join("mcp-read.txt")).unwrap_or_default();
    assert!(
        !read.contains("hidden-secret-value"),
        "the server read a hidden file"
    );
}

/// Claude Code's project `.mcp.json` is read as the project's: its servers wait for the
/// workspace trust, then start.
#[tokio::test(flavor = "multi_thread")]
async fn a_claude_code_project_mcp_json_server_starts_after_trust_and_not_before() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let m = marker("claude-mcp-json");
    std::fs::write(
        ws.path().join(".mcp.json"),
        serde_json::to_string_pretty(&json!({ "mcpServers": { "probe": entry(&m, "") } })).unwrap(),
    )
    .unwrap();
    let run = |server: &MockLlmServer| {
        let mut c = cairn(home.path());
        c.arg("run")
            .arg("--workspace")
            .arg(ws.path())
            .arg("--state-dir")
            .arg(state.path())
            .arg("--base-url")
            .arg(server.base_url())
            .args(["--model", "mock-model", "--json", "hi"])
            .env_remove("OPENAI_BASE_URL")
            .env_remove("OPENAI_MODEL")
            .env_remove("CAIRN_MODEL")
            .env("OPENAI_API_KEY", KEY);
        c
    };
    let server = MockLlmServer::with_script(vec![Reply::text("ok")])
        .await
        .unwrap();
    let r = output(run(&server)).await;
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    assert!(
        r.stderr.contains("probe"),
        "the held server is named: {}",
        r.stderr
    );
    let offered = server.requests()[0].body["tools"].to_string();
    assert!(
        !offered.contains("mcp__probe__"),
        "started before trust: {offered}"
    );

    let mut c = cairn(home.path());
    c.args(["mcp", "trust", "-w"]).arg(ws.path());
    let t = output(c).await;
    assert_eq!(t.code, 0, "stderr: {}", t.stderr);
    let server = MockLlmServer::with_script(vec![Reply::text("ok")])
        .await
        .unwrap();
    let r = output(run(&server)).await;
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    let offered = server.requests()[0].body["tools"].to_string();
    assert!(
        offered.contains("mcp__probe__echo"),
        "the trusted .mcp.json server started: {offered}"
    );
}

/// An MCP tool's picture reaches a model that sees images as an image part of the next
/// request, as `read_image`'s does; a text-only model gets only the text placeholder.
#[tokio::test(flavor = "multi_thread")]
async fn an_mcp_tools_image_reaches_a_model_that_sees_images() {
    for vision in ["1", "0"] {
        let ws = tempfile::tempdir().unwrap();
        let state = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let m = marker(&format!("image{vision}"));
        write_config(ws.path(), json!({ "probe": entry(&m, "") }));
        let server = MockLlmServer::with_script(vec![
            Reply::tool_call("c1", "mcp__probe__image", json!({})),
            Reply::text("Seen."),
        ])
        .await
        .unwrap();
        let mut c = cairn(home.path());
        c.args(["mcp", "trust", "-w"]).arg(ws.path());
        assert_eq!(output(c).await.code, 0);
        let envs = [("CAIRN_MODEL_VISION", vision)];
        let r = run_auto(
            home.path(),
            ws.path(),
            state.path(),
            &server,
            "show me the picture",
            &envs,
        )
        .await;
        assert_eq!(r.code, 0, "stderr: {}", r.stderr);
        let reqs = server.requests();
        assert_eq!(reqs.len(), 2, "{}", r.stdout);
        let body = reqs[1].body["messages"].to_string();
        assert!(
            body.contains("[image: image/png, "),
            "vision={vision}: {body}"
        );
        if vision == "1" {
            assert!(
                body.contains("data:image/png;base64,"),
                "the picture is an image part: {body}"
            );
        } else {
            assert!(!body.contains("image_url"), "no image part: {body}");
        }
        assert!(processes_with(&m).is_empty());
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_trusted_servers_instructions_reach_the_system_prompt_labelled_as_its_own() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let m = marker("instructions");
    write_config(ws.path(), json!({ "probe": entry(&m, "instructions") }));
    let server = MockLlmServer::with_script(vec![Reply::text("Noted."), Reply::text("Again.")])
        .await
        .unwrap();
    let system = |i: usize| server.requests()[i].body["messages"][0]["content"].to_string();
    // Untrusted: the repository's server does not start, so its words are nowhere.
    let r = run_auto(home.path(), ws.path(), state.path(), &server, "hi", &[]).await;
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    assert!(
        !system(0).contains("CAIRN-TEST-SERVER-INSTRUCTIONS"),
        "{}",
        system(0)
    );
    trust_project(home.path(), ws.path()).await;
    let r = run_auto(home.path(), ws.path(), state.path(), &server, "hi", &[]).await;
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    let sys = system(1);
    assert!(sys.contains("# Instructions from MCP servers"), "{sys}");
    assert!(
        sys.contains(&format!(
            "## Server `probe`\\n{}",
            cairn_mcp::testing::TEST_INSTRUCTIONS
        )),
        "{sys}"
    );
    assert!(sys.contains("not the user's"), "{sys}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_mcp_servers_prompt_runs_as_a_slash_command() {
    let entry = match crate::common::everything::entry() {
        Ok(e) => e,
        Err(why) => {
            eprintln!("SKIPPED an_mcp_servers_prompt_runs_as_a_slash_command: {why}");
            return;
        }
    };
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    // The user's own server (user-level config: no trust needed).
    std::fs::write(
        home.path().join("no-user-mcp.json"),
        json!({"mcpServers": {"every": {"command": "node", "args": [entry, "stdio"]}}}).to_string(),
    )
    .unwrap();
    let server = MockLlmServer::with_script(vec![Reply::text("Mild, with rain.")])
        .await
        .unwrap();
    let r = run_auto(
        home.path(),
        ws.path(),
        state.path(),
        &server,
        "/mcp__every__args-prompt Paris state=France",
        &[],
    )
    .await;
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    let sent = server.requests()[0].body["messages"].to_string();
    assert!(sent.contains("What's weather in Paris, France?"), "{sent}");
    // A required argument missing: refused in words before any turn.
    let r = run_auto(
        home.path(),
        ws.path(),
        state.path(),
        &server,
        "/mcp__every__args-prompt",
        &[],
    )
    .await;
    assert_eq!(r.code, 2, "stdout: {}\nstderr: {}", r.stdout, r.stderr);
    assert!(r.stderr.contains("needs city"), "{}", r.stderr);
    assert!(
        r.stderr.contains("/mcp__every__args-prompt <city> [state]"),
        "{}",
        r.stderr
    );
    assert_eq!(server.requests().len(), 1, "no turn ran");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_servers_log_message_during_its_tool_call_is_an_mcp_log_event() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let m = marker("log");
    write_config(ws.path(), json!({ "probe": entry(&m, "") }));
    let server = MockLlmServer::with_script(vec![
        Reply::tool_call(
            "c1",
            "mcp__probe__echo",
            json!({"text": "disk almost full: 93%", "log": "warning"}),
        ),
        Reply::text("Noted."),
    ])
    .await
    .unwrap();
    trust_project(home.path(), ws.path()).await;
    let r = run_auto(home.path(), ws.path(), state.path(), &server, "echo", &[]).await;
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    let events = parsed(&r.stdout);
    let logs: Vec<&Value> = events.iter().filter(|e| e["type"] == "mcp_log").collect();
    assert_eq!(logs.len(), 1, "{events:?}");
    let d = &logs[0]["data"];
    assert_eq!(d["server"], "probe");
    assert_eq!(d["level"], "warning");
    assert_eq!(d["logger"], "probe");
    assert_eq!(d["message"], "disk almost full: 93%");
    assert_eq!(d["reqId"], "c1");
}
