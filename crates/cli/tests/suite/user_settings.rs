//! The user's settings (one file in the config folder, one precedence): `cairn config`
//! shows each value with its source, and what it sets reaches `cairn run` (vision model,
//! web search, tools turned off, retries, language), as the flags do.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use base64::Engine as _;
use cairn_testkit::{Fault, MockLlmServer, Reply};
use serde_json::{json, Value};
use tokio::process::Command;

use crate::common::json_run::{last_is_turn_end, of_type, run, Run, KEY};

/// A config folder of the test's own (`CAIRN_CONFIG_FILE`, `CAIRN_SANDBOX_FILE`).
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        Home {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn file(&self) -> PathBuf {
        self.dir.path().join("cairn/config.toml")
    }

    fn isolate(&self, c: &mut Command) {
        c.env("CAIRN_CONFIG_FILE", self.file())
            .env(
                "CAIRN_SANDBOX_FILE",
                self.dir.path().join("cairn/sandbox.toml"),
            )
            .env("CAIRN_STATE_DIR", self.dir.path().join("state"))
            .env("CAIRN_KEYSTORE", "memory")
            .env("CAIRN_NO_KEYRING", "1");
        for var in [
            "NETWORK_RETRY_MAX",
            "CAIRN_VISION_MODEL",
            "CAIRN_VISION_PROVIDER",
            "CAIRN_MODEL_VISION",
            "SEARXNG_URL",
            "BRAVE_API_KEY",
            "TAVILY_API_KEY",
            "CAIRN_SEARCH_PROVIDER",
            "CAIRN_LANG",
            "CAIRN_DISABLED_TOOLS",
            "CAIRN_APPROVAL_TIMEOUT",
        ] {
            c.env_remove(var);
        }
    }

    /// `cairn config ARGS…` to its end: (exit code, stdout, stderr).
    async fn config(&self, args: &[&str]) -> (i32, String, String) {
        self.config_env(args, &[]).await
    }

    async fn config_env(&self, args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
        let mut c = Command::new(env!("CARGO_BIN_EXE_cairn"));
        c.arg("config").args(args).stdin(Stdio::null());
        self.isolate(&mut c);
        for (k, v) in env {
            c.env(k, v);
        }
        let out = c.output().await.unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    async fn set(&self, key: &str, value: &str) {
        let (code, _, err) = self.config(&["set", key, value]).await;
        assert_eq!(code, 0, "{err}");
    }

    /// `cairn run --json --mode auto` against `server` with this config folder.
    fn run_cmd(&self, ws: &Path, state: &Path, server: &MockLlmServer, extra: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_cairn"));
        c.arg("run")
            .arg("--workspace")
            .arg(ws)
            .arg("--state-dir")
            .arg(state)
            .args(["--base-url", &server.base_url()])
            .args(if extra.contains(&"--model") {
                &[][..]
            } else {
                &["--model", "mock-model"][..]
            })
            .args(["--mode", "auto", "--json"])
            .args(extra)
            .env_remove("OPENAI_BASE_URL")
            .env_remove("OPENAI_MODEL")
            .env_remove("CAIRN_MODEL")
            .env_remove("OPENAI_FORCE_API_MODE")
            .env("OPENAI_API_KEY", KEY)
            .env("NETWORK_RETRY_BASE_MS", "20")
            .env("CAIRN_SANDBOX", "off")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        self.isolate(&mut c);
        c
    }
}

/// The tool names the first request offered.
fn offered(server: &MockLlmServer) -> Vec<String> {
    server.requests()[0].body["tools"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

async fn one_turn(home: &Home, extra: &[&str], replies: Vec<Reply>) -> (Run, MockLlmServer) {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let server = MockLlmServer::with_script(replies).await.unwrap();
    let mut args = extra.to_vec();
    args.push("hi");
    let r = run(home.run_cmd(ws.path(), state.path(), &server, &args)).await;
    (r, server)
}

fn json_of(stdout: &str) -> Value {
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn cairn_config_shows_each_value_with_where_it_came_from() {
    let home = Home::new();
    let (code, out, _) = home.config(&["get", "retries", "--json"]).await;
    assert_eq!(code, 0);
    let v = json_of(&out);
    assert_eq!(
        (v["value"].clone(), v["source"].clone()),
        (Value::Null, json!("default"))
    );
    assert_eq!(v["default"], "2");

    home.set("retries", "4").await;
    let v = json_of(&home.config(&["get", "retries", "--json"]).await.1);
    assert_eq!(
        (v["value"].clone(), v["source"].clone()),
        (json!("4"), json!("file"))
    );
    assert_eq!(v["file"], home.file().display().to_string());
    // The environment wins over the file, and says so.
    let (_, out, _) = home
        .config_env(&["get", "retries", "--json"], &[("NETWORK_RETRY_MAX", "6")])
        .await;
    let v = json_of(&out);
    assert_eq!(
        (v["value"].clone(), v["source"].clone(), v["env"].clone()),
        (json!("6"), json!("env"), json!("NETWORK_RETRY_MAX"))
    );
    let (_, _, err) = home
        .config_env(&["set", "retries", "5"], &[("NETWORK_RETRY_MAX", "6")])
        .await;
    assert!(err.contains("NETWORK_RETRY_MAX is set and wins"), "{err}");

    // list: every key, one line each, with its source.
    let (code, out, _) = home.config(&["list", "--json"]).await;
    assert_eq!(code, 0);
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let keys: Vec<&str> = lines.iter().map(|l| l["key"].as_str().unwrap()).collect();
    for k in [
        "model",
        "language",
        "vision.model",
        "web_search.provider",
        "sandbox.mode",
    ] {
        assert!(keys.contains(&k), "{k} listed: {keys:?}");
    }
    let (_, text, _) = home.config(&["list"]).await;
    let line = text.lines().find(|l| l.starts_with("retries ")).unwrap();
    assert!(line.contains('5') && line.contains("file "), "{line}");

    // Values are checked; unknown keys and bad values are usage errors (exit 2).
    assert_eq!(home.config(&["set", "retries", "many"]).await.0, 2);
    assert_eq!(home.config(&["set", "language", "fr"]).await.0, 2);
    assert_eq!(home.config(&["get", "no.such.key"]).await.0, 2);
    home.set("language", "zh_tw").await;
    let text = std::fs::read_to_string(home.file()).unwrap();
    assert!(text.contains("language = \"zh-TW\""), "{text}");
    // The sandbox's keys live in sandbox.toml, checked by its own rules.
    home.set("sandbox.shell_policy", "sandbox").await;
    let sandbox = std::fs::read_to_string(home.dir.path().join("cairn/sandbox.toml")).unwrap();
    assert!(sandbox.contains("shellPolicy = \"sandbox\""), "{sandbox}");
    // unset: back to the default.
    assert_eq!(home.config(&["unset", "retries"]).await.0, 0);
    let v = json_of(&home.config(&["get", "retries", "--json"]).await.1);
    assert_eq!(v["source"], "default");
    assert_eq!(
        home.config(&["path"]).await.1.trim(),
        home.file().display().to_string()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_vision_model_set_only_with_cairn_config_makes_describe_image_work() {
    // Without it, a text-only session model has no describe_image.
    let home = Home::new();
    let (r, server) = one_turn(&home, &[], vec![Reply::text("ok")]).await;
    last_is_turn_end(&r, "completed");
    assert!(!offered(&server).contains(&"describe_image".to_string()));

    home.set("vision.model", "vis-model").await;
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let png = base64::engine::general_purpose::STANDARD
        .decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")
        .unwrap();
    std::fs::write(ws.path().join("pic.png"), png).unwrap();
    let server = MockLlmServer::with_script(vec![
        Reply::tool_call("c1", "describe_image", json!({"path": "pic.png"})),
        Reply::text("a single blue pixel"),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let r = run(home.run_cmd(ws.path(), state.path(), &server, &["describe pic.png"])).await;
    last_is_turn_end(&r, "completed");
    assert!(offered(&server).contains(&"describe_image".to_string()));
    let finished = of_type(&r.events, "tool_finished");
    assert_eq!(finished[0]["data"]["status"], "ok", "{}", r.stderr);
    let models: Vec<Value> = server
        .requests()
        .iter()
        .map(|q| q.body["model"].clone())
        .collect();
    assert!(models.contains(&json!("vis-model")), "{models:?}");
    let last = server.requests().last().unwrap().body.to_string();
    assert!(
        last.contains("a single blue pixel"),
        "the description reached the session"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_web_search_setting_set_with_cairn_config_offers_web_search() {
    let home = Home::new();
    let (_, server) = one_turn(&home, &[], vec![Reply::text("ok")]).await;
    assert!(!offered(&server).contains(&"web_search".to_string()));
    home.set("web_search.searxng_url", "http://127.0.0.1:9/")
        .await;
    let (r, server) = one_turn(&home, &[], vec![Reply::text("ok")]).await;
    last_is_turn_end(&r, "completed");
    assert!(offered(&server).contains(&"web_search".to_string()));
    // A search key goes to the keyring (never the file) and picks its provider.
    let (code, _, err) = home
        .config(&["set", "web_search.tavily_key", "tvly-0123456789abcdef"])
        .await;
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("keyring"), "{err}");
    let text = std::fs::read_to_string(home.file()).unwrap();
    assert!(
        !text.contains("tvly-") && text.contains("provider = \"tavily\""),
        "{text}"
    );
}

/// A search key set with `cairn config` lives in the OS keyring (the test command's throwaway
/// gnome-keyring on its D-Bus session), and a later run reads it from there and offers
/// `web_search`. Without a session bus (a bare `cargo test`) there is no keyring to use.
#[tokio::test(flavor = "multi_thread")]
async fn a_web_search_key_set_with_cairn_config_in_the_keyring_offers_web_search() {
    if std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_none() {
        eprintln!("SKIPPED: no D-Bus session, so no OS keyring (the test command provides one)");
        return;
    }
    let home = Home::new();
    let real_keyring = |c: &mut Command| {
        c.env_remove("CAIRN_KEYSTORE")
            .env_remove("CAIRN_NO_KEYRING");
    };
    let mut c = Command::new(env!("CARGO_BIN_EXE_cairn"));
    c.args([
        "config",
        "set",
        "web_search.brave_key",
        "BSA-test-0123456789abcdef",
    ])
    .stdin(Stdio::null());
    home.isolate(&mut c);
    real_keyring(&mut c);
    let out = c.output().await.unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let server = MockLlmServer::with_script(vec![Reply::text("ok")])
        .await
        .unwrap();
    let mut c = home.run_cmd(ws.path(), state.path(), &server, &["hi"]);
    real_keyring(&mut c);
    let r = run(c).await;
    last_is_turn_end(&r, "completed");
    assert!(offered(&server).contains(&"web_search".to_string()));
    // The key is in no file of the config folder.
    let text = std::fs::read_to_string(home.file()).unwrap();
    assert!(!text.contains("BSA-test"), "{text}");
    let mut c = Command::new(env!("CARGO_BIN_EXE_cairn"));
    c.args(["config", "unset", "web_search.brave_key"])
        .stdin(Stdio::null());
    home.isolate(&mut c);
    real_keyring(&mut c);
    let out = c.output().await.unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_turned_off_by_setting_or_flag_is_not_offered() {
    let home = Home::new();
    home.set("tools.disabled", "grep").await;
    home.set("tools.git_log.enabled", "false").await;
    home.set("tools.run_shell.timeout_ms", "5000").await;
    let (r, server) = one_turn(
        &home,
        &["--disable-tool", "list_files"],
        vec![Reply::text("ok")],
    )
    .await;
    last_is_turn_end(&r, "completed");
    let tools = offered(&server);
    for off in ["grep", "git_log", "list_files"] {
        assert!(
            !tools.contains(&off.to_string()),
            "{off} offered: {tools:?}"
        );
    }
    assert!(tools.contains(&"read_file".to_string()), "{tools:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn retries_come_from_the_flag_over_the_setting() {
    let home = Home::new();
    home.set("retries", "1").await;
    let script = || vec![Reply::fault(Fault::server_error()), Reply::text("ok")];
    let (r, server) = one_turn(&home, &[], script()).await;
    last_is_turn_end(&r, "completed");
    assert_eq!(server.requests().len(), 2, "one retry from the setting");
    let (r, server) = one_turn(&home, &["--retries", "0"], script()).await;
    last_is_turn_end(&r, "error");
    assert_eq!(server.requests().len(), 1, "the flag wins: no retry");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_prompt_language_comes_from_the_flag_over_the_setting() {
    let cjk = |s: &str| s.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c));
    let hangul = |s: &str| s.chars().any(|c| ('\u{ac00}'..='\u{d7af}').contains(&c));
    let system =
        |server: &MockLlmServer| server.requests()[0].body["messages"][0]["content"].to_string();
    let home = Home::new();
    let (_, server) = one_turn(&home, &[], vec![Reply::text("ok")]).await;
    assert!(!cjk(&system(&server)) && !hangul(&system(&server)));
    home.set("language", "ko").await;
    let (_, server) = one_turn(&home, &[], vec![Reply::text("ok")]).await;
    assert!(hangul(&system(&server)), "the setting");
    let (_, server) = one_turn(&home, &["--lang", "zh"], vec![Reply::text("ok")]).await;
    assert!(
        cjk(&system(&server)) && !hangul(&system(&server)),
        "the flag wins"
    );
    let (r, _) = one_turn(&home, &["--lang", "fr"], vec![Reply::text("ok")]).await;
    assert_eq!(r.code, 2, "{}", r.stderr);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_answer_cap_and_the_reasoning_level_come_from_the_flag_over_the_setting() {
    let home = Home::new();
    let cap = |server: &MockLlmServer| server.requests()[0].body["max_completion_tokens"].clone();
    let (_, server) = one_turn(&home, &[], vec![Reply::text("ok")]).await;
    assert_eq!(cap(&server), Value::Null, "the model's by default");
    home.set("max_output_tokens", "777").await;
    let (r, server) = one_turn(&home, &[], vec![Reply::text("ok")]).await;
    last_is_turn_end(&r, "completed");
    assert_eq!(cap(&server), json!(777));
    let (_, server) = one_turn(
        &home,
        &["--max-output-tokens", "123"],
        vec![Reply::text("ok")],
    )
    .await;
    assert_eq!(cap(&server), json!(123));

    home.set("reasoning", "low").await;
    let effort = |server: &MockLlmServer| {
        let b = &server.requests()[0].body;
        if b["reasoning_effort"].is_null() {
            b["reasoning"]["effort"].clone()
        } else {
            b["reasoning_effort"].clone()
        }
    };
    let (r, server) = one_turn(&home, &["--model", "gpt-5"], vec![Reply::text("ok")]).await;
    last_is_turn_end(&r, "completed");
    assert_eq!(effort(&server), json!("low"), "the setting");
    let (_, server) = one_turn(
        &home,
        &["--model", "gpt-5", "--reasoning", "high"],
        vec![Reply::text("ok")],
    )
    .await;
    assert_eq!(effort(&server), json!("high"), "the flag wins");
    let (r, _) = one_turn(&home, &["--reasoning", "extreme"], vec![Reply::text("ok")]).await;
    assert_eq!(r.code, 2, "{}", r.stderr);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_approval_timeout_flag_denies_a_prompt_nobody_answers() {
    let tmp = tempfile::tempdir().unwrap();
    let (ws, state) = (tmp.path().join("ws"), tmp.path().join("state"));
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&state).unwrap();
    let server = MockLlmServer::with_script(vec![
        Reply::tool_call("c1", "write_file", json!({"path": "a.txt", "content": "x"})),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let url = server.base_url();
    let (ws2, state2) = (ws.clone(), state.clone());
    let (code, shown) = tokio::task::spawn_blocking(move || {
        let extra = ["--approval-timeout", "1"];
        let mut run =
            crate::common::tty::start_with(&ws2, &state2, &url, "write it", "off", &extra);
        run.wait_for("[y] allow once");
        // Nobody answers.
        let code = run.wait_exit();
        (code, run.text())
    })
    .await
    .unwrap();
    assert_eq!(code, 0, "{shown}");
    assert!(shown.contains("no answer within 1 s"), "{shown}");
    assert!(!ws.join("a.txt").exists(), "denied: {shown}");
}

/// `cairn vault`: the old state-dir vault is migrated (said), values are sealed in the config
/// folder without a keyring (said), and a session of a role gets only that role's entries.
#[tokio::test(flavor = "multi_thread")]
async fn the_vault_migrates_and_a_role_sees_only_its_entries() {
    let home = Home::new();
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    std::fs::write(
        state.path().join("vault.toml"),
        "OLD_TOKEN = \"old-value-77\"\n",
    )
    .unwrap();
    let vault = |args: &[&str], stdin: Option<&str>| {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
        c.arg("vault")
            .args(args)
            .args(["--state-dir", state.path().to_str().unwrap()])
            .env("CAIRN_CONFIG_FILE", home.file())
            .env("CAIRN_VAULT_STORE", "file")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        if let Some(text) = stdin {
            use std::io::Write;
            child
                .stdin
                .take()
                .unwrap()
                .write_all(text.as_bytes())
                .unwrap();
        }
        drop(child.stdin.take());
        let out = child.wait_with_output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, out, err) = vault(&["list", "--json"], None);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("moved from") && err.contains("vault.toml.migrated"),
        "{err}"
    );
    assert!(
        err.contains("no OS keyring") && err.contains("vault.enc"),
        "said: {err}"
    );
    assert!(
        out.contains("\"OLD_TOKEN\"") && out.contains("\"*\""),
        "{out}"
    );
    assert!(!state.path().join("vault.toml").exists());
    let (code, _, err) = vault(
        &["set", "CODE_ONLY", "--role", "code"],
        Some("code-secret-1\n"),
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        !err.contains("no OS keyring"),
        "said once, by the migration: {err}"
    );
    let (code, _, _) = vault(
        &["set", "COWORK_ONLY", "--role", "cowork"],
        Some("cowork-secret-2\n"),
    );
    assert_eq!(code, 0);
    assert_eq!(vault(&["set", "PATH"], Some("x\n")).0, 2);
    let (_, out, _) = vault(&["list"], None);
    assert!(!out.contains("secret"), "values are never listed: {out}");
    let config_text = std::fs::read_to_string(home.dir.path().join("cairn/vault.toml")).unwrap();
    assert!(!config_text.contains("secret"), "{config_text}");

    // A code session's commands see OLD_TOKEN and CODE_ONLY, not COWORK_ONLY.
    let server = MockLlmServer::with_script(vec![
        Reply::tool_call(
            "c1",
            "run_shell",
            json!({"command": "echo A=$OLD_TOKEN B=$CODE_ONLY C=$COWORK_ONLY"}),
        ),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let mut c = home.run_cmd(
        ws.path(),
        state.path(),
        &server,
        &["--agent", "code", "show"],
    );
    c.env("CAIRN_VAULT_STORE", "file");
    let r = run(c).await;
    last_is_turn_end(&r, "completed");
    let result = server.requests()[1].body.to_string();
    // The values reached the command (the model sees them masked by name); COWORK_ONLY did not.
    assert!(
        result.contains("A=[vault:OLD_TOKEN] B=[vault:CODE_ONLY] C=\\n"),
        "{result}"
    );
    assert!(!result.contains("cowork-secret-2"), "{result}");
    assert_eq!(vault(&["remove", "CODE_ONLY"], None).0, 0);
    assert_eq!(vault(&["remove", "CODE_ONLY"], None).0, 2);
}

/// The app's settings left in the state folder move to the config folder once, and say so:
/// from then on they are `cairn config` keys, whatever `--state-dir` a run names.
#[tokio::test(flavor = "multi_thread")]
async fn the_state_dirs_desktop_json_moves_to_the_config_folder_once_said() {
    let home = Home::new();
    let state = home.dir.path().join("state");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(
        state.join("desktop.json"),
        r#"{"model": "app-model", "language": "zh", "recent": []}"#,
    )
    .unwrap();
    let (code, out, err) = home.config(&["get", "model", "--json"]).await;
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("Settings moved"), "said: {err}");
    let v = json_of(&out);
    assert_eq!(
        (v["value"].clone(), v["source"].clone()),
        (json!("app-model"), json!("file"))
    );
    assert!(home.dir.path().join("cairn/desktop.json").exists());
    let (_, _, err) = home.config(&["get", "language"]).await;
    assert!(!err.contains("Settings moved"), "once: {err}");
    // A run with another state dir reads the same settings.
    let (r, server) = one_turn(&home, &[], vec![Reply::text("ok")]).await;
    last_is_turn_end(&r, "completed");
    let system = server.requests()[0].body["messages"][0]["content"].to_string();
    assert!(
        system
            .chars()
            .any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)),
        "the migrated language"
    );
}
