//! The checks of this machine that need no network: the sandbox, the keyring, the desktop,
//! the versions.

use cairn_providers::secrets::{KeyStore, SecretError};

use super::probes::DesktopProbe;
use super::{CheckRow, CheckStatus, Fix};
use crate::sandbox::userns::{diagnose, SandboxHost, Userns};

/// Whether bubblewrap can create its sandbox, and what to do when not.
pub fn sandbox(host: &dyn SandboxHost) -> CheckRow {
    let d = diagnose(host);
    match &d {
        Userns::Works => CheckRow::new(
            "sandbox",
            "user namespaces",
            CheckStatus::Ok,
            format!(
                "bubblewrap ({}) starts sandboxes",
                host.bwrap()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default()
            ),
        ),
        _ => CheckRow::new(
            "sandbox",
            "user namespaces",
            CheckStatus::Problem,
            format!("{}: commands would run unconfined", d.reason()),
        )
        .fix(Fix::SystemSteps { steps: d.advice() }),
    }
}

/// The name the keyring is probed with (never stored, only looked up).
const PROBE_ENTRY: &str = "cairn-doctor-probe";

/// Whether the OS keyring answers (a lookup of an entry that does not exist).
pub fn keyring(keys: &dyn KeyStore) -> CheckRow {
    match keys.get(PROBE_ENTRY) {
        Ok(_) => CheckRow::new(
            "keyring",
            "secret service",
            CheckStatus::Ok,
            "the OS keyring answers (API keys and vault values are kept there)",
        ),
        Err(SecretError::Unavailable(reason)) if reason.to_lowercase().contains("locked") => {
            CheckRow::new(
                "keyring",
                "secret service",
                CheckStatus::Warning,
                format!("the OS keyring is locked ({reason})"),
            )
            .fix(Fix::UnlockKeyring)
        }
        Err(e) => CheckRow::new(
            "keyring",
            "secret service",
            CheckStatus::Problem,
            format!("{e}: stored API keys cannot be read"),
        )
        .fix(Fix::InstallKeyring),
    }
}

/// The display the app needs and the session bus notifications use.
pub fn desktop(probe: &dyn DesktopProbe) -> Vec<CheckRow> {
    let display = match probe.display() {
        Some(d) => CheckRow::new(
            "desktop",
            "display",
            CheckStatus::Ok,
            format!("the app can open its window on {d}"),
        ),
        None => CheckRow::new(
            "desktop",
            "display",
            CheckStatus::Warning,
            "no DISPLAY or WAYLAND_DISPLAY: the app cannot open a window here (the cairn CLI \
             works)",
        )
        .fix(Fix::DesktopSession),
    };
    let bus = if probe.session_bus() {
        match probe.notifications() {
            Some(false) => CheckRow::new(
                "desktop",
                "notifications",
                CheckStatus::Warning,
                "no notification service on the session bus: a session in the background \
                 cannot tell you it needs an approval (the board still shows it)",
            )
            .fix(Fix::NotificationDaemon),
            Some(true) => CheckRow::new(
                "desktop",
                "notifications",
                CheckStatus::Ok,
                "a notification service answers on the D-Bus session bus",
            ),
            None => CheckRow::new(
                "desktop",
                "notifications",
                CheckStatus::Ok,
                "a D-Bus session bus is there for notifications and the keyring",
            ),
        }
    } else {
        CheckRow::new(
            "desktop",
            "notifications",
            CheckStatus::Warning,
            "no D-Bus session bus: no notifications, and the keyring is out of reach",
        )
        .fix(Fix::SessionBus)
    };
    vec![display, bus]
}

/// One row per version the face reports.
pub fn versions(versions: &[(String, String)]) -> Vec<CheckRow> {
    versions
        .iter()
        .map(|(name, v)| CheckRow::new("version", name, CheckStatus::Ok, v.clone()))
        .collect()
}
