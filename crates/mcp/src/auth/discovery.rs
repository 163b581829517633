//! Finding the authorization server: protected-resource metadata (RFC 9728) from the
//! challenge's `resource_metadata` or the well-known URLs, then authorization-server metadata
//! (RFC 8414, then OpenID Connect discovery), with the 2025-03-26 fallbacks (the server's
//! origin as the authorization server, default endpoints).

use serde_json::Value;
use url::Url;

use super::net::{AuthHttp, AuthRequest};
use super::{AuthError, Challenge};

/// What the login needs to know about the server and its authorization server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Discovered {
    /// The MCP server's canonical URL: the `resource` parameter (RFC 8707).
    pub resource: String,
    /// The authorization server's issuer (validated against its metadata).
    pub issuer: String,
    /// `authorization_endpoint`.
    pub authorization_endpoint: Url,
    /// `token_endpoint`.
    pub token_endpoint: Url,
    /// `registration_endpoint`, for dynamic registration.
    pub registration_endpoint: Option<Url>,
    /// `revocation_endpoint` (RFC 7009).
    pub revocation_endpoint: Option<Url>,
    /// `token_endpoint_auth_methods_supported`.
    pub auth_methods: Vec<String>,
    /// The scopes to ask for: the challenge's, else the resource's `scopes_supported`.
    pub scope: Option<String>,
    /// Whether the server sends `iss` in the redirect (RFC 9207), so it must be there.
    pub iss_in_response: bool,
}

/// Discovers everything from the server URL and its 401 challenge.
pub async fn discover(
    http: &dyn AuthHttp,
    server: &Url,
    challenge: &Challenge,
) -> Result<Discovered, AuthError> {
    let resource = canonical(server);
    let prm = protected_resource(http, server, challenge).await?;
    let (issuer, scopes_supported) = match &prm {
        Some(doc) => {
            check_resource(doc, server)?;
            let first = doc
                .get("authorization_servers")
                .and_then(Value::as_array)
                .and_then(|a| a.first())
                .and_then(Value::as_str)
                .ok_or_else(|| {
                    AuthError::Discovery(format!(
                        "{server}'s resource metadata names no authorization server"
                    ))
                })?;
            let scopes = doc
                .get("scopes_supported")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .filter(|s| !s.is_empty());
            (first.to_string(), scopes)
        }
        // 2025-03-26: the server's origin is its authorization server.
        None => (origin(server), None),
    };
    let issuer_url = Url::parse(&issuer).map_err(|_| {
        AuthError::Discovery(format!("the authorization server `{issuer}` is not a URL"))
    })?;
    let meta = authorization_server(http, server, &issuer_url).await?;
    let scope = challenge.scope.clone().or(scopes_supported);
    match meta {
        // 2025-03-26 (no resource metadata): the metadata at the origin may name an issuer
        // with a path there (`https://host/oauth`); the same origin is all that spec ties.
        Some(m) if prm.is_none() => {
            let said = m.get("issuer").and_then(Value::as_str).unwrap_or("");
            let same_origin = Url::parse(said).is_ok_and(|u| u.origin() == issuer_url.origin());
            let issuer = if same_origin {
                said.to_string()
            } else {
                issuer
            };
            from_metadata(&m, &issuer, resource, scope)
        }
        Some(m) => from_metadata(&m, &issuer, resource, scope),
        None if prm.is_none() => {
            // 2025-03-26 default endpoints at the origin.
            let at = |p: &str| {
                issuer_url
                    .join(p)
                    .map_err(|_| AuthError::Discovery(format!("bad issuer `{issuer}`")))
            };
            Ok(Discovered {
                resource,
                issuer: issuer.clone(),
                authorization_endpoint: at("/authorize")?,
                token_endpoint: at("/token")?,
                registration_endpoint: Some(at("/register")?),
                revocation_endpoint: None,
                auth_methods: Vec::new(),
                scope,
                iss_in_response: false,
            })
        }
        None => Err(AuthError::Discovery(format!(
            "the authorization server {issuer} publishes no metadata (RFC 8414 or OpenID)"
        ))),
    }
}

/// The server URL without fragment (and without a lone trailing `/` path).
pub fn canonical(server: &Url) -> String {
    let mut u = server.clone();
    u.set_fragment(None);
    let s = u.to_string();
    if u.path() == "/" && u.query().is_none() {
        s.trim_end_matches('/').to_string()
    } else {
        s
    }
}

fn origin(u: &Url) -> String {
    u.origin().ascii_serialization()
}

/// The resource's metadata document: the challenge's URL, then the path-aware and root
/// well-known URLs; `None` when none exists (404s).
async fn protected_resource(
    http: &dyn AuthHttp,
    server: &Url,
    challenge: &Challenge,
) -> Result<Option<Value>, AuthError> {
    let mut candidates = Vec::new();
    if let Some(u) = &challenge.resource_metadata {
        let u = server.join(u).map_err(|_| {
            AuthError::Discovery(format!("the server's resource_metadata `{u}` is not a URL"))
        })?;
        candidates.push(u);
    }
    let base = origin(server);
    let path = server.path().trim_end_matches('/');
    if !path.is_empty() {
        candidates.push(join(
            &base,
            &format!("/.well-known/oauth-protected-resource{path}"),
        )?);
    }
    candidates.push(join(&base, "/.well-known/oauth-protected-resource")?);
    first_json(http, server, &candidates, "resource metadata").await
}

/// Metadata of the authorization server `issuer`: RFC 8414 (path inserted), then OpenID
/// discovery (path inserted, then appended).
async fn authorization_server(
    http: &dyn AuthHttp,
    server: &Url,
    issuer: &Url,
) -> Result<Option<Value>, AuthError> {
    let base = origin(issuer);
    let path = issuer.path().trim_end_matches('/');
    let candidates = if path.is_empty() {
        vec![
            join(&base, "/.well-known/oauth-authorization-server")?,
            join(&base, "/.well-known/openid-configuration")?,
        ]
    } else {
        vec![
            join(
                &base,
                &format!("/.well-known/oauth-authorization-server{path}"),
            )?,
            join(&base, &format!("/.well-known/openid-configuration{path}"))?,
            join(&base, &format!("{path}/.well-known/openid-configuration"))?,
        ]
    };
    first_json(http, server, &candidates, "authorization server metadata").await
}

fn join(base: &str, path: &str) -> Result<Url, AuthError> {
    Url::parse(&format!("{base}{path}"))
        .map_err(|_| AuthError::Discovery(format!("cannot form a URL from {base}{path}")))
}

/// The first candidate that answers 200 with JSON; refusals by the address rule stop at once.
async fn first_json(
    http: &dyn AuthHttp,
    server: &Url,
    candidates: &[Url],
    what: &str,
) -> Result<Option<Value>, AuthError> {
    for url in candidates {
        tracing::debug!(%url, "MCP login: fetching {what}");
        let reply = match http.send(AuthRequest::get(url.clone()), server).await {
            Ok(r) => r,
            Err(e @ AuthError::Refused(_)) => return Err(e),
            Err(e) => {
                tracing::debug!(%url, error = %e, "MCP login: {what} not there");
                continue;
            }
        };
        if reply.status == 200 {
            if let Ok(v @ Value::Object(_)) = reply.json(what) {
                return Ok(Some(v));
            }
        }
    }
    Ok(None)
}

/// The resource metadata must be about this server (RFC 9728 §3.3).
fn check_resource(doc: &Value, server: &Url) -> Result<(), AuthError> {
    let Some(res) = doc.get("resource").and_then(Value::as_str) else {
        return Ok(());
    };
    let ok = Url::parse(res).is_ok_and(|r| {
        r.origin() == server.origin()
            && server
                .path()
                .trim_end_matches('/')
                .starts_with(r.path().trim_end_matches('/'))
    });
    if ok {
        Ok(())
    } else {
        Err(AuthError::Discovery(format!(
            "the resource metadata is for {res}, not for {server}; not logging in"
        )))
    }
}

fn from_metadata(
    m: &Value,
    issuer: &str,
    resource: String,
    scope: Option<String>,
) -> Result<Discovered, AuthError> {
    let said = m.get("issuer").and_then(Value::as_str).unwrap_or("");
    if said.trim_end_matches('/') != issuer.trim_end_matches('/') {
        return Err(AuthError::Discovery(format!(
            "the authorization server's metadata names issuer `{said}`, not `{issuer}`; not logging in"
        )));
    }
    let url = |k: &str| -> Result<Option<Url>, AuthError> {
        match m.get(k).and_then(Value::as_str) {
            None => Ok(None),
            Some(s) => Url::parse(s).map(Some).map_err(|_| {
                AuthError::Discovery(format!("the metadata's {k} `{s}` is not a URL"))
            }),
        }
    };
    let need = |k: &str| {
        url(k)?.ok_or_else(|| AuthError::Discovery(format!("the authorization server has no {k}")))
    };
    let methods = strings(m, "code_challenge_methods_supported");
    if !methods.iter().any(|x| x == "S256") {
        return Err(AuthError::Discovery(
            "the authorization server does not say it supports PKCE S256; not logging in".into(),
        ));
    }
    Ok(Discovered {
        resource,
        issuer: issuer.to_string(),
        authorization_endpoint: need("authorization_endpoint")?,
        token_endpoint: need("token_endpoint")?,
        registration_endpoint: url("registration_endpoint")?,
        revocation_endpoint: url("revocation_endpoint")?,
        auth_methods: strings(m, "token_endpoint_auth_methods_supported"),
        scope,
        iss_in_response: m
            .get("authorization_response_iss_parameter_supported")
            .and_then(Value::as_bool)
            .unwrap_or(false),
    })
}

fn strings(m: &Value, k: &str) -> Vec<String> {
    m.get(k)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}
