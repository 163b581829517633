//! Approvers for the CLI: a fixed policy, or a prompt on the controlling terminal.

use std::io::{BufRead, Write};

use async_trait::async_trait;

use crate::render::inert;
use cairn_engine::Approver;
use cairn_protocol::{
    AlwaysAllow, ApprovalDecision, ApprovalRequest, AskUserQuestion, DirectoryGrant,
    DirectoryRequested, PlanProposed, PlanReview, UserAnswer,
};

/// Asks on `/dev/tty`: allow once, always (tool or command), or deny. Any failure denies.
pub struct TerminalApprover {
    lock: tokio::sync::Mutex<()>,
}

impl TerminalApprover {
    /// A terminal approver; prompts are serialised.
    pub fn new() -> Self {
        TerminalApprover {
            lock: tokio::sync::Mutex::new(()),
        }
    }
}

#[async_trait]
impl Approver for TerminalApprover {
    async fn approve(&self, request: ApprovalRequest) -> ApprovalDecision {
        let _guard = self.lock.lock().await;
        let handle = tokio::task::spawn_blocking(move || ask(&request));
        match handle.await {
            Ok(Ok(d)) => d,
            Ok(Err(e)) => {
                errln!("cannot ask for approval on the terminal ({e}); denied");
                ApprovalDecision::Deny
            }
            Err(_) => ApprovalDecision::Deny,
        }
    }

    async fn ask_user(&self, question: AskUserQuestion) -> UserAnswer {
        let _guard = self.lock.lock().await;
        match tokio::task::spawn_blocking(move || ask_question(&question)).await {
            Ok(Ok(a)) => a,
            Ok(Err(e)) => UserAnswer::Declined {
                reason: format!("the terminal is not available ({e})"),
            },
            Err(_) => UserAnswer::Declined {
                reason: "no answer".into(),
            },
        }
    }

    async fn review_plan(&self, plan: PlanProposed) -> PlanReview {
        let _guard = self.lock.lock().await;
        match tokio::task::spawn_blocking(move || review(&plan.plan)).await {
            Ok(Ok(r)) => r,
            _ => PlanReview::Unreviewed {
                reason: "the plan could not be reviewed on the terminal".into(),
            },
        }
    }

    async fn elicit(
        &self,
        request: cairn_protocol::ElicitationRequested,
    ) -> cairn_protocol::ElicitationAnswer {
        let _guard = self.lock.lock().await;
        match tokio::task::spawn_blocking(move || crate::elicit_prompt::ask(&request)).await {
            Ok(Ok(a)) => a,
            Ok(Err(e)) => cairn_protocol::ElicitationAnswer::Decline {
                reason: format!("the terminal is not available ({e})"),
            },
            Err(_) => cairn_protocol::ElicitationAnswer::Cancel,
        }
    }

    async fn grant_directory(&self, request: DirectoryRequested) -> DirectoryGrant {
        let _guard = self.lock.lock().await;
        match tokio::task::spawn_blocking(move || grant(&request)).await {
            Ok(Ok(g)) => g,
            _ => DirectoryGrant::Denied {
                reason: "no answer on the terminal".into(),
            },
        }
    }
}

pub(crate) fn tty() -> std::io::Result<(std::fs::File, std::fs::File)> {
    let input = std::fs::File::open("/dev/tty")?;
    let output = std::fs::OpenOptions::new().write(true).open("/dev/tty")?;
    Ok((input, output))
}

/// Discards what is waiting in the terminal's input queue: called once the prompt is shown,
/// right before its answer is read, so nothing typed (or pushed into the queue) before the
/// user could see the question answers it.
fn discard_typed_ahead(input: &std::fs::File) -> std::io::Result<()> {
    nix::sys::termios::tcflush(input, nix::sys::termios::FlushArg::TCIFLUSH)
        .map_err(std::io::Error::from)
}

/// Shows the prompt written to `out` so far, discards input typed before it, reads one
/// line (`None` at end of input).
pub(crate) fn read_line_after_prompt(
    input: &std::fs::File,
    out: &mut std::fs::File,
) -> std::io::Result<Option<String>> {
    out.flush()?;
    discard_typed_ahead(input)?;
    read_line(input)
}

fn read_line(input: &std::fs::File) -> std::io::Result<Option<String>> {
    let mut line = String::new();
    let n = std::io::BufReader::new(input).read_line(&mut line)?;
    Ok((n > 0).then(|| line.trim().to_string()))
}

fn ask_question(q: &AskUserQuestion) -> std::io::Result<UserAnswer> {
    let (input, mut out) = tty()?;
    writeln!(out, "\n? {}", inert(&q.question))?;
    for (i, o) in q.options.iter().enumerate() {
        writeln!(out, "  {}. {}", i + 1, inert(o))?;
    }
    let hint = match (q.options.is_empty(), q.multi, q.allow_text) {
        (true, _, _) => "your answer".to_string(),
        (false, true, true) => "numbers separated by commas, or your own text".to_string(),
        (false, true, false) => "numbers separated by commas".to_string(),
        (false, false, true) => "a number, or your own text".to_string(),
        (false, false, false) => "a number".to_string(),
    };
    write!(out, "  ({hint}; empty to decline) > ")?;
    let Some(line) = read_line_after_prompt(&input, &mut out)? else {
        return Ok(UserAnswer::Declined {
            reason: "no answer".into(),
        });
    };
    if line.is_empty() {
        return Ok(UserAnswer::Declined {
            reason: "the user declined to answer".into(),
        });
    }
    let picks: Option<Vec<String>> = line
        .split(',')
        .map(|p| {
            p.trim()
                .parse::<usize>()
                .ok()
                .and_then(|n| n.checked_sub(1))
                .and_then(|i| q.options.get(i).cloned())
        })
        .collect();
    Ok(match picks {
        Some(sel) if !sel.is_empty() && (q.multi || sel.len() == 1) => UserAnswer::Answered {
            selected: sel,
            text: String::new(),
        },
        _ => UserAnswer::Answered {
            selected: Vec::new(),
            text: line,
        },
    })
}

fn review(plan: &str) -> std::io::Result<PlanReview> {
    let (input, mut out) = tty()?;
    writeln!(out, "\n? The agent proposes this plan:\n{}", inert(plan))?;
    write!(out, "  [y] accept  [n] reject (then say why) > ")?;
    match read_line_after_prompt(&input, &mut out)?.as_deref() {
        Some("y") | Some("yes") => Ok(PlanReview::Accepted),
        _ => {
            write!(out, "  what should change? > ")?;
            let feedback = read_line_after_prompt(&input, &mut out)?.unwrap_or_default();
            Ok(PlanReview::Rejected { feedback })
        }
    }
}

fn grant(r: &DirectoryRequested) -> std::io::Result<DirectoryGrant> {
    let (input, mut out) = tty()?;
    let access = if r.writable { "read and write" } else { "read" };
    writeln!(
        out,
        "\n? The agent asks to {access} {}\n  reason: {}",
        inert(&r.path),
        inert(&r.reason)
    )?;
    write!(
        out,
        "  [y] grant for this session  [r] read-only  [n] deny > "
    )?;
    Ok(match read_line_after_prompt(&input, &mut out)?.as_deref() {
        Some("y") | Some("yes") => DirectoryGrant::Granted {
            writable: r.writable,
        },
        Some("r") => DirectoryGrant::Granted { writable: false },
        _ => DirectoryGrant::Denied {
            reason: "denied by the user".into(),
        },
    })
}

fn ask(request: &ApprovalRequest) -> std::io::Result<ApprovalDecision> {
    let tty_in = std::fs::File::open("/dev/tty")?;
    let mut tty_out = std::fs::OpenOptions::new().write(true).open("/dev/tty")?;
    let detail = crate::render::summarize_args(&request.arguments, 200);
    // A sandboxed command's host (issue 35): allow once means for this command, always
    // keeps the host for this project.
    let network = request.category == "network";
    if network {
        writeln!(
            tty_out,
            "\n? a sandboxed command (tool call {}) wants to reach: {}",
            inert(&request.req_id),
            inert(&detail)
        )?;
    } else if request.category == cairn_engine::host_mcp::SAMPLING_CATEGORY {
        // An MCP server's request to use the model: what it sends, in full.
        writeln!(tty_out, "\n? {}", inert(&request.reason))?;
        if let Some(c) = request
            .arguments
            .get("conversation")
            .and_then(|c| c.as_str())
        {
            for line in c.lines() {
                writeln!(tty_out, "  | {}", inert(line))?;
            }
        }
    } else {
        writeln!(
            tty_out,
            "\n? {} wants to run: {}",
            inert(&request.name),
            inert(&detail)
        )?;
    }
    if request.category != cairn_engine::host_mcp::SAMPLING_CATEGORY {
        writeln!(tty_out, "  reason: {}", inert(&request.reason))?;
    }
    // The allowance on offer, as the engine states it (none for a command with operators).
    let always = request.always_allow.as_ref().map(|a| match a {
        AlwaysAllow::Tool { name } if network => (
            format!("  [a] always for this project ({})", inert(name)),
            a.decision(),
        ),
        AlwaysAllow::Tool { name } => (format!("  [a] always allow {}", inert(name)), a.decision()),
        AlwaysAllow::Command { program } => (
            format!("  [a] always allow `{}` commands", inert(program)),
            a.decision(),
        ),
    });
    loop {
        write!(
            tty_out,
            "  [y] allow {}{}  [n] deny > ",
            if network { "for this command" } else { "once" },
            always
                .as_ref()
                .map(|(label, _)| label.as_str())
                .unwrap_or("")
        )?;
        let Some(line) = read_line_after_prompt(&tty_in, &mut tty_out)? else {
            return Ok(ApprovalDecision::Deny);
        };
        match (line.to_lowercase().as_str(), &always) {
            ("y" | "yes", _) => return Ok(ApprovalDecision::Once),
            // `c` was the key for a command allowance before; it still works.
            ("a" | "always" | "c", Some((_, decision))) => return Ok(*decision),
            ("n" | "no" | "", _) => return Ok(ApprovalDecision::Deny),
            _ => writeln!(
                tty_out,
                "  please answer y, {}n",
                if always.is_some() { "a or " } else { "" }
            )?,
        }
    }
}
