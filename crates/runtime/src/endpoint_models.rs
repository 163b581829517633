//! The models an endpoint serves (`GET {base}/models`), for the faces' model pickers: the
//! app's Settings ("Test connection") and the ACP agent's model option.

use std::sync::Arc;

use cairn_providers::secrets::{resolve_key, KeyStore};
use cairn_providers::{list_models, ProviderSpec};

use crate::llm_setup::EnvFn;

/// The models `provider` serves at `base_url` ("" = its default or the environment's), asked
/// with `key` when given, else the key Cairn would use (environment, then `keys`). The error
/// is in words a user can act on.
pub async fn endpoint_models(
    provider: &str,
    base_url: &str,
    key: Option<String>,
    env: Arc<EnvFn>,
    keys: Arc<dyn KeyStore>,
) -> Result<Vec<String>, String> {
    let mut spec = ProviderSpec::new(provider, "");
    if !base_url.trim().is_empty() {
        spec.base_url = Some(base_url.trim().to_string());
    } else if provider == "compatible" {
        return Err(
            "The OpenAI-compatible provider needs a base URL, e.g. http://127.0.0.1:8000/v1."
                .into(),
        );
    }
    let mut spec = spec.apply_env(env.as_ref()).map_err(|e| e.to_string())?;
    spec.api_key = match key.map(|k| k.trim().to_string()).filter(|k| !k.is_empty()) {
        Some(k) => Some(k),
        None => {
            let name = spec
                .resolve()
                .map(|r| r.provider)
                .unwrap_or_else(|_| provider.to_string());
            // The keyring may block (D-Bus): off the async threads.
            tokio::task::spawn_blocking(move || resolve_key(&name, env.as_ref(), keys.as_ref()))
                .await
                .ok()
                .and_then(|r| r.ok().flatten())
                .map(|k| k.key.expose().to_string())
        }
    };
    list_models(&spec).await.map_err(|e| e.to_string())
}
