//! What the doctor's checks read of the machine, each behind a trait with a fake.

use std::path::Path;
use std::sync::Arc;

use cairn_providers::secrets::KeyStore;

use crate::llm_setup::EnvFn;
use crate::sandbox::userns::SandboxHost;

/// Every probe the checks use.
#[derive(Clone)]
pub struct Probes {
    /// User namespaces, bubblewrap, AppArmor.
    pub sandbox: Arc<dyn SandboxHost>,
    /// The OS keyring.
    pub keys: Arc<dyn KeyStore>,
    /// Variables and settings (`CAIRN_PROVIDER`, `OPENAI_BASE_URL`, `base_urls.openai`, …).
    pub env: Arc<EnvFn>,
    /// The display and the notification service.
    pub desktop: Arc<dyn DesktopProbe>,
    /// Free space of a folder.
    pub disk: Arc<dyn DiskProbe>,
}

/// The desktop the app would run on.
pub trait DesktopProbe: Send + Sync {
    /// `$WAYLAND_DISPLAY` or `$DISPLAY`, when set.
    fn display(&self) -> Option<String>;
    /// Whether a D-Bus session bus is there (notifications and the keyring go through it).
    fn session_bus(&self) -> bool;
    /// Whether a notification service owns (or can be started for) its name on the session
    /// bus; `None` when the bus cannot be asked.
    fn notifications(&self) -> Option<bool>;
}

/// The real desktop: the environment.
#[derive(Debug, Default, Clone, Copy)]
pub struct RealDesktop;

impl DesktopProbe for RealDesktop {
    fn display(&self) -> Option<String> {
        ["WAYLAND_DISPLAY", "DISPLAY"]
            .iter()
            .find_map(|v| std::env::var(v).ok().filter(|s| !s.trim().is_empty()))
    }

    fn session_bus(&self) -> bool {
        if std::env::var("DBUS_SESSION_BUS_ADDRESS").is_ok_and(|v| !v.trim().is_empty()) {
            return true;
        }
        // systemd's per-user bus, used when the variable is not exported.
        std::env::var("XDG_RUNTIME_DIR")
            .map(|d| Path::new(&d).join("bus").exists())
            .unwrap_or(false)
    }

    fn notifications(&self) -> Option<bool> {
        notification_service()
    }
}

/// Asks the session bus whether `org.freedesktop.Notifications` has an owner or can be
/// started on demand (a D-Bus activatable daemon), within 2 s.
#[cfg(target_os = "linux")]
fn notification_service() -> Option<bool> {
    const NAME: &str = "org.freedesktop.Notifications";
    let conn = dbus::blocking::Connection::new_session().ok()?;
    let bus = conn.with_proxy(
        "org.freedesktop.DBus",
        "/org/freedesktop/DBus",
        std::time::Duration::from_secs(2),
    );
    let (owned,): (bool,) = bus
        .method_call("org.freedesktop.DBus", "NameHasOwner", (NAME,))
        .ok()?;
    if owned {
        return Some(true);
    }
    let (names,): (Vec<String>,) = bus
        .method_call("org.freedesktop.DBus", "ListActivatableNames", ())
        .ok()?;
    Some(names.iter().any(|n| n == NAME))
}

#[cfg(not(target_os = "linux"))]
fn notification_service() -> Option<bool> {
    None
}

/// A scripted desktop.
#[derive(Debug, Clone, Default)]
pub struct FakeDesktop {
    /// The display.
    pub display: Option<String>,
    /// Whether a session bus is there.
    pub bus: bool,
    /// Whether a notification service is there (`None`: cannot be asked).
    pub notifications: Option<bool>,
}

impl DesktopProbe for FakeDesktop {
    fn display(&self) -> Option<String> {
        self.display.clone()
    }
    fn session_bus(&self) -> bool {
        self.bus
    }
    fn notifications(&self) -> Option<bool> {
        self.notifications
    }
}

/// Free space of the file system holding a folder.
pub trait DiskProbe: Send + Sync {
    /// Bytes available to an unprivileged user, `None` when unknown.
    fn free_bytes(&self, path: &Path) -> Option<u64>;
}

/// The real file system (`statvfs`).
#[derive(Debug, Default, Clone, Copy)]
pub struct RealDisk;

impl DiskProbe for RealDisk {
    fn free_bytes(&self, path: &Path) -> Option<u64> {
        let st = nix::sys::statvfs::statvfs(path).ok()?;
        #[allow(clippy::unnecessary_cast)]
        let bytes = (st.blocks_available() as u64).saturating_mul(st.fragment_size() as u64);
        Some(bytes)
    }
}

/// A disk with a fixed amount free.
#[derive(Debug, Clone, Copy)]
pub struct FakeDisk(pub u64);

impl DiskProbe for FakeDisk {
    fn free_bytes(&self, _path: &Path) -> Option<u64> {
        Some(self.0)
    }
}
