//! `cairn run --sandbox off|auto|required`: the flag beats `CAIRN_SANDBOX`; under `required`
//! a command that writes outside the workspace or into `.git/hooks` fails and leaves nothing
//! behind, while `off` lets the same command through (so the flag really decides). Where
//! bubblewrap cannot run, `required` refuses to start with a clear error.

mod defaults;
mod desktop;
mod network;
mod status;

use std::path::{Path, PathBuf};

use cairn_policy::sandbox::{bwrap_path, bwrap_works};
use cairn_testkit::{MockLlmServer, Reply};
use serde_json::{json, Value};
use tokio::process::Command;

struct World {
    _dir: tempfile::TempDir,
    ws: PathBuf,
    outside: PathBuf,
    state: PathBuf,
}

/// A workspace with a `.git/hooks` folder and a sibling folder, in `/var/tmp`: outside `/tmp`
/// and the home caches (`~/.cache`, `~/.cargo`, `~/.npm`), which the sandbox keeps writable
/// by design — the target dir, and so CARGO_TARGET_TMPDIR, may well be under `~/.cache`.
fn world() -> World {
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let ws = base.join("ws");
    let outside = base.join("outside");
    let state = base.join("state");
    for d in [ws.join(".git/hooks"), outside.clone(), state.clone()] {
        std::fs::create_dir_all(d).unwrap();
    }
    World {
        _dir: dir,
        ws,
        outside,
        state,
    }
}

fn cairn(env_sandbox: &str) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cairn"));
    c.env("OPENAI_API_KEY", "k")
        .env("CAIRN_SANDBOX", env_sandbox)
        .env(
            "CAIRN_PERMISSIONS_FILE",
            "/nonexistent/cairn-permissions.toml",
        )
        .env_remove("CAIRN_SHELL_POLICY");
    c
}

/// The attack: one command writing outside, into `.git/hooks`, and (harmlessly) inside.
fn attack(outside: &Path) -> String {
    format!(
        "touch inside.txt; touch {o}/escaped; echo pwned > .git/hooks/pre-commit; exit 0",
        o = outside.display()
    )
}

async fn run(w: &World, server: &MockLlmServer, sandbox: &str) -> std::process::Output {
    cairn("off")
        .args([
            "run",
            "--json",
            "--model",
            "m",
            "--mode",
            "auto",
            "--sandbox",
            sandbox,
        ])
        .arg("--workspace")
        .arg(&w.ws)
        .arg("--state-dir")
        .arg(&w.state)
        .arg("--base-url")
        .arg(server.base_url())
        .arg("go")
        .output()
        .await
        .unwrap()
}

/// Whether bubblewrap runs here; not running is a failure under `CAIRN_SANDBOX_TEST=1`.
fn sandbox_or_skip() -> bool {
    let here = bwrap_path().is_some() && bwrap_works();
    if !here {
        assert!(
            std::env::var("CAIRN_SANDBOX_TEST").as_deref() != Ok("1"),
            "CAIRN_SANDBOX_TEST=1 but bubblewrap cannot run here"
        );
        println!("SKIPPED: bubblewrap cannot run here");
    }
    here
}

fn finished_status(out: &std::process::Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "tool_finished")
        .map(|e| e["data"]["status"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_sandbox_flag_confines_commands_or_required_refuses_to_start() {
    let w = world();
    let server = MockLlmServer::with_script(vec![
        Reply::tool_call("a", "run_shell", json!({"command": attack(&w.outside)})),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let sandbox_here = bwrap_path().is_some() && bwrap_works();
    let out = run(&w, &server, "required").await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !sandbox_here {
        assert!(
            std::env::var("CAIRN_SANDBOX_TEST").as_deref() != Ok("1"),
            "CAIRN_SANDBOX_TEST=1 but bubblewrap cannot run here"
        );
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("no working sandbox"), "{stderr}");
        println!(
            "SKIPPED confinement: bubblewrap cannot run here (required mode errors, as checked)"
        );
        return;
    }
    // CAIRN_SANDBOX=off in the environment, --sandbox required on the command line: the
    // flag wins, the command ran (inside.txt exists) and could touch nothing else.
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(finished_status(&out), ["ok"]);
    assert!(w.ws.join("inside.txt").exists(), "the command did not run");
    assert!(
        !w.outside.join("escaped").exists(),
        "wrote outside the workspace"
    );
    assert!(
        !w.ws.join(".git/hooks/pre-commit").exists(),
        "wrote a git hook"
    );

    // With --sandbox off, auto mode runs commands unasked: one that writes outside gets
    // through (the confinement above came from the flag), while the one that names `.git`
    // now needs the user (and no TTY denies).
    server.push(Reply::tool_call(
        "b",
        "run_shell",
        json!({"command": attack(&w.outside)}),
    ));
    server.push(Reply::tool_call(
        "c",
        "run_shell",
        json!({"command": format!("touch {}/escaped", w.outside.display())}),
    ));
    server.push(Reply::text("done"));
    let out = run(&w, &server, "off").await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(finished_status(&out), ["denied", "ok"]);
    assert!(w.outside.join("escaped").exists());
    assert!(!w.ws.join(".git/hooks/pre-commit").exists());

    // Without --json the session reports whether the sandbox is enforced.
    for (mode, said) in [
        (
            "required",
            "sandbox: enforced, commands run inside bubblewrap",
        ),
        ("off", "sandbox: off"),
    ] {
        server.push(Reply::text("hello"));
        let out = cairn("auto")
            .args([
                "run",
                "--model",
                "m",
                "--approve",
                "deny",
                "--sandbox",
                mode,
            ])
            .arg("--workspace")
            .arg(&w.ws)
            .arg("--state-dir")
            .arg(&w.state)
            .arg("--base-url")
            .arg(server.base_url())
            .arg("hi")
            .output()
            .await
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        assert!(stderr.contains(said), "{mode}: {stderr}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bad_sandbox_value_is_a_usage_error() {
    let w = world();
    let out = cairn("auto")
        .args([
            "run",
            "--model",
            "m",
            "--sandbox",
            "sometimes",
            "--workspace",
        ])
        .arg(&w.ws)
        .arg("hi")
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--sandbox") && stderr.contains("required"),
        "{stderr}"
    );
    // A bad CAIRN_SANDBOX is still reported when no flag overrides it.
    let out = cairn("sometimes")
        .args(["run", "--model", "m", "--workspace"])
        .arg(&w.ws)
        .arg("--state-dir")
        .arg(&w.state)
        .arg("hi")
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("CAIRN_SANDBOX"));
}
