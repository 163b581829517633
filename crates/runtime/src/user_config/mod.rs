//! The user's settings: one home, one format, one precedence. Every key of
//! [`schema::KEYS`] lives in the config folder (`<config dir>/cairn/config.toml`, moved by
//! `CAIRN_CONFIG_FILE`; the sandbox's keys in `sandbox.toml` beside it, as before), secrets in
//! the OS keyring, and a value comes from the first of: the face's flag, the environment
//! variable, the file, the default. `cairn config get|set|unset|list` and the app's Settings
//! read and write the same file; [`var`] is the environment-then-file lookup every reader of
//! a setting goes through.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use cairn_secrets::{ApiKey, KeyStore};

mod edit;
pub mod schema;

pub use edit::{set_in, unset_in};
use schema::{FileId, KeySpec, Kind};

/// Why a setting could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// No such key.
    #[error("unknown setting `{0}` (see `cairn config list`)")]
    Unknown(String),
    /// The value does not fit the key.
    #[error("{key}: {why}")]
    Invalid {
        /// The key.
        key: String,
        /// What is wrong.
        why: String,
    },
    /// A file could not be read, parsed or written.
    #[error("{path}: {why}")]
    File {
        /// The file.
        path: String,
        /// What went wrong.
        why: String,
    },
    /// There is no config folder (no home).
    #[error("no config folder: set CAIRN_CONFIG_FILE")]
    NoFolder,
    /// The keyring refused a secret.
    #[error("{0}")]
    Keyring(String),
}

impl From<ConfigError> for crate::error::RuntimeError {
    fn from(e: ConfigError) -> Self {
        crate::error::RuntimeError::Config(e.to_string())
    }
}

/// Where a value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The face's flag.
    Flag,
    /// This environment variable.
    Env(String),
    /// This file.
    File(PathBuf),
    /// The OS keyring.
    Keyring,
    /// Nothing set it.
    Default,
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Flag => write!(f, "flag"),
            Source::Env(v) => write!(f, "env {v}"),
            Source::File(p) => write!(f, "file {}", p.display()),
            Source::Keyring => write!(f, "keyring"),
            Source::Default => write!(f, "default"),
        }
    }
}

/// A key's value in effect and where it came from (secrets masked).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The key.
    pub key: String,
    /// The value; `None` = the default applies.
    pub value: Option<String>,
    /// Where it came from.
    pub source: Source,
    /// The default as the README shows it.
    pub default: &'static str,
}

impl Resolved {
    /// The value, or the default's description.
    pub fn shown(&self) -> String {
        self.value
            .clone()
            .unwrap_or_else(|| format!("({})", self.default))
    }
}

/// One user setting as the Settings show it (the same keys as `cairn config`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct SettingOption {
    /// The config key (`vision.model`).
    pub key: String,
    /// The value in effect (a secret masked); `None` = the default.
    pub value: Option<String>,
    /// Where it came from: `env`, `file`, `keyring` or `default`.
    pub source: String,
    /// The environment variable that set it (then the file's value does not apply).
    pub env: Option<String>,
    /// The key's environment variables.
    pub variables: Vec<String>,
    /// The default, described.
    pub default: String,
    /// What it does.
    pub about: String,
    /// `text`, `number`, `fraction`, `bool`, `choice`, `list` or `secret`.
    pub kind: String,
    /// The words a `choice` takes.
    pub choices: Vec<String>,
}

/// `••••` plus the last four characters (keys shorter than 12 show nothing of themselves).
pub fn mask(key: &str) -> String {
    let n = key.chars().count();
    if n < 12 {
        return "••••••••".to_string();
    }
    let tail: String = key.chars().skip(n - 4).collect();
    format!("••••••••{tail}")
}

/// The sandbox settings file: `CAIRN_SANDBOX_FILE`, else `<config dir>/cairn/sandbox.toml`.
pub fn sandbox_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("CAIRN_SANDBOX_FILE").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    dirs::config_dir().map(|d| d.join("cairn").join("sandbox.toml"))
}

/// `config.toml`: `CAIRN_CONFIG_FILE`, else `<config dir>/cairn/config.toml`.
pub fn config_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("CAIRN_CONFIG_FILE").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    crate::reserved::config_dir().map(|d| d.join("config.toml"))
}

/// The folder of the user's settings: the one holding `config.toml`.
pub fn config_folder() -> Option<PathBuf> {
    config_path().and_then(|p| p.parent().map(Path::to_path_buf))
}

/// The user's files as read once.
#[derive(Debug, Clone, Default)]
pub struct UserConfig {
    config_path: Option<PathBuf>,
    config: toml::Table,
    sandbox_path: Option<PathBuf>,
    sandbox: toml::Table,
}

fn read_table(path: Option<&Path>) -> Result<toml::Table, ConfigError> {
    let Some(path) = path else {
        return Ok(toml::Table::new());
    };
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(toml::Table::new()),
        Err(e) => {
            return Err(ConfigError::File {
                path: path.display().to_string(),
                why: e.to_string(),
            })
        }
    };
    toml::from_str(&text).map_err(|e| ConfigError::File {
        path: path.display().to_string(),
        why: e.to_string(),
    })
}

/// A TOML value as the environment would spell it (lists comma-separated).
fn plain(v: &toml::Value) -> Option<String> {
    match v {
        toml::Value::String(s) => Some(s.clone()),
        toml::Value::Integer(n) => Some(n.to_string()),
        toml::Value::Float(f) => Some(f.to_string()),
        toml::Value::Boolean(b) => Some(b.to_string()),
        toml::Value::Array(a) => Some(a.iter().filter_map(plain).collect::<Vec<_>>().join(",")),
        _ => None,
    }
}

fn non_empty(v: Option<String>) -> Option<String> {
    v.map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
}

impl UserConfig {
    /// The user's files ([`config_path`], the sandbox settings' path).
    pub fn load() -> Result<UserConfig, ConfigError> {
        Self::load_paths(config_path(), sandbox_path())
    }

    /// The files at these paths (missing = empty).
    pub fn load_paths(
        config: Option<PathBuf>,
        sandbox: Option<PathBuf>,
    ) -> Result<UserConfig, ConfigError> {
        Ok(UserConfig {
            config: read_table(config.as_deref())?,
            sandbox: read_table(sandbox.as_deref())?,
            config_path: config,
            sandbox_path: sandbox,
        })
    }

    /// The file that holds `spec`.
    fn file_of(&self, spec: &KeySpec) -> (Option<&PathBuf>, &toml::Table) {
        match spec.file {
            FileId::Config => (self.config_path.as_ref(), &self.config),
            FileId::Sandbox => (self.sandbox_path.as_ref(), &self.sandbox),
        }
    }

    /// What the file says for `key` (no environment, no default).
    pub fn file_value(&self, key: &str) -> Option<String> {
        let spec = schema::spec(key)?;
        if matches!(spec.kind, Kind::Secret(_)) {
            return None;
        }
        let (_, table) = self.file_of(spec);
        let path = spec.file_key.unwrap_or(key);
        let mut parts = path.split('.').peekable();
        let mut cur = table;
        while let Some(part) = parts.next() {
            let v = cur.get(part)?;
            if parts.peek().is_none() {
                return non_empty(plain(v));
            }
            cur = v.as_table()?;
        }
        None
    }

    /// The file's value of the key whose environment variables include `var`.
    pub fn for_env(&self, var: &str) -> Option<String> {
        // The sandbox's keys are read from sandbox.toml by its own loader, never through here.
        schema::spec_for_env(var)
            .filter(|s| s.file == FileId::Config)
            .and_then(|s| self.file_value(s.key))
    }

    /// `key` as in effect: `flag`, else its environment variables (through `env`), else the
    /// file, else the keyring (secrets), else the default.
    pub fn resolve(
        &self,
        key: &str,
        flag: Option<&str>,
        env: &dyn Fn(&str) -> Option<String>,
        keys: Option<&dyn KeyStore>,
    ) -> Result<Resolved, ConfigError> {
        let spec = schema::spec(key).ok_or_else(|| ConfigError::Unknown(key.to_string()))?;
        let secret = matches!(spec.kind, Kind::Secret(_));
        let shown = |v: String| {
            if secret {
                mask(&v)
            } else {
                v
            }
        };
        let resolved = |value: Option<String>, source: Source| Resolved {
            key: key.to_string(),
            value,
            source,
            default: spec.default,
        };
        if let Some(v) = non_empty(flag.map(str::to_string)) {
            return Ok(resolved(Some(shown(v)), Source::Flag));
        }
        for var in spec.env {
            if let Some(v) = non_empty(env(var)) {
                return Ok(resolved(Some(shown(v)), Source::Env(var.to_string())));
            }
        }
        if let Some(v) = self.file_value(key) {
            let (path, _) = self.file_of(spec);
            let path = path.cloned().unwrap_or_default();
            return Ok(resolved(Some(v), Source::File(path)));
        }
        if let (Kind::Secret(entry), Some(keys)) = (spec.kind, keys) {
            if let Ok(Some(k)) = keys.get(entry) {
                return Ok(resolved(
                    Some(shown(k.expose().to_string())),
                    Source::Keyring,
                ));
            }
        }
        Ok(resolved(None, Source::Default))
    }

    /// Every key: the schema's (pattern keys as the file has them), each resolved.
    pub fn list(
        &self,
        env: &dyn Fn(&str) -> Option<String>,
        keys: Option<&dyn KeyStore>,
    ) -> Vec<Resolved> {
        let mut out = Vec::new();
        for spec in schema::KEYS {
            let names = if spec.key.contains('*') {
                self.instances(spec)
            } else {
                vec![spec.key.to_string()]
            };
            for name in names {
                if let Ok(r) = self.resolve(&name, None, env, keys) {
                    out.push(r);
                }
            }
        }
        out
    }

    /// The keys of the file matching a pattern key (`tools.*.timeout_ms`).
    fn instances(&self, spec: &KeySpec) -> Vec<String> {
        let parts: Vec<&str> = spec.key.split('.').collect();
        let Some(star) = parts.iter().position(|p| *p == "*") else {
            return Vec::new();
        };
        let mut cur = &self.config;
        for p in &parts[..star] {
            match cur.get(*p).and_then(|v| v.as_table()) {
                Some(t) => cur = t,
                None => return Vec::new(),
            }
        }
        cur.keys()
            .map(|word| {
                let mut k = parts.clone();
                k[star] = word;
                k.join(".")
            })
            .filter(|k| self.file_value(k).is_some())
            .collect()
    }

    /// The names of the tables under `section` of `config.toml` (`base_urls` → providers).
    pub fn keys_under(&self, section: &str) -> Vec<String> {
        self.config
            .get(section)
            .and_then(|v| v.as_table())
            .map(|t| t.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// The per-tool settings of the file (`tools.disabled` and `tools.<name>.*`).
    pub fn tool_settings(&self, env: &dyn Fn(&str) -> Option<String>) -> ToolSettings {
        let mut t = ToolSettings::default();
        if let Ok(r) = self.resolve("tools.disabled", None, env, None) {
            t.disabled = r
                .value
                .unwrap_or_default()
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect();
        }
        if let Some(tools) = self.config.get("tools").and_then(|v| v.as_table()) {
            for name in tools.keys() {
                let get = |field: &str| self.file_value(&format!("tools.{name}.{field}"));
                if get("enabled").as_deref() == Some("false") {
                    t.disabled.push(name.clone());
                }
                let timeout = get("timeout_ms").and_then(|v| v.parse().ok());
                let cap = get("max_output_chars").and_then(|v| v.parse().ok());
                if timeout.is_some() || cap.is_some() {
                    t.limits.insert(name.clone(), (timeout, cap));
                }
            }
        }
        t
    }
}

/// Per-tool settings from the user's config (never from a project file).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolSettings {
    /// Tools never offered.
    pub disabled: Vec<String>,
    /// Per tool: its timeout (ms) and output cap (chars), each when set.
    pub limits: std::collections::BTreeMap<String, (Option<u64>, Option<usize>)>,
}

impl ToolSettings {
    /// Applies these settings to `reg`: disabled tools removed, limits set on the rest.
    pub fn apply(&self, reg: &mut cairn_engine::ToolRegistry) {
        for name in &self.disabled {
            reg.remove(name);
        }
        for (name, (timeout, cap)) in &self.limits {
            reg.configure(name, |meta| {
                if timeout.is_some() {
                    meta.timeout_ms = *timeout;
                }
                if cap.is_some() {
                    meta.max_output_chars = *cap;
                }
            });
        }
    }
}

/// Off once [`ignore_user_files`] ran.
static FILE_LAYER: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

/// From now on this process reads no user settings file ([`var`] is the environment only):
/// `cairn serve --tenants`, whose tenants read no user config.
pub fn ignore_user_files() {
    FILE_LAYER.store(false, std::sync::atomic::Ordering::SeqCst);
}

/// The last file read by [`var`], kept while its size and time stay the same.
static CACHE: Mutex<Option<(Stamp, UserConfig)>> = Mutex::new(None);

/// A file's modification time and size (`None` = no file).
type Stamp = Option<(std::time::SystemTime, u64)>;

fn stamp(p: Option<&Path>) -> Stamp {
    let m = std::fs::metadata(p?).ok()?;
    Some((m.modified().ok()?, m.len()))
}

/// The user's files, read again when `config.toml` changed (a damaged file is logged and
/// counts as empty, so a bad edit never stops a session from opening).
pub fn current() -> UserConfig {
    if !FILE_LAYER.load(std::sync::atomic::Ordering::SeqCst) {
        return UserConfig::default();
    }
    let path = config_path();
    let now = stamp(path.as_deref());
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((at, cfg)) = cache.as_ref() {
        if *at == now && now.is_some() && cfg.config_path == path {
            return cfg.clone();
        }
    }
    let cfg = UserConfig::load().unwrap_or_else(|e| {
        tracing::warn!("settings not read: {e}");
        UserConfig::default()
    });
    *cache = Some((now, cfg.clone()));
    cfg
}

/// Whether a switch's value says off (`0`, `false`, `off`, `no`, any case).
pub fn switched_off(value: &str) -> bool {
    matches!(
        value.trim().to_ascii_lowercase().as_str(),
        "0" | "false" | "off" | "no"
    )
}

/// A setting by environment variable name: the variable (secrets from their sealed copy),
/// else the user's file for the key that variable names.
pub fn var(name: &str) -> Option<String> {
    non_empty(cairn_engine::secret_env::var(name)).or_else(|| current().for_env(name))
}

/// What [`set`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Saved {
    /// Written to this file.
    File(PathBuf),
    /// Kept in the keyring entry.
    Keyring(String),
}

/// Sets `key` to `value` where it lives (the file, or the keyring for a secret), checked.
pub fn set(key: &str, value: &str, keys: &dyn KeyStore) -> Result<Saved, ConfigError> {
    set_at(config_path(), key, value, keys)
}

/// [`set`] with `config.toml` at `config` (a face that was given its own, as the app's
/// tests are).
pub fn set_at(
    config: Option<PathBuf>,
    key: &str,
    value: &str,
    keys: &dyn KeyStore,
) -> Result<Saved, ConfigError> {
    let spec = schema::spec(key).ok_or_else(|| ConfigError::Unknown(key.to_string()))?;
    let value = schema::check(spec, value).map_err(|why| ConfigError::Invalid {
        key: key.to_string(),
        why,
    })?;
    if let Kind::Secret(entry) = spec.kind {
        let k = ApiKey::new(&value).map_err(|e| ConfigError::Keyring(e.to_string()))?;
        keys.set(entry, &k)
            .map_err(|e| ConfigError::Keyring(e.to_string()))?;
        // A search key picks its provider when the file names none (web_search is offered
        // by a provider setting, so a key alone would not reach the keyring lookup).
        if let Some(provider) = key
            .strip_prefix("web_search.")
            .and_then(|k| k.strip_suffix("_key"))
        {
            let cfg = UserConfig::load_paths(config.clone(), None)?;
            if cfg.file_value("web_search.provider").is_none() {
                if let Some(p) = schema::spec("web_search.provider") {
                    set_in(&path_of(p, &config)?, p, "web_search.provider", provider)?;
                }
            }
        }
        return Ok(Saved::Keyring(entry.to_string()));
    }
    let path = path_of(spec, &config)?;
    set_in(&path, spec, key, &value)?;
    Ok(Saved::File(path))
}

/// Removes `key` (from the file, or the keyring for a secret); false when it was not set.
pub fn unset(key: &str, keys: &dyn KeyStore) -> Result<bool, ConfigError> {
    unset_at(config_path(), key, keys)
}

/// [`unset`] with `config.toml` at `config`.
pub fn unset_at(
    config: Option<PathBuf>,
    key: &str,
    keys: &dyn KeyStore,
) -> Result<bool, ConfigError> {
    let spec = schema::spec(key).ok_or_else(|| ConfigError::Unknown(key.to_string()))?;
    if let Kind::Secret(entry) = spec.kind {
        return keys
            .remove(entry)
            .map_err(|e| ConfigError::Keyring(e.to_string()));
    }
    unset_in(&path_of(spec, &config)?, spec, key)
}

fn path_of(spec: &KeySpec, config: &Option<PathBuf>) -> Result<PathBuf, ConfigError> {
    match spec.file {
        FileId::Config => config.clone(),
        FileId::Sandbox => sandbox_path(),
    }
    .ok_or(ConfigError::NoFolder)
}

/// Every setting as the app's Settings list it: value (secrets masked), source, default,
/// kind and choices.
pub fn options_view(
    cfg: &UserConfig,
    env: &dyn Fn(&str) -> Option<String>,
    keys: Option<&dyn KeyStore>,
) -> Vec<SettingOption> {
    cfg.list(env, keys)
        .into_iter()
        .filter_map(|r| {
            let spec = schema::spec(&r.key)?;
            let (kind, choices) = match spec.kind {
                Kind::Text => ("text", Vec::new()),
                Kind::Number => ("number", Vec::new()),
                Kind::Fraction => ("fraction", Vec::new()),
                Kind::Bool => ("bool", Vec::new()),
                Kind::Choice(c) => ("choice", c.iter().map(|s| s.to_string()).collect()),
                Kind::List => ("list", Vec::new()),
                Kind::Secret(_) => ("secret", Vec::new()),
            };
            Some(SettingOption {
                source: match &r.source {
                    Source::Flag => "flag",
                    Source::Env(_) => "env",
                    Source::File(_) => "file",
                    Source::Keyring => "keyring",
                    Source::Default => "default",
                }
                .to_string(),
                env: match &r.source {
                    Source::Env(v) => Some(v.clone()),
                    _ => None,
                },
                variables: spec.env.iter().map(|v| v.to_string()).collect(),
                key: r.key,
                value: r.value,
                default: spec.default.to_string(),
                about: spec.about.to_string(),
                kind: kind.to_string(),
                choices,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests;
