//! What protects a session's commands, layer by layer (`cairn sandbox status`, the app's
//! header tooltip, `turn_start.data.sandbox`): each layer active or not, and why not.
//! `auto` never falls back silently: a missing layer says so here.

use cairn_policy::sandbox::SandboxSpec;
use cairn_protocol::{SandboxLayer, SandboxReport};

use crate::sandbox::SandboxState;

fn layer(name: &str, active: bool, detail: impl Into<String>) -> SandboxLayer {
    SandboxLayer {
        name: name.to_string(),
        active,
        detail: detail.into(),
    }
}

/// Why bubblewrap cannot start a sandbox here, as precisely as the system says.
pub fn unavailable_reason() -> String {
    let d = crate::sandbox::userns::diagnose(&crate::sandbox::userns::RealHost);
    match d {
        crate::sandbox::userns::Userns::Works => {
            "bubblewrap is installed but cannot create a sandbox here (user namespaces \
             unavailable)"
                .into()
        }
        d => d.reason(),
    }
}

/// The report for a session whose sandbox is `state`, built from `spec` when enforced.
pub fn report(state: &SandboxState, spec: Option<&SandboxSpec>) -> SandboxReport {
    let session = layer(
        "new session",
        true,
        "every command Cairn starts runs in a session of its own, with no controlling \
         terminal (PTY commands on their own terminal); prompts discard input typed before \
         them",
    );
    let network = match spec {
        Some(s) if matches!(state, SandboxState::On(_)) => network_layer(s),
        _ => layer(
            "network proxy",
            false,
            "no sandbox: commands share the desktop's network, loopback services and \
             abstract unix sockets (an X server's)",
        ),
    };
    let (name, why) = match (state, spec) {
        (SandboxState::On(_), Some(spec)) => {
            let bwrap = cairn_policy::sandbox::bwrap_path()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| "bubblewrap".into());
            let home = match &spec.allow_list {
                Some(fs) => layer(
                    "allow-list home",
                    true,
                    format!(
                        "{} is an empty tmpfs with {} toolchain or extraReadable folder(s) \
                         bound back read-only and a generated git config; other homes, \
                         /root, /srv, /mnt, /media, /var/lib and /run are empty; /etc has no \
                         secrets",
                        fs.home.display(),
                        fs.read_only.len()
                    ),
                ),
                None => layer(
                    "allow-list home",
                    false,
                    "no home folder is known: the root is read-only with credentials hidden",
                ),
            };
            let seccomp = match &spec.seccomp {
                Some(_) => layer("seccomp", true, "ioctl TIOCSTI and TIOCLINUX are refused"),
                None => layer(
                    "seccomp",
                    false,
                    format!(
                        "no seccomp filter is built for the {} architecture",
                        std::env::consts::ARCH
                    ),
                ),
            };
            let layers = vec![
                layer(
                    "user namespaces",
                    true,
                    format!(
                        "{bwrap}: own mount and PID namespaces, no capabilities, ends with \
                         Cairn"
                    ),
                ),
                home,
                layer(
                    "explicit environment",
                    true,
                    "only named variables (PATH, HOME, LANG, LC_*, TERM, proxies, the \
                     settings' env), the vault and Cairn's own",
                ),
                seccomp,
                session,
                network,
            ];
            return SandboxReport {
                state: "enforced".into(),
                layers,
            };
        }
        (SandboxState::Off, _) => (
            "off",
            "the sandbox is off (--sandbox off, CAIRN_SANDBOX=off or the sandbox setting)"
                .to_string(),
        ),
        _ => ("unavailable", unavailable_reason()),
    };
    let off = |n: &str| layer(n, false, why.clone());
    SandboxReport {
        state: name.into(),
        layers: vec![
            off("user namespaces"),
            off("allow-list home"),
            off("explicit environment"),
            off("seccomp"),
            session,
            network,
        ],
    }
}

/// The network layer of an enforced sandbox.
fn network_layer(s: &SandboxSpec) -> SandboxLayer {
    if s.proxy.is_some() {
        return layer(
            "network proxy",
            true,
            "proxy (--sandbox-network proxy, the default): a network namespace of its own \
             whose only way out is Cairn's HTTP/SOCKS5 proxy, one per command; the \
             download-only hosts of the package ecosystems, --allow-domain and \
             Network(...) rules pass, other hosts ask; names are decided before they are \
             resolved; addresses of this machine, its network and cloud metadata are \
             refused unless a rule names them",
        );
    }
    if !s.network {
        let detail = match &s.network_why {
            Some(why) => format!("none: {why}"),
            None => "none (--sandbox-network none): a network namespace of its own with only \
                     loopback; no outside hosts, no desktop services or abstract sockets"
                .to_string(),
        };
        return layer("network proxy", s.network_why.is_none(), detail);
    }
    layer(
        "network proxy",
        false,
        "open (--sandbox-network open): commands share the desktop's network, loopback \
         services and abstract unix sockets (an X server's); nothing asks",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_off_sandbox_names_every_layer_and_why() {
        let r = report(&SandboxState::Off, None);
        assert_eq!(r.state, "off");
        let names: Vec<&str> = r.layers.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "user namespaces",
                "allow-list home",
                "explicit environment",
                "seccomp",
                "new session",
                "network proxy"
            ]
        );
        assert!(r.layers[0].detail.contains("--sandbox off"));
        assert!(r.layers[4].active && !r.layers[5].active);
    }
}
