//! `SOCKS5_PROXY`: every protocol's requests really go through the proxy.

use crate::common;

use cairn_engine::OutcomeStatus;
use cairn_providers::build_client;
use cairn_testkit::{Reply, Socks5Proxy};
use common::*;

#[tokio::test]
async fn requests_of_every_protocol_go_through_the_socks5_proxy() {
    for (i, protocol) in PROTOCOLS.into_iter().enumerate() {
        let proxy = Socks5Proxy::start().await.unwrap();
        let server = mock(vec![Reply::text("via proxy")]).await;
        let mut s = spec(protocol, &server.base_url());
        // Both accepted forms: a bare host:port and a socks5h:// URL.
        s.proxy = Some(if i % 2 == 0 {
            proxy.addr().to_string()
        } else {
            proxy.url()
        });
        let llm = build_client(&s).unwrap();
        let got = collect(llm.as_ref(), request(model_of(protocol))).await;
        assert_eq!(
            got.outcome().status,
            OutcomeStatus::Completed,
            "{protocol:?} {:?}",
            got.outcome()
        );
        assert_eq!(got.text, "via proxy");
        assert_eq!(
            proxy.connects(),
            1,
            "{protocol:?}: the request went through the proxy"
        );
        assert_eq!(server.requests().len(), 1);
    }
}

#[tokio::test]
async fn a_dead_proxy_is_a_retriable_network_failure() {
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = dead.local_addr().unwrap();
    drop(dead);
    let server = mock(vec![Reply::text("never")]).await;
    let mut s = spec(Protocol::Anthropic, &server.base_url());
    s.proxy = Some(format!("socks5h://{addr}"));
    let got = collect(
        build_client(&s).unwrap().as_ref(),
        request("claude-sonnet-4-5"),
    )
    .await;
    let o = got.outcome();
    assert_eq!(o.status, OutcomeStatus::Failed, "{o:?}");
    let m = o.message.as_deref().unwrap();
    assert!(
        m.starts_with(&format!(
            "could not connect to {} through the SOCKS5 proxy socks5h://{addr}: error connecting to socks proxy",
            server.base_url()
        )),
        "{m}"
    );
    assert!(m.ends_with("is the proxy running?"), "{m}");
    assert!(cairn_engine::RetryPolicy::is_retriable(o));
    assert!(server.requests().is_empty());
}
