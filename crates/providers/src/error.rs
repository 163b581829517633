//! Errors of building a provider client (requests themselves never fail: they end with an outcome).

/// Why a client could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    /// A configuration value is invalid (bad URL, header or environment variable).
    #[error("invalid provider configuration: {0}")]
    InvalidConfig(String),
    /// The HTTP client could not be built.
    #[error("could not build the HTTP client: {0}")]
    Http(#[from] reqwest::Error),
}
