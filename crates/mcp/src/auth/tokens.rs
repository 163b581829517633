//! Client registration (RFC 7591), the token endpoint (code exchange, refresh) with its three
//! client authentications, and revocation (RFC 7009). What is stored after a login.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use url::Url;

use super::discovery::Discovered;
use super::net::{AuthHttp, AuthRequest};
use super::{AuthError, Env};

/// The client identity used with one authorization server.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Client {
    /// `client_id`.
    pub id: String,
    /// `client_secret`, for confidential (pre-registered or registered) clients.
    pub secret: Option<String>,
    /// `client_secret_basic`, `client_secret_post` or `none`.
    pub auth_method: String,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Client({}, {})", self.id, self.auth_method)
    }
}

/// Tokens from the token endpoint.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grant {
    /// The access token.
    pub access_token: String,
    /// The refresh token, when one was issued.
    pub refresh_token: Option<String>,
    /// When the access token expires (Unix seconds), when known.
    pub expires_at: Option<u64>,
    /// The scopes granted (or asked for).
    pub scope: Option<String>,
}

impl std::fmt::Debug for Grant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Grant([redacted], expires_at: {:?})", self.expires_at)
    }
}

/// Everything kept for one server after a login: enough to refresh and revoke.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, Debug)]
pub struct StoredAuth {
    /// The MCP server's URL (`resource`).
    pub resource: String,
    /// The authorization server.
    pub issuer: String,
    /// Its token endpoint.
    pub token_endpoint: String,
    /// Its revocation endpoint, when it has one.
    pub revocation_endpoint: Option<String>,
    /// Who Cairn is there.
    pub client: Client,
    /// The tokens.
    pub grant: Grant,
    /// Scopes a call was refused for (403 `insufficient_scope`): the next login asks for
    /// them with the granted ones (a step-up).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wanted_scope: Option<String>,
}

/// Picks the client authentication: what registration said, else the server's preference
/// among the three Cairn speaks (`client_secret_basic` first, as RFC 8414 defaults to it).
pub fn auth_method(secret: bool, said: Option<&str>, supported: &[String]) -> String {
    if !secret {
        return "none".into();
    }
    if let Some(s) = said.filter(|s| matches!(*s, "client_secret_basic" | "client_secret_post")) {
        return s.into();
    }
    if supported.is_empty() || supported.iter().any(|m| m == "client_secret_basic") {
        "client_secret_basic".into()
    } else if supported.iter().any(|m| m == "client_secret_post") {
        "client_secret_post".into()
    } else {
        "client_secret_basic".into()
    }
}

/// Registers Cairn dynamically (RFC 7591) for `redirect_uri`.
pub async fn register(
    http: &dyn AuthHttp,
    server: &Url,
    d: &Discovered,
    redirect_uri: &str,
) -> Result<Client, AuthError> {
    let Some(endpoint) = &d.registration_endpoint else {
        return Err(AuthError::Discovery(format!(
            "the authorization server {} does not offer dynamic registration: give a \
             pre-registered client id (`--client-id`)",
            d.issuer
        )));
    };
    let mut body = json!({
        "client_name": "Cairn",
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    });
    if let Some(s) = &d.scope {
        body["scope"] = Value::String(s.clone());
    }
    let reply = http
        .send(AuthRequest::json(endpoint.clone(), &body), server)
        .await?;
    if !(200..300).contains(&reply.status) {
        return Err(AuthError::Server(format!(
            "dynamic client registration at {endpoint} was refused (HTTP {}){}",
            reply.status,
            oauth_error(&reply.body)
        )));
    }
    let v = reply.json("the registration answer")?;
    let id = v
        .get("client_id")
        .and_then(Value::as_str)
        .ok_or_else(|| AuthError::Server("the registration answer has no client_id".into()))?;
    let secret = v
        .get("client_secret")
        .and_then(Value::as_str)
        .map(str::to_string);
    let said = v.get("token_endpoint_auth_method").and_then(Value::as_str);
    Ok(Client {
        id: id.to_string(),
        auth_method: auth_method(secret.is_some(), said, &d.auth_methods),
        secret,
    })
}

/// ` (error: description)` from an OAuth error body, or nothing.
pub fn oauth_error(body: &[u8]) -> String {
    let Ok(v) = serde_json::from_slice::<Value>(body) else {
        return String::new();
    };
    let code = v.get("error").and_then(Value::as_str).unwrap_or("");
    let text = v
        .get("error_description")
        .and_then(Value::as_str)
        .unwrap_or("");
    match (code.is_empty(), text.is_empty()) {
        (true, _) => String::new(),
        (false, true) => format!(": {code}"),
        (false, false) => format!(": {code}: {}", text.chars().take(300).collect::<String>()),
    }
}

/// A token-endpoint request with the client's authentication.
fn token_request(endpoint: &Url, client: &Client, fields: &[(&str, &str)]) -> AuthRequest {
    let mut all: Vec<(&str, &str)> = fields.to_vec();
    let basic = client.auth_method == "client_secret_basic" && client.secret.is_some();
    if !basic {
        all.push(("client_id", &client.id));
    }
    if client.auth_method == "client_secret_post" {
        if let Some(s) = &client.secret {
            all.push(("client_secret", s));
        }
    }
    let req = AuthRequest::form(endpoint.clone(), &all);
    match (&client.secret, basic) {
        (Some(secret), true) => {
            let enc =
                |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
            let pair = format!("{}:{}", enc(&client.id), enc(secret));
            req.header("Authorization", &format!("Basic {}", STANDARD.encode(pair)))
        }
        _ => req,
    }
}

/// Sends a token request and reads the grant; `previous_refresh` is kept when the server
/// does not rotate it.
async fn grant(
    http: &dyn AuthHttp,
    env: &dyn Env,
    server: &Url,
    req: AuthRequest,
    asked_scope: Option<&str>,
    previous_refresh: Option<&str>,
) -> Result<Result<Grant, String>, AuthError> {
    let reply = http.send(req, server).await?;
    if reply.status != 200 {
        return Ok(Err(format!(
            "HTTP {}{}",
            reply.status,
            oauth_error(&reply.body)
        )));
    }
    let v = reply.json("the token answer")?;
    let Some(access) = v.get("access_token").and_then(Value::as_str) else {
        return Ok(Err("the answer has no access_token".into()));
    };
    let kind = v
        .get("token_type")
        .and_then(Value::as_str)
        .unwrap_or("Bearer");
    if !kind.eq_ignore_ascii_case("bearer") {
        return Ok(Err(format!("token type `{kind}` is not Bearer")));
    }
    Ok(Ok(Grant {
        access_token: access.to_string(),
        refresh_token: v
            .get("refresh_token")
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| previous_refresh.map(str::to_string)),
        expires_at: v
            .get("expires_in")
            .and_then(Value::as_u64)
            .map(|s| env.now() + s),
        scope: v
            .get("scope")
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| asked_scope.map(str::to_string)),
    }))
}

/// Exchanges an authorization code (with the PKCE verifier and `resource`).
#[allow(clippy::too_many_arguments)]
pub async fn exchange_code(
    http: &dyn AuthHttp,
    env: &dyn Env,
    server: &Url,
    d: &Discovered,
    client: &Client,
    code: &str,
    verifier: &str,
    redirect_uri: &str,
) -> Result<Grant, AuthError> {
    let req = token_request(
        &d.token_endpoint,
        client,
        &[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", redirect_uri),
            ("code_verifier", verifier),
            ("resource", &d.resource),
        ],
    );
    grant(http, env, server, req, d.scope.as_deref(), None)
        .await?
        .map_err(|why| {
            AuthError::Server(format!(
                "the token exchange at {} failed: {why}",
                d.token_endpoint
            ))
        })
}

/// Refreshes `auth`'s tokens; any refusal means the user must log in again.
pub async fn refresh(
    http: &dyn AuthHttp,
    env: &dyn Env,
    server: &Url,
    auth: &StoredAuth,
) -> Result<Grant, AuthError> {
    let Some(rt) = auth.grant.refresh_token.as_deref() else {
        return Err(AuthError::LoginNeeded(
            "the login expired and cannot be refreshed".into(),
        ));
    };
    let endpoint = Url::parse(&auth.token_endpoint)
        .map_err(|_| AuthError::Store("the stored token endpoint is not a URL".into()))?;
    let mut fields = vec![
        ("grant_type", "refresh_token"),
        ("refresh_token", rt),
        ("resource", auth.resource.as_str()),
    ];
    if let Some(s) = auth.grant.scope.as_deref() {
        fields.push(("scope", s));
    }
    let req = token_request(&endpoint, &auth.client, &fields);
    match grant(
        http,
        env,
        server,
        req,
        auth.grant.scope.as_deref(),
        Some(rt),
    )
    .await
    {
        Ok(Ok(g)) => Ok(g),
        Ok(Err(why)) => Err(AuthError::LoginNeeded(format!(
            "the login expired and the refresh was refused ({why})"
        ))),
        Err(e @ AuthError::Refused(_)) => Err(e),
        Err(e) => Err(AuthError::LoginNeeded(format!(
            "the login expired and could not be refreshed ({e})"
        ))),
    }
}

/// Revokes the refresh token (else the access token) where the server offers revocation;
/// `Ok(false)` when it offers none.
pub async fn revoke(
    http: &dyn AuthHttp,
    server: &Url,
    auth: &StoredAuth,
) -> Result<bool, AuthError> {
    let Some(endpoint) = &auth.revocation_endpoint else {
        return Ok(false);
    };
    let endpoint = Url::parse(endpoint)
        .map_err(|_| AuthError::Store("the stored revocation endpoint is not a URL".into()))?;
    let (token, hint) = match &auth.grant.refresh_token {
        Some(rt) => (rt.as_str(), "refresh_token"),
        None => (auth.grant.access_token.as_str(), "access_token"),
    };
    let req = token_request(
        &endpoint,
        &auth.client,
        &[("token", token), ("token_type_hint", hint)],
    );
    let reply = http.send(req, server).await?;
    if reply.status == 200 {
        Ok(true)
    } else {
        Err(AuthError::Server(format!(
            "revocation at {endpoint} failed (HTTP {}){}",
            reply.status,
            oauth_error(&reply.body)
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_the_client_authentication() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(auth_method(false, Some("client_secret_basic"), &[]), "none");
        assert_eq!(
            auth_method(true, Some("client_secret_post"), &[]),
            "client_secret_post"
        );
        assert_eq!(
            auth_method(true, None, &s(&["client_secret_post"])),
            "client_secret_post"
        );
        assert_eq!(auth_method(true, None, &[]), "client_secret_basic");
    }
}
