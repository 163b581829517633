//! Who decides whether a sandboxed command may reach a host: the session (rules, allowed
//! hosts, the user's answer) behind [`NetGate`]; [`ListGate`] for commands no tool call
//! asks for (a project's MCP server, a hook): the allowed hosts only, never an ask.

use std::net::IpAddr;

use async_trait::async_trait;
use cairn_policy::net_rules::HostList;

/// The answer on one host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Connect.
    Allow,
    /// Refuse, saying why (shown in the command's output).
    Refuse(String),
}

/// Decides the hosts of one sandboxed command.
#[async_trait]
pub trait NetGate: Send + Sync {
    /// Whether the command may reach `host` (ASCII form: a name or an address) on `port`;
    /// called before anything resolves the name.
    async fn decide(&self, host: &str, port: u16) -> Verdict;

    /// Whether a rule names the address `ip` itself: an address on this machine or its
    /// network is refused otherwise, whatever name led to it.
    fn names_address(&self, ip: IpAddr) -> bool;

    /// Told of every refusal (host, port, and why, which names them), for the command's
    /// output.
    fn refused(&self, host: &str, port: u16, why: &str) {
        let _ = (host, port, why);
    }
}

/// A gate over a fixed list of hosts: those allowed, every other one refused.
#[derive(Debug, Clone, Default)]
pub struct ListGate {
    /// The allowed hosts.
    pub allowed: HostList,
}

#[async_trait]
impl NetGate for ListGate {
    async fn decide(&self, host: &str, port: u16) -> Verdict {
        if self.allowed.allows(host) {
            Verdict::Allow
        } else {
            Verdict::Refuse(format!(
                "{host}:{port} is not an allowed host, and nobody can be asked for this \
                 process (allow it with a rule `Network({host})`)"
            ))
        }
    }

    fn names_address(&self, ip: IpAddr) -> bool {
        self.allowed.names_address(ip)
    }
}
