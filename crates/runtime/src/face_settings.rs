//! A face's settings file (the desktop app's `<state dir>/desktop.json`): provider, model,
//! endpoints, reasoning level, language and recent workspaces. API keys are never written
//! here.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// UI (and prompt) language.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export, export_to = "app/")]
pub enum Language {
    /// English.
    #[default]
    En,
    /// Simplified Chinese.
    Zh,
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
    /// The provider in effect: the setting, else `CAIRN_PROVIDER`, else `openai`.
    pub fn effective_provider(&self, env: &dyn Fn(&str) -> Option<String>) -> String {
        non_empty(&self.provider)
            .or_else(|| env("CAIRN_PROVIDER").and_then(|v| non_empty(&v)))
            .unwrap_or_else(|| "openai".to_string())
    }

    /// The model in effect: the setting, else `CAIRN_MODEL`, else `OPENAI_MODEL`, else "".
    pub fn effective_model(&self, env: &dyn Fn(&str) -> Option<String>) -> String {
        non_empty(&self.model)
            .or_else(|| env("CAIRN_MODEL").and_then(|v| non_empty(&v)))
            .or_else(|| env("OPENAI_MODEL").and_then(|v| non_empty(&v)))
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

/// The settings file on disk.
#[derive(Debug, Clone)]
pub struct SettingsFile {
    path: PathBuf,
}

impl SettingsFile {
    /// The file `desktop.json` in `state_dir`.
    pub fn in_state_dir(state_dir: &Path) -> Self {
        SettingsFile {
            path: state_dir.join("desktop.json"),
        }
    }

    /// Where the file is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads the settings; a missing file gives defaults, a damaged one is kept aside
    /// (`desktop.json.damaged`) and defaults are used, so the app always starts.
    pub fn load(&self) -> Settings {
        let text = match fs::read_to_string(&self.path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Settings::default(),
            Err(e) => {
                tracing::warn!(path = %self.path.display(), error = %e, "cannot read settings; using defaults");
                return Settings::default();
            }
        };
        match serde_json::from_str(&text) {
            Ok(s) => s,
            Err(e) => {
                let aside = self.path.with_extension("json.damaged");
                tracing::warn!(path = %self.path.display(), error = %e, "damaged settings file moved aside; using defaults");
                let _ = fs::rename(&self.path, aside);
                Settings::default()
            }
        }
    }

    /// Writes the settings atomically (temp file, fsync, rename).
    pub fn save(&self, settings: &Settings) -> Result<(), SettingsError> {
        let io = |context: String| move |source| SettingsError::Io { context, source };
        let dir = self.path.parent().unwrap_or(Path::new("."));
        fs::create_dir_all(dir).map_err(io(format!("creating {}", dir.display())))?;
        let bytes = serde_json::to_vec_pretty(settings).map_err(|e| SettingsError::Io {
            context: "serialising settings".into(),
            source: std::io::Error::other(e),
        })?;
        let tmp = dir.join(format!(".desktop.json.{}.tmp", std::process::id()));
        {
            let mut f =
                fs::File::create(&tmp).map_err(io(format!("creating {}", tmp.display())))?;
            f.write_all(&bytes)
                .and_then(|_| f.sync_all())
                .map_err(io(format!("writing {}", tmp.display())))?;
        }
        fs::rename(&tmp, &self.path).map_err(io(format!("replacing {}", self.path.display())))
    }
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

    #[test]
    fn round_trip_and_recent_list() {
        let dir = tempfile::tempdir().unwrap();
        let file = SettingsFile::in_state_dir(dir.path());
        assert_eq!(file.load(), Settings::default());
        let mut s = Settings {
            provider: "anthropic".into(),
            model: "claude-sonnet-4-5".into(),
            language: Language::Zh,
            ..Settings::default()
        };
        s.remember_workspace(Path::new("/a"), "2026-01-01T00:00:00Z");
        s.remember_workspace(Path::new("/b"), "2026-01-02T00:00:00Z");
        s.remember_workspace(Path::new("/a"), "2026-01-03T00:00:00Z");
        let paths: Vec<_> = s.recent.iter().map(|r| r.path.as_str()).collect();
        assert_eq!(paths, ["/a", "/b"]);
        file.save(&s).unwrap();
        assert_eq!(file.load(), s);
        assert!(s.forget_workspace("/b"));
        assert!(!s.forget_workspace("/b"));
        for i in 0..20 {
            s.remember_workspace(Path::new(&format!("/w{i}")), "t");
        }
        assert_eq!(s.recent.len(), MAX_RECENT);
    }

    #[test]
    fn a_damaged_file_is_moved_aside() {
        let dir = tempfile::tempdir().unwrap();
        let file = SettingsFile::in_state_dir(dir.path());
        fs::write(file.path(), "{not json").unwrap();
        assert_eq!(file.load(), Settings::default());
        assert!(dir.path().join("desktop.json.damaged").exists());
    }

    #[test]
    fn environment_fills_what_settings_leave_empty() {
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
        assert_eq!(s.effective_model(&env), "m-set");
    }
}
