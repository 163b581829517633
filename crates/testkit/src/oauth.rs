//! [`OAuthServer`]: an OAuth 2.1 authorization server and a protected resource on 127.0.0.1,
//! for MCP login tests. It publishes protected-resource metadata (RFC 9728) and
//! authorization-server metadata (RFC 8414), registers clients (RFC 7591), authorizes at once
//! (no login page: `/authorize` redirects with a code), checks PKCE S256 and `resource`,
//! issues, refreshes and revokes tokens, and guards a router with Bearer tokens. Faults
//! ([`OAuthFaults`]) make it lie the ways real servers can.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, PoisonError};

use axum::body::Body;
use axum::extract::{Form, Query, Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine as _;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

/// What the server gets wrong on purpose.
#[derive(Debug, Clone, Default)]
pub struct OAuthFaults {
    /// `resource_metadata` in the 401 points here instead of the real document.
    pub resource_metadata_url: Option<String>,
    /// The authorization-server metadata names this issuer.
    pub wrong_issuer: Option<String>,
    /// The redirect carries another `state`.
    pub wrong_state: bool,
    /// The redirect carries this `iss`.
    pub redirect_iss: Option<String>,
    /// Refresh requests are refused (`invalid_grant`).
    pub refuse_refresh: bool,
    /// Access tokens last this many seconds (default 3600).
    pub expires_in: Option<u64>,
    /// A confidential client: registration hands out a secret, and the token endpoint wants it
    /// with this method (`client_secret_basic` or `client_secret_post`).
    pub secret_method: Option<String>,
    /// The resource demands this scope beyond the first login's (a step-up).
    pub step_up_scope: Option<String>,
    /// `tools/call` (only) demands this scope: 403 `insufficient_scope` without it.
    pub call_scope: Option<String>,
}

#[derive(Default)]
struct Inner {
    faults: OAuthFaults,
    base: String,
    clients: BTreeMap<String, Option<String>>,
    /// code → (client, redirect_uri, challenge, resource, scope)
    codes: BTreeMap<String, (String, String, String, String, String)>,
    /// access token → scope
    access: BTreeMap<String, String>,
    /// refresh token → scope
    refresh: BTreeMap<String, String>,
    revoked: BTreeSet<String>,
    counter: u64,
    refreshes: u64,
    log: Vec<String>,
}

/// The running server; stops with the test's runtime.
#[derive(Clone)]
pub struct OAuthServer {
    base: String,
    inner: Arc<Mutex<Inner>>,
}

type Shared = Arc<Mutex<Inner>>;

fn lock(s: &Shared) -> std::sync::MutexGuard<'_, Inner> {
    s.lock().unwrap_or_else(PoisonError::into_inner)
}

impl OAuthServer {
    /// Starts on 127.0.0.1 with `protected` (e.g. an MCP service) at `/mcp`, behind tokens.
    pub async fn start(faults: OAuthFaults, protected: Router) -> std::io::Result<OAuthServer> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let base = format!("http://{}", listener.local_addr()?);
        let inner: Shared = Arc::new(Mutex::new(Inner {
            faults,
            base: base.clone(),
            ..Inner::default()
        }));
        let guarded = Router::new()
            .nest("/mcp", protected)
            .layer(middleware::from_fn_with_state(inner.clone(), guard));
        let app = Router::new()
            .route("/.well-known/oauth-protected-resource/mcp", get(prm))
            .route("/.well-known/oauth-authorization-server", get(as_meta))
            .route("/register", post(register))
            .route("/authorize", get(authorize))
            .route("/token", post(token))
            .route("/revoke", post(revoke))
            .with_state(inner.clone())
            .merge(guarded);
        tokio::spawn(async move { axum::serve(listener, app).await });
        Ok(OAuthServer { base, inner })
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// The protected MCP endpoint.
    pub fn mcp_url(&self) -> String {
        format!("{}/mcp", self.base)
    }

    /// Tokens revoked so far.
    pub fn revoked(&self) -> Vec<String> {
        lock(&self.inner).revoked.iter().cloned().collect()
    }

    /// Refresh grants served.
    pub fn refreshes(&self) -> u64 {
        lock(&self.inner).refreshes
    }

    /// Every token handed out (access and refresh), for leak checks.
    pub fn issued(&self) -> Vec<String> {
        let g = lock(&self.inner);
        g.access.keys().chain(g.refresh.keys()).cloned().collect()
    }

    /// Requests seen, as `METHOD path` lines.
    pub fn log(&self) -> Vec<String> {
        lock(&self.inner).log.clone()
    }

    /// Makes every access token invalid (as if they expired server-side).
    pub fn expire_access_tokens(&self) {
        lock(&self.inner).access.clear();
    }

    /// Changes the faults.
    pub fn set_faults(&self, f: impl FnOnce(&mut OAuthFaults)) {
        f(&mut lock(&self.inner).faults);
    }
}

fn next_id(g: &mut Inner, prefix: &str) -> String {
    g.counter += 1;
    let mut h = Sha256::new();
    h.update(format!("{prefix}{}{}", g.counter, g.base));
    format!("{prefix}-{}", &URL_SAFE_NO_PAD.encode(h.finalize())[..20])
}

fn oauth_error(status: StatusCode, code: &str) -> Response {
    (status, Json(json!({"error": code}))).into_response()
}

async fn guard(State(s): State<Shared>, req: Request, next: Next) -> Response {
    // The JSON-RPC method, for the faults that guard one method only.
    let (parts, body) = req.into_parts();
    let bytes = axum::body::to_bytes(body, 4 * 1024 * 1024)
        .await
        .unwrap_or_default();
    let is_call = serde_json::from_slice::<Value>(&bytes)
        .ok()
        .and_then(|v| v.get("method").and_then(Value::as_str).map(str::to_string))
        .is_some_and(|m| m == "tools/call");
    let req = Request::from_parts(parts, Body::from(bytes));
    let token = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_string);
    let (challenge, verdict) = {
        let mut g = lock(&s);
        g.log.push(format!("{} {}", req.method(), req.uri().path()));
        let prm = g
            .faults
            .resource_metadata_url
            .clone()
            .unwrap_or_else(|| format!("{}/.well-known/oauth-protected-resource/mcp", g.base));
        let scope = token.as_ref().and_then(|t| g.access.get(t).cloned());
        let verdict = match (&token, scope) {
            (None, _) | (Some(_), None) => Some(StatusCode::UNAUTHORIZED),
            (Some(_), Some(have)) => {
                let lacks = |need: &Option<String>| {
                    need.as_ref()
                        .is_some_and(|n| !have.split(' ').any(|x| x == n))
                };
                let call_lacks = is_call && lacks(&g.faults.call_scope);
                (lacks(&g.faults.step_up_scope) || call_lacks).then_some(StatusCode::FORBIDDEN)
            }
        };
        let wanted = match (is_call, &g.faults.call_scope) {
            (true, Some(c)) => c.clone(),
            _ => g.faults.step_up_scope.clone().unwrap_or_default(),
        };
        let challenge = match verdict {
            Some(StatusCode::FORBIDDEN) => format!(
                "Bearer error=\"insufficient_scope\", scope=\"{wanted}\", resource_metadata=\"{prm}\""
            ),
            _ => format!("Bearer resource_metadata=\"{prm}\", scope=\"mcp:read\""),
        };
        (challenge, verdict)
    };
    match verdict {
        Some(status) => Response::builder()
            .status(status)
            .header(header::WWW_AUTHENTICATE, challenge)
            .body(Body::empty())
            .unwrap_or_default(),
        None => next.run(req).await,
    }
}

async fn prm(State(s): State<Shared>) -> Json<Value> {
    let g = lock(&s);
    Json(json!({
        "resource": format!("{}/mcp", g.base),
        "authorization_servers": [g.base.clone()],
        "scopes_supported": ["mcp:read", "mcp:write"],
    }))
}

async fn as_meta(State(s): State<Shared>) -> Json<Value> {
    let g = lock(&s);
    let b = &g.base;
    let issuer = g.faults.wrong_issuer.clone().unwrap_or_else(|| b.clone());
    let methods = match &g.faults.secret_method {
        Some(m) => vec![m.clone()],
        None => vec!["none".to_string()],
    };
    Json(json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{b}/authorize"),
        "token_endpoint": format!("{b}/token"),
        "registration_endpoint": format!("{b}/register"),
        "revocation_endpoint": format!("{b}/revoke"),
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": methods,
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
    }))
}

async fn register(State(s): State<Shared>, Json(body): Json<Value>) -> Response {
    let mut g = lock(&s);
    g.log.push("POST /register".into());
    if body
        .get("redirect_uris")
        .and_then(Value::as_array)
        .is_none_or(|a| a.is_empty())
    {
        return oauth_error(StatusCode::BAD_REQUEST, "invalid_redirect_uri");
    }
    let id = next_id(&mut g, "client");
    let method = g.faults.secret_method.clone();
    let secret = method.as_ref().map(|_| format!("secret-{id}"));
    g.clients.insert(id.clone(), secret.clone());
    let mut out = json!({"client_id": id, "redirect_uris": body["redirect_uris"]});
    if let (Some(sec), Some(m)) = (secret, method) {
        out["client_secret"] = json!(sec);
        out["token_endpoint_auth_method"] = json!(m);
    }
    (StatusCode::CREATED, Json(out)).into_response()
}

async fn authorize(State(s): State<Shared>, Query(q): Query<BTreeMap<String, String>>) -> Response {
    let mut g = lock(&s);
    g.log.push("GET /authorize".into());
    let field = |k: &str| q.get(k).cloned().unwrap_or_default();
    let client = field("client_id");
    if !g.clients.contains_key(&client)
        || field("response_type") != "code"
        || field("code_challenge_method") != "S256"
        || field("code_challenge").is_empty()
        || field("resource") != format!("{}/mcp", g.base)
    {
        return oauth_error(StatusCode::BAD_REQUEST, "invalid_request");
    }
    let code = next_id(&mut g, "code");
    let redirect = field("redirect_uri");
    g.codes.insert(
        code.clone(),
        (
            client,
            redirect.clone(),
            field("code_challenge"),
            field("resource"),
            field("scope"),
        ),
    );
    let state = if g.faults.wrong_state {
        "not-the-state".to_string()
    } else {
        field("state")
    };
    let iss = g
        .faults
        .redirect_iss
        .clone()
        .unwrap_or_else(|| g.base.clone());
    let mut target = format!("{redirect}?code={code}&state={}", enc(&state));
    target.push_str(&format!("&iss={}", enc(&iss)));
    Response::builder()
        .status(StatusCode::FOUND)
        .header(header::LOCATION, target)
        .body(Body::empty())
        .unwrap_or_default()
}

fn enc(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The client authenticated by the request, when its credentials match.
fn client_of(g: &Inner, headers: &HeaderMap, form: &BTreeMap<String, String>) -> Option<String> {
    let basic = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Basic "))
        .and_then(|b| STANDARD.decode(b).ok())
        .and_then(|b| String::from_utf8(b).ok());
    let (id, secret, method) = match basic {
        Some(pair) => {
            let (i, s) = pair.split_once(':')?;
            (i.to_string(), Some(s.to_string()), "client_secret_basic")
        }
        None => (
            form.get("client_id")?.clone(),
            form.get("client_secret").cloned(),
            if form.contains_key("client_secret") {
                "client_secret_post"
            } else {
                "none"
            },
        ),
    };
    let want = g.clients.get(&id)?;
    match (want, &g.faults.secret_method) {
        (None, _) if method == "none" => Some(id),
        (Some(w), Some(m)) if Some(w) == secret.as_ref() && m == method => Some(id),
        _ => None,
    }
}

async fn token(
    State(s): State<Shared>,
    headers: HeaderMap,
    Form(form): Form<BTreeMap<String, String>>,
) -> Response {
    let mut g = lock(&s);
    g.log.push("POST /token".into());
    let Some(client) = client_of(&g, &headers, &form) else {
        return oauth_error(StatusCode::UNAUTHORIZED, "invalid_client");
    };
    let field = |k: &str| form.get(k).cloned().unwrap_or_default();
    let scope = match field("grant_type").as_str() {
        "authorization_code" => {
            let Some((c, redirect, challenge, resource, scope)) = g.codes.remove(&field("code"))
            else {
                return oauth_error(StatusCode::BAD_REQUEST, "invalid_grant");
            };
            let verifier =
                URL_SAFE_NO_PAD.encode(Sha256::digest(field("code_verifier").as_bytes()));
            if c != client
                || redirect != field("redirect_uri")
                || verifier != challenge
                || resource != field("resource")
            {
                return oauth_error(StatusCode::BAD_REQUEST, "invalid_grant");
            }
            scope
        }
        "refresh_token" => {
            let rt = field("refresh_token");
            if g.faults.refuse_refresh || g.revoked.contains(&rt) {
                return oauth_error(StatusCode::BAD_REQUEST, "invalid_grant");
            }
            let Some(scope) = g.refresh.remove(&rt) else {
                return oauth_error(StatusCode::BAD_REQUEST, "invalid_grant");
            };
            g.refreshes += 1;
            scope
        }
        _ => return oauth_error(StatusCode::BAD_REQUEST, "unsupported_grant_type"),
    };
    let access = next_id(&mut g, "at");
    let refresh = next_id(&mut g, "rt");
    g.access.insert(access.clone(), scope.clone());
    g.refresh.insert(refresh.clone(), scope.clone());
    let expires = g.faults.expires_in.unwrap_or(3600);
    Json(json!({
        "access_token": access,
        "token_type": "Bearer",
        "expires_in": expires,
        "refresh_token": refresh,
        "scope": scope,
    }))
    .into_response()
}

async fn revoke(
    State(s): State<Shared>,
    headers: HeaderMap,
    Form(form): Form<BTreeMap<String, String>>,
) -> Response {
    let mut g = lock(&s);
    g.log.push("POST /revoke".into());
    if client_of(&g, &headers, &form).is_none() {
        return oauth_error(StatusCode::UNAUTHORIZED, "invalid_client");
    }
    let t = form.get("token").cloned().unwrap_or_default();
    g.access.remove(&t);
    g.refresh.remove(&t);
    g.revoked.insert(t);
    StatusCode::OK.into_response()
}
