//! The endpoint check behind the settings' model list and "Test connection": one
//! `GET {base}/models` with the key the user typed (else the stored one).

use cairn_providers::secrets::resolve_key;
use cairn_providers::{list_models, ProviderSpec};
use tauri::{AppHandle, Manager, Runtime};

use crate::state::AppState;
use crate::types::EndpointCheck;

/// Lists the models `provider` serves at `base_url` ("" = its default or environment), with
/// `key` when given, else the key Cairn would use. Never fails: what went wrong is in
/// `error`, in words a user can act on.
#[tauri::command]
pub async fn check_endpoint<R: Runtime>(
    app: AppHandle<R>,
    provider: String,
    base_url: String,
    key: Option<String>,
) -> EndpointCheck {
    let state = app.state::<AppState>();
    let started = std::time::Instant::now();
    let failed = |error: String| EndpointCheck {
        ok: false,
        models: Vec::new(),
        error: Some(error),
        ms: started.elapsed().as_millis() as u64,
    };
    let mut spec = ProviderSpec::new(&provider, "");
    if !base_url.trim().is_empty() {
        spec.base_url = Some(base_url.trim().to_string());
    } else if provider == "compatible" {
        return failed(
            "The OpenAI-compatible provider needs a base URL, e.g. http://127.0.0.1:8000/v1."
                .into(),
        );
    }
    let env = state.config.env.clone();
    let mut spec = match spec.apply_env(env.as_ref()) {
        Ok(s) => s,
        Err(e) => return failed(e.to_string()),
    };
    spec.api_key = match key.map(|k| k.trim().to_string()).filter(|k| !k.is_empty()) {
        Some(k) => Some(k),
        None => {
            let keys = state.keys.clone();
            let name = spec
                .resolve()
                .map(|r| r.provider)
                .unwrap_or_else(|_| provider.clone());
            tokio::task::spawn_blocking(move || resolve_key(&name, env.as_ref(), keys.as_ref()))
                .await
                .ok()
                .and_then(|r| r.ok().flatten())
                .map(|k| k.key.expose().to_string())
        }
    };
    match list_models(&spec).await {
        Ok(models) => EndpointCheck {
            ok: true,
            models,
            error: None,
            ms: started.elapsed().as_millis() as u64,
        },
        Err(e) => failed(e.to_string()),
    }
}
