//! Whether bubblewrap can create its user namespace here, and what to do when it cannot:
//! `cairn sandbox status`, `cairn doctor` and the app's Diagnostics read the same diagnosis.
//!
//! Everything the diagnosis reads of the machine goes through [`SandboxHost`], so a test can
//! simulate a system that restricts user namespaces (Ubuntu 24.04's
//! `kernel.apparmor_restrict_unprivileged_userns = 1`) without one.

use std::path::{Path, PathBuf};

/// The AppArmor profile the package installs (`packaging/apparmor/cairn`).
pub const PACKAGED_PROFILE: &str = "/etc/apparmor.d/cairn";

/// What the diagnosis reads of the machine.
pub trait SandboxHost: Send + Sync {
    /// The bubblewrap executable, when installed.
    fn bwrap(&self) -> Option<PathBuf>;
    /// Whether bubblewrap started a trivial sandbox (it may fail for lack of namespaces).
    fn bwrap_works(&self) -> bool;
    /// A sysctl's value by its dotted name (`kernel.apparmor_restrict_unprivileged_userns`).
    fn sysctl(&self, name: &str) -> Option<String>;
    /// The running executable (where a profile for a binary built from source must attach).
    fn current_exe(&self) -> Option<PathBuf>;
    /// Whether `path` exists (the packaged profile).
    fn exists(&self, path: &Path) -> bool;
}

/// The real machine: `/proc/sys`, the file system and a trial run of bubblewrap.
#[derive(Debug, Default, Clone, Copy)]
pub struct RealHost;

impl SandboxHost for RealHost {
    fn bwrap(&self) -> Option<PathBuf> {
        cairn_policy::sandbox::bwrap_path()
    }

    fn bwrap_works(&self) -> bool {
        cairn_policy::sandbox::bwrap_works()
    }

    fn sysctl(&self, name: &str) -> Option<String> {
        let path = format!("/proc/sys/{}", name.replace('.', "/"));
        std::fs::read_to_string(path)
            .ok()
            .map(|s| s.trim().to_string())
    }

    fn current_exe(&self) -> Option<PathBuf> {
        std::env::current_exe().ok()
    }

    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }
}

/// A scripted machine for tests.
#[derive(Debug, Clone, Default)]
pub struct FakeHost {
    /// What [`SandboxHost::bwrap`] answers.
    pub bwrap: Option<PathBuf>,
    /// What [`SandboxHost::bwrap_works`] answers.
    pub works: bool,
    /// Sysctls by dotted name.
    pub sysctls: Vec<(String, String)>,
    /// The running executable.
    pub exe: Option<PathBuf>,
    /// Paths that exist.
    pub files: Vec<PathBuf>,
}

impl FakeHost {
    /// Ubuntu 24.04 and later: bubblewrap installed, AppArmor restricting unprivileged user
    /// namespaces, the executable at `exe`.
    pub fn restricted(exe: &str) -> FakeHost {
        FakeHost {
            bwrap: Some("/usr/bin/bwrap".into()),
            works: false,
            sysctls: vec![(RESTRICT_SYSCTL.into(), "1".into())],
            exe: Some(exe.into()),
            files: Vec::new(),
        }
    }

    /// A machine where the sandbox works.
    pub fn working() -> FakeHost {
        FakeHost {
            bwrap: Some("/usr/bin/bwrap".into()),
            works: true,
            ..FakeHost::default()
        }
    }
}

impl SandboxHost for FakeHost {
    fn bwrap(&self) -> Option<PathBuf> {
        self.bwrap.clone()
    }
    fn bwrap_works(&self) -> bool {
        self.works
    }
    fn sysctl(&self, name: &str) -> Option<String> {
        self.sysctls
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    }
    fn current_exe(&self) -> Option<PathBuf> {
        self.exe.clone()
    }
    fn exists(&self, path: &Path) -> bool {
        self.files.iter().any(|f| f == path)
    }
}

/// The sysctl Ubuntu 24.04 sets to 1.
pub const RESTRICT_SYSCTL: &str = "kernel.apparmor_restrict_unprivileged_userns";

/// Why the sandbox can or cannot start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Userns {
    /// bubblewrap works.
    Works,
    /// bubblewrap is not installed.
    NoBwrap,
    /// AppArmor restricts unprivileged user namespaces and no profile lets Cairn's bubblewrap
    /// create one.
    AppArmorRestricted {
        /// The executable the profile must attach to.
        exe: Option<PathBuf>,
        /// Whether the packaged profile file is on disk (installed but not loaded).
        profile_on_disk: bool,
    },
    /// User namespaces are disabled by another sysctl (its name and value).
    Disabled(String),
    /// bubblewrap fails for a reason the system does not name.
    Unknown,
}

/// Diagnoses the machine behind `host`.
pub fn diagnose(host: &dyn SandboxHost) -> Userns {
    if host.bwrap().is_none() {
        return Userns::NoBwrap;
    }
    if host.bwrap_works() {
        return Userns::Works;
    }
    if host.sysctl(RESTRICT_SYSCTL).as_deref() == Some("1") {
        return Userns::AppArmorRestricted {
            exe: host.current_exe(),
            profile_on_disk: host.exists(Path::new(PACKAGED_PROFILE)),
        };
    }
    if host.sysctl("kernel.unprivileged_userns_clone").as_deref() == Some("0") {
        return Userns::Disabled("kernel.unprivileged_userns_clone = 0".into());
    }
    if host.sysctl("user.max_user_namespaces").as_deref() == Some("0") {
        return Userns::Disabled("user.max_user_namespaces = 0".into());
    }
    Userns::Unknown
}

impl Userns {
    /// Why the sandbox cannot start, in one sentence (empty when it works).
    pub fn reason(&self) -> String {
        match self {
            Userns::Works => String::new(),
            Userns::NoBwrap => "bubblewrap is not installed".into(),
            Userns::AppArmorRestricted { .. } => format!(
                "unprivileged user namespaces are restricted by AppArmor ({RESTRICT_SYSCTL} = 1)"
            ),
            Userns::Disabled(what) => format!("unprivileged user namespaces are disabled ({what})"),
            Userns::Unknown => "bubblewrap is installed but cannot create a sandbox here (user \
                                namespaces unavailable)"
                .into(),
        }
    }

    /// What the user should do, one line each (empty when it works).
    pub fn advice(&self) -> Vec<String> {
        match self {
            Userns::Works => Vec::new(),
            Userns::NoBwrap => {
                vec![
                    "install bubblewrap: sudo apt install bubblewrap (the package depends on it)"
                        .into(),
                ]
            }
            Userns::AppArmorRestricted {
                exe,
                profile_on_disk,
            } => restricted_advice(exe.as_deref(), *profile_on_disk),
            Userns::Disabled(what) => vec![format!(
                "allow unprivileged user namespaces ({what} turns them off), or run with \
                 --sandbox off knowing that commands are then not confined"
            )],
            Userns::Unknown => {
                vec!["run `bwrap --ro-bind / / true` to see bubblewrap's own error".into()]
            }
        }
    }
}

/// Whether `exe` is an installed binary the packaged profile attaches to.
pub fn packaged_path(exe: &Path) -> bool {
    PROFILE_ATTACHMENTS.iter().any(|p| Path::new(p) == exe)
}

/// The executables the packaged profile attaches to.
pub const PROFILE_ATTACHMENTS: [&str; 2] = ["/usr/bin/cairn", "/usr/bin/cairn-app"];

/// The profile lines that let the executable at `exe` create user namespaces (for a binary
/// built from source).
pub fn profile_for(exe: &Path) -> String {
    format!(
        "abi <abi/4.0>,\ninclude <tunables/global>\n\nprofile cairn-local {} flags=(unconfined) {{\n  userns,\n}}\n",
        exe.display()
    )
}

const SYSCTL_WARNING: &str = "do not set kernel.apparmor_restrict_unprivileged_userns=0: it \
                              lets every program on this machine create user namespaces again \
                              (it widens the whole system, not just Cairn)";

fn restricted_advice(exe: Option<&Path>, profile_on_disk: bool) -> Vec<String> {
    let mut out = Vec::new();
    match exe {
        Some(exe) if packaged_path(exe) => {
            if profile_on_disk {
                out.push(format!(
                    "the package's AppArmor profile is installed but not loaded: sudo \
                     apparmor_parser -r {PACKAGED_PROFILE}"
                ));
            } else {
                out.push(
                    "reinstall the package so it installs and loads its AppArmor profile \
                     (sudo apt install --reinstall cairn); it needs AppArmor 4 (Ubuntu 24.04 \
                     or later)"
                        .into(),
                );
            }
        }
        Some(exe) => {
            out.push(format!(
                "install the cairn package (its AppArmor profile covers /usr/bin/cairn and \
                 /usr/bin/cairn-app), or, for this binary built from source at {}, save these \
                 lines as /etc/apparmor.d/cairn-local and load them with sudo apparmor_parser \
                 -r /etc/apparmor.d/cairn-local:",
                exe.display()
            ));
            out.extend(profile_for(exe).lines().map(|l| format!("    {l}")));
        }
        None => out.push(
            "install the cairn package: its AppArmor profile lets Cairn's bubblewrap create \
             its user namespace"
                .into(),
        ),
    }
    out.push(SYSCTL_WARNING.into());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_restricted_system_is_named_with_what_to_do() {
        let d = diagnose(&FakeHost::restricted(
            "/home/me/src/cairn/target/release/cairn",
        ));
        assert!(matches!(d, Userns::AppArmorRestricted { .. }));
        assert!(d.reason().contains(RESTRICT_SYSCTL));
        let advice = d.advice().join("\n");
        assert!(advice.contains("profile cairn-local /home/me/src/cairn/target/release/cairn"));
        assert!(advice.contains("userns,"));
        assert!(advice.contains("widens the whole system"));

        let mut installed = FakeHost::restricted("/usr/bin/cairn");
        installed.files.push(PACKAGED_PROFILE.into());
        let advice = diagnose(&installed).advice().join("\n");
        assert!(
            advice.contains("apparmor_parser -r /etc/apparmor.d/cairn"),
            "{advice}"
        );
        assert!(!advice.contains("cairn-local"));
    }

    #[test]
    fn a_working_or_missing_bwrap_is_told_apart() {
        assert_eq!(diagnose(&FakeHost::working()), Userns::Works);
        assert!(Userns::Works.advice().is_empty());
        assert_eq!(diagnose(&FakeHost::default()), Userns::NoBwrap);
    }
}
