//! The network gate of one tool call's sandboxed command: decides each host the command's
//! proxy is asked for by the permission rules (`Network(...)`, deny wins), the session's
//! allowed hosts (defaults, `--allow-domain`), what was allowed before, and else asks the
//! user through the session's approver: a `permission_required` of its own `requestId`
//! whose `reqId` names the tool call, answered "allow for this command", "always for this
//! project" or "deny".

use std::collections::BTreeSet;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use cairn_netproxy::gate::{NetGate, Verdict};
use cairn_policy::net_rules::NETWORK_RULE_TOOL;
use cairn_policy::RuleDecision;
use cairn_protocol::{AlwaysAllow, ApprovalDecision, ApprovalRequest, Event, PermissionRequired};

use crate::approval::Approver;
use crate::execenv::ExecEnvironment;
use crate::locks::lock;
use crate::permission::PermissionEngine;

/// What a gate needs of its session (the tool host's shared state implements it).
#[async_trait]
pub(crate) trait GateSession: Send + Sync {
    /// Sends an event into the turn's stream.
    async fn emit(&self, event: Event);
    /// The session's approver.
    fn approver(&self) -> &Arc<dyn Approver>;
    /// The session's permissions.
    fn permissions(&self) -> &Arc<Mutex<PermissionEngine>>;
    /// The session's execution environment.
    fn exec(&self) -> &ExecEnvironment;
    /// The turn's id.
    fn task_id(&self) -> &str;
}

/// The session allowance (and the kept rule's text) of one host.
pub fn host_allowance(host: &str) -> String {
    format!("{NETWORK_RULE_TOOL}({host})")
}

/// The gate of one tool call's command.
pub(crate) struct CallGate {
    pub(crate) shared: Arc<dyn GateSession>,
    pub(crate) req_id: String,
    pub(crate) tool: String,
    /// Hosts allowed for this command ("allow for this command").
    pub(crate) here: Mutex<BTreeSet<String>>,
    /// One question at a time for a command: a second connection to the same host waits for
    /// the first answer.
    pub(crate) asking: tokio::sync::Mutex<()>,
    /// Refusals, for the command's output.
    pub(crate) refusals: Arc<Mutex<Vec<String>>>,
}

impl CallGate {
    /// Allowed without asking: a rule, the session's hosts, an earlier answer.
    fn known(&self, host: &str) -> Option<Verdict> {
        let p = lock(self.shared.permissions());
        match p.rules().decide_host(host).map(|r| (r.decision, r)) {
            Some((RuleDecision::Deny, r)) => {
                return Some(Verdict::Refuse(format!(
                    "{host} is denied by the rule `{}` ({})",
                    r.text, r.source
                )))
            }
            Some((RuleDecision::Allow, _)) => return Some(Verdict::Allow),
            Some((RuleDecision::Ask, _)) => return None,
            None => {}
        }
        let allowed = self.shared.exec().net_allowed.allows(host)
            || lock(&self.here).contains(host)
            || p.state().allow_tools.contains(&host_allowance(host));
        allowed.then_some(Verdict::Allow)
    }
}

#[async_trait]
impl NetGate for CallGate {
    async fn decide(&self, host: &str, port: u16) -> Verdict {
        if let Some(v) = self.known(host) {
            return v;
        }
        let _one = self.asking.lock().await;
        if lock(&self.here).contains(host) {
            return Verdict::Allow;
        }
        let s = &self.shared;
        let request = ApprovalRequest {
            task_id: s.task_id().to_string(),
            req_id: self.req_id.clone(),
            request_id: crate::approval::new_request_id(),
            name: NETWORK_RULE_TOOL.to_string(),
            arguments: serde_json::json!({
                "host": host,
                "port": port,
                "tool": self.tool,
                "reqId": self.req_id,
            }),
            reason: format!(
                "a sandboxed command of this {} call wants to reach {host}:{port}, which no \
                 rule or allowed host covers",
                self.tool
            ),
            category: "network".into(),
            always_allow: Some(AlwaysAllow::Tool {
                name: host_allowance(host),
            }),
        };
        s.emit(Event::PermissionRequired(PermissionRequired::from(
            &request,
        )))
        .await;
        let answer = s.approver().approve(request).await;
        match answer {
            ApprovalDecision::Deny => Verdict::Refuse(format!(
                "{host}:{port} was not allowed ({})",
                s.approver().deny_reason()
            )),
            ApprovalDecision::Once => {
                lock(&self.here).insert(host.to_string());
                Verdict::Allow
            }
            ApprovalDecision::AlwaysTool | ApprovalDecision::AlwaysCommand => {
                lock(&self.here).insert(host.to_string());
                lock(s.permissions()).allow_tool_for_session(&host_allowance(host));
                if let Some(keep) = &s.exec().net_keep {
                    if let Err(e) = keep(host) {
                        tracing::warn!(host, "network: cannot keep the host for the project: {e}");
                    }
                }
                Verdict::Allow
            }
        }
    }

    fn names_address(&self, ip: IpAddr) -> bool {
        lock(self.shared.permissions()).rules().names_address(ip)
            || self.shared.exec().net_allowed.names_address(ip)
    }

    fn refused(&self, host: &str, port: u16, why: &str) {
        let _ = (host, port);
        let mut r = lock(&self.refusals);
        if !r.iter().any(|w| w == why) {
            r.push(why.to_string());
        }
    }
}
