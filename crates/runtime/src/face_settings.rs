//! The desktop app's settings: its preferences (provider, model, endpoints, reasoning level,
//! language) are keys of the user's `config.toml` ([`crate::user_config`], the file `cairn
//! config` edits), and what it remembers (recent workspaces, windows, last sessions) is
//! `desktop.json` beside it, in the config folder: `--state-dir` no longer changes either.
//! A `desktop.json` of the state folder (where it used to live) is migrated once, and the
//! move is logged. API keys are never written here.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// UI (and prompt) language: every language the prompts support (the UI's own text is
/// English or Simplified Chinese; the others show English text and prompt in theirs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "app/")]
pub enum Language {
    /// English.
    #[default]
    #[serde(rename = "en")]
    En,
    /// Simplified Chinese.
    #[serde(rename = "zh")]
    Zh,
    /// Traditional Chinese.
    #[serde(rename = "zh-TW")]
    ZhTw,
    /// Japanese.
    #[serde(rename = "ja")]
    Ja,
    /// Korean.
    #[serde(rename = "ko")]
    Ko,
    /// Spanish.
    #[serde(rename = "es")]
    Es,
}

impl Language {
    /// The prompt language.
    pub fn lang(self) -> cairn_engine::prompt::Lang {
        use cairn_engine::prompt::Lang;
        match self {
            Language::En => Lang::En,
            Language::Zh => Lang::Zh,
            Language::ZhTw => Lang::ZhTw,
            Language::Ja => Lang::Ja,
            Language::Ko => Lang::Ko,
            Language::Es => Lang::Es,
        }
    }

    /// From a prompt language.
    pub fn from_lang(lang: cairn_engine::prompt::Lang) -> Language {
        use cairn_engine::prompt::Lang;
        match lang {
            Lang::En => Language::En,
            Lang::Zh => Language::Zh,
            Lang::ZhTw => Language::ZhTw,
            Lang::Ja => Language::Ja,
            Lang::Ko => Language::Ko,
            Lang::Es => Language::Es,
        }
    }

    /// The code the config file stores (`zh-TW`, …).
    pub fn code(self) -> &'static str {
        crate::user_config::schema::lang_code(self.lang())
    }
}

/// A workspace in the welcome screen's recent list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct RecentWorkspace {
    /// Absolute path.
    pub path: String,
    /// Folder name.
    pub name: String,
    /// RFC 3339 time it was last opened.
    pub opened_at: String,
    /// Whether the folder still exists.
    pub available: bool,
}

/// Most recent workspaces remembered.
const MAX_RECENT: usize = 12;

/// A provider choice from a settings form, checked and normalised: the provider (one of
/// Cairn's, lower-cased), the base URL (empty, or `http(s)://…`) and the reasoning level
/// (empty, or one the providers know); the error is the sentence to show.
pub fn checked_choice(
    provider: &str,
    base_url: &str,
    reasoning: &str,
) -> Result<(String, String, String), String> {
    let provider = provider.trim().to_ascii_lowercase();
    if !crate::llm_setup::provider_names().contains(&provider) {
        return Err(format!("Unknown provider `{provider}`."));
    }
    let base_url = base_url.trim().to_string();
    let has_scheme = base_url.starts_with("http://") || base_url.starts_with("https://");
    if !base_url.is_empty() && !has_scheme {
        return Err("The base URL must start with http:// or https://.".into());
    }
    let reasoning = reasoning.trim().to_ascii_lowercase();
    if !reasoning.is_empty() && cairn_providers::ThinkingLevel::parse(&reasoning).is_none() {
        return Err(format!("Unknown reasoning level `{reasoning}`."));
    }
    Ok((provider, base_url, reasoning))
}

/// Errors reading or writing the settings file.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// The file could not be read or written.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The config file could not be written.
    #[error(transparent)]
    Config(#[from] crate::user_config::ConfigError),
}

/// One remembered workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecentEntry {
    /// Absolute path.
    pub path: String,
    /// RFC 3339 time it was last opened.
    pub opened_at: String,
}

/// Persisted desktop settings.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Settings {
    /// Provider name ("" = `CAIRN_PROVIDER`, else `openai`).
    pub provider: String,
    /// Model id ("" = `CAIRN_MODEL`, else `OPENAI_MODEL`).
    pub model: String,
    /// Endpoint overrides per provider.
    pub base_urls: BTreeMap<String, String>,
    /// Reasoning level ("" = the model's default).
    pub reasoning: String,
    /// UI language.
    pub language: Language,
    /// Recently opened workspaces, newest first.
    pub recent: Vec<RecentEntry>,
    /// Workspaces of the extra windows open at the last exit (reopened at start).
    pub windows: Vec<String>,
    /// The main window's workspace at the last exit (reopened at start; none after the user
    /// closed it).
    pub main_workspace: Option<String>,
    /// The session last shown per workspace (reopened with it).
    pub last_sessions: BTreeMap<String, String>,
}

impl Settings {
    /// The provider in effect (one precedence for every setting: environment, then file):
    /// `CAIRN_PROVIDER`, else the setting, else `openai`.
    pub fn effective_provider(&self, env: &dyn Fn(&str) -> Option<String>) -> String {
        env("CAIRN_PROVIDER")
            .and_then(|v| non_empty(&v))
            .or_else(|| non_empty(&self.provider))
            .unwrap_or_else(|| "openai".to_string())
    }

    /// The model in effect: `CAIRN_MODEL`, else `OPENAI_MODEL`, else the setting, else "".
    pub fn effective_model(&self, env: &dyn Fn(&str) -> Option<String>) -> String {
        env("CAIRN_MODEL")
            .and_then(|v| non_empty(&v))
            .or_else(|| env("OPENAI_MODEL").and_then(|v| non_empty(&v)))
            .or_else(|| non_empty(&self.model))
            .unwrap_or_default()
    }

    /// The endpoint override for `provider` ("" = none).
    pub fn base_url_for(&self, provider: &str) -> String {
        self.base_urls.get(provider).cloned().unwrap_or_default()
    }

    /// Moves `path` to the top of the recent list.
    pub fn remember_workspace(&mut self, path: &Path, now: &str) {
        let path = path.display().to_string();
        self.recent.retain(|r| r.path != path);
        self.recent.insert(
            0,
            RecentEntry {
                path,
                opened_at: now.to_string(),
            },
        );
        self.recent.truncate(MAX_RECENT);
    }

    /// Remembers `session` as the one to reopen with `workspace`.
    pub fn remember_session(&mut self, workspace: &str, session: &str) {
        self.last_sessions
            .insert(workspace.to_string(), session.to_string());
    }

    /// Forgets `session` wherever it was the one to reopen.
    pub fn forget_session(&mut self, session: &str) {
        self.last_sessions.retain(|_, s| s != session);
    }

    /// Drops `path` from the recent list; false when it was not there.
    pub fn forget_workspace(&mut self, path: &str) -> bool {
        let before = self.recent.len();
        self.recent.retain(|r| r.path != path);
        self.recent.len() != before
    }

    /// The recent list as the welcome screen shows it.
    pub fn recent_view(&self) -> Vec<RecentWorkspace> {
        self.recent
            .iter()
            .map(|r| {
                let path = Path::new(&r.path);
                RecentWorkspace {
                    path: r.path.clone(),
                    name: folder_name(path),
                    opened_at: r.opened_at.clone(),
                    available: path.is_dir(),
                }
            })
            .collect()
    }
}

/// The last component of a path, or the path itself.
pub fn folder_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

fn non_empty(s: &str) -> Option<String> {
    let t = s.trim();
    (!t.is_empty()).then(|| t.to_string())
}

/// The app's settings on disk: preferences in `config.toml`, memory in `desktop.json` beside it.
#[derive(Debug, Clone)]
pub struct SettingsFile {
    /// `desktop.json`.
    path: PathBuf,
    /// `config.toml`.
    config: PathBuf,
    /// The state folder's `desktop.json`, migrated once.
    legacy: Option<PathBuf>,
}

impl SettingsFile {
    /// The user's: `config.toml` at `config` (`CAIRN_CONFIG_FILE` or the config folder's)
    /// and `desktop.json` beside it; `legacy_state_dir`'s `desktop.json` is migrated once.
    pub fn for_user(config: PathBuf, legacy_state_dir: Option<&Path>) -> Self {
        let dir = config.parent().unwrap_or(Path::new(".")).to_path_buf();
        SettingsFile {
            path: dir.join("desktop.json"),
            config,
            legacy: legacy_state_dir.map(|d| d.join("desktop.json")),
        }
    }

    /// [`SettingsFile::for_user`] at the config file `env` names (`CAIRN_CONFIG_FILE`), else
    /// the config folder's (a system without one: `<state dir>/config.toml`).
    pub fn for_env(env: &dyn Fn(&str) -> Option<String>, state_dir: &Path) -> Self {
        let config = env("CAIRN_CONFIG_FILE")
            .filter(|p| !p.trim().is_empty())
            .map(PathBuf::from)
            .or_else(crate::user_config::config_path)
            .unwrap_or_else(|| state_dir.join("config.toml"));
        Self::for_user(config, Some(state_dir))
    }

    /// Where the app's memory (`desktop.json`) is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where the preferences (`config.toml`) are.
    pub fn config_path(&self) -> &Path {
        &self.config
    }

    /// Moves the state folder's `desktop.json` to the config folder, once: its preferences
    /// into `config.toml` (keys already there stay), the rest into `desktop.json`; the old file
    /// is kept as `desktop.json.migrated`. Returns what to tell the user when it moved.
    pub fn migrate(&self) -> Option<String> {
        let legacy = self.legacy.as_ref()?;
        if self.path.exists() || !legacy.is_file() || legacy == &self.path {
            return None;
        }
        let old = read_json(legacy);
        let prefs = self.user_config();
        let merged = Settings {
            provider: prefs.file_value("provider").unwrap_or(old.provider.clone()),
            model: prefs.file_value("model").unwrap_or(old.model.clone()),
            reasoning: prefs
                .file_value("reasoning")
                .unwrap_or(old.reasoning.clone()),
            language: match prefs.file_value("language") {
                Some(_) => load_language(&prefs),
                None => old.language,
            },
            base_urls: {
                let mut b = old.base_urls.clone();
                b.extend(base_urls(&prefs));
                b
            },
            ..old
        };
        if let Err(e) = self.save(&merged) {
            tracing::warn!(error = %e, "could not migrate {}", legacy.display());
            return None;
        }
        let _ = fs::rename(legacy, legacy.with_extension("json.migrated"));
        let note = format!(
            "Settings moved from {} to the config folder: preferences into {}, recent \
             workspaces and windows into {} (the old file is kept as desktop.json.migrated)",
            legacy.display(),
            self.config.display(),
            self.path.display()
        );
        tracing::warn!("{note}");
        Some(note)
    }

    fn user_config(&self) -> crate::user_config::UserConfig {
        crate::user_config::UserConfig::load_paths(Some(self.config.clone()), None).unwrap_or_else(
            |e| {
                tracing::warn!("{e}; preferences start from defaults");
                Default::default()
            },
        )
    }

    /// Reads the settings (migrating the old file first); a missing file gives defaults, a
    /// damaged `desktop.json` is kept aside (`desktop.json.damaged`) and defaults are used,
    /// so the app always starts.
    pub fn load(&self) -> Settings {
        self.migrate();
        let memory = read_json(&self.path);
        let prefs = self.user_config();
        Settings {
            provider: prefs.file_value("provider").unwrap_or_default(),
            model: prefs.file_value("model").unwrap_or_default(),
            reasoning: prefs.file_value("reasoning").unwrap_or_default(),
            language: load_language(&prefs),
            base_urls: base_urls(&prefs),
            ..memory
        }
    }

    /// Writes the preferences that changed into `config.toml` (one key each, the rest of the
    /// file kept) and the memory into `desktop.json` atomically (temp file, fsync, rename).
    pub fn save(&self, settings: &Settings) -> Result<(), SettingsError> {
        use crate::user_config::{schema, set_in, unset_in};
        let prefs = self.user_config();
        let mut wanted: Vec<(String, String)> = vec![
            ("provider".into(), settings.provider.trim().to_string()),
            ("model".into(), settings.model.trim().to_string()),
            ("reasoning".into(), settings.reasoning.trim().to_string()),
            (
                "language".into(),
                match settings.language {
                    Language::En => String::new(),
                    l => l.code().to_string(),
                },
            ),
        ];
        for (p, url) in &settings.base_urls {
            wanted.push((format!("base_urls.{p}"), url.trim().to_string()));
        }
        for p in base_urls(&prefs).keys() {
            if !settings.base_urls.contains_key(p) {
                wanted.push((format!("base_urls.{p}"), String::new()));
            }
        }
        for (key, want) in wanted {
            let have = prefs.file_value(&key).unwrap_or_default();
            let have = if key == "language" && have == "en" {
                String::new()
            } else {
                have
            };
            if have == want {
                continue;
            }
            let Some(spec) = schema::spec(&key) else {
                continue;
            };
            if want.is_empty() {
                unset_in(&self.config, spec, &key)?;
            } else {
                let value = schema::check(spec, &want).map_err(|why| {
                    crate::user_config::ConfigError::Invalid {
                        key: key.clone(),
                        why,
                    }
                })?;
                set_in(&self.config, spec, &key, &value)?;
            }
        }
        let memory = Settings {
            provider: String::new(),
            model: String::new(),
            reasoning: String::new(),
            language: Language::En,
            base_urls: BTreeMap::new(),
            ..settings.clone()
        };
        write_json(&self.path, &memory)
    }
}

fn load_language(prefs: &crate::user_config::UserConfig) -> Language {
    prefs
        .file_value("language")
        .and_then(|l| cairn_engine::prompt::Lang::parse(&l))
        .map(Language::from_lang)
        .unwrap_or_default()
}

fn base_urls(prefs: &crate::user_config::UserConfig) -> BTreeMap<String, String> {
    prefs
        .keys_under("base_urls")
        .into_iter()
        .filter_map(|p| {
            let v = prefs.file_value(&format!("base_urls.{p}"))?;
            Some((p, v))
        })
        .collect()
}

/// Reads a settings JSON file; missing = defaults, damaged = moved aside and defaults.
fn read_json(path: &Path) -> Settings {
    let text = match fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Settings::default(),
        Err(e) => {
            tracing::warn!(path = %path.display(), error = %e, "cannot read settings; using defaults");
            return Settings::default();
        }
    };
    match serde_json::from_str(&text) {
        Ok(s) => s,
        Err(e) => {
            let aside = path.with_extension("json.damaged");
            tracing::warn!(path = %path.display(), error = %e, "damaged settings file moved aside; using defaults");
            let _ = fs::rename(path, aside);
            Settings::default()
        }
    }
}

fn write_json(path: &Path, settings: &Settings) -> Result<(), SettingsError> {
    let io = |context: String| move |source| SettingsError::Io { context, source };
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir).map_err(io(format!("creating {}", dir.display())))?;
    let bytes = serde_json::to_vec_pretty(settings).map_err(|e| SettingsError::Io {
        context: "serialising settings".into(),
        source: std::io::Error::other(e),
    })?;
    let tmp = dir.join(format!(".desktop.json.{}.tmp", std::process::id()));
    {
        let mut f = fs::File::create(&tmp).map_err(io(format!("creating {}", tmp.display())))?;
        f.write_all(&bytes)
            .and_then(|_| f.sync_all())
            .map_err(io(format!("writing {}", tmp.display())))?;
    }
    fs::rename(&tmp, path).map_err(io(format!("replacing {}", path.display())))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn a_settings_choice_is_checked_and_normalised() {
        assert_eq!(
            checked_choice(" OpenAI ", " https://llm.example/v1 ", "HIGH"),
            Ok((
                "openai".into(),
                "https://llm.example/v1".into(),
                "high".into()
            ))
        );
        assert_eq!(
            checked_choice("nope", "", "").unwrap_err(),
            "Unknown provider `nope`."
        );
        assert!(checked_choice("openai", "llm.example", "")
            .unwrap_err()
            .contains("http://"));
        assert!(checked_choice("openai", "", "maximal")
            .unwrap_err()
            .contains("reasoning level"));
    }

    fn no_env(_: &str) -> Option<String> {
        None
    }

    /// A settings file of the user's config folder in `dir`, the state dir's old file beside.
    fn files(dir: &Path) -> SettingsFile {
        SettingsFile::for_user(dir.join("config/config.toml"), Some(&dir.join("state")))
    }

    #[test]
    fn round_trip_and_recent_list() {
        let dir = tempfile::tempdir().unwrap();
        let file = files(dir.path());
        assert_eq!(file.load(), Settings::default());
        let mut s = Settings {
            provider: "anthropic".into(),
            model: "claude-sonnet-4-5".into(),
            language: Language::ZhTw,
            ..Settings::default()
        };
        s.base_urls
            .insert("ollama".into(), "http://127.0.0.1:11434/v1".into());
        s.remember_workspace(Path::new("/a"), "2026-01-01T00:00:00Z");
        s.remember_workspace(Path::new("/b"), "2026-01-02T00:00:00Z");
        s.remember_workspace(Path::new("/a"), "2026-01-03T00:00:00Z");
        let paths: Vec<_> = s.recent.iter().map(|r| r.path.as_str()).collect();
        assert_eq!(paths, ["/a", "/b"]);
        file.save(&s).unwrap();
        assert_eq!(file.load(), s);
        // Preferences are keys of config.toml (the file `cairn config` edits), the memory
        // is desktop.json beside it.
        let toml = fs::read_to_string(dir.path().join("config/config.toml")).unwrap();
        assert!(toml.contains("model = \"claude-sonnet-4-5\""), "{toml}");
        assert!(toml.contains("language = \"zh-TW\""), "{toml}");
        assert!(toml.contains("[base_urls]"), "{toml}");
        let json = fs::read_to_string(dir.path().join("config/desktop.json")).unwrap();
        assert!(json.contains("/a") && !json.contains("claude"), "{json}");
        // Dropping an endpoint removes its key.
        s.base_urls.clear();
        file.save(&s).unwrap();
        assert!(file.load().base_urls.is_empty());
        assert!(s.forget_workspace("/b"));
        assert!(!s.forget_workspace("/b"));
        for i in 0..20 {
            s.remember_workspace(Path::new(&format!("/w{i}")), "t");
        }
        assert_eq!(s.recent.len(), MAX_RECENT);
    }

    #[test]
    fn the_state_dirs_old_file_is_migrated_once_keeping_what_config_toml_says() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        fs::create_dir_all(&state).unwrap();
        fs::write(
            state.join("desktop.json"),
            r#"{"provider": "deepseek", "model": "old-model", "language": "zh",
                "recent": [{"path": "/p", "openedAt": "t"}]}"#,
        )
        .unwrap();
        fs::create_dir_all(dir.path().join("config")).unwrap();
        fs::write(
            dir.path().join("config/config.toml"),
            "# mine\nmodel = \"set-by-cairn-config\"\n",
        )
        .unwrap();
        let file = files(dir.path());
        let note = file.migrate().unwrap();
        assert!(
            note.contains("moved") && note.contains("config.toml"),
            "{note}"
        );
        let s = file.load();
        assert_eq!(s.provider, "deepseek");
        assert_eq!(s.model, "set-by-cairn-config", "config.toml wins");
        assert_eq!(s.language, Language::Zh);
        assert_eq!(s.recent[0].path, "/p");
        assert!(!state.join("desktop.json").exists());
        assert!(state.join("desktop.json.migrated").exists());
        let toml = fs::read_to_string(dir.path().join("config/config.toml")).unwrap();
        assert!(
            toml.starts_with("# mine\n"),
            "the user's comments stay: {toml}"
        );
        // Once: a new old file is not read again.
        fs::write(state.join("desktop.json"), r#"{"model": "again"}"#).unwrap();
        assert_eq!(file.migrate(), None);
        assert_eq!(file.load().model, "set-by-cairn-config");
        // Another state dir reads the same settings: --state-dir no longer changes them.
        let other = SettingsFile::for_user(
            dir.path().join("config/config.toml"),
            Some(&dir.path().join("elsewhere")),
        );
        assert_eq!(other.load(), file.load());
    }

    #[test]
    fn a_damaged_file_is_moved_aside() {
        let dir = tempfile::tempdir().unwrap();
        let file = files(dir.path());
        fs::create_dir_all(dir.path().join("config")).unwrap();
        fs::write(file.path(), "{not json").unwrap();
        assert_eq!(file.load(), Settings::default());
        assert!(dir.path().join("config/desktop.json.damaged").exists());
    }

    #[test]
    fn environment_wins_over_settings_which_win_over_defaults() {
        let env = |k: &str| match k {
            "CAIRN_MODEL" => Some("m-env".to_string()),
            "CAIRN_PROVIDER" => Some(" ".to_string()),
            _ => None,
        };
        let s = Settings::default();
        assert_eq!(s.effective_model(&env), "m-env");
        assert_eq!(s.effective_provider(&env), "openai");
        assert_eq!(s.effective_model(&no_env), "");
        let s = Settings {
            model: "m-set".into(),
            ..Settings::default()
        };
        assert_eq!(s.effective_model(&env), "m-env");
        assert_eq!(s.effective_model(&no_env), "m-set");
    }
}
