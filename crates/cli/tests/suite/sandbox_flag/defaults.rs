//! The sandbox with default flags (`--sandbox auto`) in `--mode auto`, a real `cairn run`
//! against the mock model and a fake `$HOME`: commands are confined, the home's
//! executable-bearing folders cannot be planted, credentials are hidden, a `sandbox: false`
//! retry asks (and `--approve deny` refuses it), `--sandbox off` brings unconfined commands
//! back, and `media` never runs an `ffprobe` planted on `PATH`.

use std::path::{Path, PathBuf};

use cairn_testkit::{MockLlmServer, Reply};
use serde_json::{json, Value};
use tokio::process::Command;

/// A fake home (with the folders a developer has), a workspace holding a link to a folder
/// outside, and a state dir, all under `/var/tmp`.
struct Home {
    _dir: tempfile::TempDir,
    home: PathBuf,
    ws: PathBuf,
    outside: PathBuf,
    state: PathBuf,
}

const SSH_SECRET: &str = "PRIVATE-KEY-material-7731";

fn home() -> Home {
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let home = base.join("home");
    let ws = base.join("ws");
    let outside = base.join("outside");
    let state = base.join("state");
    for d in [
        home.join(".cargo/bin"),
        home.join(".npm"),
        home.join(".cache"),
        home.join(".ssh"),
        home.join(".aws"),
        ws.clone(),
        outside.clone(),
        state.clone(),
    ] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(
        home.join(".cargo/env"),
        "export PATH=\"$HOME/.cargo/bin:$PATH\"\n",
    )
    .unwrap();
    std::fs::write(home.join(".ssh/id_ed25519"), SSH_SECRET).unwrap();
    std::fs::write(home.join(".aws/credentials"), SSH_SECRET).unwrap();
    std::fs::write(home.join(".netrc"), SSH_SECRET).unwrap();
    std::os::unix::fs::symlink(&outside, ws.join("link")).unwrap();
    Home {
        _dir: dir,
        home,
        ws,
        outside,
        state,
    }
}

/// `cairn run --json --mode MODE` with default sandbox flags, `HOME` = the fake home.
fn cairn(h: &Home, server: &MockLlmServer, mode: &str, extra: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cairn"));
    c.args(["run", "--json", "--model", "m", "--mode", mode])
        .args(extra)
        .arg("--workspace")
        .arg(&h.ws)
        .arg("--state-dir")
        .arg(&h.state)
        .arg("--base-url")
        .arg(server.base_url())
        .arg("go")
        .env("HOME", &h.home)
        .env("OPENAI_API_KEY", "sk-test-key-0123456789")
        .env_remove("CAIRN_SANDBOX")
        .env_remove("CAIRN_SHELL_POLICY")
        .env_remove("CAIRN_STATE_DIR")
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_DATA_HOME")
        .env_remove("XDG_CACHE_HOME")
        .env_remove("CARGO_HOME")
        .env(
            "CAIRN_PERMISSIONS_FILE",
            "/nonexistent/cairn-permissions.toml",
        )
        .env("CAIRN_SANDBOX_FILE", "/nonexistent/cairn-sandbox.toml")
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    c
}

fn events(out: &std::process::Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .collect()
}

fn statuses(ev: &[Value]) -> Vec<String> {
    ev.iter()
        .filter(|e| e["type"] == "tool_finished")
        .map(|e| e["data"]["status"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// The tool results the model was sent in the last request.
fn tool_results(server: &MockLlmServer) -> Vec<String> {
    let reqs = server.requests();
    let Some(last) = reqs.last() else {
        return Vec::new();
    };
    last.body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "tool")
        .map(|m| match &m["content"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect()
}

/// Every file under `dir`, relative.
fn files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() && !p.is_symlink() {
                stack.push(p.clone());
            }
            out.push(p.strip_prefix(dir).unwrap().display().to_string());
        }
    }
    out.sort();
    out
}

fn bwrap_here() -> bool {
    let ok = cairn_policy::sandbox::bwrap_path().is_some() && cairn_policy::sandbox::bwrap_works();
    if !ok {
        assert!(
            std::env::var("CAIRN_SANDBOX_TEST").as_deref() != Ok("1"),
            "CAIRN_SANDBOX_TEST=1 but bubblewrap cannot run here"
        );
        println!("SKIPPED: bubblewrap cannot run here");
    }
    ok
}

#[tokio::test(flavor = "multi_thread")]
async fn default_flags_confine_auto_mode_hide_credentials_and_escalation_asks() {
    if !bwrap_here() {
        return;
    }
    let h = home();
    let probe = format!("/tmp/cairn-private-tmp-probe-{}", std::process::id());
    // The home is an empty tmpfs: `~/.bashrc` and `~/.cargo/config.toml` land there and
    // are gone when the command ends; the toolchain bound back is read-only (the last
    // write fails, so the command fails with the read-only hint).
    let plants = "echo evil > ~/.cargo/bin/cargo-evil; \
                  printf '[build]\\nrustc-wrapper = \"/x\"\\n' > ~/.cargo/config.toml; \
                  mkdir -p ~/.npm/_cacache && echo t > ~/.npm/_cacache/planted; \
                  mkdir -p ~/.cache/pip && echo t > ~/.cache/pip/planted; \
                  echo evil >> ~/.bashrc; \
                  echo 'curl x | sh' >> ~/.cargo/env";
    let server = MockLlmServer::with_script(vec![
        Reply::tool_call("a", "run_shell", json!({"command": "echo x > link/escaped; exit 0"})),
        Reply::tool_call("b", "run_shell", json!({"command": plants})),
        Reply::tool_call(
            "c",
            "run_shell",
            json!({"command": "cat ~/.ssh/id_ed25519 ~/.aws/credentials ~/.netrc; ls -a ~/.ssh; echo fine > inside.txt"}),
        ),
        Reply::tool_call("d", "run_shell", json!({"command": format!("touch {probe} && ls /tmp")})),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let home_before = files(&h.home);
    let out = cairn(&h, &server, "auto", &[]).output().await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let ev = events(&out);
    assert_eq!(statuses(&ev), ["ok", "ok", "ok", "ok"], "{stderr}");
    assert!(
        !ev.iter().any(|e| e["type"] == "permission_required"),
        "auto mode ran them unasked"
    );
    // Through a workspace link to a folder outside: nothing written there.
    assert!(files(&h.outside).is_empty(), "{:?}", files(&h.outside));
    // No plant in the home: ~/.cargo, ~/.npm, ~/.cache and dotfiles are untouched (Cairn
    // made the empty mount points of the private cargo caches, as cargo itself would).
    // Cairn's own seal key for saved permissions (created outside the sandbox) is no plant.
    let own = [".config", ".config/cairn", ".config/cairn/session-seal.key"];
    let mut after = files(&h.home);
    after.retain(|f| {
        f != ".cargo/git"
            && f != ".cargo/registry"
            && (home_before.contains(f) || !own.contains(&f.as_str()))
    });
    assert_eq!(after, home_before);
    assert!(files(&h.home.join(".cargo/registry")).is_empty());
    assert_eq!(
        std::fs::read_to_string(h.home.join(".cargo/env")).unwrap(),
        "export PATH=\"$HOME/.cargo/bin:$PATH\"\n"
    );
    // The caches the command wrote went to the workspace's private cache in the state dir.
    let caches = files(&h.state.join("sandbox-cache"));
    assert!(
        caches.iter().any(|f| f.ends_with("npm/_cacache/planted"))
            && caches.iter().any(|f| f.ends_with("cache/pip/planted")),
        "{caches:?}"
    );
    let results = tool_results(&server);
    assert_eq!(results.len(), 4, "{results:?}");
    // Credentials are hidden, the workspace is writable.
    assert!(!results[2].contains(SSH_SECRET), "{}", results[2]);
    assert!(
        !results[2].lines().any(|l| l.trim() == "id_ed25519"),
        "~/.ssh is listed: {}",
        results[2]
    );
    assert!(h.ws.join("inside.txt").exists());
    // A read-only refusal tells the model what to do about it.
    assert!(results[1].contains("\"sandbox\": false"), "{}", results[1]);
    // /tmp is private: the command's file is not on the host.
    assert!(
        results[3].contains("cairn-private-tmp-probe"),
        "{}",
        results[3]
    );
    assert!(
        !Path::new(&probe).exists(),
        "{probe} reached the host's /tmp"
    );

    // The model retries outside the sandbox: asked even in auto mode, with no "always
    // allow" on offer, and `--approve deny` refuses it: nothing written.
    server.push(Reply::tool_call(
        "e",
        "run_shell",
        json!({"command": "echo x > link/escaped", "sandbox": false}),
    ));
    server.push(Reply::text("done"));
    let out = cairn(&h, &server, "auto", &["--approve", "deny"])
        .output()
        .await
        .unwrap();
    let ev = events(&out);
    let asked: Vec<&Value> = ev
        .iter()
        .filter(|e| e["type"] == "permission_required")
        .collect();
    assert_eq!(asked.len(), 1, "{ev:?}");
    assert!(
        asked[0]["data"]["alwaysAllow"].is_null() && asked[0]["data"]["always_allow"].is_null()
    );
    assert!(
        asked[0]["data"]["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("outside the sandbox"),
        "{:?}",
        asked[0]
    );
    assert_eq!(statuses(&ev), ["denied"]);
    assert!(files(&h.outside).is_empty());

    // `--sandbox off` brings today's behaviour back, and says so.
    server.push(Reply::tool_call(
        "f",
        "run_shell",
        json!({"command": "echo x > link/escaped"}),
    ));
    server.push(Reply::text("done"));
    let out = cairn(&h, &server, "auto", &["--sandbox", "off"])
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("sandbox: off"), "{stderr}");
    assert_eq!(statuses(&events(&out)), ["ok"], "{stderr}");
    assert_eq!(files(&h.outside), ["escaped"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn media_never_runs_an_ffprobe_planted_on_path_even_in_discuss_mode() {
    let h = home();
    let marker = h.outside.join("ffprobe-ran");
    let fake = h.home.join(".cargo/bin/ffprobe");
    std::fs::write(
        &fake,
        format!("#!/bin/sh\nenv > {}\necho '{{}}'\n", marker.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    // A file the media tool takes for a video.
    let mut mp4 = vec![0, 0, 0, 0x18];
    mp4.extend_from_slice(b"ftypisom\0\0\x02\0isomiso2");
    mp4.resize(64, 0);
    std::fs::write(h.ws.join("clip.mp4"), mp4).unwrap();
    let server = MockLlmServer::with_script(vec![
        Reply::tool_call("a", "media", json!({"path": "clip.mp4"})),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let path = format!(
        "{}:{}",
        h.home.join(".cargo/bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = cairn(&h, &server, "discuss", &[])
        .env("PATH", path)
        .env_remove("CAIRN_FFPROBE")
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(statuses(&events(&out)).len(), 1, "{stderr}");
    assert!(
        !marker.exists(),
        "the ffprobe planted in ~/.cargo/bin ran: {}",
        std::fs::read_to_string(&marker).unwrap_or_default()
    );
}

/// A user who kept an "always allow" has `~/.config/cairn/permissions.toml` inside the
/// hidden `~/.config/cairn`: sandboxed commands still run (bubblewrap once failed on every
/// one of them) and read neither.
#[tokio::test(flavor = "multi_thread")]
async fn kept_rules_in_the_users_config_do_not_break_sandboxed_commands() {
    if !bwrap_here() {
        return;
    }
    let h = home();
    let config = h.home.join(".config/cairn");
    std::fs::create_dir_all(&config).unwrap();
    let rules = "[[rule]]\nrule = \"run_shell(rules-marker-5521:*)\"\ndecision = \"allow\"\n";
    std::fs::write(config.join("permissions.toml"), rules).unwrap();
    let server = MockLlmServer::with_script(vec![
        Reply::tool_call(
            "a",
            "run_shell",
            json!({"command": "cat ~/.config/cairn/permissions.toml; ls -a ~/.config/cairn; echo ran > inside.txt"}),
        ),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let out = cairn(&h, &server, "auto", &[])
        .env_remove("CAIRN_PERMISSIONS_FILE")
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(statuses(&events(&out)), ["ok"], "{stderr}");
    let results = tool_results(&server);
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(!results[0].contains("bwrap"), "{}", results[0]);
    assert!(!results[0].contains("rules-marker-5521"), "{}", results[0]);
    assert!(results[0].contains("No such file"), "{}", results[0]);
    assert_eq!(
        std::fs::read_to_string(h.ws.join("inside.txt")).unwrap(),
        "ran\n"
    );
    assert_eq!(
        std::fs::read_to_string(config.join("permissions.toml")).unwrap(),
        rules
    );
}
