//! The endpoint check behind the settings' model list and "Test connection": one
//! `GET {base}/models` with the key the user typed (else the stored one).

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
    let models = cairn_runtime::endpoint_models::endpoint_models(
        &provider,
        &base_url,
        key,
        state.config.env.clone(),
        state.keys.clone(),
    )
    .await;
    match models {
        Ok(models) => EndpointCheck {
            ok: true,
            models,
            error: None,
            ms: started.elapsed().as_millis() as u64,
        },
        Err(e) => failed(e),
    }
}
