//! Multi-tenant mode (`--tenants FILE`, seed §18.4): the tenants file, checked as serve.md
//! says (exit 2 otherwise), and which tenant a token selects (SHA-256 of the token).

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;
use sha2::{Digest, Sha256};

use crate::config::ServeError;

/// One tenant's provider.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TenantProvider {
    /// Endpoint.
    #[serde(default)]
    pub base_url: Option<String>,
    /// The file holding its API key.
    #[serde(default)]
    pub api_key_file: Option<PathBuf>,
}

/// One tenant.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Tenant {
    /// `[a-z0-9][a-z0-9_-]{0,63}`.
    pub id: String,
    /// SHA-256 of its token, 64 lowercase hex digits.
    pub token_sha256: String,
    /// Its workspaces live inside.
    pub root: PathBuf,
    /// Its sessions, events, checkpoints, logs, turn slots.
    pub state_dir: PathBuf,
    /// `HOME` of its commands.
    pub home_dir: PathBuf,
    /// Its worktrees.
    pub worktrees_dir: PathBuf,
    /// Its providers (the only credentials its sessions use).
    #[serde(default)]
    pub providers: BTreeMap<String, TenantProvider>,
    /// Browser origins allowed for it.
    #[serde(default)]
    pub allow_origins: Vec<String>,
    /// Sessions open at once.
    #[serde(default)]
    pub max_sessions: Option<usize>,
    /// Whether the workspace's own MCP, hooks, skills and rules apply.
    #[serde(default)]
    pub trust_project_config: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    tenants: Vec<Tenant>,
}

fn usage(m: String) -> ServeError {
    ServeError::Usage(m)
}

fn valid_id(id: &str) -> bool {
    let b = id.as_bytes();
    !b.is_empty()
        && b.len() <= 64
        && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit())
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'_' || *c == b'-')
}

fn not_writable_by_others(p: &Path, what: &str) -> Result<(), ServeError> {
    let meta = std::fs::metadata(p).map_err(|e| usage(format!("{what} {}: {e}", p.display())))?;
    if meta.permissions().mode() & 0o022 != 0 {
        return Err(usage(format!(
            "{what} {} is writable by group or others",
            p.display()
        )));
    }
    Ok(())
}

/// Reads and checks the tenants file.
pub fn load(path: &Path) -> Result<Vec<Arc<Tenant>>, ServeError> {
    not_writable_by_others(path, "the tenants file")?;
    let text = std::fs::read_to_string(path)
        .map_err(|e| usage(format!("reading {}: {e}", path.display())))?;
    let file: File = serde_json::from_str(&text)
        .map_err(|e| usage(format!("the tenants file {}: {e}", path.display())))?;
    if file.tenants.is_empty() {
        return Err(usage("the tenants file names no tenant".into()));
    }
    let mut tenants = Vec::new();
    let mut dirs: Vec<(String, PathBuf)> = Vec::new();
    for mut t in file.tenants {
        if !valid_id(&t.id) {
            return Err(usage(format!(
                "tenant id `{}`: use [a-z0-9][a-z0-9_-]{{0,63}}",
                t.id
            )));
        }
        if tenants.iter().any(|o: &Tenant| o.id == t.id) {
            return Err(usage(format!("tenant `{}` is listed twice", t.id)));
        }
        let hex = &t.token_sha256;
        if hex.len() != 64
            || !hex
                .bytes()
                .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c))
        {
            return Err(usage(format!(
                "tenant `{}`: tokenSha256 is 64 lowercase hex digits",
                t.id
            )));
        }
        if tenants
            .iter()
            .any(|o: &Tenant| o.token_sha256 == t.token_sha256)
        {
            return Err(usage(format!("tenant `{}` shares a token", t.id)));
        }
        for (name, dir) in [
            ("root", &mut t.root),
            ("stateDir", &mut t.state_dir),
            ("homeDir", &mut t.home_dir),
            ("worktreesDir", &mut t.worktrees_dir),
        ] {
            if !dir.is_absolute() || !dir.is_dir() {
                return Err(usage(format!(
                    "tenant `{}`: {name} {} is not an existing absolute folder",
                    t.id,
                    dir.display()
                )));
            }
            let canon = dir
                .canonicalize()
                .map_err(|e| usage(format!("{}: {e}", dir.display())))?;
            for (who, other) in &dirs {
                if canon.starts_with(other) || other.starts_with(&canon) {
                    return Err(usage(format!(
                        "tenant `{}`: {name} {} overlaps {who}'s {}",
                        t.id,
                        canon.display(),
                        other.display()
                    )));
                }
            }
            dirs.push((format!("tenant `{}`", t.id), canon.clone()));
            *dir = canon;
        }
        for (name, p) in &t.providers {
            if let Some(key) = &p.api_key_file {
                not_writable_by_others(key, &format!("tenant `{}` {name} key file", t.id))?;
                let mode = std::fs::metadata(key)
                    .map_err(|e| usage(format!("{}: {e}", key.display())))?
                    .permissions()
                    .mode();
                if mode & 0o044 != 0 {
                    return Err(usage(format!(
                        "tenant `{}`: the key file {} is readable by group or others",
                        t.id,
                        key.display()
                    )));
                }
            }
        }
        tenants.push(t);
    }
    Ok(tenants.into_iter().map(Arc::new).collect())
}

/// The tenant `token` selects, comparing digests in constant time.
pub fn select<'a>(tenants: &'a [Arc<Tenant>], token: &str) -> Option<&'a Arc<Tenant>> {
    let digest = Sha256::digest(token.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    let mut found = None;
    for t in tenants {
        if crate::token::same(t.token_sha256.as_bytes(), hex.as_bytes()) {
            found = Some(t);
        }
    }
    found
}

/// The LLM of a tenant's session: the tenant's provider `name` only, its key from its
/// `apiKeyFile`, never the environment or the keyring.
pub fn llm(
    t: &Tenant,
    name: &str,
    model: &str,
) -> Result<cairn_runtime::llm_setup::LlmSetup, crate::error::ApiError> {
    use cairn_runtime::llm_setup::{client_for, Face, LlmSetup, ProviderChoice};
    use cairn_secrets::KeyStore;
    let p = t.providers.get(name).ok_or_else(|| {
        crate::error::ApiError::invalid(format!("provider `{name}` is not one of this tenant's"))
    })?;
    let keys = cairn_secrets::MemoryKeyStore::new();
    if let Some(file) = &p.api_key_file {
        let text = std::fs::read_to_string(file).map_err(|_| {
            crate::error::ApiError::conflict("not_configured", "the tenant's key cannot be read")
        })?;
        let key = cairn_secrets::ApiKey::new(text.lines().next().unwrap_or("")).map_err(|_| {
            crate::error::ApiError::conflict("not_configured", "the tenant's key is not valid")
        })?;
        keys.set(name, &key).map_err(|_| {
            crate::error::ApiError::conflict("not_configured", "the tenant's key cannot be used")
        })?;
    }
    let choice = ProviderChoice {
        provider: name.to_string(),
        model: model.to_string(),
        base_url: p.base_url.clone().unwrap_or_default(),
        reasoning: String::new(),
    };
    let env = |_: &str| None;
    let face = if p.api_key_file.is_some() {
        Face::App
    } else {
        Face::Cli
    };
    let client = client_for(&choice, &keys, &env, face)
        .map_err(|e| crate::error::ApiError::conflict("not_configured", e.to_string()))?;
    Ok(LlmSetup {
        client,
        provider: name.to_string(),
        model: model.to_string(),
        blocked: None,
    })
}

/// What a tenant's commands must never see: every other tenant's folders, every key file,
/// its own state dir, and the tenants file.
pub fn hidden_for(tenants: &[Arc<Tenant>], me: &Tenant, file: &Path) -> Vec<PathBuf> {
    let mut hidden = vec![file.to_path_buf(), me.state_dir.clone()];
    for t in tenants {
        if t.id != me.id {
            hidden.extend([
                t.root.clone(),
                t.state_dir.clone(),
                t.home_dir.clone(),
                t.worktrees_dir.clone(),
            ]);
        }
        hidden.extend(t.providers.values().filter_map(|p| p.api_key_file.clone()));
    }
    hidden
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_follow_the_pattern() {
        assert!(valid_id("acme"));
        assert!(valid_id("a_b-9"));
        assert!(!valid_id("Acme"));
        assert!(!valid_id("-a"));
        assert!(!valid_id(""));
        assert!(!valid_id(&"a".repeat(65)));
    }
}
