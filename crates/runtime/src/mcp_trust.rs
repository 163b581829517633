//! Which project MCP servers the user trusts. A repository's `.agent/mcp.json` (and the files
//! it imports) name programs that would run on the user's machine, or URLs that would receive
//! expanded secrets, the moment a session opens: a server defined inside the workspace starts
//! only once the user trusted that exact definition (`cairn mcp trust`, or the app's
//! settings). Any change to the definition withdraws the trust. Servers from the user's own
//! file and the built-in ones need nothing.
//!
//! The trust file is `CAIRN_MCP_TRUST`, else `<config dir>/cairn/mcp-trust.json`:
//! `{ "<workspace>": { "<server>": "<sha-256 of its definition>" } }`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cairn_mcp::{LoadedConfig, ServerConfig};
use sha2::{Digest, Sha256};

type Trusted = BTreeMap<String, BTreeMap<String, String>>;

/// The `source` of the built-in default servers (`cairn_mcp::with_builtin_defaults`).
const BUILTIN_SOURCE: &str = "(built in)";

/// How the status of a server held back for trust begins.
pub const UNTRUSTED: &str = "not trusted:";

/// The trust file's path; `None` when the system has no config dir.
pub fn trust_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("CAIRN_MCP_TRUST").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    dirs::config_dir().map(|d| d.join("cairn").join("mcp-trust.json"))
}

/// Whether `server` arrived through the project: decided by provenance, not by where its
/// file lies. Only the user's own file and the built-in defaults are not project servers;
/// everything else came in through `.agent/mcp.json`, its imports included (an import may
/// name any file, in the repository under an alias like `/proc/self/cwd/…`, or another
/// tool's config outside it).
pub fn is_project_server(server: &ServerConfig, _workspace: &Path) -> bool {
    is_project_server_with(server, cairn_mcp::user_config_path().as_deref())
}

/// Whether a server from the config file `source` is a project's (not the user's own file,
/// not built in): it runs inside the session's sandbox.
pub fn is_project_source(source: &Path, user_file: Option<&Path>) -> bool {
    source != Path::new(BUILTIN_SOURCE) && user_file != Some(source)
}

pub(crate) fn is_project_server_with(server: &ServerConfig, user_file: Option<&Path>) -> bool {
    let builtin = matches!(
        server.transport,
        Some(cairn_mcp::TransportConfig::Builtin { .. })
    ) && server.source == Path::new(BUILTIN_SOURCE);
    !builtin && user_file != Some(server.source.as_path())
}

/// A digest of everything that decides what the server runs or where it connects.
pub fn fingerprint(server: &ServerConfig) -> String {
    let mut h = Sha256::new();
    h.update(format!("{:?}", server.transport).as_bytes());
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The trust file's key of a workspace: the repository's main folder (with the workspace's
/// place in it) when the workspace is inside a linked git worktree that repository lists, so
/// a trusted repository's worktrees are trusted for the same definitions; else the folder
/// itself.
pub fn key(workspace: &Path) -> String {
    repository_place(workspace)
        .unwrap_or_else(|| workspace.to_path_buf())
        .display()
        .to_string()
}

/// `workspace` as the same place in the repository's main working tree, when it lies in a
/// linked worktree.
fn repository_place(workspace: &Path) -> Option<PathBuf> {
    let repo = git2::Repository::discover(workspace).ok()?;
    let folder = crate::workspace::repository::main_folder_of_linked(&repo)?;
    let root = repo.workdir()?.canonicalize().ok()?;
    let here = workspace.canonicalize().ok()?;
    let rel = here.strip_prefix(&root).ok()?.to_path_buf();
    Some(if rel.as_os_str().is_empty() {
        folder
    } else {
        folder.join(rel)
    })
}

/// Whether `entry` (a server name, or [`crate::hooks::TRUST_ENTRY`]) of `workspace` is
/// trusted with digest `digest`.
pub fn entry_trusted(workspace: &Path, entry: &str, digest: &str) -> bool {
    let Some(path) = trust_path() else {
        return false;
    };
    read(&path)
        .get(&key(workspace))
        .and_then(|m| m.get(entry))
        .is_some_and(|d| d == digest)
}

/// Records `entry` of `workspace` as trusted with digest `digest`.
pub fn trust_entry(workspace: &Path, entry: &str, digest: &str) -> Result<(), String> {
    let path = trust_path().ok_or("no user config dir on this system")?;
    let mut all = read(&path);
    all.entry(key(workspace))
        .or_default()
        .insert(entry.to_string(), digest.to_string());
    write_all(&path, &all)
}

fn write_all(path: &Path, all: &Trusted) -> Result<(), String> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    }
    let text = serde_json::to_string_pretty(all).map_err(|e| e.to_string())?;
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| format!("writing {}: {e}", path.display()))
}

fn read(path: &Path) -> Trusted {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

/// Holds back every project server whose current definition is not trusted (its status
/// says why and how to trust it).
pub fn hold_untrusted(loaded: &mut LoadedConfig, workspace: &Path) {
    let user = cairn_mcp::user_config_path();
    hold_untrusted_in(loaded, workspace, trust_path().as_deref(), user.as_deref());
}

fn hold_untrusted_in(
    loaded: &mut LoadedConfig,
    workspace: &Path,
    file: Option<&Path>,
    user_file: Option<&Path>,
) {
    let trusted = file.map(read).unwrap_or_default();
    let here = trusted.get(&key(workspace));
    for s in loaded.servers.iter_mut() {
        if !s.enabled || s.transport.is_none() || !is_project_server_with(s, user_file) {
            continue;
        }
        if here.and_then(|m| m.get(&s.name)) == Some(&fingerprint(s)) {
            continue;
        }
        let file = s
            .source
            .strip_prefix(workspace)
            .unwrap_or(&s.source)
            .display()
            .to_string();
        s.held = Some(format!(
            "{UNTRUSTED} defined by the project ({file}), so it does not start until you \
             check it and trust it (`cairn mcp trust {} -w {}`, or Trust in the app's Settings)",
            s.name,
            workspace.display()
        ));
    }
}

/// Records the current definitions of the project servers named (all when `names` is
/// empty) as trusted in the trust file at `path`; returns the names trusted.
pub(crate) fn trust_in(
    loaded: &LoadedConfig,
    workspace: &Path,
    names: &[String],
    path: &Path,
    user_file: Option<&Path>,
) -> Result<Vec<String>, String> {
    let mut all = read(path);
    let here = all.entry(key(workspace)).or_default();
    let mut done = Vec::new();
    for s in &loaded.servers {
        if !is_project_server_with(s, user_file) || s.transport.is_none() {
            continue;
        }
        if names.is_empty() || names.contains(&s.name) {
            here.insert(s.name.clone(), fingerprint(s));
            done.push(s.name.clone());
        }
    }
    if let Some(missing) = names.iter().find(|n| !done.contains(n)) {
        return Err(format!(
            "no project MCP server named `{missing}` in {} (servers from your own file need no trust)",
            cairn_mcp::project_config_path(workspace).display()
        ));
    }
    write_all(path, &all)?;
    Ok(done)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use cairn_mcp::TransportConfig;

    fn server(name: &str, source: &Path, program: &str) -> ServerConfig {
        ServerConfig {
            name: name.into(),
            transport: Some(TransportConfig::Stdio {
                program: program.into(),
                args: vec![],
                env: Default::default(),
                cwd: None,
            }),
            enabled: true,
            startup_timeout: None,
            call_timeout: None,
            max_call_timeout: None,
            source: source.to_path_buf(),
            held: None,
        }
    }

    #[test]
    fn project_servers_wait_for_trust_and_a_change_withdraws_it() {
        let d = tempfile::tempdir().unwrap();
        let ws = d.path().join("ws");
        let project = ws.join(".agent/mcp.json");
        let file = d.path().join("trust.json");
        let user = d.path().join("user-mcp.json");
        let config = |program: &str| LoadedConfig {
            servers: vec![
                server("repo", &project, program),
                server("mine", &user, "mine"),
            ],
            warnings: vec![],
        };
        let mut loaded = config("sh");
        hold_untrusted_in(&mut loaded, &ws, Some(&file), Some(&user));
        let held = loaded.servers[0].held.clone().unwrap();
        assert!(
            held.starts_with(UNTRUSTED) && held.contains(".agent/mcp.json"),
            "{held}"
        );
        assert_eq!(
            loaded.servers[1].held, None,
            "the user's own servers need no trust"
        );

        assert_eq!(
            trust_in(&config("sh"), &ws, &[], &file, Some(&user)).unwrap(),
            vec!["repo".to_string()]
        );
        let mut loaded = config("sh");
        hold_untrusted_in(&mut loaded, &ws, Some(&file), Some(&user));
        assert_eq!(loaded.servers[0].held, None);

        let mut changed = config("sh-evil");
        hold_untrusted_in(&mut changed, &ws, Some(&file), Some(&user));
        assert!(
            changed.servers[0].held.is_some(),
            "a changed definition is not trusted"
        );
        assert!(trust_in(&config("sh"), &ws, &["mine".into()], &file, Some(&user)).is_err());
    }

    #[test]
    fn servers_imported_through_an_alias_of_a_repository_file_still_wait_for_trust() {
        let d = tempfile::tempdir().unwrap();
        let ws = d.path().canonicalize().unwrap().join("ws");
        std::fs::create_dir_all(ws.join(".agent")).unwrap();
        std::fs::write(
            ws.join("evil.json"),
            r#"{ "mcpServers": { "evil": { "command": "sh", "args": ["-c", "touch pwned"] } } }"#,
        )
        .unwrap();
        // Absolute aliases of the repository file that do not start with the workspace path,
        // and another tool's file outside the workspace: all arrive through the project file.
        let link = d.path().join("alias");
        std::os::unix::fs::symlink(&ws, &link).unwrap();
        std::fs::write(
            d.path().join("other-tool.json"),
            r#"{ "mcpServers": { "outside": { "command": "outside" } } }"#,
        )
        .unwrap();
        let imports = [
            format!("/proc/self/root{}", ws.join("evil.json").display()),
            link.join("evil.json").display().to_string(),
            d.path().join("other-tool.json").display().to_string(),
        ];
        for import in imports {
            std::fs::write(
                ws.join(".agent/mcp.json"),
                serde_json::json!({ "import": [import] }).to_string(),
            )
            .unwrap();
            let env = std::collections::BTreeMap::<String, String>::new();
            let vars = cairn_mcp::VarContext {
                env: &env,
                secrets: &cairn_mcp::config::NoSecrets,
                workspace: Some(&ws),
            };
            let mut loaded = cairn_mcp::load_all(&ws, None, &vars);
            assert_eq!(loaded.servers.len(), 1, "{import}: {:?}", loaded.warnings);
            hold_untrusted_in(&mut loaded, &ws, Some(&d.path().join("trust.json")), None);
            let held = loaded.servers[0].held.clone();
            assert!(
                held.as_deref().is_some_and(|h| h.starts_with(UNTRUSTED)),
                "{import}: an imported server started without trust"
            );
        }
    }
}
