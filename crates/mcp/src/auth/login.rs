//! [`Authenticator`]: the whole login (with step-up on `insufficient_scope`), logout with
//! revocation, and access tokens for connections (refreshed when they expire).

use std::sync::Arc;

use async_trait::async_trait;
use url::Url;

use super::flow::{self, ClientChoice};
use super::net::AuthHttp;
use super::redirect::RedirectListener;
use super::store::TokenStore;
use super::tokens::{self, StoredAuth};
use super::{AuthError, Env};

/// Logins attempted in one `login` (the first, then step-ups for missing scopes).
pub const MAX_STEP_UPS: usize = 2;
/// A token this close to its expiry (seconds) is refreshed first.
const EXPIRY_MARGIN: u64 = 30;

/// The user's part: show or open the authorization URL, then bring back the redirect (from the
/// listener, or pasted).
#[async_trait]
pub trait UserStep: Send + Sync {
    /// Lets the user authorize at `url`; returns the redirect URL.
    async fn authorize(&self, url: &Url, listener: RedirectListener) -> Result<Url, AuthError>;
}

/// Bearer tokens for connections.
#[async_trait]
pub trait AccessTokens: Send + Sync + std::fmt::Debug {
    /// The access token for `server`, refreshed when it expired; `None` when there is no login.
    async fn bearer(&self, server: &str) -> Result<Option<String>, AuthError>;
    /// The server refused the token: refresh it now (a failure means "login needed").
    async fn rejected(&self, server: &str) -> Result<String, AuthError>;
    /// The server refused a call for a missing scope (403 `insufficient_scope` naming
    /// `scope`): remember it, so the next login asks for it with the granted ones.
    async fn wants(&self, server: &str, scope: Option<&str>) -> Result<(), AuthError>;
}

/// What a login did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginDone {
    /// The authorization server.
    pub issuer: String,
    /// Scopes granted.
    pub scope: Option<String>,
    /// Authorization rounds it took (more than one after a step-up).
    pub rounds: usize,
    /// Whether the server already let Cairn in without a login.
    pub not_needed: bool,
}

/// Logs in, refreshes, revokes; every side effect through its traits.
#[derive(Clone)]
pub struct Authenticator {
    /// HTTP.
    pub http: Arc<dyn AuthHttp>,
    /// Randomness and clock.
    pub env: Arc<dyn Env>,
    /// Where logins are kept.
    pub store: Arc<dyn TokenStore>,
}

impl std::fmt::Debug for Authenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Authenticator({})", self.store.describe())
    }
}

fn parse(server: &str) -> Result<Url, AuthError> {
    Url::parse(server).map_err(|_| AuthError::Discovery(format!("`{server}` is not a URL")))
}

impl Authenticator {
    /// The whole login for `server`: probe, discover, register (or use `choice`'s client),
    /// authorize through `step`, exchange, check the token against the server, and step up
    /// when it answers `insufficient_scope` (at most [`MAX_STEP_UPS`] times).
    pub async fn login(
        &self,
        server: &str,
        choice: &ClientChoice,
        step: &dyn UserStep,
    ) -> Result<LoginDone, AuthError> {
        let url = parse(server)?;
        let http = self.http.as_ref();
        let Some(mut challenge) = flow::probe(http, &url, None).await? else {
            return Ok(LoginDone {
                issuer: String::new(),
                scope: None,
                rounds: 0,
                not_needed: true,
            });
        };
        let mut choice = choice.clone();
        if choice.scope.is_none() {
            // A step-up a refused call asked for: the granted scopes and the wanted ones.
            if let Some(kept) = self.store.get(server)? {
                if let Some(wanted) = kept.wanted_scope.as_deref() {
                    if choice.client_id.is_none() {
                        // The client the first login registered (or was given) steps up.
                        choice.client_id = Some(kept.client.id.clone());
                        choice.client_secret = kept.client.secret.clone();
                    }
                    choice.scope = union(
                        union(kept.grant.scope.as_deref(), challenge.scope.as_deref()).as_deref(),
                        Some(wanted),
                    );
                    tracing::info!(server = %url, "MCP login: asking for the scopes a call needed");
                }
            }
        }
        let mut rounds = 0;
        loop {
            rounds += 1;
            let listener = RedirectListener::bind().await?;
            let redirect_uri = listener.redirect_uri().to_string();
            let pending = flow::prepare(
                http,
                self.env.as_ref(),
                &url,
                &challenge,
                &choice,
                &redirect_uri,
            )
            .await?;
            // A client registered in the first round is reused for step-ups.
            if choice.client_id.is_none() {
                choice.client_id = Some(pending.client.id.clone());
                choice.client_secret = pending.client.secret.clone();
            }
            tracing::info!(server = %url, issuer = %pending.discovered.issuer, "MCP login: waiting for the user");
            let redirect = step.authorize(&pending.authorize_url, listener).await?;
            let auth = flow::complete(http, self.env.as_ref(), &pending, &redirect).await?;
            match flow::probe(http, &url, Some(&auth.grant.access_token)).await? {
                None => {
                    self.store.set(server, &auth)?;
                    tracing::info!(server = %url, "MCP login: done");
                    return Ok(LoginDone {
                        issuer: auth.issuer,
                        scope: auth.grant.scope,
                        rounds,
                        not_needed: false,
                    });
                }
                Some(next) if next.is_insufficient_scope() && rounds <= MAX_STEP_UPS => {
                    let wanted = union(pending.discovered.scope.as_deref(), next.scope.as_deref());
                    tracing::info!(server = %url, "MCP login: the server wants more scopes");
                    choice.scope = wanted;
                    challenge = next;
                }
                Some(next) if next.is_insufficient_scope() => {
                    return Err(AuthError::Server(format!(
                        "the server still wants more scopes after {rounds} logins ({}); giving up",
                        next.scope.unwrap_or_default()
                    )))
                }
                Some(_) => {
                    return Err(AuthError::Server(
                        "the server refused the token its authorization server just issued".into(),
                    ))
                }
            }
        }
    }

    /// Forgets `server`'s login, revoking it first where the server offers revocation;
    /// returns what happened in words (`None`: there was no login).
    pub async fn logout(&self, server: &str) -> Result<Option<String>, AuthError> {
        let Some(auth) = self.store.get(server)? else {
            return Ok(None);
        };
        let url = parse(server)?;
        let revoked = match tokens::revoke(self.http.as_ref(), &url, &auth).await {
            Ok(true) => "revoked and forgotten".to_string(),
            Ok(false) => "forgotten (the server offers no revocation)".to_string(),
            Err(e) => format!("forgotten, but the revocation failed: {e}"),
        };
        self.store.remove(server)?;
        Ok(Some(revoked))
    }

    /// The stored login for `server`.
    pub fn stored(&self, server: &str) -> Result<Option<StoredAuth>, AuthError> {
        self.store.get(server)
    }

    async fn refresh_stored(&self, server: &str, auth: StoredAuth) -> Result<String, AuthError> {
        let url = parse(server)?;
        let grant = tokens::refresh(self.http.as_ref(), self.env.as_ref(), &url, &auth).await?;
        let token = grant.access_token.clone();
        let updated = StoredAuth { grant, ..auth };
        self.store.set(server, &updated)?;
        tracing::debug!(server = %url, "MCP login: refreshed");
        Ok(token)
    }
}

#[async_trait]
impl AccessTokens for Authenticator {
    async fn bearer(&self, server: &str) -> Result<Option<String>, AuthError> {
        let Some(auth) = self.store.get(server)? else {
            return Ok(None);
        };
        let expired = auth
            .grant
            .expires_at
            .is_some_and(|t| t <= self.env.now() + EXPIRY_MARGIN);
        if !expired {
            return Ok(Some(auth.grant.access_token));
        }
        self.refresh_stored(server, auth).await.map(Some)
    }

    async fn rejected(&self, server: &str) -> Result<String, AuthError> {
        match self.store.get(server)? {
            Some(auth) => self.refresh_stored(server, auth).await,
            None => Err(AuthError::LoginNeeded("the server needs a login".into())),
        }
    }

    async fn wants(&self, server: &str, scope: Option<&str>) -> Result<(), AuthError> {
        let Some(mut auth) = self.store.get(server)? else {
            return Ok(());
        };
        let wanted = union(auth.wanted_scope.as_deref(), scope);
        if wanted != auth.wanted_scope {
            auth.wanted_scope = wanted;
            self.store.set(server, &auth)?;
        }
        Ok(())
    }
}

/// The scopes of `a` and `b`, each once.
fn union(a: Option<&str>, b: Option<&str>) -> Option<String> {
    let mut out: Vec<&str> = Vec::new();
    for s in a.into_iter().chain(b).flat_map(str::split_whitespace) {
        if !out.contains(&s) {
            out.push(s);
        }
    }
    (!out.is_empty()).then(|| out.join(" "))
}
