#![allow(clippy::unwrap_used, clippy::expect_used)]
use super::*;
use cairn_secrets::MemoryKeyStore;

fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
    move |k| {
        pairs
            .iter()
            .find(|(n, _)| *n == k)
            .map(|(_, v)| v.to_string())
    }
}

fn spec(key: &str) -> &'static KeySpec {
    schema::spec(key).unwrap()
}

#[test]
fn one_precedence_flag_env_file_default_with_the_source_named() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("config.toml");
    set_in(&file, spec("retries"), "retries", "5").unwrap();
    set_in(&file, spec("vision.model"), "vision.model", "gpt-4o").unwrap();
    let cfg = UserConfig::load_paths(Some(file.clone()), None).unwrap();
    let none = env_of(&[]);
    let env = env_of(&[("NETWORK_RETRY_MAX", "7")]);
    let r = cfg.resolve("retries", Some("9"), &env, None).unwrap();
    assert_eq!((r.value.as_deref(), &r.source), (Some("9"), &Source::Flag));
    let r = cfg.resolve("retries", None, &env, None).unwrap();
    assert_eq!(r.value.as_deref(), Some("7"));
    assert_eq!(r.source, Source::Env("NETWORK_RETRY_MAX".into()));
    let r = cfg.resolve("retries", None, &none, None).unwrap();
    assert_eq!(
        (r.value.as_deref(), &r.source),
        (Some("5"), &Source::File(file.clone()))
    );
    let r = cfg.resolve("max_output_tokens", None, &none, None).unwrap();
    assert_eq!((r.value, r.source), (None, Source::Default));
    // An older variable name counts as the key's environment.
    let r = cfg
        .resolve("model", None, &env_of(&[("OPENAI_MODEL", "m")]), None)
        .unwrap();
    assert_eq!(r.source, Source::Env("OPENAI_MODEL".into()));
    assert_eq!(cfg.for_env("CAIRN_VISION_MODEL").as_deref(), Some("gpt-4o"));
    assert!(matches!(
        cfg.resolve("no.such", None, &none, None),
        Err(ConfigError::Unknown(_))
    ));
    let listed = cfg.list(&none, None);
    assert!(listed
        .iter()
        .any(|r| r.key == "vision.model" && r.value.is_some()));
    assert!(listed.iter().any(|r| r.key == "sandbox.mode"));
}

#[test]
fn set_keeps_the_users_comments_checks_values_and_unset_removes() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("cairn/config.toml");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, "# my settings\n[claude_code]\nuser_files = true\n").unwrap();
    set_in(
        &file,
        spec("tools.run_shell.timeout_ms"),
        "tools.run_shell.timeout_ms",
        "5000",
    )
    .unwrap();
    set_in(
        &file,
        spec("tools.disabled"),
        "tools.disabled",
        "web_fetch,grep",
    )
    .unwrap();
    set_in(&file, spec("language"), "language", "ja").unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.contains("# my settings\n[claude_code]\nuser_files = true"),
        "{text}"
    );
    assert!(
        text.contains("[tools.run_shell]\ntimeout_ms = 5000"),
        "{text}"
    );
    let cfg = UserConfig::load_paths(Some(file.clone()), None).unwrap();
    assert_eq!(
        cfg.file_value("tools.disabled").as_deref(),
        Some("web_fetch,grep")
    );
    assert_eq!(
        cfg.file_value("claude_code.user_files").as_deref(),
        Some("true")
    );
    let tools = cfg.tool_settings(&env_of(&[]));
    assert_eq!(tools.disabled, ["web_fetch", "grep"]);
    assert_eq!(tools.limits["run_shell"], (Some(5000), None));
    assert!(unset_in(&file, spec("language"), "language").unwrap());
    assert!(!unset_in(&file, spec("language"), "language").unwrap());
    assert!(schema::check(spec("approval_timeout"), "soon").is_err());
    assert!(schema::check(spec("sandbox.mode"), "sometimes").is_err());
}

#[test]
fn sandbox_keys_live_in_sandbox_toml_beside_the_users_keys() {
    let d = tempfile::tempdir().unwrap();
    let sandbox = d.path().join("sandbox.toml");
    std::fs::write(&sandbox, "extraWritable = [\"/data\"]\n").unwrap();
    set_in(
        &sandbox,
        spec("sandbox.shell_policy"),
        "sandbox.shell_policy",
        "sandbox",
    )
    .unwrap();
    let text = std::fs::read_to_string(&sandbox).unwrap();
    assert!(text.contains("shellPolicy = \"sandbox\""), "{text}");
    assert!(text.contains("extraWritable = [\"/data\"]"), "kept: {text}");
    let cfg = UserConfig::load_paths(None, Some(sandbox.clone())).unwrap();
    let r = cfg
        .resolve("sandbox.shell_policy", None, &env_of(&[]), None)
        .unwrap();
    assert_eq!(
        (r.value.as_deref(), r.source),
        (Some("sandbox"), Source::File(sandbox))
    );
}

#[test]
fn secrets_go_to_the_keyring_never_to_the_file_and_show_masked() {
    let d = tempfile::tempdir().unwrap();
    let keys = MemoryKeyStore::new();
    let spec = spec("web_search.brave_key");
    let Kind::Secret(entry) = spec.kind else {
        panic!("a secret")
    };
    keys.set(entry, &ApiKey::new("brave-key-0123456789").unwrap())
        .unwrap();
    let cfg = UserConfig::load_paths(Some(d.path().join("config.toml")), None).unwrap();
    let r = cfg
        .resolve("web_search.brave_key", None, &env_of(&[]), Some(&keys))
        .unwrap();
    assert_eq!(r.source, Source::Keyring);
    let shown = r.value.unwrap();
    assert!(
        shown.ends_with("6789") && !shown.contains("brave-key"),
        "{shown}"
    );
}
