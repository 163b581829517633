//! The proxy on its unix socket, driven as the bridge would: plain HTTP and CONNECT to an
//! allowed host (a test mapping to a local server), refusals with a clear body and no
//! resolution of a refused name, local addresses refused unless named, SOCKS5.

use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use cairn_netproxy::gate::{NetGate, Verdict};
use cairn_netproxy::proxy;
use cairn_netproxy::resolve::MapResolver;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, UnixStream};

/// Allows `allowed.test` (and addresses in `named`), refuses everything else; records.
#[derive(Default)]
struct TestGate {
    named: Vec<IpAddr>,
    decided: Mutex<Vec<String>>,
    refused: Mutex<Vec<String>>,
}

#[async_trait]
impl NetGate for TestGate {
    async fn decide(&self, host: &str, _port: u16) -> Verdict {
        self.decided.lock().unwrap().push(host.to_string());
        if host == "allowed.test"
            || host
                .parse::<IpAddr>()
                .is_ok_and(|ip| self.named.contains(&ip))
        {
            Verdict::Allow
        } else {
            Verdict::Refuse(format!("{host} is not allowed in this test"))
        }
    }
    fn names_address(&self, ip: IpAddr) -> bool {
        self.named.contains(&ip)
    }
    fn refused(&self, host: &str, port: u16, why: &str) {
        self.refused
            .lock()
            .unwrap()
            .push(format!("{host}:{port} {why}"));
    }
}

/// A server answering every request with `hello`, telling the request lines it saw.
async fn server() -> (u16, Arc<Mutex<Vec<String>>>) {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = l.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s2 = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut c, _)) = l.accept().await {
            let seen = s2.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 4096];
                let n = c.read(&mut buf).await.unwrap_or(0);
                let text = String::from_utf8_lossy(&buf[..n]).to_string();
                seen.lock()
                    .unwrap()
                    .push(text.lines().next().unwrap_or("").to_string());
                let _ = c
                    .write_all(
                        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello",
                    )
                    .await;
            });
        }
    });
    (port, seen)
}

struct World {
    _dir: tempfile::TempDir,
    sock: std::path::PathBuf,
    gate: Arc<TestGate>,
    resolver: MapResolver,
    _proxy: proxy::ProxyHandle,
}

fn world(named: Vec<IpAddr>) -> World {
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("p.sock");
    let gate = Arc::new(TestGate {
        named,
        ..Default::default()
    });
    let local: IpAddr = "127.0.0.1".parse().unwrap();
    let resolver = MapResolver::new([
        ("allowed.test".to_string(), local),
        ("other.test".to_string(), local),
    ]);
    let p = proxy::start(&sock, gate.clone(), Arc::new(resolver.clone())).unwrap();
    World {
        _dir: dir,
        sock,
        gate,
        resolver,
        _proxy: p,
    }
}

async fn exchange(sock: &std::path::Path, request: &[u8]) -> String {
    let mut s = UnixStream::connect(sock).await.unwrap();
    s.write_all(request).await.unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out).await;
    String::from_utf8_lossy(&out).into_owned()
}

#[tokio::test]
async fn plain_http_and_connect_reach_an_allowed_host() {
    let (port, seen) = server().await;
    let w = world(vec![]);
    let get = format!("GET http://allowed.test:{port}/x?y HTTP/1.1\r\nHost: allowed.test\r\nProxy-Connection: keep-alive\r\n\r\n");
    let out = exchange(&w.sock, get.as_bytes()).await;
    assert!(out.ends_with("hello"), "{out}");
    assert_eq!(seen.lock().unwrap()[0], "GET /x?y HTTP/1.1");
    let connect = format!(
        "CONNECT allowed.test:{port} HTTP/1.1\r\nHost: allowed.test\r\n\r\nGET /tunnel HTTP/1.1\r\n\r\n"
    );
    let out = exchange(&w.sock, connect.as_bytes()).await;
    assert!(
        out.starts_with("HTTP/1.1 200 Connection Established"),
        "{out}"
    );
    assert!(out.ends_with("hello"), "{out}");
    assert_eq!(seen.lock().unwrap()[1], "GET /tunnel HTTP/1.1");
    assert_eq!(w.resolver.asked(), ["allowed.test", "allowed.test"]);
}

#[tokio::test]
async fn a_refused_name_is_never_resolved_and_the_refusal_says_why() {
    let (port, seen) = server().await;
    let w = world(vec![]);
    let out = exchange(
        &w.sock,
        format!("CONNECT Other.Test.:{port} HTTP/1.1\r\n\r\n").as_bytes(),
    )
    .await;
    assert!(out.starts_with("HTTP/1.1 403"), "{out}");
    assert!(
        out.contains("Cairn's sandbox refused this connection: other.test is not allowed"),
        "{out}"
    );
    let out = exchange(
        &w.sock,
        format!("GET http://bücher.test:{port}/ HTTP/1.1\r\n\r\n").as_bytes(),
    )
    .await;
    assert!(
        out.contains("xn--bcher-kva.test is not allowed"),
        "the ask shows ASCII: {out}"
    );
    assert!(w.resolver.asked().is_empty(), "{:?}", w.resolver.asked());
    assert!(seen.lock().unwrap().is_empty());
    assert_eq!(w.gate.refused.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn local_and_metadata_addresses_are_refused_unless_named() {
    let (port, _) = server().await;
    let w = world(vec![]);
    for target in [
        format!("127.0.0.1:{port}"),
        "169.254.169.254:80".into(),
        format!("[::ffff:127.0.0.1]:{port}"),
    ] {
        let out = exchange(
            &w.sock,
            format!("CONNECT {target} HTTP/1.1\r\n\r\n").as_bytes(),
        )
        .await;
        assert!(out.starts_with("HTTP/1.1 403"), "{target}: {out}");
        assert!(
            out.contains("refused unless a rule names the address"),
            "{out}"
        );
    }
    assert!(
        w.gate.decided.lock().unwrap().is_empty(),
        "refused before any ask"
    );
    let named = world(vec!["127.0.0.1".parse().unwrap()]);
    let out = exchange(
        &named.sock,
        format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\n\r\n").as_bytes(),
    )
    .await;
    assert!(out.ends_with("hello"), "{out}");
}

#[tokio::test]
async fn socks5_decides_names_before_resolving_them() {
    let (port, _) = server().await;
    let w = world(vec![]);
    let socks = |host: &str| {
        let mut m = vec![5u8, 1, 0, 5, 1, 0, 3, host.len() as u8];
        m.extend_from_slice(host.as_bytes());
        m.extend_from_slice(&port.to_be_bytes());
        m
    };
    let mut req = socks("allowed.test");
    req.extend_from_slice(b"GET / HTTP/1.1\r\n\r\n");
    let out = exchange(&w.sock, &req).await;
    assert!(out.ends_with("hello"), "{out:?}");
    let mut s = UnixStream::connect(&w.sock).await.unwrap();
    s.write_all(&socks("other.test")).await.unwrap();
    let mut reply = [0u8; 12];
    s.read_exact(&mut reply).await.unwrap();
    assert_eq!(&reply[..2], &[5, 0], "no authentication");
    assert_eq!(reply[3], 2, "connection not allowed by the rules");
    assert_eq!(w.resolver.asked(), ["allowed.test"]);
}
