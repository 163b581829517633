//! Each configured provider: its key (present, never shown), its endpoint (reachable), its
//! model (listed) — one `GET …/models` each, skipped offline.

use cairn_providers::secrets::{resolve_key, KeyStore};
use cairn_providers::{list_models, EndpointError, ProviderSpec};

use super::probes::Probes;
use super::{timed, CheckRow, CheckStatus, DoctorOptions, Fix};
use crate::keys::{key_status, KeyStatus};
use crate::llm_setup::EnvFn;

/// A provider to check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderTarget {
    /// Provider name.
    pub name: String,
    /// Its endpoint ("" = the preset's or the environment's).
    pub base_url: String,
    /// The model chosen for it ("" = none).
    pub model: String,
}

/// The provider in use (`CAIRN_PROVIDER` or the settings, else `openai`), then every other
/// provider that has a key in the environment or the keyring.
pub fn configured_providers(env: &EnvFn, keys: &dyn KeyStore) -> Vec<ProviderTarget> {
    let first = chosen(env);
    let chosen = first.name.clone();
    let mut out = vec![first];
    // Others only when the keyring answers for the chosen one (one failure is enough).
    if matches!(
        key_status(&chosen, true, keys, env),
        KeyStatus::Unavailable { .. }
    ) {
        return out;
    }
    for name in crate::llm_setup::provider_names() {
        if name == chosen {
            continue;
        }
        let needs = cairn_providers::preset(&name).is_some_and(|p| p.needs_key);
        if needs
            && matches!(
                key_status(&name, true, keys, env),
                KeyStatus::Stored { .. } | KeyStatus::Env { .. }
            )
        {
            out.push(target(env, &name, String::new()));
        }
    }
    out
}

fn target(env: &EnvFn, name: &str, model: String) -> ProviderTarget {
    ProviderTarget {
        name: name.to_string(),
        base_url: env(&format!("base_urls.{name}")).unwrap_or_default(),
        model,
    }
}

/// The provider in use (`CAIRN_PROVIDER` or the settings, else `openai`) and its model.
fn chosen(env: &EnvFn) -> ProviderTarget {
    let name = env("CAIRN_PROVIDER")
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| "openai".into());
    let model = env("CAIRN_MODEL")
        .or_else(|| env("OPENAI_MODEL"))
        .unwrap_or_default();
    target(env, &name, model.trim().to_string())
}

/// The rows of every configured provider.
pub async fn check_all(probes: &Probes, opts: &DoctorOptions) -> Vec<CheckRow> {
    let env = probes.env.clone();
    let keys = probes.keys.clone();
    let targets = super::blocking_value(opts.timeout, move || {
        configured_providers(env.as_ref(), keys.as_ref())
    })
    .await
    // A keyring that does not answer: at least the provider in use (its key row says why).
    .unwrap_or_else(|| vec![chosen(probes.env.as_ref())]);
    let mut rows = Vec::new();
    for t in targets {
        rows.extend(check_one(&t, probes, opts).await);
    }
    rows
}

fn key_row(t: &ProviderTarget, status: &KeyStatus) -> CheckRow {
    let check = format!("{} key", t.name);
    match status {
        KeyStatus::Stored { .. } => {
            CheckRow::new("provider", &check, CheckStatus::Ok, "in the OS keyring")
        }
        KeyStatus::Env { var, .. } => CheckRow::new(
            "provider",
            &check,
            CheckStatus::Ok,
            format!("from ${var} (it wins over the keyring)"),
        ),
        KeyStatus::NotNeeded | KeyStatus::Unchecked => {
            CheckRow::new("provider", &check, CheckStatus::Ok, "none needed")
        }
        KeyStatus::Missing => CheckRow::new(
            "provider",
            &check,
            CheckStatus::Problem,
            "no API key is set",
        )
        .fix(Fix::SetKey {
            provider: t.name.clone(),
        }),
        KeyStatus::Unavailable { reason } => CheckRow::new(
            "provider",
            &check,
            CheckStatus::Problem,
            format!("the key cannot be read: the OS keyring is not available ({reason})"),
        )
        .fix(Fix::KeyringFirst {
            provider: t.name.clone(),
        }),
    }
}

async fn check_one(t: &ProviderTarget, probes: &Probes, opts: &DoctorOptions) -> Vec<CheckRow> {
    let needs = cairn_providers::preset(&t.name).is_none_or(|p| p.needs_key);
    let status = {
        let (name, keys, env) = (t.name.clone(), probes.keys.clone(), probes.env.clone());
        super::blocking_value(opts.timeout, move || {
            key_status(&name, needs, keys.as_ref(), env.as_ref())
        })
        .await
        .unwrap_or(KeyStatus::Unavailable {
            reason: "the keyring did not answer in time".into(),
        })
    };
    let mut rows = vec![key_row(t, &status)];
    let check = format!("{} endpoint", t.name);
    if opts.offline {
        rows.push(CheckRow::new(
            "provider",
            &check,
            CheckStatus::Skipped,
            "offline: the endpoint was not asked",
        ));
        return rows;
    }
    let t2 = t.clone();
    let (env, keys) = (probes.env.clone(), probes.keys.clone());
    rows.extend(
        timed("provider", &check, opts.timeout, async move {
            vec![endpoint_row(&t2, env, keys).await]
        })
        .await,
    );
    rows
}

async fn endpoint_row(
    t: &ProviderTarget,
    env: std::sync::Arc<EnvFn>,
    keys: std::sync::Arc<dyn KeyStore>,
) -> CheckRow {
    let check = format!("{} endpoint", t.name);
    let provider = t.name.clone();
    let problem = |detail: String, fix: Fix| {
        CheckRow::new("provider", &check, CheckStatus::Problem, detail).fix(fix)
    };
    let mut spec = ProviderSpec::new(&t.name, &t.model);
    if !t.base_url.trim().is_empty() {
        spec.base_url = Some(t.base_url.trim().to_string());
    }
    let mut spec = match spec.apply_env(env.as_ref()) {
        Ok(s) => s,
        Err(e) => {
            return problem(
                e.to_string(),
                Fix::FixProviderSetting {
                    provider: provider.clone(),
                },
            )
        }
    };
    let name = spec
        .resolve()
        .map(|r| r.provider)
        .unwrap_or_else(|_| t.name.clone());
    spec.api_key =
        tokio::task::spawn_blocking(move || resolve_key(&name, env.as_ref(), keys.as_ref()))
            .await
            .ok()
            .and_then(|r| r.ok().flatten())
            .map(|k| k.key.expose().to_string());
    match list_models(&spec).await {
        Ok(models) if t.model.is_empty() => CheckRow::new(
            "provider",
            &check,
            CheckStatus::Ok,
            format!(
                "reachable, {} {} listed",
                models.len(),
                if models.len() == 1 { "model" } else { "models" }
            ),
        ),
        Ok(models) if models.iter().any(|m| m == &t.model) => CheckRow::new(
            "provider",
            &check,
            CheckStatus::Ok,
            format!("reachable, model {} listed", t.model),
        ),
        Ok(models) => CheckRow::new(
            "provider",
            &check,
            CheckStatus::Warning,
            format!(
                "reachable, but model {} is not among the {} listed",
                t.model,
                models.len()
            ),
        )
        .fix(Fix::ChooseModel {
            provider: provider.clone(),
        }),
        // Some servers (local ones) have no model list: reachable is what matters.
        Err(EndpointError::Status { status: 404, .. }) => CheckRow::new(
            "provider",
            &check,
            CheckStatus::Warning,
            "reachable, but it serves no model list (…/models answered 404)",
        )
        .fix(Fix::CheckBaseUrl {
            provider: provider.clone(),
        }),
        Err(e @ EndpointError::Auth { .. }) => problem(
            e.to_string(),
            Fix::ReplaceKey {
                provider: provider.clone(),
            },
        ),
        Err(e @ EndpointError::Unreachable { .. }) => problem(
            e.to_string(),
            Fix::CheckNetwork {
                provider: provider.clone(),
            },
        ),
        Err(e) => problem(e.to_string(), Fix::CheckNetwork { provider }),
    }
}
