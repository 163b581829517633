//! Which configuration a session reads, decided once per session and threaded to every
//! loader (hooks, MCP servers, skills, commands, permission rules, instructions, sandbox
//! settings, roles): the user-level files (`<config dir>/cairn/…`, the `~/.claude` opt-in, the
//! variables that move them, the keyring) and the workspace's own files. The CLI and the app
//! use the default (the user's config, project files as the user's trust store decides);
//! `cairn serve --tenants` reads no user config and trusts project files iff the tenant's
//! `trustProjectConfig` (serve.md, Tenants).

use std::path::PathBuf;

/// Whether a workspace's own runnable configuration (hooks, MCP servers, skills, commands,
/// rules) applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProjectTrust {
    /// As the user's trust store says (`cairn hooks trust`, `cairn mcp trust`).
    #[default]
    Asked,
    /// Always, without asking the trust store.
    Always,
    /// Never: the workspace's files are not read as configuration.
    Never,
}

/// The configuration one session reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConfigScope {
    /// Whether the user-level config applies.
    pub user_config: bool,
    /// Whether the workspace's own configuration applies.
    pub project: ProjectTrust,
}

impl Default for ConfigScope {
    fn default() -> Self {
        ConfigScope::USER
    }
}

impl ConfigScope {
    /// The CLI's and the app's: the user's config, project files as the trust store says.
    pub const USER: ConfigScope = ConfigScope {
        user_config: true,
        project: ProjectTrust::Asked,
    };

    /// A tenant's (`cairn serve --tenants`): no user config; the workspace's files iff
    /// `trust_project`.
    pub fn tenant(trust_project: bool) -> ConfigScope {
        ConfigScope {
            user_config: false,
            project: if trust_project {
                ProjectTrust::Always
            } else {
                ProjectTrust::Never
            },
        }
    }

    /// `path` (a user-level file or folder) when the user config applies.
    pub fn user(&self, path: Option<PathBuf>) -> Option<PathBuf> {
        path.filter(|_| self.user_config)
    }

    /// Whether the workspace's files are read as configuration at all.
    pub fn project_files(&self) -> bool {
        self.project != ProjectTrust::Never
    }

    /// Whether the workspace's runnable configuration applies; `asked` consults the user's
    /// trust store (only under [`ProjectTrust::Asked`]).
    pub fn project_trusted(&self, asked: impl FnOnce() -> bool) -> bool {
        match self.project {
            ProjectTrust::Asked => asked(),
            ProjectTrust::Always => true,
            ProjectTrust::Never => false,
        }
    }

    /// The user's `~/.claude` folder when the user config applies and opted in to it.
    pub fn claude_user_dir(&self) -> Option<PathBuf> {
        if self.user_config {
            crate::claude_home::user_dir()
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_is_today_and_a_tenant_reads_no_user_config() {
        let d = ConfigScope::default();
        assert!(d.user_config && d.project_files());
        assert!(d.project_trusted(|| true) && !d.project_trusted(|| false));
        let t = ConfigScope::tenant(false);
        assert_eq!(t.user(Some("/u".into())), None);
        assert!(!t.project_files() && !t.project_trusted(|| true));
        let t = ConfigScope::tenant(true);
        assert!(t.project_files() && t.project_trusted(|| false));
        assert_eq!(t.claude_user_dir(), None);
    }
}
