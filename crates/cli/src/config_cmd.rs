//! `cairn config get|set|unset|list|path`: the user's settings (one file in the config
//! folder, secrets in the OS keyring), each key with its value in effect and where it came
//! from: a flag (of `cairn run`), the environment, the file, the keyring or the default.

use std::io::BufRead;
use std::process::ExitCode;

use cairn_runtime::user_config::{self, schema, Resolved, Saved, UserConfig};
use clap::Subcommand;

use crate::EXIT_USAGE;

/// `cairn config` subcommands.
#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Every setting with its value and source (`--json`: one object per line).
    List {
        /// One JSON object per line: {"key", "value", "source", "default"}.
        #[arg(long)]
        json: bool,
    },
    /// One setting's value and source.
    Get {
        /// The key, e.g. `vision.model` or `tools.run_shell.timeout_ms`.
        key: String,
        /// One JSON object: {"key", "value", "source", "default"}.
        #[arg(long)]
        json: bool,
    },
    /// Set a key in the config file (a secret goes to the OS keyring; without VALUE it is
    /// read from standard input, so it stays out of the shell's history).
    Set {
        /// The key.
        key: String,
        /// The value (lists comma-separated).
        value: Option<String>,
    },
    /// Remove a key from the config file (or a secret from the keyring).
    Unset {
        /// The key.
        key: String,
    },
    /// Print the config file's path.
    Path,
}

fn env(name: &str) -> Option<String> {
    cairn_runtime::secret_env::var(name)
}

fn keys() -> std::sync::Arc<dyn cairn_secrets::KeyStore> {
    cairn_runtime::keys::key_store_from_env(&|n: &str| std::env::var(n).ok())
}

fn json_line(r: &Resolved) -> String {
    serde_json::json!({
        "key": r.key,
        "value": r.value,
        "source": source_word(r),
        "file": match &r.source {
            user_config::Source::File(p) => Some(p.display().to_string()),
            _ => None,
        },
        "env": match &r.source {
            user_config::Source::Env(v) => Some(v.clone()),
            _ => None,
        },
        "default": r.default,
    })
    .to_string()
}

fn source_word(r: &Resolved) -> &'static str {
    match r.source {
        user_config::Source::Flag => "flag",
        user_config::Source::Env(_) => "env",
        user_config::Source::File(_) => "file",
        user_config::Source::Keyring => "keyring",
        user_config::Source::Default => "default",
    }
}

fn text_line(r: &Resolved) -> String {
    format!("{:<32} {:<28} {}", r.key, r.shown(), r.source)
}

/// Runs a `cairn config` subcommand.
pub fn run(command: ConfigCommand) -> ExitCode {
    // The app's settings of the default state dir move to the config folder once (said).
    if let Some(config) = user_config::config_path() {
        let state_dir = cairn_runtime::default_state_dir();
        let file = cairn_runtime::face_settings::SettingsFile::for_user(config, Some(&state_dir));
        if let Some(note) = file.migrate() {
            errln!("note: {note}");
        }
    }
    let loaded = || {
        UserConfig::load().map_err(|e| {
            errln!("error: {e}");
            ExitCode::from(EXIT_USAGE)
        })
    };
    match command {
        ConfigCommand::Path => match user_config::config_path() {
            Some(p) => {
                outln!("{}", p.display());
                ExitCode::SUCCESS
            }
            None => {
                errln!("error: no config folder: set CAIRN_CONFIG_FILE");
                ExitCode::from(EXIT_USAGE)
            }
        },
        ConfigCommand::List { json } => {
            let cfg = match loaded() {
                Ok(c) => c,
                Err(code) => return code,
            };
            let store = keys();
            for r in cfg.list(&env, Some(store.as_ref())) {
                if json {
                    outln!("{}", json_line(&r));
                } else {
                    outln!("{}", text_line(&r));
                }
            }
            ExitCode::SUCCESS
        }
        ConfigCommand::Get { key, json } => {
            let cfg = match loaded() {
                Ok(c) => c,
                Err(code) => return code,
            };
            let store = keys();
            match cfg.resolve(&key, None, &env, Some(store.as_ref())) {
                Ok(r) if json => {
                    outln!("{}", json_line(&r));
                    ExitCode::SUCCESS
                }
                Ok(r) => {
                    outln!("{}", text_line(&r));
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    errln!("error: {e}");
                    ExitCode::from(EXIT_USAGE)
                }
            }
        }
        ConfigCommand::Set { key, value } => set(&key, value),
        ConfigCommand::Unset { key } => match user_config::unset(&key, keys().as_ref()) {
            Ok(true) => {
                errln!("{key} removed");
                ExitCode::SUCCESS
            }
            Ok(false) => {
                errln!("{key} was not set");
                ExitCode::SUCCESS
            }
            Err(e) => {
                errln!("error: {e}");
                ExitCode::from(EXIT_USAGE)
            }
        },
    }
}

fn set(key: &str, value: Option<String>) -> ExitCode {
    let value = match value {
        Some(v) => v,
        None => {
            let mut line = String::new();
            if let Err(e) = std::io::stdin().lock().read_line(&mut line) {
                errln!("error: could not read the value: {e}");
                return ExitCode::from(EXIT_USAGE);
            }
            line.trim().to_string()
        }
    };
    let store = keys();
    match user_config::set(key, &value, store.as_ref()) {
        Ok(saved) => {
            match saved {
                Saved::File(p) => errln!("{key} set in {}", p.display()),
                Saved::Keyring(entry) => errln!("{key} stored in the OS keyring (entry `{entry}`)"),
            }
            // A value the environment overrides is set, but not in effect: say so.
            if let Some(spec) = schema::spec(key) {
                if let Some(var) = spec
                    .env
                    .iter()
                    .find(|v| env(v).is_some_and(|x| !x.trim().is_empty()))
                {
                    errln!("note: ${var} is set and wins over the file");
                }
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            errln!("error: {e}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}
