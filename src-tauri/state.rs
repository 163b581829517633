//! App-wide state: configuration, settings, the key store, native dialogs, and each
//! window's workspace and session. Everything a command does is keyed by the calling
//! window's label, so no event or answer reaches another window.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use cairn_providers::secrets::KeyStore;

use crate::attention::{Attention, Notifier};
use crate::dialogs::NativeDialogs;
use crate::error::IpcResult;
use crate::runtime::SessionRuntime;
use crate::settings::{Settings, SettingsFile};
use crate::types::ApprovalHost;
use cairn_runtime::llm_setup::{build as build_llm, EnvFn, LlmSetup, ProviderChoice};

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Locks a mutex of the app state, a poisoned one included.
pub(crate) fn lock_pub<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    lock(m)
}

/// How the app was started (read once from the environment).
pub struct AppConfig {
    /// State dir shared with the CLI.
    pub state_dir: PathBuf,
    /// Who answers approvals.
    pub host: ApprovalHost,
    /// Start-up benchmark mode.
    pub bench: bool,
    /// Environment lookup.
    pub env: Arc<EnvFn>,
    /// Native dialogs; `None` = the real ones (tests pass a fake).
    pub dialogs: Option<Arc<dyn NativeDialogs>>,
    /// Key store; `None` = chosen from the environment.
    pub keys: Option<Arc<dyn KeyStore>>,
    /// OS notifications; `None` = the desktop's (D-Bus), or with the `test-support` feature
    /// and `CAIRN_TEST_NOTIFIER=<file>`, a recorder appending to that file.
    pub notifier: Option<Arc<dyn Notifier>>,
}

impl AppConfig {
    /// The configuration the environment gives: `CAIRN_STATE_DIR` (else the data dir
    /// shared with the CLI), `CAIRN_TEST_APPROVER=ui|allow|deny`, `CAIRN_BENCH=1`.
    pub fn from_env() -> AppConfig {
        // The environment, else the user's settings file (one precedence for every key).
        let env: Arc<EnvFn> = Arc::new(|k: &str| cairn_runtime::user_config::var(k));
        let host = match env("CAIRN_TEST_APPROVER").as_deref().map(str::trim) {
            Some("ui") => ApprovalHost::Ui,
            Some("allow") => ApprovalHost::Allow,
            Some("deny") => ApprovalHost::Deny,
            _ => ApprovalHost::Native,
        };
        AppConfig {
            state_dir: cairn_runtime::default_state_dir(),
            host,
            bench: env("CAIRN_BENCH").as_deref() == Some("1"),
            notifier: test_notifier(env.as_ref()),
            env,
            dialogs: None,
            keys: None,
        }
    }
}

#[cfg(feature = "test-support")]
fn test_notifier(env: &EnvFn) -> Option<Arc<dyn Notifier>> {
    let file = env("CAIRN_TEST_NOTIFIER")?;
    let click = env("CAIRN_TEST_NOTIFIER_CLICK").as_deref() == Some("1");
    Some(Arc::new(
        crate::attention::testing::RecordingNotifier::to_file(PathBuf::from(file), click),
    ))
}

#[cfg(not(feature = "test-support"))]
fn test_notifier(_env: &EnvFn) -> Option<Arc<dyn Notifier>> {
    None
}

/// A window's workspace and sessions.
#[derive(Clone, Default)]
pub struct WindowSlot {
    /// The open workspace.
    pub workspace: Option<PathBuf>,
    /// The session the window shows (what its commands act on).
    pub session: Option<Arc<SessionRuntime>>,
    /// Sessions of the window it does not show that still run or wait for the user (a
    /// switch never stops them); closed when the workspace or the window closes.
    pub background: Vec<Arc<SessionRuntime>>,
    /// The files panel's watcher (dropped, and so stopped, with the workspace or window).
    pub files: Option<Arc<crate::watch::WorkspaceWatch>>,
}

/// Managed state of the app.
pub struct AppState {
    /// How the app was started.
    pub config: AppConfig,
    /// Native dialogs.
    pub dialogs: Arc<dyn NativeDialogs>,
    /// Key store.
    pub keys: Arc<dyn KeyStore>,
    /// The user's terminals of every workspace (filed by workspace path).
    pub terminals: Arc<cairn_tools::TerminalManager>,
    /// Every open session of every window.
    pub host: Arc<cairn_runtime::host::Host>,
    /// Which approval gets the native dialog; notifications for the others.
    pub attention: Arc<Attention>,
    /// What the sessions boards keep between builds (worktree lists, file counts).
    pub board_cache: cairn_runtime::host::board::BoardCache,
    /// Sessions a click on a notification asked a window to show: (label, request number,
    /// session id).
    pub open_requests: Mutex<HashMap<String, (u64, String)>>,
    /// The live board watch of each window (a newer one replaces it).
    board_watches: Mutex<HashMap<String, u64>>,
    /// Windows whose user agreed to stop their running sessions (their next close goes on).
    close_confirmed: Mutex<std::collections::HashSet<String>>,
    settings_file: SettingsFile,
    settings: Mutex<Settings>,
    windows: Mutex<HashMap<String, WindowSlot>>,
}

impl AppState {
    /// State for `config`, with `dialogs` unless the config names its own.
    pub fn new(mut config: AppConfig, dialogs: Arc<dyn NativeDialogs>) -> AppState {
        let dialogs = config.dialogs.take().unwrap_or(dialogs);
        let keys = config
            .keys
            .take()
            .unwrap_or_else(|| crate::keys::key_store_from_env(config.env.as_ref()));
        // The user's config folder (`CAIRN_CONFIG_FILE` moves it), never the state dir: the
        // state dir's old `desktop.json` is migrated once.
        let settings_file = SettingsFile::for_env(config.env.as_ref(), &config.state_dir);
        let settings = settings_file.load();
        let notifier = config
            .notifier
            .take()
            .unwrap_or_else(|| Arc::new(crate::notifications::DbusNotifier::new()));
        let native = (config.host == ApprovalHost::Native)
            .then(|| dialogs.clone() as Arc<dyn crate::dialogs::ApprovalDialogs>);
        AppState {
            attention: Attention::new(native, notifier),
            board_cache: Default::default(),
            open_requests: Mutex::default(),
            board_watches: Mutex::default(),
            close_confirmed: Mutex::default(),
            config,
            dialogs,
            keys,
            terminals: Arc::new(cairn_tools::TerminalManager::new()),
            host: Arc::new(cairn_runtime::host::Host::new()),
            settings_file,
            settings: Mutex::new(settings),
            windows: Mutex::new(HashMap::new()),
        }
    }

    /// A copy of the settings.
    pub fn settings(&self) -> Settings {
        lock(&self.settings).clone()
    }

    /// The user's `config.toml` (the file `cairn config` edits).
    pub fn config_file(&self) -> PathBuf {
        self.settings_file.config_path().to_path_buf()
    }

    /// Reads the settings again (`cairn config set` may have changed the file) and returns
    /// them.
    pub fn reload_settings(&self) -> Settings {
        let fresh = self.settings_file.load();
        *lock(&self.settings) = fresh.clone();
        fresh
    }

    /// Changes and saves the settings.
    pub fn update_settings(&self, f: impl FnOnce(&mut Settings)) -> IpcResult<Settings> {
        let mut s = lock(&self.settings);
        let mut next = s.clone();
        f(&mut next);
        self.settings_file.save(&next)?;
        *s = next.clone();
        Ok(next)
    }

    /// The provider choice the settings and environment make for new sessions.
    pub fn provider_choice(&self) -> ProviderChoice {
        let s = self.settings();
        let env = self.config.env.as_ref();
        let provider = s.effective_provider(env);
        ProviderChoice {
            base_url: s.base_url_for(&provider),
            model: s.effective_model(env),
            reasoning: s.reasoning.clone(),
            provider,
        }
    }

    /// Builds the LLM client for `choice`.
    pub fn llm_for(&self, choice: &ProviderChoice) -> LlmSetup {
        build_llm(choice, self.keys.as_ref(), self.config.env.as_ref())
    }

    /// A copy of a window's slot.
    pub fn slot(&self, label: &str) -> WindowSlot {
        lock(&self.windows).get(label).cloned().unwrap_or_default()
    }

    /// Changes a window's slot.
    pub fn with_slot<T>(&self, label: &str, f: impl FnOnce(&mut WindowSlot) -> T) -> T {
        f(lock(&self.windows).entry(label.to_string()).or_default())
    }

    /// Removes a window's slot (the window is closing); its board watch ends.
    pub fn take_slot(&self, label: &str) -> Option<WindowSlot> {
        lock(&self.board_watches).remove(label);
        lock(&self.open_requests).remove(label);
        self.attention.set_viewed(label, None);
        self.host.touch();
        lock(&self.windows).remove(label)
    }

    /// A worktree was created, applied, committed or removed: boards list them again.
    pub fn worktrees_changed(&self) {
        self.board_cache.worktrees_changed();
        self.host.touch();
    }

    /// The user agreed to close window `label` although sessions run.
    pub fn confirm_close(&self, label: &str) {
        lock(&self.close_confirmed).insert(label.to_string());
    }

    /// Whether the user agreed to close window `label` (consumed).
    pub fn take_close_confirmed(&self, label: &str) -> bool {
        lock(&self.close_confirmed).remove(label)
    }

    /// Starts a new board watch for window `label`; its number.
    pub fn next_board_watch(&self, label: &str) -> u64 {
        let mut w = lock(&self.board_watches);
        let n = w.get(label).map_or(1, |n| n + 1);
        w.insert(label.to_string(), n);
        n
    }

    /// The live board watch of window `label`.
    pub fn board_watch(&self, label: &str) -> Option<u64> {
        lock(&self.board_watches).get(label).copied()
    }

    /// The workspaces open in every window but `main_label`, ordered by label.
    pub fn extra_workspaces(&self, main_label: &str) -> Vec<String> {
        let windows = lock(&self.windows);
        let mut open: Vec<(&String, String)> = windows
            .iter()
            .filter(|(label, _)| label.as_str() != main_label)
            .filter_map(|(label, s)| {
                s.workspace
                    .as_ref()
                    .map(|w| (label, w.display().to_string()))
            })
            .collect();
        open.sort();
        open.into_iter().map(|(_, w)| w).collect()
    }

    /// Every open session, with its window (shown or in the background).
    pub fn open_sessions(&self) -> Vec<(String, Arc<SessionRuntime>)> {
        lock(&self.windows)
            .iter()
            .flat_map(|(l, s)| {
                s.session
                    .iter()
                    .chain(s.background.iter())
                    .map(move |r| (l.clone(), r.clone()))
            })
            .collect()
    }

    /// The window showing or running session `id`.
    pub fn window_of(&self, id: &str) -> Option<String> {
        self.open_sessions()
            .into_iter()
            .find(|(_, r)| r.id() == id)
            .map(|(l, _)| l)
    }
}
