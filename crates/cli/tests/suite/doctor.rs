//! `cairn doctor` end to end (issue 46): `--json` rows of the documented shape, exit 1 on a
//! problem (a provider answering 401, an MCP server that exits), `--offline` asks no
//! endpoint, and the API key never reaches stdout or stderr. Plus the generated shell
//! completions and man pages the package ships.

use std::path::Path;
use std::process::Output;

use cairn_testkit::MockLlmServer;
use serde_json::Value;
use tokio::process::Command;

const KEY: &str = "sk-cli-doctor-secret-4321";

struct World {
    _dir: tempfile::TempDir,
    ws: std::path::PathBuf,
    state: std::path::PathBuf,
    config: std::path::PathBuf,
}

fn world() -> World {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let (ws, state, config) = (base.join("ws"), base.join("state"), base.join("config"));
    for d in [&ws, &state, &config] {
        std::fs::create_dir_all(d).unwrap();
    }
    World {
        _dir: dir,
        ws,
        state,
        config,
    }
}

/// `cairn doctor --json` in `w`, its settings, MCP file and keyring its own.
fn doctor(w: &World, base_url: &str, extra: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cairn"));
    c.args(["doctor", "--json", "--timeout", "20"])
        .args(extra)
        .arg("--workspace")
        .arg(&w.ws)
        .arg("--state-dir")
        .arg(&w.state)
        .env("XDG_CONFIG_HOME", &w.config)
        .env("CAIRN_CONFIG_FILE", w.config.join("config.toml"))
        .env("CAIRN_MCP_CONFIG", w.config.join("mcp.json"))
        .env("CAIRN_KEYSTORE", "memory")
        .env("OPENAI_API_KEY", KEY)
        .env("OPENAI_BASE_URL", base_url)
        .env("CAIRN_MODEL", "m")
        .env_remove("CAIRN_PROVIDER")
        .kill_on_drop(true);
    c
}

fn rows(out: &Output) -> Vec<Value> {
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn row<'a>(rows: &'a [Value], group: &str, check: &str) -> &'a Value {
    rows.iter()
        .find(|r| r["group"] == group && r["check"] == check)
        .unwrap_or_else(|| panic!("no {group}/{check} in {rows:#?}"))
}

fn assert_no_key(out: &Output) {
    for stream in [&out.stdout, &out.stderr] {
        let text = String::from_utf8_lossy(stream);
        assert!(!text.contains(KEY) && !text.contains("4321"), "{text}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn doctor_names_a_refused_key_and_a_dead_mcp_server_and_exits_1() {
    let w = world();
    let server = MockLlmServer::start().await.unwrap();
    server.refuse_models(401);
    std::fs::write(
        w.config.join("mcp.json"),
        r#"{"mcpServers": {"quits": {"command": "sh", "args": ["-c", "exit 3"]}}}"#,
    )
    .unwrap();
    let out = doctor(&w, &server.base_url(), &[]).output().await.unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_no_key(&out);
    let rows = rows(&out);
    for r in &rows {
        // The documented row shape.
        for field in ["group", "check", "status", "detail"] {
            assert!(r[field].is_string(), "{field} in {r}");
        }
        assert!(r["ms"].is_u64(), "{r}");
        let status = r["status"].as_str().unwrap();
        assert!(
            ["ok", "warning", "problem", "skipped"].contains(&status),
            "{r}"
        );
        if status == "problem" {
            assert!(r["action"].is_string(), "a problem says what to do: {r}");
        }
    }
    let e = row(&rows, "provider", "openai endpoint");
    assert_eq!(e["status"], "problem");
    assert!(e["detail"].as_str().unwrap().contains("refused"), "{e}");
    assert_eq!(
        row(&rows, "provider", "openai key")["detail"],
        "from $OPENAI_API_KEY (it wins over the keyring)"
    );
    let m = row(&rows, "mcp", "mcp server quits");
    assert_eq!(m["status"], "problem", "{m}");
    assert_eq!(
        row(&rows, "version", "cairn")["detail"],
        env!("CARGO_PKG_VERSION")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn doctor_offline_asks_no_endpoint_and_human_lines_say_what_to_do() {
    let w = world();
    let server = MockLlmServer::start().await.unwrap();
    server.refuse_models(401);
    let out = doctor(&w, &server.base_url(), &["--offline"])
        .output()
        .await
        .unwrap();
    assert_no_key(&out);
    let rows = rows(&out);
    assert_eq!(
        row(&rows, "provider", "openai endpoint")["status"],
        "skipped"
    );
    assert!(server.model_list_requests().is_empty());
    let problems = rows.iter().filter(|r| r["status"] == "problem").count();
    // Exit 0 exactly when no row is a problem (the sandbox row depends on this machine).
    assert_eq!(
        out.status.code(),
        Some(i32::from(problems > 0)),
        "{rows:#?}"
    );

    // The human form: one line per check, an arrow line for what to do.
    let mut c = Command::new(env!("CARGO_BIN_EXE_cairn"));
    let out = c
        .args(["doctor", "--offline", "--state-dir"])
        .arg(&w.state)
        .arg("--workspace")
        .arg(&w.ws)
        .env("XDG_CONFIG_HOME", &w.config)
        .env("CAIRN_CONFIG_FILE", w.config.join("config.toml"))
        .env("CAIRN_MCP_CONFIG", w.config.join("mcp.json"))
        .env("CAIRN_KEYSTORE", "memory")
        .env_remove("OPENAI_API_KEY")
        .env_remove("CAIRN_PROVIDER")
        .output()
        .await
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("PROBLEM  provider  openai key"), "{text}");
    assert!(text.contains("→ cairn auth set openai"), "{text}");
    assert_eq!(out.status.code(), Some(1));
}

fn cairn_out(args: &[&str], dir: &Path) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

#[test]
fn completions_and_man_pages_come_from_the_cli_definition() {
    let dir = tempfile::tempdir().unwrap();
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef cairn"),
        ("fish", "complete -c cairn"),
    ] {
        let out = cairn_out(&["completions", shell], dir.path());
        assert!(out.status.success(), "{out:?}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains(marker), "{shell}: {text}");
        assert!(
            text.contains("doctor"),
            "{shell} completes the doctor subcommand"
        );
    }
    let man = dir.path().join("man");
    let out = cairn_out(&["man", man.to_str().unwrap()], dir.path());
    assert!(out.status.success(), "{out:?}");
    let page = std::fs::read_to_string(man.join("cairn.1")).unwrap();
    assert!(page.contains(".TH cairn"), "{page}");
    let doctor = std::fs::read_to_string(man.join("cairn-doctor.1")).unwrap();
    assert!(doctor.contains("\\-\\-offline"), "{doctor}");
    // Hidden helpers stay out of the help.
    let help = cairn_out(&["--help"], dir.path());
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("doctor") && !help.contains("completions"),
        "{help}"
    );
}
