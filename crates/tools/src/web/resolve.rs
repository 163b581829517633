//! Where a `web_fetch` request may connect. The approval step judged the URL's text only; here
//! each host name is resolved before connecting, and when the fetch was not approved as a local
//! one, a name that leads to this machine or its local network is refused. The addresses
//! checked are the ones the connection is pinned to, so a second (rebinding) DNS answer cannot
//! change the target between check and connect.

use std::fmt;
use std::net::{IpAddr, SocketAddr};

use async_trait::async_trait;

/// Finds the addresses of host names for `web_fetch` (the system resolver; a fake in tests).
#[async_trait]
pub trait Resolver: Send + Sync + fmt::Debug {
    /// The addresses `host` (a domain name, never an IP literal) resolves to.
    async fn lookup(&self, host: &str) -> std::io::Result<Vec<IpAddr>>;

    /// Whether `ip` is on this machine or its local network (default: [`is_local_ip`]).
    fn is_local(&self, ip: IpAddr) -> bool {
        is_local_ip(ip)
    }
}

/// The operating system's resolver (`getaddrinfo`, what reqwest itself would use).
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemResolver;

#[async_trait]
impl Resolver for SystemResolver {
    async fn lookup(&self, host: &str) -> std::io::Result<Vec<IpAddr>> {
        Ok(tokio::net::lookup_host((host, 0))
            .await?
            .map(|a| a.ip())
            .collect())
    }
}

/// Whether `ip` is loopback, private, link-local (cloud metadata), unique-local, unspecified or
/// carrier-grade NAT: the classification `cairn_policy::net::local_address` applies to URLs.
pub fn is_local_ip(ip: IpAddr) -> bool {
    cairn_policy::net::local_ip(ip)
}

/// How a fetch may treat local addresses and names.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rules {
    /// The fetch's own URL names a local address, so the user approved (or auto mode allowed)
    /// reaching the local network: nothing is refused.
    pub local_fetch: bool,
    /// A proxy may carry the request and resolve names itself: a failed lookup here is not
    /// fatal, and the check is best effort (the proxy may get another answer).
    pub proxied: bool,
}

/// Checks where `url` leads before connecting; `from` is the URL that redirected to it.
/// Returns the addresses to pin its host name to (none for an IP literal, or when a proxy
/// resolves a name this machine cannot), or the refusal in words.
pub(crate) async fn check(
    url: &url::Url,
    from: Option<&url::Url>,
    rules: Rules,
    resolver: &dyn Resolver,
) -> Result<Vec<SocketAddr>, String> {
    // What `url` (or the redirect to it) would reach, then the way to ask the user instead.
    let refuse = |what: String, direct: &url::Url| match from {
        Some(f) => format!(
            "web_fetch: {f} redirected to {url}, {what}; the redirect was not followed. Fetch \
             {direct} directly so the user is asked."
        ),
        None => format!("web_fetch: {what}; fetch {direct} directly so the user is asked."),
    };
    if !rules.local_fetch {
        if let Some(host) = cairn_policy::net::local_address(url.as_str()) {
            let what = match from {
                Some(_) => format!("which is on this machine or its local network ({host})"),
                None => format!("{url} is on this machine or its local network ({host})"),
            };
            return Err(refuse(what, url));
        }
    }
    let host = match url.host() {
        Some(url::Host::Domain(d)) => d,
        // An IP literal was judged above from the URL's text; nothing to resolve.
        Some(_) => return Ok(Vec::new()),
        None => return Err(format!("web_fetch: {url} has no host")),
    };
    let ips = match resolver.lookup(host).await {
        Ok(ips) if !ips.is_empty() => ips,
        _ if rules.proxied => return Ok(Vec::new()),
        Ok(_) => return Err(format!("web_fetch: {url}: {host} has no address")),
        Err(e) => return Err(format!("web_fetch: {url}: could not resolve {host}: {e}")),
    };
    if !rules.local_fetch {
        if let Some(ip) = ips.iter().copied().find(|ip| resolver.is_local(*ip)) {
            let mut direct = url.clone();
            // Cannot fail: the URL has a host (a domain), so it can take an IP instead.
            let _ = direct.set_ip_host(ip);
            let what =
                format!("{host} resolves to {ip}, an address on this machine or its local network");
            let what = match from {
                Some(_) => format!("and {what}"),
                None => what,
            };
            return Err(refuse(what, &direct));
        }
    }
    // Port 0: the URL's port, or the scheme's, is used (reqwest's rule for pinned addresses).
    Ok(ips.into_iter().map(|ip| SocketAddr::new(ip, 0)).collect())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[derive(Debug)]
    struct Fixed(Vec<IpAddr>);

    #[async_trait]
    impl Resolver for Fixed {
        async fn lookup(&self, _host: &str) -> std::io::Result<Vec<IpAddr>> {
            if self.0.is_empty() {
                return Err(std::io::Error::other("no such host"));
            }
            Ok(self.0.clone())
        }
    }

    fn ips(list: &[&str]) -> Fixed {
        Fixed(list.iter().map(|s| s.parse().unwrap()).collect())
    }

    const REMOTE: Rules = Rules {
        local_fetch: false,
        proxied: false,
    };

    #[test]
    fn local_ips_follow_the_policy_classification() {
        for ip in [
            "127.0.0.1",
            "10.0.0.8",
            "192.168.1.1",
            "172.16.0.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "::",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
        ] {
            assert!(is_local_ip(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["8.8.8.8", "203.0.113.9", "2606:4700::1111"] {
            assert!(!is_local_ip(ip.parse().unwrap()), "{ip}");
        }
    }

    #[tokio::test]
    async fn names_leading_to_local_addresses_are_refused_unless_the_fetch_is_local() {
        let url = url::Url::parse("http://vm:18555/secret.txt").unwrap();
        let e = check(&url, None, REMOTE, &ips(&["203.0.113.9", "10.1.2.3"]))
            .await
            .unwrap_err();
        assert_eq!(
            e,
            "web_fetch: vm resolves to 10.1.2.3, an address on this machine or its local \
             network; fetch http://10.1.2.3:18555/secret.txt directly so the user is asked."
        );
        let e = check(&url, None, REMOTE, &ips(&["::1"])).await.unwrap_err();
        assert!(
            e.contains("fetch http://[::1]:18555/secret.txt directly"),
            "{e}"
        );
        let local = Rules {
            local_fetch: true,
            ..REMOTE
        };
        let pinned = check(&url, None, local, &ips(&["127.0.0.1"]))
            .await
            .unwrap();
        assert_eq!(pinned, vec!["127.0.0.1:0".parse().unwrap()]);
        let pinned = check(&url, None, REMOTE, &ips(&["203.0.113.9"]))
            .await
            .unwrap();
        assert_eq!(pinned, vec!["203.0.113.9:0".parse().unwrap()]);
    }

    #[tokio::test]
    async fn literal_hops_and_lookup_failures() {
        let from = url::Url::parse("https://public.example/a").unwrap();
        let to = url::Url::parse("http://169.254.169.254/latest/meta-data/").unwrap();
        let e = check(&to, Some(&from), REMOTE, &ips(&[]))
            .await
            .unwrap_err();
        assert!(
            e.starts_with(
                "web_fetch: https://public.example/a redirected to \
                 http://169.254.169.254/latest/meta-data/, which is on this machine"
            ) && e.contains("not followed"),
            "{e}"
        );
        let public = url::Url::parse("http://8.8.8.8/").unwrap();
        assert!(check(&public, None, REMOTE, &ips(&[]))
            .await
            .unwrap()
            .is_empty());
        let name = url::Url::parse("http://nowhere.example/").unwrap();
        let e = check(&name, None, REMOTE, &ips(&[])).await.unwrap_err();
        assert!(e.contains("could not resolve nowhere.example"), "{e}");
        // Behind a proxy the name may only resolve there.
        let proxied = Rules {
            proxied: true,
            ..REMOTE
        };
        assert!(check(&name, None, proxied, &ips(&[]))
            .await
            .unwrap()
            .is_empty());
        assert!(check(&name, None, proxied, &ips(&["127.0.0.1"]))
            .await
            .is_err());
    }
}
