//! What to do about a check, as a typed fact: each face words it (the CLI prints commands,
//! the app names its own buttons and panels), so the app never shows a `cairn …` command and
//! the CLI keeps the `action` text scripts already read.

use serde::Serialize;
use ts_rs::TS;

/// The remedy of one check row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[ts(export, export_to = "app/")]
pub enum Fix {
    /// Steps for the operating system (install a package, load a profile), shown as written.
    SystemSteps {
        /// One step per line, shell commands included (never a Cairn command).
        steps: Vec<String>,
    },
    /// The OS keyring is locked: unlock it.
    UnlockKeyring,
    /// No Secret Service provider: install one, or give keys by environment variable.
    InstallKeyring,
    /// No display: run the app from a desktop session.
    DesktopSession,
    /// No notification service on the session bus.
    NotificationDaemon,
    /// No D-Bus session bus.
    SessionBus,
    /// A provider has no API key: store one.
    SetKey {
        /// The provider's name.
        provider: String,
    },
    /// A provider's key is unreadable because the keyring is.
    KeyringFirst {
        /// The provider's name.
        provider: String,
    },
    /// A setting of the provider is invalid.
    FixProviderSetting {
        /// The provider's name.
        provider: String,
    },
    /// The endpoint refused the key: store a valid one.
    ReplaceKey {
        /// The provider's name.
        provider: String,
    },
    /// The chosen model is not listed by the endpoint.
    ChooseModel {
        /// The provider's name.
        provider: String,
    },
    /// The endpoint serves no model list: check its base URL if turns fail.
    CheckBaseUrl {
        /// The provider's name.
        provider: String,
    },
    /// The endpoint did not answer: network, proxy or base URL.
    CheckNetwork {
        /// The provider's name.
        provider: String,
    },
    /// An MCP configuration file has a problem.
    FixMcpFile,
    /// An MCP server needs a login.
    McpLogin {
        /// The server's name.
        server: String,
    },
    /// An MCP server failed or hung: see its output.
    McpOutput {
        /// The server's name.
        server: String,
    },
    /// Project files wait for trust: read them, then trust the project.
    TrustProject {
        /// The workspace they belong to.
        workspace: String,
    },
    /// The state folder is not writable.
    StateUnwritable,
    /// The disk is nearly full.
    FreeSpace,
    /// The disk is getting full.
    FreeSpaceSoon,
    /// Worktrees use more than their budget.
    RemoveWorktrees,
    /// A probe did not answer in time.
    SlowProbe,
}

impl Fix {
    /// The terminal's words (the `action` of `cairn doctor`, Cairn commands included).
    pub fn cli_words(&self) -> String {
        match self {
            Fix::SystemSteps { steps } => steps.join("\n"),
            Fix::UnlockKeyring => {
                "unlock it (log in to the desktop, or open Passwords and Keys)".into()
            }
            Fix::InstallKeyring => "install and start a Secret Service provider (gnome-keyring \
                                    or KWallet), or give keys by environment variable \
                                    (OPENAI_API_KEY, …)"
                .into(),
            Fix::DesktopSession => "run the app from a desktop session".into(),
            Fix::NotificationDaemon => {
                "start your desktop's notification daemon (e.g. dunst, mako, or the desktop's own)"
                    .into()
            }
            Fix::SessionBus => "run Cairn inside a desktop session (or dbus-run-session)".into(),
            Fix::SetKey { provider } => {
                format!("cairn auth set {provider} (kept in the OS keyring)")
            }
            Fix::KeyringFirst { .. } => {
                "see the keyring line above, or give the key by environment variable".into()
            }
            Fix::FixProviderSetting { .. } => "fix the setting it names (cairn config list)".into(),
            Fix::ReplaceKey { provider } => format!("store a valid key: cairn auth set {provider}"),
            Fix::ChooseModel { .. } => "check the model name (cairn config set model NAME)".into(),
            Fix::CheckBaseUrl { .. } => {
                "if turns fail, check the base URL (it usually ends in /v1)".into()
            }
            Fix::CheckNetwork { .. } => {
                "check the network, a proxy, or the base URL (cairn config get base_urls)".into()
            }
            Fix::FixMcpFile => "fix the file it names".into(),
            Fix::McpLogin { server } => format!("cairn mcp login {server}"),
            Fix::McpOutput { server } => format!("see cairn mcp test {server} for its output"),
            Fix::TrustProject { workspace } => {
                format!(
                    "read them, then trust the project: cairn mcp trust --workspace {workspace}"
                )
            }
            Fix::StateUnwritable => {
                "fix its owner and permissions, or set CAIRN_STATE_DIR to a writable folder".into()
            }
            Fix::FreeSpace => {
                "free disk space (cairn checkpoints gc, cairn worktrees remove NAME)".into()
            }
            Fix::FreeSpaceSoon => "free some disk space soon".into(),
            Fix::RemoveWorktrees => "remove worktrees you no longer need: cairn worktrees list, \
                                     cairn worktrees remove NAME"
                .into(),
            Fix::SlowProbe => {
                "see what blocks it (a locked keyring prompt, a hung server, a slow disk)".into()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixes_serialise_tagged_and_keep_the_cli_words() {
        let f = Fix::McpLogin {
            server: "docs".into(),
        };
        assert_eq!(f.cli_words(), "cairn mcp login docs");
        let json = serde_json::to_value(&f).unwrap_or_default();
        assert_eq!(json["kind"], "mcp_login");
        assert_eq!(json["server"], "docs");
        let steps = Fix::SystemSteps {
            steps: vec!["a".into(), "b".into()],
        };
        assert_eq!(steps.cli_words(), "a\nb");
    }
}
