//! What `cairn serve` is started with (its flags, see serve.md) and why it refuses to start.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use cairn_policy::sandbox::SandboxMode;
use cairn_runtime::llm_setup::LlmSetup;

/// Why the server did not start or stopped: `Usage` is exit 2, `Failed` exit 1.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// A bad option or configuration (exit 2).
    #[error("{0}")]
    Usage(String),
    /// Anything else (exit 1).
    #[error("{0}")]
    Failed(String),
}

impl ServeError {
    /// The process exit status for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            ServeError::Usage(_) => 2,
            ServeError::Failed(_) => 1,
        }
    }
}

/// `--approve`: who answers approvals of sessions that do not say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ApprovePolicy {
    /// Requests wait for a client (or the approval timeout).
    #[default]
    Ask,
    /// Only allow rules and `allowCommands` pass (seed §18.3 worker).
    Deny,
    /// Everything is allowed (unix socket only).
    Allow,
}

/// Builds the LLM of a session (a seam for tests and benches: the default builds it from the
/// options, the environment and the keyring as `cairn run` does).
pub trait LlmSource: Send + Sync {
    /// The LLM for a session with this model, provider and endpoint; `None` = the runtime's
    /// own resolution.
    fn build(&self, model: &str, provider: &str, base_url: Option<&str>) -> Option<LlmSetup>;
}

/// Everything `cairn serve` is started with.
#[derive(Clone)]
pub struct ServeConfig {
    /// `--listen` (`None`: the default socket).
    pub listen: Option<String>,
    /// `--token-file` (`None`: `serve.token` beside the default socket).
    pub token_file: Option<PathBuf>,
    /// `--tenants`.
    pub tenants: Option<PathBuf>,
    /// `--state-dir` (`None`: the app's data dir).
    pub state_dir: Option<PathBuf>,
    /// `--approval-timeout`.
    pub approval_timeout: Duration,
    /// `--sandbox` (`None`: as `cairn run`).
    pub sandbox: Option<SandboxMode>,
    /// `--approve`.
    pub approve: ApprovePolicy,
    /// `--allow-origin`.
    pub allow_origins: Vec<String>,
    /// `--model`.
    pub model: Option<String>,
    /// `--provider`.
    pub provider: Option<String>,
    /// `--base-url`.
    pub base_url: Option<String>,
    /// `--max-sessions`.
    pub max_sessions: usize,
    /// `--max-turns` (`None`: only the machine's turn slots).
    pub max_turns: Option<usize>,
    /// How long a session may sit idle before it is closed.
    pub idle_close: Duration,
    /// How often an idle `GET …/events` stream gets a `: keepalive` comment (serve.md: 15 s;
    /// no option, tests shorten it).
    pub keepalive: Duration,
    /// Builds sessions' LLMs (tests); `None`: as `cairn run`.
    pub llm: Option<Arc<dyn LlmSource>>,
    /// Sessions' sandbox settings besides the mode (tests turn it off via `sandbox`).
    pub sandbox_network: Option<cairn_runtime::sandbox_net::SandboxNetwork>,
}

impl Default for ServeConfig {
    fn default() -> Self {
        ServeConfig {
            listen: None,
            token_file: None,
            tenants: None,
            state_dir: None,
            approval_timeout: Duration::from_secs(600),
            sandbox: None,
            approve: ApprovePolicy::Ask,
            allow_origins: Vec::new(),
            model: None,
            provider: None,
            base_url: None,
            max_sessions: 64,
            max_turns: None,
            idle_close: Duration::from_secs(600),
            keepalive: crate::sse::KEEPALIVE,
            llm: None,
            sandbox_network: None,
        }
    }
}

/// Where the server listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listen {
    /// A unix socket at this path.
    Unix(PathBuf),
    /// Loopback TCP: these addresses (one, or 127.0.0.1 and ::1 for `localhost`), one port.
    Tcp {
        /// The addresses to bind.
        addrs: Vec<IpAddr>,
        /// The port (0: any free one).
        port: u16,
    },
}

/// The default socket: `$XDG_RUNTIME_DIR/cairn/serve.sock`, else `/tmp/cairn-$UID/serve.sock`.
pub fn default_socket() -> PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir).join("cairn").join("serve.sock"),
        None => PathBuf::from(format!("/tmp/cairn-{}", nix::unistd::getuid())).join("serve.sock"),
    }
}

/// Parses `--listen`: `unix:PATH`, `127.0.0.1:PORT`, `[::1]:PORT`, `localhost:PORT`; any
/// other address is a usage error (put a TLS proxy in front).
pub fn parse_listen(s: &str) -> Result<Listen, ServeError> {
    let bad = || {
        ServeError::Usage(format!(
            "--listen {s}: use unix:PATH, 127.0.0.1:PORT, [::1]:PORT or localhost:PORT (only \
             loopback; put a TLS proxy in front for anything else)"
        ))
    };
    if let Some(path) = s.strip_prefix("unix:") {
        if path.is_empty() {
            return Err(bad());
        }
        return Ok(Listen::Unix(PathBuf::from(path)));
    }
    if let Some(port) = s.strip_prefix("localhost:") {
        let port: u16 = port.parse().map_err(|_| bad())?;
        return Ok(Listen::Tcp {
            addrs: vec![
                IpAddr::V4(Ipv4Addr::LOCALHOST),
                IpAddr::V6(Ipv6Addr::LOCALHOST),
            ],
            port,
        });
    }
    let addr: SocketAddr = s.parse().map_err(|_| bad())?;
    if !addr.ip().is_loopback()
        || !(addr.ip() == IpAddr::V4(Ipv4Addr::LOCALHOST)
            || addr.ip() == IpAddr::V6(Ipv6Addr::LOCALHOST))
    {
        return Err(bad());
    }
    Ok(Listen::Tcp {
        addrs: vec![addr.ip()],
        port: addr.port(),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn only_loopback_and_unix_addresses_are_accepted() {
        assert!(matches!(
            parse_listen("unix:/tmp/x.sock"),
            Ok(Listen::Unix(_))
        ));
        assert!(matches!(
            parse_listen("127.0.0.1:0"),
            Ok(Listen::Tcp { port: 0, .. })
        ));
        assert!(matches!(parse_listen("[::1]:8080"), Ok(Listen::Tcp { .. })));
        match parse_listen("localhost:9").unwrap() {
            Listen::Tcp { addrs, port } => {
                assert_eq!(addrs.len(), 2);
                assert_eq!(port, 9);
            }
            other => panic!("{other:?}"),
        }
        for bad in [
            "0.0.0.0:80",
            "192.168.1.2:80",
            "127.0.0.2:80",
            "example.com:80",
            "unix:",
            "[::]:80",
        ] {
            assert!(
                matches!(parse_listen(bad), Err(ServeError::Usage(_))),
                "{bad}"
            );
        }
    }
}
