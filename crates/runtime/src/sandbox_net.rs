//! The network of sandboxed commands (`--sandbox-network proxy|none|open`, the settings'
//! `network`): with `proxy` (the default) each command gets a network namespace of its own
//! whose only way out is a proxy Cairn runs for it ([`cairn_netproxy`]), started when the
//! command is wrapped and stopped when its guard drops.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use cairn_netproxy::gate::{NetGate, Verdict};
use cairn_netproxy::resolve::{Resolver, SystemResolver};
use cairn_policy::net_rules::HostList;
use cairn_policy::sandbox::{ProxyMounts, SandboxSpec};

/// What network sandboxed commands have.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SandboxNetwork {
    /// Only through Cairn's asking proxy (the default).
    #[default]
    Proxy,
    /// None at all: a namespace of their own with only loopback.
    None,
    /// The desktop's network, unconfined (said on every run).
    Open,
}

impl SandboxNetwork {
    /// Parses `proxy`, `none`, `open`.
    pub fn parse(s: &str) -> Option<SandboxNetwork> {
        match s.trim() {
            "proxy" => Some(SandboxNetwork::Proxy),
            "none" => Some(SandboxNetwork::None),
            "open" => Some(SandboxNetwork::Open),
            _ => None,
        }
    }
}

/// The gate of a command no tool call asks for (a project's hook or MCP server): the
/// `Network(...)` rules (deny first) and the allowed hosts pass, every other host is refused.
#[derive(Debug, Clone, Default)]
pub struct NoAskGate {
    /// The rules of the session's workspace when it started.
    pub rules: cairn_policy::RuleSet,
    /// The defaults and `--allow-domain`.
    pub allowed: HostList,
}

#[async_trait::async_trait]
impl NetGate for NoAskGate {
    async fn decide(&self, host: &str, port: u16) -> Verdict {
        use cairn_policy::RuleDecision;
        match self.rules.decide_host(host).map(|r| (r.decision, r)) {
            Some((RuleDecision::Deny, r)) => {
                return Verdict::Refuse(format!("{host} is denied by the rule `{}`", r.text))
            }
            Some((RuleDecision::Allow, _)) => return Verdict::Allow,
            _ => {}
        }
        if self.allowed.allows(host) {
            return Verdict::Allow;
        }
        Verdict::Refuse(format!(
            "{host}:{port} is not an allowed host, and nobody can be asked for this process \
             (a project's hook or MCP server; allow it with a rule `Network({host})`)"
        ))
    }

    fn names_address(&self, ip: std::net::IpAddr) -> bool {
        self.rules.names_address(ip) || self.allowed.names_address(ip)
    }
}

/// The proxy side of a session's sandbox.
#[derive(Clone)]
pub struct NetProxy {
    /// What decides when no tool call asks (hooks, MCP servers).
    pub no_ask: NoAskGate,
    /// Resolves the names allowed.
    pub resolver: Arc<dyn Resolver>,
    /// Private folder of the sockets (0700).
    pub sockets: PathBuf,
}

impl std::fmt::Debug for NetProxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NetProxy")
            .field("allowed", &self.no_ask.allowed)
            .field("sockets", &self.sockets)
            .finish()
    }
}

static NEXT: AtomicU64 = AtomicU64::new(0);

impl NetProxy {
    /// Starts the proxy of one command and puts its socket into `spec`; the handle stops it
    /// when dropped. `gate` decides its hosts (`None`: the allowed hosts only).
    pub fn start_for(
        &self,
        spec: &mut SandboxSpec,
        gate: Option<Arc<dyn NetGate>>,
    ) -> Result<cairn_netproxy::proxy::ProxyHandle, String> {
        let Some(mounts) = spec.proxy.as_mut() else {
            return Err("no proxy in this sandbox".into());
        };
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let socket = self
            .sockets
            .join(format!("p{}-{n}.sock", std::process::id()));
        let gate = gate.unwrap_or_else(|| Arc::new(self.no_ask.clone()));
        let handle = cairn_netproxy::proxy::start(&socket, gate, self.resolver.clone())
            .map_err(|e| e.to_string())?;
        mounts.socket = socket;
        Ok(handle)
    }
}

/// The private folder the proxies' sockets live in: `$XDG_RUNTIME_DIR/cairn-net`, else
/// `<tmp>/cairn-net-<uid>`; made 0700 and refused when another user owns it. Short, since a
/// socket path has at most 107 bytes.
pub fn sockets_dir() -> Result<PathBuf, String> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    // The owner of /proc/self is this process's user.
    let uid = std::fs::metadata("/proc/self")
        .map(|m| m.uid())
        .map_err(|e| format!("/proc/self: {e}"))?;
    let dir = match std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        Some(d) if Path::new(&d).is_dir() => PathBuf::from(d).join("cairn-net"),
        _ => std::env::temp_dir().join(format!("cairn-net-{uid}")),
    };
    match std::fs::create_dir(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(format!("{}: {e}", dir.display())),
    }
    let meta = std::fs::symlink_metadata(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    if !meta.is_dir() || meta.uid() != uid {
        return Err(format!(
            "{} is not a folder of this user; the proxy's sockets cannot live there",
            dir.display()
        ));
    }
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(dir)
}

/// The executable with the bridge mode: this process's, when its `main` registered it
/// (`cairn`, the app); `None` in a program that has none (a library's test binary).
pub fn bridge_program() -> Option<PathBuf> {
    cairn_netproxy::bridge::program().cloned()
}

/// The resolver of the proxies. In development builds only, `CAIRN_TEST_NET_HOSTS`
/// (`name=address,…`) replaces it by a fixed map that never resolves a real name, logging
/// every name asked to `CAIRN_TEST_NET_LOG` (tests prove which names were looked up); a
/// release build has no such switch.
pub fn resolver() -> Arc<dyn Resolver> {
    #[cfg(debug_assertions)]
    if let Some(map) = std::env::var("CAIRN_TEST_NET_HOSTS")
        .ok()
        .filter(|m| !m.is_empty())
    {
        let pairs = map.split(',').filter_map(|p| {
            let (h, a) = p.split_once('=')?;
            Some((h.trim().to_string(), a.trim().parse().ok()?))
        });
        let mut r = cairn_netproxy::resolve::MapResolver::new(pairs);
        if let Some(log) = std::env::var_os("CAIRN_TEST_NET_LOG").filter(|l| !l.is_empty()) {
            r = r.logging_to(PathBuf::from(log));
        }
        return Arc::new(r);
    }
    Arc::new(SystemResolver)
}

/// Sets `spec`'s network for `mode`, with the bridge when `proxy`; the session's proxy, or
/// `None` when the network is not proxied (a proxy that cannot be set up leaves no network,
/// said in `spec.network_why` and the log: never a silent fallback to the open network).
pub fn configure(
    spec: &mut SandboxSpec,
    mode: SandboxNetwork,
    allowed: &HostList,
    rules: cairn_policy::RuleSet,
) -> Option<NetProxy> {
    match mode {
        SandboxNetwork::Open => {
            spec.network = true;
            None
        }
        SandboxNetwork::None => {
            spec.network = false;
            None
        }
        SandboxNetwork::Proxy => {
            spec.network = false;
            let ready = bridge_program()
                .ok_or_else(|| {
                    "this program has no network bridge (only Cairn's own binaries do)".to_string()
                })
                .and_then(|bridge| Ok((bridge, sockets_dir()?)));
            match ready {
                Ok((bridge, sockets)) => {
                    spec.proxy = Some(ProxyMounts {
                        bridge,
                        socket: PathBuf::new(),
                    });
                    Some(NetProxy {
                        no_ask: NoAskGate {
                            rules,
                            allowed: allowed.clone(),
                        },
                        resolver: resolver(),
                        sockets,
                    })
                }
                Err(why) => {
                    tracing::warn!("sandbox network: no proxy, so no network: {why}");
                    spec.network_why = Some(format!(
                        "the asking proxy could not be set up ({why}), so commands have no \
                         network"
                    ));
                    None
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[tokio::test]
    async fn without_a_tool_call_rules_and_allowed_hosts_decide_and_nothing_asks() {
        let mut rules = cairn_policy::RuleSet::new();
        for (rule, decision) in [
            ("Network(*.example.com)", cairn_policy::RuleDecision::Allow),
            ("Network(index.crates.io)", cairn_policy::RuleDecision::Deny),
        ] {
            rules
                .add_spec(
                    &cairn_policy::RuleSpec {
                        rule: rule.into(),
                        decision,
                        matches: vec![],
                        not_match: vec![],
                        project: None,
                    },
                    "test",
                )
                .unwrap();
        }
        let gate = NoAskGate {
            rules,
            allowed: HostList::defaults(),
        };
        assert_eq!(gate.decide("a.example.com", 443).await, Verdict::Allow);
        assert_eq!(gate.decide("pypi.org", 443).await, Verdict::Allow);
        let denied = gate.decide("index.crates.io", 443).await;
        assert!(matches!(denied, Verdict::Refuse(w) if w.contains("denied by the rule")));
        let other = gate.decide("other.org", 443).await;
        assert!(matches!(other, Verdict::Refuse(w) if w.contains("nobody can be asked")));
        assert_eq!(SandboxNetwork::parse("proxy"), Some(SandboxNetwork::Proxy));
        assert_eq!(SandboxNetwork::default(), SandboxNetwork::Proxy);
    }
}
