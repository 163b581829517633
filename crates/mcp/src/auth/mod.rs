//! Logging in to HTTP MCP servers that need one: OAuth 2.1 as the MCP authorization
//! specification (2025-11-25) says. Discovery from a 401's `WWW-Authenticate` (RFC 9728, then
//! the well-known fallbacks and the 2025-03-26 defaults), authorization-server metadata
//! (RFC 8414, then OpenID discovery), client identity by pre-registration or dynamic
//! registration (RFC 7591), PKCE S256, the `resource` parameter (RFC 8707), token exchange,
//! refresh and revocation.
//!
//! Every side effect is behind a trait with a fake: HTTP ([`net::AuthHttp`]), randomness and
//! the clock ([`Env`]), the browser ([`redirect::Browser`]) and the token store
//! ([`store::TokenStore`]). Client ID Metadata Documents are not supported (they need an HTTPS
//! document Cairn controls).

pub mod challenge;
pub mod discovery;
pub mod flow;
pub mod login;
pub mod net;
pub mod pkce;
pub mod redirect;
pub mod store;
pub mod tokens;

pub use challenge::Challenge;
pub use login::{AccessTokens, Authenticator};
pub use tokens::{Grant, StoredAuth};

use std::time::{SystemTime, UNIX_EPOCH};

/// The words every "needs a login" message ends with (before the server's name and a
/// backtick): faces find login-needed states by them.
pub const LOGIN_HINT: &str = "run `cairn mcp login ";

/// Why a login, a refresh or a token lookup failed; the text is meant for users.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    /// There is no usable token: the user has to log in (again).
    #[error("{0}")]
    LoginNeeded(String),
    /// A URL was refused by the address or HTTPS rules (no request was sent).
    #[error("{0}")]
    Refused(String),
    /// Discovery or metadata was missing or inconsistent.
    #[error("{0}")]
    Discovery(String),
    /// The authorization server refused or broke a step (registration, token, redirect).
    #[error("{0}")]
    Server(String),
    /// The redirect did not match this login (`state`, issuer) or carried an error.
    #[error("{0}")]
    Redirect(String),
    /// The token store failed.
    #[error("{0}")]
    Store(String),
}

/// Randomness and time, so tests can fix both.
pub trait Env: Send + Sync {
    /// Fills `buf` with cryptographically secure random bytes.
    fn random(&self, buf: &mut [u8]) -> Result<(), AuthError>;
    /// Seconds since the Unix epoch.
    fn now(&self) -> u64;
}

/// The operating system's randomness and clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemEnv;

impl Env for SystemEnv {
    fn random(&self, buf: &mut [u8]) -> Result<(), AuthError> {
        use ring::rand::SecureRandom;
        ring::rand::SystemRandom::new()
            .fill(buf)
            .map_err(|_| AuthError::Store("the system's random number generator failed".into()))
    }

    fn now(&self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0)
    }
}
