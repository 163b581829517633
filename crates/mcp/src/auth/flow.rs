//! One authorization-code login in two halves: [`prepare`] (discovery, client identity, PKCE,
//! the authorization URL) and [`complete`] (the redirect checked, the code exchanged).

use serde_json::json;
use url::Url;

use super::discovery::{self, Discovered};
use super::net::{check_url, AuthHttp, AuthRequest};
use super::pkce::Pkce;
use super::tokens::{self, Client, StoredAuth};
use super::{AuthError, Challenge, Env};

/// A pre-registered client, and scopes the user asked for.
#[derive(Clone, Default)]
pub struct ClientChoice {
    /// A pre-registered `client_id` (else dynamic registration).
    pub client_id: Option<String>,
    /// Its secret, for a confidential client.
    pub client_secret: Option<String>,
    /// Scopes to ask for instead of the discovered ones.
    pub scope: Option<String>,
}

impl std::fmt::Debug for ClientChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ClientChoice({:?}, scope {:?})",
            self.client_id, self.scope
        )
    }
}

/// A login waiting for its redirect.
#[derive(Debug, Clone)]
pub struct Pending {
    /// The MCP server.
    pub server: Url,
    /// What discovery found.
    pub discovered: Discovered,
    /// Who Cairn is at the authorization server.
    pub client: Client,
    /// The PKCE verifier and `state`.
    pub pkce: Pkce,
    /// The `redirect_uri` sent.
    pub redirect_uri: String,
    /// The URL the user opens.
    pub authorize_url: Url,
}

/// What an MCP server says to a client starting up (`initialize`, `notifications/initialized`,
/// `tools/list`, each with `token`): fine, or the first challenge (401, or 403
/// `insufficient_scope`). Servers may let `initialize` through and guard only what follows.
pub async fn probe(
    http: &dyn AuthHttp,
    server: &Url,
    token: Option<&str>,
) -> Result<Option<Challenge>, AuthError> {
    let init = json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "cairn", "version": env!("CARGO_PKG_VERSION")}
        }
    });
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}});
    let mut session: Option<String> = None;
    for (i, body) in [init, initialized, list].iter().enumerate() {
        let mut req = AuthRequest::json(server.clone(), body);
        if let Some(t) = token {
            req = req.header("Authorization", &format!("Bearer {t}"));
        }
        if i > 0 {
            req = req.header("MCP-Protocol-Version", PROTOCOL_VERSION);
        }
        if let Some(id) = &session {
            req = req.header("Mcp-Session-Id", id);
        }
        let reply = http.send(req, server).await?;
        let challenge = reply
            .www_authenticate
            .as_deref()
            .and_then(Challenge::parse)
            .unwrap_or_default();
        match reply.status {
            401 => return Ok(Some(challenge)),
            403 if challenge.is_insufficient_scope() => return Ok(Some(challenge)),
            // Another failure is the connection's to report, not the login's.
            s if !(200..300).contains(&s) => return Ok(None),
            _ => {}
        }
        if i == 0 {
            session = reply.session_id;
        }
    }
    Ok(None)
}

/// The MCP protocol version the probe speaks.
const PROTOCOL_VERSION: &str = "2025-11-25";

/// Discovers, identifies the client and builds the authorization URL for `redirect_uri`.
pub async fn prepare(
    http: &dyn AuthHttp,
    env: &dyn Env,
    server: &Url,
    challenge: &Challenge,
    choice: &ClientChoice,
    redirect_uri: &str,
) -> Result<Pending, AuthError> {
    let mut discovered = discovery::discover(http, server, challenge).await?;
    if let Some(s) = &choice.scope {
        discovered.scope = Some(s.clone());
    }
    check_url(&discovered.authorization_endpoint, server)?;
    let client = match &choice.client_id {
        Some(id) => Client {
            id: id.clone(),
            secret: choice.client_secret.clone(),
            auth_method: tokens::auth_method(
                choice.client_secret.is_some(),
                None,
                &discovered.auth_methods,
            ),
        },
        None => tokens::register(http, server, &discovered, redirect_uri).await?,
    };
    let pkce = Pkce::new(env)?;
    let mut url = discovered.authorization_endpoint.clone();
    {
        let mut q = url.query_pairs_mut();
        q.append_pair("response_type", "code")
            .append_pair("client_id", &client.id)
            .append_pair("redirect_uri", redirect_uri)
            .append_pair("code_challenge", &pkce.challenge)
            .append_pair("code_challenge_method", "S256")
            .append_pair("state", &pkce.state)
            .append_pair("resource", &discovered.resource);
        if let Some(s) = &discovered.scope {
            q.append_pair("scope", s);
        }
    }
    Ok(Pending {
        server: server.clone(),
        discovered,
        client,
        pkce,
        redirect_uri: redirect_uri.to_string(),
        authorize_url: url,
    })
}

/// Checks the redirect (`state`, `iss`, errors) and exchanges its code.
pub async fn complete(
    http: &dyn AuthHttp,
    env: &dyn Env,
    pending: &Pending,
    redirect: &Url,
) -> Result<StoredAuth, AuthError> {
    let get = |k: &str| {
        redirect
            .query_pairs()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.into_owned())
    };
    if get("state").as_deref() != Some(pending.pkce.state.as_str()) {
        return Err(AuthError::Redirect(
            "the redirect does not belong to this login (its `state` differs); nothing was \
             exchanged"
                .into(),
        ));
    }
    let d = &pending.discovered;
    match get("iss") {
        Some(iss) if iss.trim_end_matches('/') != d.issuer.trim_end_matches('/') => {
            return Err(AuthError::Redirect(format!(
                "the redirect comes from issuer `{iss}`, not `{}`; nothing was exchanged",
                d.issuer
            )))
        }
        None if d.iss_in_response => {
            return Err(AuthError::Redirect(
                "the redirect lacks the issuer (`iss`) its server promised; nothing was exchanged"
                    .into(),
            ))
        }
        _ => {}
    }
    if let Some(err) = get("error") {
        let text = get("error_description").unwrap_or_default();
        return Err(AuthError::Redirect(format!(
            "the authorization server said no: {err}{}{}",
            if text.is_empty() { "" } else { ": " },
            text.chars().take(300).collect::<String>()
        )));
    }
    let code = get("code")
        .ok_or_else(|| AuthError::Redirect("the redirect carries no authorization code".into()))?;
    let grant = tokens::exchange_code(
        http,
        env,
        &pending.server,
        d,
        &pending.client,
        &code,
        &pending.pkce.verifier,
        &pending.redirect_uri,
    )
    .await?;
    Ok(StoredAuth {
        resource: d.resource.clone(),
        issuer: d.issuer.clone(),
        token_endpoint: d.token_endpoint.to_string(),
        revocation_endpoint: d.revocation_endpoint.as_ref().map(Url::to_string),
        client: pending.client.clone(),
        grant,
        wanted_scope: None,
    })
}
