//! web_fetch refuses to reach this machine or its local network through a host name or a
//! redirect unless its own URL named a local address (which the user approved). Names are
//! resolved by a fake resolver; the only server is on 127.0.0.1.

use crate::common;

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::Query;
use axum::http::header;
use axum::response::Redirect;
use axum::routing::get;
use axum::Router;
use cairn_engine::ToolHandle;
use cairn_tools::web::{is_local_ip, HttpConfig, Resolver, SystemResolver};
use cairn_tools::{WebFetch, WebFetchConfig};
use common::Ws;
use serde_json::json;
use tokio::net::TcpListener;

/// Starts a server with `/page`, `/moved` (to `/page`), `/to?target=URL` (a redirect there)
/// and `/secret`; returns its base URL and how often `/secret` was served.
async fn server() -> (String, Arc<AtomicUsize>) {
    let secrets = Arc::new(AtomicUsize::new(0));
    let served = secrets.clone();
    let app = Router::new()
        .route(
            "/page",
            get(|| async { ([(header::CONTENT_TYPE, "text/html")], "<h1>Widgets</h1>") }),
        )
        .route("/moved", get(|| async { Redirect::temporary("/page") }))
        .route(
            "/to",
            get(|Query(q): Query<HashMap<String, String>>| async move {
                Redirect::temporary(&q["target"])
            }),
        )
        .route(
            "/secret",
            get(move || async move {
                served.fetch_add(1, Ordering::SeqCst);
                "the local secret"
            }),
        );
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        axum::serve(listener, app).await.unwrap();
    });
    (format!("http://{addr}"), secrets)
}

fn fetcher_with(resolver: Arc<dyn Resolver>) -> ToolHandle {
    Arc::new(WebFetch::new(WebFetchConfig {
        http: HttpConfig {
            system_proxy: false,
            socks5_proxy: None,
            ..HttpConfig::default()
        },
        timeout: Duration::from_secs(5),
        max_bytes: 1024 * 1024,
        max_redirects: 5,
        resolver,
    }))
}

/// A resolver with fixed answers: each name has successive answers (the last one repeats).
/// Addresses in `public` count as on the internet, so that the test server on 127.0.0.1 can
/// stand in for a public site; every other address is classified as in production.
#[derive(Debug, Default)]
struct FakeDns {
    answers: HashMap<String, Vec<Vec<IpAddr>>>,
    public: Vec<IpAddr>,
    asked: Mutex<HashMap<String, usize>>,
}

impl FakeDns {
    fn new(public: &[&str]) -> Self {
        FakeDns {
            public: public.iter().map(|p| p.parse().unwrap()).collect(),
            ..FakeDns::default()
        }
    }

    fn name(mut self, name: &str, answers: &[&[&str]]) -> Self {
        let answers = answers
            .iter()
            .map(|a| a.iter().map(|ip| ip.parse().unwrap()).collect())
            .collect();
        self.answers.insert(name.into(), answers);
        self
    }

    fn asked(&self, name: &str) -> usize {
        self.asked.lock().unwrap().get(name).copied().unwrap_or(0)
    }
}

#[async_trait::async_trait]
impl Resolver for FakeDns {
    async fn lookup(&self, host: &str) -> std::io::Result<Vec<IpAddr>> {
        let mut asked = self.asked.lock().unwrap();
        let n = asked.entry(host.to_string()).or_default();
        let answers = self.answers.get(host).ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::NotFound, "no such host (fake)")
        })?;
        let answer = answers[(*n).min(answers.len() - 1)].clone();
        *n += 1;
        Ok(answer)
    }

    fn is_local(&self, ip: IpAddr) -> bool {
        !self.public.contains(&ip) && is_local_ip(ip)
    }
}

fn port_of(base: &str) -> &str {
    base.rsplit(':').next().unwrap()
}

/// `http://public.example:{port}/to?target=…`: the "public" site redirecting to `target`.
fn via_public(port: &str, target: &str) -> String {
    let q: String = url::form_urlencoded::byte_serialize(target.as_bytes()).collect();
    format!("http://public.example:{port}/to?target={q}")
}

#[tokio::test]
async fn names_leading_to_local_addresses_are_refused() {
    let (base, secrets) = server().await;
    let port = port_of(&base);
    let dns = FakeDns::new(&[])
        .name("devbox.test", &[&["127.0.0.1"]])
        .name("mixed.example", &[&["203.0.113.9", "10.0.0.7"]])
        .name("metadata.example", &[&["169.254.169.254"]])
        .name("v6.example", &[&["fd00::1"]]);
    let ws = Ws::new();
    let fetch = fetcher_with(Arc::new(dns));
    let e = ws
        .call(
            &fetch,
            json!({"url": format!("http://devbox.test:{port}/secret")}),
        )
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(&format!(
            "web_fetch: devbox.test resolves to 127.0.0.1, an address on this machine or its local \
             network; fetch http://127.0.0.1:{port}/secret directly so the user is asked."
        )),
        "{e}"
    );
    for (name, ip) in [
        ("mixed.example", "10.0.0.7"),
        ("metadata.example", "169.254.169.254"),
        ("v6.example", "fd00::1"),
    ] {
        let e = ws
            .call(&fetch, json!({"url": format!("http://{name}/latest/")}))
            .await
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&format!("{name} resolves to {ip}, an address")),
            "{e}"
        );
    }
    let e = ws
        .call(&fetch, json!({"url": "http://nowhere.example/"}))
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("could not resolve nowhere.example"), "{e}");
    assert_eq!(
        secrets.load(Ordering::SeqCst),
        0,
        "a refused fetch connected"
    );
}

#[tokio::test]
async fn redirects_to_local_addresses_are_refused() {
    let (base, secrets) = server().await;
    let port = port_of(&base);
    let dns = FakeDns::new(&["127.0.0.1"])
        .name("public.example", &[&["127.0.0.1"]])
        .name("other.example", &[&["127.0.0.1"]])
        .name("devbox.test", &[&["127.0.0.2"]]);
    let ws = Ws::new();
    let fetch = fetcher_with(Arc::new(dns));
    for target in [
        format!("http://127.0.0.1:{port}/secret"),
        format!("http://localhost:{port}/secret"),
        format!("http://[::ffff:127.0.0.1]:{port}/secret"),
        "http://169.254.169.254/latest/meta-data/".to_string(),
    ] {
        let shown = url::Url::parse(&target).unwrap().to_string();
        let e = ws
            .call(&fetch, json!({"url": via_public(port, &target)}))
            .await
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&format!(
                "redirected to {shown}, which is on this machine or its local network"
            )) && e.contains("the redirect was not followed"),
            "{e}"
        );
    }
    let target = format!("http://devbox.test:{port}/secret");
    let e = ws
        .call(&fetch, json!({"url": via_public(port, &target)}))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(&format!(
            "redirected to {target}, and devbox.test resolves to 127.0.0.2, an address on this machine"
        )),
        "{e}"
    );
    assert_eq!(
        secrets.load(Ordering::SeqCst),
        0,
        "a refused redirect connected"
    );
    // A redirect to another public site is followed.
    let target = format!("http://other.example:{port}/page");
    let out = ws
        .call(&fetch, json!({"url": via_public(port, &target)}))
        .await
        .unwrap()
        .content;
    assert!(
        out.starts_with(&format!("(redirected to {target})")),
        "{out}"
    );
    assert!(out.contains("# Widgets"), "{out}");
}

#[tokio::test]
async fn local_fetches_follow_redirects_within_the_local_network() {
    let (base, secrets) = server().await;
    let port = port_of(&base);
    let dns = FakeDns::new(&[]).name("devbox.test", &[&["127.0.0.1"]]);
    let ws = Ws::new();
    let fetch = fetcher_with(Arc::new(dns));
    let target = format!("http://devbox.test:{port}/secret");
    let q: String = url::form_urlencoded::byte_serialize(target.as_bytes()).collect();
    let out = ws
        .call(&fetch, json!({"url": format!("{base}/to?target={q}")}))
        .await
        .unwrap()
        .content;
    assert!(
        out.starts_with(&format!("(redirected to {target})")),
        "{out}"
    );
    assert!(out.contains("the local secret"), "{out}");
    assert_eq!(secrets.load(Ordering::SeqCst), 1);
    // The system resolver, for `localhost`.
    let out = ws
        .call(
            &fetcher_with(Arc::new(SystemResolver)),
            json!({"url": format!("http://localhost:{port}/moved")}),
        )
        .await
        .unwrap()
        .content;
    assert!(out.contains("# Widgets"), "{out}");
}

#[tokio::test]
async fn the_connection_uses_the_addresses_checked() {
    let (base, _) = server().await;
    let port = port_of(&base);
    // public.example has no real address: its first answer is the test server (counted as
    // public), later ones a local address, as a rebinding DNS server would answer.
    let dns = Arc::new(
        FakeDns::new(&["127.0.0.1"]).name("public.example", &[&["127.0.0.1"], &["127.0.0.2"]]),
    );
    let ws = Ws::new();
    let fetch = fetcher_with(dns.clone());
    let url = format!("http://public.example:{port}/moved");
    let out = ws.call(&fetch, json!({"url": url})).await.unwrap().content;
    assert!(
        out.starts_with(&format!(
            "(redirected to http://public.example:{port}/page)"
        )),
        "{out}"
    );
    assert!(out.contains("# Widgets"), "{out}");
    // One lookup for both requests: the redirect to the same host kept the checked address.
    assert_eq!(dns.asked("public.example"), 1);
    // The next fetch looks up again, gets the local answer and stops before connecting.
    let e = ws
        .call(&fetch, json!({"url": url}))
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("public.example resolves to 127.0.0.2"), "{e}");
    assert_eq!(dns.asked("public.example"), 2);
}
