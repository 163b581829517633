//! Network rules of sandboxed commands and `web_fetch`: host patterns (`index.crates.io`,
//! `*.crates.io`, an address such as `127.0.0.1`), the names in their ASCII form, and the
//! download-only hosts allowed by default.
//!
//! A host is judged by its name before anything resolves it: a name no rule allows is never
//! looked up. Addresses on this machine or its network ([`crate::net::local_ip`]) are refused
//! unless a rule names the address itself.

use std::net::IpAddr;

/// The tool name network rules use in the rules file: `Network(index.crates.io)`.
pub const NETWORK_RULE_TOOL: &str = "Network";

/// Hosts sandboxed commands reach without asking: the download-only hosts of the common
/// package ecosystems (none of them accepts an upload with a token the agent could supply).
pub const DEFAULT_HOSTS: &[&str] = &[
    // Rust
    "index.crates.io",
    "static.crates.io",
    "static.rust-lang.org",
    // Python
    "pypi.org",
    "files.pythonhosted.org",
    // Debian and Ubuntu packages
    "deb.debian.org",
    "security.debian.org",
    "archive.ubuntu.com",
    "security.ubuntu.com",
    "ports.ubuntu.com",
    // Go
    "proxy.golang.org",
    "sum.golang.org",
    // Java
    "repo.maven.apache.org",
    "repo1.maven.org",
    "plugins.gradle.org",
    "services.gradle.org",
];

/// Hosts that accept uploads or pushes with a token the agent could supply: never allowed by
/// default (a rule or an answer may still allow them).
pub const NEVER_DEFAULT: &[&str] = &[
    "crates.io",
    "upload.pypi.org",
    "github.com",
    "api.github.com",
    "uploads.github.com",
];

/// Hosts that serve both downloads and uploads (the npm registry publishes with a token on
/// the same host): left to the user's choice, documented, never a default.
pub const USER_CHOICE: &[&str] = &["registry.npmjs.org"];

/// The ASCII (punycode) form of a host name as a command gave it, lowercased, without a
/// trailing dot; an address in its canonical text form (IPv6 without brackets). `None` for
/// what is no host name.
pub fn ascii_host(raw: &str) -> Option<String> {
    let raw = raw.trim();
    if raw.is_empty() || raw.len() > 253 + 2 {
        return None;
    }
    let unbracketed = raw
        .strip_prefix('[')
        .and_then(|r| r.strip_suffix(']'))
        .unwrap_or(raw);
    if let Ok(ip) = unbracketed.parse::<IpAddr>() {
        return Some(ip.to_string());
    }
    match url::Host::parse(raw).ok()? {
        url::Host::Domain(d) => {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            let ok = !d.is_empty()
                && d.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.' || c == '_');
            ok.then_some(d)
        }
        url::Host::Ipv4(ip) => Some(ip.to_string()),
        url::Host::Ipv6(ip) => Some(ip.to_string()),
    }
}

/// A host pattern of a `Network(...)` rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostPattern {
    /// Every host (`Network`, `Network(*)`).
    Any,
    /// One host name or address, in ASCII form.
    Exact(String),
    /// Every name under this suffix (`*.crates.io`: `index.crates.io`, not `crates.io`).
    Under(String),
}

impl HostPattern {
    /// Parses `host`, `*.suffix` or `*`; `None` when the text is no host.
    pub fn parse(text: &str) -> Option<HostPattern> {
        let t = text.trim();
        if t.is_empty() || t == "*" {
            return Some(HostPattern::Any);
        }
        if let Some(rest) = t.strip_prefix("*.") {
            let suffix = ascii_host(rest)?;
            return suffix
                .parse::<IpAddr>()
                .is_err()
                .then_some(HostPattern::Under(suffix));
        }
        if t.contains('*') || t.contains('/') || t.contains(' ') {
            return None;
        }
        ascii_host(t).map(HostPattern::Exact)
    }

    /// Whether the pattern covers `host` (already in [`ascii_host`] form).
    pub fn matches(&self, host: &str) -> bool {
        match self {
            HostPattern::Any => true,
            HostPattern::Exact(h) => h == host,
            HostPattern::Under(suffix) => host
                .strip_suffix(suffix.as_str())
                .is_some_and(|head| head.len() > 1 && head.ends_with('.')),
        }
    }

    /// Whether the pattern names this address itself (an address rule, not a wildcard).
    pub fn names_address(&self, ip: IpAddr) -> bool {
        matches!(self, HostPattern::Exact(h) if h.parse::<IpAddr>().ok() == Some(ip))
    }
}

/// A list of allowed host patterns (the defaults, `--allow-domain`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostList(Vec<HostPattern>);

impl HostList {
    /// The patterns of `texts`; an entry that is no host is an error naming it.
    pub fn parse<S: AsRef<str>>(texts: &[S]) -> Result<HostList, String> {
        texts
            .iter()
            .map(|t| {
                let t = t.as_ref();
                match HostPattern::parse(t) {
                    Some(HostPattern::Any) => Err(format!(
                        "`{t}`: name hosts (`example.com`, `*.example.com`), not every host"
                    )),
                    Some(p) => Ok(p),
                    None => Err(format!("`{t}` is not a host name")),
                }
            })
            .collect::<Result<Vec<_>, _>>()
            .map(HostList)
    }

    /// The built-in download-only hosts ([`DEFAULT_HOSTS`]).
    pub fn defaults() -> HostList {
        HostList(
            DEFAULT_HOSTS
                .iter()
                .map(|h| HostPattern::Exact((*h).to_string()))
                .collect(),
        )
    }

    /// This list with `other`'s patterns too.
    pub fn with(mut self, other: &HostList) -> HostList {
        self.0.extend(other.0.iter().cloned());
        self
    }

    /// Whether a pattern covers `host`.
    pub fn allows(&self, host: &str) -> bool {
        self.0.iter().any(|p| p.matches(host))
    }

    /// Whether a pattern names the address `ip` itself.
    pub fn names_address(&self, ip: IpAddr) -> bool {
        self.0.iter().any(|p| p.names_address(ip))
    }

    /// The patterns, as written back (`*.x` for a suffix).
    pub fn texts(&self) -> Vec<String> {
        self.0
            .iter()
            .map(|p| match p {
                HostPattern::Any => "*".to_string(),
                HostPattern::Exact(h) => h.clone(),
                HostPattern::Under(s) => format!("*.{s}"),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn names_are_ascii_lowercase_and_addresses_canonical() {
        assert_eq!(ascii_host("Index.Crates.IO.").unwrap(), "index.crates.io");
        assert_eq!(ascii_host("bücher.de").unwrap(), "xn--bcher-kva.de");
        assert_eq!(ascii_host("[::1]").unwrap(), "::1");
        assert_eq!(ascii_host("0x7f.1").unwrap(), "127.0.0.1");
        assert_eq!(ascii_host("2130706433").unwrap(), "127.0.0.1");
        assert_eq!(ascii_host(""), None);
        assert_eq!(ascii_host("a b"), None);
    }

    #[test]
    fn patterns_match_exact_names_and_names_under_a_suffix() {
        let under = HostPattern::parse("*.crates.io").unwrap();
        assert!(under.matches("index.crates.io"));
        assert!(under.matches("a.b.crates.io"));
        assert!(!under.matches("crates.io"));
        assert!(!under.matches("evilcrates.io"));
        let exact = HostPattern::parse("pypi.org").unwrap();
        assert!(exact.matches("pypi.org") && !exact.matches("upload.pypi.org"));
        assert!(HostPattern::parse("127.0.0.1")
            .unwrap()
            .names_address("127.0.0.1".parse().unwrap()));
        assert!(!under.names_address("127.0.0.1".parse().unwrap()));
        assert_eq!(HostPattern::parse("*.1.2.3"), None, "no wildcard addresses");
        assert_eq!(HostPattern::parse("a*b.com"), None);
    }

    #[test]
    fn the_defaults_are_download_only() {
        let d = HostList::defaults();
        for h in [
            "index.crates.io",
            "static.crates.io",
            "pypi.org",
            "proxy.golang.org",
        ] {
            assert!(d.allows(h), "{h}");
        }
        for h in NEVER_DEFAULT.iter().chain(USER_CHOICE) {
            assert!(!d.allows(h), "{h} must be the user's choice");
        }
        assert!(HostList::parse(&["*"]).is_err());
        assert!(HostList::parse(&["a b"]).is_err());
        assert_eq!(
            HostList::parse(&["*.Example.com"]).unwrap().texts(),
            ["*.example.com"]
        );
    }
}
