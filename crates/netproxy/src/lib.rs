//! The network of Cairn's sandboxed commands (`--sandbox-network proxy`).
//!
//! A sandboxed command has a network namespace of its own with only loopback. Cairn runs a
//! proxy outside ([`proxy`]: HTTP `CONNECT`, plain HTTP forwarding and SOCKS5 on one unix
//! socket, one listener per command) that decides every host by its name, before resolving
//! it, through a [`gate::NetGate`] (the permission rules, the allowed hosts, the user). The
//! socket is bound into the sandbox, where the bridge ([`bridge`], a hidden mode of Cairn's
//! own binaries: `cairn __net-bridge`) forwards `127.0.0.1:`[`BRIDGE_PORT`] to it and runs
//! the command with the proxy variables pointing there.

pub mod bridge;
pub mod gate;
mod http;
pub mod proxy;
pub mod resolve;
mod socks;

/// The loopback port the bridge listens on inside the sandbox (its own network namespace, so
/// nothing else holds it).
pub const BRIDGE_PORT: u16 = cairn_policy::sandbox::BRIDGE_PORT;

/// The argument that runs a Cairn binary as the bridge.
pub const BRIDGE_ARG: &str = cairn_policy::sandbox::BRIDGE_ARG;

/// The proxy variables a command inside gets (both cases): every one points at the bridge.
pub fn proxy_env() -> Vec<(String, String)> {
    let http = format!("http://127.0.0.1:{BRIDGE_PORT}");
    let socks = format!("socks5h://127.0.0.1:{BRIDGE_PORT}");
    let mut out = Vec::new();
    for (k, v) in [
        ("HTTP_PROXY", &http),
        ("HTTPS_PROXY", &http),
        ("ALL_PROXY", &socks),
    ] {
        out.push((k.to_string(), v.clone()));
        out.push((k.to_ascii_lowercase(), v.clone()));
    }
    // Nothing is reachable directly inside: no host bypasses the proxy.
    out.push(("NO_PROXY".into(), String::new()));
    out.push(("no_proxy".into(), String::new()));
    out
}
