//! HTTP proxying: `CONNECT host:port` tunnels and plain `http://` requests in absolute form
//! (forwarded in origin form). A refusal is a `403` whose body says why.

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;

use crate::proxy::Opener;

/// The longest request head read.
const MAX_HEAD: usize = 64 * 1024;

/// Serves an HTTP proxy connection whose first byte was read.
pub(crate) async fn serve(
    mut s: UnixStream,
    first: u8,
    opener: &Opener<'_>,
) -> std::io::Result<()> {
    let mut buf = vec![first];
    let end = loop {
        if let Some(i) = find(&buf, b"\r\n\r\n") {
            break i + 4;
        }
        if buf.len() > MAX_HEAD {
            return answer(&mut s, 431, "the request head is too long").await;
        }
        let mut chunk = [0u8; 4096];
        let n = s.read(&mut chunk).await?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..end]).into_owned();
    let rest = buf[end..].to_vec();
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or_default();
    let mut parts = request_line.split_whitespace();
    let (method, target, version) = match (parts.next(), parts.next(), parts.next()) {
        (Some(m), Some(t), Some(v)) => (m, t, v),
        _ => return answer(&mut s, 400, "not an HTTP proxy request").await,
    };
    if method.eq_ignore_ascii_case("CONNECT") {
        let Some((host, port)) = split_host_port(target, None) else {
            return answer(&mut s, 400, "CONNECT needs host:port").await;
        };
        return match opener.open(&host, port).await {
            Ok(mut up) => {
                s.write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
                    .await?;
                up.write_all(&rest).await?;
                tokio::io::copy_bidirectional(&mut s, &mut up).await?;
                Ok(())
            }
            Err(why) => refuse(&mut s, &why).await,
        };
    }
    let Some(after) = target.strip_prefix("http://") else {
        return answer(
            &mut s,
            400,
            "only http:// URLs are forwarded; use CONNECT (HTTPS_PROXY) for https",
        )
        .await;
    };
    let (authority, path) = match after.find('/') {
        Some(i) => (&after[..i], &after[i..]),
        None => (after, "/"),
    };
    let authority = authority.rsplit('@').next().unwrap_or(authority);
    let Some((host, port)) = split_host_port(authority, Some(80)) else {
        return answer(&mut s, 400, "the URL names no host").await;
    };
    let mut up = match opener.open(&host, port).await {
        Ok(up) => up,
        Err(why) => return refuse(&mut s, &why).await,
    };
    let mut out = format!("{method} {path} {version}\r\n");
    for line in lines.filter(|l| !l.is_empty()) {
        let name = line.split(':').next().unwrap_or_default().trim();
        if name.eq_ignore_ascii_case("proxy-connection")
            || name.eq_ignore_ascii_case("proxy-authorization")
        {
            continue;
        }
        out.push_str(line);
        out.push_str("\r\n");
    }
    out.push_str("\r\n");
    up.write_all(out.as_bytes()).await?;
    up.write_all(&rest).await?;
    tokio::io::copy_bidirectional(&mut s, &mut up).await?;
    Ok(())
}

/// `host:port` (IPv6 in brackets); `default` when the port is left out.
fn split_host_port(text: &str, default: Option<u16>) -> Option<(String, u16)> {
    if let Some(rest) = text.strip_prefix('[') {
        let (host, tail) = rest.split_once(']')?;
        let port = match tail.strip_prefix(':') {
            Some(p) => p.parse().ok()?,
            None if tail.is_empty() => default?,
            None => return None,
        };
        return Some((host.to_string(), port));
    }
    match text.rsplit_once(':') {
        Some((h, p)) if !h.contains(':') => Some((h.to_string(), p.parse().ok()?)),
        Some(_) => None,
        None => Some((text.to_string(), default?)),
    }
    .filter(|(h, _)| !h.is_empty())
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

async fn refuse(s: &mut UnixStream, why: &str) -> std::io::Result<()> {
    answer(
        s,
        403,
        &format!("Cairn's sandbox refused this connection: {why}"),
    )
    .await
}

async fn answer(s: &mut UnixStream, code: u16, body: &str) -> std::io::Result<()> {
    let reason = match code {
        400 => "Bad Request",
        403 => "Forbidden",
        _ => "Request Header Fields Too Large",
    };
    let body = format!("{body}\n");
    let head = format!(
        "HTTP/1.1 {code} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n\
         X-Cairn-Sandbox: refused\r\nConnection: close\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).await?;
    s.write_all(body.as_bytes()).await?;
    s.shutdown().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_and_port_are_split_with_ipv6_and_defaults() {
        assert_eq!(split_host_port("a.b:443", None), Some(("a.b".into(), 443)));
        assert_eq!(
            split_host_port("[::1]:8080", None),
            Some(("::1".into(), 8080))
        );
        assert_eq!(split_host_port("a.b", Some(80)), Some(("a.b".into(), 80)));
        assert_eq!(split_host_port("a.b", None), None);
        assert_eq!(split_host_port(":80", None), None);
        assert_eq!(split_host_port("::1:80", None), None);
    }
}
