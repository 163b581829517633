//! Which URLs reach this machine or its local network: loopback, private, link-local (where
//! cloud metadata services answer), unique-local and unspecified addresses, and `localhost`.
//! A fetch there can read services no page on the internet should reach, so it is a step the
//! user approves. Only what the URL itself says is judged here; `web_fetch` checks what names
//! resolve to with [`local_ip`] before it connects.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Whether `ip` is on this machine or its local network (an IPv4-mapped IPv6 address counts
/// as its IPv4 address).
pub fn local_ip(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => local_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => local_v4(v4),
            None => local_v6(v6),
        },
    }
}

/// The host of `url` when it names this machine or its local network; `None` otherwise (or
/// when `url` does not parse).
pub fn local_address(url: &str) -> Option<String> {
    let parsed = url::Url::parse(url.trim()).ok()?;
    match parsed.host()? {
        url::Host::Domain(d) => {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            (d == "localhost" || d.ends_with(".localhost")).then_some(d)
        }
        url::Host::Ipv4(ip) => local_ip(IpAddr::V4(ip)).then(|| ip.to_string()),
        url::Host::Ipv6(ip) => local_ip(IpAddr::V6(ip)).then(|| ip.to_string()),
    }
}

fn local_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    // 0.0.0.0/8 ("this network"): Linux connects 0.x.y.z to this machine.
    a == 0
        || ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        // Carrier-grade NAT (100.64.0.0/10), used by VPNs and some clouds internally.
        || (a == 100 && (64..128).contains(&b))
}

fn local_v6(ip: Ipv6Addr) -> bool {
    let first = ip.segments()[0];
    let seg = ip.segments();
    // IPv4-compatible (::a.b.c.d, deprecated) and NAT64 (64:ff9b::/96) addresses carry an
    // IPv4 address that may be local.
    let embedded = Ipv4Addr::new(
        (seg[6] >> 8) as u8,
        seg[6] as u8,
        (seg[7] >> 8) as u8,
        seg[7] as u8,
    );
    let compatible = seg[..6].iter().all(|s| *s == 0);
    let nat64 = seg[..6] == [0x64, 0xff9b, 0, 0, 0, 0];
    ip.is_loopback()
        || ip.is_unspecified()
        || ((compatible || nat64) && local_v4(embedded))
        || (first & 0xfe00) == 0xfc00 // unique local fc00::/7
        || (first & 0xffc0) == 0xfe80 // link-local fe80::/10
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn local_and_private_addresses_are_told_from_public_ones() {
        for url in [
            "http://localhost:3000/",
            "http://app.localhost/x",
            "http://127.0.0.1/",
            "http://10.1.2.3/",
            "http://192.168.1.1/admin",
            "http://172.16.0.5/",
            "http://169.254.169.254/latest/meta-data/",
            "http://100.100.1.1/",
            "http://0.0.0.0:8080/",
            "http://[::1]/",
            "http://[fd00::1]/",
            "http://[fe80::1]/",
            "http://[::ffff:127.0.0.1]/",
            "http://2130706433/",
            "http://0.1.2.3/",
            "http://[::127.0.0.1]/",
            "http://[64:ff9b::a9fe:a9fe]/",
        ] {
            assert!(local_address(url).is_some(), "{url}");
        }
        for url in [
            "https://example.com/",
            "https://8.8.8.8/",
            "https://[2606:4700::1111]/",
            "https://[64:ff9b::808:808]/",
            "https://localhost.example.com/",
            "not a url",
        ] {
            assert_eq!(local_address(url), None, "{url}");
        }
    }
}
