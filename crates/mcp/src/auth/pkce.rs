//! PKCE S256 (RFC 7636) and the `state` value.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use sha2::{Digest, Sha256};

use super::{AuthError, Env};

/// A PKCE verifier, its S256 challenge, and the `state` of one authorization request.
#[derive(Clone, PartialEq, Eq)]
pub struct Pkce {
    /// The secret verifier (43 characters of base64url).
    pub verifier: String,
    /// `BASE64URL(SHA256(verifier))`.
    pub challenge: String,
    /// The `state` sent and expected back.
    pub state: String,
}

impl std::fmt::Debug for Pkce {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Pkce([redacted])")
    }
}

impl Pkce {
    /// New random values from `env`.
    pub fn new(env: &dyn Env) -> Result<Pkce, AuthError> {
        let verifier = random_text(env, 32)?;
        let state = random_text(env, 24)?;
        Ok(Pkce {
            challenge: s256(&verifier),
            verifier,
            state,
        })
    }
}

/// The S256 challenge of `verifier`.
pub fn s256(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// `n` random bytes as base64url text.
pub fn random_text(env: &dyn Env, n: usize) -> Result<String, AuthError> {
    let mut buf = vec![0u8; n];
    env.random(&mut buf)?;
    Ok(URL_SAFE_NO_PAD.encode(buf))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc_7636_appendix_b() {
        assert_eq!(
            s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }
}
