//! MCP login (OAuth 2.1) against the testkit authorization server on 127.0.0.1: the full
//! login then tools over the protected server, refresh and its failure, revoke on logout,
//! step-up, confidential clients, and what is refused (a metadata URL on 169.254.169.254, a
//! wrong `state` or issuer).

use crate::common::*;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use axum::Router;
use cairn_mcp::auth::flow::ClientChoice;
use cairn_mcp::auth::login::{AccessTokens, Authenticator, UserStep};
use cairn_mcp::auth::net::ReqwestAuthHttp;
use cairn_mcp::auth::redirect::{follow_to_callback, BrowserStep, HttpBrowser, RedirectListener};
use cairn_mcp::auth::store::{MemoryTokens, TokenStore};
use cairn_mcp::auth::{AuthError, SystemEnv};
use cairn_mcp::testing::{Faults, TestServer};
use cairn_mcp::{ServerConfig, ServerError, ServerStatus, TransportConfig};
use cairn_testkit::oauth::{OAuthFaults, OAuthServer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::json;

async fn server(faults: OAuthFaults) -> OAuthServer {
    let service = StreamableHttpService::new(
        || Ok(TestServer::new(Faults::default())),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    OAuthServer::start(faults, Router::new().route_service("/", service))
        .await
        .unwrap()
}

fn auth(store: Arc<dyn TokenStore>) -> Authenticator {
    Authenticator {
        http: Arc::new(ReqwestAuthHttp),
        env: Arc::new(SystemEnv),
        store,
    }
}

/// The browser step over HTTP, with the URL it was shown kept.
fn browser() -> BrowserStep<HttpBrowser> {
    BrowserStep {
        browser: HttpBrowser,
        announce: Box::new(|_| {}),
        within: Duration::from_secs(10),
    }
}

/// The "paste the redirect URL" path: the listener is never reached; the URL the browser
/// ended on comes back as text.
struct Paste;

#[async_trait]
impl UserStep for Paste {
    async fn authorize(
        &self,
        url: &url::Url,
        listener: RedirectListener,
    ) -> Result<url::Url, AuthError> {
        drop(listener);
        let landed = follow_to_callback(url).await?;
        cairn_mcp::auth::redirect::parse_pasted(&format!("  {landed}\n"))
    }
}

fn remote(name: &str, url: &str) -> ServerConfig {
    ServerConfig {
        name: name.into(),
        transport: Some(TransportConfig::Http {
            url: url.into(),
            headers: Default::default(),
        }),
        enabled: true,
        startup_timeout: None,
        call_timeout: None,
        max_call_timeout: None,
        source: PathBuf::from("(test)"),
        held: None,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_needs_a_login_says_so_then_works_after_it() {
    let s = server(OAuthFaults::default()).await;
    let store: Arc<dyn TokenStore> = Arc::new(MemoryTokens::default());
    let a = auth(store.clone());

    let before = Harness::new(vec![remote("hosted", &s.mcp_url())], |o| {
        o.auth = Some(Arc::new(a.clone()))
    });
    let (ok, failed) = before.manager.connect_all().await;
    assert!(ok.is_empty());
    assert_eq!(failed.len(), 1);
    let reason = match &before.manager.status()[0].status {
        ServerStatus::Failed { reason } => reason.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        reason,
        "the server needs a login: run `cairn mcp login hosted`"
    );

    let done = a
        .login(&s.mcp_url(), &ClientChoice::default(), &browser())
        .await
        .unwrap();
    assert_eq!(done.rounds, 1);
    assert_eq!(done.scope.as_deref(), Some("mcp:read"));
    assert!(store.get(&s.mcp_url()).unwrap().is_some());

    let after = Harness::new(vec![remote("hosted", &s.mcp_url())], |o| {
        o.auth = Some(Arc::new(a.clone()))
    });
    let (ok, failed) = after.manager.connect_all().await;
    assert_eq!(ok, ["hosted"], "{failed:?}");
    let out = after
        .call("mcp__hosted__echo", json!({"text": "behind a login"}))
        .await
        .unwrap();
    assert!(format!("{out:?}").contains("behind a login"), "{out:?}");
    after.manager.close_all().await;
    before.manager.close_all().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_paste_fallback_logs_in_without_the_listener() {
    let s = server(OAuthFaults::default()).await;
    let store: Arc<dyn TokenStore> = Arc::new(MemoryTokens::default());
    let done = auth(store.clone())
        .login(&s.mcp_url(), &ClientChoice::default(), &Paste)
        .await
        .unwrap();
    assert_eq!(done.issuer, s.base());
    assert!(store.get(&s.mcp_url()).unwrap().is_some());
}

#[tokio::test(flavor = "multi_thread")]
async fn an_expired_token_is_refreshed_and_a_refused_refresh_means_login_again() {
    let s = server(OAuthFaults {
        expires_in: Some(0),
        ..OAuthFaults::default()
    })
    .await;
    let store: Arc<dyn TokenStore> = Arc::new(MemoryTokens::default());
    let a = auth(store.clone());
    a.login(&s.mcp_url(), &ClientChoice::default(), &browser())
        .await
        .unwrap();
    let first = store.get(&s.mcp_url()).unwrap().unwrap().grant.access_token;
    let fresh = a.bearer(&s.mcp_url()).await.unwrap().unwrap();
    assert_ne!(fresh, first);
    assert_eq!(s.refreshes(), 1);

    // A token the server dropped before its expiry: the connection refreshes once and retries.
    s.set_faults(|f| f.expires_in = Some(3600));
    a.bearer(&s.mcp_url()).await.unwrap();
    s.expire_access_tokens();
    let h = Harness::new(vec![remote("hosted", &s.mcp_url())], |o| {
        o.auth = Some(Arc::new(a.clone()))
    });
    let (ok, failed) = h.manager.connect_all().await;
    assert_eq!(ok, ["hosted"], "{failed:?}");
    assert_eq!(s.refreshes(), 3);
    h.manager.close_all().await;

    s.set_faults(|f| f.refuse_refresh = true);
    s.expire_access_tokens();
    let err = a.rejected(&s.mcp_url()).await.unwrap_err();
    assert!(matches!(err, AuthError::LoginNeeded(_)), "{err:?}");
    assert_eq!(
        err.to_string(),
        "the login expired and the refresh was refused (HTTP 400: invalid_grant)"
    );
    let h = Harness::new(vec![remote("hosted", &s.mcp_url())], |o| {
        o.auth = Some(Arc::new(a.clone()))
    });
    let (_, failed) = h.manager.connect_all().await;
    assert!(
        matches!(&failed[0].1, ServerError::LoginNeeded(r) if r.contains("cairn mcp login hosted")),
        "{failed:?}"
    );
    h.manager.close_all().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn logout_revokes_and_forgets() {
    let s = server(OAuthFaults::default()).await;
    let store: Arc<dyn TokenStore> = Arc::new(MemoryTokens::default());
    let a = auth(store.clone());
    a.login(&s.mcp_url(), &ClientChoice::default(), &browser())
        .await
        .unwrap();
    let rt = store
        .get(&s.mcp_url())
        .unwrap()
        .unwrap()
        .grant
        .refresh_token
        .unwrap();
    let said = a.logout(&s.mcp_url()).await.unwrap();
    assert_eq!(said.as_deref(), Some("revoked and forgotten"));
    assert_eq!(s.revoked(), [rt]);
    assert!(store.get(&s.mcp_url()).unwrap().is_none());
    assert_eq!(a.logout(&s.mcp_url()).await.unwrap(), None);
}

#[tokio::test(flavor = "multi_thread")]
async fn insufficient_scope_steps_up_once() {
    let s = server(OAuthFaults {
        step_up_scope: Some("mcp:write".into()),
        ..OAuthFaults::default()
    })
    .await;
    let store: Arc<dyn TokenStore> = Arc::new(MemoryTokens::default());
    let done = auth(store)
        .login(&s.mcp_url(), &ClientChoice::default(), &browser())
        .await
        .unwrap();
    assert_eq!(done.rounds, 2);
    assert_eq!(done.scope.as_deref(), Some("mcp:read mcp:write"));
    // One registration: the step-up reuses the client.
    assert_eq!(s.log().iter().filter(|l| *l == "POST /register").count(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn confidential_clients_authenticate_with_basic_or_post() {
    for method in ["client_secret_basic", "client_secret_post"] {
        let s = server(OAuthFaults {
            secret_method: Some(method.into()),
            ..OAuthFaults::default()
        })
        .await;
        let store: Arc<dyn TokenStore> = Arc::new(MemoryTokens::default());
        let a = auth(store.clone());
        a.login(&s.mcp_url(), &ClientChoice::default(), &browser())
            .await
            .unwrap();
        let stored = store.get(&s.mcp_url()).unwrap().unwrap();
        assert_eq!(stored.client.auth_method, method);
        assert!(a.rejected(&s.mcp_url()).await.is_ok(), "{method}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_metadata_url_on_the_cloud_metadata_address_is_refused() {
    let s = server(OAuthFaults {
        resource_metadata_url: Some("http://169.254.169.254/latest/meta-data/".into()),
        ..OAuthFaults::default()
    })
    .await;
    let err = auth(Arc::new(MemoryTokens::default()))
        .login(&s.mcp_url(), &ClientChoice::default(), &browser())
        .await
        .unwrap_err();
    assert!(matches!(err, AuthError::Refused(_)), "{err:?}");
    assert!(err.to_string().contains("169.254.169.254"), "{err}");
    assert!(
        !s.log().iter().any(|l| l.contains("register")),
        "{:?}",
        s.log()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_wrong_state_or_issuer_is_refused() {
    let cases = [
        (
            OAuthFaults {
                wrong_state: true,
                ..OAuthFaults::default()
            },
            "its `state` differs",
        ),
        (
            OAuthFaults {
                redirect_iss: Some("https://evil.example".into()),
                ..OAuthFaults::default()
            },
            "issuer `https://evil.example`",
        ),
        (
            OAuthFaults {
                wrong_issuer: Some("https://other.example".into()),
                ..OAuthFaults::default()
            },
            "names issuer `https://other.example`",
        ),
    ];
    for (faults, said) in cases {
        let s = server(faults).await;
        let store: Arc<dyn TokenStore> = Arc::new(MemoryTokens::default());
        let err = auth(store.clone())
            .login(&s.mcp_url(), &ClientChoice::default(), &browser())
            .await
            .unwrap_err();
        assert!(err.to_string().contains(said), "{err}");
        assert!(store.get(&s.mcp_url()).unwrap().is_none());
        assert!(!s.log().iter().any(|l| l == "POST /token"), "{:?}", s.log());
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_refused_for_a_missing_scope_is_said_and_the_next_login_steps_up() {
    let s = server(OAuthFaults {
        call_scope: Some("mcp:write".into()),
        ..OAuthFaults::default()
    })
    .await;
    let a = auth(Arc::new(MemoryTokens::default()));
    a.login(&s.mcp_url(), &ClientChoice::default(), &browser())
        .await
        .unwrap();
    let h = Harness::new(vec![remote("hosted", &s.mcp_url())], |o| {
        o.auth = Some(Arc::new(a.clone()))
    });
    let (ok, failed) = h.manager.connect_all().await;
    assert_eq!(ok, ["hosted"], "{failed:?}");
    let err = h
        .call("mcp__hosted__echo", json!({"text": "needs write"}))
        .await
        .unwrap_err();
    let text = format!("{err}");
    assert!(
        text.contains("the login lacks the permission it needs (scopes: mcp:write)"),
        "{text}"
    );
    assert!(text.contains("cairn mcp login hosted"), "{text}");
    assert!(!text.contains("rmcp::"), "{text}");
    // The step-up is remembered: the server's status says so, and the login keeps the scope.
    let info = h.manager.status().into_iter().next().unwrap();
    assert_eq!(info.needs_scope.as_deref(), Some("mcp:write"));
    let kept = a.stored(&s.mcp_url()).unwrap().unwrap();
    assert_eq!(kept.wanted_scope.as_deref(), Some("mcp:write"));
    let first_client = kept.client.id.clone();

    // The next login asks for the granted and the wanted scopes, with the same client; after
    // a reconnect the call goes through.
    let done = a
        .login(&s.mcp_url(), &ClientChoice::default(), &browser())
        .await
        .unwrap();
    let granted = done.scope.unwrap_or_default();
    assert!(
        granted.contains("mcp:read") && granted.contains("mcp:write"),
        "{granted}"
    );
    let kept = a.stored(&s.mcp_url()).unwrap().unwrap();
    assert_eq!(kept.wanted_scope, None);
    assert_eq!(kept.client.id, first_client);
    h.manager.refresh("hosted").await.unwrap();
    assert_eq!(h.manager.status()[0].needs_scope, None);
    let out = h
        .call("mcp__hosted__echo", json!({"text": "needs write"}))
        .await
        .unwrap();
    assert!(out.content.contains("needs write"), "{}", out.content);
    h.manager.close_all().await;
}
