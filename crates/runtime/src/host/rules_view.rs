//! The session's permissions as a face lists them: its session allowances (tools,
//! programs, folders) and the persistent rules in force, for the settings' rules list.

use cairn_protocol::Mode;
use serde::Serialize;
use ts_rs::TS;

use super::SessionHandle;

/// Session permission allowances, for the settings' rules list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct PermissionRules {
    /// Current mode.
    pub mode: Mode,
    /// Tools allowed for the session ("Always allow").
    pub tools: Vec<String>,
    /// Programs allowed for the session (shell "Always allow this command").
    pub commands: Vec<String>,
    /// Directories outside the workspace granted to the session.
    pub directories: Vec<GrantedDirectory>,
    /// Persistent rules (user and project files) in force for the session.
    pub persistent: Vec<PersistentRule>,
}

/// A rule from a permissions file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct PersistentRule {
    /// `allow`, `ask` or `deny`.
    pub decision: String,
    /// The rule as written.
    pub text: String,
    /// Where it comes from.
    pub source: String,
    /// Whether the app can remove it (rules of the user-level file).
    pub revocable: bool,
    /// The project (its folder key) the rule is limited to, for a rule kept by "Always
    /// allow in this project"; `None` = everywhere. Only rules of the current project and
    /// global ones are listed.
    pub project: Option<String>,
}

/// A directory outside the workspace the user granted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct GrantedDirectory {
    /// Absolute path.
    pub path: String,
    /// Writes allowed too.
    pub writable: bool,
}

impl SessionHandle {
    /// The session's allowances and the persistent rules in force.
    pub fn rules_view(&self) -> PermissionRules {
        let session = self.session();
        let p = session.permission_state();
        let user_file = crate::permissions::user_rules_path();
        let persistent = session
            .persistent_rules()
            .into_iter()
            .map(|r| {
                let revocable = user_file
                    .as_ref()
                    .is_some_and(|f| r.source.contains(&f.display().to_string()));
                PersistentRule {
                    decision: crate::permissions::decision_name(r.decision).to_string(),
                    text: r.text,
                    source: r.source,
                    revocable,
                    project: r.project,
                }
            })
            .collect();
        PermissionRules {
            mode: p.mode,
            tools: p.allow_tools.into_iter().collect(),
            commands: p.allow_commands.into_iter().collect(),
            directories: p
                .granted_dirs
                .into_iter()
                .map(|(path, writable)| GrantedDirectory { path, writable })
                .collect(),
            persistent,
        }
    }
}
