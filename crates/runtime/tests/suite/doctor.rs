//! `cairn doctor`'s checks (issue 46), one test per check, each with a broken thing behind
//! its probe: no keyring, a provider refusing the key (the mock server answers 401), an MCP
//! server that exits, a full state folder, a system restricting user namespaces, a probe
//! that never answers. No row ever carries a key.

use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use cairn_mcp::{LoadedConfig, ServerConfig, TransportConfig};
use cairn_providers::secrets::{ApiKey, KeyStore, MemoryKeyStore, SecretError};
use cairn_runtime::doctor::{
    self, CheckRow, CheckStatus, DoctorOptions, FakeDesktop, FakeDisk, Fix, Probes,
};
use cairn_runtime::sandbox::userns::FakeHost;
use cairn_testkit::MockLlmServer;

const KEY: &str = "sk-doctor-secret-key-9876";

fn probes(keys: Arc<dyn KeyStore>, env: Vec<(&str, String)>) -> Probes {
    let env: Vec<(String, String)> = env.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    Probes {
        sandbox: Arc::new(FakeHost::working()),
        keys,
        env: Arc::new(move |k: &str| {
            env.iter()
                .find(|(name, _)| name == k)
                .map(|(_, v)| v.clone())
        }),
        desktop: Arc::new(FakeDesktop {
            display: Some(":0".into()),
            bus: true,
            notifications: Some(true),
        }),
        disk: Arc::new(FakeDisk(100 * 1024 * 1024 * 1024)),
    }
}

fn options(state: &Path, offline: bool) -> DoctorOptions {
    DoctorOptions {
        workspace: None,
        state_dir: state.to_path_buf(),
        offline,
        timeout: Duration::from_secs(10),
        versions: vec![("cairn".into(), "0.0.0-test".into())],
    }
}

fn find<'a>(rows: &'a [CheckRow], group: &str, check: &str) -> &'a CheckRow {
    rows.iter()
        .find(|r| r.group == group && r.check == check)
        .unwrap_or_else(|| panic!("no {group}/{check} row in {rows:#?}"))
}

fn stored(key: &str) -> Arc<dyn KeyStore> {
    let keys = MemoryKeyStore::new();
    keys.set("openai", &ApiKey::new(key).unwrap()).unwrap();
    Arc::new(keys)
}

fn assert_no_key(rows: &[CheckRow]) {
    let text = serde_json::to_string(rows).unwrap();
    assert!(!text.contains(KEY), "{text}");
    assert!(!text.contains("9876"), "a part of the key is shown: {text}");
}

#[tokio::test]
async fn a_healthy_machine_has_no_problem_and_every_group_is_there() {
    let dir = tempfile::tempdir().unwrap();
    let rows = doctor::run(&probes(stored(KEY), vec![]), &options(dir.path(), true)).await;
    assert!(!doctor::has_problem(&rows), "{rows:#?}");
    for group in [
        "sandbox", "keyring", "desktop", "provider", "mcp", "state", "version",
    ] {
        assert!(
            rows.iter().any(|r| r.group == group),
            "no {group} row: {rows:#?}"
        );
    }
    assert_eq!(
        find(&rows, "provider", "openai key").status,
        CheckStatus::Ok
    );
    assert_eq!(
        find(&rows, "provider", "openai endpoint").status,
        CheckStatus::Skipped
    );
    assert_eq!(find(&rows, "version", "cairn").detail, "0.0.0-test");
    assert_no_key(&rows);
    assert_every_action_is_typed(&rows);
}

#[tokio::test]
async fn no_keyring_is_a_problem_with_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let keys = Arc::new(MemoryKeyStore::unavailable("no Secret Service on the bus"));
    let rows = doctor::run(&probes(keys, vec![]), &options(dir.path(), true)).await;
    let k = find(&rows, "keyring", "secret service");
    assert_eq!(k.status, CheckStatus::Problem);
    assert!(k.detail.contains("no Secret Service"), "{k:?}");
    assert!(
        k.action.as_deref().unwrap().contains("gnome-keyring"),
        "{k:?}"
    );
    let key = find(&rows, "provider", "openai key");
    assert_eq!(key.status, CheckStatus::Problem);
    assert!(doctor::has_problem(&rows));
}

#[tokio::test]
async fn a_provider_refusing_the_key_is_a_problem_and_the_key_is_never_shown() {
    let server = MockLlmServer::start().await.unwrap();
    server.refuse_models(401);
    let dir = tempfile::tempdir().unwrap();
    let env = vec![
        ("OPENAI_BASE_URL", server.base_url()),
        ("CAIRN_MODEL", "m".to_string()),
    ];
    let rows = doctor::run(
        &probes(stored(KEY), env.clone()),
        &options(dir.path(), false),
    )
    .await;
    let e = find(&rows, "provider", "openai endpoint");
    assert_eq!(e.status, CheckStatus::Problem, "{e:?}");
    assert!(e.detail.contains("refused the API key"), "{e:?}");
    assert!(e
        .action
        .as_deref()
        .unwrap()
        .contains("cairn auth set openai"));
    assert_eq!(
        e.fix,
        Some(Fix::ReplaceKey {
            provider: "openai".into()
        }),
        "the app words the fix itself"
    );
    assert_no_key(&rows);
    assert_every_action_is_typed(&rows);
    // The key went to the server (as a bearer token), and nowhere else.
    let asked = server.model_list_requests();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].bearer(), Some(KEY));

    // Offline, the endpoint is not asked.
    let rows = doctor::run(&probes(stored(KEY), env), &options(dir.path(), true)).await;
    assert_eq!(
        find(&rows, "provider", "openai endpoint").status,
        CheckStatus::Skipped
    );
    assert_eq!(server.model_list_requests().len(), 1);
}

#[tokio::test]
async fn a_listed_model_is_ok_and_an_unlisted_one_a_warning() {
    let server = MockLlmServer::start().await.unwrap();
    server.serve_models(&["m", "other"]);
    let dir = tempfile::tempdir().unwrap();
    let run = |model: &str| {
        let env = vec![
            ("OPENAI_BASE_URL", server.base_url()),
            ("CAIRN_MODEL", model.to_string()),
        ];
        let p = probes(stored(KEY), env);
        let o = options(dir.path(), false);
        async move { doctor::run(&p, &o).await }
    };
    let rows = run("m").await;
    let e = find(&rows, "provider", "openai endpoint");
    assert_eq!(e.status, CheckStatus::Ok, "{e:?}");
    assert!(e.detail.contains("model m listed"));
    let rows = run("gone").await;
    let e = find(&rows, "provider", "openai endpoint");
    assert_eq!(e.status, CheckStatus::Warning, "{e:?}");
    assert!(e.detail.contains("gone"));
}

fn stdio(name: &str, script: &str) -> ServerConfig {
    ServerConfig {
        name: name.into(),
        transport: Some(TransportConfig::Stdio {
            program: "sh".into(),
            args: vec!["-c".into(), script.into()],
            env: Default::default(),
            cwd: None,
        }),
        enabled: true,
        startup_timeout: None,
        call_timeout: None,
        max_call_timeout: None,
        source: PathBuf::from("/test/mcp.json"),
        held: None,
    }
}

#[tokio::test]
async fn an_mcp_server_that_exits_is_a_problem_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let loaded = LoadedConfig {
        servers: vec![stdio("quits", "echo 'cannot start: no token' >&2; exit 3")],
        warnings: Vec::new(),
    };
    let rows = doctor::mcp_servers(&loaded, dir.path(), &options(dir.path(), true)).await;
    let r = find(&rows, "mcp", "mcp server quits");
    assert_eq!(r.status, CheckStatus::Problem, "{r:?}");
    assert!(r.detail.contains("did not start"), "{r:?}");
    assert!(r
        .action
        .as_deref()
        .unwrap()
        .contains("cairn mcp test quits"));
    assert_eq!(
        r.fix,
        Some(Fix::McpOutput {
            server: "quits".into()
        })
    );
    assert_every_action_is_typed(&rows);
}

/// Every row that says what to do also says it as a typed fix, whose terminal words are the
/// action (the app words the fix and never shows a Cairn command).
fn assert_every_action_is_typed(rows: &[CheckRow]) {
    for r in rows {
        match (&r.action, &r.fix) {
            (None, None) => {}
            (Some(a), Some(f)) => assert_eq!(a, &f.cli_words(), "{r:?}"),
            _ => panic!("an action without its typed fix, or the reverse: {r:?}"),
        }
    }
}

#[tokio::test]
async fn an_mcp_server_that_never_answers_is_cut_at_the_probe_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let loaded = LoadedConfig {
        servers: vec![stdio("mute", "exec sleep 30")],
        warnings: Vec::new(),
    };
    let mut o = options(dir.path(), true);
    o.timeout = Duration::from_millis(300);
    let started = std::time::Instant::now();
    let rows = doctor::mcp_servers(&loaded, dir.path(), &o).await;
    assert!(started.elapsed() < Duration::from_secs(10));
    let r = find(&rows, "mcp", "mcp server mute");
    assert_eq!(r.status, CheckStatus::Problem, "{r:?}");
    assert!(r.detail.contains("not ready within"), "{r:?}");
}

#[tokio::test]
async fn a_full_or_unwritable_state_folder_is_a_problem() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = probes(stored(KEY), vec![]);
    p.disk = Arc::new(FakeDisk(10 * 1024 * 1024));
    let rows = doctor::run(&p, &options(dir.path(), true)).await;
    let free = find(&rows, "state", "free space");
    assert_eq!(free.status, CheckStatus::Problem, "{free:?}");
    assert!(free.detail.contains("10.0 MB"), "{free:?}");
    assert!(doctor::has_problem(&rows));

    // A state folder that cannot be made (a file is in the way).
    let file = dir.path().join("file");
    std::fs::write(&file, "x").unwrap();
    let rows = doctor::run(
        &probes(stored(KEY), vec![]),
        &options(&file.join("state"), true),
    )
    .await;
    let w = find(&rows, "state", "state folder");
    assert_eq!(w.status, CheckStatus::Problem, "{w:?}");
    assert!(w.action.as_deref().unwrap().contains("CAIRN_STATE_DIR"));
}

#[tokio::test]
async fn restricted_user_namespaces_are_a_problem_with_the_profile_to_add() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = probes(stored(KEY), vec![]);
    p.sandbox = Arc::new(FakeHost::restricted("/home/me/cairn/target/debug/cairn"));
    let rows = doctor::run(&p, &options(dir.path(), true)).await;
    let s = find(&rows, "sandbox", "user namespaces");
    assert_eq!(s.status, CheckStatus::Problem, "{s:?}");
    assert!(
        s.detail.contains("apparmor_restrict_unprivileged_userns"),
        "{s:?}"
    );
    let action = s.action.as_deref().unwrap();
    assert!(
        action.contains("profile cairn-local /home/me/cairn/target/debug/cairn"),
        "{action}"
    );
    assert!(action.contains("widens the whole system"), "{action}");

    let mut p = probes(stored(KEY), vec![]);
    p.sandbox = Arc::new(FakeHost::default());
    let rows = doctor::run(&p, &options(dir.path(), true)).await;
    let s = find(&rows, "sandbox", "user namespaces");
    assert!(s
        .action
        .as_deref()
        .unwrap()
        .contains("apt install bubblewrap"));
}

/// A keyring that does not answer until the test lets it.
struct HungKeyring(Mutex<mpsc::Receiver<()>>);

impl KeyStore for HungKeyring {
    fn get(&self, _: &str) -> Result<Option<ApiKey>, SecretError> {
        let _ = self.0.lock().unwrap().recv();
        Ok(None)
    }
    fn set(&self, _: &str, _: &ApiKey) -> Result<(), SecretError> {
        Ok(())
    }
    fn remove(&self, _: &str) -> Result<bool, SecretError> {
        Ok(false)
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_probe_that_never_answers_is_a_problem_after_its_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let (release, wait) = mpsc::channel();
    let keys: Arc<dyn KeyStore> = Arc::new(HungKeyring(Mutex::new(wait)));
    let mut o = options(dir.path(), true);
    o.timeout = Duration::from_millis(200);
    let rows = doctor::run(&probes(keys, vec![]), &o).await;
    let k = find(&rows, "keyring", "secret service");
    assert_eq!(k.status, CheckStatus::Problem, "{k:?}");
    assert!(k.detail.contains("no answer within"), "{k:?}");
    // The provider in use is still checked; its key cannot be read in time.
    let key = find(&rows, "provider", "openai key");
    assert_eq!(key.status, CheckStatus::Problem, "{key:?}");
    assert!(key.detail.contains("did not answer in time"), "{key:?}");
    // Let the blocked lookups end so the runtime can stop.
    drop(release);
}

#[test]
fn desktop_without_display_or_bus_is_a_warning_not_a_problem() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut p = probes(stored(KEY), vec![]);
    p.desktop = Arc::new(FakeDesktop::default());
    let rows = rt.block_on(doctor::run(&p, &options(dir.path(), true)));
    assert_eq!(
        find(&rows, "desktop", "display").status,
        CheckStatus::Warning
    );
    assert_eq!(
        find(&rows, "desktop", "notifications").status,
        CheckStatus::Warning
    );
    assert!(!doctor::has_problem(&rows), "{rows:#?}");
    // A bus without a notification service: said, with what to do, still only a warning.
    p.desktop = Arc::new(FakeDesktop {
        display: Some(":0".into()),
        bus: true,
        notifications: Some(false),
    });
    let rows = rt.block_on(doctor::run(&p, &options(dir.path(), true)));
    let n = find(&rows, "desktop", "notifications");
    assert_eq!(n.status, CheckStatus::Warning, "{n:?}");
    assert!(n.detail.contains("no notification service"), "{n:?}");
    assert!(n.action.is_some(), "{n:?}");
    assert!(!doctor::has_problem(&rows), "{rows:#?}");
}
