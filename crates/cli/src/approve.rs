//! Approvers for the CLI: a fixed policy, or a prompt on the controlling terminal.

use std::io::{BufRead, Write};

use async_trait::async_trait;
use cairn_engine::Approver;
use cairn_protocol::{ApprovalDecision, ApprovalRequest};

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
                eprintln!("cannot ask for approval on the terminal ({e}); denied");
                ApprovalDecision::Deny
            }
            Err(_) => ApprovalDecision::Deny,
        }
    }
}

fn ask(request: &ApprovalRequest) -> std::io::Result<ApprovalDecision> {
    let tty_in = std::fs::File::open("/dev/tty")?;
    let mut tty_out = std::fs::OpenOptions::new().write(true).open("/dev/tty")?;
    let is_shell = request.arguments.get("command").is_some();
    let detail = crate::render::summarize_args(&request.arguments, 200);
    writeln!(tty_out, "\n? {} wants to run: {}", request.name, detail)?;
    writeln!(tty_out, "  reason: {}", request.reason)?;
    let always = if is_shell {
        "[c] always allow this command"
    } else {
        "[a] always allow this tool"
    };
    loop {
        write!(tty_out, "  [y] allow once  {always}  [n] deny > ")?;
        tty_out.flush()?;
        let mut line = String::new();
        let n = std::io::BufReader::new(&tty_in).read_line(&mut line)?;
        if n == 0 {
            return Ok(ApprovalDecision::Deny);
        }
        match line.trim().to_lowercase().as_str() {
            "y" | "yes" => return Ok(ApprovalDecision::Once),
            "a" | "always" if !is_shell => return Ok(ApprovalDecision::AlwaysTool),
            "c" if is_shell => return Ok(ApprovalDecision::AlwaysCommand),
            "n" | "no" | "" => return Ok(ApprovalDecision::Deny),
            _ => writeln!(
                tty_out,
                "  please answer y, {} or n",
                if is_shell { "c" } else { "a" }
            )?,
        }
    }
}
