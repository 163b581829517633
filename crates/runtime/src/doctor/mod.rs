//! `cairn doctor` and the app's Settings → Diagnostics: one list of checks, each line OK,
//! warning or problem with what to do. Every check reads the machine through a probe
//! ([`Probes`]) so tests can simulate what is broken (no keyring, a provider refusing the key,
//! an MCP server that exits, a full disk, restricted user namespaces); each probe has a
//! timeout, network probes are skipped `offline`, and no row carries a key.

mod fix;
mod local;
mod mcp;
pub mod probes;
mod providers;
mod state;

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;
use ts_rs::TS;

pub use fix::Fix;
pub use mcp::servers_of as mcp_servers;
pub use probes::{DesktopProbe, DiskProbe, FakeDesktop, FakeDisk, Probes, RealDesktop, RealDisk};
pub use providers::{configured_providers, ProviderTarget};

/// How one check went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "lowercase")]
#[ts(export, export_to = "app/")]
pub enum CheckStatus {
    /// Nothing to do.
    Ok,
    /// Works, but something is missing or worth knowing.
    Warning,
    /// Broken: Cairn cannot do this until the user acts.
    Problem,
    /// Not checked (`--offline`, nothing configured).
    Skipped,
}

impl CheckStatus {
    /// `ok`, `warning`, `problem`, `skipped`.
    pub fn label(self) -> &'static str {
        match self {
            CheckStatus::Ok => "ok",
            CheckStatus::Warning => "warning",
            CheckStatus::Problem => "problem",
            CheckStatus::Skipped => "skipped",
        }
    }
}

/// One line of the report (`cairn doctor --json` prints one per line).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct CheckRow {
    /// `sandbox`, `keyring`, `desktop`, `provider`, `mcp`, `trust`, `state`, `version`.
    pub group: String,
    /// What was checked (`user namespaces`, `openai endpoint`, `mcp server docs`, …).
    pub check: String,
    /// How it went.
    pub status: CheckStatus,
    /// What was found (never a key).
    pub detail: String,
    /// What to do, in the terminal's words (the CLI's contract), when there is something to do.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub action: Option<String>,
    /// What to do, as a typed fact each face words (the app never shows `action`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub fix: Option<Fix>,
    /// How long the probe took, in milliseconds.
    #[ts(type = "number")]
    pub ms: u64,
}

impl CheckRow {
    /// A row with no action and no time yet.
    pub fn new(group: &str, check: &str, status: CheckStatus, detail: impl Into<String>) -> Self {
        CheckRow {
            group: group.to_string(),
            check: check.to_string(),
            status,
            detail: detail.into(),
            action: None,
            fix: None,
            ms: 0,
        }
    }

    /// The same row with what to do (its CLI words become `action`).
    pub fn fix(mut self, fix: Fix) -> Self {
        self.action = Some(fix.cli_words()).filter(|a| !a.is_empty());
        self.fix = Some(fix);
        self
    }
}

/// What the checks look at.
#[derive(Debug, Clone)]
pub struct DoctorOptions {
    /// The workspace whose MCP servers and trust are checked (`None`: those checks skip).
    pub workspace: Option<PathBuf>,
    /// Cairn's state folder.
    pub state_dir: PathBuf,
    /// Skip the probes that use the network (provider endpoints, remote MCP servers).
    pub offline: bool,
    /// Longest wait for one probe.
    pub timeout: Duration,
    /// The versions to report (`cairn 0.1.0`, …), the face's own first.
    pub versions: Vec<(String, String)>,
}

/// The default time one probe may take.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// Whether any row is a problem (`cairn doctor` exits 1 then).
pub fn has_problem(rows: &[CheckRow]) -> bool {
    rows.iter().any(|r| r.status == CheckStatus::Problem)
}

/// Runs every check, in a fixed order: sandbox, keyring, desktop, providers, MCP servers,
/// trust, state folder, versions.
pub async fn run(probes: &Probes, opts: &DoctorOptions) -> Vec<CheckRow> {
    let mut rows = Vec::new();
    let t = opts.timeout;
    {
        let host = probes.sandbox.clone();
        rows.extend(
            blocking("sandbox", "user namespaces", t, move || {
                vec![local::sandbox(host.as_ref())]
            })
            .await,
        );
    }
    {
        let keys = probes.keys.clone();
        rows.extend(
            blocking("keyring", "secret service", t, move || {
                vec![local::keyring(keys.as_ref())]
            })
            .await,
        );
    }
    {
        let desktop = probes.desktop.clone();
        rows.extend(
            blocking("desktop", "display", t, move || {
                local::desktop(desktop.as_ref())
            })
            .await,
        );
    }
    rows.extend(providers::check_all(probes, opts).await);
    if let Some(ws) = &opts.workspace {
        rows.extend(mcp::servers(ws, opts).await);
        let ws = ws.clone();
        rows.extend(blocking("trust", "project trust", t, move || mcp::trust(&ws)).await);
    } else {
        rows.push(CheckRow::new(
            "mcp",
            "mcp servers",
            CheckStatus::Skipped,
            "no workspace: run it in a project folder (or with --workspace DIR)",
        ));
    }
    {
        let disk = probes.disk.clone();
        let state_dir = opts.state_dir.clone();
        rows.extend(
            blocking("state", "state folder", t, move || {
                state::check(&state_dir, disk.as_ref())
            })
            .await,
        );
    }
    rows.extend(local::versions(&opts.versions));
    rows
}

/// Runs blocking `f` off the async threads within `timeout`; a probe that does not answer
/// in time is a problem row named `group` / `check`.
pub async fn blocking(
    group: &str,
    check: &str,
    timeout: Duration,
    f: impl FnOnce() -> Vec<CheckRow> + Send + 'static,
) -> Vec<CheckRow> {
    timed(group, check, timeout, async move {
        tokio::task::spawn_blocking(f).await.unwrap_or_else(|e| {
            vec![CheckRow::new(
                "doctor",
                "probe",
                CheckStatus::Problem,
                format!("the probe failed: {e}"),
            )]
        })
    })
    .await
}

/// Awaits `fut` within `timeout`, stamping each row with the time taken.
pub async fn timed(
    group: &str,
    check: &str,
    timeout: Duration,
    fut: impl Future<Output = Vec<CheckRow>>,
) -> Vec<CheckRow> {
    let started = Instant::now();
    let rows = match tokio::time::timeout(timeout, fut).await {
        Ok(rows) => rows,
        Err(_) => vec![CheckRow::new(
            group,
            check,
            CheckStatus::Problem,
            format!("no answer within {} s", timeout.as_secs_f32()),
        )
        .fix(Fix::SlowProbe)],
    };
    let ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    rows.into_iter()
        .map(|mut r| {
            r.ms = ms;
            r
        })
        .collect()
}

/// The probes of the real machine with `env` as the environment (and settings) lookup.
pub fn real_probes(env: Arc<crate::llm_setup::EnvFn>) -> Probes {
    let keys = crate::keys::key_store_from_env(env.as_ref());
    Probes {
        sandbox: Arc::new(crate::sandbox::userns::RealHost),
        keys,
        env,
        desktop: Arc::new(RealDesktop),
        disk: Arc::new(RealDisk),
    }
}

/// The settings lookup the real checks use: a variable (environment, then the user's
/// file, as every face reads them), and `base_urls.PROVIDER` from the file.
pub fn settings_env() -> Arc<crate::llm_setup::EnvFn> {
    Arc::new(|k: &str| {
        if k.starts_with("base_urls.") {
            crate::user_config::current().file_value(k)
        } else {
            crate::user_config::var(k)
        }
    })
}

/// Runs blocking `f` off the async threads; `None` when it did not end within `timeout`.
pub async fn blocking_value<T: Send + 'static>(
    timeout: Duration,
    f: impl FnOnce() -> T + Send + 'static,
) -> Option<T> {
    match tokio::time::timeout(timeout, tokio::task::spawn_blocking(f)).await {
        Ok(Ok(v)) => Some(v),
        _ => None,
    }
}
